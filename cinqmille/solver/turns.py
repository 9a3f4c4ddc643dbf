"""What a turn of one *row* is worth at its edges: a row is (seat, a, b), a mover and a pair of scores.

`GameModel` gathers, for a ruleset, everything the kernel needs besides the
dice: where each row's states become terminal (`caps`), the value of banking at
every turn state (`bank`), the value of banking past the cap (`terminal_bank`),
and the take-over offers that a bank hands to the opponent (`offer_rows`).

The first axis of a row and of the turn-start table is its *kind*: the seat
under `last_round` (seat 0 opens each round; when it reaches the goal, seat 1
plays one last turn, `LastTurn`); the two scoreless-turn counters
``(mine, his)`` under a counted `zero_turns` (kind ``mine * count + his``,
`counted`); otherwise one table serves both players and every row has kind 0.
Where the dice go next is written once: `bank_next` (a scored bank) and
`bust_next` (a scoreless turn: a bust, a fault, an overshoot).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..rules import Rules
from ..rules.bank import UNIT
from .grid import ScoreGrid
from .kernel import BankTable, StartBanks, TurnKernel
from .keeps import NEG
from .last_turn import LastTurn
from .seats import passed


def counted(rules: Rules) -> int:
    """`zero_turns.count` when the two-player solver keeps the scoreless-turn counters in the state, else 0.

    The counters are solved exactly with a fall to zero or by a number of points,
    and without a last round, take-over offers or a final stretch (whose void
    banks leave the counters as they are); otherwise the rule is relaxed
    (`two_player.relaxations`).
    """
    zero = rules.zero_turns
    if zero is None or zero.to == "previous" or rules.last_round or rules.take_over or rules.final_stretch:
        return 0
    return zero.count


def table_kinds(rules: Rules) -> int:
    """How many turn-start tables the two-player game has: seats under a last round, counter pairs, or 1."""
    return 2 if rules.last_round else max(counted(rules), 1) ** 2


class GameModel:
    """The rows, caps and bank values of the two-player game under one ruleset."""

    def __init__(self, rules: Rules, kernel: TurnKernel | None = None, pending: tuple[int, ...] = ()):
        self.rules = rules
        self.grid = ScoreGrid.of(rules, pending)
        self.kernel = kernel or TurnKernel(rules)
        self.counters = counted(rules)
        self.seats = table_kinds(rules)
        self.end = self.grid.bank.end
        self.last = LastTurn(rules, self.kernel) if self.end.last_round else None
        self.extension = self.last.reach_extension() if self.last is not None else 0
        self.take_over = rules.take_over
        g, d = self.grid.goal, rules.dice
        #: offers[s][x, y, t, m-1]: value to a mover of seat s (scores x, y) offered t points and m dice
        self.offers = np.full((self.seats, g, g, g, d), np.nan) if self.take_over else None
        self._codes: np.ndarray | None = None  # `ScoreGrid.bank_codes` of every score, made on first use

    def bank_next(self, seat: np.ndarray) -> np.ndarray:
        """The kind of the next turn start after a scored bank: the other seat, or the counters (his, 0)."""
        if self.rules.last_round:
            return 1 - seat
        if self.counters:
            return (seat % self.counters) * self.counters
        return seat

    def bust_next(self, seat: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The next turn start (kind, mover's score, passer's score) after a scoreless turn of row (seat, a, b).

        Under a counted `zero_turns` the passer's counter grows; at `count` it goes
        back to 0 and his score falls (to 0, or by the points of `to`, not below 0).
        """
        seat, a, b = np.asarray(seat), np.asarray(a), np.asarray(b)
        if self.rules.last_round:
            return 1 - seat, b, a
        c = self.counters
        if not c:
            return seat, b, a
        mine, his = np.divmod(seat, c)
        fell = mine + 1 >= c
        to = self.rules.zero_turns.to if self.rules.zero_turns is not None else "zero"
        low = np.zeros_like(a) if to == "zero" else np.maximum(a + int(to) // UNIT, 0)
        return his * c + np.where(fell, 0, mine + 1), b, np.where(fell, low, a)

    def bust_value(self, seat: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> np.ndarray:
        """The value of a scoreless turn to the mover of each row, read from the turn-start tables `w`."""
        return passed(w[self.bust_next(seat, a, b)])

    def caps(self, seat: np.ndarray, a: np.ndarray) -> np.ndarray:
        """First turn total (units) of each row from which its states are terminal."""
        cap = self.grid.cap(a)
        if self.extension:
            cap = np.where(self.answered(seat), np.maximum(cap, self.grid.goal - a + self.extension), cap)
        return cap

    def answered(self, seat: np.ndarray) -> np.ndarray:
        """Whether the mover of each row, reaching the goal, is answered by the other's last turn (seat 0 in a
        last round, `EndRules.last_turns`)."""
        return np.asarray(self.end.last_turns(np.asarray(seat), 2) > 0)

    def _goal_value(self, seat: int) -> Callable[..., np.ndarray] | None:
        """The value of a bank that reaches the goal where a last turn answers it: the other fails his last turn."""
        last = self.last
        return None if last is None or not self.answered(np.asarray(seat)) else \
            (lambda b, new, t, m: passed(last.chance(b, new, t, m)))

    def bank(self, seat: np.ndarray, a: np.ndarray, b: np.ndarray, tmax: int, w: np.ndarray) -> BankTable:
        """Bank values of the rows at turn totals 0..tmax (w: the turn-start tables, shape (seats, G, G))."""
        d = self.rules.dice
        out_a = np.empty((len(a), tmax + 1, d))
        out_b = np.empty((len(a), tmax + 1, d))
        for s in np.unique(seat):
            sel = seat == s
            opp = int(self.bank_next(np.array(s)))
            table = self.grid.bank_table(a[sel], b[sel], tmax, w[opp],
                                         offer=None if self.offers is None else self.offers[opp],
                                         goal_value=self._goal_value(int(s)))
            out_a[sel], out_b[sel] = table.a, table.b
        return BankTable(out_a, out_b)

    def level_bank(self, seat: np.ndarray, a: np.ndarray, b: np.ndarray, tmax: int,
                   w: np.ndarray) -> BankTable | StartBanks:
        """The banks of a level's rows for its solve: `bank`'s values, read from the turn starts `w` as the pass goes
        (`StartBanks`) where a bank's value is the next turn start's alone (no take-over offer, no last round)."""
        if self.offers is not None or self.last is not None:
            return self.bank(seat, a, b, tmax, w)
        g = self.grid.goal
        if self._codes is None or self._codes.shape[1] <= tmax:
            self._codes = self.grid.bank_codes(np.arange(g), max(tmax, int(self.grid.cap(self.grid.scores).max())))
        opp = self.bank_next(np.asarray(seat))
        return StartBanks(self._codes, w.reshape(self.seats * g, g, 1), np.asarray(a, dtype=np.int64),
                          np.asarray(opp * g + b, dtype=np.int64), self.kernel.win_value, per_seat=False)

    def terminal_bank(self, seat: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(A, B) of banking past the cap per row, or None when every such bank simply wins."""
        if self.last is None or self.kernel.exact:
            return None
        k, d, per = self.kernel, self.rules.dice, self.kernel.period
        bank_a, bank_b = (x.copy() for x in k.terminal_bank(len(a)))
        first = self.answered(seat)
        if not first.any():
            return bank_a, bank_b
        m = np.arange(1, d + 1)
        for par in range(per):
            c = np.full(first.sum(), (par + 1) % per)
            lose = np.broadcast_to(self.last.plateau(c, np.full(c.shape, d))[:, None], (len(c), d))
            if self.take_over:
                bf = b[first]
                rr = (a[first] - bf + 1)[:, None]  # what a taker must add on top of the taken turn
                take = self.last._lookup(self.last.roll, c[:, None], np.broadcast_to(rr, (len(c), d)), m[None, :])
                take = np.where(self.grid.opened(bf)[:, None], take, 0.0)
                lose = np.maximum(lose, take)
            allowed = bank_a[first, par] > NEG
            fault = bank_b[first, par] > 0
            value = np.where(allowed & ~fault, passed(lose), bank_a[first, par])
            bank_a[np.nonzero(first)[0], par] = value
        return bank_a, bank_b

    def record_offers(self, seat: np.ndarray, a: np.ndarray, b: np.ndarray, caps: np.ndarray,
                      values: np.ndarray, w: np.ndarray) -> None:
        """Store, for rows just solved, the value of being offered each (t, m): take over or start afresh."""
        if self.offers is None:
            return
        k = self.kernel
        bust = self.bust_value(seat, a, b, w)
        bank = self.bank(seat, a, b, k.tpad_for(int(caps.max())) - 1, w)
        term = self.terminal_bank(seat, a, b)
        _, _, ta, tb = k.run(a, caps, bank, bust, keep_table=True, term_bank=term)
        goal = self.grid.goal
        full = ta + tb * bust[:, None, None]
        roll = k.rolling(full, bust)
        last = roll.shape[1] - 1
        t = np.arange(goal)
        rows = np.where(t > last, last - (t - last) % k.period, t)
        taken = np.maximum(values[:, None, None], roll[:, rows])
        opened = self.grid.opened(a)[:, None, None]
        self.offers[seat, a, b] = np.where(opened, taken, values[:, None, None])
