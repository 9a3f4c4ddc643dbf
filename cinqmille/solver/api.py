"""`solve(rules, objective)`: solve or load from the cache, and save/load results as `.npz`."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from ..rules import Rules, load_rules
from . import cache
from .grid import ScoreGrid
from .kernel import TurnKernel
from .objectives import expected_turn, race_turns
from .result import Objective, SolveResult
from .two_player import Progress, relaxations, solve_game

OBJECTIVES: tuple[str, ...] = ("win", "expected", "race")


def compute(rules: Rules, objective: Objective = "win", progress: Progress | None = None,
            tol: float = 1e-12) -> SolveResult:
    """Solve `rules` for `objective` now (no cache)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; choose from {', '.join(OBJECTIVES)}")
    start = time.perf_counter()
    relaxed = relaxations(rules)
    offers = None
    if objective == "win":
        values, offers, stats = solve_game(rules, tol=tol, progress=progress)
        residual, states = stats.residual, stats.states
        extra = {"levels": stats.levels, "passes": stats.passes}
        notes: tuple[str, ...] = ()
    elif objective == "expected":
        values = expected_turn(rules)
        residual, states, extra = 0.0, int(values.size), {}
        notes = ("one turn on its own: the goal and end-of-game rules do not apply",)
    else:
        values, residual = race_turns(rules, tol=tol, kernel=TurnKernel(rules, win_value=0.0))
        grid = ScoreGrid.of(rules)
        states = int((grid.cap(grid.scores) + 1).sum()) * rules.dice
        extra = {}
        notes = ("one player alone: no opponent",)
    if progress is not None:
        progress(1.0)
    seconds = time.perf_counter() - start
    return SolveResult(
        rules=rules, objective=objective, values=values, residual=float(residual), seconds=seconds,
        states=states, exact=not relaxed, assumptions=notes + relaxed, solver_version=cache.solver_version(),
        extra=extra, offers=offers,
    )


def save(result: SolveResult, path: Path) -> None:
    """Write a result to `path` (.npz, atomically; no pickled objects)."""
    meta = {
        "objective": result.objective, "rules": cache.rules_meta(result.rules),
        "residual": result.residual, "seconds": result.seconds, "states": result.states,
        "exact": result.exact, "assumptions": list(result.assumptions),
        "solver_version": result.solver_version, "extra": result.extra,
    }
    arrays = {"values": result.values}
    if result.offers is not None:
        arrays["offers"] = result.offers
    cache.save_npz(Path(path), arrays, meta)


def load(path: Path) -> SolveResult:
    """Read a result written by `save` (raises `CorruptTable` for a bad file)."""
    arrays, meta = cache.load_npz(Path(path))
    rules = cache.rules_from_meta(meta)
    return SolveResult(
        rules=rules, objective=meta["objective"], values=arrays["values"],
        residual=float(meta["residual"]), seconds=float(meta["seconds"]), states=int(meta["states"]),
        exact=bool(meta["exact"]), assumptions=tuple(meta["assumptions"]),
        solver_version=meta["solver_version"], extra=dict(meta.get("extra", {})), offers=arrays.get("offers"),
    )


def solve(rules: Rules | str | None = None, objective: Objective = "win", progress: Progress | None = None,
          use_cache: bool = True) -> SolveResult:
    """The solved table of a ruleset: from the cache when it is there, else solved and cached."""
    rules = load_rules(rules)
    if not use_cache:
        return compute(rules, objective, progress)
    path = cache.cache_path(rules, objective)
    found = cache.try_load(path)
    if found is not None:
        result = load(path)
        if result.solver_version == cache.solver_version():
            return _renamed(result, rules)
    result = compute(rules, objective, progress)
    try:
        save(result, path)
        cache.prune_stale(path)
    except OSError as exc:
        import warnings
        warnings.warn(f"could not write the cache file {path}: {exc}", stacklevel=2)
    return result


def _renamed(result: SolveResult, rules: Rules) -> SolveResult:
    """The cached result under the caller's ruleset name (the content is the same)."""
    if result.rules == rules:
        return result
    from dataclasses import replace
    return replace(result, rules=rules)


def as_array(values: np.ndarray) -> np.ndarray:
    """Values as a plain float array (for callers that export)."""
    return np.asarray(values, dtype=float)
