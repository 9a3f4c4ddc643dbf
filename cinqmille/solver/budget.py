"""How big a solve is, estimated from the ruleset before anything is allocated, and the limits on it.

`estimate(rules, objective)` counts the turn states the solver will visit (the
`states` figure that `solve` reports, to within the last-round extension, which
is bounded from above) and the peak memory of its arrays. `check_budget`
refuses, in one line with the estimate and the limit, a solve beyond
`Limits`: by default 200 million states (about a minute) and 4 GiB; 20 billion
states for `cinqmille solve`, which asks for that table by name and says how
long it will take before it starts (`kernel_rate`, `solve_seconds`); raised by
`cinqmille solve --max-states/--max-memory` or the environment variables
`CINQMILLE_MAX_STATES` and `CINQMILLE_MAX_MEMORY` (GiB).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.bank import UNIT
from ..words import duration_words
from .grid import ScoreGrid
from .kernel import StartBanks, TurnKernel
from .last_turn import SPAN
from .objectives import EXPECTED_SPAN
from .turns import table_kinds
from ..parsing import whole

#: Default limits: turn states visited, and bytes of memory held by the solver's arrays.
MAX_STATES = 200_000_000
MAX_BYTES = 4 * 2**30
#: The states limit of `cinqmille solve`, which names the table it makes and says how long that takes before it
#: starts (`kernel_rate`): four-player `standard` (12.2 billion states, one to two hours here) is admitted.
SOLVE_STATES = 20_000_000_000
#: Largest keep of any ruleset, in units (six 1s under doubling, 8000 points), bounding the padding.
_PAD = 8000 // UNIT + 3
#: Arrays of (rows, layers, dice) floats alive at once in a kernel pass (values, bank values, flat copies).
_WORK_ARRAYS = 8
#: Three players and more: the table by score positions (`n_player.solve_players`), the choices of all but the
#: last score (`n_player.level_heads`), and per row of the largest level the words (8 bytes) per seat of its
#: arrays (rows, banks read from the table, the level solver's values and steps: 56 from the peak of four-player
#: `standard`; 170 traced at goal 2000, where fixed costs weigh more); and the process itself (Python,
#: NumPy, Numba and its compiled kernel). Fitted to measured peaks (resident set, `/usr/bin/time -v`, 2026-12-02,
#: this 2-core machine; docs/solver.md "Four players"): the estimate is at or above each.
_ROW_WORDS = 80
PROCESS_BYTES = 256 * 2**20  # the process itself (Python, NumPy, Numba and its compiled kernel)


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
    def from_env(cls, states: int | None = None, memory_gib: float | None = None,
                 default_states: int = MAX_STATES) -> "Limits":
        """Limits from explicit values, else `CINQMILLE_MAX_STATES` / `CINQMILLE_MAX_MEMORY`, else the defaults
        (`default_states`: `SOLVE_STATES` for `cinqmille solve`)."""
        if states is None and os.environ.get("CINQMILLE_MAX_STATES"):
            states = whole(os.environ["CINQMILLE_MAX_STATES"], "CINQMILLE_MAX_STATES", low=1)
        if memory_gib is None and os.environ.get("CINQMILLE_MAX_MEMORY"):
            memory_gib = whole(os.environ["CINQMILLE_MAX_MEMORY"], "CINQMILLE_MAX_MEMORY", low=1)
        return cls(default_states if states is None else states,
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
        tables = s ** players * (players - 1) * 8  # only the possible scores (`ScoreGrid.slots`)
        heads = s ** (players - 1) * players * 8 * 2
        # a level's arrays scale with the rows of the largest level: the score tuples of one sum, counted exactly
        # by convolving the possible scores
        possible = np.zeros(g, dtype=np.int64)
        possible[grid.scores] = 1
        per_sum = possible
        for _ in range(players - 1):
            per_sum = np.convolve(per_sum, possible)
        if rules.last_round or rules.take_over:
            return _rounds_estimate(rules, players, grid, caps, int(per_sum.max()))
        level = int(per_sum.max()) * players * 8 * _ROW_WORDS
        return Estimate(states, tables + heads + level + PROCESS_BYTES)
    seats = table_kinds(rules)
    ext = SPAN // 2 if rules.last_round and rules.end == "reach" else 0
    s = len(grid.scores)
    states = seats * s * int((caps + ext + 1).sum()) * d
    tables = seats * g * g * 8
    offers = seats * g * g * g * d * 8 if rules.take_over else 0
    work = seats * s * (int(caps.max()) + ext + _PAD) * d * 8 * _WORK_ARRAYS
    return Estimate(states, tables + offers + work)


#: Under a last round or take-over offers at three players and more (`rounds`, which keeps every score unit):
#: copies of a level's (rows, layers, dice, seats) values alive at once. Fitted to measured peaks (resident
#: set, 2026-12-01): four players at goal 2000 (opening 500) 1,175 MB, goal 1500 394 MB; the estimate is at or
#: above each.
_LEVEL_ARRAYS = 6


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
    return Estimate(states, memory + _LEVEL_ARRAYS * level + 2 * shifted + PROCESS_BYTES)


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


#: Kernel work per turn state of a solve of three players or more, in turn states of one pass: the passes a
#: level makes over its rows (Newton steps, value iteration: 2.42 at four players goal 2000, 2.55 at goal 3000)
#: and the level's work outside the kernel (13 to 23 % more), measured 2026-12-02 on this 2-core machine.
SOLVE_WORK = 3.0
#: Rows of the pass `kernel_rate` times.
RATE_ROWS = 8192


def kernel_rate(rules: Rules, players: int) -> float:
    """Turn states a second of one kernel pass with seat values of `players` on this machine, measured now: a pass
    over `RATE_ROWS` rows of every mover's score (the compiled kernel loaded first, not timed)."""
    grid = ScoreGrid.of(rules)
    kernel = TurnKernel(rules)
    k = players - 1
    a = np.resize(grid.scores, RATE_ROWS)
    caps = grid.cap(a)
    order = np.argsort(-caps, kind="stable")
    a, caps = a[order], caps[order]
    starts = np.full((1, len(grid.scores), k), 1.0 / players)
    bank = StartBanks(grid.position_codes(int(caps.max())), starts, grid.slots(a), np.zeros(len(a), dtype=np.int64))
    l0 = np.full(len(a), 1.0 / players)
    kernel.run(a, caps, bank, l0[:64], rows=np.arange(64))  # compiled (or read from the disk cache) here
    start = time.perf_counter()
    kernel.run(a, caps, bank, l0)
    seconds = max(time.perf_counter() - start, 1e-6)
    return int((caps + 1).sum()) * rules.dice / seconds


def solve_seconds(states: int, rate: float) -> float:
    """The time a solve of three players or more of `states` turn states takes at a kernel `rate` (`kernel_rate`)."""
    return states * SOLVE_WORK / rate


def plan_words(rules: Rules, players: int, states: int, kept: tuple[int, int] = (0, 0)) -> str:
    """What a long solve of three players or more says before it starts: its turn states, the kernel rate
    measured now (`kernel_rate`) and the time at that rate (`solve_seconds`), less the levels `kept` (levels, turn
    states) by an interrupted solve."""
    rate = kernel_rate(rules, players)
    left = max(states - kept[1], 0)
    resumed = f", {kept[0]} levels ({kept[1] / max(states, 1):.0%}) kept from an interrupted solve" if kept[0] else ""
    return (f"{states:,} turn states{resumed}: {duration_words(solve_seconds(left, rate))} at "
            f"{rate / 1e6:.1f} million states a second (a kernel pass measured now)")
