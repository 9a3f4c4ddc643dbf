r"""The solved policy: every turn state's values in one table, and one function per decision.

Every reader of the solution takes its decisions here: `advise`, `export`, the
engine policy `optimal` (and so `play`'s bot), the simulator's `OptimalVec` and
the research code. Nothing else computes an optimal decision.

Rows
====
A *row* is the turn of one mover against one opponent: ``(seat, a, b)`` (seat
0 unless `last_round`; seat 0 opens each round) in the `PolicyTable`, or a
last turn ``(a, target)`` of a last round (`PolicyTable.last_turn`). Row ``r``
owns the turn layers ``t = 0 .. cap[r] + 1`` (units of 50) from
``offset[r]``, one column per number of dice in hand; turn points past them
fold back (`fold`): under ``reach`` the states from the cap on are terminal and
repeat with the period of the rule of 50; under ``exact`` layer ``cap + 1``
stands for every overshoot. Per state ``(t, m)`` a block of rows stores

- ``bank``: the value of banking (``-inf`` where the rules forbid it);
- ``roll``: the value of rolling the ``m`` dice in hand (after the best
  announcement, before rolling two dice under `prediction`);
- ``plain`` and ``predict`` (`prediction`): rolling two dice without
  announcing, and announcing each of `choices`.

The value of a state is ``max(bank, roll)``, except that an overshoot is worth
the bust value of the row.

Where the numbers come from: the rows of one mover (seat and score ``a``)
against `GROUP` consecutive opponent scores ``b`` are one *group*, computed by
one kernel pass (`TurnKernel.run` with the bust values ``L = 1 - W[other, b,
a]`` and `GameModel.bank`) and `TurnKernel.roll_tables` on its values. A group
is computed when first read (an advice computes one), or all groups at once
(`PolicyTable.complete`, the cached table); either way by the same pass, so
every reader sees the same numbers to the last bit (a pass of other rows could
differ in the last bit). A last turn is read from the solver's `LastTurn`
tables (the chance that this turn ends with a bank that takes the victory).

Decisions
=========
Each decision lists its options in a fixed tie-break order (RULES.md section
8) and takes the first of the best (`best`; `ranking` orders them all, for the
advice):

- bank or roll (`move`, `banks`, `announcement`): bank, roll plainly, then the
  announcements from the smallest (a tie goes to banking; between announcing
  and rolling plainly, to rolling plainly);
- which keep (`keep`, `taken`): not decided here but read: the keep the
  solve's pass took in each roll class (σ, `kernel.Decisions.keep`; on a tie
  the kernel's rule, `compiled.choose`: the most points, then the most dice in
  hand after);
- a take-over offer (`takes_over`): start afresh, then take over (a tie starts
  afresh).

Every function is vectorised over states (arrays that broadcast); one state is
arrays of one element.

Expected points and bust chances
================================
`TurnRows.expectation(r, a)` evaluates the policy's turn in points, for the
advice: from every state of row ``r`` (mover's banked score ``a``), the mean
points that the turn banks when the player follows the table's decisions (its
moves, its keeps with their tie-break, its announcements) to the end of the
turn. One backward pass over the row's layers, each roll weighted class by
class as `kernel.backup` does: ``E(t, m)`` is, by the move of the state,

- banking: the points the bank adds to the score (``t``; what a final-stretch
  cap leaves; 0 for a void or faulty bank);
- rolling: ``sum_c P(c) E(t + p_k, m_k)`` over the roll classes, ``k`` the
  policy's keep of class ``c``; a bust banks 0; an instant win counts the turn
  points plus the goal in points (as the `expected` objective counts it); an
  overshoot of an exact goal banks 0;
- announcing ``v`` (`prediction`): the same over the two-dice classes that
  score ``v``, with the turn doubled after the keep; a wrong announcement banks 0.

Past the cap (``reach``) the decisions repeat with the period and the
expectation is affine in the turn points, ``E = 50 alpha t + beta``; ``alpha``
and ``beta`` of each terminal state are the fixed point of the same equations.
`TurnRows.roll_busts(m)` gives, per move, the exact chance that the next roll
fails at once (a bust; for an announcement, a bust or a wrong announcement).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol, Self

import numpy as np

from ..errors import CinqmilleError
from ..position import Position
from ..rules import Rules
from ..rules.bank import SCORED, UNIT, BankRules
from ..work import working
from .cache import CorruptTable
from .kernel import NEG, KeepGraph, Prediction, TurnKernel, build_keep_graph, rolled
from .n_player import leading
from .seats import passed
from .turns import counted

WIN = 1.0  # value of an instant win (the win objective)
#: Rows (opponent scores) of one group: small enough for a quick advice, large enough for a quick table.
GROUP = 8
#: Groups of rows recomputed with the kernel when a table is read back from the cache (`sample_groups`).
SAMPLE_GROUPS = 6
#: Largest difference between a cached number and the same number computed again by the same pass.
SAME_PASS_TOL = 1e-12


# -- the tie-break rule, written once ------------------------------------------------------
def best(values: np.ndarray, tie: float = 0.0) -> np.ndarray:
    """Index of the chosen option along the last axis: the first of the options within `tie` of the largest
    value (the solver's rule: exact ties for two players, `kernel.TIE` with seat values, docs/solver.md "Ties")."""
    values = np.asarray(values)
    if tie == 0.0:
        return np.asarray(np.argmax(values, axis=-1))
    return np.asarray(np.argmax(tied(values, np.max(values, axis=-1, keepdims=True), tie), axis=-1))


def tied(values: np.ndarray, top: np.ndarray, tie: float) -> np.ndarray:
    """Whether each option is as good as `top` for the player to move: equal, or within `tie` of it."""
    return np.asarray(values == top) if tie == 0.0 else np.asarray(values >= top - tie)


def ranking(values: np.ndarray, tie: float = 0.0, chosen: Any = None) -> np.ndarray:
    """Options from best to worst along the last axis (ties keep their order), the `chosen` one first (by
    default ``best(v, tie)``; a table's move, `TurnRows.move`, where the solve took it)."""
    values = np.asarray(values)
    if tie == 0.0 and chosen is None:
        return np.argsort(-values, axis=-1, kind="stable")
    pick = best(values, tie) if chosen is None else np.asarray(chosen)
    first = np.arange(values.shape[-1]) == pick[..., None]
    return np.asarray(np.lexsort((-values, ~first), axis=-1))


def move_problem(move: np.ndarray, announcements: int, none: bool = False) -> str | None:
    """Why an array of moves (layers, D) read back from a file is not one (None when it is): a code outside
    0 bank, 1 roll, 2 + j announce (with two dice only), and -1 (no move) where `none` allows it."""
    low = -1 if none else 0
    if (move.min(initial=0) < low or move.max(initial=0) > 1 + announcements
            or (announcements and (np.delete(move, 1, axis=1) > 1).any())):
        return (f"array 'move' holds moves outside {'-1 (none), ' if none else ''}0 (bank), 1 (roll), 2 + j "
                f"(announce, two dice only)")
    return None


def keep_problem(graph: KeepGraph, pred: Prediction | None, keep: np.ndarray, told: np.ndarray | None) -> str | None:
    """Why arrays of keeps (layers, Cc) and (layers, C2c) read back from a file are not the solve's kind (None
    when they are): one column per roll class with a choice, each the index of a keep of its class (or -1)."""
    for name, classes, x in (("keep", graph, keep), ("told", pred, told)):
        if classes is None or x is None:
            continue
        size = np.diff(np.append(classes.class_start, len(classes.keep_units)))[classes.choosing]
        if x.ndim != 2 or x.shape[1] != len(size):
            return f"array '{name}' does not have one column per roll class with a choice"
        if (x < -1).any() or (x >= size).any():
            return f"array '{name}' holds keeps outside their roll class"
    return None


def fold(t: Any, cap: Any, period: int, exact: bool) -> np.ndarray:
    """Layer (0 .. cap + 1) of turn points `t`: terminal states repeat (reach); overshoots share cap + 1 (exact)."""
    t = np.asarray(t)
    if exact:
        return np.asarray(np.minimum(t, cap + 1))
    if period == 1:
        return np.asarray(np.minimum(t, cap))
    return np.asarray(np.where(t < cap, t, cap + (t - cap) % period))


def sample_groups(total: int, count: int = SAMPLE_GROUPS) -> np.ndarray:
    """A deterministic sample of group ids among `total`: the first, the last and `count - 2` evenly between."""
    return np.unique(np.linspace(0, max(total - 1, 0), num=max(min(count, total), 1)).round().astype(np.int64))


def differs(found: np.ndarray, want: np.ndarray, tol: float = SAME_PASS_TOL) -> bool:
    """Whether two arrays of values differ by more than `tol` anywhere (-inf and NaN equal only themselves)."""
    found, want = np.asarray(found, dtype=float), np.asarray(want, dtype=float)
    if found.shape != want.shape:
        return True
    same = (found == want) | (np.isnan(found) & np.isnan(want))
    with np.errstate(invalid="ignore"):
        close = np.isfinite(found) & np.isfinite(want) & (np.abs(found - want) <= tol)
    return not bool((same | close).all())


def layout_problem(arrays: dict[str, np.ndarray], period: Any, want: dict[str, Any],
                   want_period: int) -> str | None:
    """Why arrays read back from the cache are not laid out as the ruleset's table: `want` maps the arrays
    that must be equal (scores, caps, choices) and shapes of the others (a tuple); None when they are."""
    if type(period) is not int or period != want_period:
        return f"metadata 'period' is {period!r}, the ruleset's is {want_period}"
    for name, expected in want.items():
        got = arrays.get(name)
        if isinstance(expected, tuple):  # a shape; () for an array the ruleset does not have
            if (got is None and expected != ()) or (got is not None and got.shape != expected):
                return f"array '{name}' has the wrong shape (or should not be there)"
        elif got is None or got.shape != expected.shape or not np.array_equal(got, expected):
            return f"array '{name}' is not the ruleset's"
    return None


# -- a block of rows --------------------------------------------------------------------------
class TurnRows:
    """Turn rows and the values of their states; every decision of the policy (see the module docstring)."""


    def __init__(self, rules: Rules, cap: np.ndarray, offset: np.ndarray, bust: np.ndarray,
                 bank: np.ndarray, roll: np.ndarray, plain: np.ndarray | None = None,
                 predict: np.ndarray | None = None, choices: tuple[int, ...] = (), period: int = 1,
                 ready: bool = True, tie: float = 0.0, move: np.ndarray | None = None,
                 keep: np.ndarray | None = None, told: np.ndarray | None = None):
        self.rules = rules
        self.dice = rules.dice
        self.exact = rules.banking.exact
        self.period = period
        self.cap = np.asarray(cap, dtype=np.int64)  # (rows,)
        self.offset = np.asarray(offset, dtype=np.int64)  # (rows,)
        self.bust = np.asarray(bust, dtype=float)  # (rows,)
        self.bank_v = bank  # (layers, D)
        self.roll_v = roll  # (layers, D)
        self.plain_v = plain  # (layers,) or None
        self.predict_v = predict  # (layers, V) or None
        self.choices = tuple(int(c) for c in choices)  # announcements, in points
        self.tie = tie  # values this close are a tie for the player to move (0: exact ties, two players)
        self.move_v = move  # (layers, D) int8: the move the solve's pass took (σ; -1 where it took none), or None
        # (layers, Cc) int8: the keep the pass took at each layer in each roll class with a choice (σ,
        # `kernel.Decisions.keep`), and (layers, C2c) after a right announcement (`told`); None: not kept
        self.keep_v, self.told_v = keep, told
        self.value_v = np.empty_like(roll)  # (layers, D) value of the state, filled by `_values`
        self._expected: dict[tuple[int, int], TurnExpectation] = {}
        if ready:
            self._values(np.arange(len(self.cap)))

    def _values(self, rows: np.ndarray) -> None:
        """Fill `value_v` for `rows` (whose layers are computed): max(bank, roll), a bust on an overshoot layer."""
        if not len(rows):
            return
        span = self.cap[rows] + 2
        ends = np.cumsum(span)
        i = np.repeat(self.offset[rows], span) + np.arange(ends[-1]) - np.repeat(ends - span, span)
        v = np.maximum(self.bank_v[i], self.roll_v[i])
        if self.exact:
            v[ends - 1] = self.bust[rows][:, None]  # the overshoot layer
        self.value_v[i] = v

    def _ready(self, r: np.ndarray) -> None:
        """Make sure the rows `r` are computed (a block built whole has nothing to do)."""

    # -- reading ------------------------------------------------------------------------------
    def layer(self, r: Any, t: Any) -> np.ndarray:
        """Index into the state arrays of turn points `t` (units) of rows `r`."""
        r = np.asarray(r)
        self._ready(r)
        return np.asarray(self.offset[r] + fold(t, self.cap[r], self.period, self.exact))

    def _cell(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Flat index of states (layer, dice) into the (layers, D) arrays."""
        return np.asarray(self.layer(r, t) * self.dice + (np.asarray(m) - 1))

    def bank(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Value of banking `t` units with `m` dice in hand (-inf where not allowed)."""
        return np.take(self.bank_v.reshape(-1), self._cell(r, t, m))

    def roll(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Value of rolling the `m` dice in hand (after the best announcement, if any)."""
        return np.take(self.roll_v.reshape(-1), self._cell(r, t, m))

    def value(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Value of the state (the better of banking and rolling; an overshoot is worth a bust)."""
        return np.take(self.value_v.reshape(-1), self._cell(r, t, m))

    def moves(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Values of the moves in tie-break order, shape (..., 2 + V): bank, roll plainly, announce each choice."""
        m = np.asarray(m)
        i = self.layer(r, t)
        cell = i * self.dice + (m - 1)
        bank, roll = np.take(self.bank_v.reshape(-1), cell), np.take(self.roll_v.reshape(-1), cell)
        if self.predict_v is None or self.plain_v is None:
            return np.stack([bank, roll], axis=-1)
        two = m == 2
        plain = np.where(two, np.take(self.plain_v, i), roll)
        announce = np.where(two[..., None], self.predict_v[i], NEG)
        return np.concatenate([bank[..., None], plain[..., None], announce], axis=-1)

    def keep_values(self, r: Any, t: Any, units: Any, left: Any, win: Any, doubled: Any = False) -> np.ndarray:
        """Value of each keep (`units` points, `left` dice in hand after, instant `win`) from turn points `t`.

        `r` and `t` describe the states (shape S), the keeps are the last axis
        (shape S + (J,)); `doubled`: the keeps follow a right announcement, which
        doubles the turn points.
        """
        r, t = np.asarray(r)[..., None], np.asarray(t)[..., None]
        t2 = t + np.asarray(units)
        if np.any(doubled):
            t2 = np.where(np.asarray(doubled)[..., None], 2 * t2, t2)
        return np.where(win, self.win_worth(t), self.value(r, t2, left))

    def win_worth(self, t: Any) -> Any:
        """The value of a keep that wins at once from turn units `t` (the `win` objective: 1)."""
        return WIN

    def offer_values(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Values of a take-over offer (`t` units, `m` dice) in tie-break order: start afresh, take over."""
        r = np.asarray(r)
        fresh = self.value(r, np.zeros_like(r), np.full(r.shape, self.dice))
        return np.stack([fresh, self.roll(r, t, m)], axis=-1)

    # -- the decisions --------------------------------------------------------------------------
    def move(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """The move: 0 bank, 1 roll plainly, 2 + j announce `choices[j]` and roll. It is the one the kernel's
        pass took (`move_v`, σ) where it took one, else the tie-break rule on the values (`best`: a last turn
        of a last round, an overshoot)."""
        if self.move_v is not None:
            taken = np.take(self.move_v.reshape(-1), self._cell(r, t, m)).astype(np.int64)
            if (taken >= 0).all():
                return taken
            return np.where(taken >= 0, taken, best(self.moves(r, t, m), self.tie))
        return best(self.moves(r, t, m), self.tie)

    def banks(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Bank (True) or roll."""
        return np.asarray(self.move(r, t, m) == 0)

    def announcement(self, r: Any, t: Any) -> np.ndarray:
        """Points announced before rolling the last two dice, 0 to roll them plainly."""
        r = np.asarray(r)
        if self.predict_v is None:
            return np.zeros(np.broadcast(r, t).shape, dtype=np.int64)
        two = np.full(r.shape, 2)
        if self.move_v is None:
            j = best(self.moves(r, t, two)[..., 1:], self.tie)
        else:  # the pass's roll where it rolled (after a bank, the rule says how it would roll)
            taken = np.take(self.move_v.reshape(-1), self._cell(r, t, two)).astype(np.int64)
            j = taken - 1 if (taken >= 1).all() else np.where(taken >= 1, taken - 1,
                                                               best(self.moves(r, t, two)[..., 1:], self.tie))
        return np.asarray(np.array((0,) + self.choices, dtype=np.int64)[j])

    def taken(self, r: Any, t: Any, doubled: bool = False) -> np.ndarray:
        """The keep the solve took in every roll class from turn units `t` of rows `r` (σ, `keep_v`): shape
        ``S + (C,)``, the index of the keep among the classes' keeps (of the `KeepGraph`, or after a right
        announcement, `doubled`, of the `Prediction`)."""
        graph, pred = _classes(self.rules)
        classes: KeepGraph | Prediction | None = pred if doubled else graph
        table = self.told_v if doubled else self.keep_v
        if classes is None or table is None:
            raise CinqmilleError("this block of rows holds no keeps" if classes is not None
                                 else "no announcement under this ruleset")
        local = table[self.layer(r, t)]
        if (local < 0).any():
            raise CinqmilleError("a keep asked where the solve took none (past the goal)")
        out = np.broadcast_to(classes.class_start, local.shape[:-1] + classes.class_start.shape).copy()
        out[..., classes.choosing] += local
        return out

    def keep(self, r: Any, t: Any, c: Any, doubled: Any = False) -> np.ndarray:
        """The keep the solve took in roll class `c` (of the `KeepGraph`, broadcast with `r` and `t`) from turn
        units `t` of rows `r`, after a right announcement where `doubled`: the keep's index in the graph."""
        graph, pred = _classes(self.rules)
        r, t, c, doubled = np.broadcast_arrays(np.asarray(r), np.asarray(t), np.asarray(c), np.asarray(doubled))
        i = self.layer(r, t)
        local = np.zeros(c.shape, dtype=np.int64)
        for told, classes, cls in ((False, graph, c), (True, pred, c)):
            sel = doubled == told
            if not sel.any():
                continue
            table = self.told_v if told else self.keep_v
            if classes is None or table is None:
                raise CinqmilleError("this block of rows holds no keeps" if classes is not None
                                     else "no announcement under this ruleset")
            if told:
                assert isinstance(classes, Prediction)
                cls = np.searchsorted(classes.two, c)
            col = np.minimum(np.searchsorted(classes.choosing, cls), max(len(classes.choosing) - 1, 0))
            chooses = sel & (classes.choosing[col] == cls) if len(classes.choosing) else np.zeros_like(sel)
            found = table[i[chooses], col[chooses]] if chooses.any() else np.zeros(0, dtype=np.int8)
            if (found < 0).any():
                raise CinqmilleError("a keep asked where the solve took none (past the goal)")
            local[chooses] = found
        return np.asarray(graph.class_start[c] + local)

    def takes_over(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Take over the offered turn (True) or start afresh."""
        return np.asarray(best(self.offer_values(r, t, m), self.tie) == 1)

    # -- what the decisions give in points ---------------------------------------------------
    def expectation(self, r: int, a: int) -> "TurnExpectation":
        """Expected points banked from every state of row `r` (mover's banked score `a`, units) under the policy."""
        key = (int(r), int(a))
        found = self._expected.get(key)
        if found is None:
            found = turn_expectation(self, key[0], key[1])
            if len(self._expected) >= 256:
                self._expected.clear()
            self._expected[key] = found
        return found

    def roll_busts(self, m: int) -> np.ndarray:
        """Per move of `moves` (bank, roll plainly, announce each choice): the chance that the next roll of `m`
        dice fails at once (NaN for banking and for announcements with other than two dice)."""
        odds = bust_odds(self.rules)
        out = [np.nan, float(odds[0][m])]
        if self.predict_v is not None:
            out += [float(odds[1][c]) if m == 2 else np.nan for c in self.choices]
        return np.array(out)

    @staticmethod
    def concat(blocks: list["TurnRows"]) -> "TurnRows":
        """One block holding the rows of `blocks` (complete blocks of one ruleset), in order."""
        first = blocks[0]
        sizes = [len(b.bank_v) for b in blocks]
        base = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        def join(name: str) -> Any:
            return None if getattr(first, name) is None else np.concatenate([getattr(b, name) for b in blocks])

        def joined(name: str) -> Any:
            return None if any(getattr(b, name) is None for b in blocks) else join(name)

        return TurnRows(first.rules, np.concatenate([b.cap for b in blocks]),
                        np.concatenate([b.offset + o for b, o in zip(blocks, base)]),
                        np.concatenate([b.bust for b in blocks]), join("bank_v"), join("roll_v"),
                        join("plain_v"), join("predict_v"), first.choices, first.period, tie=first.tie,
                        move=joined("move_v"), keep=joined("keep_v"), told=joined("told_v"))


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
        with self._lock:
            for g in np.unique(groups):
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
                 told: np.ndarray | None = None):
        s = len(scores)
        self.scores = np.asarray(scores, dtype=np.int64)  # valid banked scores, units
        self.mover_caps = np.asarray(caps, dtype=np.int64)  # (seats * S,) cap of the mover seat * S + ia
        self.seats = len(self.mover_caps) // s
        goal = rules.goal // UNIT
        self.index = np.full(goal, -1, dtype=np.int64)
        self.index[self.scores] = np.arange(s)
        super().__init__(rules, np.repeat(self.mover_caps, s), _layout(self.scores, self.mover_caps), bust,
                         bank, roll, plain, predict, choices, period, ready=source is None, move=move, keep=keep,
                         told=told)
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
                   move=np.full((rows, d), -1, dtype=np.int8),
                   keep=np.full((rows, len(graph.choosing)), -1, dtype=np.int8),
                   told=None if pred is None else np.full((rows, len(pred.choosing)), -1, dtype=np.int8))

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
                                    "plain": () if fresh.plain_v is None else fresh.plain_v.shape,
                                    "predict": () if fresh.predict_v is None else fresh.predict_v.shape}
            why = layout_problem(arrays, period, want, fresh.period)
            if why:
                raise CorruptTable(why)
        table = cls(rules, arrays["scores"], arrays["caps"], arrays["bust"], arrays["bank"], arrays["roll"],
                    arrays.get("plain"), arrays.get("predict"), tuple(int(c) for c in arrays["choices"]), period,
                    exact_solve=exact_solve, assumptions=assumptions, move=arrays["move"], keep=arrays["keep"],
                    told=arrays.get("told"))
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
            for name in ("bank_v", "roll_v", "plain_v", "predict_v", "value_v", "move_v", "keep_v", "told_v"):
                mine, theirs = getattr(self, name), getattr(fresh, name)
                if mine is not None and differs(mine[cells], theirs[cells]):
                    return f"its rows of group {int(g)} differ from the kernel's ({name[:-2]})"
        return None

    # -- where a position is read --------------------------------------------------------------
    def row(self, a: Any, b: Any, seat: Any = 0) -> Any:
        """Row ids of banked scores `a`, `b` (units) and the mover's seat; raises for a score that cannot occur."""
        s = len(self.scores)
        if isinstance(a, int) and isinstance(b, int) and isinstance(seat, int):  # one state, quickly
            ia = int(self.index[a]) if 0 <= a < len(self.index) else -1
            ib = int(self.index[b]) if 0 <= b < len(self.index) else -1
            if ia >= 0 and ib >= 0:
                return np.int64((min(seat, self.seats - 1) * s + ia) * s + ib)
        a, b = np.asarray(a), np.asarray(b)
        goal = len(self.index)
        if np.any((a < 0) | (a >= goal) | (b < 0) | (b >= goal)):
            raise CinqmilleError("a banked score at or past the goal has no row in the policy table")
        ia, ib = self.index[a], self.index[b]
        if np.any(ia < 0) or np.any(ib < 0):
            raise CinqmilleError("a banked score that cannot occur under this ruleset")
        return (np.minimum(seat, self.seats - 1) * s + ia) * s + ib

    def spot(self, position: Position) -> tuple[TurnRows, int]:
        """(block, row) where a position is read: my last turn when `target` is set, else the row of its scores
        and kind (`kind`); with more opponents than one, against the one who threatens most (`leading`)."""
        if position.target is not None:
            return self.last_turn(position.me // UNIT, position.target // UNIT)
        opp = position.opp if position.others is None else leading(position.others, 1)[0]
        return self, int(self.row(position.me // UNIT, opp // UNIT, self.kind(position)))

    def kind(self, position: Position) -> int:
        """The kind of row a position is read at (`solver.turns`): the scoreless-turn counters (mine * count +
        his) under a counted `zero_turns`, else the seat under `last_round` (0 opens each round), else 0."""
        count = counted(self.rules)
        if count:
            mine, his = position.scoreless
            return mine * count + his
        return min(position.seat, self.seats - 1)

    # -- last turns ------------------------------------------------------------------------------
    def _last_model(self) -> Any:
        if self._last_turn_model is None:
            from .last_turn import LastTurn

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


def last_turn_rows(rules: Rules, last: Any, a: int, target: int) -> TurnRows:
    """One row: the last turn of a player with banked `a` against `target` (units), from the solver's `LastTurn`.

    A bank wins (1) only past `target` (``reach``; by the rule of 50 only on a
    score ending in 00) or exactly on the goal (``exact``); any other bank, a
    bust and an overshoot are worth 0. The values of the states are the
    `LastTurn` tables'; rolling is their backup (`TurnKernel.roll_tables`).
    """
    d = rules.dice
    bank_rules, end = last.bank, last.bank.end
    thr, possible, c = last.threshold(a, target)
    n = thr + 2
    t = np.arange(n)[:, None]
    m = np.arange(1, d + 1)[None, :]
    shape = (n, d)
    if possible:
        value = np.broadcast_to(last._lookup(last.value, np.full(shape, c), thr - t, m), shape).copy()
    else:
        value = np.zeros(shape)
    if last.exact:
        value[-1] = 0.0  # the overshoot row
    new = a + t
    success = end.beats(new, target) & (bank_rules.fault(new) ^ True)
    can = bank_rules.allowed(a, t, m) & (end.overshoots(a, t) ^ True)
    bank = np.where(can, np.where(success & possible, 1.0, 0.0), NEG)
    kernel = last.kernel
    plain, predict = kernel.roll_tables(value, 0.0)
    roll = rolled(plain, predict)
    if last.exact:  # taking over past the goal: worth nothing (as `LastTurn.chance` counts it)
        roll[-1] = plain[-1] = 0.0
        if predict is not None:
            predict[-1] = 0.0
    choices = () if kernel.prediction is None else tuple(int(x) * UNIT for x in kernel.prediction.choices)
    keep = last.keeps(int(c), thr - np.arange(n))  # the keeps of the `LastTurn` pass (σ), on the same values
    return TurnRows(rules, np.array([thr]), np.array([0]), np.array([0.0]), bank, roll,
                    None if predict is None else plain[:, 1].copy(), predict, choices, last.period, keep=keep)


# -- the keeps of one roll, for the advice ------------------------------------------------
@dataclass(frozen=True)
class KeepChoice:
    """One legal keep of a roll: its value, and the move after it (`then`: win, bust, bank or roll)."""

    keep: tuple[int, ...]  # kept faces, sorted
    points: int  # points of the keep
    win: float  # value of the keep
    then: str  # "win" (an instant win), "bust" (an overshoot), "bank" or "roll"
    turn: int  # turn points after the keep
    dice: int  # dice in hand after the keep
    bank: float | None  # after the keep: value of banking (None when not allowed)
    roll: float | None  # after the keep: value of rolling on


def block_graph(block: Any) -> KeepGraph:
    """The roll classes of a block's ruleset (`KeepGraph`), whose keeps `TurnRows.keep` and `roll_keep` name."""
    return _classes(block.rules)[0]


def roll_keep(block: "TurnRows", r: Any, t: Any, counts: tuple[int, ...], doubled: bool = False) -> int:
    """The keep the solve took for the roll `counts` (dice per face) from turn units `t` of row `r`, after a
    right announcement where `doubled`: its index in the `KeepGraph` (`TurnRows.keep` of the roll's class)."""
    from ..dice import dice_tables

    graph, _ = _classes(block.rules)
    n = sum(counts)
    c = int(graph.roll_class[n - 1][dice_tables(block.rules)[n].roll_index(counts)])
    if c < 0:
        raise CinqmilleError("a roll that scores nothing has no keep")
    return int(block.keep(r, t, c, doubled))


def same_keep(graph: KeepGraph, k: Any, units: Any, left: Any, win: Any, valid: Any = True) -> np.ndarray:
    """The first candidate along the last axis (`units` points, `left` dice in hand after, instant `win`;
    `valid` masks padding) that is the graph's keep `k` (one per row of candidates): same points, same dice
    in hand after, same win; keeps alike in all three are worth the same in every state."""
    k = np.asarray(k)[..., None]
    same = ((np.asarray(units) == graph.keep_units[k]) & (np.asarray(left) == graph.keep_next[k])
            & (np.asarray(win, dtype=bool) == graph.keep_win[k]) & np.asarray(valid, dtype=bool))
    return np.asarray(np.argmax(same, axis=-1))


def keep_choices(block: TurnRows, r: int, turn: int, faces: tuple[int, ...]) -> list[KeepChoice]:
    """Every legal keep of the roll `faces` with `turn` points set aside: the solve's keep first (`roll_keep`),
    then the others from best to worst (ties in the dice table's order)."""
    from ..dice import counts_of, dice_tables, faces_of

    rules = block.rules
    d = rules.dice
    table = dice_tables(rules)[len(faces)]
    ks = np.array(table.keeps_of(table.roll_index(counts_of(faces))), dtype=np.int64)
    if not len(ks):
        return []
    win = table.keep_win[ks].astype(bool)
    points = table.keep_points[ks].astype(np.int64)
    units = np.where(win, 0, points // UNIT)
    left = np.where(table.keep_left[ks] == 0, d, table.keep_left[ks]).astype(np.int64)
    t0 = turn // UNIT
    values = block.keep_values(r, t0, units, left, win)
    taken = same_keep(_classes(rules)[0], roll_keep(block, r, t0, counts_of(faces)), units, left, win)
    t2 = t0 + units
    move = block.move(r, t2, left)
    bank, roll = block.bank(r, t2, left), block.roll(r, t2, left)
    over = block.exact & (t2 > block.cap[r])
    out = []
    for j in ranking(values, block.tie, taken):
        then = "win" if win[j] else "bust" if over[j] else "bank" if move[j] == 0 else "roll"
        plain = then in ("bank", "roll")
        kept: Any = tuple(int(x) for x in table.keep_dice[ks[j]])
        out.append(KeepChoice(faces_of(kept), int(points[j]),
                              float(values[j]), then, int(t2[j]) * UNIT, int(left[j]),
                              float(bank[j]) if plain and bank[j] > NEG else None,
                              float(roll[j]) if plain else None))
    return out


# -- expected points of a turn under the policy, and bust chances ---------------------------
@lru_cache(maxsize=16)
def _classes(rules: Rules) -> tuple[KeepGraph, Prediction | None]:
    """The kernel's roll classes of `rules` (and the two-dice classes of each announcement)."""
    graph = build_keep_graph(rules)
    return graph, Prediction.of(graph) if rules.prediction and rules.dice >= 2 else None


@lru_cache(maxsize=16)
def bust_odds(rules: Rules) -> tuple[dict[int, Fraction], dict[int, Fraction]]:
    """Exact chances that a roll fails at once: a bust of `m` dice; a wrong announcement of `v` points (or a bust).

    An announcement is right when the best keep of the two dice scores exactly `v`.
    """
    from ..dice import dice_tables

    tables = dice_tables(rules)
    plain = {m: Fraction(t.bust_ways, 6**m) for m, t in tables.items()}
    right: dict[int, int] = {}
    if rules.dice >= 2:
        two = tables[2]
        for r in range(len(two.ways)):
            ks = two.keeps_of(r)
            if len(ks):
                best_points = int(two.keep_points[ks.start:ks.stop].max())
                right[best_points] = right.get(best_points, 0) + int(two.ways[r])
    return plain, {v: Fraction(36 - n, 36) for v, n in right.items()}


@dataclass(frozen=True, eq=False)
class TurnExpectation:
    """Expected points that one row's turn banks from each state, following the policy (module docstring).

    Real layers ``t = 0 .. last`` are stored; past them (``reach``) a state is
    worth ``50 alpha t + beta`` with the coefficients of its terminal layer
    (``(t - cap) % period``), and under ``exact`` an overshoot banks 0.
    """

    rules: Rules
    a: int  # the mover's banked score, units
    cap: int
    period: int
    exact: bool
    state_e: np.ndarray  # (last + 1, D) following the policy's move
    plain_e: np.ndarray  # (last + 1, D) rolling plainly, then following the policy
    predict_e: np.ndarray | None  # (last + 1, V) announcing each choice before rolling two dice
    terminal: dict[str, tuple[np.ndarray, np.ndarray]]  # "state", "plain", "predict": (alpha, beta) per period
    win_chance: np.ndarray  # (D,) chance that a roll of m dice offers an instant win (the policy takes it)

    def _read(self, name: str, real: np.ndarray, t: Any, col: Any) -> np.ndarray:
        t, col = np.broadcast_arrays(np.asarray(t, dtype=np.int64), np.asarray(col, dtype=np.int64))
        last = len(real) - 1
        inside = real[np.minimum(t, last), col]
        if self.exact:  # past the goal (a turn taken over there) only an instant win banks anything
            won = self.win_chance[col] * (UNIT * t + self.rules.goal) if name == "plain" else 0.0
            return np.where(t <= last, inside, won)
        alpha, beta = self.terminal[name]
        j = np.maximum(t - self.cap, 0) % self.period
        return np.asarray(np.where(t <= last, inside, UNIT * alpha[j, col] * t + beta[j, col]))

    def bank(self, t: Any) -> np.ndarray:
        """Points that banking `t` units adds to the score (0 for a void or faulty bank)."""
        return bank_gain(self.rules, self.a, t)

    def state(self, t: Any, m: Any) -> np.ndarray:
        """Expected points banked from (t units, m dice in hand), following the policy's move."""
        return self._read("state", self.state_e, t, np.asarray(m) - 1)

    def moves(self, t: int, m: int) -> np.ndarray:
        """Per move of `TurnRows.moves` (bank, roll plainly, announce each choice): the expected points banked."""
        out = [float(self.bank(t)), float(self._read("plain", self.plain_e, t, m - 1))]
        if self.predict_e is not None:
            v = self.predict_e.shape[1]
            out += list(self._read("predict", self.predict_e, t, np.arange(v)) if m == 2 else [np.nan] * v)
        return np.array(out, dtype=float)


def bank_gain(rules: Rules, a: int, t: Any) -> np.ndarray:
    """Points that banking `t` units adds to banked `a` (units): what a final-stretch cap leaves, 0 if void or a fault."""
    kind, new, _ = BankRules.of(rules).outcome(a, np.asarray(t, dtype=np.int64))
    return np.where(kind == SCORED, (new - a) * UNIT, 0).astype(float)


class TurnPlay(Protocol):
    """What the turn passes (`_backward`, `turn_distributions`) read of a policy: its rows' caps, its move in
    each state and its keep in each roll class (`TurnRows.taken`: the solve's own).

    `TurnRows` (the solved policy and every block of rows) is one; a rule of
    thumb written as a block of rows (`research.card`) is another, so that the
    same passes give the outcome of a turn under any table of decisions.
    """

    rules: Rules
    dice: int
    exact: bool
    cap: np.ndarray
    tie: float

    def move(self, r: Any, t: Any, m: Any) -> np.ndarray: ...

    def taken(self, r: Any, t: Any, doubled: bool = False) -> np.ndarray: ...


def _per_class(classes: KeepGraph | Prediction, pick: np.ndarray, per_keep: np.ndarray,
               failed: np.ndarray | None = None) -> np.ndarray:
    """Sum over roll classes of their chance times the figure of the policy's keep (`pick`, `TurnRows.taken`).

    `per_keep` holds a figure per keep, (n, K) -> (n, D), or a vector per keep,
    (n, K, W) -> (n, D, W); a failed roll (a bust, a wrong announcement) adds
    its chance times `failed` (W,), or counts 0 when `failed` is None.
    """
    if per_keep.ndim == 2:
        out = np.take_along_axis(per_keep, pick, axis=1) @ classes.class_prob
    else:
        picked = np.take_along_axis(per_keep, pick[..., None], axis=1)  # (n, C, W)
        out = np.swapaxes(np.swapaxes(picked, 1, 2) @ classes.class_prob, 1, 2)
    if failed is not None:
        out = out + classes.bust_prob[:, None] * failed
    return np.asarray(out)


@dataclass(frozen=True, eq=False)
class _Ends:
    """What each end of a turn puts into the vector (width W) that the backward pass carries per state.

    The expected points carry one number (the points banked); a distribution
    carries the chance of each outcome (one slot per outcome).
    """

    width: int
    bank: Any  # turn units (n,) -> (n, W): a bank of t
    win: Any  # turn units t -> (W,): an instant win with t set aside
    failed: np.ndarray | None  # (W,): a bust or a wrong announcement (None: counts 0)
    beyond: Any  # turn units (n,) past the pass's last layer -> (n, D, W): what those states are worth


def _backward(block: TurnRows, r: int, last: int, ends: _Ends) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The turn of row `r` under the policy, backward over layers ``last .. 0``: per state a vector (`ends`).

    ``X(t, m)`` is, by the policy's move (`TurnRows.move`): a bank,
    ``ends.bank(t)``; a roll, ``sum_c P(c) X(t + p_k, m_k) + P(bust) ends.failed``
    over the roll classes, ``k`` the policy's keep of class ``c`` (`TurnRows.taken`),
    an instant win being ``ends.win(t)``; an announcement, the same over the
    two-dice classes that score it, the turn doubled. Every keep lands on a
    later layer; layers past `last` are ``ends.beyond``. Returns the states'
    vectors (last + 1, D, W), those of rolling plainly (last + 1, D, W) and of
    each announcement (last + 1, V, W) or None.
    """
    graph, pred = _classes(block.rules)
    d = block.dice
    m_all = np.arange(1, d + 1)
    reach_units = int(graph.max_units) if pred is None else 2 * int(max(graph.max_units, pred.keep_units.max()))
    top = 2 * (last + 1) + reach_units + 1
    layers = np.zeros((top, d, ends.width))  # the vector of every state a keep can reach; flat below
    layers[last + 1:] = ends.beyond(np.arange(last + 1, top))
    flat = layers.reshape(top * d, ends.width)
    state = np.zeros((last + 1, d, ends.width))
    plain = np.zeros((last + 1, d, ends.width))
    predict = None if pred is None else np.zeros((last + 1, len(pred.choices), ends.width))
    slot = graph.keep_units * d + graph.keep_next - 1
    slot_p = None if pred is None else 2 * pred.keep_units * d + pred.keep_next - 1
    chunk = 256
    for hi in range(last, -1, -chunk):
        ts = np.arange(max(hi - chunk + 1, 0), hi + 1)
        move = block.move(np.full((len(ts), d), r), ts[:, None], m_all[None, :])
        banked = ends.bank(ts)
        pick = block.taken(r, ts, False)
        pick_p = None if pred is None else block.taken(r, ts, True)
        for i in range(len(ts) - 1, -1, -1):
            t = int(ts[i])
            won = ends.win(t)
            ek = np.where(graph.keep_win[:, None], won, flat[t * d + slot])
            plain[t] = _per_class(graph, pick[i:i + 1], ek[None], ends.failed)[0]
            row = np.where((move[i] == 0)[:, None], banked[i], plain[t])
            if predict is not None and pred is not None and pick_p is not None and slot_p is not None:
                ek = np.where(pred.keep_win[:, None], won, flat[2 * t * d + slot_p])
                predict[t] = _per_class(pred, pick_p[i:i + 1], ek[None], ends.failed)[0]
                if move[i, 1] >= 2:
                    row[1] = predict[t, move[i, 1] - 2]
            state[t] = row
            flat[t * d:(t + 1) * d] = row
    return state, plain, predict


def turn_expectation(block: TurnRows, r: int, a: int, tol: float = 1e-13,
                     max_iter: int = 100_000) -> TurnExpectation:
    """Expected points banked from every state of row `r` (banked `a` units) under the table's decisions."""
    rules = block.rules
    graph, pred = _classes(rules)
    d, per, exact = rules.dice, block.period, block.exact
    cap = int(block.cap[r])
    last = cap if exact else cap - 1  # past `last`: overshoots (exact) or terminal states (reach)
    goal = float(rules.goal)
    m_all = np.arange(1, d + 1)
    v = 0 if pred is None else len(pred.choices)

    # terminal states (reach): E = 50 alpha t + beta, one (alpha, beta) per layer cap + j and dice in hand
    terminal: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if not exact:
        tj = cap + np.arange(per)
        move = block.move(np.full((per, d), r), tj[:, None], m_all[None, :])
        g0, g1 = bank_gain(rules, a, tj), bank_gain(rules, a, tj + per)
        bank_alpha = (g1 - g0) / (UNIT * per)
        bank_beta = g0 - UNIT * bank_alpha * tj
        pick = block.taken(r, tj, False)
        pick_p = None if pred is None else block.taken(r, tj, True)
        alpha, beta = np.zeros((per, d)), np.zeros((per, d))
        for _ in range(max_iter):
            j2 = (tj[:, None] + graph.keep_units - cap) % per
            ak = np.where(graph.keep_win, 1.0, alpha[j2, graph.keep_next - 1])
            bk = np.where(graph.keep_win, goal, UNIT * ak * graph.keep_units + beta[j2, graph.keep_next - 1])
            plain = (_per_class(graph, pick, ak), _per_class(graph, pick, bk))
            new_a = np.where(move == 0, bank_alpha[:, None], plain[0])
            new_b = np.where(move == 0, bank_beta[:, None], plain[1])
            if pred is not None and pick_p is not None:
                j2 = (2 * (tj[:, None] + pred.keep_units) - cap) % per
                a2 = alpha[j2, pred.keep_next - 1]
                ak2 = np.where(pred.keep_win, 1.0, 2 * a2)
                bk2 = np.where(pred.keep_win, goal, 2 * UNIT * a2 * pred.keep_units + beta[j2, pred.keep_next - 1])
                announce = (_per_class(pred, pick_p, ak2), _per_class(pred, pick_p, bk2))
                pick_v = np.clip(move[:, 1] - 2, 0, v - 1)
                new_a[:, 1] = np.where(move[:, 1] >= 2, announce[0][np.arange(per), pick_v], new_a[:, 1])
                new_b[:, 1] = np.where(move[:, 1] >= 2, announce[1][np.arange(per), pick_v], new_b[:, 1])
            delta = max(np.abs(new_a - alpha).max(), np.abs(new_b - beta).max() / max(goal, 1.0))
            alpha, beta = new_a, new_b
            if delta < tol:
                break
        terminal["state"] = (alpha, beta)
        terminal["plain"] = plain
        if pred is not None:
            terminal["predict"] = announce

    def beyond(t_out: np.ndarray) -> np.ndarray:
        """Past the real layers: an overshoot banks 0 (exact); a terminal state its affine value (reach)."""
        if exact:
            return np.zeros((len(t_out), d, 1))
        alpha, beta = terminal["state"]
        j = (t_out - cap) % per
        return np.asarray(UNIT * alpha[j] * t_out[:, None] + beta[j])[..., None]

    ends = _Ends(1, lambda ts: bank_gain(rules, a, ts)[:, None], lambda t: np.array([t * UNIT + goal]), None, beyond)
    state_e, plain_e, predict_e = _backward(block, r, last, ends)
    win_chance = np.maximum.reduceat(graph.keep_win.astype(float), graph.class_start) @ graph.class_prob
    return TurnExpectation(rules, int(a), cap, per, exact, state_e[..., 0], plain_e[..., 0],
                           None if predict_e is None else predict_e[..., 0], terminal, win_chance)


# -- the distribution of the points a turn banks under the policy ---------------------------
#: Largest chance that a distribution leaves out (turns that pass its horizon, under ``reach``: `turn_distribution`).
TRUNCATION = 1e-14
#: The horizon of a distribution stops growing past this many goals of turn points (its `truncated` says what is left).
HORIZON = 32


@dataclass(frozen=True)
class TurnPoints:
    """The outcome of the rest of a turn played by the policy from one state: exact chances.

    `points` maps the points banked to their chance (0: a bust, an overshoot, a
    wrong announcement, or a bank that scores nothing); `wins` maps the turn
    points set aside at an instant win to its chance; `bust` is the chance that
    the turn ends on a failed roll; `truncated` the chance left out (turns that
    pass the horizon, at most `TRUNCATION`). The chances sum to 1.
    """

    points: dict[int, float]
    wins: dict[int, float]
    bust: float
    truncated: float
    goal: int

    @property
    def mean(self) -> float:
        """Mean points banked, an instant win counting its turn points plus the goal (as the `expected` figure)."""
        return (sum(x * p for x, p in self.points.items())
                + sum((t + self.goal) * p for t, p in self.wins.items()))

    @property
    def win(self) -> float:
        """Chance of an instant win."""
        return sum(self.wins.values())


@dataclass(frozen=True, eq=False)
class TurnDistribution:
    """The chance of each outcome of many turns (one per row of the pass), each from its start state.

    ``banked[i, g]``: the chance that turn ``i`` banks ``g`` units (a failed
    roll banks 0 and is counted here too); ``wins[i, t]``: an instant win with
    ``t`` units set aside; ``failed[i]``: a failed roll (a bust, a wrong
    announcement, an overshoot of an exact goal); ``lost[i]``: the chance left
    out past the horizon (`TurnPoints.truncated`).
    """

    rules: Rules
    banked: np.ndarray  # (n, G) float
    wins: np.ndarray  # (n, T) float
    failed: np.ndarray  # (n,)
    lost: np.ndarray  # (n,)

    def at(self, i: int = 0) -> TurnPoints:
        """The outcome of turn `i` as a `TurnPoints`."""
        banked, wins = self.banked[i], self.wins[i]
        return TurnPoints({int(g) * UNIT: float(banked[g]) for g in np.flatnonzero(banked > 0)},
                          {int(t) * UNIT: float(wins[t]) for t in np.flatnonzero(wins > 0)},
                          float(self.failed[i]), float(self.lost[i]), self.rules.goal)


def _grown(buffer: np.ndarray, size: int) -> np.ndarray:
    """`buffer` with axis 1 at least `size` long (zeros appended, doubling)."""
    if buffer.shape[1] >= size:
        return buffer
    pad = [(0, 0)] * buffer.ndim
    pad[1] = (0, max(size, 2 * buffer.shape[1]) - buffer.shape[1])
    return np.pad(buffer, pad)


def turn_distributions(block: TurnPlay, rows: Any, a: Any, t: int = 0, m: int | None = None,
                       tol: float = TRUNCATION, gain: Any = None, chunk: int = 2048) -> TurnDistribution:
    """The exact distribution of the outcome of the turns of `rows` (banked `a` units, per row) from the state
    (`t` units, `m` dice; default all of them) under the table's decisions, all rows in one pass.

    A forward pass over the turn's layers, ``t`` upward: the chance of reaching
    each state ``(t, m)`` moves, by the policy's move there (`TurnRows.move`),
    to a bank of ``gain(a, t)`` points (default `bank_gain`); or, rolling, to
    the state after the policy's keep of each roll class (`TurnRows.taken`, the keeps
    that `_backward` and the advice read), an instant win, or a failed roll
    with the bust chance; or, announcing, the same over the two-dice classes
    that score the announcement, the turn doubled, a wrong one failing. Every
    keep lands on a later layer. Under ``exact`` a keep past the cap is an
    overshoot (failed). Under ``reach`` a turn may go on past the cap (a full
    hand that must be rolled, `min_bank`): the pass goes on until the chance
    still in play is at most `tol` from every row, or `HORIZON` goals past the
    cap; that chance is `lost`. One row is the case ``rows = [r]``.
    """
    rules = block.rules
    rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
    a = np.broadcast_to(np.asarray(a, dtype=np.int64), rows.shape)
    gain = (lambda aa, ts: bank_gain(rules, aa, ts)) if gain is None else gain
    parts = [_forward(block, rows[lo:lo + chunk], a[lo:lo + chunk], int(t), rules.dice if m is None else int(m),
                      tol, gain) for lo in range(0, len(rows), chunk)]
    def joined(i: int) -> np.ndarray:
        width = max(p[i].shape[1] for p in parts)
        return np.concatenate([np.pad(p[i], ((0, 0), (0, width - p[i].shape[1]))) for p in parts])

    return TurnDistribution(rules, joined(0), joined(1),
                            np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]))


def _forward(block: TurnPlay, rows: np.ndarray, a: np.ndarray, t0: int, m0: int, tol: float,
             gain: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`turn_distributions` of a chunk of rows: (banked, wins, failed, lost)."""
    rules = block.rules
    graph, pred = _classes(rules)
    n, d = len(rows), rules.dice
    caps = block.cap[rows]
    top = int(caps.max()) + 2
    end = top if block.exact else top + HORIZON * (rules.goal // UNIT)
    m_all = np.arange(1, d + 1)
    class_m = np.argmax(graph.class_prob > 0, axis=1)  # (C,) the column (dice - 1) each class is rolled with
    class_p = graph.class_prob[np.arange(len(class_m)), class_m]
    mass = np.zeros((n, max(top, t0 + 1) + 2 * graph.max_units + 2, d))
    mass[:, t0, m0 - 1] = 1.0
    banked = np.zeros((n, top + 1))
    wins = np.zeros((n, top + 1))
    failed, lost = np.zeros(n), np.zeros(n)
    inflight = np.ones(n)  # the chance still in play, per row (to stop under reach)
    t = hi = t0  # the layer, and the last one that holds any chance
    while True:
        here = mass[:, t]
        act = np.flatnonzero(here.any(axis=1))
        if len(act):
            w, rr = here[act], rows[act]
            tt = np.full(len(act), t)
            move = block.move(rr[:, None], t, m_all[None, :])
            points = np.asarray(gain(a[act], tt), dtype=float)
            g = (points // UNIT).astype(np.int64)
            banked = _grown(banked, int(g.max()) + 1)
            wins = _grown(wins, t + 1)
            np.add.at(banked, (act, g), (w * (move == 0)).sum(axis=1))
            flows: list[tuple[np.ndarray, KeepGraph | Prediction, np.ndarray, np.ndarray]] = []
            rolls = w * (move == 1)
            if rolls.any():
                pick = block.taken(rr, tt, False)
                flows.append((rolls[:, class_m] * class_p, graph, pick, t + graph.keep_units[pick]))
                failed[act] += rolls @ graph.bust_prob
            if pred is not None and (move[:, 1] >= 2).any():
                j = np.clip(move[:, 1] - 2, 0, len(pred.choices) - 1)
                said = np.where(move[:, 1] >= 2, w[:, 1], 0.0)
                pick = block.taken(rr, tt, True)
                flows.append((said[:, None] * pred.class_prob[:, j].T, pred, pick, 2 * (t + pred.keep_units[pick])))
                failed[act] += said * pred.bust_prob[j]
            for chance, classes, pick, t2 in flows:
                won = classes.keep_win[pick]
                wins[act, t] += (chance * won).sum(axis=1)
                over = (t2 > caps[act, None]) if block.exact else (t2 >= end)
                (failed if block.exact else lost)[act] += (chance * (over & ~won)).sum(axis=1)
                go = ~won & ~over & (chance > 0)
                ii, cc = np.nonzero(go)
                if len(ii):
                    hi = max(hi, int(t2[ii, cc].max()))
                    mass = _grown(mass, hi + 1)
                    np.add.at(mass, (act[ii], t2[ii, cc], classes.keep_next[pick[ii, cc]] - 1), chance[ii, cc])
                    inflight += np.bincount(act[ii], weights=chance[ii, cc], minlength=n)
            inflight[act] -= w.sum(axis=1)
        mass[:, t] = 0.0
        t += 1
        if t > hi or t >= end or (not block.exact and float(inflight.max()) <= tol):
            break
    left = mass[:, t:hi + 1].sum(axis=(1, 2)) if t <= hi else np.zeros(n)
    banked[:, 0] += failed
    return banked, wins, failed, lost + left


def turn_distribution(block: TurnRows, r: int, a: int, t: int = 0, m: int | None = None,
                      tol: float = TRUNCATION, gain: Any = None) -> TurnPoints:
    """The exact distribution of the outcome of row `r`'s turn (banked `a` units) from (`t` units, `m` dice)
    under the table's decisions: `turn_distributions` of one row."""
    return turn_distributions(block, [r], [a], t, m, tol, gain).at(0)
