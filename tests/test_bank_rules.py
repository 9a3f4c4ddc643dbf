"""The rules of a bank (cinqmille.rules.bank) against RULES.md, in points and in units, and the turn backup."""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.dice import dice_tables
from cinqmille.rules import BankRules, Rules, rules_from_dict
from cinqmille.rules.bank import FAULT, SCORED, UNIT, VOID
from cinqmille.solver.grid import ScoreGrid
from cinqmille.solver.keeps import backup, build_keep_graph

HOUSE_LIKE = {"base": "standard", "opening": 700, "min_bank": 250, "final_stretch": {"from": 4000, "cap": True}}
RULESETS = {
    "standard": {"base": "standard"},
    "house-like": HOUSE_LIKE,
    "no-cap": {**HOUSE_LIKE, "final_stretch": {"from": 4000, "cap": False}},
    "exact-fifty": {"base": "standard", "end": "exact", "rule_of_50": True, "opening": 0, "min_bank": 100,
                    "hot_dice": "mandatory"},
}


def rules_of(spec: dict) -> Rules:
    return rules_from_dict(spec)


def outcome(rules: Rules, score: int, turn: int) -> tuple[int, int, bool]:
    """(kind, new score in points, wins) from the points form, checked against the units form on arrays."""
    kind, new, wins = rules.banking.outcome(score, turn)
    ukind, unew, uwins = BankRules.of(rules).outcome(np.array([score // UNIT]), np.array([turn // UNIT]))
    assert (int(ukind[0]), int(unew[0]) * UNIT, bool(uwins[0])) == (int(kind), int(new), bool(wins))
    return int(kind), int(new), bool(wins)


def allowed(rules: Rules, score: int, turn: int, dice: int | None = None) -> bool:
    """Whether the bank is allowed, from the points form, checked against the units form on arrays."""
    scalar = bool(rules.banking.allowed(score, turn, dice))
    m = None if dice is None else np.array([dice])
    assert bool(BankRules.of(rules).allowed(np.array([score // UNIT]), np.array([turn // UNIT]), m)[0]) == scalar
    return scalar


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_points_and_units_agree_on_every_state(name: str) -> None:
    """Every (score, turn, dice) answered one at a time in points equals the whole array answered in units."""
    rules = rules_of(RULESETS[name])
    br = BankRules.of(rules)
    a, t, m = (x.ravel() for x in np.meshgrid(np.arange(rules.goal // UNIT), np.arange(130),
                                               np.arange(1, rules.dice + 1), indexing="ij"))
    kinds, news, wins = br.outcome(a, t)
    ok, over = br.allowed(a, t, m), br.overshoots(a, t)
    for i in range(0, len(a), 37):
        s, p, d = int(a[i]) * UNIT, int(t[i]) * UNIT, int(m[i])
        kind, new, win = rules.banking.outcome(s, p)
        assert (kind, new, win) == (kinds[i], news[i] * UNIT, wins[i])
        assert rules.banking.allowed(s, p, d) == ok[i]
        assert rules.banking.overshoots(s, p) == over[i]


def test_opening_is_refused_below_750() -> None:
    """Standard: a player not yet opened may not bank 700 but may bank 750; once opened, 50 is enough."""
    rules = rules_of({"base": "standard"})
    assert not allowed(rules, 0, 700)
    assert allowed(rules, 0, 750)
    assert allowed(rules, 1000, 50)
    assert not allowed(rules, 1000, 0)


def test_without_an_opening_min_bank_applies_from_zero() -> None:
    """With opening 0 every player counts as opened: min_bank governs a player with 0 points."""
    rules = rules_of({"base": "standard", "opening": 0, "min_bank": 300})
    assert not allowed(rules, 0, 250)
    assert allowed(rules, 0, 300)


def test_min_bank_applies_once_opened_and_to_a_winning_bank() -> None:
    """min_bank 250: an opened player may not bank 200, not even to reach the goal (RULES.md 5b)."""
    rules = rules_of({"base": "standard", "min_bank": 250})
    assert not allowed(rules, 1000, 200)
    assert allowed(rules, 1000, 250)
    assert not allowed(rules, 4900, 100)
    assert outcome(rules, 4900, 100) == (SCORED, 5000, True)  # what it would do, were it allowed


@pytest.mark.parametrize("spec, bankable", [
    ({"hot_dice": "optional"}, True),
    ({"hot_dice": "mandatory"}, False),
    ({"all_scoring_roll": "keep_all_and_roll"}, False),
])
def test_full_hand_must_roll_under_mandatory_hot_dice(spec: dict, bankable: bool) -> None:
    """A full hand (all D dice back in hand) may be banked only under optional hot dice and free keeps."""
    rules = rules_of({"base": "standard", **spec})
    assert allowed(rules, 1000, 500, rules.dice) == bankable
    assert allowed(rules, 1000, 500, rules.dice - 1)
    assert allowed(rules, 1000, 500)


def test_final_stretch_stop_short_is_void() -> None:
    """At or above `from`, a bank short of the goal counts for nothing; one that reaches it wins."""
    rules = rules_of(HOUSE_LIKE)
    assert outcome(rules, 4000, 500) == (VOID, 4000, False)
    assert outcome(rules, 4500, 450) == (VOID, 4500, False)
    assert outcome(rules, 4000, 1000) == (SCORED, 5000, True)


def test_final_stretch_cap_moves_the_score_to_from() -> None:
    """With cap, 3800 + 400 leaves exactly 4000; without it 4200; a bank that reaches the goal is not capped."""
    assert outcome(rules_of(HOUSE_LIKE), 3800, 400) == (SCORED, 4000, False)
    assert outcome(rules_of(RULESETS["no-cap"]), 3800, 400) == (SCORED, 4200, False)
    assert outcome(rules_of(HOUSE_LIKE), 3800, 1300) == (SCORED, 5100, True)
    assert outcome(rules_of(HOUSE_LIKE), 3000, 500) == (SCORED, 3500, False)


def test_rule_of_50_fault() -> None:
    """Rule of 50: 1000 + 50 would end in 50, a fault that leaves 1000; 1000 + 100 scores."""
    rules = rules_of({"base": "standard", "rule_of_50": True})
    assert outcome(rules, 1000, 50) == (FAULT, 1000, False)
    assert outcome(rules, 4850, 200) == (FAULT, 4850, False)
    assert outcome(rules, 1000, 100) == (SCORED, 1100, False)
    assert outcome(rules, 4850, 150) == (SCORED, 5000, True)


def test_a_capped_score_is_judged_by_the_rule_of_50() -> None:
    """The cap comes first: 3950 + 500 is capped to 4000, a round score, so no fault (4450 would be one)."""
    rules = rules_of({**HOUSE_LIKE, "rule_of_50": True})
    assert outcome(rules, 3950, 500) == (SCORED, 4000, False)
    assert outcome(rules_of({**RULESETS["no-cap"], "rule_of_50": True}), 3950, 500) == (FAULT, 3950, False)


def test_exact_end_overshoot_and_goal() -> None:
    """Under exact, a keep past the goal overshoots and only the goal itself wins; under reach, passing it wins."""
    exact = rules_of({"base": "standard", "end": "exact"})
    reach = rules_of({"base": "standard"})
    br = exact.banking
    assert br.overshoots(4900, 150) and not br.overshoots(4900, 100)
    assert not reach.banking.overshoots(4900, 150)
    assert BankRules.of(exact).overshoots(np.array([98, 98]), np.array([2, 3])).tolist() == [False, True]
    assert outcome(exact, 4900, 100) == (SCORED, 5000, True)
    assert outcome(reach, 4800, 300) == (SCORED, 5100, True)
    assert outcome(reach, 4800, 150) == (SCORED, 4950, False)
    assert br.reaches(5000) and not br.reaches(4950)
    assert reach.banking.reaches(5100) and not reach.banking.reaches(4950)


def test_solver_bank_table_reads_the_bank_rules() -> None:
    """The solver's bank values: a void stop short is a bust (B = 1), a refused bank -inf, a winning bank 1."""
    rules = rules_of({**HOUSE_LIKE, "hot_dice": "mandatory"})
    grid = ScoreGrid.of(rules)
    g = grid.goal
    start = np.full((g, g), 0.25)
    table = grid.bank_table(np.array([80, 0]), np.array([0, 0]), 25, start)  # 4000 and not opened
    a, b = table.a, table.b
    assert (a[0, 10, 0], b[0, 10, 0]) == (0.0, 1.0)  # 4000 + 500: void
    assert (a[0, 20, 0], b[0, 20, 0]) == (1.0, 0.0)  # 4000 + 1000: reaches 5000
    assert a[1, 13, 0] == -np.inf and a[1, 14, 0] == 0.75  # opening 700 = 14 units
    assert a[1, 14, rules.dice - 1] == -np.inf  # mandatory hot dice: a full hand must be rolled


def test_backup_is_the_expected_best_keep_of_a_roll() -> None:
    """With each keep worth its points, the backup is the mean best score of a roll, from the dice tables directly."""
    rules = rules_of({"base": "standard", "five_ones": 2500})
    g = build_keep_graph(rules)
    got = backup(g, g.keep_units * float(UNIT), bust=-100.0)
    for n, table in dice_tables(rules).items():
        best = [max((int(table.keep_points[k]) for k in table.keeps_of(r)), default=-100)
                for r in range(len(table.ways))]
        assert got[n - 1] == pytest.approx(float(np.dot(table.prob, best)), abs=1e-9)


def test_each_rule_parameter_is_read() -> None:
    """Changing one parameter changes an answer: none of them is ignored by BankRules."""
    base = rules_of({"base": "standard", "opening": 0})
    cases = [({"opening": 750}, lambda r: allowed(r, 0, 300)),
             ({"min_bank": 400}, lambda r: allowed(r, 1000, 300)),
             ({"goal": 4000}, lambda r: outcome(r, 3800, 300)),
             ({"end": "exact"}, lambda r: outcome(r, 4800, 300)),
             ({"rule_of_50": True}, lambda r: outcome(r, 1000, 50)),
             ({"final_stretch": {"from": 4000, "cap": False}}, lambda r: outcome(r, 4000, 300)),
             ({"hot_dice": "mandatory"}, lambda r: allowed(r, 1000, 300, r.dice))]
    for change, ask in cases:
        assert ask(rules_of({"base": "standard", "opening": 0, **change})) != ask(base), change
