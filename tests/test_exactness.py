"""What exactness buys: the advice's estimates at a table larger than the table read, against the exact chances."""

from __future__ import annotations

import numpy as np

from cinqmille.research.exactness import Measured, estimate_gaps, gaps_section, typical_positions
from cinqmille.research.players import at_goal
from cinqmille.research.reduction import Scenario, evaluate, measure
from cinqmille.rules import rules_from_dict
from cinqmille.simulation.estimate import Start, estimate
from cinqmille.solver import solve
from cinqmille.solver.seats import every_seat

SMALL = {"goal": 500, "opening": 150}


def test_typical_positions_can_occur() -> None:
    """Every typical position is four possible scores below the goal: 0 or at least the opening."""
    for goal in (1000, 3000, 5000):
        rules = at_goal("standard", goal)
        for scores in typical_positions(rules):
            assert len(scores) == 4
            assert all(x == 0 or rules.opening <= x < rules.goal for x in scores)
            assert all(x % 50 == 0 for x in scores)


def test_the_estimate_plays_the_table_it_reads() -> None:
    """The estimate of a four-player game read from the three-player table plays that table from the position
    given: within its margin of the exact chances of the game where every seat reads it (`Scenario("all", 3)`),
    at two positions whose chances differ."""
    rules = rules_from_dict(SMALL, "red")
    everyone = Scenario("all", 3)
    played = evaluate(rules, 4, (everyone,))
    for units in ((0, 0, 0, 0), (6, 3, 8, 0)):
        est = estimate(rules, 4, [Start(units)], games=4000, table=3)[0]
        exact = played.at(everyone, units)
        assert np.abs(np.array(est.seats) - exact).max() <= 1.5 * est.margin


def test_the_gaps_read_the_solved_and_the_played_chances() -> None:
    """Each gap's exact chances are the four-player solve's at its scores, its played ones the evaluation's, and
    the estimate the advice shows is within two margins of the played ones (seeded: the same figures each run)."""
    rules = at_goal("standard", 1000)
    _, played = measure(rules, 4, (3,), (3,))
    big = solve(rules, "win", players=4)
    gaps = estimate_gaps(rules, typical_positions(rules)[:2], played=played)
    for gap in gaps:
        units = np.array(gap.scores) // 50
        assert np.allclose(gap.exact, every_seat(big.seat_values(units)), atol=1e-15)
        assert gap.played is not None
        assert np.abs(np.array(gap.estimated) - np.array(gap.played)).max() <= 2 * gap.margin
        assert gap.inside == (gap.gap <= 100 * gap.margin)
    text = "\n".join(gaps_section(Measured(gaps=tuple(gaps), load=1.0)))
    assert "The figure an estimate shows" in text and "0/0/0/0" in text
