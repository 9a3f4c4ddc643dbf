"""Every turn, end and history rule of RULES.md 1-5b applied by the referee, with scripted dice.

Expected values come from the rule book: each test sets up sheets, scripts the
dice and the answers, and checks scores, events and which questions were asked.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from cinqmille.engine import (
    Banked,
    Bust,
    Game,
    GameEnd,
    GameView,
    InstantWin,
    Kept,
    Penalty,
    PredictionResult,
    Roll,
    ScriptedDice,
    ScriptedPolicy,
    TakeOver,
    TakeOverOffer,
    TurnEnd,
    new_player,
)
from cinqmille.dice import Keep
from cinqmille.rules import Rules, load_rules, rules_from_dict

BUST5 = "2-2-3-4-6"  # no 1, no 5, no triple, no straight


def rules_with(base: str = "standard", **changes: object) -> Rules:
    """A preset with some keys changed."""
    return rules_from_dict({"base": base, **changes})


def game(rules: Rules, rolls: Sequence[str], policies: Sequence[ScriptedPolicy],
         sheets: Sequence[Sequence[int]] | None = None) -> Game:
    """A game with scripted dice and starting sheets (totals oldest first)."""
    initial = None if sheets is None else [new_player(rules, s) for s in sheets]
    return Game(rules, list(policies), dice=ScriptedDice(rolls), initial=initial)


def bot(keeps: Sequence[str] = (), banks: Sequence[bool] = (), takes: Sequence[bool] = (),
        predictions: Sequence[int | None] = ()) -> ScriptedPolicy:
    """A scripted player."""
    return ScriptedPolicy(keeps, banks, takes, predictions)


def used(*policies: ScriptedPolicy) -> bool:
    """Every scripted answer was asked for."""
    return all(set(p.unused.values()) == {0} for p in policies)


def penalties(g: Game) -> list[tuple[int, str, int, int]]:
    """(seat, kind, before, after) of every penalty."""
    return [(e.seat, e.kind, e.score_before, e.score_after) for e in g.events if isinstance(e, Penalty)]


# -- section 4: opening, min_bank; section 3: hot dice, all-scoring rolls, triples ---------

def test_opening_blocks_banking_until_reached() -> None:
    """A player who has not opened is asked to bank only once his turn holds the opening (750)."""
    rules = load_rules("standard")
    p = bot(["5", "111"], [True])
    g = game(rules, ["5-2-3-4-4", "1-1-1-2"], [p, bot()])
    g.play_turn()
    assert g.scores == (1050, 0) and used(p)
    assert [e.asked for e in g.events if isinstance(e, Roll)] == [False, False]


def test_opened_player_may_bank_any_turn() -> None:
    """Once opened (and min_bank 0), a 50-point turn may be banked."""
    rules = load_rules("standard")
    p = bot(["5"], [True])
    g = game(rules, ["5-2-3-4-4"], [p, bot()], [[800], []])
    g.play_turn()
    assert g.scores == (850, 0) and used(p)


def test_min_bank_applies_after_opening() -> None:
    """With min_bank 250 an opened player is not asked at 50 or 200, and banks at 300."""
    rules = rules_with(min_bank=250)
    p = bot(["5", "15", "1"], [True])
    g = game(rules, ["5-2-3-4-4", "1-5-2-3", "1-2"], [p, bot()], [[1000], []])
    g.play_turn()
    assert g.scores == (1300, 0) and used(p)


def test_hot_dice_optional_asks_after_a_full_hand() -> None:
    """Optional hot dice: after 1-1-1-5-5 is all kept, the player may bank the 1100."""
    rules = load_rules("standard")
    p = bot(["11155"], [True])
    g = game(rules, ["1-1-1-5-5"], [p, bot()])
    g.play_turn()
    assert g.scores == (1100, 0) and used(p)


def test_hot_dice_mandatory_rolls_all_dice_without_asking() -> None:
    """Mandatory hot dice: after a full hand the 5 dice are rolled again, no bank question."""
    rules = rules_with(hot_dice="mandatory")
    p = bot(["11155"])
    g = game(rules, ["1-1-1-5-5", BUST5], [p, bot()])
    g.play_turn()
    assert g.scores == (0, 0) and used(p)
    assert [len(e.faces) for e in g.events if isinstance(e, Roll)] == [5, 5]


def test_keep_all_and_roll_forces_reroll_even_past_the_goal() -> None:
    """keep_all_and_roll (5b): an all-scoring first roll is kept whole and all 5 dice rolled, even at the goal."""
    rules = rules_with(all_scoring_roll="keep_all_and_roll")
    seen: list[tuple[Keep, ...]] = []

    class Watch(ScriptedPolicy):
        def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> Keep:
            seen.append(keeps)
            return super().choose_keep(view, keeps)

    p = Watch(["11155"])
    g = game(rules, ["1-5-5-1-1", BUST5], [p, bot()], [[4900], []])
    g.play_turn()
    assert [len(k) for k in seen] == [1]  # only the whole roll may be kept
    assert g.scores == (4900, 0) and used(p)  # 4900 + 1100 was never bankable
    assert [len(e.faces) for e in g.events if isinstance(e, Roll)] == [5, 5]


def test_must_keep_triples_offers_only_keeps_with_the_triple() -> None:
    """must_keep_triples (house): from 6-5-1-1-1 every legal keep holds the three 1s."""
    rules = load_rules("house")
    seen: list[tuple[Keep, ...]] = []

    class Watch(ScriptedPolicy):
        def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> Keep:
            seen.append(keeps)
            return super().choose_keep(view, keeps)

    g = game(rules, ["6-5-1-1-1"], [Watch(["1115"], [True]), bot()])
    g.play_turn()
    assert seen and all(k.dice[0] >= 3 for k in seen[0])
    assert g.scores == (1050, 0)


# -- section 5: end of the game -------------------------------------------------------

def test_reach_wins_at_once() -> None:
    """Under reach the first bank that reaches or passes 5000 wins at once; the others do not play."""
    rules = load_rules("standard")
    g = game(rules, ["1-1-1-2-3"], [bot(["111"], [True]), bot()], [[4800], [4900]])
    result = g.play()
    assert result.winner == 0 and result.scores == (5800, 4900)
    assert isinstance(result.events[-1], GameEnd) and result.events[-1].reason == "goal"


def test_exact_overshoot_is_a_bust() -> None:
    """Under exact a keep that takes 4900 past 5000 ends the turn at once as a bust (overshoot)."""
    rules = rules_with(end="exact")
    g = game(rules, ["1-1-2-3-4"], [bot(["11"]), bot()], [[4900], []])
    g.play_turn()
    bust = next(e for e in g.events if isinstance(e, Bust))
    assert (bust.reason, bust.lost) == ("overshoot", 200)
    assert g.scores == (4900, 0) and not g.finished


def test_exact_goal_wins() -> None:
    """Under exact, 4900 + 100 banked is exactly 5000 and wins."""
    rules = rules_with(end="exact")
    result = game(rules, ["1-2-3-4-6"], [bot(["1"], [True]), bot()], [[4900], []]).play()
    assert result.winner == 0 and result.scores == (5000, 0)


def test_exact_five_ones_still_win() -> None:
    """Under exact a roll of five 1s wins at once although its points would overshoot."""
    rules = rules_with(end="exact")
    result = game(rules, ["1-1-1-1-1"], [bot(["11111"]), bot()], [[4900], []]).play()
    assert result.winner == 0
    assert any(isinstance(e, InstantWin) for e in result.events)
    assert not any(isinstance(e, Bust) for e in result.events)


def test_instant_win_ends_the_game_during_any_round() -> None:
    """Five 1s end the game at once even with last_round: the later seats do not play."""
    rules = rules_with(last_round=True)
    p1 = bot(["11111"])
    result = game(rules, [BUST5, "1-1-1-1-1"], [bot(), p1, bot()]).play()
    assert result.winner == 1 and result.turns == 2
    assert result.events[-1] == GameEnd(1, "instant_win", (0, 0, 0))


def test_last_round_reach_equal_score_does_not_steal() -> None:
    """last_round under reach: seat 1 reaches 5100, seat 2 equals 5100 and does not beat it; seat 0 never plays again."""
    rules = rules_with(last_round=True)
    views: list[GameView] = []

    class Watch(ScriptedPolicy):
        def should_bank(self, view: GameView) -> bool:
            views.append(view)
            return super().should_bank(view)

    s1 = bot(["111", "1"], [False, True])
    s2 = Watch(["111", "1"], [False, True])
    rolls = [BUST5, "1-1-1-2-3", "1-2", "1-1-1-2-3", "1-2"]
    result = game(rules, rolls, [bot(), s1, s2], [[4000], [4000], [4000]]).play()
    assert result.scores == (4000, 5100, 5100)
    assert result.winner == 1 and result.events[-1].reason == "last_round"
    assert result.turns == 3
    last = views[-1].last_round
    assert last is not None and (last.trigger, last.leader, last.target, last.final_seat) == (1, 1, 5100, 2)
    assert used(s1, s2)


def test_last_round_reach_passing_steals() -> None:
    """last_round under reach: a later player who passes the best score wins."""
    rules = rules_with(last_round=True)
    s1 = bot(["111"], [True])
    s2 = bot(["111", "15"], [False, True])
    rolls = [BUST5, "1-1-1-2-3", "1-1-1-2-3", "1-5"]
    result = game(rules, rolls, [bot(), s1, s2], [[4000], [4100], [4000]]).play()
    assert result.scores == (4000, 5100, 5150) and result.winner == 2


def test_last_round_two_players_first_reaches_second_plays() -> None:
    """Two players: seat 0 reaches the goal, seat 1 plays one last turn (and busts), seat 0 wins."""
    rules = rules_with(last_round=True)
    result = game(rules, ["1-1-1-2-3", BUST5], [bot(["111"], [True]), bot()], [[4500], [4900]]).play()
    assert result.winner == 0 and result.turns == 2 and result.scores == (5500, 4900)


def test_last_round_two_players_second_reaches_wins() -> None:
    """Two players: if seat 1 reaches the goal, he wins at once (the round is complete)."""
    rules = rules_with(last_round=True)
    result = game(rules, [BUST5, "1-1-1-2-3"], [bot(), bot(["111"], [True])], [[4900], [4500]]).play()
    assert result.winner == 1 and result.turns == 2


def test_last_round_exact_later_player_takes_the_victory() -> None:
    """last_round under exact: a later player who also reaches 5000 takes the victory."""
    rules = rules_with(end="exact", last_round=True)
    rolls = ["1-2-3-4-6", "1-1-2-3-4"]
    result = game(rules, rolls, [bot(["1"], [True]), bot(["11"], [True])], [[4900], [4800]]).play()
    assert result.scores == (5000, 5000) and result.winner == 1


def test_sheet_exact_steal_with_deadly_tie() -> None:
    """Preset sheet: the later player's 5000 also strikes the earlier 5000 out (deadly tie) and wins."""
    rules = load_rules("sheet")
    rolls = ["1-2-3-4-6", "1-1-2-3-4"]
    result = game(rules, rolls, [bot(["1"], [True]), bot(["11"], [True], [False])],
                  [[4900], [4800]]).play()
    assert result.winner == 1 and result.scores == (4900, 5000)
    assert (0, "deadly_tie", 5000, 4900) in [(e.seat, e.kind, e.score_before, e.score_after)
                                            for e in result.events if isinstance(e, Penalty)]


