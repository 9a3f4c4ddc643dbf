"""Long work on stderr: a progress bar on a terminal, otherwise one line for work that takes seconds."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import click

#: Work of fewer turn states than this (about a second's solve) says nothing when stderr is not a terminal: the
#: line depends on the work, not on how busy the machine is, so that output is the same from run to run.
QUIET_STATES = 2_000_000
#: The start of the line said for long work when stderr is not a terminal (`tests/test_readme.py` knows it).
LINE_PREFIX = "... "


@contextmanager
def progress_bar(label: str, size: int = 0) -> Iterator[Callable[[float], None]]:
    """Yield a callback taking the fraction done (0..1).

    On a terminal the bar is drawn at the first report (so that work done
    before it, such as a table the work needs, draws its own bar first);
    otherwise one line ``... LABEL`` is written at the start of work of `size`
    turn states or more (`QUIET_STATES`).
    """
    if not sys.stderr.isatty():
        if size >= QUIET_STATES:
            click.echo(f"{LINE_PREFIX}{label}", err=True)
        yield lambda fraction: None
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
