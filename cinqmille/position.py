"""A position at the table, validated against a ruleset in one place.

`Position(me, opp, turn, dice)`: banked scores of the player to move and of the
opponent (0 = not opened when the ruleset has an opening), the turn points set
aside so far, and the dice in hand (None = all the dice, the start of a turn).
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import CinqmilleError
from .rules import Rules


class PositionError(CinqmilleError):
    """A position that cannot occur under the ruleset."""


@dataclass(frozen=True)
class Position:
    """Banked scores, turn points, dice in hand (and seat, under last_round) of the player to move."""

    me: int
    opp: int
    turn: int = 0
    dice: int | None = None
    seat: int = 0  # under last_round: 0 if this player opens each round, 1 if he plays second
    offer: tuple[int, int] | None = None  # take_over: (points, dice) of the opponent's bank, at a turn start
    target: int | None = None  # last round: the score the opponent finished on; this is my last turn

    def hand(self, rules: Rules) -> int:
        """Dice in hand (all the dice when not given)."""
        return rules.dice if self.dice is None else self.dice

    def validate(self, rules: Rules) -> "Position":
        """Return the position if it can occur under `rules`, else raise `PositionError`."""
        check_score(rules, self.me, "--me")
        if self.target is None:
            check_score(rules, self.opp, "--opp")
        else:
            if not rules.last_round:
                raise PositionError(f"--target is for a last round; '{rules.name}' has none (last_round = false)")
            if self.target % 50 or self.target < rules.goal or (rules.end == "exact" and self.target != rules.goal):
                need = f"exactly {rules.goal}" if rules.end == "exact" else f"a multiple of 50 from {rules.goal} up"
                raise PositionError(f"--target: the opponent's final score must be {need}, got {self.target}")
        if self.offer is not None:
            points, dice = self.offer
            if not rules.take_over:
                raise PositionError(f"--offer is for take-overs; '{rules.name}' has none (take_over = false)")
            if points <= 0 or points % 50:
                raise PositionError(f"--offer: the offered points must be a positive multiple of 50, got {points}")
            if not 1 <= dice <= rules.dice:
                raise PositionError(f"--offer: the offered dice must be between 1 and {rules.dice}, got {dice}")
            if self.turn:
                raise PositionError("--offer is a choice at the start of a turn: give no --turn with it")
            if rules.opening and self.me == 0:
                raise PositionError("--offer: only an opened player may take over")
        if self.turn < 0 or self.turn % 50:
            raise PositionError(f"turn points must be a non-negative multiple of 50, got {self.turn}")
        if self.dice is not None and not 1 <= self.dice <= rules.dice:
            raise PositionError(f"dice in hand must be between 1 and {rules.dice} under '{rules.name}', got {self.dice}")
        if self.seat not in (0, 1):
            raise PositionError(f"seat must be 0 (first in each round) or 1 (second), got {self.seat}")
        if rules.end == "exact" and self.me + self.turn > rules.goal:
            raise PositionError(
                f"under an exact end a turn cannot take {self.me} past the goal ({rules.goal}); got {self.turn} turn points")
        return self


def check_score(rules: Rules, score: int, label: str = "score") -> int:
    """Validate a banked score under `rules`; return it."""
    if score < 0 or score % 50:
        raise PositionError(f"{label}: a score must be a non-negative multiple of 50, got {score}")
    if score >= rules.goal:
        raise PositionError(f"{label}: a score of {score} has already reached the goal ({rules.goal}); the game is over")
    if rules.opening and 0 < score < rules.opening:
        raise PositionError(
            f"{label}: {score} is below the opening ({rules.opening}): a player is either not opened (0) or has at least {rules.opening}")
    return score
