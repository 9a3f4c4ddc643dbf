"""The end of a game, written once (RULES.md 5 `goal`, `end`, `last_round`; 5b; 8).

`EndRules` holds a ruleset's end rules as integers in one unit, as `BankRules`
does (which holds one and reads it): real points (``unit = 1``, the referee,
the heuristics and the position's checks, through ``Rules.banking.end``) or the
solver's and the simulator's units of 50 (``BankRules.of(rules).end``). Each
judgement is written with operators that plain ints and bools and numpy arrays
share, so it answers for one state and for arrays of states alike.

The questions: does a banked score reach the goal (and so win, or start the
last round), does a keep overshoot an exact goal; under `last_round`, who plays
a last turn after a player reaches the goal, what score the later players must
beat, what one of them must bank to take the victory, and who holds it when the
round ends. Seats are counted from the player who opens each round (seat 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

#: Points per unit of the solver and the simulator: every score is a multiple of 50, so one unit is one step.
UNIT = 50
#: The seat of a two-player last turn read against a target (a `Position` with `target`): the second seat's
#: (seat 1), since only the first player's reaching the goal is answered by a last turn (`EndRules.last_turns`).
LAST_TURN_SEAT = 1


class EndKeys(Protocol):
    """The keys of a ruleset (a `Rules`) that `EndRules.of` reads: the end rules read the rule book's values, not
    its module."""

    @property
    def goal(self) -> int: ...

    @property
    def end(self) -> str: ...

    @property
    def last_round(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class EndRules:
    """When a game ends and who wins it: the goal, an exact end, the last round."""

    unit: int
    goal: int
    exact: bool  # end = "exact": the goal must be reached exactly; a keep past it overshoots
    last_round: bool

    @classmethod
    def of(cls, rules: EndKeys, unit: int = UNIT) -> "EndRules":
        """The end rules of `rules` counted in `unit` points (1 for real points)."""
        return cls(unit, rules.goal // unit, rules.end == "exact", rules.last_round)

    def reaches(self, score: Any) -> Any:
        """Whether a banked score reaches the goal: it wins, or starts the last round (`>= goal`; `== goal` under
        `exact`). The final scores that a last turn is played against (a position's `target`) are these."""
        return (score == self.goal) if self.exact else (score >= self.goal)

    def overshoots(self, a: Any, t: Any) -> Any:
        """Whether turn points `t` on banked `a` pass the goal under `exact`: the keep that got there is a bust."""
        return self.exact & (a + t > self.goal)

    # -- the last round ------------------------------------------------------------------------
    def last_turns(self, seat: Any, players: int) -> Any:
        """How many last turns follow when the player of `seat` reaches the goal: one for each later seat of the
        round under `last_round` (two players: one after seat 0, none after seat 1, who wins), else none."""
        return (players - 1 - seat) * self.last_round

    def target(self, leader: Any) -> Any:
        """The score a later player's last turn is played against, the leader having banked `leader`: his score
        under `reach` (to be passed), the goal under `exact` (to be reached)."""
        return self.goal if self.exact else leader

    def beats(self, new: Any, target: Any) -> Any:
        """Whether a later player's banked score `new` takes the victory on his last turn against `target`: it
        passes it under `reach` (an equal score does not), it reaches the goal under `exact`."""
        return (new == self.goal) if self.exact else (new > target)

    def winning_bank(self, b: Any, target: Any, least: Any) -> tuple[Any, Any]:
        """(the smallest bank that takes the victory, whether a legal one exists) for a last turn on banked `b`
        against `target`, where `least` is the smallest bank allowed (`BankRules.least`): exactly ``goal - b``
        under `exact` (no bank at all if that is below `least`); one step of 50 points past ``target - b``, and
        at least `least`, under `reach` (always one)."""
        need = self.goal - b if self.exact else target - b + UNIT // self.unit
        if not self.exact:
            need = need + (least - need) * (need < least)
        return need, need >= least

    def goal_bank(self, a: Any, least: Any) -> Any:
        """The smallest bank that reaches the goal from banked `a` (`least`: the smallest bank allowed): exactly
        ``goal - a`` under `exact`, at least ``goal - a`` and `least` under `reach`; from there a turn's states
        are terminal (every bank ends the game, or overshoots)."""
        return self.winning_bank(a, self.goal - UNIT // self.unit, least)[0]

    def leader(self, scores: Sequence[int]) -> int | None:
        """Who holds the victory if the last round ended now: the index in `scores` (the banked scores of the
        players who reached the goal, in the order they reached it; a penalty may have taken some back below)
        of the best score that still reaches the goal, the earliest on a tie (`reach`), or of the latest player
        who still holds the goal (`exact`); None if nobody does."""
        holding = [i for i, s in enumerate(scores) if self.reaches(s)]
        if not holding:
            return None
        if self.exact:
            return holding[-1]
        best = max(scores[i] for i in holding)
        return next(i for i in holding if scores[i] == best)
