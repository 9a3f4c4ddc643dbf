"""The turn kernel: one backward pass over turn points for many score pairs at once.

Values inside a turn are kept *affine in the bust value* `L` of each pair:
`value = A + B * L`, where `B` is the probability that the turn (played with the
policy chosen at the current estimate `L0`) ends in a bust. The driver uses the
pair `(A, B)` of the turn start for an exact Newton step on the bust cycle
(`level`).

State layout: a table of rows by `Tpad * D + 2` states by `J + 1` columns
(rows first: a row's pass reads and writes its own few kB; per state the
stored seats' A, ``J = 1`` for two players, then B), state `(t, m)` (t turn
points in units of 50, m dice in hand, 1..m..D) at index `t * D + (m - 1)`,
followed by two slots: WIN (value 1) and BUST (value L). The pass itself is
compiled (`compiled.turn_rows`: each class's keep picked by the mover's value (the classes: `keeps`),
the chosen keeps weighed, bank or roll); `TurnKernel.run` lays out its tables
and cuts the rows between threads.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np

from ..rules import Rules
from ..rules.bank import BankRules
from .keeps import NEG, TIE, KeepGraph, Prediction, backup, build_keep_graph, fold_slots, rolled
from .seats import pass_dice

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

#: Row-layers of a pass (the sum of ``cap + 1`` over its rows) from which its rows are cut between threads.
THREAD_WORK = 2000
#: The runner of passes on a Dask cluster (`distributed.use_cluster` sets it: its `run_on_cluster` bound to the
#: client; empty: in this process, on every core). Called with the pass's arguments; None: run it here.
CLUSTER: list[Any] = []
#: Set in a thread that runs a cluster's chunk (a worker may share the driver's process): its passes stay here.
ON_WORKER = threading.local()
_POOL: list[tuple[ThreadPoolExecutor, int]] = []  # the pool and its threads
os.register_at_fork(after_in_child=_POOL.clear)  # a forked child has none of its parent's threads
Pair = tuple[np.ndarray, np.ndarray]  # (A, B) of values affine in the bust value: A + B L


@dataclass(frozen=True, eq=False, slots=True)
class Decisions:
    """σ of a pass over P rows: every decision it took (`TurnKernel.run` fills them; `TurnKernel.move_table`).

    ``move[p, t, m - 1]``: 0 bank, 1 roll plainly, 2 + j announce
    ``prediction.choices[j]`` (-1: no decision, an overshoot); ``keep[p, t, i]``:
    the keep taken at layer t in the roll class ``graph.choosing[i]`` (its index
    in the class; the classes of one keep have no choice to record; -1: none);
    ``told[p, t, i]``: the same after a right announcement, class
    ``prediction.choosing[i]`` (-1 where the pass announces nothing).
    """

    move: np.ndarray  # (P, T, D) int8
    keep: np.ndarray  # (P, T, Cc) int8
    told: np.ndarray  # (P, T, C2c) int8


@dataclass(frozen=True, eq=False, slots=True)
class BankTable:
    """Affine value of banking at every (pair, t, m): A + B * L; A = -inf where not allowed."""

    a: np.ndarray  # (P, T, D), or (P, T, D, J) with seat values
    b: np.ndarray  # (P, T, D)


@dataclass(frozen=True, eq=False, slots=True)
class StartBanks:
    """The banks of some rows read from the turn-start table itself, not laid out (`BankTable` is their table).

    A bank of row p at (t, m) is ``c = code[mover[p], t, m - 1]``: a new score
    ``c >= 0``, whose value is that of the turn start ``starts[others[p], c]``
    (the stored seats) seen by the banker (`seats.pass_dice`, B = 0), or
    `compiled.BANK_BUST` (A = 0, B = 1), `BANK_WIN` (`win_value` to the banker),
    `BANK_NONE` (not allowed: A = -inf). `ScoreGrid.start_banks` makes them;
    the compiled pass gathers each block's banks as it goes (`compiled.fill_banks`).
    """

    code: np.ndarray  # (G, T, D) per mover's score, turn points and dice in hand: units (two players) or positions
    # of the possible scores (three or more, `ScoreGrid.position_codes`), the new score given the same way
    starts: np.ndarray  # (S, G, J): turn-start seat values, by the others' scores (flat) and the banker's new score
    mover: np.ndarray  # (P,) the mover's score of each row
    others: np.ndarray  # (P,) the flat index of each row's other scores in `starts`
    win_value: float = 1.0
    per_seat: bool = True  # values per seat (`seats`, ties as "Ties" says); False: the two-player tables, J = 1

    def table(self, rows: np.ndarray | None = None) -> BankTable:
        """The banks of `rows` (all by default) laid out: ``a[p, t, m - 1, j]``, ``b[p, t, m - 1]``."""
        rows = np.arange(len(self.mover)) if rows is None else np.asarray(rows, dtype=np.int64)
        from . import compiled  # lazy: Numba loads when a pass first runs, not for a table read

        code = self.code[self.mover[rows]]  # (R, T, D)
        j = self.starts.shape[2]
        a_val = np.zeros(code.shape + (j,))
        b_val = np.zeros(code.shape)
        scored = code >= 0
        rr = np.broadcast_to(self.others[rows][:, None, None], code.shape)[scored]
        a_val[scored] = pass_dice(self.starts[rr, code[scored]])
        b_val[code == compiled.BANK_BUST] = 1.0
        a_val[code == compiled.BANK_WIN, 0] = self.win_value
        a_val[code == compiled.BANK_NONE, 0] = NEG
        return BankTable(a_val if self.per_seat else a_val[..., 0], b_val)


def bank_rows(bank: BankTable | StartBanks, rows: np.ndarray) -> BankTable:
    """The banks of some rows laid out (a copy): of a table, or read from the turn starts."""
    if isinstance(bank, StartBanks):
        return bank.table(rows)
    return BankTable(np.ascontiguousarray(bank.a[rows]), np.ascontiguousarray(bank.b[rows]))


class TurnKernel:
    """Backward passes over one turn for a batch of score pairs.

    `caps[p]` is the first turn total (units) from which pair p's states are
    *terminal*: under `reach`, every bank from there wins; under `exact`, states
    beyond `caps[p]` are overshoots (bust). Terminal values are filled in, not
    iterated over layers.
    """

    def __init__(self, rules: Rules, graph: KeepGraph | None = None, win_value: float = 1.0):
        self.rules = rules
        self.win_value = win_value  # value of a won game: 1 for win chances, 0 turns left for the race
        self.graph = graph or build_keep_graph(rules)
        self.d = rules.dice
        self.bank = BankRules.of(rules)
        self.exact = self.bank.exact
        self.period = self.bank.period
        g = self.graph
        self.prediction = Prediction.of(g) if rules.prediction and rules.dice >= 2 else None
        base = g.keep_units * self.d + (g.keep_next - 1)  # the state a plain keep leads to from layer 0
        self._base = np.ascontiguousarray(base, dtype=np.int64)
        pr = self.prediction
        self._announce = (None if pr is None else
                          (pr.keep_units.astype(np.int64), pr.keep_next.astype(np.int64), pr.keep_win.astype(bool),
                           pr.columns.start, pr.columns.ptr, pr.columns.cls, pr.columns.prob, pr.columns.bust))
        parity = np.arange(self.period)[:, None]
        fault = np.broadcast_to(self.bank.fault(parity), parity.shape)
        ok = self.bank.hand_ok(np.arange(1, self.d + 1))[None, :]
        self._terminal_bank = (np.where(ok, np.where(fault, 0.0, win_value), NEG), np.where(ok & fault, 1.0, 0.0))
        self._all_win_past_cap = bool((self._terminal_bank[0] == win_value).all())  # then nothing to iterate there
        # terminal sub-model (reach only): states (parity, m), successors by parity shift
        if not self.exact:
            nterm = self.period * self.d
            self.term_win, self.term_bust = nterm, nterm + 1
            idx = np.empty((self.period, len(g.keep_units)), dtype=np.int64)
            for par in range(self.period):
                idx[par] = ((par + g.keep_units) % self.period) * self.d + (g.keep_next - 1)
                idx[par, g.keep_win] = self.term_win
            self.term_idx = idx

    def roll_tables(self, value: np.ndarray, bust: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """Value of rolling at every (t, m) of rows whose optimal values are `value` ((T, D) or (P, T, D)).

        Successors past the table fold onto its last rows by `period` (reach), or
        are overshoots worth `bust` (a number, or one per row) under exact. The
        second table is the value of each announcement before rolling two dice,
        shape (..., T, V) (None without `prediction`).
        """
        single = value.ndim == 2
        values = value[None] if single else value
        p, tpad, d = values.shape
        busts = np.broadcast_to(np.asarray(bust, dtype=float), (p,))
        flat = np.concatenate([values.reshape(p, -1), np.full((p, 1), self.win_value), busts[:, None]], axis=1)
        t = np.arange(tpad)

        def roll(classes: KeepGraph | Prediction) -> np.ndarray:
            idx = fold_slots(classes.targets(t), classes.keep_next[None, :], d, tpad - 1, self.period, self.exact,
                             tpad * d + 1)
            idx[:, classes.keep_win] = tpad * d  # the win slot
            out = backup(classes, flat[:, idx], busts[:, None])
            return out[0] if single else out

        return roll(self.graph), None if self.prediction is None else roll(self.prediction)

    def rolling(self, value: np.ndarray, bust: Any) -> np.ndarray:
        """Value of rolling at every state, the best announcement included before rolling two dice."""
        return rolled(*self.roll_tables(value, bust))

    def move_table(self, p: int, tmax: int) -> Decisions:
        """Arrays for the decisions of a pass over `p` rows whose largest cap is `tmax` (`run`'s `moves`)."""
        tpad = self.tpad_for(tmax)
        told = 0 if self.prediction is None else len(self.prediction.choosing)
        return Decisions(np.empty((p, tpad, self.d), dtype=np.int8),
                         np.empty((p, tpad, len(self.graph.choosing)), dtype=np.int8),
                         np.empty((p, tpad, told), dtype=np.int8))

    def tpad_for(self, tmax: int) -> int:
        """Layers needed so that every keep from a layer below `tmax` lands inside the table."""
        return tmax + self.graph.max_units + self.period + 1

    def terminal_bank(self, p: int) -> Pair:
        """Default (A, B) of banking past the cap, shape (P, period, D): a win, a fault, or not allowed.

        Indexed by the new score modulo `period`: under the rule of 50 an odd one
        is a fault (worth a bust); a full hand that must be rolled cannot be banked.
        """
        a, b = self._terminal_bank
        return np.broadcast_to(a, (p,) + a.shape), np.broadcast_to(b, (p,) + b.shape)

    def terminal(self, scores: np.ndarray, l0: np.ndarray, bank: Pair | None = None,
                 iterations: int = 400) -> Pair:
        """(A, B) of shape (P, period, D): values of states past the cap under `reach`.

        Past the cap the value of a bank no longer depends on the turn points
        (by default every allowed bank wins; `bank` may say otherwise, per row);
        what remains are must-roll full hands and (rule of 50) banks that would
        end in 50. Solved row by row by fixed-point iteration (a contraction: each
        must-roll hand busts or ends with some chance; `compiled.terminal_rows`).
        A has a last axis of stored seats when `bank`'s A has one (shape (P, period, D, J): the values of a
        bank past the cap for every seat, the mover's choices made by his own).
        """
        p = len(scores)
        bank_a, bank_b = bank if bank is not None else self.terminal_bank(p)
        if bank is None and (bank_a == self.win_value).all():
            return np.full((p, self.period, self.d), self.win_value), np.zeros((p, self.period, self.d))
        seats = np.ndim(bank_a) == 4
        out_a = np.empty((p, self.period, self.d, np.shape(bank_a)[3] if seats else 1))
        out_b = np.empty((p, self.period, self.d))
        self._terminal_rows(blocks_of(p), np.arange(p), self._terminal_args(bank_a, bank_b, l0), (out_a, out_b),
                            np.empty((p, self.period, self.d), dtype=np.int8), np.empty((0, 1, 1), dtype=np.int8),
                            iterations)
        return (out_a if seats else out_a[..., 0]), out_b

    @staticmethod
    def _terminal_args(bank_a: np.ndarray, bank_b: np.ndarray,
                       l0: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The terminal pass's bank (A with a seat axis, B) and bust values, as the compiled code takes them."""
        a = np.asarray(bank_a)
        return _plain(a if a.ndim == 4 else a[..., None], float), _plain(bank_b, float), _plain(l0, float)

    def _terminal_rows(self, blocks: np.ndarray, index: np.ndarray, args: tuple[np.ndarray, np.ndarray, np.ndarray],
                       out: tuple[np.ndarray, np.ndarray], out_move: np.ndarray, out_keep: np.ndarray,
                       iterations: int = 400) -> None:
        """`terminal`'s values of the rows of `blocks` (`blocks_of`; row r's bank at ``index[r]``) into
        ``out[0]`` (A, a seat axis last) and ``out[1]`` (B), the move taken at each state into `out_move` (0
        bank, 1 roll) and, unless it has no rows, the keep taken in each class with a choice into `out_keep`
        (P, period, Cc)."""
        from . import compiled  # lazy: Numba loads when a pass first runs, not for a table read

        c = self.graph.columns
        cols = args[0].shape[3] + 1
        compiled.terminal_rows(blocks, _plain(index, np.int64), *args, float(self.win_value), self.term_idx, c.start,
                               c.ptr, c.cls, c.prob, c.bust, iterations, out[0], out[1], out_move, out_keep,
                               self.graph.choosing,
                               compiled.terminal_work(self.period * self.d, len(c.start) - 1, cols))

    @overload
    def run(self, scores: np.ndarray, caps: np.ndarray, bank: BankTable | StartBanks, l0: np.ndarray,
            keep_table: Literal[False] = False, term_bank: Pair | None = None, rows: np.ndarray | None = None,
            moves: Decisions | None = None, strike: np.ndarray | None = None,
            ) -> tuple[np.ndarray, np.ndarray, None, None]: ...

    @overload
    def run(self, scores: np.ndarray, caps: np.ndarray, bank: BankTable | StartBanks, l0: np.ndarray,
            keep_table: Literal[True], term_bank: Pair | None = None, rows: np.ndarray | None = None,
            moves: Decisions | None = None, strike: np.ndarray | None = None,
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...

    def run(self, scores: np.ndarray, caps: np.ndarray, bank: BankTable | StartBanks, l0: np.ndarray,
            keep_table: bool = False, term_bank: Pair | None = None, rows: np.ndarray | None = None,
            moves: Decisions | None = None, strike: np.ndarray | None = None,
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """One backward pass for P rows; returns (A, B) of the turn start (0 points, D dice).

        Inside `distributed.use_cluster` a pass without `keep_table` over many
        rows is cut into chunks run on a Dask cluster's workers (the same
        compiled pass there: each row's arithmetic is the same, so the values
        are the same bits).

        With `rows`, the pass is over those rows of `scores`, `caps`, `bank` and
        `term_bank` only (read where they are, not copied), `l0` and the results
        having one entry per row of `rows`.

        `bank` covers layers 0..max(caps) (the rows need not be sorted). With
        `keep_table`, also returns the full (A, B) tables, shape (P, Tpad, D)
        (A: (P, Tpad, D, J) with seat values), and fills `moves` (if given:
        `move_table`'s `Decisions`) with every decision the pass took (σ): the
        move at every state (0 bank, 1 roll plainly, 2 + j announce
        ``prediction.choices[j]``; past the cap under reach the terminal move;
        -1 on an overshoot) and the keep of every roll class at every layer, so
        that the policy table holds the solve's own decisions. `term_bank` gives the (A, B) of
        banking past the cap per row (see `terminal`). The rows run in the
        compiled pass (`compiled.turn_rows`) in blocks of `compiled.LANES`
        (fastest when sorted by cap, as the drivers give them), the blocks cut
        between threads when there is enough work (`THREAD_WORK`); each row's
        arithmetic is the same either way. `strike` (two players, per row of `scores`): a bust on
        all D dice worth this, not `l0`, where it is not NaN (the history rules, `history`).
        """
        if not keep_table and CLUSTER and not getattr(ON_WORKER, "on", False) and strike is None:
            done = CLUSTER[0](self, scores, caps, bank, l0, term_bank, rows)
            if done is not None:
                return done[0], done[1], None, None
        # lazy: Numba loads when a pass first runs, not for a table read
        from . import compiled  # Numba is imported by the first pass, not with the kernel (reading tables needs none)

        d = self.d
        index = _plain(np.arange(len(scores)) if rows is None else rows, np.int64)  # pass row -> table row
        p = len(index)
        if isinstance(bank, StartBanks):  # read from the turn starts
            if bank.win_value != self.win_value:
                raise ValueError("a StartBanks' win_value must be its kernel's")
            seats: tuple[int, ...] = bank.starts.shape[2:] if bank.per_seat else ()
            banks = (_plain(bank.code, np.int64), _plain(bank.mover, np.int64),
                     _plain(bank.starts[:, :, None, :], float), np.zeros((1, 1, 1)), _plain(bank.others, np.int64),
                     True)
        else:
            seats = bank.a.shape[3:]  # () for the mover's value alone, (J,) for a vector of seat values
            layers = bank.a.shape[1]
            banks = (np.arange(layers, dtype=np.int64).reshape(1, layers, 1), np.zeros(len(scores), dtype=np.int64),
                     _plain(bank.a if seats else bank.a[..., None], float), _plain(bank.b, float),
                     np.arange(len(scores), dtype=np.int64), False)
        j = seats[0] if seats else 1
        caps = _plain(caps, np.int64)
        tmax = int(caps[index].max()) if p else 0
        tpad = self.tpad_for(tmax)
        size = tpad * d + 2  # the states, then the win and bust slots
        begin = np.empty((p, j + 1))  # the turn start's stored seats' A, then B
        table = np.empty((p if keep_table else 0, size, j + 1))  # rows first: every state's columns
        told_n = 0 if self.prediction is None else len(self.prediction.choosing)
        want = {"move": (p, tpad, d), "keep": (p, tpad, len(self.graph.choosing)), "told": (p, tpad, told_n)}
        if moves is not None and (not keep_table or any(
                getattr(moves, name).shape != shape or getattr(moves, name).dtype != np.int8
                or not getattr(moves, name).flags.c_contiguous for name, shape in want.items())):
            raise ValueError(f"moves must be `move_table`'s Decisions for {p} rows of {tpad} layers, with keep_table")
        taken = np.empty((0, size), dtype=np.int8) if moves is None else np.empty((p, size), dtype=np.int8)
        keeps = np.empty((0, 1, 1), dtype=np.int8) if moves is None else moves.keep
        told_keeps = np.empty((0, 1, 1), dtype=np.int8) if moves is None else moves.told
        l0 = _plain(l0, float)
        terminal = None
        term_keep = np.zeros((1, 1, 1), dtype=np.int8)
        if self.exact:
            term_a, term_b = np.zeros((1, 1, 1, j)), np.zeros((1, 1, 1))
            term_move = np.zeros((1, 1, 1), dtype=np.int8)
        else:
            term_a, term_b = np.empty((p, self.period, d, j)), np.empty((p, self.period, d))
            term_move = np.zeros((p, self.period, d), dtype=np.int8)  # every bank wins: bank
            if moves is not None:  # every state worth a win: `choose` takes the last keep of each class
                term_keep = np.empty((p, self.period, len(self.graph.choosing)), dtype=np.int8)
                term_keep[:] = (np.diff(np.append(self.graph.class_start, len(self.graph.keep_units)))
                                [self.graph.choosing] - 1).astype(np.int8)
            if term_bank is None and self._all_win_past_cap:
                term_a[...], term_b[...] = 0.0, 0.0
                term_a[..., 0] = self.win_value
            else:
                ta, tb = term_bank if term_bank is not None else self.terminal_bank(len(scores))
                if np.ndim(ta) == 4 and np.shape(ta)[3] != j:
                    raise ValueError(f"term_bank has {np.shape(ta)[3]} seats, the banks {j}")
                if np.ndim(ta) == 3 and j > 1:  # the mover's value alone: the others' are 0 past the cap
                    ta = np.concatenate([np.asarray(ta)[..., None], np.zeros(np.shape(ta) + (j - 1,))], axis=-1)
                terminal = self._terminal_args(ta, tb, l0)
        g, c = self.graph, self.graph.columns
        pr = self.prediction
        if strike is not None and seats:
            raise ValueError("strike is the mover's value alone (two players)")
        strikes = np.zeros(0) if strike is None else _plain(strike, float)
        args = (index, table, begin, _plain(scores, np.int64), caps, *banks, l0, strikes, term_a,
                term_b, term_move, taken, keeps, told_keeps, term_keep, self.graph.choosing,
                np.zeros(0, dtype=np.int64) if pr is None else pr.choosing, tpad, self.exact, self.period,
                TIE if seats else 0.0,  # "Ties"
                float(self.win_value), self._base, g.keep_win, c.start, c.ptr, c.cls, c.prob, c.bust, self._announce,
                d)

        told = self._announce
        shape = (size, j + 1, d, len(self._base), len(c.start) - 1, 0 if told is None else len(told[0]),
                 0 if told is None else len(told[3]) - 1)

        def rows_pass(blocks: np.ndarray) -> None:
            if terminal is not None:
                self._terminal_rows(blocks, index, terminal, (term_a, term_b), term_move,
                                    term_keep if moves is not None else np.empty((0, 1, 1), dtype=np.int8))
            compiled.turn_rows(blocks, *args, compiled.turn_work(*shape))

        blocks = blocks_of(p)
        threads = _threads() if int((caps[index] + 1).sum()) >= THREAD_WORK else 1
        if threads > 1 and len(blocks) > 1:  # rows sorted by cap: every thread takes one block in `threads`
            # (each share C-contiguous, as a single block is: one compiled version of the pass, not two)
            list(_POOL[0][0].map(rows_pass, [np.ascontiguousarray(blocks[i::threads]) for i in range(threads)]))
        elif p:
            rows_pass(blocks)
        a_start = begin[:, :j] if seats else begin[:, 0]
        if moves is not None:
            moves.move[:] = taken[:, : tpad * d].reshape(p, tpad, d)
        if keep_table:
            cells = table[:, : tpad * d].reshape((p, tpad, d, j + 1))
            return a_start, begin[:, j], cells[..., :j] if seats else cells[..., 0], cells[..., j]
        return a_start, begin[:, j], None, None


def blocks_of(p: int) -> np.ndarray:
    """Rows 0..p-1 cut into blocks of `compiled.LANES` consecutive rows: (blocks, 2), each block's first row and
    end (one array per `p`, made once: not to be written)."""
    found = _BLOCKS.get(p)
    if found is None:
        from . import compiled  # lazy: Numba loads when a pass first runs, not for a table read

        if len(_BLOCKS) >= 256:  # a long solve passes thousands of row counts: keep the cache small
            _BLOCKS.clear()
        first = np.arange(0, p, compiled.LANES, dtype=np.int64)
        found = np.stack([first, np.minimum(first + compiled.LANES, p)], axis=1)
        _BLOCKS[p] = found
    return found


_BLOCKS: dict[int, np.ndarray] = {}


def _plain(x: Any, dtype: Any) -> np.ndarray:
    """`x` as the compiled pass takes it: C-contiguous and writable (one compiled version for every caller)."""
    return np.require(x, dtype, ["C", "W"])


def _threads() -> int:
    """Threads for one pass: one per core (`THREAD_WORK`), the pool made on first use (and anew in a fork)."""
    if not _POOL:
        from concurrent.futures import ThreadPoolExecutor  # lazy: start-up time (a warm advice runs no pass)

        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        _POOL.append((ThreadPoolExecutor(max(1, cores or 1)), max(1, cores or 1)))
    return _POOL[0][1]
