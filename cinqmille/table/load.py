"""The policy table of a ruleset and a number of players, from memory, from the cache directory, or built.

One loader for every table size: `policy_table(rules, players)` gives the
`PolicyTable` of `players` seats (`cinqmille.table.policy`: the solve's
decisions, and the values of every option with two players, of every state
with more), built from the solved `win` result of the same number of players,
cached as ``.npz`` in the solver's cache directory (one file format, `FORMAT`,
for every number of seats; keyed by ruleset content, table format, players and
solver version; no pickle), and checked when read back (`from_arrays` with the
result: layout, turn starts, a sample of groups recomputed by the kernel); a
damaged or forged file is deleted with one warning and the table built again.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .policy import policy_of
from ..errors import CinqmilleError
from ..rules import Rules, content_key, load_rules
from ..solver import cache
from ..solver.kernel import TurnKernel
from ..solver.choice import keep_problem, move_problem
from .policy import PolicyTable, layers
from ..solver.api import check_players, solve
from ..solver.api import solve

#: The format of a table file (raised when its arrays change).
FORMAT = 6
#: The metadata of a cached policy table and the type of each field (checked on loading).
TABLE_META = {"format": int, "period": int, "exact": bool, "assumptions": list}
#: Tables kept in memory (the oldest is dropped first).
MEMO_SIZE = 4

def table_path(rules: Rules, players: int = 2) -> Path:
    """The cache file of the policy table of `rules` for `players`."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)[:40]
    return cache.cache_dir() / (f"{safe}-optimal{players}p-policy-t{FORMAT}-{content_key(rules)}-"
                                f"{cache.solver_version()}.npz")


def table_spec(rules: Rules, players: int = 2) -> cache.TableSpec:
    """What a cached policy table must hold (shapes are checked against each other on loading): the decisions,
    and the values of every option (two players, `_options_check`) or of every state (`_states_check`)."""
    arrays: dict[str, tuple[tuple[int, ...] | None, str]] = {
        "scores": (None, "int64"), "caps": (None, "int64"), "move": (None, "int8"), "keep": (None, "int8"),
        "choices": (None, "int64")}
    if rules.prediction:
        arrays["told"] = (None, "int8")
    if players == 2:
        arrays.update(bust=(None, "float64"), bank=(None, "float64"), roll=(None, "float64"))
        if rules.prediction:
            arrays.update(plain=(None, "float64"), predict=(None, "float64"))
        if rules.take_over:
            arrays["take"] = (None, "bool")
    else:
        arrays["value"] = (None, "float64")
        if rules.prediction:
            arrays["announce"] = (None, "int8")

    def check(found: Mapping[str, np.ndarray]) -> str | None:
        rows = layers(found["scores"], found["caps"], players)
        return _options_check(rules, found, rows) if players == 2 else _states_check(rules, found, rows)

    return cache.TableSpec.of(rules, "policy", "win", players, arrays, check)


def _options_check(rules: Rules, found: Mapping[str, np.ndarray], rows: int) -> str | None:
    """Why a two-player table file is not one (None when it is): shapes, moves, values in range, every move the
    best for the table's own values."""
    s, d = len(found["scores"]), rules.dice
    if (found["bank"].shape != (rows, d) or found["roll"].shape != (rows, d) or found["move"].shape != (rows, d)
            or len(found["bust"]) != len(found["caps"]) * s or ("take" in found and found["take"].shape != (rows, d))):
        return "arrays of inconsistent shapes"
    move = found["move"]
    why = move_problem(move, len(found["choices"]), none=True) or _keeps_problem(rules, found, rows)
    if why:
        return why
    # the pass takes a move at every state but an overshoot (the last layer of each row, under exact)
    overshoot = np.zeros(rows, dtype=bool)
    if rules.banking.exact:
        overshoot[np.cumsum(np.repeat(found["caps"] + 2, s)) - 1] = True
    if (move[overshoot] != -1).any() or (move[~overshoot] < 0).any():
        return "array 'move' has no move where the solve took one (or one on an overshoot)"
    for name in ("bust", "roll") + (("plain", "predict") if "plain" in found else ()):
        x = found[name]
        if not np.isfinite(x).all() or (x < 0).any() or (x > 1).any():
            return f"array '{name}' holds values outside [0, 1]"
    bank = found["bank"]
    if np.isnan(bank).any() or (bank > 1).any() or ((bank < 0) & (bank != -np.inf)).any():
        return "array 'bank' holds values outside [0, 1]"
    # every move the solve took is a best option for the table's own values (so a forged move is refused
    # unless it swaps two options of the same value, where it changes nothing)
    chosen = np.where(move == 0, bank, found["roll"])
    if "plain" in found:
        plain = move[:, 1] == 1
        chosen[plain, 1] = found["plain"][plain]
        told = move[:, 1] >= 2
        chosen[told, 1] = found["predict"][told, move[told, 1] - 2]
    decided = move >= 0
    if (chosen[decided] < np.maximum(bank, found["roll"])[decided] - 1e-12).any():
        return "array 'move' holds a move that is not the best for the table's values"
    return None


