"""The banked scores a player can hold, in units of 50, and what banking does to them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from numpy.typing import ArrayLike

from ..rules import Rules
from ..rules.bank import SCORED, BankRules
from .kernel import BankTable, StartBanks
from .keeps import NEG
from .seats import passed


@dataclass(frozen=True, eq=False, slots=True)
class ScoreGrid:
    """Scores below the goal: 0 (not opened when there is an opening) and the opened ones.

    An opened score is at least the opening, except where `zero_turns` takes
    points away: a fall can leave an opened player anywhere above 0.
    """

    rules: Rules
    bank: BankRules  # in units of 50
    scores: np.ndarray  # sorted valid scores (units)
    low: int  # the smallest opened score (units)
    pending: tuple[int, ...] = ()  # starting scores below the opening (units): not opened, the start still to add
    where: np.ndarray = field(init=False)  # (goal,) the position of each score (units) in `scores`, -1 if impossible

    def __post_init__(self) -> None:
        where = np.full(self.goal, -1, dtype=np.int64)
        where[self.scores] = np.arange(len(self.scores))
        object.__setattr__(self, "where", where)

    @classmethod
    def of(cls, rules: Rules, pending: tuple[int, ...] = ()) -> "ScoreGrid":
        """The grid of `rules`; `pending` adds starting scores below the opening (`Rules.start`, units)."""
        br = BankRules.of(rules)
        low = max(br.opened_from, 1)
        extra = sorted({int(p) for p in pending if 0 < p < low})
        return cls(rules, br, np.array([0] + extra + list(range(low, br.goal)), dtype=np.int64), low, tuple(extra))

    @property
    def goal(self) -> int:
        """The goal in units."""
        return self.bank.goal

    def valid(self, score_units: int) -> bool:
        """Whether a banked score (units) can occur below the goal."""
        return score_units == 0 or self.low <= score_units < self.goal or score_units in self.pending

    def slots(self, rows: ArrayLike) -> np.ndarray:
        """The positions in `scores` of score rows (units, any shape), -1 where a score cannot occur (or is not
        below the goal): how the tables of three players or more index their turn starts (`seat_values`)."""
        rows = np.asarray(rows, dtype=np.int64)
        inside = (rows >= 0) & (rows < self.goal)
        return np.where(inside, self.where[np.where(inside, rows, 0)], -1)

    def seat_values(self, table: np.ndarray, rows: ArrayLike) -> np.ndarray:
        """The stored seats of the turn starts `rows` (units, shape (..., n), playing order from the mover) in a
        table laid out by score positions (``table[ia, ib, ..., j]``, `slots`), shape (..., n - 1); NaN where a
        score cannot occur. The one reader of that layout."""
        at = self.slots(rows)
        out = np.array(table[tuple(np.moveaxis(np.maximum(at, 0), -1, 0))], dtype=float)
        out[(at < 0).any(axis=-1)] = np.nan
        return out

    def cap(self, a: np.ndarray) -> np.ndarray:
        """First turn total (units) from which the pair's turn states are terminal (see TurnKernel)."""
        a = np.asarray(a, dtype=np.int64)
        return np.asarray(self.bank.end.goal_bank(a, self.bank.least(a)))

    def opened(self, score: np.ndarray) -> np.ndarray:
        """Whether a player with this banked score (units) has opened."""
        return np.asarray(self.bank.opened(np.asarray(score)))

    def _banks(self, a: np.ndarray, tmax: int) -> tuple[np.ndarray, tuple[np.ndarray, ...], tuple[np.ndarray, ...],
                                                         np.ndarray, np.ndarray]:
        """Banks of t = 0..tmax on scores `a` as `BankRules` judges them: the new scores (rows, t), the (row, t)
        of the banks that score and of those that win, where a bank counts as a bust (a fault or a stop short),
        and which hands m = 1..D may bank."""
        br = self.bank
        a = np.asarray(a, dtype=np.int64)[:, None]
        t = np.arange(tmax + 1, dtype=np.int64)[None, :]
        kind, new, wins = br.outcome(a, t)
        can = br.allowed(a, t) & ~br.overshoots(a, t)
        return (new, np.nonzero(can & (kind == SCORED) & ~wins), np.nonzero(can & wins), can & (kind != SCORED),
                br.hand_ok(np.arange(1, br.dice + 1)))

    def bank_table(self, a: np.ndarray, b: np.ndarray, tmax: int, start_value: np.ndarray,
                   win_value: float = 1.0, offer: np.ndarray | None = None,
                   goal_value: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
                   ) -> BankTable:
        """Affine values (A + B * L) of banking t = 0..tmax units with m = 1..D dice for pairs (a, b).

        An ordinary bank is worth `1 - start_value[b, new score]` (the opponent
        moves next), or `1 - offer[b, new, t, m]` when a take-over is offered to
        an opened opponent; a bank that reaches the goal `win_value` (or
        `goal_value(b, new, t, m)`, the first player's value in a last round); a
        fault or a stop short counts as a bust (B = 1).
        """
        d = self.bank.dice
        m = np.arange(1, d + 1)
        new, (rows, cols), (wr, wc), bust, hand = self._banks(a, tmax)
        b = np.broadcast_to(np.asarray(b, dtype=np.int64)[:, None], new.shape)
        a_val = np.full(new.shape + (d,), NEG)
        b_val = np.zeros(new.shape + (d,))
        a_val[bust], b_val[bust] = 0.0, 1.0
        bb, nn = b[rows, cols], new[rows, cols]
        a_val[rows, cols] = passed(start_value[bb, nn])[:, None]
        if offer is not None:
            offered = passed(offer[bb[:, None], nn[:, None], np.minimum(cols, offer.shape[2] - 1)[:, None], m - 1])
            a_val[rows, cols] = np.where(self.opened(bb)[:, None], offered, a_val[rows, cols])
        a_val[wr, wc] = win_value if goal_value is None else goal_value(b[wr, wc][:, None], new[wr, wc][:, None],
                                                                        wc[:, None], m[None, :])
        a_val[..., ~hand], b_val[..., ~hand] = NEG, 0.0
        return BankTable(a_val, b_val)

    def bank_codes(self, a: np.ndarray, tmax: int) -> np.ndarray:
        """What banking t = 0..tmax with m = 1..D dice does on each score of `a`, as `BankRules` judges it, shape
        (len(a), T, D): the new score (a bank that scores and does not win), or `BANK_BUST` (a fault or a stop
        short), `BANK_WIN`, `BANK_NONE` (not allowed) (`StartBanks`)."""
        new, (rows, cols), (wr, wc), bust, hand = self._banks(a, tmax)
        # lazy: Numba loads when a pass first runs, not for a table read
        from .compiled import BANK_BUST, BANK_NONE, BANK_WIN

        code = np.full(new.shape + (self.bank.dice,), BANK_NONE, dtype=np.int64)
        code[bust] = BANK_BUST
        code[rows, cols] = new[rows, cols][:, None]
        code[wr, wc] = BANK_WIN
        code[:, :, ~hand] = BANK_NONE
        return code

    def position_codes(self, tmax: int) -> np.ndarray:
        """`bank_codes` of every score of the grid (by position, `slots`) up to `tmax`, a new score given by its
        position: how the tables of three players or more are read (`start_banks`)."""
        code = self.bank_codes(self.scores, tmax)
        scored = code >= 0
        at = self.slots(code[scored])
        if (at < 0).any():
            raise ValueError("a bank leads to a score outside the grid")
        code[scored] = at
        return code

    def start_banks(self, a: np.ndarray, others: np.ndarray, tmax: int, start_value: np.ndarray,
                    win_value: float = 1.0, codes: np.ndarray | None = None) -> StartBanks:
        """The banks of rows (mover's score `a`, `others` the scores after his, in playing order, units) read from
        the turn starts ``start_value[ia, ib, ..., j]`` laid out by score positions (`slots`; `StartBanks`;
        `seat_bank_table` lays them out). `codes`: the `position_codes` up to at least `tmax`, when the caller
        keeps them."""
        a = np.asarray(a, dtype=np.int64)
        s, k = len(self.scores), others.shape[1]
        at = self.slots(np.asarray(others, dtype=np.int64).reshape(len(a), k))
        flat = np.ravel_multi_index(tuple(at.T), (s,) * k) if len(a) else a
        starts = start_value.reshape((s ** k, s, start_value.shape[-1]))
        return StartBanks(self.position_codes(tmax) if codes is None else codes, starts, self.slots(a), flat,
                          win_value)

    def seat_bank_table(self, a: np.ndarray, others: np.ndarray, tmax: int, start_value: np.ndarray,
                        win_value: float = 1.0) -> BankTable:
        """`bank_table` for n players: values of every seat but the last, shape (P, T, D, n - 1).

        `others[p]` are the scores after the mover's, in playing order;
        `start_value[ia, ib, ..., j]` the stored seat values of every turn start
        by score positions (`slots`, `seats`). An ordinary bank passes the dice to ``(others..., new)``
        (`pass_dice`), a winning bank is worth `win_value` to the mover and 0 to
        the others, a fault or a stop short counts as a bust (B = 1): `start_banks`, laid out.
        """
        return self.start_banks(a, others, tmax, start_value, win_value).table()
