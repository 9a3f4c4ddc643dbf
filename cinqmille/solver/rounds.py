r"""The last round and take-over offers for three players and more: the driver and its tables.

The model is in `n_player`'s docstring (section "Last round and take-over"); this module solves it with the one
turn kernel, the one level solver (`level.solve_level`) and the two-player last turn (`LastTurn`, the last seat's
turn), adding:

* `taken_rolls`: the value, for every seat, of rolling from taken turn points ``(t, m)`` (a taker must roll
  first): the row's own turn shifted by ``t``, its bank at the taken state not allowed, one kernel pass;
* `Rounds.after_goal`: the chances ``F_j`` of the seats still to play their last turn (the rest goes to the
  leader), one kernel pass per row ``(target, scores)`` of each middle seat, the last seat's from `LastTurn`;
* `Rounds.level_banks`: a level's bank values: the next turn start, or the take-over offer made to an opened
  next player (`Rounds.record_offers` keeps it), or, for a bank that reaches the goal before the last seat, the
  last round it starts;
* `solve_rounds`: the levels of turn starts with a seat axis under `last_round` (seat 0 opens each round).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..rules import Rules
from ..rules.bank import SCORED
from .grid import ScoreGrid
from .kernel import BankTable, Pair, TurnKernel
from .keeps import NEG, TIE
from .last_turn import LastTurn
from .cycle import LevelTurns
from .level import guess_above, solve_level
from .n_player import Chasing, levels
from .seats import pass_dice
from .settle import Settled
from .two_player import LevelStats

#: Virtual rows (a row shifted by taken points) run in one kernel pass (their full tables are kept).
CHUNK = 1024


def taken_rolls(kernel: TurnKernel, a: np.ndarray, caps: np.ndarray, bank: BankTable, bust: np.ndarray,
                term: Pair | None, rows: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Stored seat values (V, D, k) of rolling from `t` taken turn points with m = 1..D dice in hand, banking
    there not allowed (a taker must roll before he banks), in the turn of row ``rows[v]`` of a kernel's rows
    (scores `a`, `caps`, per-seat `bank`, `term`) whose bust vector is ``bust[rows[v]]``.

    The turn from ``(t, m)`` is the row's turn shifted by ``t``: a row of score ``a + t`` (the same parity),
    cap ``cap - t`` (at least one layer under `reach`: past the cap it is terminal), the bank table from layer
    ``t`` on with no bank at its first layer; the kernel's table at its layer 0 is the roll, every seat's.
    """
    rows, t = np.asarray(rows, dtype=np.int64), np.asarray(t, dtype=np.int64)
    d, k = bank.a.shape[2], bank.a.shape[3]
    out = np.empty((len(rows), d, k))
    floor = 0 if kernel.exact else 1
    for lo in range(0, len(rows), CHUNK):
        r, tt = rows[lo:lo + CHUNK], t[lo:lo + CHUNK]
        cap = np.maximum(caps[r] - tt, floor)
        layers = np.minimum(tt[:, None] + np.arange(int(cap.max()) + 1)[None, :], bank.a.shape[1] - 1)
        ba, bb = bank.a[r[:, None], layers], bank.b[r[:, None], layers]
        ba[:, 0] = 0.0
        ba[:, 0, :, 0] = NEG
        bb[:, 0] = 0.0
        shifted = None if term is None else (term[0][r], term[1][r])
        _, _, ta, tb = kernel.run(a[r] + tt, cap, BankTable(ba, bb), bust[r, 0].copy(), keep_table=True,
                                  term_bank=shifted)
        out[lo:lo + CHUNK] = ta[:, 0] + tb[:, 0, :, None] * bust[r][:, None, :]
    return out


def terminal_of(bank: BankTable, a: np.ndarray, caps: np.ndarray, period: int) -> Pair:
    """The bank past each row's cap, by parity class (P, period, D, k), read from the bank table's layers
    ``cap .. cap + period - 1`` (where the bank values no longer depend on the turn points but by parity)."""
    p = len(a)
    par = np.arange(period)
    layer = caps[:, None] + (par[None, :] - (a + caps)[:, None]) % period  # the layer of each parity class
    rows = np.arange(p)[:, None]
    return bank.a[rows, layer], bank.b[rows, layer]


