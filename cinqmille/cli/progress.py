"""A progress bar on stderr for long work, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from typing import Callable, Iterator

import click


@contextmanager
def progress_bar(label: str) -> Iterator[Callable[[float], None]]:
    """Yield a callback taking the fraction done (0..1); draws a bar on a terminal, else nothing."""
    if not sys.stderr.isatty():
        yield lambda fraction: None
        return
    with click.progressbar(length=1000, label=label, file=sys.stderr, show_eta=True) as bar:
        state = {"done": 0}

        def update(fraction: float) -> None:
            target = int(max(0.0, min(1.0, fraction)) * 1000)
            if target > state["done"]:
                bar.update(target - state["done"])
                state["done"] = target

        yield update
