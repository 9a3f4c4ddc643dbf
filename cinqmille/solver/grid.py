"""The banked scores a player can hold, in units of 50, and what banking does to them."""

from __future__ import annotations

from dataclasses import dataclass

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

    def bank_table(self, a: np.ndarray, b: np.ndarray, tmax: int, start_value: np.ndarray,
                   win_value: float = 1.0) -> BankTable:
        """Affine values (A + B * L) of banking t = 0..tmax units with m = 1..D dice for pairs (a, b).

        An ordinary bank is worth `1 - start_value[b, new score]` (the opponent
        moves next); a winning bank `win_value`; a fault or a stop short counts
        as a bust (B = 1).
        """
        rules, d = self.rules, self.rules.dice
        a = np.asarray(a, dtype=np.int64)[:, None]
        b = np.asarray(b, dtype=np.int64)[:, None]
        t = np.arange(tmax + 1, dtype=np.int64)[None, :]
        allowed = t >= np.maximum(self.min_bank, 1)
        if self.opening:
            allowed = np.where(a == 0, t >= self.opening, allowed)
        new = a + t
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
        win = (new >= self.goal) & ~fault
        a_val = np.full(new.shape, -np.inf)
        b_val = np.zeros(new.shape)
        ordinary = allowed & ~fault & ~win
        rows, cols = np.nonzero(ordinary)
        bb = np.broadcast_to(b, new.shape)
        a_val[rows, cols] = 1.0 - start_value[bb[rows, cols], new[rows, cols]]
        a_val[allowed & win] = win_value
        a_val[allowed & fault] = 0.0
        b_val[allowed & fault] = 1.0
        a3 = np.repeat(a_val[:, :, None], d, axis=2)
        b3 = np.repeat(b_val[:, :, None], d, axis=2)
        if not rules.can_bank_after_full_hand:
            a3[:, :, d - 1] = -np.inf
            b3[:, :, d - 1] = 0.0
        return BankTable(a3, b3)

