"""One row of a solved table as whole arrays (`TurnTable`), for the tests that check every state of a turn.

The row is the one every reader of the package reads: `table.locate.spot` of the position (my last turn when
its `target` is set), its arrays cut from the block's layers `0 .. cap + 1`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cinqmille.table.locate import spot
from cinqmille.table.position import Position
from cinqmille.solver import SolveResult
from cinqmille.solver.choice import fold


@dataclass(frozen=True, eq=False)
class TurnTable:
    """Every turn state of one row: ``value[t, m-1]`` (t in units of 50, layers 0 .. cap + 1), read from the policy."""

    value: np.ndarray  # (cap + 2, D) value of the state
    bank: np.ndarray  # (cap + 2, D) value of banking (-inf where not allowed)
    roll: np.ndarray  # (cap + 2, D) value of rolling the dice in hand (with the best announcement, if any)
    bust: float  # value of a bust
    period: int  # layers past the cap repeat with this period (reach)
    cap: int  # units; from here on states are terminal (reach); past it they are overshoots (exact)
    exact_end: bool
    plain_roll: np.ndarray | None = None  # prediction: (cap + 2, D) value of rolling without announcing
    predict: np.ndarray | None = None  # prediction: (cap + 2, V) value of announcing each of `choices`
    choices: tuple[int, ...] = ()  # prediction: the announcements, in points

    def at(self, turn_units: int, m: int) -> float:
        """Optimal value with `turn_units` set aside and m dice in hand."""
        return float(self.value[self._row(turn_units), m - 1])

    def _row(self, t: int) -> int:
        return int(fold(t, self.cap, self.period, self.exact_end))


def turn_table(result: SolveResult, position: Position) -> TurnTable:
    """The states of the row `position` is read at (`table.locate.spot`), as a `TurnTable`."""
    block, r = spot(result, position)
    d = block.dice
    block.value(r, 0, d)  # a lazy table computes the row's group on its first read
    cap = int(block.cap[r])
    n = cap + 2
    i = block.offset[r] + np.arange(n)
    t = np.repeat(np.arange(n), d).reshape(n, d)
    m = np.tile(np.arange(1, d + 1), (n, 1))
    plain = None
    if block.plain_v is not None:
        plain = block.roll_v[i].copy()
        plain[:, 1] = block.plain_v[i]
    return TurnTable(block.value(np.full((n, d), r), t, m), block.bank_v[i].copy(), block.roll_v[i].copy(),
                     float(block.bust[r]), block.period, cap, block.exact, plain,
                     None if block.predict_v is None else block.predict_v[i].copy(), block.choices)
