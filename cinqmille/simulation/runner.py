"""`simulate(config)`: N games in fixed-size batches, run through joblib (local processes or Dask).

Reproducibility: the games are split into batches of a fixed size (the last
one shorter); batch i is seeded by ``np.random.SeedSequence(seed).spawn(k)[i]``
and the batches are combined in batch order. The result therefore depends on
the seed, the batch size and the engine, never on the number of workers or
the backend.

Engines: ``vectorised`` (`vectorised.play_batch`, two to eight players: a ruleset that the solver treats
exactly, policies with a vectorised form, and with three players or more an
n-player solve within the budget) or ``referee``
(`referee_path.play_batch_referee`: everything else). ``auto`` picks the first
that applies.

Three players or more: `optimal` (the engine policy and its vector form) reads the policy table of the
most players that fits the budget (`api.table_players`, `cinqmille.table.load`: exact up to four
players at small goals, three under `standard`; against the opponents who threaten most beyond it),
built complete once by `prepare` and cached, so that every batch process reads the same table.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import numpy as np

from ..errors import CinqmilleError
from ..policies import parse_policy
from ..rules import Rules, content_key
from ..solver import cache, relaxations
from ..solver.grid import ScoreGrid
from ..table.locate import Layout, row_reader
from .stats import BatchStats, std_error, wilson
from .vecpolicies import has_vector_form
from .vecpolicies import vector_policy
from ..table.load import policy_table
from .referee_path import play_batch_referee
from .vectorised import play_batch
from ..policies.expected import expected_table
from ..solver.api import table_players

if TYPE_CHECKING:
    from .vecpolicies import VecPolicy
    from .vectorised import RowOf

_Task = TypeVar("_Task")
_Out = TypeVar("_Out")

Engine = Literal["auto", "vectorised", "referee"]
Backend = Literal["loky", "dask"]
VECTOR_BATCH = 25_000
REFEREE_BATCH = 200


@dataclass(frozen=True, slots=True)
class SimConfig:
    """What to simulate: ruleset, policies by seat, number of games, seed and how to run the batches."""

    rules: Rules
    players: tuple[str, ...]
    games: int
    seed: int = 0
    jobs: int = 1
    engine: Engine = "auto"
    batch_size: int | None = None  # default: VECTOR_BATCH (vectorised) or REFEREE_BATCH (referee)
    backend: Backend = "loky"
    scheduler: str | None = None  # address of a Dask scheduler (backend "dask")


@dataclass(frozen=True, slots=True)
class SimResult:
    """The statistics of a simulation (JSON-ready through `as_dict`)."""

    rules: str
    players: tuple[str, ...]
    games: int
    seed: int
    engine: str
    wins: tuple[int, ...]
    win_rate: tuple[float, ...]
    ci95: tuple[tuple[float, float], ...]
    std_error: tuple[float, ...]
    mean_turns: float
    median_turns: float
    bust_rate: float
    bust_rate_by_seat: tuple[float, ...]
    mean_banked_turn: float
    seconds: float
    jobs: int
    batches: int
    batch_size: int

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("players", "wins", "win_rate", "std_error", "bust_rate_by_seat"):
            out[key] = list(out[key])
        out["ci95"] = [list(x) for x in self.ci95]
        return out


@dataclass(frozen=True, slots=True)
class BatchTask:
    """One batch, as sent to a worker (small and picklable: tables are loaded there)."""

    rules: Rules
    players: tuple[str, ...]
    engine: str
    games: int
    seed: np.random.SeedSequence
    cache_dir: str


def vectorisable(rules: Rules, players: Sequence[str]) -> str | None:
    """Why the vectorised engine cannot play this simulation, or None when it can."""
    names = {p.strip().partition(":")[0] for p in players}
    if len(players) > 2 and "optimal" in names and table_seats(rules, len(players)) == 2:
        return "no solve of three players or more fits the budget (optimal plays the two-player table on the referee)"
    relaxed = relaxations(rules)
    if relaxed:
        return f"the ruleset has rules outside the solved state ({relaxed[0].split(':')[0]})"
    if any(rules.start):
        return "the vectorised engine starts every game at 0 (the ruleset has starting scores)"
    for flag in ("last_round", "take_over", "prediction", "zero_turns"):
        if getattr(rules, flag) not in (False, None):
            return f"the vectorised engine does not play {flag}"
    bad = [p for p in players if not has_vector_form(p, len(players))]
    if bad:
        return f"policy '{bad[0]}' has no vectorised form"
    return None


def choose_engine(rules: Rules, players: Sequence[str], engine: Engine = "auto") -> str:
    """The engine that will play: `vectorised` when it applies (or is asked for and applies), else `referee`."""
    why = vectorisable(rules, players)
    if engine == "vectorised" and why:
        raise CinqmilleError(f"cannot use the vectorised engine: {why}")
    if engine == "referee":
        return "referee"
    return "referee" if why else "vectorised"


def check_players(rules: Rules, players: Sequence[str]) -> None:
    """Check the number of players and every policy name (one-line errors)."""
    if not 2 <= len(players) <= 8:
        raise CinqmilleError(f"a game needs 2 to 8 players, got {len(players)}")
    for p in players:
        name, _, arg = p.strip().partition(":")
        if name in ("optimal", "expected"):
            if arg:
                raise CinqmilleError(f"policy '{name}' takes no argument, got '{p}'")
            continue
        parse_policy(p, rules, rng=np.random.default_rng(0))


def batch_sizes(games: int, batch: int) -> list[int]:
    """Fixed-size batches covering `games` (the last one holds the rest)."""
    k = math.ceil(games / batch) if games else 0
    return [min(batch, games - i * batch) for i in range(k)]


@contextmanager
def _cache_env(path: str) -> Iterator[None]:
    old = os.environ.get("CINQMILLE_CACHE")
    os.environ["CINQMILLE_CACHE"] = path
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CINQMILLE_CACHE", None)
        else:
            os.environ["CINQMILLE_CACHE"] = old


_VEC_MEMO: dict[tuple[str, tuple[str, ...], str, int | None], tuple[VecPolicy, ...]] = {}


def _vector_policies(rules: Rules, players: tuple[str, ...], where: str, table: int | None = None,
                     ) -> tuple[VecPolicy, ...]:
    key = (content_key(rules), players, where, table)
    if key not in _VEC_MEMO:
        if len(_VEC_MEMO) >= 4:
            _VEC_MEMO.pop(next(iter(_VEC_MEMO)))
        made: dict[str, VecPolicy] = {}
        for p in players:
            if p not in made:
                made[p] = vector_policy(p, rules, len(players), table)
        _VEC_MEMO[key] = tuple(made[p] for p in players)
    return _VEC_MEMO[key]


def vector_players(rules: Rules, players: tuple[str, ...], where: str = "", table: int | None = None,
                   ) -> tuple[tuple[VecPolicy, ...], RowOf | None]:
    """The vectorised policies of `players` and the rows of the policy table `optimal` reads (`locate.row_reader`):
    `vectorised.play_batch`'s `policies` and `row_of`; `table`: the players of that table (default `table_seats`)."""
    pols = _vector_policies(rules, players, where, table)
    if len(pols) > 2 and "optimal" in players:
        seats = table_seats(rules, len(pols)) if table is None else min(table, len(pols))
        if seats > 2:
            return pols, row_reader(policy_table(rules, seats, complete=True))
        return pols, row_reader(Layout.of(ScoreGrid.of(rules), 2))
    return pols, None


