"""The cost of the reduction: a seat reading a smaller table inside the exact larger game, by the game's chain."""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.engine import play_game
from cinqmille.errors import CinqmilleError
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.research.reduction import reduction_cost
from cinqmille.rules import rules_from_dict
from cinqmille.solver import solve

SMALL = {"goal": 500, "opening": 150}


def test_every_seat_exact_gives_the_solved_chances() -> None:
    """With no seat reduced the chain's seat chances are the four-player solve's, within the chain's tail."""
    rules = rules_from_dict(SMALL, "red")
    cost = reduction_cost(rules, 4, 2)
    solved = solve(rules, "win", players=4).win
    assert cost.tail < 1e-8
    assert np.abs(np.array(cost.exact) - np.array(solved)).max() < 2 * cost.tail + 1e-12
    assert all(c > 0 for c in cost.cost)  # reading the two-player table costs every seat something


@pytest.mark.slow
def test_the_reduced_seat_agrees_with_the_referee() -> None:
    """Seat 0 reading the two-player table against the leader, three exact four-player seats: the referee's
    win rate of seat 0 (3,000 seeded games) is within 4 standard errors of the chain's figure."""
    rules = rules_from_dict(SMALL, "red")
    cost = reduction_cost(rules, 4, 2)

    class TwoPlayerTable(OptimalPolicy):
        def seats(self, players: int) -> None:  # type: ignore[override]
            return None  # the two-player table against the leading opponent

    reduced, exact = TwoPlayerTable(rules), OptimalPolicy(rules)
    rng = np.random.default_rng(7)
    games = 3000
    wins = sum(play_game(rules, [reduced, exact, exact, exact], rng=rng).winner == 0 for _ in range(games))
    rate = wins / games
    se = np.sqrt(rate * (1 - rate) / games)
    assert abs(rate - cost.reduced[0]) < 4 * se


def test_a_reduction_must_be_smaller() -> None:
    """A 'reduction' to a table as large as the game is refused in one line."""
    with pytest.raises(CinqmilleError, match="smaller"):
        reduction_cost(rules_from_dict(SMALL, "red"), 3, 3)


@pytest.mark.parametrize("goal", [1000, pytest.param(1500, marks=pytest.mark.slow)])
def test_the_advice_states_no_less_than_the_measured_cost(goal: int) -> None:
    """The cost the advice states for a reduction (`words.MEASURED_REDUCTION`) is at least the cost measured
    again in the exact four-player game, and within 0.01 points of the largest."""
    from cinqmille.research.players import at_goal
    from cinqmille.words import MEASURED_REDUCTION

    rules = at_goal("standard", goal)
    for table, stated in MEASURED_REDUCTION.items():
        worst = max(reduction_cost(rules, 4, table).cost)
        assert 0 <= worst <= stated
        if goal == 1000:  # the largest of the goals measured
            assert stated - worst < 0.01
