"""The policy table of three players or more: every row ``(a, b, c, ...)`` of a solved result, for the engine.

`SolveResult.seats_spot` (the advice) computes one row of an n-player policy
when it is asked: one kernel pass of the mover against his opponents
(`n_player.seat_rows`), whose values make a `TurnRows` block; its functions
(`TurnRows.move`, `TurnRows.keep`, ...) take every decision. A game visits
thousands of rows, so the engine policy `optimal` and the simulator read them
from one table, for any number of players the solver has (three or four):

- a *group* is the rows of one mover score ``a`` and the first ``n - 2``
  opponents against `SEATS_GROUP` consecutive scores of the last opponent,
  computed by `seat_rows` (one kernel pass for the group), when first read;
- of each group the table keeps, per turn state ``(t, m)``, the state's value
  and the move the kernel's pass took there (0 bank, 1 roll, 2 + j announce),
  per layer the announcement and the keep the pass took in every roll class
  (σ, `kernel.Decisions`): every decision is the solve's, stored, not computed
  again by other code (tests check each against the advice's row on every
  state of small rulesets);
- the complete table (`complete`) is cached by `policies.tables.policy_table`
  (``.npz``, keyed by ruleset, players and solver version), so that simulation
  batches in other processes read it instead of computing it again.

Rows are laid out like the two-player table's: row ``ravel(ia, ib, ..., iz)``
(indices into the ruleset's possible scores, the mover first, then the
opponents in playing order; `solver.locate` reads a position there) owns
``cap(a) + 2`` layers. Take-over offers are
not in the n-player solve (solved as if the rule were off); the table declines
them (`takes_over` is False), as the rule being off would have it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.end import UNIT
from ..solver import cache
from ..solver.kernel import TIE
from ..solver.n_player import seat_rows
from ..solver.choice import differs, layout_problem, sample_groups
from ..solver.policy import LazyGroups
from ..solver.rows import TurnRows
from ..solver.result import SolveResult

#: Rows (the last opponent's scores) computed by one kernel pass: every score of the last opponent for the
#: rulesets solved for three players or more (larger passes cost less per row).
SEATS_GROUP = 128


class SeatsTable(LazyGroups, TurnRows):
    """The policy of three players or more, every row (a, b, c, ...): values and moves of each turn state (module
    docstring)."""

    group_size = SEATS_GROUP
    move_v: np.ndarray  # (layers, D) int8: every state's move, as the solve's pass took it (never None here)

    def __init__(self, rules: Rules, scores: np.ndarray, caps: np.ndarray, value: np.ndarray, move: np.ndarray,
                 announce: np.ndarray | None, choices: tuple[int, ...], period: int, source: SolveResult | None = None,
                 exact_solve: bool = True, assumptions: tuple[str, ...] = (), players: int = 3,
                 keep: np.ndarray | None = None, told: np.ndarray | None = None):
        s = len(scores)
        self.players = players
        self.kinds = 1  # one kind of row per tuple of scores (`locate.kind`)
        self.scores = np.asarray(scores, dtype=np.int64)
        self.mover_caps = np.asarray(caps, dtype=np.int64)  # (S,) cap of the mover's score
        goal = rules.goal // UNIT
        self.index = np.full(goal, -1, dtype=np.int64)
        self.index[self.scores] = np.arange(s)
        per = s ** (players - 1)  # rows of one mover
        per_mover = (self.mover_caps + 2) * per
        base = np.concatenate([[0], np.cumsum(per_mover)[:-1]]).astype(np.int64)
        offset = (base[:, None] + np.arange(per)[None, :] * (self.mover_caps + 2)[:, None]).reshape(-1)
        cap = np.repeat(self.mover_caps, per)
        self.announce_v = announce  # (layers,) int8: index into (0,) + choices of `TurnRows.announcement`
        super().__init__(rules, cap, offset, np.zeros(len(cap)), np.empty((0, rules.dice)), np.empty((0, rules.dice)),
                         None, None, choices, period, ready=False, tie=TIE, move=move, keep=keep,
                         told=told)  # move_v, keep_v, told_v: the solve's decisions
        self.value_v = value
        self.exact_solve = exact_solve
        self.assumptions = tuple(assumptions)
        self._source = source
        self._chunks = -(-s // SEATS_GROUP)
        self._done = np.full(per * self._chunks, source is None)
        self._lock = threading.Lock()

    @staticmethod
    def layers(scores: np.ndarray, caps: np.ndarray, players: int) -> int:
        """Turn layers of the whole table (every row's ``cap + 2``)."""
        return int(((np.asarray(caps) + 2) * len(scores) ** (players - 1)).sum())

    @classmethod
    def of(cls, result: SolveResult) -> "SeatsTable":
        """The table of a solved three-player `win` result; its groups are computed when first read."""
        if result.objective != "win" or result.players < 3:
            raise ValueError("the n-player policy table needs a result of three players or more for 'win'")
        rules, grid, kernel = result.rules, result.grid, result.kernel
        scores = grid.scores.astype(np.int64)
        s = len(scores)
        caps = grid.cap(scores).astype(np.int64)
        layers = cls.layers(scores, caps, result.players)
        d = rules.dice
        pred = kernel.prediction
        choices = () if pred is None else tuple(int(c) * UNIT for c in pred.choices)
        return cls(rules, scores, caps, np.empty((layers, d)), np.empty((layers, d), dtype=np.int8),
                   None if pred is None else np.empty(layers, dtype=np.int8), choices, kernel.period, source=result,
                   exact_solve=result.exact, assumptions=tuple(result.assumptions), players=result.players,
                   keep=np.empty((layers, len(kernel.graph.choosing)), dtype=np.int8),
                   told=None if pred is None else np.empty((layers, len(pred.choosing)), dtype=np.int8))

    # -- building ------------------------------------------------------------------------
    def _group(self, g: int) -> None:
        """Compute group g (the mover's and the first n - 2 opponents' indices, a chunk of the last opponent's
        scores): one kernel pass."""
        assert self._source is not None
        cells, computed = self._group_arrays(g, self._source)
        for name, values in computed.items():
            getattr(self, name)[cells] = values

    def _group_arrays(self, g: int, result: SolveResult) -> tuple[slice, dict[str, np.ndarray]]:
        """(cells, arrays) of group g computed from the three-player `result` by one kernel pass (`seat_rows`):
        the values of `value_v`, `move_v` (and `announce_v`) in those cells."""
        s = len(self.scores)
        pair, chunk = divmod(g, self._chunks)
        ia, *first = (int(i) for i in np.unravel_index(pair, (s,) * (self.players - 1)))
        ic = np.arange(chunk * SEATS_GROUP, min((chunk + 1) * SEATS_GROUP, s))
        others = np.stack([np.full(len(ic), self.scores[ib]) for ib in first] + [self.scores[ic]], axis=1)
        block = seat_rows(result, int(self.scores[ia]), others)
        n = int(self.mover_caps[ia]) + 2
        rows = pair * s + ic
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
        return slice(start, start + k * n), out

    def _sample_problem(self, result: SolveResult) -> str | None:
        """Why this complete table is not the one of `result` (its moves' enumeration is checked on reading,
        `tables.table_spec`): turn starts that are not the result's chances, or a sample of groups recomputed
        that differs (None when it is)."""
        d = self.dice
        s = len(self.scores)
        r = np.arange(len(self.cap))
        start = self.value(r, np.zeros_like(r), np.full(len(r), d))
        idx = np.stack(np.broadcast_arrays(*(self.scores[i] for i in np.unravel_index(r, (s,) * self.players))),
                       axis=-1)
        if differs(start, result.seat_values(idx)[..., 0], 1e-9):  # seat 0's rows
            return "its turn starts are not the chances of the solved table"
        for g in sample_groups(len(self._done)):
            cells, computed = self._group_arrays(int(g), result)
            for name, values in computed.items():
                mine = getattr(self, name)[cells]
                if (differs(mine, values) if name == "value_v" else not np.array_equal(mine, values)):
                    return f"its rows of group {int(g)} differ from the kernel's ({name[:-2]})"
        return None

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays of the complete table (what the cache stores)."""
        self.complete()
        assert self.keep_v is not None
        out = {"scores": self.scores, "caps": self.mover_caps, "value": self.value_v, "move": self.move_v,
               "keep": self.keep_v, "choices": np.array(self.choices, dtype=np.int64)}
        if self.announce_v is not None:
            out["announce"] = self.announce_v
        if self.told_v is not None:
            out["told"] = self.told_v
        return out

    @classmethod
    def from_arrays(cls, rules: Rules, arrays: Mapping[str, np.ndarray], period: int, exact_solve: bool = True,
                    assumptions: tuple[str, ...] = (), check: SolveResult | None = None) -> "SeatsTable":
        """A complete table from `arrays()` (read back from the cache).

        With `check` (the three-player result it was built from) the table is
        checked first (`CorruptTable` says why): layout (scores, caps,
        announcements, period, shapes) as the ruleset's, moves within their
        enumeration, every row's turn start the result's chance, and
        `SAMPLE_GROUPS` groups recomputed by the kernel equal to the stored ones.
        """
        if check is not None:
            grid, kernel = check.grid, check.kernel
            scores = grid.scores.astype(np.int64)
            caps = grid.cap(scores).astype(np.int64)
            s, d = len(scores), rules.dice
            layers = cls.layers(scores, caps, check.players)
            pred = kernel.prediction
            want: dict[str, Any] = {
                "scores": scores, "caps": caps,
                "choices": np.array(() if pred is None else tuple(int(c) * UNIT for c in pred.choices), dtype=np.int64),
                "value": (layers, d), "move": (layers, d), "announce": () if pred is None else (layers,),
                "keep": (layers, len(kernel.graph.choosing)),
                "told": () if pred is None else (layers, len(pred.choosing))}
            why = layout_problem(dict(arrays), period, want, kernel.period)
            if why:
                raise cache.CorruptTable(why)
        players = check.players if check is not None else cls._players_of(arrays)
        table = cls(rules, arrays["scores"], arrays["caps"], arrays["value"], arrays["move"], arrays.get("announce"),
                    tuple(int(c) for c in arrays["choices"]), period, exact_solve=exact_solve, assumptions=assumptions,
                    players=players, keep=arrays["keep"], told=arrays.get("told"))
        if check is not None:
            why = table._sample_problem(check)
            if why:
                raise cache.CorruptTable(why)
        return table

    @classmethod
    def _players_of(cls, arrays: Mapping[str, np.ndarray]) -> int:
        """The number of players whose layout has as many layers as `arrays` (3 when none has)."""
        for players in range(3, 9):
            if cls.layers(arrays["scores"], arrays["caps"], players) == len(arrays["value"]):
                return players
        return 3

    # -- the decisions, as `TurnRows` chose them --------------------------------------------
    def announcement(self, r: Any, t: Any) -> np.ndarray:
        """Points announced before rolling the last two dice, 0 to roll them plainly (as `TurnRows` chose)."""
        r = np.asarray(r)
        if self.announce_v is None:
            return np.zeros(np.broadcast(r, t).shape, dtype=np.int64)
        points: np.ndarray = np.array((0,) + self.choices, dtype=np.int64)[np.take(self.announce_v, self.layer(r, t))]
        return points

    def takes_over(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Never: take-over offers are solved as if the rule were off for three players or more."""
        return np.zeros(np.broadcast(np.asarray(r), np.asarray(t), np.asarray(m)).shape, dtype=bool)

    def moves(self, r: Any, t: Any, m: Any) -> np.ndarray:
        raise CinqmilleError("the n-player table keeps moves, not the values of each option: "
                             "ask SolveResult.seats_spot for them")


_LOCK = threading.Lock()


def seats_of(result: SolveResult) -> SeatsTable:
    """The policy table of a solved result of three players or more, one per result: every bot of a game reads
    the same rows (a table per bot would reserve its arrays once per bot: 1.2 GiB of address space each under
    three-player `standard`)."""
    found: SeatsTable | None = result.__dict__.get("_seats_table")
    if found is None:
        with _LOCK:
            found = result.__dict__.setdefault("_seats_table", SeatsTable.of(result))
    return found
