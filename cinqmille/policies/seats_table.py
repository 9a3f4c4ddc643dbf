"""The three-player policy table: every row ``(a, b, c)`` of a solved three-player result, for the engine.

`SolveResult.seats_spot` (the advice) computes one row of the three-player
policy when it is asked: one kernel pass of the mover against his two
opponents (`n_player.seat_rows`), whose values make a `TurnRows` block; its
functions (`TurnRows.move`, `TurnRows.keep`, ...) take every decision. A game
visits thousands of rows, so the engine policy `optimal` and the simulator read
them from one table:

- a *group* is the rows of one mover score ``a`` and first opponent ``b``
  against `GROUP` consecutive scores ``c`` of the second opponent, computed by
  `seat_rows` (one kernel pass for the group), when first read;
- of each group the table keeps, per turn state ``(t, m)``, the state's value
  (`TurnRows.value`, which the keeps are chosen by) and the move that
  `TurnRows.move` chooses there (0 bank, 1 roll, 2 + j announce), and per layer
  the announcement `TurnRows.announcement` chooses: every decision is the
  `TurnRows` block's, stored, not computed again by other code (a test checks
  each against the advice's row on every state of small rulesets);
- the complete table (`complete`) is cached in the solver's cache directory
  (``.npz``, keyed by ruleset and solver version), so that simulation batches
  in other processes read it instead of computing it again.

Rows are laid out like the two-player table's: row ``(ia * S + ib) * S + ic``
(indices into the ruleset's possible scores) owns ``cap(a) + 2`` layers.
Take-over offers are not in the three-player solve (solved as if the rule were
off); the table declines them (`takes_over` is False), as the rule being off
would have it.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules, content_key
from ..solver import cache
from ..solver.kernel import UNIT
from ..solver.n_player import seat_rows
from ..solver.policy import LazyGroups, TurnRows, differs, layout_problem, sample_groups
from ..solver.result import SolveResult
from ..solver.seats import pass_dice

#: Rows (second opponent's scores) computed by one kernel pass: every score of the second opponent for the
#: rulesets solved for three players (larger passes cost less per row).
GROUP = 128
TABLE_FORMAT = 1


class SeatsTable(LazyGroups, TurnRows):
    """The three-player policy, every row (a, b, c): values and moves of each turn state (module docstring)."""

    group_size = GROUP

    def __init__(self, rules: Rules, scores: np.ndarray, caps: np.ndarray, value: np.ndarray, move: np.ndarray,
                 announce: np.ndarray | None, choices: tuple[int, ...], period: int, source: SolveResult | None = None,
                 exact_solve: bool = True, assumptions: tuple[str, ...] = ()):
        s = len(scores)
        self.scores = np.asarray(scores, dtype=np.int64)
        self.mover_caps = np.asarray(caps, dtype=np.int64)  # (S,) cap of the mover's score
        goal = rules.goal // UNIT
        self.index = np.full(goal, -1, dtype=np.int64)
        self.index[self.scores] = np.arange(s)
        per_mover = (self.mover_caps + 2) * s * s
        base = np.concatenate([[0], np.cumsum(per_mover)[:-1]]).astype(np.int64)
        offset = (base[:, None] + np.arange(s * s)[None, :] * (self.mover_caps + 2)[:, None]).reshape(-1)
        cap = np.repeat(self.mover_caps, s * s)
        self.move_v = move  # (layers, D) int8: the move `TurnRows.move` chose
        self.announce_v = announce  # (layers,) int8: index into (0,) + choices of `TurnRows.announcement`
        super().__init__(rules, cap, offset, np.zeros(len(cap)), np.empty((0, rules.dice)), np.empty((0, rules.dice)),
                         None, None, choices, period, ready=False)
        self.value_v = value
        self.exact_solve = exact_solve
        self.assumptions = tuple(assumptions)
        self._source = source
        self._chunks = -(-s // GROUP)
        self._done = np.full(s * s * self._chunks, source is None)
        self._lock = threading.Lock()

    @classmethod
    def of(cls, result: SolveResult) -> "SeatsTable":
        """The table of a solved three-player `win` result; its groups are computed when first read."""
        if result.objective != "win" or result.players != 3:
            raise ValueError("the three-player policy table needs a three-player result of the 'win' objective")
        rules, grid, kernel = result.rules, result.grid, result.kernel
        scores = grid.scores.astype(np.int64)
        s = len(scores)
        caps = grid.cap(scores).astype(np.int64)
        layers = int(((caps + 2) * s * s).sum())
        d = rules.dice
        pred = kernel.prediction
        choices = () if pred is None else tuple(int(c) * UNIT for c in pred.choices)
        return cls(rules, scores, caps, np.empty((layers, d)), np.empty((layers, d), dtype=np.int8),
                   None if pred is None else np.empty(layers, dtype=np.int8), choices, kernel.period, source=result,
                   exact_solve=result.exact, assumptions=tuple(result.assumptions))

    # -- building ------------------------------------------------------------------------
    def _group(self, g: int) -> None:
        """Compute group g (mover index ia, first opponent ib, a chunk of second opponents): one kernel pass."""
        assert self._source is not None
        cells, computed = self._group_arrays(g, self._source)
        for name, values in computed.items():
            getattr(self, name)[cells] = values

    def _group_arrays(self, g: int, result: SolveResult) -> tuple[slice, dict[str, np.ndarray]]:
        """(cells, arrays) of group g computed from the three-player `result` by one kernel pass (`seat_rows`):
        the values of `value_v`, `move_v` (and `announce_v`) in those cells."""
        s = len(self.scores)
        pair, chunk = divmod(g, self._chunks)
        ia, ib = divmod(pair, s)
        ic = np.arange(chunk * GROUP, min((chunk + 1) * GROUP, s))
        others = np.stack([np.full(len(ic), self.scores[ib]), self.scores[ic]], axis=1)
        block = seat_rows(result, int(self.scores[ia]), others)
        n = int(self.mover_caps[ia]) + 2
        rows = (ia * s + ib) * s + ic
        start = int(self.offset[rows[0]])
        k, d = len(ic), self.dice
        local = np.repeat(np.arange(k), n * d).reshape(k, n, d)
        t = np.broadcast_to(np.arange(n)[None, :, None], (k, n, d))
        m = np.broadcast_to(np.arange(1, d + 1)[None, None, :], (k, n, d))
        out: dict[str, np.ndarray] = {"value_v": block.value_v.reshape(-1, d), "move_v": block.move(local, t, m).reshape(-1, d)}
        if self.announce_v is not None:
            j = block.announcement(local[:, :, 0], t[:, :, 0])
            out["announce_v"] = np.searchsorted(np.array((0,) + self.choices), j).reshape(-1)
        return slice(start, start + k * n), out

    def _sample_problem(self, result: SolveResult) -> str | None:
        """Why this complete table is not the one of `result`: moves outside their enumeration, turn starts
        that are not the result's chances, or a sample of groups recomputed that differs (None when it is)."""
        d, v = self.dice, len(self.choices)
        move, announce = self.move_v, self.announce_v
        if move.min(initial=0) < 0 or move.max(initial=0) > 1 + v or (v and (np.delete(move, 1, axis=1) > 1).any()):
            return "array 'move' holds moves outside 0 (bank), 1 (roll), 2 + j (announce, two dice only)"
        if announce is not None and (announce.min(initial=0) < 0 or announce.max(initial=0) > v):
            return "array 'announce' holds announcements outside the ruleset's"
        s = len(self.scores)
        r = np.arange(len(self.cap))
        start = self.value(r, np.zeros_like(r), np.full(len(r), d))
        idx = self.scores[np.stack([r // (s * s), (r // s) % s, r % s])]
        if differs(start, result.values[idx[0], idx[1], idx[2], 0], 1e-9):
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
        out = {"scores": self.scores, "caps": self.mover_caps, "value": self.value_v, "move": self.move_v,
               "choices": np.array(self.choices, dtype=np.int64)}
        if self.announce_v is not None:
            out["announce"] = self.announce_v
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
            layers = int(((caps + 2) * s * s).sum())
            pred = kernel.prediction
            want: dict[str, Any] = {
                "scores": scores, "caps": caps,
                "choices": np.array(() if pred is None else tuple(int(c) * UNIT for c in pred.choices), dtype=np.int64),
                "value": (layers, d), "move": (layers, d), "announce": () if pred is None else (layers,)}
            why = layout_problem(dict(arrays), period, want, kernel.period)
            if why:
                raise cache.CorruptTable(why)
        table = cls(rules, arrays["scores"], arrays["caps"], arrays["value"], arrays["move"], arrays.get("announce"),
                    tuple(int(c) for c in arrays["choices"]), period, exact_solve=exact_solve, assumptions=assumptions)
        if check is not None:
            why = table._sample_problem(check)
            if why:
                raise cache.CorruptTable(why)
        return table

    # -- where a position is read ------------------------------------------------------------
    def row(self, a: int, b: int, c: int) -> int:
        """Row of banked scores `a` (the mover), `b`, `c` (units, playing order); raises for a score that cannot occur."""
        s = len(self.scores)
        idx = []
        for x in (a, b, c):
            i = int(self.index[x]) if 0 <= x < len(self.index) else -1
            if i < 0:
                raise CinqmilleError("a banked score that cannot occur under this ruleset (or at the goal)")
            idx.append(i)
        return (idx[0] * s + idx[1]) * s + idx[2]

    def rows(self, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Rows of arrays of banked scores (units, playing order from the mover; all possible scores)."""
        s = len(self.scores)
        return (self.index[a] * s + self.index[b]) * s + self.index[c]

    # -- the decisions, as `TurnRows` chose them --------------------------------------------
    def move(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """The move `TurnRows.move` chose: 0 bank, 1 roll plainly, 2 + j announce `choices[j]`."""
        return np.take(self.move_v.reshape(-1), self._cell(r, t, m)).astype(np.int64)

    def announcement(self, r: Any, t: Any) -> np.ndarray:
        """Points announced before rolling the last two dice, 0 to roll them plainly (as `TurnRows` chose)."""
        r = np.asarray(r)
        if self.announce_v is None:
            return np.zeros(np.broadcast(r, t).shape, dtype=np.int64)
        return np.array((0,) + self.choices, dtype=np.int64)[np.take(self.announce_v, self.layer(r, t))]

    def takes_over(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Never: take-over offers are solved as if the rule were off for three players."""
        return np.zeros(np.broadcast(np.asarray(r), np.asarray(t), np.asarray(m)).shape, dtype=bool)

    def moves(self, r: Any, t: Any, m: Any) -> np.ndarray:
        raise CinqmilleError("the three-player table keeps moves, not the values of each option: "
                             "ask SolveResult.seats_spot for them")


# -- the table of a ruleset, in memory and in the cache -------------------------------------
def _table_path(rules: Rules) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)[:40]
    return cache.cache_dir() / f"{safe}-optimal3p-policy-t{TABLE_FORMAT}-{content_key(rules)}-{cache.solver_version()}.npz"


def _spec(rules: Rules) -> cache.TableSpec:
    arrays: dict[str, tuple[tuple[int, ...] | None, str]] = {
        "scores": (None, "int64"), "caps": (None, "int64"), "value": (None, "float64"), "move": (None, "int8"),
        "choices": (None, "int64")}
    if rules.prediction:
        arrays["announce"] = (None, "int8")

    def check(found: Mapping[str, np.ndarray]) -> str | None:
        s, d = len(found["scores"]), rules.dice
        layers = int(((found["caps"] + 2) * s * s).sum())
        if found["value"].shape != (layers, d) or found["move"].shape != (layers, d):
            return "arrays of inconsistent shapes"
        v = found["value"]
        if not np.isfinite(v).all() or (v < 0).any() or (v > 1).any():
            return "array 'value' holds values outside [0, 1]"
        return None

    return cache.TableSpec.of(rules, "policy", "win", 3, arrays, check)


_MEMO: dict[tuple[str, str], SeatsTable] = {}
_LOCK = threading.Lock()


def seats_of(result: SolveResult) -> SeatsTable:
    """The three-player policy table of a solved result, one per result: every bot of a game reads the same rows
    (a table per bot would reserve its arrays once per bot: 1.2 GiB of address space each under `standard`)."""
    found = result.__dict__.get("_seats_table")
    if found is None:
        with _LOCK:
            found = result.__dict__.setdefault("_seats_table", SeatsTable.of(result))
    return found


def seats_table(rules: Rules, use_cache: bool = True, complete: bool = False) -> SeatsTable:
    """The three-player policy table of a ruleset: from memory, from the cache directory, or built.

    Built lazily (groups computed when first read) unless `complete`; a
    complete table is written to the cache, so that other processes read it.
    """
    from ..solver.api import solve

    key = (content_key(rules), str(cache.cache_dir()))
    with _LOCK:
        found_memo = _MEMO.get(key)
    if found_memo is not None and found_memo.rules == rules:
        if complete and found_memo._source is not None:
            _save(found_memo.complete(), use_cache)
        return found_memo
    table = None
    path = _table_path(rules)
    if use_cache:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            try:
                found = cache.try_load(path, _spec(rules))
            except cache.UnreadableTable:
                found, said = None, []
        for warning in said:
            warnings.warn(warning.message, stacklevel=2)
        if found is not None:
            arrays, meta = found
            try:
                cache.check_meta(meta, {"format": int, "period": int, "exact": bool, "assumptions": list})
                if meta["format"] != TABLE_FORMAT:
                    raise cache.CorruptTable(f"a table of format {meta['format']}, expected {TABLE_FORMAT}")
                table = SeatsTable.from_arrays(rules, arrays, meta["period"], meta["exact"],
                                               tuple(meta["assumptions"]), check=solve(rules, "win", players=3))
            except cache.CorruptTable as exc:
                cache.discard(path, exc, stacklevel=3)
    if table is None:
        table = SeatsTable.of(solve(rules, "win", use_cache=use_cache, players=3))
        if complete:
            _save(table.complete(), use_cache)
    with _LOCK:
        if len(_MEMO) >= 2:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = table
    return table


def _save(table: SeatsTable, use_cache: bool) -> None:
    if not use_cache:
        return
    path = _table_path(table.rules)
    try:
        cache.save_npz(path, table.arrays(), {"format": TABLE_FORMAT, "period": table.period,
                                              "exact": table.exact_solve, "assumptions": list(table.assumptions),
                                              "rules": cache.rules_meta(table.rules)}, _spec(table.rules))
        cache.prune_stale(path)
    except (OSError, CinqmilleError):
        pass  # the solve has said so already if the cache directory cannot be written
