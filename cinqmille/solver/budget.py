"""How big a solve is, estimated from the ruleset before anything is allocated, and the limits on it.

`estimate(rules, objective)` counts the turn states the solver will visit (the
`states` figure that `solve` reports, to within the last-round extension, which
is bounded from above) and the peak memory of its arrays. `check_budget`
refuses, in one line with the estimate and the limit, a solve beyond
`Limits`: by default 200 million states (about 15 minutes) and 4 GiB, raised
by `cinqmille solve --max-states/--max-memory` or the environment variables
`CINQMILLE_MAX_STATES` and `CINQMILLE_MAX_MEMORY` (GiB).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.bank import UNIT
from .grid import ScoreGrid
from .last_turn import SPAN
from .objectives import EXPECTED_SPAN
from .turns import table_kinds

#: Default limits: turn states visited, and bytes of memory held by the solver's arrays.
MAX_STATES = 200_000_000
MAX_BYTES = 4 * 2**30
#: Largest keep of any ruleset, in units (six 1s under doubling, 8000 points), bounding the padding.
_PAD = 8000 // UNIT + 3
#: Arrays of (rows, layers, dice) floats alive at once in a kernel pass (values, bank values, flat copies).
_WORK_ARRAYS = 8
#: Three players and more: copies of a level's (rows, layers, dice, seats) values alive at once, and the
#: process itself (Numba and its compiled kernel included). Fitted to measured peaks (resident set, 2026-12-01):
#: four players at goal 2000 (opening 500) 1,175 MB with the compiled kernel (800 MB with the NumPy one), goal
#: 1500 394 MB, three-player `standard` 400-460 MB; the estimate is at or above each.
_LEVEL_ARRAYS = 6
_PROCESS = 400 * 2**20


class TooLarge(CinqmilleError):
    """A solve beyond the limits (the message gives the estimate, the limit and how to raise it)."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """Turn states a solve visits and the peak bytes of its arrays."""

    states: int
    bytes: int


@dataclass(frozen=True, slots=True)
class Limits:
    """The largest solve allowed: turn states and bytes of memory."""

    states: int = MAX_STATES
    bytes: int = MAX_BYTES

    @classmethod
    def from_env(cls, states: int | None = None, memory_gib: float | None = None) -> "Limits":
        """Limits from explicit values, else `CINQMILLE_MAX_STATES` / `CINQMILLE_MAX_MEMORY`, else the defaults."""
        from ..parsing import whole

        if states is None and os.environ.get("CINQMILLE_MAX_STATES"):
            states = whole(os.environ["CINQMILLE_MAX_STATES"], "CINQMILLE_MAX_STATES", low=1)
        if memory_gib is None and os.environ.get("CINQMILLE_MAX_MEMORY"):
            memory_gib = whole(os.environ["CINQMILLE_MAX_MEMORY"], "CINQMILLE_MAX_MEMORY", low=1)
        return cls(MAX_STATES if states is None else states,
                   MAX_BYTES if memory_gib is None else int(memory_gib * 2**30))


def estimate(rules: Rules, objective: str = "win", players: int = 2) -> Estimate:
    """States and peak memory of solving `rules` for `objective` (an upper estimate)."""
    d = rules.dice
    grid = ScoreGrid.of(rules)
    g = grid.goal
    caps = grid.cap(grid.scores).astype(np.int64)
    if objective in ("expected", "average"):
        top = EXPECTED_SPAN * g
        tables = 2 if objective == "expected" else (rules.zero_turns.count if rules.zero_turns else 1)
        return Estimate(tables * (top + 1) * d, (tables + 1) * (top + _PAD) * d * 8 * 4)
    if objective == "race":
        states = int((caps + 1).sum()) * d
        return Estimate(states, g * g * 8 + (int(caps.max()) + _PAD) * d * 8 * _WORK_ARRAYS)
    if players > 2:
        s = len(grid.scores)
        states = s ** (players - 1) * int((caps + 1).sum()) * d
        tables = g ** players * (players - 1) * 8
        # a level's arrays (its bank values per seat, the kernel's blocks) scale with the rows of the largest
        # level: the score tuples of one sum, counted exactly by convolving the possible scores
        possible = np.zeros(g, dtype=np.int64)
        possible[grid.scores] = 1
        per_sum = possible
        for _ in range(players - 1):
            per_sum = np.convolve(per_sum, possible)
        level = int(per_sum.max()) * (int(caps.max()) + 2) * d * players * 8
        if rules.last_round or rules.take_over:
            return _rounds_estimate(rules, players, grid, caps, int(per_sum.max()))
        return Estimate(states, tables + _LEVEL_ARRAYS * level + _PROCESS)
    seats = table_kinds(rules)
    ext = SPAN // 2 if rules.last_round and rules.end == "reach" else 0
    s = len(grid.scores)
    states = seats * s * int((caps + ext + 1).sum()) * d
    tables = seats * g * g * 8
    offers = seats * g * g * g * d * 8 if rules.take_over else 0
    work = seats * s * (int(caps.max()) + ext + _PAD) * d * 8 * _WORK_ARRAYS
    return Estimate(states, tables + offers + work)


def _rounds_estimate(rules: Rules, players: int, grid: ScoreGrid, caps: np.ndarray, widest: int) -> Estimate:
    """States and memory of a solve with a last round or take-over offers at three players or more (`rounds`):
    every seat's table under a last round, the rows rolled on past the goal until the targets are alike (reach),
    the middle seats' last turns (one row per target and scores of the seats still to play), and under
    take-over the offers' table and the rows shifted by every taken turn (`rounds.taken_rolls`)."""
    d, g, s, k = rules.dice, grid.goal, len(grid.scores), players - 1
    kinds = players if rules.last_round else 1
    ext = SPAN // 2 if rules.last_round and rules.end == "reach" else 0  # `LastTurn.reach_extension`, bounded
    layers = int((caps + ext + 1).sum())  # per score of the mover, the rows' layers (a trigger's rolled on)
    states = kinds * s ** (players - 1) * layers * d
    memory = kinds * g ** players * k * 8
    if rules.last_round:  # the middle seats' last turns: per target, one row per scores of the seats to play
        targets = ext + 2
        for later in range(2, players):
            states += targets * s ** later * (int(caps.max()) + ext + 1) * d
            memory += targets * s ** later * (later + d * later * rules.take_over) * 8 * 4  # kept (Python dict)
    if rules.take_over:
        states += kinds * s ** (players - 1) * int(((caps + ext + 1) ** 2).sum()) // 2 * d  # shifted rows
        memory += kinds * g ** players * g * d * k * 8  # the offers' table
    # a level's bank values are laid out (its rows, the cap's layers and a period, every seat), and the shifted
    # rows' full tables are kept a chunk at a time (`rounds.CHUNK` rows of the kernel's padded layers)
    level = kinds * widest * (int(caps.max()) + ext + 3) * d * players * 8
    shifted = 1024 * (int(caps.max()) + ext + _PAD) * d * players * 8 if rules.take_over else 0
    return Estimate(states, memory + _LEVEL_ARRAYS * level + 2 * shifted + _PROCESS)


def check_budget(rules: Rules, objective: str = "win", limits: Limits | None = None, players: int = 2) -> Estimate:
    """The estimate of a solve; raise `TooLarge` when it is beyond `limits`."""
    limits = limits or Limits.from_env()
    est = estimate(rules, objective, players)
    if est.states > limits.states:
        raise TooLarge(f"'{rules.name}' ({objective}, {players} players) would visit about {est.states:,} turn states, above the limit "
                       f"of {limits.states:,}; raise it with --max-states or CINQMILLE_MAX_STATES if you mean it")
    if est.bytes > limits.bytes:
        raise TooLarge(f"'{rules.name}' ({objective}, {players} players) would need about {est.bytes / 2**30:,.1f} GiB of memory, above "
                       f"the limit of {limits.bytes / 2**30:,.1f} GiB; raise it with --max-memory or "
                       "CINQMILLE_MAX_MEMORY (GiB) if you mean it")
    return est
