"""Simple heuristic players behind the engine's `Policy` protocol: threshold, cautious, random.

All of them move legally under every ruleset: the referee asks `should_bank`
only when banking is legal, and the shared guards below keep the heuristics
from banking a turn that would score nothing (a final-stretch turn short of
the goal, a rule-of-50 fault) or, on their last turn of a last round, a turn
that cannot win.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..dice.scoring import Keep
from ..engine.state import GameView, TakeOverOffer
from ..rules import Rules
from ..rules.bank import SCORED, BankRules
from ..errors import CinqmilleError
from ..parsing import whole


def best_keep(view: GameView, keeps: tuple[Keep, ...]) -> Keep:
    """The keep with the most points (fewest dice on ties); under `exact`, one that does not overshoot if any."""
    overshoots = view.rules.banking.overshoots
    safe = tuple(k for k in keeps if k.win or not overshoots(view.score, view.turn_points + k.points))
    return max(safe or keeps, key=lambda k: (k.win, k.points, -k.size))


def bank_is_worth_it(view: GameView) -> bool | None:
    """False when a legal bank would gain nothing, True when it wins, None when the heuristic decides."""
    kind, new, wins = view.rules.banking.outcome(view.score, view.turn_points)
    if kind != SCORED:
        return False
    last = view.last_round
    if last is not None:
        # This is the player's last turn: only a bank that takes the victory is worth anything.
        return bool(view.rules.banking.end.beats(new, last.target))
    return True if wins else None


def guarded_bank(banking: BankRules, a: Any, t: Any, m: Any, wants: Any) -> Any:
    """Bank where the rules allow it and the bank scores, and then when it wins or the rule `wants` it: the
    guards of `bank_is_worth_it` for arrays of states (any unit; `wants` a bool or an array)."""
    kind, _, wins = banking.outcome(a, t)
    return banking.allowed(a, t, m) & (kind == SCORED) & (wins | wants)


class _Heuristic:
    """Shared keep, take-over and prediction choices; subclasses decide `wants_bank`."""

    name = "heuristic"

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> Keep | int:
        return best_keep(view, keeps)

    def should_bank(self, view: GameView) -> bool:
        verdict = bank_is_worth_it(view)
        if verdict is not None:
            return verdict
        return self.wants_bank(view)

    def wants_bank(self, view: GameView) -> bool:
        raise NotImplementedError

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        """Take over three dice or more, or two dice with at least 500 points."""
        return offer.dice >= 3 or (offer.dice == 2 and offer.points >= 500)

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        """Never predict (a wrong guess loses the turn)."""
        return None

    def __repr__(self) -> str:
        return self.name


class ThresholdPolicy(_Heuristic):
    """`threshold:T[/K]`: bank once the turn holds T points, or (with K) K dice or fewer are in hand."""

    def __init__(self, threshold: int, max_dice: int | None = None):
        self.threshold = threshold
        self.max_dice = max_dice
        self.name = f"threshold:{threshold}" + (f"/{max_dice}" if max_dice is not None else "")

    def wants_bank(self, view: GameView) -> bool:
        if view.turn_points >= self.threshold:
            return True
        return self.max_dice is not None and view.dice_in_hand <= self.max_dice


class CautiousPolicy(_Heuristic):
    """The rule of thumb of seed 000: with a good turn (>= `good` points) and two dice or fewer, bank;
    before opening, roll on until the opening is reached, then bank."""

    def __init__(self, good: int = 300, max_dice: int = 2):
        self.good = good
        self.max_dice = max_dice
        self.name = "cautious"

    def wants_bank(self, view: GameView) -> bool:
        if not view.me.opened:
            return True  # asked only once the opening is reached: bank it
        return view.turn_points >= self.good and view.dice_in_hand <= self.max_dice


class RandomPolicy:
    """Any legal move, uniformly: a keep, bank or roll, take over or not, a prediction or none."""

    name = "random"

    def __init__(self, rng: np.random.Generator, bank_chance: float = 0.5):
        self.rng = rng
        self.bank_chance = bank_chance

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> int:
        return int(self.rng.integers(len(keeps)))

    def should_bank(self, view: GameView) -> bool:
        return bool(self.rng.random() < self.bank_chance)

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        return bool(self.rng.random() < 0.5)

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        pick = int(self.rng.integers(len(choices) + 1))
        return None if pick == len(choices) else choices[pick]

    def __repr__(self) -> str:
        return self.name


def threshold_from_arg(arg: str | None, rules: Rules) -> ThresholdPolicy:
    """Parse the argument of `threshold:T` or `threshold:T/K` (T points, K dice)."""
    if not arg:
        raise CinqmilleError("policy 'threshold' needs a number of points, e.g. threshold:350 or threshold:350/2")
    head, _, tail = arg.partition("/")
    try:
        points = whole(head, "threshold")
        dice = whole(tail, "dice") if tail else None
    except CinqmilleError:
        raise CinqmilleError(f"policy 'threshold:{arg[:40]}': expected threshold:POINTS or threshold:POINTS/DICE") \
            from None
    if points < 0 or points % 50:
        raise CinqmilleError(f"policy 'threshold:{arg}': the threshold must be a non-negative multiple of 50")
    if dice is not None and not 1 <= dice <= rules.dice:
        raise CinqmilleError(f"policy 'threshold:{arg}': the dice count must be 1 to {rules.dice}")
    return ThresholdPolicy(points, dice)
