"""Where a position is read in a policy table: the one reading of a `Position` (`locate`) and its vector form
for arrays of games (`locate_rows`).

A policy table of ``n`` seats (`policy.PolicyTable`, any number of seats) has a row per kind and tuple of banked
scores: row ``kind * S^n + ravel(i_mover, i_1, ..., i_{n-1})`` (``i`` the index
of a score among the ruleset's possible ones, the opponents in playing order
from the mover). The kind is what a two-player row knows besides the scores
(`kind`): the scoreless-turn counters under a counted `zero_turns`, else the
seat under `last_round`, else 0. A game of more players than the table's seats
is read against the ``n - 1`` opponents who threaten most (`n_player.threatening`:
the highest scores, a tie to who plays sooner), applied here and nowhere else.
A last turn of a last round (`Position.target`) is a row of its own
(`PolicyTable.last_turn`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Callable, Protocol

import numpy as np

from ..errors import CinqmilleError
from .position import Position, PositionError
from ..rules import Rules
from ..rules.bank import UNIT
from ..solver.choice import ranking
from ..solver.grid import ScoreGrid
from ..solver.n_player import threatening
from .policy import policy_of
from ..solver.result import SolveResult, at_starts
from .rows import TurnRows
from ..solver.turns import counted


class Table(Protocol):
    """What `locate` reads of a policy table: its ruleset, possible scores and their index, its seats and kinds."""

    @property
    def rules(self) -> Rules: ...

    @property
    def scores(self) -> np.ndarray: ...  # (S,) possible banked scores, units

    @property
    def index(self) -> np.ndarray: ...  # (goal,) index of each score among them, -1 where impossible

    @property
    def players(self) -> int: ...  # seats of the table

    @property
    def kinds(self) -> int: ...  # kinds of row per tuple of scores (seats under last_round, counters, or 1)


@dataclass(frozen=True, eq=False)
class Layout:
    """The rows of a table of `players` seats (one kind of row) over a ruleset's scores, without the table: what
    the simulator's games read when no policy needs a table's values (`row_reader`)."""

    rules: Rules
    scores: np.ndarray
    index: np.ndarray
    players: int
    kinds: int = 1

    @classmethod
    def of(cls, grid: ScoreGrid, players: int) -> "Layout":
        index = np.full(grid.goal + 1, -1, dtype=np.int64)
        index[grid.scores] = np.arange(len(grid.scores))
        return cls(grid.rules, np.asarray(grid.scores, dtype=np.int64), index, players)


def row_reader(table: Table) -> Callable[..., np.ndarray]:
    """``rows(mover, *opponents)``: `locate_rows` of `table` for arrays of games (every opponent in playing order;
    the reduction to the table's seats is `locate_rows`'s)."""
    return partial(locate_rows, table)


def kind(table: Table, position: Position) -> int:
    """The kind of row a position is read at (`solver.turns`): the scoreless-turn counters (mine * count + his)
    under a counted `zero_turns`, else the seat under `last_round` (0 opens each round), else 0."""
    count = counted(table.rules)
    if count:
        mine, his = position.scoreless
        return int(mine * count + his)
    return min(position.seat, table.kinds - 1)


def reduced(players: int, mover: Any, *others: Any) -> np.ndarray:
    """The banked scores a table of `players` seats reads, shape ``(..., players)``: the mover, then his
    opponents in playing order; against more opponents than that, the ones who threaten most (`threatening`),
    in playing order. Raises (one line) for fewer opponents than the table seats."""
    seats = players - 1
    if len(others) < seats:
        raise CinqmilleError(f"a {players}-player table reads {seats} opponents, got {len(others)}")
    scores = np.stack(np.broadcast_arrays(*(np.asarray(x, dtype=np.int64) for x in (mover,) + others)), axis=-1)
    if len(others) > seats:  # the reduction to the opponents who threaten most, in playing order
        rest = scores[..., 1:]
        keep = threatening(rest.reshape(-1, rest.shape[-1]), seats).reshape(rest.shape[:-1] + (seats,))
        scores = np.concatenate([scores[..., :1], np.take_along_axis(rest, keep, axis=-1)], axis=-1)
    return scores


def locate_rows(table: Table, mover: Any, *others: Any, kinds: Any = 0) -> np.ndarray:
    """Rows of arrays of banked scores (units; broadcast): the mover against his opponents in playing order
    (`reduced` to the table's seats), of row kind `kinds`. Raises (one line) for a score that cannot occur."""
    scores = reduced(table.players, mover, *others)
    goal = len(table.index)
    if np.any((scores < 0) | (scores >= goal)):
        raise CinqmilleError("a banked score at or past the goal has no row in the policy table")
    idx = table.index[scores]
    if np.any(idx < 0):
        raise CinqmilleError("a banked score that cannot occur under this ruleset")
    s = len(table.scores)
    row = np.minimum(np.asarray(kinds, dtype=np.int64), table.kinds - 1)
    for j in range(table.players):
        row = row * s + idx[..., j]
    return np.asarray(row)


def locate(table: Any, position: Position, options: bool = False) -> tuple[TurnRows, int]:
    """(block, row) where a position is read in a policy table: my last turn when `target` is set (the table's
    `last_turn`), else the row of its scores and kind (`locate_rows`). With `options` (the advice) the block
    holds every option's value: a larger table, which holds each state's value only, gives one kernel pass for
    the row (`PolicyTable.options`, of the position's `seat`)."""
    others = position.others if position.others is not None else (position.opp,)
    me = position.me // UNIT
    if position.target is not None:
        if table.players == 2:
            block: TurnRows
            block, r = table.last_turn(me, position.target // UNIT)
            return block, r
        seat = min(position.seat, table.players - 1)
        later = tuple(o // UNIT for o in others[: table.players - 1 - seat])
        return table.last_turn(me, position.target // UNIT, seat, later)  # type: ignore[no-any-return]
    if options and not table.options_held:
        read = reduced(table.players, me, *(o // UNIT for o in others))
        return table.options(tuple(int(x) for x in read), position.seat)  # type: ignore[no-any-return]
    return table, int(locate_rows(table, me, *(o // UNIT for o in others), kinds=kind(table, position)))


def spot(result: SolveResult, position: Position) -> tuple[TurnRows, int]:
    """(block, row) of the solved `result`'s policy table where a position is read, every option's value held
    (`locate` with `options`; my last turn when `target` is set): the advice's reading. A seat still on a head
    start below the opening is read from the result with those rows (`at_starts`)."""
    result.need("win")
    others = position.others
    started = at_starts(result, (position.me, position.opp) + tuple(others or ()))  # a head start not yet opened
    if started is not result:
        return spot(started, position)
    if result.players > 2:
        if others is None or len(others) < result.players - 1:
            raise PositionError(f"`opp`: a {result.players}-player table needs the scores of all "
                                f"{result.players - 1} opponents")
        if not 0 <= position.seat < result.players:
            raise PositionError(f"seat must be 0 (opens each round) to {result.players - 1}, got {position.seat}",
                                field="seat")
        if result.seats == 1 and position.seat:
            position = replace(position, seat=0)  # every seat plays alike
    elif position.target is None:
        result.seat_of(position.seat)  # refuse a seat the table does not have
    return locate(policy_of(result), position, options=True)


@dataclass(frozen=True)
class Option:
    """One choice at a take-over offer (`offer_options`), with its value."""

    win: float  # value of the option (probability of winning for the win objective)
    action: str | None = None  # "start" (afresh) or "take_over"


def offer_options(result: SolveResult, position: Position) -> list[Option]:
    """At a turn start with a take-over offered: take it over (roll from it) or start afresh, best first."""
    result.need("win")
    position.validate(result.rules)
    if position.offer is None:
        raise PositionError("no take-over offer given")
    block, r = spot(result, position)
    t, m = position.offer[0] // UNIT, position.offer[1]
    values = block.offer_values(r, t, m)
    actions = ("start", "take_over")  # the tie-break order; the solve's choice first (`TurnRows.takes_over`)
    return [Option(win=float(values[j]), action=actions[j])
            for j in ranking(values, block.tie, int(block.takes_over(r, t, m)))]
