r"""The last turn of a two-player last round: the second player's chance to take the victory.

When the first player of the round reaches the goal with ``new`` points, the
second player (banked ``b``) plays one last turn. Under ``reach`` he wins only
by banking a score above ``new``; under ``exact`` only by reaching the goal
exactly. With ``take_over`` he may instead start from the first player's banked
turn (``t`` points, ``m`` dice, and he must roll first).

Success is a bank of at least ``thr`` turn points (reach: ``thr = max(new - b + 1,
lowest bank)``; exact: exactly ``goal - b``; `EndRules.winning_bank`), so the value of a turn state
depends only on ``r = thr - t`` (and, under the rule of 50, on the parity of the
score): one table ``U[c, r, m]`` per parity class ``c`` serves every ``b`` and
``new``. It is one kernel pass of a single row with a bust worth 0.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..rules import Rules
from .grid import ScoreGrid
from .kernel import BankTable, TurnKernel
from .keeps import NEG

#: Turn points (units of 50) covered by the tables; far enough that the chance has settled
#: (to an instant win's, if five 1s win) well before.
SPAN = 1200


class LastTurn:
    """Chances of the second player's last turn, for any target, from the start or a take-over."""

    def __init__(self, rules: Rules, kernel: TurnKernel | None = None, span: int = SPAN):
        self.rules = rules
        if rules.prediction:
            # a doubled turn depends on the points set aside, not only on what is still needed:
            # the last turn is valued without announcements (a stated relaxation, `relaxations`)
            kernel = TurnKernel(replace(rules, prediction=False))
        self.kernel = kernel or TurnKernel(rules)
        self.grid = ScoreGrid.of(rules)
        self.bank = self.grid.bank
        self.exact = self.bank.exact
        self.period = self.kernel.period
        self.span = span
        d = rules.dice
        classes = 1 if self.exact else self.period
        term_a, term_b = self.kernel.terminal_bank(1)  # a bank at the threshold wins (1), or is a fault
        self.value = []
        self.roll = []
        self.keep = []  # per parity class: the keep the pass took at each layer in each class with a choice (σ)
        for c in range(classes):
            # one row whose success threshold is t = span, with parity class c at the threshold
            score = (c - span) % self.period
            bank_a = np.full((1, span + 1, d), NEG)
            bank_b = np.zeros((1, span + 1, d))
            bank_a[0, span], bank_b[0, span] = term_a[0, c], term_b[0, c]
            taken = self.kernel.move_table(1, span)
            _, _, ta, tb = self.kernel.run(np.array([score]), np.array([span]), BankTable(bank_a, bank_b),
                                           np.zeros(1), keep_table=True, moves=taken)
            value = ta[0] + tb[0] * 0.0
            self.value.append(value)
            self.keep.append(taken.keep[0])
            self.roll.append(self.kernel.rolling(value, 0.0))

    def threshold(self, b: Any, target: Any) -> tuple[Any, Any, Any]:
        """(thr, possible, c) of last turns on banked `b` against `target` (units; ints or arrays): the smallest
        bank that takes the victory and whether one is allowed (`EndRules.winning_bank`), and the parity class
        of the score it leaves (0 under exact: one class)."""
        thr, possible = self.bank.end.winning_bank(b, target, self.bank.least(b))
        return thr, possible, (0 * thr if self.exact else (b + thr) % self.period)

    def keeps(self, c: int, r: np.ndarray) -> np.ndarray:
        """The keep the pass took in each roll class with a choice (`Decisions.keep`) at the states of parity
        class `c` that still need `r` turn units (an array): (len(r), Cc), -1 where it took none (hopeless,
        or past the goal under exact)."""
        t = self.span - np.asarray(r)
        table = self.keep[c]
        last = len(table) - 1
        ok = (t >= 0) & ((t <= self.span + 1) if self.exact else True)  # span + 1: an overshoot (exact)
        folded = np.where(t > last, last - (t - last) % self.period, t)
        return np.where(ok[:, None], table[np.where(ok, folded, 0)], -1).astype(np.int8)

    def _lookup(self, table: list[np.ndarray], c: np.ndarray, r: np.ndarray, m: np.ndarray) -> np.ndarray:
        """U[c, r, m] for arrays (r = turn units still needed; r <= 0 is the success region)."""
        t = self.span - r
        out = np.zeros(np.broadcast(c, r, m).shape)
        c, t, m = np.broadcast_arrays(c, t, m)
        ok = t >= 0  # r > span: hopeless (below 1e-17)
        last = table[0].shape[0] - 1
        if self.exact:
            ok &= t <= self.span  # r < 0: already past the goal
        folded = np.where(t > last, last - (t - last) % self.period, t)
        for cls in range(len(table)):
            sel = ok & (c == cls)
            out[sel] = table[cls][folded[sel], m[sel] - 1]
        return out

    def chance(self, b: np.ndarray, new: np.ndarray, offer_t: np.ndarray | None = None,
               offer_m: np.ndarray | None = None) -> np.ndarray:
        """Chance that the second player (score b, units) takes the victory from a first player at `new`.

        With an offer (take_over on, b opened), the better of starting afresh and
        taking over the first player's `offer_t` points with `offer_m` dice.
        """
        thr, possible, c = self.threshold(np.asarray(b, dtype=np.int64), np.asarray(new, dtype=np.int64))
        d = self.rules.dice
        fresh = np.where(possible, self._lookup(self.value, c, thr, np.full(thr.shape, d)), 0.0)
        if offer_t is None or not self.rules.take_over:
            return fresh
        offer_t = np.asarray(offer_t, dtype=np.int64)
        take = self._lookup(self.roll, c, thr - offer_t, np.asarray(offer_m, dtype=np.int64))
        take = np.where(possible & self.bank.opened(b) & ~self.bank.overshoots(b, offer_t), take, 0.0)
        return np.asarray(np.maximum(fresh, take))

    def plateau(self, c: np.ndarray, m: np.ndarray) -> np.ndarray:
        """A fresh last turn's chance far past the goal (only an instant win is left), by parity class."""
        return self._lookup(self.value, np.asarray(c), np.full(np.shape(c), self.span), np.asarray(m))

    def reach_extension(self, tol: float = 1e-15) -> int:
        """Turn units after which a fresh last turn's chance no longer depends on the target (within `tol`)."""
        if self.exact:
            return 0
        d = self.rules.dice
        far = 0
        for value in self.value:
            u = value[: self.span + 1, d - 1][::-1]  # U(r, D) for r = 0..span
            moving = np.nonzero(np.abs(u - u[-1]) >= tol)[0]
            far = max(far, int(moving.max()) + 1 if len(moving) else 1)
        if far > self.span // 2:
            raise RuntimeError(f"the last-turn table did not settle within {self.span} units")
        return far
