"""`card[:ARG]`: a strategy card (`research.card`) seated at the table (`play`, `simulate`'s referee).

The card's decisions are those of its block of rows (`research.card.CardRows`,
the block its exact evaluation reads): bank at the line of the dice in hand,
moved by the score gap and the end game, within the guards of the
heuristics; set aside what the card ranks first. The opponent is the one
with the best score (as the simulator's policies see him). The name's
argument is read by `research.card.parse_card`.
"""

from __future__ import annotations

import numpy as np

from ..dice.scoring import Keep
from ..engine.state import GameView
from ..research.card import Card, CardRows, parse_card
from ..rules import Rules
from ..rules.bank import UNIT
from ..solver.choice import block_graph
from ..solver.rows import roll_class, same_keep
from .heuristics import _Heuristic


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
    """`parse_policy("card[:ARG]", rules)`: the card (`research.card.parse_card`)."""
    return CardPolicy(rules, parse_card(arg, rules))
