"""Long work said aloud: the one hook through which the library says what it is doing.

A solve, or the build of a policy table, runs inside ``working(label, progress)``.
With an explicit `progress` callback (a solve the caller watches, the web
server's jobs) that callback is the report. Otherwise the reporter set by the
application (`set_reporter`: the command line draws a bar on a terminal, one line
otherwise, for work of a few million turn states or more) is told; a report inside another one is silent, so that one piece of
work shows one bar. Without a reporter nothing is said (the library never prints).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

Progress = Callable[[float], None]
Reporter = Callable[[str, int], AbstractContextManager[Progress]]  # (label, size in turn states)

_REPORTER: list[Reporter] = []
_DEPTH = threading.local()


def set_reporter(reporter: Reporter | None) -> None:
    """Report long work through `reporter` from now on (None: say nothing)."""
    _REPORTER.clear()
    if reporter is not None:
        _REPORTER.append(reporter)


def _silent(fraction: float) -> None:
    """A progress callback that says nothing."""


@contextmanager
def working(label: str, progress: Progress | None = None, size: int = 0) -> Iterator[Progress]:
    """Yield the callback (fraction done, 0..1) of one piece of long work called `label`, of `size` turn states
    (the reporter may say nothing of small work)."""
    if progress is not None:
        yield progress
        return
    depth = getattr(_DEPTH, "n", 0)
    if depth or not _REPORTER or threading.current_thread() is not threading.main_thread():
        yield _silent
        return
    _DEPTH.n = depth + 1
    try:
        with _REPORTER[0](label, size) as update:
            yield update
    finally:
        _DEPTH.n = depth
