"""The solved tables of the web app: loaded once per ruleset, solved in a background thread, never in a request.

`Tables.get` answers at once: the table (kept in memory after its first use, or
read from the solver's cache on disk by the CLI's own loader, `solver.api.load_cached`:
the file's identity, player count, values and, the first time, a sample of rows
recomputed), or a `Job` that a single background thread is working on, whose `progress` the page polls
(`/api/progress`). One solve runs at a time, so the machine stays usable; at most
`max_queued` wait or run (`QueueFull` beyond, a 429). A finished job's status
stays answerable (a bounded record of the last `MAX_FINISHED`, apart from the
tables in memory), and after each solve the oldest table files of the cache are
deleted beyond `cache_max_bytes` (`solver.cache.evict_oldest`), never a prepared one.

`Tables.prepare` (`serve --prepare 4`) solves a table the operator asked for by
name, within the limits of `cinqmille solve` (the four-player `standard` table:
12.2 billion turn states, a question's solve stops at 200 million), in a thread
of its own, so that the questions' solves do not wait behind it; `prepared`
is what the page shows of it ("four-player table: solving, 42 %"). Its thread
is a daemon and stops at the next level when the server stops: the finished
levels stay on disk (`solver.checkpoint`), and the next `serve --prepare`
resumes there.

A table in memory is shared by the rulesets of the same content (the name,
description and starting scores change no table), but each answer carries the
ruleset asked for; and it is read again through the loader when its cache file
has changed since (the CLI replaced a damaged or forged one).
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import CinqmilleError
from ..rules import Rules, content_key
from ..solver import solve
from ..solver.api import load_cached
from ..solver.budget import SOLVE_STATES, Limits
from ..solver.cache import cache_dir, cache_path, evict_oldest
from ..words import number_word

if TYPE_CHECKING:
    from ..solver import SolveResult

#: Tables kept in memory (the oldest is dropped beyond this).
MAX_TABLES = 8
#: Solves queued or running at most (a 429 beyond).
MAX_QUEUED = 4
#: Finished jobs whose status stays answerable.
MAX_FINISHED = 256
#: Seconds a client is asked to wait when the queue is full.
RETRY_AFTER = 10


class Stopped(Exception):
    """A prepared solve asked to stop (the server stops): raised from its progress report, between two levels."""


class QueueFull(Exception):
    """Too many solves are queued: ask again after `retry_after` seconds."""

    def __init__(self, queued: int, retry_after: int = RETRY_AFTER):
        super().__init__(f"{queued} rulesets are already being solved: ask again in a while")
        self.retry_after = retry_after


@dataclass
class Job:
    """A table being solved: its key, progress from 0 to 1, and the error that stopped it, if one did."""

    key: str
    rules_name: str
    progress: float = 0.0
    error: str | None = None
    done: threading.Event = field(default_factory=threading.Event)
    future: "Future[None] | None" = field(default=None, repr=False)
    players: int = 2
    stop: threading.Event = field(default_factory=threading.Event, repr=False)  # asked to stop (a prepared solve)

    def as_dict(self) -> dict[str, object]:
        status = "error" if self.error is not None else ("ready" if self.done.is_set() else "solving")
        out: dict[str, object] = {"status": status, "job": self.key, "rules": self.rules_name,
                                  "progress": round(self.progress, 4)}
        if self.error is not None:
            out["error"] = self.error
        return out


def table_key(rules: Rules, players: int) -> str:
    """The key of a table: the ruleset's content and the number of players solved."""
    return f"{content_key(rules)}-{players}"


Signature = tuple[int, int, int, int]


def _signature(path: Path) -> Signature | None:
    """What identifies the file at `path` as it is now (None when there is none)."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):
        return None
    return info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns


@dataclass
class _Kept:
    """A table in memory, the cache file it was read from or written to, and that file's signature then."""

    result: "SolveResult"
    path: Path | None
    signature: Signature | None
    named: dict[Rules, "SolveResult"] = field(default_factory=dict)  # the same table under other names

    def current(self) -> bool:
        """Whether the cache file is still the one the table came from (a vanished file changes nothing)."""
        if self.path is None:
            return True
        now = _signature(self.path)
        return now is None or now == self.signature

    def as_asked(self, rules: Rules) -> "SolveResult":
        """The table under the ruleset `rules` as asked (its name, description and start)."""
        result = self.result
        if getattr(result, "rules", rules) == rules or not dataclasses.is_dataclass(result):
            return result
        found = self.named.get(rules)
        if found is None:
            found = dataclasses.replace(result, rules=rules)
            fields = {f.name for f in dataclasses.fields(result)}
            found.__dict__.update({k: v for k, v in result.__dict__.items() if k not in fields})  # its derived tables
            if len(self.named) >= MAX_TABLES:
                self.named.clear()
            self.named[rules] = found
        return found