def run_batch(task: BatchTask) -> BatchStats:
    """Play one batch (in a worker or here)."""
    with _cache_env(task.cache_dir):
        if task.engine == "vectorised":
            pols, row_of = vector_players(task.rules, task.players, task.cache_dir)
            return play_batch(task.rules, pols, task.games, np.random.default_rng(task.seed), row_of)
        return play_batch_referee(task.rules, task.players, task.games, task.seed)


def prepare(rules: Rules, players: Sequence[str]) -> None:
    """Solve and build the tables the policies need, once, before the workers start."""
    names = {p.strip().partition(":")[0] for p in players}
    if "optimal" in names:
        seats = table_seats(rules, len(players))
        if seats > 2:
            policy_table(rules, seats, complete=True)  # the n-player table, complete and cached for the workers
            if rules.last_round:
                policy_table(rules, 2)  # the last turns of a last round
        else:
            policy_table(rules, 2)
    if "expected" in names:
        expected_table(rules)


def table_seats(rules: Rules, players: int) -> int:
    """The players of the table `optimal` reads in a game of `players` (`api.table_players`; 2: the two-player
    table against the leading opponent)."""
    return table_players(rules, players)


def run_tasks(tasks: Sequence[_Task], func: Callable[[_Task], _Out], jobs: int = 1, backend: Backend = "loky",
              scheduler: str | None = None, progress: Callable[[float], None] | None = None) -> list[_Out]:
    """`func(task)` for every task, in task order: here (jobs=1), joblib processes, or a Dask cluster."""
    n = len(tasks)
    out: list[_Out] = []
    if backend == "dask":
        try:
            import joblib  # lazy: start-up time (joblib only for batches in parallel)
            from distributed import Client  # lazy: optional dependency (extra 'dask')
        except ImportError:
            raise CinqmilleError("the dask backend needs the optional extra: pip install 'cinqmille[dask]'") from None
        if not scheduler:
            raise CinqmilleError("the dask backend needs --scheduler ADDRESS (a running Dask scheduler)")
        client = Client(scheduler)
        try:
            with joblib.parallel_config(backend="dask"):
                out = list(joblib.Parallel(n_jobs=-1)(joblib.delayed(func)(t) for t in tasks))
        finally:
            client.close()
        if progress is not None:
            progress(1.0)
        return out
    if jobs == 1 or n <= 1:
        for i, t in enumerate(tasks):
            out.append(func(t))
            if progress is not None:
                progress((i + 1) / n)
        return out
    import joblib  # lazy: start-up time (joblib only for batches in parallel)

    results = joblib.Parallel(n_jobs=jobs, return_as="generator")(joblib.delayed(func)(t) for t in tasks)
    for i, r in enumerate(results):
        out.append(r)
        if progress is not None:
            progress((i + 1) / n)
    return out


