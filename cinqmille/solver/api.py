"""`solve(rules, objective)`: solve or load from the cache, and save/load results as `.npz`."""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any
from pathlib import Path

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules, load_rules
from ..work import working
from . import cache
from .budget import Limits, TooLarge, check_budget, plan_words
from .checkpoint import Checkpoint
from .grid import ScoreGrid
from .kernel import TurnKernel
from .n_player import MAX_PLAYERS, chase_note, level_sums, relaxations_n, solve_players
from .rounds import rounds_solved, solve_rounds
from .passes import sample_problem
from .objectives import EXPECTED_SPAN, average_counters, average_turn, expected_turn, race_turns
from .result import Objective, SolveResult
from .turns import table_kinds
from .two_player import Progress, relaxations, solve_game

OBJECTIVES: tuple[str, ...] = ("win", "expected", "race", "average")
#: Solves of three players or more from this many turn states (about half a minute) keep their finished levels
#: on disk (`solver.checkpoint`): an interrupted solve resumes where it stopped.
CHECKPOINT_STATES = 100_000_000


def compute(rules: Rules, objective: Objective = "win", progress: Progress | None = None,
            tol: float = 1e-12, players: int = 2, checkpoint: Checkpoint | None = None) -> SolveResult:
    """Solve `rules` for `objective` now (no cache); `players` (2 to `MAX_PLAYERS`) for the `win` objective, whose
    finished levels are kept in `checkpoint` (three players or more, `solver.checkpoint`) when one is given.

    >>> from cinqmille.rules import rules_from_dict
    >>> result = compute(rules_from_dict({"goal": 500, "opening": 150}))
    >>> round(result.first_player_win, 6), result.exact
    (0.61802, True)
    >>> three = compute(rules_from_dict({"goal": 300, "opening": 100, "end": "exact"}), players=3)
    >>> [round(x, 6) for x in three.win]
    [0.52418, 0.301919, 0.173901]
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"unknown objective {objective!r}; choose from {', '.join(OBJECTIVES)}")
    check_players(objective, players)
    start = time.perf_counter()
    relaxed = relaxations(rules) + (relaxations_n(rules, players) if players > 2 else ())
    offers = None
    if objective == "win" and players > 2:
        if rounds_solved(rules):
            values, offers, stats, chasing = solve_rounds(rules, players, tol=tol, progress=progress)
        else:
            values, stats, chasing = solve_players(rules, players, tol=tol, progress=progress, checkpoint=checkpoint)
        residual, states = stats.residual, stats.states
        extra: dict[str, Any] = {"levels": stats.levels, "passes": stats.passes, "chasing_rows": int(len(chasing))}
        relaxed = relaxed + chase_note(chasing, residual)
        notes: tuple[str, ...] = ()
    elif objective == "win":
        values, offers, stats = solve_game(rules, tol=tol, progress=progress)
        residual, states = stats.residual, stats.states
        extra = {"levels": stats.levels, "passes": stats.passes, "sweeps": stats.sweeps}
        notes = ()
    elif objective == "expected":
        values = expected_turn(rules)
        residual, states, extra = 0.0, int(values.size), {}
        notes = ("one turn on its own: the goal and end-of-game rules do not apply",)
    elif objective == "average":
        average = average_turn(rules)
        # the counts are the state of this objective: only the rules that need a score history are left out
        relaxed = tuple(f"{name}: needs a score history; solved as if the rule were off" for name in rules.history_rules)
        values, residual, states = average.tables, average.residual, int(average.tables.size)
        extra = {"gain": average.gain, "relative": list(average.relative), "bust": list(average.bust)}
        notes = ("a long game: the scoreless-turn count carries from turn to turn, with no goal and no end-of-game "
                 "rules; the player has opened, and his score is far enough above 0 that a penalty is never cut",)
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
        extra=extra, offers=offers, players=players,
    )


def is_cached(rules: Rules, players: int = 2) -> bool:
    """Whether the `win` table of `rules` for `players` is in the cache already (no solve needed)."""
    try:
        return cache.cache_path(rules, "win", players).exists()
    except OSError:  # a cache path the system refuses: `solve` says so and solves without the cache
        return False


def table_players(rules: Rules, seats: int, limits: Limits | None = None, most: int = MAX_PLAYERS) -> int:
    """The exact table that a table of `seats` players reads: the most players, up to `seats` and `most`, whose
    `win` table is cached or whose solve fits within `limits`; at least two (the smaller tables are read against
    the opponents who threaten most, `n_player.leading`)."""
    for players in range(min(seats, most, MAX_PLAYERS), 2, -1):
        if is_cached(rules, players):
            return players
        try:
            check_budget(rules, "win", limits, players)
        except TooLarge:
            continue
        return players
    return 2


def check_players(objective: str, players: int) -> None:
    """Refuse a table size the solver does not have (one line)."""
    if not 2 <= players <= MAX_PLAYERS:
        raise CinqmilleError(f"--players: the exact solver knows 2 to {MAX_PLAYERS} players, got {players}")
    if players != 2 and objective != "win":
        raise CinqmilleError(f"--players {players} is for the 'win' objective ('{objective}' has one player)")


def result_spec(rules: Rules, objective: str, players: int = 2) -> cache.TableSpec:
    """What the cached table of `rules` for `objective` must hold: its arrays' shapes and value ranges."""
    d, grid = rules.dice, ScoreGrid.of(rules)
    g = grid.goal
    if objective == "expected":
        top = EXPECTED_SPAN * g
        return cache.TableSpec.of(rules, "solve", objective, 1, {"values": ((2, top + 1, d), "float64")},
                                  cache.bounded_check(0.0, float(EXPECTED_SPAN * rules.goal + rules.goal) * 2,
                                                      nan_ok=False))
    if objective == "average":
        top = EXPECTED_SPAN * g
        count, penalty = average_counters(rules)
        return cache.TableSpec.of(rules, "solve", objective, 1, {"values": ((count, top + 1, d), "float64")},
                                  cache.bounded_check(-float(penalty) - 1.0,
                                                      float(EXPECTED_SPAN * rules.goal + rules.goal) * 2,
                                                      nan_ok=False))
    valid = np.zeros(g, dtype=bool)
    valid[grid.scores] = True
    if objective == "race":
        def race_ok(arrays: Mapping[str, np.ndarray]) -> str | None:
            r = arrays["values"]
            if np.isnan(r[valid]).any() or (r[valid] < 0).any() or np.isinf(r).any() or not np.isnan(r[~valid]).all():
                return "array 'values' is not a table of expected turns"
            return None

        return cache.TableSpec.of(rules, "solve", objective, 1, {"values": ((g,), "float64")}, race_ok)
    in_range = cache.bounded_check(0.0, 1.0)
    if players > 2 and rounds_solved(rules):  # the rounds' layout: every score unit, a seat axis
        cells = np.ix_(*([valid] * players))

        possible = np.zeros((g,) * players, dtype=bool)
        possible[cells] = True
        kinds = players if rules.last_round else 1  # a seat axis under last_round (`rounds`)
        lead = (kinds,) if rules.last_round else ()

        def seats_ok(arrays: Mapping[str, np.ndarray]) -> str | None:
            every = arrays["values"].reshape((kinds,) + (g,) * players + (players - 1,))
            w = every[(slice(None),) + cells]
            if not np.isfinite(w).all() or (w.sum(axis=-1) > 1.0 + 1e-9).any():
                return "array 'values' is not a table of seat chances at every possible score"
            if not np.isnan(every[:, ~possible]).all():
                return "array 'values' holds chances at scores that cannot occur"
            return in_range(arrays)

        shapes: dict[str, tuple[tuple[int, ...] | None, str]] = {
            "values": (lead + (g,) * players + (players - 1,), "float64")}
        if rules.take_over:
            shapes["offers"] = ((kinds,) + (g,) * players + (g, d, players - 1), "float64")
        return cache.TableSpec.of(rules, "solve", objective, players, shapes, seats_ok)
    if players > 2:  # every cell is a possible turn start (the layout by score positions, `ScoreGrid.slots`)
        def seats_ok(arrays: Mapping[str, np.ndarray]) -> str | None:
            w = arrays["values"]
            if not np.isfinite(w).all() or (w.sum(axis=-1) > 1.0 + 1e-9).any():
                return "array 'values' is not a table of seat chances at every possible score"
            return in_range(arrays)

        return cache.TableSpec.of(rules, "solve", objective, players,
                                  {"values": ((len(grid.scores),) * players + (players - 1,), "float64")}, seats_ok)
    seats = table_kinds(rules)
    shape = (seats, g, g) if seats > 1 else (g, g)
    arrays: dict[str, tuple[tuple[int, ...] | None, str]] = {"values": (shape, "float64")}
    if rules.take_over:
        arrays["offers"] = ((seats, g, g, g, d), "float64")
    pairs = valid[:, None] & valid[None, :]

    def win_ok(arrays: Mapping[str, np.ndarray]) -> str | None:
        w = arrays["values"].reshape(seats, g, g)
        if not np.isfinite(w[:, pairs]).all():
            return "array 'values' has a missing value at a possible pair of scores"
        if not np.isnan(w[:, ~pairs]).all():
            return "array 'values' holds chances at scores that cannot occur"
        return in_range(arrays)

    return cache.TableSpec.of(rules, "solve", objective, 2, arrays, win_ok)


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
    meta["players"] = result.players
    cache.save_npz(Path(path), arrays, meta, result_spec(result.rules, result.objective, result.players))


