"""`card[:ARG]`: a strategy card, the rule of thumb (`Card`, `parse_card`), its decisions as a block of rows
(`CardRows`), and the card seated at the table (`play`, `simulate`'s referee).

The card's decisions are those of its block of rows (`CardRows`, the block its
exact evaluation reads, `research.card`, and the simulator's vector form
plays, `vecpolicies.CardVec`): bank at the line of the dice in hand, moved by
the score gap and the end game, within the guards of the heuristics; set
aside what the card ranks first. The opponent is the one with the best score
(as the simulator's policies see him). The name's argument is read by
`parse_card`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ..dice.scoring import Keep
from ..engine.state import GameView
from ..rules import Rules
from ..rules.bank import UNIT
from ..solver.choice import block_graph
from ..table.rows import roll_class, same_keep
from ..errors import CinqmilleError
from ..parsing import whole
from ..rules.bank import BankRules
from ..solver.keeps import best_keeps
from .heuristics import _Heuristic, guarded_bank


KEEPS = ("most", "few")
#: What a keep after which the card banks is worth more than any other (in points): it is taken first.
_BANKS = 1e9


@dataclass(frozen=True)
class Card:
    """The parameters of a strategy card (points; see the module docstring). `statement` is written from them."""

    lines: tuple[int, ...]  # bank line with 1 .. D dice in hand
    gap: int = 0  # the lines move when the scores differ by more than this (0 with behind = ahead = 0: never)
    behind: int = 0  # added to every line when behind by more than `gap`
    ahead: int = 0  # taken from every line when ahead by more than `gap`
    keep: str = "most"  # "most": the most points; "few": points + `die` per die left in hand
    die: int = 0  # what a die left in hand is worth when choosing what to set aside ("few")
    near: int = 0  # the end game: when the opponent needs this many points or fewer to win ...
    chase: int = 0  # ... every line goes up by this much (0: no end-game rule)
    name: str = field(default="card", compare=False)

    @classmethod
    def threshold(cls, rules: Rules, points: int) -> "Card":
        """`threshold:T`: bank at T points whatever the dice and the scores; set aside the most points."""
        return cls((points,) * rules.dice, name=f"threshold:{points}")

    def check(self, rules: Rules) -> "Card":
        """The card, or a `CinqmilleError` saying which parameter does not fit `rules`."""
        if len(self.lines) != rules.dice:
            raise CinqmilleError(f"a card needs one bank line per number of dice in hand ({rules.dice}), "
                                 f"got {len(self.lines)}")
        for what, x in [("line", v) for v in self.lines] + [("gap", self.gap), ("behind", self.behind),
                                                            ("ahead", self.ahead), ("die", self.die),
                                                            ("near", self.near), ("chase", self.chase)]:
            if x < 0 or x % UNIT:
                raise CinqmilleError(f"a card's {what} must be a non-negative multiple of {UNIT}, got {x}")
        if self.keep not in KEEPS:
            raise CinqmilleError(f"a card's keep is one of {', '.join(KEEPS)}, got {self.keep!r}")
        return self

    @property
    def shifts(self) -> tuple[int, ...]:
        """How much the lines move (points), by bucket: level, behind by more than `gap`, ahead by more than
        `gap`; the same three again with the end-game rise `chase` (the opponent within `near` of the goal)."""
        return tuple(g + end * self.chase for end in (0, 1) for g in (0, self.behind, -self.ahead))

    def bucket(self, a: Any, b: Any, goal: int) -> np.ndarray:
        """Index into `shifts` of the mover at `a` against `b`, the goal `goal` (units of 50)."""
        diff = np.asarray(a) - np.asarray(b)
        gap = np.where(diff < -self.gap_units, 1, np.where(diff > self.gap_units, 2, 0))
        end = (self.chase > 0) & (goal - np.asarray(b) <= self.near // UNIT)
        return np.asarray(gap + 3 * end)

    @property
    def gap_units(self) -> int:
        return self.gap // UNIT

    def statement(self, rules: Rules) -> list[str]:
        """The card in words, one sentence a line, written from its parameters."""
        d = rules.dice
        words = ", ".join(f"{v} with {m}" for m, v in enumerate(self.lines, 1))
        same = len(set(self.lines)) == 1
        out = [f"Bank as soon as the turn holds {self.lines[0]} points or more." if same else
               f"Bank as soon as the turn holds at least this many points, by dice left in hand: {words}."]
        if self.behind or self.ahead:
            moves = []
            if self.behind:
                moves.append(f"add {self.behind} when behind by more than {self.gap}")
            if self.ahead:
                moves.append(f"take off {self.ahead} when ahead by more than {self.gap}")
            out.append("Move every line: " + "; ".join(moves) + ".")
        if self.chase >= rules.goal:
            out.append(f"When the opponent needs {self.near} or less to win, bank only a turn that wins.")
        elif self.chase:
            out.append(f"When the opponent needs {self.near} or less to win, add {self.chase} to every line.")
        if self.keep == "most":
            out.append("Set aside the most points each roll.")
        else:
            out.append(f"Set aside every die when they all score (a full hand: roll all {d} again, or bank); else, "
                       f"if a way of setting aside lets you bank, the most points that do, and bank; else what gives "
                       f"the most points plus {self.die} per die left to roll.")
        rest = ["Always take an instant win and bank a turn that wins"]
        if rules.opening:
            rest.append(f"before opening, roll on until the turn holds {rules.opening}")
        if rules.min_bank:
            rest.append(f"never bank less than {rules.min_bank}")
        out.append("; ".join(rest) + ".")
        return out

    def as_dict(self) -> dict[str, Any]:
        """The parameters as JSON."""
        return {"name": self.name, "lines": {str(m): v for m, v in enumerate(self.lines, 1)}, "gap": self.gap,
                "behind": self.behind, "ahead": self.ahead, "keep": self.keep, "die": self.die, "near": self.near,
                "chase": self.chase}


#: Where the search starts (the card found for `standard`, its last line repeated for more dice).
START = Card((150, 250, 550, 850, 2250), gap=1500, behind=150, ahead=50, keep="few", die=100, near=300, chase=5000)


#: The policy name of a card (`parse_card`): `simulate`, `play` and `match` seat it.
CARD = "card"


def fitted(card: Card, rules: Rules) -> Card:
    """`card` for `rules`: its last line repeated (or lines cut) to one per die, the end-game rise at most the
    goal (the search's start, `search`)."""
    d = rules.dice
    return replace(card, lines=(card.lines + card.lines[-1:] * d)[:d], chase=min(card.chase, rules.goal))


def parse_card(arg: str | None, rules: Rules) -> Card:
    """The card of the policy name ``card[:ARG]``: no ARG, the card found for `standard` (`START`, fitted to
    `rules`); ``L1/L2/.../LD``, bank lines by dice in hand, the most points set aside; ``L1/.../LD:few:DIE``,
    the most points plus DIE per die left in hand. A `CinqmilleError` in one line otherwise."""
    if arg is None:
        return fitted(START, rules).check(rules)
    head, *rest = arg.split(":")
    usage = f"policy 'card:{arg[:40]}': expected card, card:L1/L2/.../L{rules.dice} or card:L1/.../L{rules.dice}:few:DIE"
    if len(rest) not in (0, 2) or (rest and rest[0] != "few"):
        raise CinqmilleError(usage)
    try:
        lines = tuple(whole(x, "line") for x in head.split("/"))
        die = whole(rest[1], "die") if rest else 0
    except CinqmilleError:
        raise CinqmilleError(usage) from None
    return Card(lines, keep="few" if rest else "most", die=die, name=f"card:{arg}").check(rules)


class CardRows:
    """A card's decisions as a block of rows (a `TurnPlay`): row ``B i + k`` is the mover at ``scores[i]`` in
    bucket `k` of the B buckets of `Card.shifts`."""

    def __init__(self, rules: Rules, card: Card, scores: np.ndarray, caps: np.ndarray):
        self.rules, self.card = rules, card.check(rules)
        self.dice = rules.dice
        self.exact = rules.banking.exact
        self.tie = 0.0  # the card's own ranking of keeps: exact ties, the first in keep order
        self.banking = BankRules.of(rules)
        self.buckets = len(card.shifts)
        self.a = np.repeat(np.asarray(scores, dtype=np.int64), self.buckets)
        self.shift = np.tile(np.array(card.shifts, dtype=np.int64) // UNIT, len(scores))
        self.cap = np.repeat(np.asarray(caps, dtype=np.int64), self.buckets)
        self.lines = np.array(card.lines, dtype=np.int64) // UNIT

    def row(self, i: Any, a: Any, b: Any) -> np.ndarray:
        """The row of the mover at position `i` of the scores, with banked `a` against `b` (units)."""
        return np.asarray(self.buckets * np.asarray(i) + self.card.bucket(a, b, self.rules.goal // UNIT))

    def move(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """0 bank, 1 roll: bank at the line of the dice in hand (moved by the gap), within the guards."""
        r, t, m = np.broadcast_arrays(np.asarray(r), np.asarray(t), np.asarray(m))
        wants = t >= self.lines[m - 1] + self.shift[r]
        return np.asarray(np.where(guarded_bank(self.banking, self.a[r], t, m, wants), 0, 1))

    def taken(self, r: Any, t: Any, doubled: bool = False) -> np.ndarray:
        """The card's keep in every roll class from turn units `t` of rows `r` (the `TurnPlay` question): the
        best of its ranking (`keep_values`), on a tie the kernel's (`kernel.best_keeps`: the most points, then
        the most dice in hand after). The card never announces (`doubled`)."""
        graph = block_graph(self)
        rows = np.broadcast_to(np.asarray(r), np.shape(t))
        return best_keeps(graph, self.keep_values(rows, t, graph.keep_units, graph.keep_next, graph.keep_win,
                                                  doubled))

    def keep_values(self, r: Any, t: Any, units: Any, left: Any, win: Any, doubled: Any = False) -> np.ndarray:
        """How the card ranks the keeps of a roll (`taken` takes the best)."""
        r, t = np.asarray(r)[..., None], np.asarray(t)[..., None]
        units, left = np.asarray(units), np.asarray(left)
        t2 = t + units
        if np.any(doubled):
            t2 = np.where(np.asarray(doubled)[..., None], 2 * t2, t2)
        t2, left2 = np.broadcast_arrays(t2, left)
        if self.card.keep == "most":
            value = units + np.zeros(t2.shape)
        else:
            banks = self.move(np.broadcast_to(r, t2.shape), t2, left2) == 0
            value = np.where(banks, _BANKS + units, units + (self.card.die // UNIT) * left2)
            value = np.where(left2 == self.dice, 2 * _BANKS + units, value)  # a full hand: every die scored
        over = self.banking.overshoots(np.broadcast_to(self.a[r], t2.shape), t2)
        value = np.where(over, -_BANKS, value)
        return np.asarray(np.where(win, 2 * _BANKS, value))


class CardPolicy(_Heuristic):
    """The card's bank and keep decisions (see the module docstring)."""

    def __init__(self, rules: Rules, card: Card):
        self.rules, self.card = rules, card
        self.name = card.name
        goal = rules.goal // UNIT
        self.block = CardRows(rules, card, np.arange(goal), np.full(goal, goal))

    def _row(self, view: GameView) -> int:
        others = [p.score for i, p in enumerate(view.players) if i != view.seat]
        a = view.score // UNIT
        return int(self.block.row(a, a, max(others, default=0) // UNIT))

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> Keep:
        d = self.rules.dice
        units = np.array([0 if k.win else k.points // UNIT for k in keeps])
        left = np.array([(view.dice_in_hand - k.size) or d for k in keeps])
        win = np.array([k.win for k in keeps], dtype=bool)
        assert view.roll is not None
        c = roll_class(self.rules, tuple(view.roll))
        taken = self.block.taken(self._row(view), view.turn_points // UNIT)[c]
        return keeps[int(same_keep(block_graph(self.block), taken, units, left, win))]

    def wants_bank(self, view: GameView) -> bool:
        return bool(self.block.move(self._row(view), view.turn_points // UNIT, view.dice_in_hand) == 0)


def make_policy(arg: str | None, rules: Rules, rng: np.random.Generator | None = None) -> CardPolicy:
    """`parse_policy("card[:ARG]", rules)`: the card (`parse_card`)."""
    return CardPolicy(rules, parse_card(arg, rules))
