"""`expected`: the player who maximises the expected points of each turn, ignoring the opponent.

Reads ``E[opened, t, m-1]`` of ``solve(rules, "expected")`` (the best expected
points of the rest of a turn, goal and end rules left out; see
`solver.objectives`). Decisions:

keep
    the keep with the largest ``E`` after it (turn totals past the table are
    worth their points); an instant win first; under ``end = exact`` a keep
    that would overshoot the goal is worth -1 (below every other keep).
bank
    the guards shared with the heuristics first (`bank_is_worth_it`: never bank
    a turn that scores nothing — a final-stretch stop short, a rule-of-50 fault
    — always bank a turn that wins, on a last-round turn only a winning bank);
    otherwise bank when banking is worth at least ``E`` (the turn points ``t``
    are at least the value of rolling on).

Take-overs are those of the heuristics (three dice or more, or two dice with
500 points); it never predicts.
"""

from __future__ import annotations

import numpy as np

from ..dice.scoring import Keep
from ..engine.state import GameView
from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.bank import UNIT
from ..solver.api import solve
from .heuristics import _Heuristic


def expected_table(rules: Rules) -> np.ndarray:
    """``E[opened, t, m-1]`` in points (from the solver's cache when it is there)."""
    return solve(rules, "expected").values


class ExpectedPolicy(_Heuristic):
    """Maximise the expected points of the turn (see the module docstring)."""

    name = "expected"

    def __init__(self, rules: Rules, table: np.ndarray | None = None):
        self.rules = rules
        self.e = expected_table(rules) if table is None else table
        self.top = self.e.shape[1] - 1

    def value(self, opened: bool, t: int, m: int) -> float:
        """Expected points of the turn with `t` units set aside and `m` dice in hand."""
        if t > self.top:
            return float(t * UNIT)
        return float(self.e[int(opened), t, m - 1])

    def keep_values(self, view: GameView, keeps: tuple[Keep, ...]) -> np.ndarray:
        """The expected points of the turn after each keep (the quantity maximised)."""
        rules = self.rules
        opened = view.me.opened
        t0 = view.turn_points // UNIT
        out = np.empty(len(keeps))
        for i, k in enumerate(keeps):
            if k.win:
                out[i] = np.inf
                continue
            t2 = t0 + k.points // UNIT
            if rules.banking.overshoots(view.score, t2 * UNIT):
                out[i] = -1.0
                continue
            left = view.dice_in_hand - k.size
            out[i] = self.value(opened, t2, left if left else rules.dice)
        return out

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> int:
        return int(np.argmax(self.keep_values(view, keeps)))

    def wants_bank(self, view: GameView) -> bool:
        return view.turn_points >= self.value(view.me.opened, view.turn_points // UNIT, view.dice_in_hand)


def make_policy(arg: str | None, rules: Rules, rng: np.random.Generator | None = None) -> ExpectedPolicy:
    """`parse_policy("expected", rules)`: the expected-points player (takes no argument)."""
    if arg:
        raise CinqmilleError(f"policy 'expected' takes no argument, got 'expected:{arg}'")
    return ExpectedPolicy(rules)