class Tables:
    """Solved `win` tables by ruleset content and number of players, shared by every request."""

    def __init__(self, max_queued: int = MAX_QUEUED, cache_max_bytes: int | None = None,
                 solver: "Callable[..., SolveResult] | None" = None) -> None:
        self._lock = threading.Lock()
        self._ready: dict[str, _Kept] = {}
        self._jobs: dict[str, Job] = {}
        self._finished: OrderedDict[str, Job] = OrderedDict()
        self.max_queued, self.cache_max_bytes = max_queued, cache_max_bytes
        self._solver = solver  # `solver.solve` unless given (a test's stand-in)
        self._pool: ThreadPoolExecutor | None = None  # started by the first solve, again after `close`
        self._prepared: dict[str, Job] = {}  # the tables asked for by `prepare`, in the order asked
        self._prepared_paths: list[Path] = []  # their cache files, never evicted (`_bound_cache`)

    def get(self, rules: Rules, players: int = 2) -> "SolveResult | Job":
        """The table if it is at hand (memory, or the disk cache), else the job that solves it (started if needed)."""
        key = table_key(rules, players)
        with self._lock:
            kept = self._ready.get(key)
            if kept is not None and not kept.current():
                del self._ready[key]  # its file was replaced since: read again, checked
                kept = None
            if kept is not None:
                return kept.as_asked(rules)
            job = self._jobs.get(key)
            if job is None and key in self._prepared and not self._prepared[key].done.is_set():
                job = self._prepared[key]  # being prepared: not solved twice
            if job is not None:
                return job
        found = _load(rules, players)
        if found is not None:
            return self._keep(key, found, rules, players).as_asked(rules)
        with self._lock:
            job = self._jobs.get(key)
            if job is None:
                if len(self._jobs) >= self.max_queued:
                    raise QueueFull(len(self._jobs))
                job = self._jobs[key] = Job(key, rules.name)
                if self._pool is None:
                    self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cinqmille-solve")
                job.future = self._pool.submit(self._solve, job, rules, players)
            return job

    def job(self, key: str) -> Job | None:
        """The job of `key`: queued, running or finished (None when no such table was asked for lately)."""
        with self._lock:
            job = self._jobs.get(key) or self._prepared.get(key) or self._finished.get(key)
            if job is None and key in self._ready:
                job = Job(key, self._ready[key].result.rules.name, 1.0)
                job.done.set()
            return job

    def ready(self, rules: Rules, players: int) -> bool:
        """Whether the table of `rules` for `players` is in memory now (a prepared one read before the cache)."""
        with self._lock:
            kept = self._ready.get(table_key(rules, players))
            return kept is not None and kept.current()

    def prepare(self, rules: Rules, players: int, limits: Limits | None = None) -> Job:
        """Read the table of `rules` for `players` from the cache, or solve it within `limits` (those of `cinqmille
        solve` where not given), in a daemon thread of its own; the job says how far it is (`prepared`)."""
        key = table_key(rules, players)
        with self._lock:
            job = self._prepared.get(key)
            if job is not None and (job.error is None or not job.done.is_set()):
                return job
            job = self._prepared[key] = Job(key, rules.name, players=players)
            path = _cache_path(rules, players)
            if path is not None:
                self._prepared_paths.append(path)
        limits = limits or Limits.from_env(default_states=SOLVE_STATES)
        threading.Thread(target=self._prepare, args=(job, rules, players, limits), daemon=True,
                         name=f"cinqmille-prepare-{players}").start()
        return job

    def _prepare(self, job: Job, rules: Rules, players: int, limits: "Limits") -> None:
        found = _load(rules, players)
        if found is None:
            self._solve(job, rules, players, limits)
            return
        self._keep(job.key, found, rules, players)
        job.progress = 1.0
        job.done.set()

    def prepared(self) -> list[dict[str, object]]:
        """The status of each table asked for by `prepare`: its job's (`Job.as_dict`), its number of players, and
        in words, "four-player table: solving, 42 %", "... ready" or "... not solved (why)"."""
        with self._lock:
            jobs = list(self._prepared.values())
        out = []
        for job in jobs:
            status = job.as_dict()
            what = f"{number_word(job.players)}-player table of '{job.rules_name}'"
            text = {"ready": f"{what}: ready",
                    "solving": f"{what}: solving, {int(100 * job.progress)} %",
                    "error": f"{what}: not solved ({job.error})"}[str(status["status"])]
            out.append({**status, "players": job.players, "text": text})
        return out

    def _keep(self, key: str, result: "SolveResult", rules: Rules, players: int) -> _Kept:
        path = _cache_path(rules, players)
        kept = _Kept(result, path, None if path is None else _signature(path))
        with self._lock:
            self._ready[key] = kept
            # the oldest dropped beyond MAX_TABLES, never a prepared one (read again, it would be read in a request)
            dropped = [k for k in self._ready if k not in self._prepared][: max(len(self._ready) - MAX_TABLES, 0)]
            for old in dropped:
                del self._ready[old]
        return kept

    def _solve(self, job: Job, rules: Rules, players: int, limits: Limits | None = None) -> None:
        def progress(fraction: float) -> None:
            if job.stop.is_set():
                raise Stopped
            job.progress = max(job.progress, min(float(fraction), 1.0))

        try:
            solver = self._solver or solve
            result = (solver(rules, "win", progress=progress, players=players) if limits is None else
                      solver(rules, "win", progress=progress, players=players, limits=limits))
            self._keep(job.key, result, rules, players)
            job.progress = 1.0
            self._bound_cache(rules, players)
        except CinqmilleError as exc:
            job.error = str(exc).splitlines()[0] if str(exc) else "the solve failed"
        except Stopped:
            job.error = "the server stopped before this table was solved (its finished levels are kept)"
        except MemoryError:
            job.error = "out of memory while solving this ruleset"
        except Exception as exc:  # noqa: BLE001 - reported to the page, never raised into the server
            job.error = f"the solve failed ({exc.__class__.__name__})"
        finally:
            job.done.set()
            with self._lock:
                self._finish(job)

    def _finish(self, job: Job) -> None:
        """Move a finished job from the queue to the record of finished ones (the lock held)."""
        self._jobs.pop(job.key, None)
        self._finished[job.key] = job
        self._finished.move_to_end(job.key)
        while len(self._finished) > MAX_FINISHED:
            self._finished.popitem(last=False)

    def _bound_cache(self, rules: Rules, players: int) -> None:
        """Delete the oldest cached tables beyond `cache_max_bytes` (never the one just solved)."""
        if self.cache_max_bytes is not None:
            with self._lock:
                prepared = list(self._prepared_paths)
            # a prepared table stays, and is not counted against the bound (it may be larger than the bound)
            extra = sum(info[2] for path in prepared if (info := _signature(path)) is not None)
            evict_oldest(cache_dir(), self.cache_max_bytes + extra, keep=[cache_path(rules, "win", players), *prepared])

    def close(self) -> None:
        """Drop the queued solves (a running one finishes in its thread; a prepared one stops at its next level); a
        later solve starts a new thread."""
        with self._lock:
            for job in self._prepared.values():
                job.stop.set()
            pool, self._pool = self._pool, None
        if pool is None:
            return
        pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            for job in [j for j in self._jobs.values() if j.future is not None and j.future.cancelled()]:
                job.error = "the server stopped before solving this ruleset"
                job.done.set()
                self._finish(job)


def _cache_path(rules: Rules, players: int) -> Path | None:
    try:
        return cache_path(rules, "win", players)
    except (OSError, ValueError):
        return None


def _load(rules: Rules, players: int) -> "SolveResult | None":
    """The cached table, read and checked by the CLI's loader (`solver.api.load_cached`), never computed here; None
    when there is none, or it is damaged, foreign or forged (deleted with a warning), or cannot be read (the
    background solve says why)."""
    try:
        return load_cached(rules, "win", players)
    except (CinqmilleError, OSError):
        return None
