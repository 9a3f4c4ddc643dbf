"""The solved policy table of two players: every row (seat, a, b) of a solved result, computed by groups.

Where the numbers come from: the rows of one mover (seat and score ``a``)
against `GROUP` consecutive opponent scores ``b`` are one *group*, computed by
one kernel pass (`TurnKernel.run` with the bust values ``L = 1 - W[other, b,
a]`` and `GameModel.bank`) and `TurnKernel.roll_tables` on its values. A group
is computed when first read (an advice computes one), or all groups at once
(`PolicyTable.complete`, the cached table); either way by the same pass, so
every reader sees the same numbers to the last bit (a pass of other rows could
differ in the last bit). A last turn is read from the solver's `LastTurn`
tables (the chance that this turn ends with a bank that takes the victory).
"""

from __future__ import annotations

import threading
from typing import Any, Self

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.bank import UNIT
from ..work import working
from .cache import CorruptTable
from .choice import differs, layout_problem, sample_groups
from .kernel import TurnKernel, rolled
from .last_turn import LastTurn
from .rows import TurnRows, last_turn_rows

#: Rows (opponent scores) of one group: small enough for a quick advice, large enough for a quick table.
GROUP = 8


# -- the whole game -------------------------------------------------------------------------
def _layout(scores: np.ndarray, caps: np.ndarray) -> np.ndarray:
    """First layer of every row (mover g = seat * S + ia, row g * S + ib), cap + 2 layers per row."""
    s = len(scores)
    per_row = caps + 2
    base = np.concatenate([[0], np.cumsum(per_row * s)[:-1]])
    return np.asarray((base[:, None] + np.arange(s)[None, :] * per_row[:, None]).reshape(-1).astype(np.int64))


