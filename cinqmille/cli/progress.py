"""Long work on stderr: a progress bar on a terminal, otherwise one line for work that takes seconds."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

from ..words import duration_words

#: Work of fewer turn states than this (about a second's solve) says nothing when stderr is not a terminal: the
#: line depends on the work, not on how busy the machine is, so that output is the same from run to run.
QUIET_STATES = 2_000_000
#: The start of the line said for long work when stderr is not a terminal (`tests/test_readme.py` knows it).
LINE_PREFIX = "... "
#: Work of this many turn states or more (many minutes: a four-player solve) also says, when stderr is not a
#: terminal (a log), each whole percent done with the time so far and the time left at that pace.
LOG_STATES = 1_000_000_000


@contextmanager
def progress_bar(label: str, size: int = 0) -> Iterator[Callable[[float], None]]:
    """Yield a callback taking the fraction done (0..1).

    On a terminal the bar is drawn at the first report (so that work done
    before it, such as a table the work needs, draws its own bar first);
    otherwise one line ``... LABEL`` is written at the start of work of `size`
    turn states or more (`QUIET_STATES`), and for work of `LOG_STATES` or more
    a line at each whole percent (`log_lines`).
    """
    if not sys.stderr.isatty():
        if size >= QUIET_STATES:
            click.echo(f"{LINE_PREFIX}{label}", err=True)
        yield log_lines() if size >= LOG_STATES else (lambda fraction: None)
        return
    bars: list[Any] = []  # the bar, once drawn
    done = [0]

    def update(fraction: float) -> None:
        if not bars:
            bars.append(click.progressbar(length=1000, label=label, file=sys.stderr, show_eta=True))
            bars[0].__enter__()
        target = int(max(0.0, min(1.0, fraction)) * 1000)
        if target > done[0]:
            bars[0].update(target - done[0])
            done[0] = target

    try:
        yield update
    finally:
        if bars:
            bars[0].__exit__(None, None, None)


def log_lines(clock: Callable[[], float] = time.monotonic) -> Callable[[float], None]:
    """A progress callback that writes ``... 12% done, 9 min so far, about 1 h 06 min left`` on stderr at each
    whole percent reached (for a log, where no bar is drawn)."""
    start = clock()
    said = [0]

    def update(fraction: float) -> None:
        percent = int(max(0.0, min(1.0, fraction)) * 100)
        if percent <= said[0]:
            return
        said[0] = percent
        spent = clock() - start
        left = spent * (1.0 - fraction) / fraction if fraction > 0 else 0.0
        click.echo(f"{LINE_PREFIX}{percent}% done, {duration_words(spent).removeprefix('about ')} so far, "
                   f"{duration_words(left)} left", err=True)

    return update
