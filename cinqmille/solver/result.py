"""The immutable result of a solve, and every question it answers without solving again.

A `SolveResult` for the `win` objective stores the turn-start table
``W[a, b]``. Every other value follows from it exactly: the turn of one pair
``(a, b)`` is one backward pass of the kernel with the bust value
``L = 1 - W[b, a]`` and the bank values read from ``W``; no iteration is needed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal

import numpy as np

from ..dice import counts_of, dice_tables, faces_of
from ..position import Position, PositionError
from ..rules import Rules
from .grid import ScoreGrid
from .kernel import UNIT, TurnKernel
from .turns import GameModel

Objective = Literal["win", "expected", "race"]


@dataclass(frozen=True)
class Option:
    """One choice at a decision: bank/roll, or a keep followed by bank/roll, with its value."""

    win: float  # value of the option (probability of winning for the win objective)
    action: str | None = None  # "bank" or "roll" for a bank-or-roll decision
    keep: tuple[int, ...] | None = None  # kept faces, sorted, for a keep decision
    points: int | None = None  # points of the keep
    then: str | None = None  # "bank", "roll" or "win" after the keep ("bust" for an overshoot)

    def as_dict(self) -> dict:
        """JSON-ready form (absent fields left out)."""
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True, eq=False)
class TurnTable:
    """Values of every turn state of one score pair: ``V[t, m-1]`` for t in units of 50."""

    me: int
    opp: int
    value: np.ndarray  # (Tpad, D) optimal value
    bank: np.ndarray  # (Tpad, D) value of banking (-inf where not allowed)
    roll: np.ndarray  # (Tpad, D) value of rolling the dice in hand (with the best announcement, if any)
    bust: float  # value of a bust
    period: int  # layers past the cap repeat with this period
    cap: int  # units; from here on states are terminal (reach) or overshoots (exact)
    exact_end: bool
    plain_roll: np.ndarray | None = None  # prediction: (Tpad, D) value of rolling without announcing
    predict: np.ndarray | None = None  # prediction: (Tpad, V) value of announcing each of `choices`
    choices: tuple[int, ...] = ()  # prediction: the announcements, in points

    def at(self, turn_units: int, m: int) -> float:
        """Optimal value with `turn_units` set aside and m dice in hand."""
        return float(self.value[self._row(turn_units), m - 1])

    def _row(self, t: int) -> int:
        last = self.value.shape[0] - 1
        if t <= last:
            return t
        if self.exact_end:
            return last  # overshoot rows are all worth a bust
        # past the cap every state repeats with the period (rule of 50 parity)
        return last - (t - last) % self.period


@dataclass(frozen=True, eq=False)
class SolveResult:
    """An immutable solve: values, ruleset, residual, timing; answers any position's question."""

    rules: Rules
    objective: Objective
    values: np.ndarray  # win: W[a, b] (units of 50), W[seat, a, b] under last_round; expected: E[opened, t, m]; race: R[a]
    residual: float
    seconds: float
    states: int
    exact: bool
    assumptions: tuple[str, ...]
    solver_version: str
    extra: dict = field(default_factory=dict)
    offers: np.ndarray | None = None  # take_over: offers[seat, a, b, t, m-1], the value of being offered (t, m)

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
        """2 when the seat matters (last_round: seat 0 opens each round), else 1."""
        return 2 if self.values.ndim == 3 else 1

    @property
    def tables(self) -> np.ndarray:
        """The turn-start tables with a seat axis: W[seat, a, b]."""
        return self.values if self.values.ndim == 3 else self.values[None]

    @property
    def first_player_win(self) -> float:
        """Chance that the first player wins from the start of the game."""
        self._need("win")
        return float(self.tables[0, 0, 0])

    def win_at_start(self, me: int, opp: int, seat: int = 0, offer: tuple[int, int] | None = None) -> float:
        """Chance to win for the player about to start a turn, with banked `me` against `opp`.

        `seat` matters under last_round (0: this player opens each round). `offer`
        (turn points, dice) is a take-over offered by the opponent's bank.
        """
        self._need("win")
        fresh = float(self.tables[self._seat(seat), me // UNIT, opp // UNIT])
        if offer is None or not self.rules.take_over or not self.grid.opened(me // UNIT):
            return fresh
        return max(fresh, self.take_over_value(me, opp, offer, seat))

    def take_over_value(self, me: int, opp: int, offer: tuple[int, int], seat: int = 0) -> float:
        """Chance to win when taking over `offer` = (turn points, dice): rolling those dice from those points."""
        points, dice = offer
        if self.rules.end == "exact" and me + points > self.rules.goal:
            return 1.0 - float(self.tables[int(self.model.other(np.array(self._seat(seat)))), opp // UNIT, me // UNIT])
        table = self.turn_table(me, opp, seat)
        return float(table.roll[table._row(points // UNIT), dice - 1])

    def _seat(self, seat: int) -> int:
        if seat not in (0, 1) or seat >= self.seats:
            if self.seats == 1:
                return 0
            raise PositionError(f"seat must be 0 (opens each round) or 1, got {seat}")
        return seat

    def turn_table(self, me: int, opp: int, seat: int = 0) -> TurnTable:
        """Every turn state of the pair (me, opp), exactly, from the stored values."""
        self._need("win")
        return self._turn_table(me // UNIT, opp // UNIT, self._seat(seat))

    def _turn_table(self, a: int, b: int, seat: int = 0) -> TurnTable:
        cache = self.__dict__.setdefault("_tables", {})
        if (seat, a, b) in cache:
            return cache[(seat, a, b)]
        model, kernel = self.model, self.kernel
        w = self.tables
        ss, aa, bb = np.array([seat]), np.array([a]), np.array([b])
        caps = model.caps(ss, aa)
        bust = 1.0 - float(w[int(model.other(ss)[0]), b, a])
        l0 = np.array([bust])
        tpad = kernel.tpad_for(int(caps.max()))
        bank = model.bank(ss, aa, bb, tpad - 1, w)
        _, _, ta, tb = kernel.run(aa, caps, bank, l0, keep_table=True, term_bank=model.terminal_bank(ss, aa, bb))
        value = ta[0] + tb[0] * bust
        bank_v = bank.a[0] + bank.b[0] * bust
        plain, predict = kernel.roll_tables(value, bust)
        roll_v = kernel.rolling(value, bust)
        choices = () if kernel.prediction is None else tuple(int(c) * UNIT for c in kernel.prediction.choices)
        table = TurnTable(a * UNIT, b * UNIT, value, bank_v, roll_v, bust, kernel.period,
                          int(caps[0]), self.rules.end == "exact",
                          plain if predict is not None else None, predict, choices)
        if len(cache) > 256:
            cache.clear()
        cache[(seat, a, b)] = table
        return table

    def last_turn_table(self, me: int, target: int) -> TurnTable:
        """Every state of my last turn of a last round, the opponent having finished on `target` points."""
        self._need("win")
        last = self.model.last
        if last is None:
            raise PositionError(f"'{self.rules.name}' has no last round")
        rules, grid, d = self.rules, self.grid, self.rules.dice
        a, target_u = me // UNIT, target // UNIT
        low = int(last.lowest_bank(np.array(a)))
        if last.exact:
            thr, c, possible = grid.goal - a, 0, grid.goal - a >= low
            tpad = thr + 2  # the last row is an overshoot
        else:
            thr = max(target_u - a + 1, low)
            c, possible = (a + thr) % last.period, True
            tpad = thr + self.kernel.graph.max_units + last.period + 1
        t = np.arange(tpad)[:, None]
        m = np.arange(1, d + 1)[None, :]
        shape = (tpad, d)
        cc = np.full(shape, c)
        value = last._lookup(last.value, cc, thr - t, m) if possible else np.zeros(shape)
        roll = last._lookup(last.roll, cc, thr - t, m) if possible else np.zeros(shape)
        value, roll = np.broadcast_to(value, shape).copy(), np.broadcast_to(roll, shape).copy()
        tt = np.broadcast_to(t, shape)
        can = np.vectorize(lambda x: rules.can_bank(me, int(x) * UNIT))(tt)
        if not rules.can_bank_after_full_hand:
            can[:, d - 1] = False
        new = a + tt
        success = (new == grid.goal) if last.exact else (new > target_u)
        if rules.rule_of_50:
            success &= new % 2 == 0
        bank = np.where(can, np.where(success & possible, 1.0, 0.0), -np.inf)
        if last.exact:
            value[-1], roll[-1], bank[-1] = 0.0, 0.0, -np.inf
        return TurnTable(me, target, value, bank, roll, 0.0, last.period, thr, last.exact)

    def table_for(self, position: Position) -> TurnTable:
        """The turn table a position is read from (my last turn when `position.target` is set)."""
        if position.target is not None:
            return self.last_turn_table(position.me, position.target)
        return self.turn_table(position.me, position.opp, position.seat)

    def offer_options(self, position: Position) -> list[Option]:
        """At a turn start with a take-over offered: take it over (roll from it) or start afresh, best first."""
        self._need("win")
        position.validate(self.rules)
        if position.offer is None:
            raise PositionError("no take-over offer given")
        points, dice = position.offer
        table = self.table_for(position)
        fresh = float(table.value[0, self.rules.dice - 1])
        if self.rules.end == "exact" and position.me + points > self.rules.goal:
            take = table.bust
        else:
            take = float(table.roll[table._row(points // UNIT), dice - 1])
        options = [Option(win=take, action="take_over"), Option(win=fresh, action="start")]
        return sorted(options, key=lambda o: (-o.win, o.action != "start"))

    def bank_or_roll(self, position: Position) -> list[Option]:
        """Options of a bank-or-roll decision, best first (bank only when allowed)."""
        self._need("win")
        rules = self.rules
        position.validate(rules)
        m = position.hand(rules)
        if position.turn == 0:
            raise PositionError("with no turn points set aside the only move is to roll (give --turn)")
        table = self.table_for(position)
        row = table._row(position.turn // UNIT)
        options = [Option(win=float(table.roll[row, m - 1]), action="roll")]
        bank = float(table.bank[row, m - 1])
        if bank > -np.inf:
            options.append(Option(win=bank, action="bank"))
        return sorted(options, key=lambda o: (-o.win, o.action != "bank"))  # a tie goes to banking

    def keep_options(self, position: Position, roll: str | tuple[int, ...]) -> list[Option]:
        """Every legal keep of a roll, with its value and the best action after it, best first."""
        self._need("win")
        rules = self.rules
        position.validate(rules)
        faces = parse_faces(roll, rules)
        m_roll = len(faces)
        if position.dice is not None and position.dice != m_roll:
            raise PositionError(f"the roll has {m_roll} dice but {position.dice} are in hand")
        table = self.table_for(position)
        t0 = position.turn // UNIT
        counts = counts_of(faces)
        keeps = dice_tables(rules)[m_roll]
        r = keeps.roll_index(counts)
        options = []
        for k in keeps.keeps_of(r):
            kept = faces_of(tuple(int(x) for x in keeps.keep_dice[k]))
            points = int(keeps.keep_points[k])
            left = int(keeps.keep_left[k]) or rules.dice
            if keeps.keep_win[k]:
                options.append(Option(win=self.kernel.win_value, keep=kept, points=points, then="win"))
                continue
            t = t0 + points // UNIT
            if rules.end == "exact" and position.me + t * UNIT > rules.goal:
                options.append(Option(win=table.bust, keep=kept, points=points, then="bust"))
                continue
            row = table._row(t)
            bank = float(table.bank[row, left - 1])
            roll_v = float(table.roll[row, left - 1])
            then = "bank" if bank >= roll_v else "roll"
            options.append(Option(win=max(bank, roll_v), keep=kept, points=points, then=then))
        if not options:
            return []
        return sorted(options, key=lambda o: (-o.win, -(o.points or 0)))

    def _need(self, objective: str) -> None:
        if self.objective != objective:
            raise ValueError(f"this result is for the '{self.objective}' objective, not '{objective}'")


def parse_faces(roll: str | tuple[int, ...] | list[int], rules: Rules) -> tuple[int, ...]:
    """Faces from '1,5,3,3,2', '15332' or a sequence; checked against the ruleset."""
    if isinstance(roll, str):
        text = roll.replace(",", "").replace(" ", "").replace("-", "")
        if not text or not text.isdigit():
            raise PositionError(f"a roll is a list of faces 1 to 6 such as 1,5,3,3,2 or 15332; got {roll!r}")
        faces = tuple(int(c) for c in text)
    else:
        faces = tuple(int(f) for f in roll)
    bad = [f for f in faces if not 1 <= f <= 6]
    if bad:
        raise PositionError(f"faces must be between 1 and 6; got {bad[0]} in {roll!r}")
    if not 1 <= len(faces) <= rules.dice:
        raise PositionError(f"a roll has 1 to {rules.dice} dice under '{rules.name}'; got {len(faces)}")
    return faces
