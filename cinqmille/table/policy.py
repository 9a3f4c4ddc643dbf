"""The solved policy table, for any number of seats: every row of a solved `win` result, computed by groups.

Rows
====
A table of ``n`` seats has a row per kind and tuple of banked scores: row
``kind * S^n + ravel(i_mover, i_1, ..., i_{n-1})`` (``i`` the index of a score
among the ruleset's possible ones, the opponents in playing order from the
mover; `locate` reads a position there). The kind is what a two-player row
knows besides the scores (the seat under `last_round`, the scoreless-turn
counters under a counted `zero_turns`); a larger table has one kind. Row ``r``
owns ``cap + 2`` turn layers of its mover (`TurnRows`).

What a table holds
==================
Every state's decisions as the solve's pass took them (σ, `kernel.Decisions`):
the move (0 bank, 1 roll, 2 + j announce), the keep of every roll class, after
a right announcement too, and (two players) the take-over of every offer. Of
the values, a two-player table holds every option's (`bank`, `roll`, and under
`prediction` rolling plainly and each announcement), so that the advice and the
export read them; a larger table holds each state's value and the announcement
taken before the last two dice (a game visits thousands of rows, and the
table's size grows as ``S^n``): the advice asks one kernel pass for the options
of its one row (`options`).

Where the numbers come from
===========================
A *group* is the rows of one kind, mover score and first ``n - 2`` opponents
against `group_size` consecutive scores of the last opponent, computed by one
kernel pass (two players: `TurnKernel.run` with the bust values
``L = 1 - W[other, b, a]`` and `GameModel.bank`; more: `seat_rows`,
the bust vector ``P V(others, a)``), when first read, or all groups at once
(`complete`, the cached table); either way by the same pass, so that every
reader sees the same numbers to the last bit. A last turn of a last round is a
block of its own (`last_turn`). Take-over offers are not in the n-player table
(solved as if the rule were off there); it declines them.

The table is written to the cache by `table.load.policy_table` (`arrays`,
one file format for every number of seats) and read back by `from_arrays`,
checked against the solved result (layout, turn starts, a sample of groups
recomputed by the kernel).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Self

import numpy as np

from ..errors import CinqmilleError
from .position import PositionError
from ..rules import Rules
from ..rules.end import UNIT
from ..work import working
from ..solver.cache import CorruptTable
from ..solver.choice import differs, layout_problem, sample_groups
from ..solver.kernel import BankTable, Decisions, TurnKernel
from ..solver.keeps import TIE, rolled
from ..solver.last_turn import LastTurn
from ..solver.passes import pair_pass, seat_pass
from ..solver.result import SolveResult
from .rows import TurnRows, last_turn_rows

#: Rows (opponent scores) of one group of a two-player table: small enough for a quick advice, large enough for a
#: quick table.
GROUP = 8
#: Rows of one group of a larger table: every score of the last opponent for the rulesets solved for three
#: players or more (larger passes cost less per row).
SEATS_GROUP = 128
#: The arrays a table file may hold (which ones: `table.load.table_spec`).
FILE_ARRAYS = ("scores", "caps", "choices", "move", "keep", "told", "bust", "bank", "roll", "plain", "predict",
               "take", "value", "announce")
#: Blocks kept per table (last turns, the options of an n-player row).
KEPT_BLOCKS = 256


def layers(scores: np.ndarray, caps: np.ndarray, players: int) -> int:
    """Turn layers of a whole table (every row's ``cap + 2``; `caps` per kind and mover score)."""
    return int(((np.asarray(caps) + 2) * len(scores) ** (players - 1)).sum())


class PolicyTable(TurnRows):
    """The solved policy of a ruleset for `players` seats: every row, computed by groups (module docstring)."""

    def __init__(self, rules: Rules, players: int, arrays: Mapping[str, np.ndarray], period: int,
                 source: Any = None, exact_solve: bool = True, assumptions: tuple[str, ...] = ()):
        self.players = players
        self.scores = np.asarray(arrays["scores"], dtype=np.int64)  # valid banked scores, units
        self.mover_caps = np.asarray(arrays["caps"], dtype=np.int64)  # (kinds * S,) cap of kind * S + ia
        s = len(self.scores)
        self.kinds = len(self.mover_caps) // s  # kinds of row per tuple of scores (`locate.kind`)
        self.index = np.full(rules.goal // UNIT, -1, dtype=np.int64)
        self.index[self.scores] = np.arange(s)
        per = s ** (players - 1)  # rows of one kind and mover score
        base = np.concatenate([[0], np.cumsum((self.mover_caps + 2) * per)[:-1]]).astype(np.int64)
        offset = (base[:, None] + np.arange(per)[None, :] * (self.mover_caps + 2)[:, None]).reshape(-1)
        cap = np.repeat(self.mover_caps, per)
        self.options_held = "bank" in arrays  # every option's value (two players), else each state's
        self.group_size = GROUP if players == 2 else SEATS_GROUP
        d = rules.dice
        self.announce_v = arrays.get("announce")  # (layers,) int8: index into (0,) + choices, n players
        choices = tuple(int(c) for c in arrays["choices"])
        if self.options_held:
            super().__init__(rules, cap, offset, arrays["bust"], arrays["bank"], arrays["roll"], arrays.get("plain"),
                             arrays.get("predict"), choices, period, ready=source is None, move=arrays["move"],
                             keep=arrays["keep"], told=arrays.get("told"), take=arrays.get("take"))
        else:
            super().__init__(rules, cap, offset, np.zeros(len(cap)), np.empty((0, d)), np.empty((0, d)), None, None,
                             choices, period, ready=False, tie=TIE, move=arrays["move"], keep=arrays["keep"],
                             told=arrays.get("told"))
            self.value_v = arrays["value"]
        self.exact_solve = exact_solve
        self.assumptions = tuple(assumptions)
        self._source = source  # the SolveResult that computes missing groups (None: the table is complete)
        self.result = source  # the solved result the table was made from (None: read back from a file)
        self._chunks = -(-s // self.group_size)  # groups per kind, mover and first n - 2 opponents
        self._done = np.full(len(cap) // s * self._chunks, source is None)
        self._lock = threading.Lock()
        self._blocks: dict[tuple[Any, ...], TurnRows] = {}
        self._last_turn_model: Any = None

    # -- building ----------------------------------------------------------------------------
    @classmethod
    def of(cls, result: Any) -> Self:
        """The table of a solved `win` result; its groups are computed when first read."""
        if result.objective != "win":
            raise ValueError("the policy table needs a result of the 'win' objective")
        rules, kernel = result.rules, result.kernel
        pred, graph = kernel.prediction, kernel.graph
        d, n = rules.dice, result.players
        if n == 2:
            model = result.model
            scores = model.grid.scores
            s, seats = len(scores), result.tables.shape[0]
            seat = np.repeat(np.arange(seats), s)
            caps = model.caps(seat, np.tile(scores, seats)).astype(np.int64)
        else:
            scores = result.grid.scores.astype(np.int64)
            caps = result.grid.cap(scores).astype(np.int64)
        rows = layers(scores, caps, n)
        arrays: dict[str, np.ndarray] = {
            "scores": np.asarray(scores, dtype=np.int64), "caps": caps,
            "choices": np.array(() if pred is None else tuple(int(c) * UNIT for c in pred.choices), dtype=np.int64),
            # zeros, not a fill: the memory is touched only where a group is computed (every read computes its
            # group first, `_ready`), a tenth of a fresh advice's time at 25 MB for `standard`
            "keep": np.zeros((rows, len(graph.choosing)), dtype=np.int8)}
        if pred is not None:
            arrays["told"] = np.zeros((rows, len(pred.choosing)), dtype=np.int8)
        if n == 2:
            s = len(scores)
            pid = np.arange(len(caps) * s)
            kind, ia, ib = pid // (s * s), (pid // s) % s, pid % s
            arrays.update(bust=result.model.bust_value(kind, scores[ia], scores[ib], result.tables),
                          bank=np.empty((rows, d)), roll=np.empty((rows, d)),
                          move=np.zeros((rows, d), dtype=np.int8))
            if pred is not None:
                arrays.update(plain=np.empty(rows), predict=np.empty((rows, len(pred.choices))))
            if result.offers is not None:
                arrays["take"] = np.zeros((rows, d), dtype=bool)
        else:
            arrays.update(value=np.empty((rows, d)), move=np.empty((rows, d), dtype=np.int8))
            if pred is not None:
                arrays["announce"] = np.empty(rows, dtype=np.int8)
        return cls(rules, n, arrays, kernel.period, source=result, exact_solve=result.exact,
                   assumptions=tuple(result.assumptions))

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
        size = int((self.cap + 2).sum()) * self.dice
        with working(f"Building the policy table of '{self.rules.name}' ({len(self.cap):,} rows)",
                     size=size) as update:
            todo = np.flatnonzero(~self._done)
            for i, g in enumerate(todo):
                with self._lock:
                    if not self._done[g]:
                        self._group(int(g))
                        self._done[g] = True
                update((i + 1) / len(todo))
            self._source = None
        return self

    def _group(self, g: int) -> None:
        """Compute the rows of group g: one kernel pass."""
        rows, cells, computed = self._group_arrays(g, self._source)
        for name, values in computed.items():
            getattr(self, name)[cells] = values
        if self.options_held:
            self._values(rows)

    def _group_rows(self, g: int) -> np.ndarray:
        """The row ids of group g."""
        s = len(self.scores)
        lead, chunk = divmod(g, self._chunks)
        return np.asarray(lead * s + np.arange(chunk * self.group_size, min((chunk + 1) * self.group_size, s)))

    def _group_arrays(self, g: int, result: Any) -> tuple[np.ndarray, slice, dict[str, np.ndarray]]:
        """(rows, cells, arrays) of group g computed from the solved `result` by one kernel pass: the table's
        arrays (by attribute name) in those cells."""
        if self.players == 2:
            return self._pair_arrays(g, result)
        return self._seats_arrays(g, result)

    def _pair_arrays(self, g: int, result: Any) -> tuple[np.ndarray, slice, dict[str, np.ndarray]]:
        """`_group_arrays` of two players: `TurnKernel.run` with the model's bust and bank values."""
        kernel, w = result.kernel, result.tables
        s = len(self.scores)
        rows = self._group_rows(g)
        mover = int(rows[0] // s)
        seat, ia = divmod(mover, s)
        ib = rows - mover * s
        k = len(ib)
        cap = int(self.mover_caps[mover])
        b = self.scores[ib]
        run = pair_pass(result, seat, int(self.scores[ia]), b, cap)
        n, l0, bank, moves = run.layers, run.bust, run.bank, run.moves
        value = run.a[:, :n] + run.b[:, :n] * l0[:, None, None]
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

    def _seats_arrays(self, g: int, result: Any) -> tuple[np.ndarray, slice, dict[str, np.ndarray]]:
        """`_group_arrays` of three players or more: `seat_rows`, the mover's values and the pass's decisions."""
        s = len(self.scores)
        rows = self._group_rows(g)
        pair = int(rows[0] // s)
        ia, *first = (int(i) for i in np.unravel_index(pair, (s,) * (self.players - 1)))
        ic = rows - pair * s
        others = np.stack([np.full(len(ic), self.scores[ib]) for ib in first] + [self.scores[ic]], axis=1)
        block = seat_rows(result, int(self.scores[ia]), others)
        n = int(self.mover_caps[ia]) + 2
        start = int(self.offset[rows[0]])
        k, d = len(ic), self.dice
        local = np.repeat(np.arange(k), n * d).reshape(k, n, d)
        t = np.broadcast_to(np.arange(n)[None, :, None], (k, n, d))
        m = np.broadcast_to(np.arange(1, d + 1)[None, None, :], (k, n, d))
        assert block.keep_v is not None
        out: dict[str, np.ndarray] = {"value_v": block.value_v.reshape(-1, d),
                                      "move_v": block.move(local, t, m).reshape(-1, d), "keep_v": block.keep_v}
        if block.told_v is not None:
            out["told_v"] = block.told_v
        if self.announce_v is not None:
            j = block.announcement(local[:, :, 0], t[:, :, 0])
            out["announce_v"] = np.searchsorted(np.array((0,) + self.choices), j).reshape(-1)
        return rows, slice(start, start + k * n), out

    # -- the file ----------------------------------------------------------------------------
    def _named(self) -> dict[str, np.ndarray]:
        """The table's arrays by the file's names, as they are (complete or not)."""
        assert self.move_v is not None and self.keep_v is not None
        out = {"scores": self.scores, "caps": self.mover_caps, "move": self.move_v, "keep": self.keep_v,
               "choices": np.array(self.choices, dtype=np.int64)}
        if self.options_held:
            out.update(bust=self.bust, bank=self.bank_v, roll=self.roll_v)
        else:
            out["value"] = self.value_v
        optional = {"told": self.told_v, "take": self.take_v, "plain": self.plain_v, "predict": self.predict_v,
                    "announce": self.announce_v}
        out.update({name: x for name, x in optional.items() if x is not None})
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the complete table, by the file's names (what the cache stores)."""
        return self.complete()._named()

    @classmethod
    def from_arrays(cls, rules: Rules, players: int, arrays: Mapping[str, np.ndarray], period: int,
                    exact_solve: bool = True, assumptions: tuple[str, ...] = (), check: Any = None) -> Self:
        """A complete table from `arrays()` (read back from the cache).

        With `check` (the solved result the table was built from) the table is
        checked before it is used (`CorruptTable` says why): its layout (scores,
        caps, announcements, period, shapes) is the ruleset's, its bust values and
        every row's turn start are those of the result, and `SAMPLE_GROUPS`
        groups of rows recomputed by the kernel equal the stored ones.
        """
        fresh = None
        if check is not None:
            fresh = policy_of(check)  # the result's own table, computed by groups when read
            want: dict[str, Any] = {name: () for name in FILE_ARRAYS}
            want.update({name: x if name in ("scores", "caps", "choices") else x.shape
                         for name, x in fresh._named().items()})
            why = layout_problem(dict(arrays), period, want, fresh.period)
            if why:
                raise CorruptTable(why)
        table = cls(rules, players, arrays, period, exact_solve=exact_solve, assumptions=assumptions)
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
        if self.players == 2:
            want = result.tables[r // (s * s), self.scores[(r // s) % s], self.scores[r % s]]
        else:
            idx = np.stack(np.broadcast_arrays(*(self.scores[i]
                                                 for i in np.unravel_index(r, (s,) * self.players))), axis=-1)
            want = result.seat_values(idx)[..., 0]  # seat 0's rows
        if differs(start, want, 1e-9):
            return "its turn starts are not the chances of the solved table"
        for g in sample_groups(len(fresh._done)):
            if self.options_held:  # the lazy table's own rows (and so its values of the states)
                rows = fresh._group_rows(int(g))
                fresh._ready(rows)
                cells = slice(int(self.offset[rows[0]]), int(self.offset[rows[-1]] + self.cap[rows[-1]] + 2))
                names = ("bank_v", "roll_v", "plain_v", "predict_v", "value_v", "move_v", "keep_v", "told_v", "take_v")
                computed = {name: getattr(fresh, name)[cells] for name in names if getattr(fresh, name) is not None}
            else:  # one pass, not kept (a larger table's rows are many)
                rows, cells, computed = fresh._group_arrays(int(g), result)
            for name, values in computed.items():
                mine = getattr(self, name)[cells]
                if (differs(mine, values) if mine.dtype.kind == "f" else not np.array_equal(mine, values)):
                    return f"its rows of group {int(g)} differ from the kernel's ({name[:-2]})"
        return None

    # -- the decisions where the table holds each state's value only --------------------------
    def announcement(self, r: Any, t: Any) -> np.ndarray:
        """Points announced before rolling the last two dice, 0 to roll them plainly (the pass's)."""
        if self.announce_v is None:
            return super().announcement(r, t)
        points: np.ndarray = np.array((0,) + self.choices, dtype=np.int64)[np.take(self.announce_v,
                                                                                    self.layer(r, t))]
        return points

    def takes_over(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Take over the offered turn (True) or start afresh; never at a table of three or more (take-over offers
        are solved as if the rule were off there)."""
        if self.players > 2:
            return np.zeros(np.broadcast(np.asarray(r), np.asarray(t), np.asarray(m)).shape, dtype=bool)
        return super().takes_over(r, t, m)

    def moves(self, r: Any, t: Any, m: Any) -> np.ndarray:
        if not self.options_held:
            raise CinqmilleError("this table keeps each state's value, not each option's: read `options`")
        return super().moves(r, t, m)

    # -- blocks beside the table: last turns, the options of one row ------------------------------
    def _kept(self, key: tuple[Any, ...], make: Any) -> TurnRows:
        block = self._blocks.get(key)
        if block is None:
            block = make()
            with self._lock:
                if len(self._blocks) > KEPT_BLOCKS:
                    self._blocks.clear()
                self._blocks[key] = block
        return block

    def _last_model(self) -> Any:
        if self._last_turn_model is None:
            model = getattr(self.result, "model", None) if self.result is not None else None
            last = model.last if model is not None else None
            self._last_turn_model = last if last is not None else LastTurn(self.rules, TurnKernel(self.rules))
        return self._last_turn_model

    def last_turn(self, a: int, target: int, seat: int = 0, later: tuple[int, ...] = ()) -> tuple[TurnRows, int]:
        """(block, 0): my last turn of a last round with banked `a` against the final `target` (units). At a table
        of three or more, the mover of `seat` with the scores `later` (units) of the seats still to play after
        him, from the solved result (`last_rows`)."""
        if not self.rules.last_round:
            raise CinqmilleError(f"'{self.rules.name}' has no last round")
        if self.players == 2:
            return self._kept(("last", int(a), int(target)),
                              lambda: last_turn_rows(self.rules, self._last_model(), int(a), int(target))), 0
        if not self._possible((a,) + tuple(later)):
            raise PositionError("a banked score that cannot occur under this ruleset")
        result = self._solved()
        return self._kept(("last", seat, int(a), int(target)) + tuple(later),
                          lambda: last_rows(result, seat, int(a), int(target), tuple(later))), 0

    def last_turns(self, a: Any, target: Any) -> tuple[TurnRows, np.ndarray]:
        """(block, rows) of many last turns at once (banked `a` against `target`, units; two players)."""
        pairs = np.stack(np.broadcast_arrays(np.asarray(a), np.asarray(target)), axis=-1)
        keys, inverse = np.unique(pairs.reshape(-1, 2), axis=0, return_inverse=True)
        block = TurnRows.concat([self.last_turn(int(x), int(y))[0] for x, y in keys])
        return block, inverse.reshape(pairs.shape[:-1])

    def options(self, scores: tuple[int, ...], seat: int = 0) -> tuple[TurnRows, int]:
        """(block, 0) holding every option's value at the turn of a mover of `seat` with the banked `scores` (units:
        the mover, then the opponents the table reads), where the table holds each state's value only: one
        kernel pass of the solved result for that row (`seat_rows`), kept."""
        if not self._possible(scores):
            raise PositionError("a banked score that cannot occur under this ruleset")
        result = self._solved()
        return self._kept((seat,) + tuple(int(x) for x in scores),
                          lambda: seat_rows(result, int(scores[0]), np.array([scores[1:]]), seat)), 0

    def _possible(self, scores: tuple[int, ...]) -> bool:
        return all(0 <= x < len(self.index) and self.index[x] >= 0 for x in scores)

    def _solved(self) -> Any:
        if self.result is None:
            raise CinqmilleError("the options of a larger table's row are computed from its solve: read the "
                                 "solved result's table")
        return self.result


# -- blocks of rows of one kernel pass with seat values (three players or more) -----------------------------------
def last_rows(result: SolveResult, seat: int, a: int, target: int, later: tuple[int, ...]) -> TurnRows:
    """The policy's row of a last turn at a table of three or more: the mover of `seat` (banked `a`, units) plays
    against `target` with the scores `later` of the seats still to play after him (`rounds.Rounds.after_goal`;
    the last seat's is the two-player `LastTurn`'s, `rows.last_turn_rows`)."""
    rounds = result.rounds
    if rounds is None or rounds.last is None:
        raise ValueError(f"'{result.rules.name}' has no last round")
    if seat == result.players - 1:
        return last_turn_rows(result.rules, rounds.last, a, target)
    kernel = rounds.last_kernel
    caps, bank, term, bust = rounds.last_inputs(seat, target, np.array([(a,) + tuple(later)]))
    moves = kernel.move_table(1, int(caps.max()))
    _, _, ta, tb = kernel.run(np.array([a]), caps, bank, bust[:, 0].copy(), keep_table=True, moves=moves,
                              term_bank=term)
    return _turn_rows(result.rules, kernel, caps, int(caps[0]) + 2, bust, bank, moves, ta, tb)


def seat_rows(result: SolveResult, a: int, others: np.ndarray, seat: int = 0) -> TurnRows:
    """The policy's rows of a mover of `seat` with banked `a` against each row of `others` (units, shape (k, n - 1):
    the opponents in playing order from the mover), as one `TurnRows` block: row i is the turn against `others[i]`.

    One kernel pass with seat values (`passes.seat_pass`: `seat_bank_table`,
    the bust vector ``P V(others, a)``) gives every turn state; the mover's
    values make the block, so that every decision (advice, export, the
    engine's table) is the policy table's.
    """
    return _turn_rows(result.rules, result.kernel, *seat_pass(result, a, others, seat))


def _turn_rows(rules: Rules, kernel: TurnKernel, caps: np.ndarray, n: int, bust: np.ndarray, bank: BankTable,
               moves: Decisions, ta: np.ndarray, tb: np.ndarray) -> TurnRows:
    """The `TurnRows` block of one kernel pass with seat values (the mover's values and the pass's moves)."""
    k = len(caps)
    l0 = bust[:, 0].copy()
    value = ta[:, :n, :, 0] + tb[:, :n] * l0[:, None, None]
    plain, predict = kernel.roll_tables(value, l0)
    d = rules.dice
    choices = () if kernel.prediction is None else tuple(int(c) * UNIT for c in kernel.prediction.choices)
    offset = np.arange(k, dtype=np.int64) * n
    bank_v = (bank.a[:, :n, :, 0] + bank.b[:, :n] * l0[:, None, None]).reshape(-1, d)
    return TurnRows(rules, caps, offset, l0, bank_v, rolled(plain, predict).reshape(-1, d),
                    None if predict is None else plain[:, :, 1].reshape(-1).copy(),
                    None if predict is None else predict.reshape(-1, predict.shape[-1]), choices, kernel.period,
                    tie=TIE, move=moves.move[:, :n].reshape(-1, d), keep=moves.keep[:, :n].reshape(k * n, -1),
                    told=None if predict is None else moves.told[:, :n].reshape(k * n, -1))


def policy_of(result: SolveResult) -> PolicyTable:
    """The policy table of a solved `win` result (any number of seats), one per result, kept with it: every
    reader of the result (the advice, every bot of a game) reads the same rows, computed by groups when first
    read (a table per reader would reserve its arrays once each: 1.2 GiB of address space under three-player
    `standard`)."""
    found: PolicyTable | None = result.__dict__.get("_policy")
    if found is None:
        with _LOCK:
            found = result.__dict__.setdefault("_policy", PolicyTable.of(result))
    return found


_LOCK = threading.Lock()