def test_final_stretch_cap_stops_at_from() -> None:
    """final_stretch with cap (house): 3800 + 400 banked leaves the player at exactly 4000."""
    rules = load_rules("house")
    g = game(rules, ["4-4-4-2-3"], [bot(["444"], [True]), bot()], [[3800], []])
    g.play_turn()
    assert g.scores == (4000, 0)


def test_final_stretch_without_cap_passes_from() -> None:
    """final_stretch without cap: 3800 + 400 is 4200."""
    rules = rules_with("house", final_stretch={"from": 4000, "cap": False})
    g = game(rules, ["4-4-4-2-3"], [bot(["444"], [True]), bot()], [[3800], []])
    g.play_turn()
    assert g.scores == (4200, 0)


def test_final_stretch_short_bank_counts_for_nothing_without_penalty() -> None:
    """At 4000 (house) a bank of 400 that does not reach 5000 scores nothing and is no scoreless turn."""
    rules = rules_with("house", zero_turns={"count": 1, "to": "zero"})
    g = game(rules, ["4-4-4-2-3"], [bot(["444"], [True]), bot()], [[4000], []])
    g.play_turn()
    bank = next(e for e in g.events if isinstance(e, Banked))
    assert (bank.outcome, bank.score_after) == ("void", 4000)
    assert g.scores == (4000, 0) and penalties(g) == []