def plan(config: SimConfig) -> tuple[tuple[str, ...], str, int, list[BatchTask]]:
    """Check a configuration; return (players, engine, batch size, batch tasks) and build the tables needed."""
    rules, players = config.rules, tuple(p.strip() for p in config.players)
    if config.games < 1:
        raise CinqmilleError(f"--games must be at least 1, got {config.games}")
    if config.jobs < 1:
        raise CinqmilleError(f"--jobs must be at least 1, got {config.jobs}")
    check_players(rules, players)
    engine = choose_engine(rules, players, config.engine)
    size = config.batch_size or (VECTOR_BATCH if engine == "vectorised" else REFEREE_BATCH)
    if size < 1:
        raise CinqmilleError(f"the batch size must be at least 1, got {size}")
    prepare(rules, players)
    sizes = batch_sizes(config.games, size)
    seeds = np.random.SeedSequence(config.seed).spawn(len(sizes))
    where = str(cache.cache_dir())
    return players, engine, size, [BatchTask(rules, players, engine, g, sq, where) for g, sq in zip(sizes, seeds)]


def simulate_stats(config: SimConfig, progress: Callable[[float], None] | None = None) -> tuple[BatchStats, str, int, int]:
    """The combined batch statistics of a simulation, its engine, batch count and batch size."""
    _, engine, size, tasks = plan(config)
    parts = run_tasks(tasks, run_batch, config.jobs, config.backend, config.scheduler, progress)
    return BatchStats.combine(parts), engine, len(tasks), size


def simulate(config: SimConfig, progress: Callable[[float], None] | None = None) -> SimResult:
    """Play `config.games` games and return the statistics (see the module docstring)."""
    start = time.perf_counter()
    stats, engine, batches, size = simulate_stats(config, progress)
    players = tuple(p.strip() for p in config.players)
    return summarise(config, players, engine, stats, time.perf_counter() - start, batches, size)


def summarise(config: SimConfig, players: tuple[str, ...], engine: str, stats: BatchStats, seconds: float,
              batches: int, batch_size: int) -> SimResult:
    """The reported statistics of combined batches."""
    n = len(stats.winner)
    wins = tuple(int(x) for x in np.bincount(stats.winner, minlength=len(players)))
    rates = tuple(w / n for w in wins)
    turns_total = int(stats.turns.sum())
    return SimResult(
        rules=config.rules.name, players=players, games=n, seed=config.seed, engine=engine,
        wins=wins, win_rate=rates, ci95=tuple(wilson(w, n) for w in wins),
        std_error=tuple(std_error(r, n) for r in rates),
        mean_turns=float(stats.length.mean()), median_turns=float(np.median(stats.length)),
        bust_rate=float(stats.busts.sum() / turns_total) if turns_total else 0.0,
        bust_rate_by_seat=tuple(float(b / t) if t else 0.0 for b, t in zip(stats.busts, stats.turns)),
        mean_banked_turn=float(stats.banked_points.sum() / stats.banks.sum()) if stats.banks.sum() else 0.0,
        seconds=seconds, jobs=config.jobs, batches=batches, batch_size=batch_size,
    )
