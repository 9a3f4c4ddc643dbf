"""The end of a game (`cinqmille.rules.end`) against the statements of RULES.md sections 5, 5b and 8.

Each test quotes the rule it checks; the expected answers are read from the rule
book, not from the code.
"""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.table.position import Position, PositionError
from cinqmille.rules import BankRules, EndRules, rules_from_dict
from cinqmille.rules.bank import UNIT
from cinqmille.rules.end import LAST_TURN_SEAT

REACH = rules_from_dict({"last_round": True})  # goal 5000, end = reach
EXACT = rules_from_dict({"last_round": True, "end": "exact"})


def test_reach_wins_at_or_past_the_goal() -> None:
    """`reach`: the first player whose score reaches or passes the goal wins (5)."""
    end = rules_from_dict({}).banking.end
    assert [bool(end.reaches(s)) for s in (4950, 5000, 5050, 6500)] == [False, True, True, True]


def test_exact_wins_only_on_the_goal() -> None:
    """`exact`: reaching the goal exactly wins; a score past it does not reach it (5)."""
    end = EXACT.banking.end
    assert [bool(end.reaches(s)) for s in (4950, 5000, 5050)] == [False, True, False]


def test_an_overshoot_is_a_keep_past_an_exact_goal() -> None:
    """`exact`: a keep that takes banked score plus turn points past the goal is an overshoot; `reach` has none (5)."""
    assert bool(EXACT.banking.end.overshoots(4000, 1050))
    assert not EXACT.banking.end.overshoots(4000, 1000)
    assert not REACH.banking.end.overshoots(4000, 3000)


def test_two_players_first_reaches_second_plays_one_last_turn() -> None:
    """Two players: if the first player reaches the goal the second plays one last turn; if the second reaches it,
    he wins (5, `last_round`)."""
    end = REACH.banking.end
    assert end.last_turns(0, 2) == 1
    assert end.last_turns(1, 2) == 0


def test_the_players_after_him_in_the_round_play_one_more_turn_each() -> None:
    """`last_round`: the players after the one who reached the goal, in the round that starts with the first
    player, play one more turn each (5, 8); without it the game ends at once."""
    end = REACH.banking.end
    assert [end.last_turns(seat, 4) for seat in range(4)] == [3, 2, 1, 0]
    assert [rules_from_dict({}).banking.end.last_turns(seat, 4) for seat in range(4)] == [0, 0, 0, 0]
    assert list(end.last_turns(np.arange(3), 3)) == [2, 1, 0]


def test_under_reach_a_later_player_must_pass_the_best_score() -> None:
    """`reach`: a later player wins only by passing the best score; an equal score does not beat it (5)."""
    end = REACH.banking.end
    target = end.target(5200)
    assert target == 5200
    assert not end.beats(5200, target)
    assert end.beats(5250, target)
    assert not end.beats(5100, target)


def test_under_exact_a_later_player_who_reaches_the_goal_takes_the_victory() -> None:
    """`exact`: a later player who also reaches the goal takes the victory from the earlier one (5)."""
    end = EXACT.banking.end
    assert end.target(5000) == 5000
    assert end.beats(5000, end.target(5000))
    assert not end.beats(4950, end.target(5000))


def test_the_bank_that_wins_a_last_turn() -> None:
    """A last turn on 4000 against 5200 needs a bank of 1250 under `reach` (passing 5200), of exactly 1000 under
    `exact`; `min_bank` applies to every bank, a bank that reaches the goal included (5, 5b)."""
    assert REACH.banking.end.winning_bank(4000, 5200, 300) == (1250, True)
    assert REACH.banking.end.winning_bank(4000, 5200, 1500) == (1500, True)  # a larger bank still passes
    assert EXACT.banking.end.winning_bank(4000, 5000, 300) == (1000, True)
    assert EXACT.banking.end.winning_bank(4800, 5000, 250) == (200, False)  # 200 is below min_bank 250


def test_the_smallest_bank_that_reaches_the_goal() -> None:
    """From 4000 a bank of 1000 reaches 5000; `min_bank` applies to a bank that reaches the goal too, so from 4900
    with a minimum of 250 it takes 250 under `reach`, while under `exact` only 100 reaches the goal (5, 5b)."""
    assert REACH.banking.end.goal_bank(4000, 300) == 1000
    assert REACH.banking.end.goal_bank(4900, 250) == 250
    assert EXACT.banking.end.goal_bank(4900, 250) == 100


def test_who_holds_the_victory_when_the_round_ends() -> None:
    """The best score wins under `reach` (the earlier on a tie: an equal score does not beat it); under `exact`
    the latest to reach the goal; a score a penalty took back below the goal holds nothing (5)."""
    reach, exact = REACH.banking.end, EXACT.banking.end
    assert reach.leader([5200, 5300]) == 1
    assert reach.leader([5300, 5300]) == 0
    assert reach.leader([5300, 4000]) == 0
    assert exact.leader([5000, 5000, 5000]) == 2
    assert exact.leader([5000, 3500]) == 0
    assert exact.leader([3500]) is None


def test_points_and_units_give_the_same_answers_for_ints_and_arrays() -> None:
    """Every judgement answers alike in real points and in units of 50, for one state and for arrays of states."""
    for rules in (REACH, EXACT):
        points, units = rules.banking.end, BankRules.of(rules).end
        assert points == EndRules.of(rules, 1) and units == EndRules.of(rules, UNIT)
        scores = np.arange(4000, 6001, UNIT)
        assert np.array_equal(points.reaches(scores), units.reaches(scores // UNIT))
        assert [bool(points.reaches(int(s))) for s in scores] == list(points.reaches(scores))
        t = np.arange(0, 2001, UNIT)
        assert np.array_equal(points.overshoots(4000, t), units.overshoots(80, t // UNIT))
        assert np.array_equal(points.beats(scores, 5200), units.beats(scores // UNIT, 104))
        need, ok = units.winning_bank(np.arange(60, 100), 104, 6)
        for b, n, o in zip(range(60, 100), need, ok):
            assert (n, o) == units.winning_bank(b, 104, 6)


@pytest.mark.parametrize("rules, target, good", [
    (REACH, 5000, True), (REACH, 5350, True), (REACH, 4950, False), (REACH, 5025, False),
    (EXACT, 5000, True), (EXACT, 5050, False),
    (rules_from_dict({"last_round": True, "rule_of_50": True}), 5150, False),
    (rules_from_dict({}), 5000, False),
])
def test_a_last_turn_is_played_against_a_final_score_that_reached_the_goal(rules, target, good) -> None:
    """A position's `target` is the final score of the player who reached the goal: at or past it under `reach`,
    the goal under `exact`, never ending in 50 under the rule of 50, and only in a last round (4, 5)."""
    position = Position(4000, 3000, target=target)
    if good:
        assert position.validate(rules) is position
    else:
        with pytest.raises(PositionError):
            position.validate(rules)


def test_a_two_player_last_turn_is_the_second_seat_s() -> None:
    """With two players only the second player plays a last turn (5): a position with a target is read in that
    seat, against the opponent's final score."""
    answered = [seat for seat in range(2) if REACH.banking.end.last_turns(seat, 2)]
    assert answered == [0] and LAST_TURN_SEAT == 1  # only seat 0's goal is answered, by the next seat
    read = Position(4000, 3000, target=5200).as_last_turn()
    assert (read.opp, read.seat) == (5200, LAST_TURN_SEAT)
    plain = Position(4000, 3000)
    assert plain.as_last_turn() is plain
