"""The cost of the reduction: a seat reading a smaller table inside the exact larger game, by the game's chain."""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.engine import play_game
from cinqmille.errors import CinqmilleError
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.table.policy import policy_of
from cinqmille.research.distribution import _follow, _moves
from cinqmille.research.reduction import Scenario, evaluate, exact_check, reduction_cost, reduction_costs
from cinqmille.rules import Rules, rules_from_dict
from cinqmille.rules.bank import UNIT
from cinqmille.solver import solve
from cinqmille.table.locate import locate_rows

SMALL = {"goal": 500, "opening": 150}


_TURNS: dict[tuple[Rules, int, int], tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], int]] = {}


def _turns(rules: Rules, players: int, smaller: int) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...], int]:
    """Every tuple's transitions (source, destination, chance; ``s ** n``: the game ends) under the exact
    policy and under the `smaller` table read against the leading opponents, and the number of tuples."""
    key = (rules, players, smaller)
    if key not in _TURNS:
        big, small = solve(rules, "win", players=players), solve(rules, "win", players=smaller)
        scores = big.grid.scores.astype(np.int64)
        s, goal, n = len(scores), rules.goal // UNIT, players
        states = np.arange(s ** n)
        ind = np.unravel_index(states, (s,) * n)
        index = np.full(goal + 1, -1, dtype=np.int64)
        index[scores] = np.arange(s)
        movers, rest = scores[ind[0]], states % (s ** (n - 1))

        def after(src: np.ndarray, new: np.ndarray) -> np.ndarray:
            return np.where(new >= goal, s ** n, rest[src] * s + index[np.minimum(new, goal - 1)])

        k, new, prob = _moves(policy_of(big), states, movers, rules)
        full = (k, after(k, new), prob)
        table = policy_of(small)
        rows = locate_rows(table, movers, *np.stack([scores[i] for i in ind[1:]], axis=1).T)
        k, new, prob = _moves(table, rows, movers, rules)
        _TURNS[key] = (full, (k, after(k, new), prob), s ** n)
    return _TURNS[key]


def chain_chances(rules: Rules, players: int, smaller: int, reduced_seats: set[int],
                  tail: float = 1e-15) -> tuple[float, ...]:
    """The reference (the evaluation as it was written first, with every tuple's transitions in memory): each
    seat's chance from the start when the seats `reduced_seats` read the `smaller` table against the leading
    opponents, the chain followed turn by turn from the start until less than `tail` of the chance is left."""
    full, reduced, tuples = _turns(rules, players, smaller)
    n = players
    end = tuples * n
    srcs, dsts, probs = [], [], []
    for i in range(n):
        src, dst, p = reduced if i in reduced_seats else full
        srcs.append(src * n + i)
        dsts.append(np.where(dst == tuples, end, dst * n + (i + 1) % n))
        probs.append(p)
    _, left, seats = _follow(np.concatenate(srcs), np.concatenate(dsts), np.concatenate(probs), end, 0, n, tail)
    assert left < tail
    return seats


def test_every_seat_exact_gives_the_solved_chances() -> None:
    """With no seat reduced the evaluation gives the four-player solve's values at every tuple and seat."""
    rules = rules_from_dict(SMALL, "red")
    assert exact_check(rules, 4) < 1e-12
    cost = reduction_cost(rules, 4, 2)
    assert cost.exact == solve(rules, "win", players=4).win
    assert cost.tail <= 1e-14
    assert all(c > 0 for c in cost.cost)  # reading the two-player table costs every seat something


@pytest.mark.parametrize("goal", [500, 1000])
def test_the_levels_give_the_chain_of_every_tuple(goal: int) -> None:
    """The evaluation level by level equals the chain over every tuple's transitions at once (its former
    algorithm), followed until less than 1e-15 is left, to 1e-12: one seat reduced to three or two players,
    and every seat reading the three-player table."""
    from cinqmille.research.players import at_goal

    rules = rules_from_dict(SMALL, "red") if goal == 500 else at_goal("standard", goal)
    for cost in reduction_costs(rules, 4, (3, 2)):
        for seat in range(4):
            assert abs(cost.reduced[seat] - chain_chances(rules, 4, cost.smaller, {seat})[seat]) < 1e-12
    everyone = Scenario("all", 3)
    got = evaluate(rules, 4, (everyone,)).at(everyone, (0, 0, 0, 0))
    assert np.abs(got - np.array(chain_chances(rules, 4, 3, {0, 1, 2, 3}))).max() < 1e-12
    assert abs(got.sum() - 1.0) < 1e-12


@pytest.mark.slow
def test_the_reduced_seat_agrees_with_the_referee() -> None:
    """Seat 0 reading the two-player table against the leader, three exact four-player seats: the referee's
    win rate of seat 0 (3,000 seeded games) is within 4 standard errors of the evaluation's figure."""
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


def test_a_last_round_is_refused() -> None:
    """The game with a last round is no chain over score tuples: refused in one line, before any solve."""
    with pytest.raises(CinqmilleError, match="last_round"):
        reduction_cost(rules_from_dict({**SMALL, "last_round": True}, "red"), 4, 3)


@pytest.mark.parametrize("goal", [1000, pytest.param(1500, marks=pytest.mark.slow)])
def test_the_advice_states_no_less_than_the_measured_cost(goal: int) -> None:
    """The cost the advice states for a reduction (`words.MEASURED_REDUCTION`) is at least the cost measured
    again in the exact four-player game, and within 0.01 points of the largest."""
    from cinqmille.research.players import at_goal
    from cinqmille.words import MEASURED_REDUCTION

    rules = at_goal("standard", goal)
    for cost in reduction_costs(rules, 4, tuple(MEASURED_REDUCTION)):
        worst = max(cost.cost)
        stated = MEASURED_REDUCTION[cost.smaller]
        assert 0 <= worst <= stated
        if goal == 1000:  # the largest of the goals measured
            assert stated - worst < 0.01
