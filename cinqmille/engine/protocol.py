"""The `Policy` protocol: the four questions the referee may ask a player.

Every method receives one frozen `GameView`. The referee asks only real
questions: `should_bank` only when banking is legal, `should_take_over` only
when a take-over is offered, `predict` only when a prediction may be made.
`choose_keep` is asked after every scoring roll, even when one keep is legal.
"""

from __future__ import annotations

from typing import Protocol, Union, runtime_checkable

from ..dice.scoring import Keep
from .state import GameView, TakeOverOffer

KeepChoice = Union[Keep, int]


@runtime_checkable
class Policy(Protocol):
    """A player: a keep after each roll, bank or roll, take over or not, predict or not."""

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> KeepChoice:
        """One of `keeps` (or its index) for the roll `view.roll`."""
        ...

    def should_bank(self, view: GameView) -> bool:
        """True to bank `view.turn_points`, False to roll `view.dice_in_hand` dice."""
        ...

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        """True to start this turn from the previous player's banked turn (`offer`)."""
        ...

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        """Points announced for the next roll of the last two dice (one of `choices`), or None."""
        ...