def _states_check(rules: Rules, found: Mapping[str, np.ndarray], layers: int) -> str | None:
    """Why a table file of three players or more is not one (None when it is): shapes, moves, announcements and
    values in range."""
    d = rules.dice
    if found["value"].shape != (layers, d) or found["move"].shape != (layers, d):
        return "arrays of inconsistent shapes"
    why = move_problem(found["move"], len(found["choices"])) or _keeps_problem(rules, found, layers)
    if why:
        return why
    announce = found.get("announce")
    if announce is not None and (announce.min(initial=0) < 0 or announce.max(initial=0) > len(found["choices"])):
        return "array 'announce' holds announcements outside the ruleset's"
    v = found["value"]
    if not np.isfinite(v).all() or (v < 0).any() or (v > 1).any():
        return "array 'value' holds values outside [0, 1]"
    return None


def _keeps_problem(rules: Rules, found: Mapping[str, np.ndarray], layers: int) -> str | None:
    """Why the keeps of a table file are not one per layer and roll class with a choice (None when they are)."""
    kernel = TurnKernel(rules)
    keep, told = found["keep"], found.get("told")
    if len(keep) != layers or (told is not None and len(told) != layers):
        return "arrays of inconsistent shapes"
    return keep_problem(kernel.graph, kernel.prediction, keep, told)


_MEMO: dict[tuple[str, str, int], PolicyTable] = {}
_LOCK = threading.Lock()


def forget() -> None:
    """Empty the tables kept in memory (the next read loads or builds them again)."""
    with _LOCK:
        _MEMO.clear()


def policy_table(rules: Rules | str, players: int = 2, use_cache: bool = True, complete: bool = True) -> PolicyTable:
    """The policy table of `rules` for `players`: from memory, from the cache directory, or built.

    A two-player table is always complete. A larger one is built lazily
    (groups of rows computed when first read, as a game needs them) unless
    `complete`; a complete table is written to the cache, so that other
    processes (the simulator's workers) read it instead of computing it again.
    """
    rules = load_rules(rules)
    check_players("win", players)
    complete = complete or players == 2
    key = (content_key(rules), str(cache.cache_dir()), players)
    with _LOCK:
        found_memo = _MEMO.get(key)
    if found_memo is not None and found_memo.rules == rules:
        if complete and found_memo._source is not None:
            _save(found_memo.complete(), players, use_cache)
        return found_memo
    table: PolicyTable | None = None
    path = table_path(rules, players)
    writable = use_cache
    if use_cache:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            try:
                found = cache.try_load(path, table_spec(rules, players))
            except cache.UnreadableTable:  # the solve below says it once if the directory is the trouble
                found, writable, said = None, False, []
        for warning in said:
            warnings.warn(warning.message, stacklevel=2)
        if found is not None:
            table = _checked(rules, players, path, *found, sample=not cache.vouched(path, found[1]))
            if table is not None:
                cache.vouch(path, found[1])
    if table is None:
        result = solve(rules, "win", use_cache=use_cache, players=players)
        table = policy_of(result)  # one table per result: every bot of a game reads the same rows
        if complete:
            _save(table.complete(), players, writable)
    with _LOCK:
        if len(_MEMO) >= MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = table
    return table


def _checked(rules: Rules, players: int, path: Path, arrays: dict[str, np.ndarray],
             meta: dict[str, Any], sample: bool = True) -> PolicyTable | None:
    """The cached table, checked against the solved result it comes from (`from_arrays` with `check`; without
    `sample`, a file vouched for, only its metadata); None, with one warning and the file deleted, when it is
    damaged or forged."""
    try:
        cache.check_meta(meta, TABLE_META)
        if meta["format"] != FORMAT:
            raise cache.CorruptTable(f"a table of format {meta['format']}, expected {FORMAT}")
        return PolicyTable.from_arrays(rules, players, arrays, meta["period"], meta["exact"],
                                       tuple(meta["assumptions"]),
                                       check=solve(rules, "win", players=players) if sample else None)
    except cache.CorruptTable as exc:
        cache.discard(path, exc, stacklevel=4)
        return None


def _save(table: PolicyTable, players: int, use_cache: bool) -> None:
    if not use_cache:
        return
    rules = table.rules
    path = table_path(rules, players)
    try:
        cache.save_npz(path, table.arrays(), {"format": FORMAT, "period": table.period,
                                              "exact": table.exact_solve, "assumptions": list(table.assumptions),
                                              "rules": cache.rules_meta(rules)}, table_spec(rules, players))
        cache.vouch(path)  # built here from the solved result
        cache.prune_stale(path)
    except (OSError, CinqmilleError):
        pass  # the solve has said so already if the cache directory cannot be written

