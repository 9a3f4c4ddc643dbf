"""The banked scores a player can hold, in units of 50, and what banking does to them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..rules import Rules
from .kernel import UNIT, BankTable


@dataclass(frozen=True, eq=False)
class ScoreGrid:
    """Scores below the goal: 0 (not opened when there is an opening) and the opened ones."""

    rules: Rules
    goal: int  # units
    opening: int  # units
    min_bank: int  # units
    scores: np.ndarray  # sorted valid scores (units)

    @classmethod
    def of(cls, rules: Rules) -> "ScoreGrid":
        goal, opening = rules.goal // UNIT, rules.opening // UNIT
        lowest = max(opening, 1)
        scores = np.array([0] + list(range(lowest, goal)), dtype=np.int64)
        return cls(rules, goal, opening, rules.min_bank // UNIT, scores)

    def valid(self, score_units: int) -> bool:
        """Whether a banked score (units) can occur below the goal."""
        return score_units == 0 or max(self.opening, 1) <= score_units < self.goal

    def cap(self, a: np.ndarray) -> np.ndarray:
        """First turn total (units) from which the pair's turn states are terminal (see TurnKernel)."""
        a = np.asarray(a, dtype=np.int64)
        if self.rules.end == "exact":
            return self.goal - a
        cap = np.maximum(self.goal - a, max(self.min_bank, 1))
        if self.opening:
            cap = np.where(a == 0, np.maximum(cap, self.opening), cap)
        return cap

    def opened(self, score: np.ndarray) -> np.ndarray:
        """Whether a player with this banked score (units) has opened."""
        return (np.asarray(score) > 0) | (self.opening == 0)

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
        rules, d = self.rules, self.rules.dice
        a = np.asarray(a, dtype=np.int64)[:, None]
        b = np.asarray(b, dtype=np.int64)[:, None]
        t = np.arange(tmax + 1, dtype=np.int64)[None, :]
        new = a + t
        allowed = np.broadcast_to(t >= np.maximum(self.min_bank, 1), new.shape).copy()
        if self.opening:
            allowed = np.where(a == 0, t >= self.opening, allowed)
        fault = np.zeros(new.shape, dtype=bool)
        fs = rules.final_stretch
        if fs is not None:
            start = fs.start // UNIT
            fault |= (a >= start) & (new < self.goal)  # stopping short counts for nothing
            if fs.cap:
                new = np.where((a < start) & (new > start) & (new < self.goal), start, new)
        if rules.rule_of_50:
            fault |= (new % 2) == 1
        if rules.end == "exact":
            allowed &= new <= self.goal
        win = allowed & (new >= self.goal) & ~fault
        ordinary = allowed & ~fault & ~win
        shape3 = new.shape + (d,)
        a_val = np.full(shape3, -np.inf)
        b_val = np.zeros(shape3)
        rows, cols = np.nonzero(ordinary)
        bb = np.broadcast_to(b, new.shape)[rows, cols]
        nn = new[rows, cols]
        base = 1.0 - start_value[bb, nn]
        if offer is not None:
            m = np.arange(1, d + 1)
            taker = self.opened(bb)
            tt = np.minimum(cols, offer.shape[2] - 1)
            offered = 1.0 - offer[bb[:, None], nn[:, None], tt[:, None], m[None, :] - 1]
            a_val[rows, cols] = np.where(taker[:, None], offered, base[:, None])
        else:
            a_val[rows, cols] = base[:, None]
        wr, wc = np.nonzero(win)
        if goal_value is not None and len(wr):
            m = np.arange(1, d + 1)[None, :]
            a_val[wr, wc] = goal_value(np.broadcast_to(b, new.shape)[wr, wc][:, None], new[wr, wc][:, None],
                                       wc[:, None], m)
        else:
            a_val[wr, wc] = win_value
        faulty = allowed & fault
        a_val[faulty] = 0.0
        b_val[faulty] = 1.0
        if not rules.can_bank_after_full_hand:
            a_val[:, :, d - 1] = -np.inf
            b_val[:, :, d - 1] = 0.0
        return BankTable(a_val, b_val)
