"""The solved tables of the web app: loaded once per ruleset, solved in a background thread, never in a request.

`Tables.get` answers at once: the table (kept in memory after its first use, or
read from the solver's cache on disk, as the CLI reads it), or a `Job` that a
single background thread is working on, whose `progress` the page polls
(`/api/progress`). One solve runs at a time, so the machine stays usable; at most
`max_queued` wait or run (`QueueFull` beyond, a 429). A finished job's status
stays answerable (a bounded record of the last `MAX_FINISHED`, apart from the
tables in memory), and after each solve the oldest table files of the cache are
deleted beyond `cache_max_bytes` (`solver.cache.evict_oldest`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import CinqmilleError
from ..rules import Rules, content_key

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


class Tables:
    """Solved `win` tables by ruleset content and number of players, shared by every request."""

    def __init__(self, max_queued: int = MAX_QUEUED, cache_max_bytes: int | None = None,
                 solver: "Callable[..., SolveResult] | None" = None) -> None:
        self._lock = threading.Lock()
        self._ready: dict[str, SolveResult] = {}
        self._jobs: dict[str, Job] = {}
        self._finished: OrderedDict[str, Job] = OrderedDict()
        self.max_queued, self.cache_max_bytes = max_queued, cache_max_bytes
        self._solver = solver  # `solver.solve` unless given (a test's stand-in)
        self._pool: ThreadPoolExecutor | None = None  # started by the first solve, again after `close`

    def get(self, rules: Rules, players: int = 2) -> "SolveResult | Job":
        """The table if it is at hand (memory, or the disk cache), else the job that solves it (started if needed)."""
        from ..solver.api import is_cached

        key = table_key(rules, players)
        with self._lock:
            found = self._ready.get(key)
            if found is not None:
                return found
            job = self._jobs.get(key)
            if job is not None:
                return job
        if is_cached(rules, players):
            try:
                return self._keep(key, _load(rules, players))
            except (CinqmilleError, OSError):
                pass  # a damaged or unreadable cache file: `solve` deals with it in the background
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
            job = self._jobs.get(key) or self._finished.get(key)
            if job is None and key in self._ready:
                job = Job(key, self._ready[key].rules.name, 1.0)
                job.done.set()
            return job

    def _keep(self, key: str, result: "SolveResult") -> "SolveResult":
        with self._lock:
            self._ready[key] = result
            while len(self._ready) > MAX_TABLES:
                del self._ready[next(iter(self._ready))]
        return result

    def _solve(self, job: Job, rules: Rules, players: int) -> None:
        def progress(fraction: float) -> None:
            job.progress = max(job.progress, min(float(fraction), 1.0))

        try:
            from ..solver import solve

            result = (self._solver or solve)(rules, "win", progress=progress, players=players)
            self._keep(job.key, result)
            job.progress = 1.0
            self._bound_cache(rules, players)
        except CinqmilleError as exc:
            job.error = str(exc).splitlines()[0] if str(exc) else "the solve failed"
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
        from ..solver.cache import cache_dir, cache_path, evict_oldest

        if self.cache_max_bytes is not None:
            evict_oldest(cache_dir(), self.cache_max_bytes, keep=[cache_path(rules, "win", players)])

    def close(self) -> None:
        """Drop the queued solves (a running one finishes in its thread); a later solve starts a new thread."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is None:
            return
        pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            for job in [j for j in self._jobs.values() if j.future is not None and j.future.cancelled()]:
                job.error = "the server stopped before solving this ruleset"
                job.done.set()
                self._finish(job)


def _load(rules: Rules, players: int) -> "SolveResult":
    """The cached table, read and checked, never recomputed here (a damaged file raises `CinqmilleError`)."""
    from ..solver.api import load
    from ..solver.cache import cache_path

    return load(cache_path(rules, "win", players))
