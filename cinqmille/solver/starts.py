"""Each seat's chance from given starting scores (`Rules.start`, RULES.md section 8), read from a solved table.

A start is a banked score per seat before the first turn, first seat first.
A start of 0, or at or above the opening, is a state of the solved table: its
chances are read there. A start below the opening is not opened (the seat
still needs the opening, and the start adds to the bank that opens it,
`BankRules.opened`): no state of the table leads there, so those rows are
solved beside it, by the drivers' own levels (`two_player.solve_game` and
`n_player.solve_players` with `pending` and `base`), and kept with the result.
The table itself does not depend on the starts, nor does its cache. During a
game, a seat still on its head start is read from `at_starts`: the result with
those rows, whose policy (and so the advice) reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ..position import PositionError
from ..rules.bank import UNIT
from ..rules.loading import start_problem
from ..work import Progress
from .grid import ScoreGrid
from .seats import every_seat

if TYPE_CHECKING:
    from .result import SolveResult


@dataclass(frozen=True, slots=True)
class Extended:
    """A solved table with the rows of some pending starts added: ``values`` shaped like the result's tables."""

    pending: tuple[int, ...]  # the pending starts (units) whose rows are solved
    values: np.ndarray  # two players: W[kind, a, b]; n players: W[ia, ib, ..., j] on the grid with `pending`
    notes: tuple[str, ...]  # what the added rows assume (chasing cycles settled), empty when exact
    residual: float
    offers: np.ndarray | None = None  # n players under take_over: the offers of the table with those rows


def pending_of(result: "SolveResult", scores: Sequence[int]) -> tuple[int, ...]:
    """The starting scores (points) that are below the opening and not 0: the rows `extended` must add (units)."""
    low = result.grid.low
    return tuple(sorted({s // UNIT for s in scores if 0 < s // UNIT < low}))


def extended(result: "SolveResult", pending: tuple[int, ...], progress: Progress | None = None) -> Extended:
    """`result`'s table with the rows of the `pending` starts (units) solved, kept on the result once computed
    (`progress`: told the fraction of that solve done)."""
    have: dict[tuple[int, ...], Extended] = result.__dict__.setdefault("_extended", {})
    for known, ext in have.items():
        if set(pending) <= set(known):
            return ext
    if not pending:
        return Extended((), result.tables if result.players == 2 else result.values, (), result.residual)
    if result.players == 2:
        from .two_player import solve_game

        w, _, stats = solve_game(result.rules, kernel=result.kernel, pending=pending,
                                 base=(result.tables, result.offers), progress=progress)
        ext = Extended(pending, w if w.ndim == 3 else w[None], (), stats.residual)
    elif result.rounds is not None:  # a last round or take-over offers: the whole table again, with the starts
        from .n_player import chase_note
        from .rounds import solve_rounds

        values, offers, n_stats, chasing = solve_rounds(result.rules, result.players, kernel=result.kernel,
                                                        pending=pending, progress=progress)
        ext = Extended(pending, values, chase_note(chasing, n_stats.residual), n_stats.residual, offers)
    else:
        from .n_player import chase_note, solve_players

        pending = tuple(sorted(set(pending) | set(result.grid.pending)))  # the base's own rows stay on the grid
        values, n_stats, chasing = solve_players(result.rules, result.players, kernel=result.kernel,
                                                 pending=pending, base=result.values,
                                                 base_scores=result.grid.scores, progress=progress)
        ext = Extended(pending, values, chase_note(chasing, n_stats.residual), n_stats.residual)
    have[pending] = ext
    return ext


def check_start(result: "SolveResult", start: Sequence[int]) -> tuple[int, ...]:
    """`start` as units, one per seat, each a score the ruleset can write below the goal (else `PositionError`)."""
    if len(start) != result.players:
        raise PositionError(f"a start gives a score to each of the {result.players} seats, got {len(start)}")
    for seat, score in enumerate(start):
        problem = start_problem(result.rules, int(score))
        if problem:
            raise PositionError(f"the start of seat {seat}: {problem}")
    return tuple(int(score) // UNIT for score in start)


def chances(result: "SolveResult", starts: Sequence[Sequence[int]]) -> np.ndarray:
    """Each seat's chance to win (first seat first) from each start (points, first seat first): shape (S, n)."""
    result._need("win")
    rows = [check_start(result, s) for s in starts]
    ext = extended(result, pending_of(result, [x * UNIT for r in rows for x in r]))
    if not rows:
        return np.zeros((0, result.players))
    index = np.array(rows, dtype=np.int64)
    if result.players == 2:
        mover = ext.values[0, index[:, 0], index[:, 1]][:, None]  # kind 0: seat 0 to move, counters at 0
    else:
        if result.rounds is not None:  # the rounds' layout by score units (`SolveResult.seat_values`)
            table = ext.values if ext.values.ndim == result.players + 1 else ext.values[0]  # seat 0 moves first
            mover = table[tuple(index.T)]
        else:
            grid = ScoreGrid.of(result.rules, ext.pending) if ext.pending else result.grid
            mover = grid.seat_values(ext.values, index)
    return every_seat(mover)


def start_notes(result: "SolveResult", starts: Sequence[Sequence[int]]) -> tuple[str, ...]:
    """What the chances from `starts` assume beyond the table's own assumptions (empty when exact)."""
    rows = [check_start(result, s) for s in starts]
    return extended(result, pending_of(result, [x * UNIT for r in rows for x in r])).notes


def at_starts(result: "SolveResult", scores: Sequence[int]) -> "SolveResult":
    """`result` where some of `scores` (points, any seats) are head starts below the opening, not yet opened: a copy
    whose table holds those starts' rows (`extended`) and whose grid and model know them, so that its policy (and
    the advice read from it) plays them; `result` itself when none is. Kept on `result` once made."""
    pending = pending_of(result, scores)
    if not pending:
        return result
    made: dict[tuple[int, ...], "SolveResult"] = result.__dict__.setdefault("_at_starts", {})
    found = made.get(pending)
    if found is None:
        from .turns import GameModel

        ext = extended(result, pending)
        values = ext.values if result.players > 2 or result.values.ndim == 3 else ext.values[0]
        found = replace(result, values=values, residual=max(result.residual, ext.residual),
                        offers=result.offers if ext.offers is None else ext.offers,
                        exact=result.exact and not ext.notes, assumptions=tuple(result.assumptions) + ext.notes)
        model = GameModel(result.rules, result.kernel, pending)
        if model.offers is not None and result.offers is not None:
            model.offers = result.offers  # a seat on its head start is never offered a take-over (not opened)
        found.__dict__.update(kernel=result.kernel, grid=ScoreGrid.of(result.rules, ext.pending), model=model,
                              _at_starts={pending: found})
        made[pending] = found
    return found
