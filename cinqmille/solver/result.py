"""The immutable result of a solve, and every question it answers without solving again.

A `SolveResult` for the `win` objective stores the turn-start table
``W[a, b]``. Every other value follows from it exactly: the turns of a score
``a`` against a few scores ``b`` at a time are one backward pass of the kernel
with the bust values ``L = 1 - W[b, a]`` and the bank values read from ``W``;
no iteration is needed. Those passes fill the result's `policy`
(`solver.policy.PolicyTable`), from which every per-state answer here is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike

from .. import parsing
from ..errors import CinqmilleError
from ..position import Position, PositionError
from ..rules import Rules
from ..rules.bank import UNIT
from .grid import ScoreGrid
from .kernel import TurnKernel
from .choice import differs, ranking, sample_groups
from .locate import locate
from .policy import PolicyTable
from .rows import TurnRows
from .rounds import Rounds, rounds_solved
from .turns import GameModel

Objective = Literal["win", "expected", "race", "average"]


@dataclass(frozen=True)
class Option:
    """One choice at a take-over offer (`SolveResult.offer_options`), with its value."""

    win: float  # value of the option (probability of winning for the win objective)
    action: str | None = None  # "start" (afresh) or "take_over"


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
        from .starts import chances

        return tuple(float(x) for x in chances(self, [self.rules.starts(self.players)])[0])

    def seat_values(self, rows: ArrayLike, seat: int = 0) -> np.ndarray:
        """Three players or more: the stored seats (the first n - 1, in playing order from the mover) of the turn
        starts `rows` (scores in units, shape (..., n), the mover first; the mover of `seat` under a last round),
        NaN where a score cannot occur (by score positions, `ScoreGrid.seat_values`; under a last round or
        take-over offers, by score units: the rounds' tables)."""
        self._need("win")
        if self.rounds is not None:  # the rounds' layout: every score unit, a seat axis (`tables`, `rounds`)
            at = tuple(np.moveaxis(np.asarray(rows, dtype=np.int64), -1, 0))
            return np.array(self.tables[(seat if self.seats > 1 else 0,) + at], dtype=float)
        return self.grid.seat_values(self.values, rows)

    def expected_turn(self, opened: bool = True) -> float:
        """`expected` objective: the mean points of a turn played for them, from its start (a bust banks 0)."""
        self._need("expected")
        return float(self.values[int(opened), 0, self.rules.dice - 1])

    def average_turn(self) -> float:
        """`average` objective: the most points per turn over a long game (the gain: the turn from a count of 0)."""
        self._need("average")
        return float(self.values[0, 0, self.rules.dice - 1])

    def race_turns(self, score: int = 0) -> float:
        """`race` objective: the fewest expected turns one player alone needs from `score` to the goal."""
        self._need("race")
        return float(self.values[score // UNIT])

    @cached_property
    def policy(self) -> PolicyTable:
        """The policy table of this result (`solver.policy`, any number of seats): every turn state's values and
        every decision, computed by groups when first read."""
        self._need("win")
        return PolicyTable.of(self)

    def win_at_start(self, me: int, opp: int, seat: int = 0, offer: tuple[int, int] | None = None) -> float:
        """Chance to win for the player about to start a turn, with banked `me` against `opp`.

        `seat` matters under last_round (0: this player opens each round). `offer`
        (turn points, dice) is a take-over offered by the opponent's bank.
        """
        self._need("win")
        fresh = float(self.tables[self._seat(seat), me // UNIT, opp // UNIT])
        if offer is None or not self.rules.take_over or not self.grid.opened(np.asarray(me // UNIT)):
            return fresh
        return max(fresh, self.take_over_value(me, opp, offer, seat))

    def take_over_value(self, me: int, opp: int, offer: tuple[int, int], seat: int = 0) -> float:
        """Chance to win when taking over `offer` = (turn points, dice): rolling those dice from those points."""
        block, r = locate(self.policy, Position(me, opp, seat=self._seat(seat)))
        return float(block.roll(r, offer[0] // UNIT, offer[1]))

    def _seat(self, seat: int) -> int:
        if seat not in (0, 1) or seat >= self.seats:
            if self.seats == 1:
                return 0
            raise PositionError(f"seat must be 0 (opens each round) or 1, got {seat}")
        return seat

    def spot(self, position: Position) -> tuple[TurnRows, int]:
        """(block, row) of the policy table that a position is read from, every option's value held (`locate`
        with `options`; my last turn when `target` is set)."""
        self._need("win")
        others = getattr(position, "others", None)
        from .starts import at_starts

        started = at_starts(self, (position.me, position.opp) + tuple(others or ()))  # a head start not yet opened
        if started is not self:
            return started.spot(position)
        if self.players > 2:
            if others is None or len(others) < self.players - 1:
                raise PositionError(f"`opp`: a {self.players}-player table needs the scores of all "
                                    f"{self.players - 1} opponents")
            if not 0 <= position.seat < self.players:
                raise PositionError(f"seat must be 0 (opens each round) to {self.players - 1}, got {position.seat}",
                                    field="seat")
            if self.seats == 1 and position.seat:
                position = replace(position, seat=0)  # every seat plays alike
        elif position.target is None:
            self._seat(position.seat)  # refuse a seat the table does not have
        return locate(self.policy, position, options=True)

    def offer_options(self, position: Position) -> list[Option]:
        """At a turn start with a take-over offered: take it over (roll from it) or start afresh, best first."""
        self._need("win")
        position.validate(self.rules)
        if position.offer is None:
            raise PositionError("no take-over offer given")
        block, r = self.spot(position)
        t, m = position.offer[0] // UNIT, position.offer[1]
        values = block.offer_values(r, t, m)
        actions = ("start", "take_over")  # the tie-break order; the solve's choice first (`TurnRows.takes_over`)
        return [Option(win=float(values[j]), action=actions[j])
                for j in ranking(values, block.tie, int(block.takes_over(r, t, m)))]

    def sample_problem(self, tol: float = 1e-9) -> str | None:
        """Why this `win` table (read back from the cache) is not the ruleset's solution, on a deterministic
        sample of rows (None when the sample agrees; other objectives: None).

        The rows of `policy.SAMPLE_GROUPS` groups (two players: one mover against
        `policy.GROUP` opponents; three: one mover and first opponent against
        every second opponent) are evaluated afresh by one kernel pass from the
        stored table (its bust and bank values); their turn starts must equal the
        stored chances within `tol`. A forged table whose values are plausible
        (in range, the right shape, a valid checksum) but not the fixed point of
        the game fails here; the rows computed stay in the result's policy.
        """
        if self.objective != "win":
            return None
        # where the solve settled chasing cycles (`exact` false) its stated residual bounds how far a pass moves
        # the values; a forged residual is shown with the table, so it cannot hide a forgery silently
        tol = max(tol, 4 * self.residual)
        d = self.rules.dice
        if self.players == 2:
            policy = self.policy
            s = len(policy.scores)
            for g in sample_groups(len(policy._done)):
                rows = policy._group_rows(int(g))
                start = policy.value(rows, np.zeros_like(rows), np.full(len(rows), d))
                kind, ia, ib = rows // (s * s), (rows // s) % s, rows % s
                if differs(start, self.tables[kind, policy.scores[ia], policy.scores[ib]], tol):
                    return "its chances are not the game's solution (a sample of rows evaluated again differs)"
            return None
        from .n_player import seat_starts

        scores = self.grid.scores.astype(np.int64)
        s, n = len(scores), self.players
        # every seat is checked, not only the mover's: a table whose other seats are permuted has the right mover's
        # chances. On a chasing cycle settled by a mixed choice the pure pass gives the other seats values that
        # differ from the settled ones (by the gap the assumptions state): at most that many rows may differ there
        groups = sample_groups(s ** (n - 1))
        # (a forged count cannot excuse a permuted table: at most a quarter of the rows sampled, which cycles never are)
        chasing = min(int(self.extra.get("chasing_rows", 0)), len(groups) * s // 4) if not self.exact else 0
        for group in groups:  # the mover and every opponent but the last, against every last
            lead = [int(scores[i]) for i in np.unravel_index(int(group), (s,) * (n - 1))]
            others = np.column_stack([np.full(s, x) for x in lead[1:]] + [scores])
            start = seat_starts(self, lead[0], others)
            stored = self.seat_values(np.column_stack([np.full((s, n - 1), lead), scores]))
            if differs(start[:, 0], stored[:, 0], tol):
                return "its chances are not the game's solution (a sample of rows evaluated again differs)"
            found, want = start[:, 1:], stored[:, 1:]
            with np.errstate(invalid="ignore"):
                same = (found == want) | (np.isnan(found) & np.isnan(want)) | (np.abs(found - want) <= tol)
            chasing -= int((~same).any(axis=1).sum())
            if chasing < 0:
                return "its other seats' chances are not the game's solution (a sample of rows evaluated again differs)"
        return None

    def _need(self, objective: str) -> None:
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
