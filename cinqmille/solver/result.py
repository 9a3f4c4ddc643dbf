"""The immutable result of a solve, and each seat's chance from given starting scores.

A `SolveResult` for the `win` objective stores the turn-start table
``W[a, b]``. Every other value follows from it exactly: the turns of a score
``a`` against a few scores ``b`` at a time are one backward pass of the kernel
(`passes`) with the bust values ``L = 1 - W[b, a]`` and the bank values read
from ``W``; no iteration is needed. Those passes fill the policy table, read
above the solver (`table.policy`).

Starts (`Rules.start`, RULES.md section 8): a start is a banked score per seat
before the first turn, first seat first. A start of 0, or at or above the
opening, is a state of the solved table: its chances are read there. A start
below the opening is not opened (the seat still needs the opening, and the
start adds to the bank that opens it, `BankRules.opened`): no state of the
table leads there, so those rows are solved beside it, by the drivers' own
levels (`two_player.solve_game` and `n_player.solve_players` with `pending`
and `base`), and kept with the result (`extended`). The table itself does not
depend on the starts, nor does its cache. During a game, a seat still on its
head start is read from `at_starts`: the result with those rows, whose policy
(and so the advice) reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from .. import parsing
from ..errors import CinqmilleError, PositionError
from ..rules import Rules
from ..rules.bank import UNIT
from ..rules.loading import start_problem
from ..work import Progress
from .grid import ScoreGrid
from .kernel import TurnKernel
from .n_player import chase_note, solve_players
from .rounds import Rounds, rounds_solved, solve_rounds
from .seats import every_seat
from .turns import GameModel
from .two_player import solve_game

Objective = Literal["win", "expected", "race", "average"]


@dataclass(frozen=True, eq=False)
class SolveResult:
    """An immutable solve: values, ruleset, residual, timing; answers any position's question."""

    rules: Rules
    objective: Objective
    values: np.ndarray  # win: W[a, b] (units of 50), W[seat, a, b] under last_round; expected: E[opened, t, m];
    # race: R[a]; average: E[z, t, m], the turn of scoreless-turn count z (a bank worth t, a scoreless end the
    # count's relative value)
    residual: float
    seconds: float
    states: int
    exact: bool
    assumptions: tuple[str, ...]
    solver_version: str
    extra: dict[str, Any] = field(default_factory=dict)
    offers: np.ndarray | None = None  # take_over: offers[seat, a, b, t, m-1], the value of being offered (t, m)
    players: int = 2  # 3 or more: values are W[ia, ib, ic, j] by score positions (`ScoreGrid.slots`), the chances
    # of seats j = 0, 1 in playing order from the mover: read them with `seat_values`

    # -- the win objective ---------------------------------------------------------
    @cached_property
    def grid(self) -> ScoreGrid:
        return ScoreGrid.of(self.rules)

    @cached_property
    def kernel(self) -> TurnKernel:
        return TurnKernel(self.rules)

    @cached_property
    def model(self) -> GameModel:
        """The rows, caps and bank values of the game, with the stored take-over offers."""
        model = GameModel(self.rules, self.kernel)
        if model.offers is not None and self.offers is not None:
            model.offers = self.offers
        return model

    @property
    def seats(self) -> int:
        """The seats whose tables differ (last_round: seat 0 opens each round; two, or every seat of a larger
        table), else 1."""
        if self.players > 2:
            return self.players if self.values.ndim == self.players + 2 else 1
        return 2 if self.values.ndim == 3 else 1

    @property
    def tables(self) -> np.ndarray:
        """The turn-start tables with a seat axis: W[seat, a, b] (W[seat, scores..., j] for three players and more)."""
        if self.players > 2:
            return self.values if self.values.ndim == self.players + 2 else self.values[None]
        return self.values if self.values.ndim == 3 else self.values[None]

    @cached_property
    def rounds(self) -> Rounds | None:
        """Three players and more under a last round or take-over offers: the last turns and the banks of the
        solve (`rounds`); else None."""
        if self.players < 3 or self.objective != "win" or not rounds_solved(self.rules):
            return None
        return Rounds(self.rules, self.players, self.kernel, self.grid)

    @property
    def first_player_win(self) -> float:
        """Chance that the first player wins from the start of the game."""
        return self.win[0]

    @property
    def win(self) -> tuple[float, ...]:
        """Each seat's chance to win from the start of the game (the ruleset's `start`), first seat first."""
        return tuple(float(x) for x in chances(self, [self.rules.starts(self.players)])[0])

    def seat_values(self, rows: ArrayLike, seat: int = 0) -> np.ndarray:
        """Three players or more: the stored seats (the first n - 1, in playing order from the mover) of the turn
        starts `rows` (scores in units, shape (..., n), the mover first; the mover of `seat` under a last round),
        NaN where a score cannot occur (by score positions, `ScoreGrid.seat_values`; under a last round or
        take-over offers, by score units: the rounds' tables)."""
        self.need("win")
        if self.rounds is not None:  # the rounds' layout: every score unit, a seat axis (`tables`, `rounds`)
            at = tuple(np.moveaxis(np.asarray(rows, dtype=np.int64), -1, 0))
            return np.array(self.tables[(seat if self.seats > 1 else 0,) + at], dtype=float)
        return self.grid.seat_values(self.values, rows)

    def expected_turn(self, opened: bool = True) -> float:
        """`expected` objective: the mean points of a turn played for them, from its start (a bust banks 0)."""
        self.need("expected")
        return float(self.values[int(opened), 0, self.rules.dice - 1])

    def average_turn(self) -> float:
        """`average` objective: the most points per turn over a long game (the gain: the turn from a count of 0)."""
        self.need("average")
        return float(self.values[0, 0, self.rules.dice - 1])

    def race_turns(self, score: int = 0) -> float:
        """`race` objective: the fewest expected turns one player alone needs from `score` to the goal."""
        self.need("race")
        return float(self.values[score // UNIT])

    def seat_of(self, seat: int) -> int:
        """The row kind of a two-player `seat` (0 where both seats play alike); raises for a seat the table does not
        have."""
        if seat not in (0, 1) or seat >= self.seats:
            if self.seats == 1:
                return 0
            raise PositionError(f"seat must be 0 (opens each round) or 1, got {seat}")
        return seat

    def need(self, objective: str) -> None:
        if self.objective != objective:
            raise ValueError(f"this result is for the '{self.objective}' objective, not '{objective}'")


def parse_faces(roll: str | tuple[int, ...] | list[int], rules: Rules) -> tuple[int, ...]:
    """Faces from '1,5,3,3,2', '15332' or a sequence; checked against the ruleset."""
    if isinstance(roll, str):
        try:
            return parsing.faces(roll, rules.dice)
        except CinqmilleError as exc:
            raise PositionError(str(exc)) from None
    else:
        faces = tuple(int(f) for f in roll)
    bad = [f for f in faces if not 1 <= f <= 6]
    if bad:
        raise PositionError(f"faces must be between 1 and 6; got {bad[0]} in {roll!r}")
    if not 1 <= len(faces) <= rules.dice:
        raise PositionError(f"a roll has 1 to {rules.dice} dice under '{rules.name}'; got {len(faces)}")
    return faces


# -- the starts of a game (RULES.md section 8) ----------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Extended:
    """A solved table with the rows of some pending starts added: ``values`` shaped like the result's tables."""

    pending: tuple[int, ...]  # the pending starts (units) whose rows are solved
    values: np.ndarray  # two players: W[kind, a, b]; n players: W[ia, ib, ..., j] on the grid with `pending`
    notes: tuple[str, ...]  # what the added rows assume (chasing cycles settled), empty when exact
    residual: float
    offers: np.ndarray | None = None  # n players under take_over: the offers of the table with those rows


def pending_of(result: SolveResult, scores: Sequence[int]) -> tuple[int, ...]:
    """The starting scores (points) that are below the opening and not 0: the rows `extended` must add (units)."""
    low = result.grid.low
    return tuple(sorted({s // UNIT for s in scores if 0 < s // UNIT < low}))


def extended(result: SolveResult, pending: tuple[int, ...], progress: Progress | None = None) -> Extended:
    """`result`'s table with the rows of the `pending` starts (units) solved, kept on the result once computed
    (`progress`: told the fraction of that solve done)."""
    have: dict[tuple[int, ...], Extended] = result.__dict__.setdefault("_extended", {})
    for known, ext in have.items():
        if set(pending) <= set(known):
            return ext
    if not pending:
        return Extended((), result.tables if result.players == 2 else result.values, (), result.residual)
    if result.players == 2:
        w, _, stats = solve_game(result.rules, kernel=result.kernel, pending=pending,
                                 base=(result.tables, result.offers), progress=progress)
        ext = Extended(pending, w if w.ndim == 3 else w[None], (), stats.residual)
    elif result.rounds is not None:  # a last round or take-over offers: the whole table again, with the starts
        values, offers, n_stats, chasing = solve_rounds(result.rules, result.players, kernel=result.kernel,
                                                        pending=pending, progress=progress)
        ext = Extended(pending, values, chase_note(chasing, n_stats.residual), n_stats.residual, offers)
    else:
        pending = tuple(sorted(set(pending) | set(result.grid.pending)))  # the base's own rows stay on the grid
        values, n_stats, chasing = solve_players(result.rules, result.players, kernel=result.kernel,
                                                 pending=pending, base=result.values,
                                                 base_scores=result.grid.scores, progress=progress)
        ext = Extended(pending, values, chase_note(chasing, n_stats.residual), n_stats.residual)
    have[pending] = ext
    return ext


def check_start(result: SolveResult, start: Sequence[int]) -> tuple[int, ...]:
    """`start` as units, one per seat, each a score the ruleset can write below the goal (else `PositionError`)."""
    if len(start) != result.players:
        raise PositionError(f"a start gives a score to each of the {result.players} seats, got {len(start)}")
    for seat, score in enumerate(start):
        problem = start_problem(result.rules, int(score))
        if problem:
            raise PositionError(f"the start of seat {seat}: {problem}")
    return tuple(int(score) // UNIT for score in start)


def chances(result: SolveResult, starts: Sequence[Sequence[int]]) -> np.ndarray:
    """Each seat's chance to win (first seat first) from each start (points, first seat first): shape (S, n)."""
    result.need("win")
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


def start_notes(result: SolveResult, starts: Sequence[Sequence[int]]) -> tuple[str, ...]:
    """What the chances from `starts` assume beyond the table's own assumptions (empty when exact)."""
    rows = [check_start(result, s) for s in starts]
    return extended(result, pending_of(result, [x * UNIT for r in rows for x in r])).notes


def at_starts(result: SolveResult, scores: Sequence[int]) -> SolveResult:
    """`result` where some of `scores` (points, any seats) are head starts below the opening, not yet opened: a copy
    whose table holds those starts' rows (`extended`) and whose grid and model know them, so that its policy (and
    the advice read from it) plays them; `result` itself when none is. Kept on `result` once made."""
    pending = pending_of(result, scores)
    if not pending:
        return result
    made: dict[tuple[int, ...], SolveResult] = result.__dict__.setdefault("_at_starts", {})
    found = made.get(pending)
    if found is None:
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