class Rounds:
    """The last round (seat axis, last turns) and take-over offers of one ruleset for `players` players."""

    def __init__(self, rules: Rules, players: int, kernel: TurnKernel, grid: ScoreGrid):
        self.rules, self.n, self.kernel, self.grid = rules, players, kernel, grid
        self.bank = grid.bank
        self.end = self.bank.end
        self.d = rules.dice
        self.kinds = players if rules.last_round else 1
        self.take_over = rules.take_over
        self.period = kernel.period
        self.last = LastTurn(rules, kernel) if rules.last_round else None
        #: the kernel of the last turns (without announcements under `prediction`, as `LastTurn`'s)
        self.last_kernel = kernel if self.last is None else self.last.kernel
        self.extension = self.last.reach_extension() if self.last is not None and not self.end.exact else 0
        #: under `reach`, targets from here on are alike (by parity): every chance has settled (`LastTurn`)
        self.high = grid.goal + self.extension
        self._fresh: list[dict[tuple[int, ...], np.ndarray]] = [{} for _ in range(players)]
        self._rolls: list[dict[tuple[int, ...], np.ndarray]] = [{} for _ in range(players)]

    # -- caps ----------------------------------------------------------------------------------
    def answered(self, kind: np.ndarray) -> np.ndarray:
        """Whether a mover of each row's seat, reaching the goal, is answered by last turns (`EndRules.last_turns`)."""
        return np.asarray(self.end.last_turns(np.asarray(kind), self.n) > 0) & (self.last is not None)

    def caps(self, kind: np.ndarray, a: np.ndarray) -> np.ndarray:
        """First turn total of each row from which its states are terminal: under `reach`, a mover whom last turns
        answer rolls on past the goal until the targets are alike (`high`)."""
        cap = self.grid.cap(a)
        if self.extension:
            cap = np.where(self.answered(kind), np.maximum(cap, self.high - a), cap)
        return np.asarray(cap)

    def _clamp(self, target: np.ndarray, t: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
        """Targets past `high` moved back by whole periods into ``high .. high + period - 1`` (and the taken points
        with them: a taker needs the same points on top of them): the chances there are the same."""
        if not self.extension:
            return target, t
        shift = np.maximum(target - self.high, 0) // self.period * self.period
        return target - shift, None if t is None else t - shift

    # -- the last round --------------------------------------------------------------------------
    def after_goal(self, j: int, target: np.ndarray, rest: np.ndarray, t: np.ndarray | None = None,
                   m: np.ndarray | None = None) -> np.ndarray:
        """``F_j``: the chances (P, n - j) of seats j .. n - 1 (absolute seats) when seat j is to play his last turn
        against `target` (units) with the scores `rest` (P, n - j) of seats j .. n - 1, offered the previous bank
        (`t` points, `m` dice) or not; the leader has the rest."""
        rest = np.asarray(rest, dtype=np.int64)
        target = np.broadcast_to(np.asarray(target, dtype=np.int64), (len(rest),)).copy()
        if j == self.n - 1:
            assert self.last is not None
            offer = self.take_over and t is not None
            return self.last.chance(rest[:, 0], target, t if offer else None, m if offer else None)[:, None]
        target, t = self._clamp(target, t)
        fresh = self._lookup(j, target, rest)
        if t is None or not self.take_over:
            return fresh
        t, m = np.asarray(t, dtype=np.int64), np.asarray(m, dtype=np.int64)
        b = rest[:, 0]
        can = np.asarray(self.bank.opened(b) & ~self.bank.overshoots(b, t))
        out = fresh.copy()
        if can.any():
            roll = self._lookup(j, target[can], rest[can], t[can])[np.arange(int(can.sum())), m[can] - 1]
            take = roll[:, 0] > fresh[can, 0] + TIE  # on a tie he starts afresh
            out[can] = np.where(take[:, None], roll, fresh[can])
        return out

    def _lookup(self, j: int, target: np.ndarray, rest: np.ndarray, t: np.ndarray | None = None) -> np.ndarray:
        """Seat j's last turns (fresh: (P, n - j); from taken points `t`: (P, D, n - j)), solved where missing."""
        memo = self._fresh[j] if t is None else self._rolls[j]
        keys = np.column_stack([target, rest] + ([] if t is None else [t]))
        unique, back = np.unique(keys, axis=0, return_inverse=True)
        missing = np.array([i for i, key in enumerate(map(tuple, unique.tolist())) if key not in memo], dtype=np.int64)
        for lo in range(0, len(missing), CHUNK):
            part = unique[missing[lo:lo + CHUNK]]
            values = self._solve_last(j, part[:, 0], part[:, 1:self.n - j + 1],
                                      None if t is None else part[:, -1])
            for key, value in zip(map(tuple, part.tolist()), values):
                memo[key] = value
        return np.stack([memo[key] for key in map(tuple, unique.tolist())])[back.reshape(-1)]

    def _solve_last(self, j: int, target: np.ndarray, rest: np.ndarray, t: np.ndarray | None) -> np.ndarray:
        """One kernel pass over the last turns of seat j (a middle seat): fresh, or rolling from taken `t`."""
        kernel = self.last_kernel
        b = rest[:, 0]
        caps = self._last_caps(b)
        bank = self._last_banks(j, target, rest, caps)
        term = terminal_of(bank, b, caps, self.period) if not self.end.exact else None
        bust = np.zeros((len(b), self.n - j))
        bust[:, 1:] = self.after_goal(j + 1, target, rest[:, 1:])
        if t is None:
            big_a, big_b, _, _ = kernel.run(b, caps, bank, np.zeros(len(b)), term_bank=term)
            return np.asarray(big_a + big_b[:, None] * bust)
        return taken_rolls(kernel, b, caps, bank, bust, term, np.arange(len(b)), t)

    def _last_caps(self, b: np.ndarray) -> np.ndarray:
        """Caps of last turns on banked `b`: the goal's (exact); under `reach`, past every target up to `high` (there
        every target is alike by parity: the banks no longer depend on the turn points)."""
        caps = np.asarray(self.grid.cap(b))
        return np.maximum(caps, self.high + self.period - b) if self.extension else caps

    def _last_banks(self, j: int, target: np.ndarray, rest: np.ndarray, caps: np.ndarray) -> BankTable:
        """Bank values (P, cap + period + 1, D, n - j) of seat j's last turns: a bank that takes the victory hands the
        last turns on (`after_goal`, with his bank offered); one that would, but is a fault, counts as a bust; no
        other bank is made (it is worth nothing to him)."""
        br, d, k = self.bank, self.d, self.n - j
        b = rest[:, 0]
        t = np.arange(int(caps.max()) + self.period + 1)[None, :]
        kind, new, _ = br.outcome(b[:, None], t)
        can = np.asarray(br.allowed(b[:, None], t) & ~br.overshoots(b[:, None], t)
                         & self.end.beats(b[:, None] + t, target[:, None]))
        a_val = np.zeros(can.shape + (d, k))
        a_val[..., 0] = NEG
        b_val = np.zeros(can.shape + (d,))
        fault = can & (kind != SCORED)
        a_val[fault] = 0.0
        b_val[fault] = 1.0
        p, tt = np.nonzero(can & (kind == SCORED))
        if len(p):
            m = np.arange(1, d + 1)
            ps, ts, ms = np.repeat(p, d), np.repeat(tt, d), np.tile(m, len(p))
            won = self.after_goal(j + 1, self.end.target(b[ps] + ts), np.repeat(rest[p, 1:], d, axis=0), ts, ms)
            a_val[ps, ts, ms - 1, 0] = 1.0 - won.sum(axis=1)
            a_val[ps, ts, ms - 1, 1:] = won
        hand = ~np.asarray(br.hand_ok(np.arange(1, d + 1)), dtype=bool)
        a_val[:, :, hand] = 0.0
        a_val[:, :, hand, 0] = NEG
        b_val[:, :, hand] = 0.0
        return BankTable(a_val, b_val)

    def goal_values(self, kind: int, rows: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray:
        """Stored seat values (V, n - 1), the mover first, of a bank of `t` points with `m` dice that takes the
        mover of seat `kind` (scores `rows`, playing order from him) to the goal and starts the last round."""
        a = rows[:, 0]
        later = self.n - 1 - kind  # the seats still to play, right after him in playing order
        won = self.after_goal(kind + 1, self.end.target(a + t), rows[:, 1:later + 1], t, m)
        out = np.zeros((len(a), self.n))
        out[:, 0] = 1.0 - won.sum(axis=1)
        out[:, 1:later + 1] = won
        return out[:, : self.n - 1]

    # -- readers: one turn's inputs --------------------------------------------------------------------
    def codes(self, tmax: int) -> np.ndarray:
        """`ScoreGrid.bank_codes` of every score up to at least `tmax` (kept)."""
        found = self.__dict__.get("_codes")
        if found is None or found.shape[1] <= tmax:
            found = self.grid.bank_codes(np.arange(self.grid.goal), tmax)
            self.__dict__["_codes"] = found
        return np.asarray(found)

    def seat_inputs(self, seat: int, mover: np.ndarray, rest: np.ndarray, tables: np.ndarray,
                    offers: np.ndarray | None) -> tuple[np.ndarray, BankTable, Pair | None, np.ndarray]:
        """(caps, banks, past the caps, bust vectors) of the turns of a mover of `seat` with banked `mover` against
        each row of `rest` (the others in playing order), read from a solved table (`tables`, a seat axis first)."""
        kind = np.full(len(mover), seat if self.kinds > 1 else 0, dtype=np.int64)
        rows = np.column_stack([mover, rest]).astype(np.int64)
        caps = self.caps(kind, rows[:, 0])
        bank, term = self.level_banks(kind, rows, caps, tables, offers, self.codes(int(caps.max()) + self.period))
        nxt = (int(kind[0]) + 1) % self.kinds
        bust = pass_dice(tables[nxt][tuple(rows[:, 1:].T) + (rows[:, 0],)])
        return caps, bank, term, bust

    def last_inputs(self, j: int, target: int, rest: np.ndarray) -> tuple[np.ndarray, BankTable, Pair | None,
                                                                          np.ndarray]:
        """(caps, banks, past the caps, bust vectors) of the last turn of seat j (a middle seat) against
        `target` (units), the scores of seats j .. n - 1 in each row of `rest` (`after_goal`'s turn)."""
        rest = np.asarray(rest, dtype=np.int64)
        target_rows = np.full(len(rest), target, dtype=np.int64)
        target_rows, _ = self._clamp(target_rows, None)
        b = rest[:, 0]
        caps = self._last_caps(b)
        bank = self._last_banks(j, target_rows, rest, caps)
        term = terminal_of(bank, b, caps, self.period) if not self.end.exact else None
        bust = np.zeros((len(b), self.n - j))
        bust[:, 1:] = self.after_goal(j + 1, target_rows, rest[:, 1:])
        return caps, bank, term, bust

    # -- a level of turn starts -------------------------------------------------------------------
    def level_banks(self, kind: np.ndarray, rows: np.ndarray, caps: np.ndarray, w: np.ndarray,
                    offers: np.ndarray | None, codes: np.ndarray) -> tuple[BankTable, Pair | None]:
        """The bank values (and past the caps, under `reach` with a last round) of a level's rows (seat `kind`,
        scores in playing order from the mover): the next turn start (`w`, seat axis first), or the offer an
        opened next player is made (`offers`), or the last round a bank that reaches the goal starts."""
        from .compiled import BANK_WIN  # lazy: Numba loads when a pass first runs, not for a table read

        n, d = self.n, self.d
        tmax = int(caps.max()) + self.period
        p = len(rows)
        a_val = np.empty((p, tmax + 1, d, n - 1))
        b_val = np.empty((p, tmax + 1, d))
        for s in np.unique(kind):
            sel = np.nonzero(kind == s)[0]
            nxt = (int(s) + 1) % self.kinds
            a, others = rows[sel, 0], rows[sel, 1:]
            code = codes[:, : tmax + 1]
            by_position = w[nxt][np.ix_(*([self.grid.scores] * n))]  # `ScoreGrid.start_banks` reads positions
            table = self.grid.start_banks(a, others, tmax, by_position).table()
            code = code[a]
            if offers is not None:
                i, tt, mm = np.nonzero(code >= 0)
                opened = np.asarray(self.bank.opened(others[i, 0]), dtype=bool)
                i, tt, mm = i[opened], tt[opened], mm[opened]
                at = tuple(others[i].T) + (code[i, tt, mm], tt, mm)
                table.a[i, tt, mm] = pass_dice(offers[nxt][at])
            if self.answered(np.asarray(s)):
                i, tt, mm = np.nonzero(code == BANK_WIN)
                table.a[i, tt, mm] = self.goal_values(int(s), rows[sel][i], tt, mm + 1)
            a_val[sel], b_val[sel] = table.a, table.b
        bank = BankTable(a_val, b_val)
        if self.end.exact or self.last is None:
            return bank, None
        term_a, term_b = (np.array(x) for x in terminal_of(bank, rows[:, 0], caps, self.period))
        plain = ~self.answered(kind)
        if plain.any():  # past the cap every bank wins (or is a fault, or a full hand to roll)
            base_a, base_b = self.kernel.terminal_bank(int(plain.sum()))
            term_a[plain] = 0.0
            term_a[plain, ..., 0] = base_a
            term_b[plain] = base_b
        return bank, (term_a, term_b)

    def record_offers(self, kind: np.ndarray, rows: np.ndarray, caps: np.ndarray, bank: BankTable,
                      term: Pair | None, succ: np.ndarray, values: np.ndarray, offers: np.ndarray) -> None:
        """Store, for a level's rows just solved, the value of being offered each (t, m): the turn start, or
        rolling from the taken points (an opened mover takes over when that is better for him by more than the
        tie; under `exact` not past the goal)."""
        g, d = self.grid.goal, self.d
        p = len(rows)
        bust = pass_dice(values[succ])
        a = rows[:, 0]
        here = (kind,) + tuple(rows.T)
        offers[here] = values[:, None, None, :]
        t = np.arange(1, g)
        ok = (np.asarray(self.bank.opened(a), dtype=bool)[:, None]
              & ~np.asarray(self.bank.overshoots(a[:, None], t[None, :]), dtype=bool))
        r, ti = np.nonzero(ok)
        if not len(r):
            return
        roll = taken_rolls(self.kernel, a, caps, bank, bust, term, r, t[ti])  # (V, D, k)
        take = roll[..., 0] > values[r, None, 0] + TIE
        chosen = np.where(take[..., None], roll, values[r, None, :])
        offers[(kind[r],) + tuple(rows[r].T) + (t[ti],)] = chosen


def round_levels(grid: ScoreGrid, players: int, rounds: Rounds) -> list[tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                               np.ndarray]]:
    """Every level of turn starts with its seats (`Rounds.kinds`): (seat, scores, caps, succ) sorted by cap
    descending, highest sum first; a scoreless turn passes the dice to the next seat, the scores rotated."""
    out = []
    kinds = rounds.kinds
    for _, level in levels(grid, players):
        p = len(level.rows)
        rows = np.tile(level.rows, (kinds, 1))
        kind = np.repeat(np.arange(kinds), p)
        succ = ((kind + 1) % kinds) * p + np.tile(level.succ, kinds)
        caps = rounds.caps(kind, rows[:, 0])
        order = np.argsort(-caps, kind="stable")
        back = np.empty_like(order)
        back[order] = np.arange(len(order))
        out.append((kind[order], rows[order], caps[order], back[succ[order]]))
    return out


def rounds_solved(rules: Rules) -> bool:
    """Whether a ruleset's n-player table is solved here (`solve_rounds`) rather than by `n_player.solve_players`:
    under `last_round` or `take_over`."""
    return bool(rules.last_round or rules.take_over)


def solve_rounds(rules: Rules, players: int, tol: float = 1e-12, progress: Callable[[float], None] | None = None,
                 kernel: TurnKernel | None = None, pending: tuple[int, ...] = (),
                 ) -> tuple[np.ndarray, np.ndarray | None, LevelStats, Chasing]:
    """Turn-start seat values ``W[seat, scores..., j]`` (a seat axis under `last_round` only; units of 50, NaN for
    impossible scores), the take-over offers ``O[seat, scores..., t, m - 1, j]`` (None without `take_over`), the
    solve's figures and the cycles without a stationary policy (as `n_player.solve_players` gives them).
    `pending`: starting scores below the opening (units; `solver.result`), solved with the others."""
    grid = ScoreGrid.of(rules, pending)
    kernel = kernel or TurnKernel(rules)
    rounds = Rounds(rules, players, kernel, grid)
    g, d, k = grid.goal, rules.dice, players - 1
    w = np.full((rounds.kinds,) + (g,) * players + (k,), np.nan)
    offers = np.full((rounds.kinds,) + (g,) * players + (g, d, k), np.nan) if rules.take_over else None
    todo = round_levels(grid, players, rounds)
    top = max(int(caps.max()) for _, _, caps, _ in todo) + rounds.period
    codes = grid.bank_codes(np.arange(g), top)
    passes = states = 0
    worst = 0.0
    chasing: list[np.ndarray] = []
    cycles: list[tuple[np.ndarray, Settled]] = []
    for i, (kind, rows, caps, succ) in enumerate(todo):
        bank, term = rounds.level_banks(kind, rows, caps, w, offers, codes)
        guess = np.empty((len(rows), k))
        for s in np.unique(kind):
            sel = kind == s
            guess[sel] = guess_above(grid.scores, g, rows[sel], w[s])
        turns = LevelTurns(rows[:, 0], caps, bank, succ, np.zeros((len(rows), k)), guess, term)
        solved = solve_level(kernel, turns, tol)
        w[(kind,) + tuple(rows.T)] = solved.values
        if offers is not None:
            rounds.record_offers(kind, rows, caps, bank, term, succ, solved.values, offers)
        if len(solved.unsettled):
            chasing.append(rows[solved.unsettled])
            cycles.extend((rows[record.rows], record) for record in solved.settled)
        passes += solved.passes
        states += int((caps + 1).sum()) * d
        worst = max(worst, solved.residual)
        if progress is not None:
            progress((i + 1) / len(todo))
    stats = LevelStats(levels=len(todo), passes=passes, states=states, residual=worst)
    found = np.concatenate(chasing) if chasing else np.zeros((0, players), dtype=np.int64)
    return (w if rules.last_round else w[0]), offers, stats, Chasing(found, tuple(cycles))