def test_final_stretch_thousand_in_one_turn_wins() -> None:
    """At 4000 (house) a turn of 1050 reaches the goal and wins."""
    rules = load_rules("house")
    result = game(rules, ["6-5-1-1-1"], [bot(["1115"], [True]), bot()], [[4000], []]).play()
    assert result.winner == 0 and result.scores == (5050, 0)


# -- section 4: rule of 50, take-over ---------------------------------------------------

def test_rule_of_50_fault_scores_nothing_and_counts_as_a_bust() -> None:
    """rule_of_50: banking 1000 + 50 leaves 1050, a fault: nothing scored, and a cross as for a bust."""
    rules = rules_with(rule_of_50=True, crosses=True, take_over=True)
    g = game(rules, ["5-2-3-4-4"], [bot(["5"], [True]), bot()], [[1000], [800]])
    g.play_turn()
    bank = next(e for e in g.events if isinstance(e, Banked))
    assert (bank.outcome, bank.score_after) == ("fault", 1000)
    assert g.scores == (1000, 800) and g.players[0].crosses == 1
    g2 = game(rules, ["5-2-3-4-4", BUST5], [bot(["5"], [True]), bot()], [[1000], [800]])
    g2.play_turn()
    g2.play_turn()  # no take-over is offered after a fault (the scripted seat 1 would fail)
    assert not any(isinstance(e, TakeOver) for e in g2.events)


