"""The side-by-side page section of two, three and four players, and the reduction section, from their solves."""

from __future__ import annotations

import pytest

from cinqmille.research.page import PLAYERS_HEADING, players_section
from cinqmille.research.players import at_goal, players_rows
from cinqmille.research.exactness import Measured, section
from cinqmille.research.reduction import ReductionCost
from cinqmille.solver import solve


def test_each_row_is_the_solve_of_its_players() -> None:
    """`players_rows` gives, per preset and goal, the solved seat chances of two to four players, and the
    section prints each of them with the first seat's edge over 1/N."""
    rows = players_rows(["standard"], goals=(1000,), most=4)
    (preset, goal, solves), = rows
    assert (preset, goal) == ("standard", 1000) and [sc.players for sc in solves] == [2, 3, 4]
    rules = at_goal("standard", 1000)
    for sc in solves:
        assert sc.win == pytest.approx(solve(rules, "win", players=sc.players).win, abs=1e-12)
        assert sc.edge == pytest.approx(100 * (sc.win[0] - 1 / sc.players))
    text = "\n".join(players_section(rows))
    assert text.startswith(PLAYERS_HEADING)
    assert f"{solves[2].win[3] * 100:.2f}%" in text and f"{solves[2].edge:+.2f}" in text


def test_a_preset_that_needs_a_larger_goal_is_left_out() -> None:
    """`house` (a final stretch from 4000) has no ruleset at goal 1000: it is left out, not solved wrongly."""
    assert players_rows(["house"], goals=(1000,)) == []


def test_the_reduction_section_states_the_largest_cost() -> None:
    """The reduction section prints each seat's cost and the largest per table size read."""
    rules = at_goal("standard", 1000)
    costs = (ReductionCost(rules, 4, 3, (0.4, 0.3, 0.2, 0.1), (0.399, 0.2995, 0.2, 0.1), 1e-10, 12.0, 2**30, 10**6),)
    text = "\n".join(section(Measured(costs)))
    assert "0.100, 0.050, 0.000, 0.000" in text and "at most 0.100 points" in text
