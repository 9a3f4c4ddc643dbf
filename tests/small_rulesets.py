"""Small rulesets that cover the turn's cases (an exact end, the rule of 50 with mandatory hot dice,
announcements), shared by the tests of the turn's passes (`test_dist`, `test_card`)."""

TURN_RULESETS: dict[str, dict] = {
    "tiny": {"goal": 500, "opening": 150},
    "exact": {"goal": 500, "opening": 150, "end": "exact"},
    "mandatory": {"goal": 400, "opening": 0, "rule_of_50": True, "hot_dice": "mandatory"},
    "prediction": {"goal": 400, "opening": 0, "prediction": True},
}