def test_rule_of_50_allows_a_round_hundred() -> None:
    """rule_of_50: banking 1000 + 100 leaves 1100, which is fine."""
    rules = rules_with(rule_of_50=True)
    g = game(rules, ["1-2-3-4-4"], [bot(["1"], [True]), bot()], [[1000], []])
    g.play_turn()
    assert g.scores == (1100, 0)


def test_take_over_starts_from_the_previous_bank() -> None:
    """take_over: seat 1 takes seat 0's 250 with 2 dice, must roll before banking, banks 300; seat 0 keeps 250."""
    rules = rules_with(take_over=True)
    offers: list[TakeOverOffer] = []

    class Watch(ScriptedPolicy):
        def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
            offers.append(offer)
            return super().should_take_over(view, offer)

    s0 = bot(["15", "1"], [False, True])
    s1 = Watch(["5"], [True], [True])
    g = game(rules, ["1-5-2-3-3", "1-2-3", "5-2"], [s0, s1], [[1000], [1000]])
    g.play_turn()
    g.play_turn()
    assert offers == [TakeOverOffer(0, 250, 2)]
    assert g.scores == (1250, 1300) and used(s0, s1)
    assert [len(e.faces) for e in g.events if isinstance(e, Roll) and e.seat == 1] == [2]


def test_take_over_needs_an_opened_player_and_a_bank() -> None:
    """take_over is not offered to a player who has not opened, nor after a bust."""
    rules = rules_with(take_over=True)
    g = game(rules, ["1-5-2-3-3", "1-2-3", BUST5, BUST5], [bot(["15", "1"], [False, True]), bot()],
             [[1000], []])
    for _ in range(3):
        g.play_turn()
    assert not any(isinstance(e, TakeOver) for e in g.events)
    g = game(rules, [BUST5, BUST5], [bot(), bot()], [[1000], [1000]])
    g.play_turn()
    g.play_turn()
    assert not any(isinstance(e, TakeOver) for e in g.events)


# -- section 5: penalties that need a score history ---------------------------------------

