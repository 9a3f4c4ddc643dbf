"""The rules of a bank, written once (RULES.md 1.6, 3, 4 and 5).

`BankRules` holds a ruleset's banking parameters as integers in one unit: real
points (``unit = 1``: the referee, through `Rules.banking`) or the solver's and
the simulator's units of 50 (`UNIT`). Each judgement is written with operators
that plain ints and bools and numpy arrays share (``x ^ True`` is "not x";
``y + (x - y) * c`` picks x where c): it answers for one state, at the speed
of plain Python, and for arrays of states alike, broadcasting its arguments.
The end of the game (the goal, an exact end and its overshoots, the last
round) is `EndRules` (`cinqmille.rules.end`), which a `BankRules` holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .end import UNIT, EndKeys, EndRules

#: Kinds of a bank: the turn is scored, void (a final-stretch player stopped short), a fault (rule of 50).
SCORED, VOID, FAULT = 0, 1, 2
BankKind = Literal["scored", "void", "fault"]
KINDS: tuple[BankKind, BankKind, BankKind] = ("scored", "void", "fault")

__all__ = ["FAULT", "KINDS", "SCORED", "UNIT", "VOID", "BankKeys", "BankKind", "BankRules"]


class BankKeys(EndKeys, Protocol):
    """The keys of a ruleset (a `Rules`) that `BankRules.of` reads (the rules of a bank read the rule book's
    values, not its module, which holds a `BankRules`: `Rules.banking`)."""

    @property
    def dice(self) -> int: ...

    @property
    def opening(self) -> int: ...

    @property
    def min_bank(self) -> int: ...

    @property
    def final_stretch(self) -> Any: ...  # `FinalStretch` (start, cap) or None

    @property
    def zero_turns(self) -> Any: ...  # `ZeroTurns` (count, to) or None

    @property
    def can_bank_after_full_hand(self) -> bool: ...

    @property
    def rule_of_50(self) -> bool: ...


@dataclass(frozen=True, slots=True)
class BankRules:
    """When a player may bank and what the bank does to his score (and, through `end`, when the game ends)."""

    unit: int
    dice: int
    end: EndRules
    opening: int  # 0: every player counts as opened
    opened_from: int  # the smallest opened score: the opening, 1 where zero_turns falls by points, 0 without opening
    min_bank: int  # the smallest bank once opened: at least 1 (a bank must score)
    full_bank: bool  # a full hand may be banked (hot_dice optional and all_scoring_roll free)
    stretch_start: int  # -1 without a final stretch
    stretch_cap: bool
    rule_of_50: bool

    @classmethod
    def of(cls, rules: BankKeys, unit: int = UNIT) -> "BankRules":
        """The banking rules of `rules` counted in `unit` points (1 for real points)."""
        fs, zero = rules.final_stretch, rules.zero_turns
        falls = zero is not None and isinstance(zero.to, int)  # a fall by points leaves an opened player anywhere
        opening = rules.opening // unit
        return cls(unit, rules.dice, EndRules.of(rules, unit), opening, min(opening, 1) if falls else opening,
                   max(rules.min_bank // unit, 1), rules.can_bank_after_full_hand,
                   -1 if fs is None else fs.start // unit, bool(fs and fs.cap), rules.rule_of_50)

    @property
    def goal(self) -> int:
        """The goal (`EndRules.goal`)."""
        return self.end.goal

    @property
    def exact(self) -> bool:
        """Whether the goal must be reached exactly (`EndRules.exact`)."""
        return self.end.exact

    @property
    def period(self) -> int:
        """Scores this far apart (in units) are alike for the rule of 50 (1 without it)."""
        return 100 // self.unit if self.rule_of_50 else 1

    def opened(self, a: Any) -> Any:
        """Whether a player with banked `a` has opened (always, when there is no opening).

        A score below the opening is not opened (a starting score, `Rules.start`:
        the first bank must still be the opening, and adds to it), except where
        `zero_turns` falls by points, which leaves opened players below it.
        """
        return a >= self.opened_from

    def least(self, a: Any) -> Any:
        """The smallest turn a player with banked `a` may bank: the opening until opened, then min_bank (> 0)."""
        return self.min_bank + (self.opening - self.min_bank) * (self.opened(a) ^ True)

    def hand_ok(self, m: Any) -> Any:
        """Whether a bank is allowed with `m` dice in hand: a full hand must be rolled unless `full_bank`."""
        return self.full_bank | (m != self.dice)

    def allowed(self, a: Any, t: Any, m: Any = None) -> Any:
        """Whether a player with banked `a` may bank `t` turn points with `m` dice in hand (None: not a full hand)."""
        ok = t >= self.least(a)
        return ok if m is None else ok & self.hand_ok(m)

    def overshoots(self, a: Any, t: Any) -> Any:
        """Whether turn points `t` on banked `a` overshoot an exact goal (`EndRules.overshoots`)."""
        return self.end.overshoots(a, t)

    def fault(self, new: Any) -> Any:
        """Rule of 50: a bank that would leave the score `new` ending in 50 points is a fault (False without it)."""
        return self.rule_of_50 and new * self.unit % 100 == 50

    def reaches(self, score: Any) -> Any:
        """Whether a banked score reaches the goal (`EndRules.reaches`)."""
        return self.end.reaches(score)

    def outcome(self, a: Any, t: Any) -> tuple[Any, Any, Any]:
        """(kind, new score, wins) of banking `t` on `a`; the score stays `a` unless the kind is SCORED.

        A final-stretch player (``a >= start``) who stops short of the goal makes
        the turn VOID; with the cap, a bank from below `start` to above it that
        does not reach the goal leaves exactly `start`; then a score ending in 50
        is a FAULT under the rule of 50. Legality is `allowed`'s question.
        """
        new = a + t
        s, short = self.stretch_start, new < self.goal
        void = (s >= 0) & (a >= s) & short
        if self.stretch_cap:
            new = new + (s - new) * ((a < s) & (new > s) & short)
        fault = self.fault(new) & (void ^ True)
        scored = (void | fault) ^ True
        new = a + (new - a) * scored
        return VOID * void + FAULT * fault, new, scored & self.end.reaches(new)  # SCORED is 0