class LazyGroups:
    """Rows computed by groups when first read: a group is one mover's row block against `group_size`
    consecutive scores of the last opponent (`_group` computes it; `_source` is None once all are done)."""

    group_size = GROUP
    scores: np.ndarray
    cap: np.ndarray
    _source: Any
    _chunks: int
    _done: np.ndarray
    _lock: threading.Lock

    def _group(self, g: int) -> None:
        raise NotImplementedError

    def _ready(self, r: np.ndarray) -> None:
        """Make sure the rows `r` are computed."""
        if self._source is None:
            return
        s = len(self.scores)
        r = np.asarray(r)
        groups = (r // s) * self._chunks + (r % s) // self.group_size
        if self._done[groups].all():
            return
        wanted = np.zeros(len(self._done), dtype=bool)
        wanted[groups] = True  # not `np.unique`: it imports `numpy.ma`, a tenth of a warm advice's start-up
        with self._lock:
            for g in np.flatnonzero(wanted):
                if not self._done[g]:
                    self._group(int(g))
                    self._done[g] = True
            if self._done.all():
                self._source = None

    def complete(self) -> Self:
        """Compute every group now (for the simulator and the cache), reported as long work; returns the table."""
        if self._source is None:
            return self
        rules: Rules = getattr(self, "rules")
        size = int((self.cap + 2).sum()) * rules.dice
        with working(f"Building the policy table of '{rules.name}' ({len(self.cap):,} rows)", size=size) as update:
            todo = np.flatnonzero(~self._done)
            for i, g in enumerate(todo):
                with self._lock:
                    if not self._done[g]:
                        self._group(int(g))
                        self._done[g] = True
                update((i + 1) / len(todo))
            self._source = None
        return self


class PolicyTable(LazyGroups, TurnRows):
    """The solved policy of a two-player ruleset: every row (seat, a, b), computed by groups (module docstring)."""

    def __init__(self, rules: Rules, scores: np.ndarray, caps: np.ndarray, bust: np.ndarray,
                 bank: np.ndarray, roll: np.ndarray, plain: np.ndarray | None, predict: np.ndarray | None,
                 choices: tuple[int, ...], period: int, source: Any = None, exact_solve: bool = True,
                 assumptions: tuple[str, ...] = (), move: np.ndarray | None = None, keep: np.ndarray | None = None,
                 told: np.ndarray | None = None, take: np.ndarray | None = None):
        s = len(scores)
        self.scores = np.asarray(scores, dtype=np.int64)  # valid banked scores, units
        self.mover_caps = np.asarray(caps, dtype=np.int64)  # (seats * S,) cap of the mover seat * S + ia
        self.kinds = len(self.mover_caps) // s  # kinds of row per pair of scores (`locate.kind`)
        self.players = 2
        goal = rules.goal // UNIT
        self.index = np.full(goal, -1, dtype=np.int64)
        self.index[self.scores] = np.arange(s)
        super().__init__(rules, np.repeat(self.mover_caps, s), _layout(self.scores, self.mover_caps), bust,
                         bank, roll, plain, predict, choices, period, ready=source is None, move=move, keep=keep,
                         told=told, take=take)
        self.exact_solve = exact_solve
        self.assumptions = tuple(assumptions)
        self._source = source  # the SolveResult that computes missing groups (None: the table is complete)
        self._chunks = -(-s // GROUP)  # groups per mover
        self._done = np.full(len(self.mover_caps) * self._chunks, source is None)
        self._lock = threading.Lock()
        self._last: dict[tuple[int, int], TurnRows] = {}
        self._last_turn_model: Any = None

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def of(cls, result: Any) -> "PolicyTable":
        """The table of a solved `win` result; its groups are computed when first read."""
        if result.objective != "win":
            raise ValueError("the policy table needs a result of the 'win' objective")
        rules, model, kernel = result.rules, result.model, result.kernel
        w = result.tables
        scores = model.grid.scores
        s, seats = len(scores), w.shape[0]
        seat = np.repeat(np.arange(seats), s)
        caps = model.caps(seat, np.tile(scores, seats)).astype(np.int64)
        rows = int(((caps + 2) * s).sum())
        d = rules.dice
        pred = kernel.prediction
        graph = kernel.graph
        pid = np.arange(seats * s * s)
        seat_all, ia_all, ib_all = pid // (s * s), (pid // s) % s, pid % s
        bust = model.bust_value(seat_all, scores[ia_all], scores[ib_all], w)
        return cls(rules, scores, caps, bust, np.empty((rows, d)), np.empty((rows, d)),
                   None if pred is None else np.empty(rows),
                   None if pred is None else np.empty((rows, len(pred.choices))),
                   () if pred is None else tuple(int(c) * UNIT for c in pred.choices),
                   kernel.period, source=result, exact_solve=result.exact, assumptions=tuple(result.assumptions),
                   # zeros, not a fill: the memory is touched only where a group is computed (every read
                   # computes its group first, `_ready`), a tenth of a fresh advice's time at 25 MB for `standard`
                   move=np.zeros((rows, d), dtype=np.int8), keep=np.zeros((rows, len(graph.choosing)), dtype=np.int8),
                   told=None if pred is None else np.zeros((rows, len(pred.choosing)), dtype=np.int8),
                   take=None if result.offers is None else np.zeros((rows, d), dtype=bool))

    def _group(self, g: int) -> None:
        """Compute the rows of group g (a mover's seat and score, `GROUP` opponent scores): one kernel pass."""
        rows, cells, computed = self._group_arrays(g, self._source)
        for name, values in computed.items():
            getattr(self, name)[cells] = values
        self._values(rows)

    def _group_rows(self, g: int) -> np.ndarray:
        """The row ids of group g."""
        s = len(self.scores)
        mover, chunk = divmod(g, self._chunks)
        return mover * s + np.arange(chunk * GROUP, min((chunk + 1) * GROUP, s))

    def _group_arrays(self, g: int, result: Any) -> tuple[np.ndarray, slice, dict[str, np.ndarray]]:
        """(rows, cells, arrays) of group g computed from the solved `result` by one kernel pass: the
        values of `bank_v`, `roll_v` (and `plain_v`, `predict_v`) in those cells."""
        model, kernel = result.model, result.kernel
        w = result.tables
        s = len(self.scores)
        rows = self._group_rows(g)
        mover = int(rows[0] // s)
        seat, ia = divmod(mover, s)
        ib = rows - mover * s
        k = len(ib)
        cap = int(self.mover_caps[mover])
        n = cap + 2
        seats = np.full(k, seat)
        a = np.full(k, self.scores[ia])
        b = self.scores[ib]
        l0 = model.bust_value(seats, a, b, w)
        bank = model.bank(seats, a, b, n - 1, w)
        moves = kernel.move_table(k, cap)
        _, _, ta, tb = kernel.run(a, np.full(k, cap), bank, l0, keep_table=True,
                                  term_bank=model.terminal_bank(seats, a, b), moves=moves)
        value = ta[:, :n] + tb[:, :n] * l0[:, None, None]
        plain, predict = kernel.roll_tables(value, l0)
        start = int(self.offset[rows[0]])
        cells = slice(start, start + k * n)
        out = {"bank_v": (bank.a[:, :n] + bank.b[:, :n] * l0[:, None, None]).reshape(-1, self.dice),
               "roll_v": rolled(plain, predict).reshape(-1, self.dice), "move_v": moves.move[:, :n].reshape(-1, self.dice),
               "keep_v": moves.keep[:, :n].reshape(k * n, -1)}
        if self.told_v is not None:
            out["told_v"] = moves.told[:, :n].reshape(k * n, -1)
        if self.take_v is not None:  # the solve took over where rolling beat starting afresh (`record_offers`)
            t = np.minimum(np.arange(n), result.offers.shape[3] - 1)
            offered = result.offers[seat, self.scores[ia], b[:, None], t[None, :], :]  # (k, n, D)
            fresh = w[seat, self.scores[ia], b][:, None, None]
            out["take_v"] = (offered > fresh).reshape(-1, self.dice)
        if self.predict_v is not None and predict is not None and self.plain_v is not None:
            out["plain_v"] = plain[:, :, 1].reshape(-1)
            out["predict_v"] = predict.reshape(-1, predict.shape[-1])
        return rows, cells, out

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the complete table (what the cache stores)."""
        self.complete()
        assert self.move_v is not None and self.keep_v is not None
        out = {"scores": self.scores, "caps": self.mover_caps, "bust": self.bust, "bank": self.bank_v,
               "roll": self.roll_v, "move": self.move_v, "keep": self.keep_v,
               "choices": np.array(self.choices, dtype=np.int64)}
        if self.told_v is not None:
            out["told"] = self.told_v
        if self.take_v is not None:
            out["take"] = self.take_v
        if self.plain_v is not None and self.predict_v is not None:
            out.update(plain=self.plain_v, predict=self.predict_v)
        return out

    @classmethod
    def from_arrays(cls, rules: Rules, arrays: dict[str, np.ndarray], period: int, exact_solve: bool = True,
                    assumptions: tuple[str, ...] = (), check: Any = None) -> "PolicyTable":
        """A complete table from `arrays()` (read back from the cache).

        With `check` (the solved result the table was built from) the table is
        checked before it is used (`CorruptTable` says why): its layout (scores,
        caps, announcements, period, shapes) is the ruleset's, its bust values and
        every row's turn start are those of the result, and `SAMPLE_GROUPS`
        groups of rows recomputed by the kernel equal the stored ones.
        """
        fresh = None
        if check is not None:
            fresh = check.policy
            want: dict[str, Any] = {"scores": fresh.scores, "caps": fresh.mover_caps,
                                    "choices": np.array(fresh.choices, dtype=np.int64),
                                    "bust": fresh.bust.shape, "bank": fresh.bank_v.shape, "roll": fresh.roll_v.shape,
                                    "move": fresh.roll_v.shape, "keep": fresh.keep_v.shape,
                                    "told": () if fresh.told_v is None else fresh.told_v.shape,
                                    "take": () if fresh.take_v is None else fresh.take_v.shape,
                                    "plain": () if fresh.plain_v is None else fresh.plain_v.shape,
                                    "predict": () if fresh.predict_v is None else fresh.predict_v.shape}
            why = layout_problem(arrays, period, want, fresh.period)
            if why:
                raise CorruptTable(why)
        table = cls(rules, arrays["scores"], arrays["caps"], arrays["bust"], arrays["bank"], arrays["roll"],
                    arrays.get("plain"), arrays.get("predict"), tuple(int(c) for c in arrays["choices"]), period,
                    exact_solve=exact_solve, assumptions=assumptions, move=arrays["move"], keep=arrays["keep"],
                    told=arrays.get("told"), take=arrays.get("take"))
        if fresh is not None:
            why = table._sample_problem(fresh, check)
            if why:
                raise CorruptTable(why)
        return table

    def _sample_problem(self, fresh: "PolicyTable", result: Any) -> str | None:
        """Why this complete table is not `fresh` (the result's own lazy table): bust values, turn starts, and
        a sample of groups recomputed (None when it is)."""
        if differs(self.bust, fresh.bust):
            return "its bust values are not those of the solved table"
        s = len(self.scores)
        r = np.arange(len(self.cap))
        start = self.value(r, np.zeros_like(r), np.full(len(r), self.dice))
        if differs(start, result.tables[r // (s * s), self.scores[(r // s) % s], self.scores[r % s]], 1e-9):
            return "its turn starts are not the chances of the solved table"
        for g in sample_groups(len(fresh._done)):
            rows = self._group_rows(int(g))
            fresh._ready(rows)
            cells = slice(int(self.offset[rows[0]]), int(self.offset[rows[-1]] + self.cap[rows[-1]] + 2))
            for name in ("bank_v", "roll_v", "plain_v", "predict_v", "value_v", "move_v", "keep_v", "told_v",
                         "take_v"):
                mine, theirs = getattr(self, name), getattr(fresh, name)
                if mine is not None and differs(mine[cells], theirs[cells]):
                    return f"its rows of group {int(g)} differ from the kernel's ({name[:-2]})"
        return None

    # -- last turns ------------------------------------------------------------------------------
    def _last_model(self) -> Any:
        if self._last_turn_model is None:
            source = self._source
            model = getattr(source, "model", None) if source is not None else None
            last = model.last if model is not None else None
            self._last_turn_model = last if last is not None else LastTurn(self.rules, TurnKernel(self.rules))
        return self._last_turn_model

    def last_turn(self, a: int, target: int) -> tuple[TurnRows, int]:
        """(block, 0): my last turn of a last round with banked `a` against the opponent's final `target` (units)."""
        if not self.rules.last_round:
            raise CinqmilleError(f"'{self.rules.name}' has no last round")
        key = (int(a), int(target))
        block = self._last.get(key)
        if block is None:
            block = last_turn_rows(self.rules, self._last_model(), key[0], key[1])
            with self._lock:
                if len(self._last) > 256:
                    self._last.clear()
                self._last[key] = block
        return block, 0

    def last_turns(self, a: Any, target: Any) -> tuple[TurnRows, np.ndarray]:
        """(block, rows) of many last turns at once (banked `a` against `target`, units)."""
        pairs = np.stack(np.broadcast_arrays(np.asarray(a), np.asarray(target)), axis=-1)
        keys, inverse = np.unique(pairs.reshape(-1, 2), axis=0, return_inverse=True)
        block = TurnRows.concat([self.last_turn(int(x), int(y))[0] for x, y in keys])
        return block, inverse.reshape(pairs.shape[:-1])