@pytest.mark.parametrize(("to", "sheet", "after", "opened"), [
    ("zero", [800, 1500], 0, False),
    ("previous", [800, 1500], 800, True),
    (-500, [800, 1500], 1000, True),
    (-500, [300], 0, False),
])
def test_zero_turns_fall_backs(to: object, sheet: list[int], after: int, opened: bool) -> None:
    """zero_turns count 3: the third scoreless turn in a row falls back to zero, the previous score, or -500 (not below 0)."""
    rules = rules_with(zero_turns={"count": 3, "to": to})
    g = game(rules, [BUST5] * 5, [bot(), bot()], [sheet, [600]])
    for _ in range(4):
        g.play_turn()
    assert g.players[0].zero_turns == 2 and g.players[0].score == sheet[-1]
    g.play_turn()
    assert g.players[0].score == after and g.players[0].opened is opened
    assert g.players[0].zero_turns == 0
    assert penalties(g)[-1] == (0, "zero_turns", sheet[-1], after)


def test_zero_turns_count_reset_by_a_bank() -> None:
    """A bank resets the count of scoreless turns."""
    rules = rules_with(zero_turns={"count": 2, "to": "zero"})
    g = game(rules, [BUST5, BUST5, "1-2-3-4-4", BUST5, BUST5], [bot(["1"], [True]), bot()],
             [[800], [600]])
    for _ in range(5):
        g.play_turn()
    assert g.players[0].score == 900 and g.players[0].zero_turns == 1


def test_crosses_strike_the_latest_score_on_the_second_cross() -> None:
    """crosses: first scoreless turn a cross, second cross strikes 1500 out: back to 800."""
    rules = rules_with(crosses=True)
    g = game(rules, [BUST5] * 3, [bot(), bot()], [[800, 1500], [600]])
    g.play_turn()
    assert g.players[0].crosses == 1 and g.players[0].score == 1500
    g.play_turn()
    g.play_turn()
    assert g.players[0].score == 800 and g.players[0].crosses == 0
    assert g.players[0].history[-1].struck
    assert penalties(g) == [(0, "cross", 1500, 1500), (1, "cross", 600, 600), (0, "cross_strike", 1500, 800)]


def test_crosses_cleared_by_a_bank_and_back_to_not_opened() -> None:
    """crosses: a bank clears the crosses; striking the only score leaves 0, not opened."""
    rules = rules_with(crosses=True)
    g = game(rules, [BUST5, BUST5, "1-2-3-4-4", BUST5, BUST5, BUST5], [bot(["1"], [True]), bot()],
             [[800], [600]])
    for _ in range(5):
        g.play_turn()
    assert g.players[0].score == 900 and g.players[0].crosses == 1
    g2 = game(rules, [BUST5] * 3, [bot(), bot()], [[800], [600]])
    for _ in range(3):
        g2.play_turn()
    assert g2.players[0].score == 0 and not g2.players[0].opened


def test_overshoot_gives_a_cross() -> None:
    """crosses under exact: an overshoot is a cross like a scoreless turn."""
    rules = rules_with(end="exact", crosses=True)
    g = game(rules, ["1-1-2-3-4"], [bot(["11"]), bot()], [[4900], []])
    g.play_turn()
    assert g.players[0].crosses == 1


def test_bust_on_all_dice_strikes_the_latest_score() -> None:
    """bust_strikes_last_score: a bust on all 5 dice strikes 1500 out (back to 800); a bust on 4 dice does not."""
    rules = rules_with(bust_strikes_last_score=True)
    g = game(rules, [BUST5, BUST5, "1-2-3-4-6", "2-3-4-6"], [bot(["1"], [False]), bot()],
             [[800, 1500], [600]])
    g.play_turn()
    assert g.scores == (800, 600)
    g.play_turn()
    assert g.scores == (800, 0)  # seat 1 had only one score: struck, not opened
    g.play_turn()
    assert g.scores == (800, 0)
    assert [k for _, k, _, _ in penalties(g)] == ["bust_strike", "bust_strike"]


def test_knock_back_tie() -> None:
    """ties knock_back: seat 1 banks to 1000, seat 0's score, and sends seat 0 back to 500."""
    rules = rules_with(ties="knock_back", opening=300)  # every score of these sheets is an opened one
    g = game(rules, [BUST5, "4-4-4-2-3"], [bot(), bot(["444"], [True])], [[500, 1000], [600]])
    g.play_turn()
    g.play_turn()
    assert g.scores == (500, 1000)
    assert penalties(g) == [(0, "knock_back", 1000, 500)]