#: The metadata of a cached solve and the type of each field (checked on loading: `cache.check_meta`).
RESULT_META: dict[str, type | tuple[type, ...]] = {"objective": str, "residual": (int, float), "seconds": (int, float), "states": int, "exact": bool,
               "assumptions": list, "solver_version": str, "extra": dict, "players": int}


def _result(rules: Rules, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> SolveResult:
    """The result of a cached table, its metadata checked (`CorruptTable` when a field is missing or mistyped)."""
    cache.check_meta(meta, RESULT_META)
    if not 0.0 <= float(meta["residual"]) < np.inf or not 1 <= meta["players"] <= MAX_PLAYERS or meta["states"] < 0:
        raise cache.CorruptTable("metadata 'residual', 'players' or 'states' out of range")
    try:
        return SolveResult(
            rules=rules, objective=meta["objective"], values=arrays["values"],
            residual=float(meta["residual"]), seconds=float(meta["seconds"]), states=int(meta["states"]),
            exact=bool(meta["exact"]), assumptions=tuple(str(a) for a in meta["assumptions"]),
            solver_version=str(meta["solver_version"]), extra=dict(meta.get("extra", {})),
            offers=arrays.get("offers"), players=int(meta.get("players", 2)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise cache.CorruptTable(f"metadata incomplete ({exc.__class__.__name__}: {exc})") from None


def load(path: Path) -> SolveResult:
    """Read a result written by `save`, checked against its own ruleset (raises `CorruptTable`)."""
    path = Path(path)
    _, meta = cache.load_npz(path)
    try:
        rules = cache.rules_from_meta(meta)
        spec = result_spec(rules, str(meta["objective"]), int(meta.get("players", 2)))
    except (KeyError, TypeError, CinqmilleError) as exc:
        raise cache.CorruptTable(f"{path}: the ruleset in its metadata is not readable ({exc})") from None
    arrays, meta = cache.load_npz(path, spec)
    return _result(rules, arrays, meta)


def load_cached(rules: Rules, objective: Objective = "win", players: int = 2) -> SolveResult | None:
    """The cached table of `rules` for `objective` and `players`, read as `solve` reads it, or None when there is
    none; never computed here. The file must be this ruleset's table (its identity: content, objective, player
    count, solver version; shapes, checksum, values) and, the first time it is read, pass a sample of rows
    recomputed by the kernel (`cache.vouch`); a damaged, foreign or forged file is deleted with one warning (None).
    A file that cannot be read raises `cache.UnreadableTable`. The result carries `rules` as asked (its name)."""
    path = cache.cache_path(rules, objective, players)
    found = cache.try_load(path, result_spec(rules, objective, players))
    if found is None:
        return None
    try:
        result = _result(rules, *found)
        if (result.objective, result.players) != (objective, players if objective == "win" else result.players):
            raise cache.CorruptTable(f"its metadata names the objective {result.objective!r} for "
                                     f"{result.players} players")
        if not cache.vouched(path, found[1]):  # sampled once per file (`cache.vouch`)
            why = sample_problem(result)  # a forgery with a valid checksum: plausible values, not the solution
            if why:
                raise cache.CorruptTable(why)
            cache.vouch(path, found[1])
        return result
    except cache.CorruptTable as exc:
        cache.discard(path, exc, stacklevel=3)
        return None


def solve_label(rules: Rules, objective: str, players: int, cached: bool) -> str:
    """What a solve says it is doing: "Solving 'standard' for 3 players (first use, cached afterwards)"."""
    who = f" for {players} players" if players != 2 else ""
    what = f" ({objective})" if objective != "win" else ""
    return f"Solving '{rules.name}'{who}{what}" + (" (first use, cached afterwards)" if cached else "")


def solve(rules: Rules | str | None = None, objective: Objective = "win", progress: Progress | None = None,
          use_cache: bool = True, limits: Limits | None = None, players: int = 2) -> SolveResult:
    """The solved table of a ruleset: from the cache when it is there and sound, else solved and cached.

    A solve beyond `limits` (default `Limits.from_env()`) raises `TooLarge` before
    anything is allocated.
    """
    rules = load_rules(rules)
    if objective not in OBJECTIVES:
        raise CinqmilleError(f"unknown objective {objective!r}; choose from {', '.join(OBJECTIVES)}")
    check_players(objective, players)
    if not use_cache:
        size = check_budget(rules, objective, limits, players).states
        with working(solve_label(rules, objective, players, cached=False), progress, size) as update:
            return compute(rules, objective, update, players=players)
    path = cache.cache_path(rules, objective, players)
    writable = True
    try:
        cached = load_cached(rules, objective, players)
    except cache.UnreadableTable:
        cached, writable = None, False
    if cached is not None:
        return cached
    size = check_budget(rules, objective, limits, players).states
    long = objective == "win" and players > 2 and size >= CHECKPOINT_STATES
    checkpoint = Checkpoint.of(rules, players) if writable and long else None
    label = solve_label(rules, objective, players, cached=writable)
    if long and progress is None:  # said before it starts: how long it will take
        kept = checkpoint.kept(level_sums(ScoreGrid.of(rules), players)) if checkpoint is not None else (0, 0)
        label += f": {plan_words(rules, players, size, kept)}"
    with working(label, progress, size) as update:
        result = compute(rules, objective, update, players=players, checkpoint=checkpoint)
    if writable:
        try:
            save(result, path)
            cache.vouch(path)  # computed here: its first load needs no sample
            cache.prune_stale(path)
            if checkpoint is not None:
                checkpoint.clear()
        except (OSError, CinqmilleError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc).replace(str(path), "").strip(": ")
            warnings.warn(f"could not write the cache file {cache.short_path(path)} ({reason})", stacklevel=2)
    return result
