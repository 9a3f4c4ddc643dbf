"""The choices of the policy written once: the tie rule, the roll classes whose keeps the solve records, and
the checks of decisions read back from a file.

Each decision lists its options in a fixed tie-break order (RULES.md section
8) and takes the first of the best (`best`; `ranking` orders them all, for the
advice, the solve's choice first): bank, roll plainly, then the announcements
from the smallest; a take-over offer: start afresh, then take over. Which keep
is not decided here but read from the solve (`rows.TurnRows.keep`): the kernel
records it (`kernel.Decisions`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from ..rules import Rules
from .keeps import KeepGraph, Prediction, build_keep_graph

#: Groups of rows recomputed with the kernel when a table is read back from the cache (`sample_groups`).
SAMPLE_GROUPS = 6
#: Largest difference between a cached number and the same number computed again by the same pass.
SAME_PASS_TOL = 1e-12


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


@lru_cache(maxsize=16)
def roll_classes(rules: Rules) -> tuple[KeepGraph, Prediction | None]:
    """The kernel's roll classes of `rules` (and the two-dice classes of each announcement)."""
    graph = build_keep_graph(rules)
    return graph, Prediction.of(graph) if rules.prediction and rules.dice >= 2 else None


def block_graph(block: Any) -> KeepGraph:
    """The roll classes of a block's ruleset (`KeepGraph`), whose keeps `TurnRows.keep` and `roll_keep` name."""
    return roll_classes(block.rules)[0]
