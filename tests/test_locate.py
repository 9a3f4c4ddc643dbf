"""One reading of a position in a policy table (`table.locate`): `locate`, its vector form and the reduction."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cinqmille.table.policy import policy_of
from cinqmille.errors import CinqmilleError
from cinqmille.table.position import Position
from cinqmille.rules import rules_from_dict
from cinqmille.solver import compute
from cinqmille.table.locate import Layout, locate, locate_rows, row_reader
from cinqmille.solver.n_player import leading

UNIT = 50
RULES = {"goal": 300, "opening": 100, "end": "exact"}


def test_every_position_of_every_table_size_is_read_at_the_row_of_its_scores() -> None:
    """For two and three seats, every tuple of scores (and, at a smaller table, more opponents) is read by
    `locate` at the row `locate_rows` gives its arrays, which is the row of the mover and of the opponents who
    threaten most (the highest scores, a tie to who plays sooner), laid out ``ravel(i_mover, i_1, ...)``."""
    rules = rules_from_dict(RULES)
    two, three = policy_of(compute(rules)), policy_of(compute(rules, players=3))
    scores = [int(x) for x in two.scores]
    s = len(scores)
    for table in (two, three):
        n = table.players
        for game in (n, n + 1):
            tuples = np.array(list(itertools.product(scores, repeat=game)))
            rows = locate_rows(table, tuples[:, 0], *tuples[:, 1:].T)
            assert np.array_equal(row_reader(table)(tuples[:, 0], *tuples[:, 1:].T), rows)
            for scores_, row in zip(tuples[:: max(1, len(tuples) // 200)], rows[:: max(1, len(tuples) // 200)]):
                me, *others = (int(x) * UNIT for x in scores_)
                kept = leading(tuple(others), n - 1) if len(others) > n - 1 else tuple(others)
                want = 0
                for x in (me, *kept):
                    want = want * s + scores.index(x // UNIT)
                assert row == want
                assert locate(table, Position(me, others[0], others=tuple(others))) == (table, row)
    layout = Layout.of(compute(rules).grid, 2)
    assert np.array_equal(locate_rows(layout, np.array(scores), np.array(scores[::-1])),
                          locate_rows(two, np.array(scores), np.array(scores[::-1])))


def test_a_score_that_cannot_occur_or_missing_opponents_is_one_line() -> None:
    """A score past the goal or not on the ruleset's grid, or fewer opponents than the table seats: one line."""
    rules = rules_from_dict(RULES)
    three = policy_of(compute(rules, players=3))
    with pytest.raises(CinqmilleError, match="opponents"):
        locate_rows(three, 0, 0)
    with pytest.raises(CinqmilleError, match="goal"):
        locate_rows(policy_of(compute(rules)), 6, 0)
    with pytest.raises(CinqmilleError, match="cannot occur"):
        locate_rows(policy_of(compute(rules)), 1, 0)  # 50 before the opening of 100