def test_deadly_tie_strikes_an_old_score() -> None:
    """ties deadly: seat 1 banks to 500, an old score of seat 0: it is struck, seat 0 stays at 1000."""
    rules = rules_with(ties="deadly", opening=300)  # every score of these sheets is an opened one
    g = game(rules, [BUST5, "1-1-1-1-3"], [bot(), bot(["1111"], [True])], [[500, 1000], [400]])
    g.play_turn()
    g.play_turn()
    assert g.scores == (1000, 1500)
    g = game(rules, [BUST5, "1-2-3-4-4"], [bot(), bot(["1"], [True])], [[500, 1000], [400]])
    g.play_turn()
    g.play_turn()
    assert g.scores == (1000, 500)
    assert g.players[0].history[0].struck and penalties(g) == [(0, "deadly_tie", 1000, 1000)]


def test_deadly_tie_on_the_current_score_falls_back() -> None:
    """ties deadly: a bank equal to an opponent's current score strikes it: he falls back to his previous one."""
    rules = rules_with(ties="deadly", opening=300)  # every score of these sheets is an opened one
    g = game(rules, [BUST5, "4-4-4-2-3"], [bot(), bot(["444"], [True])], [[500, 1000], [600]])
    g.play_turn()
    g.play_turn()
    assert g.scores == (500, 1000)


# -- prediction ----------------------------------------------------------------------

def test_prediction_right_doubles_the_turn() -> None:
    """prediction: 1000 with two dice left, announce 150, roll 1-5: (1000 + 150) x 2 = 2300."""
    rules = rules_with(prediction=True)
    p = bot(["111", "15"], [False, True], predictions=[150])
    g = game(rules, ["1-1-1-2-3", "1-5"], [p, bot()], [[1000], []])
    g.play_turn()
    result = next(e for e in g.events if isinstance(e, PredictionResult))
    assert (result.predicted, result.scored, result.right) == (150, 150, True)
    assert [e.turn_points for e in g.events if isinstance(e, Kept)] == [1000, 2300]
    assert g.scores == (3300, 0) and used(p)


def test_prediction_wrong_is_a_bust() -> None:
    """prediction: announce 200, roll 1-5 (150): the turn is a bust, 1000 lost."""
    rules = rules_with(prediction=True, crosses=True)
    p = bot(["111"], [False], predictions=[200])
    g = game(rules, ["1-1-1-2-3", "1-5"], [p, bot()], [[1000], []])
    g.play_turn()
    bust = next(e for e in g.events if isinstance(e, Bust))
    assert (bust.reason, bust.lost) == ("prediction", 1000)
    assert g.scores == (1000, 0) and g.players[0].crosses == 1 and used(p)


def test_prediction_declined_plays_on_normally() -> None:
    """prediction: declining (None) rolls the two dice as usual."""
    rules = rules_with(prediction=True)
    p = bot(["111", "1"], [False, True], predictions=[None])
    g = game(rules, ["1-1-1-2-3", "1-2"], [p, bot()], [[1000], []])
    g.play_turn()
    assert g.scores == (2100, 0) and used(p)


def test_score_sheet_after_each_turn() -> None:
    """A TurnEnd event records every player's score after each turn."""
    rules = load_rules("standard")
    g = game(rules, ["1-1-1-2-3", BUST5], [bot(["111"], [True]), bot()])
    g.play_turn()
    g.play_turn()
    assert [e.scores for e in g.events if isinstance(e, TurnEnd)] == [(1000, 0), (1000, 0)]


def test_take_over_of_a_winning_bank_in_the_last_round() -> None:
    """sheet (5b): seat 0 banks 5000; seat 1 takes over its 100 with 4 dice, reaches 5000 and takes the victory."""
    rules = load_rules("sheet")
    s1 = bot(["1"], [True], [True])
    result = game(rules, ["1-2-3-4-6", "1-2-3-4"], [bot(["1"], [True]), s1], [[4900], [4800]]).play()
    assert result.winner == 1 and result.scores == (4900, 5000) and used(s1)
    assert any(isinstance(e, TakeOver) and e.accepted and (e.points, e.dice) == (100, 4) for e in result.events)
