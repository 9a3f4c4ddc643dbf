"""Pure rule judgements shared by the referee and the policies.

What a bank does, whether it is legal, whether a score reaches the goal (thin
calls of `cinqmille.rules.bank`, in points), which predictions may be announced,
and the per-ruleset keep lookup (a dict over the cached `legal_keeps`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..dice import legal_keeps, rolls_of
from ..dice.scoring import Counts, Keep
from ..rules import Rules
from ..rules.bank import KINDS, BankKind


@dataclass(frozen=True, slots=True)
class BankOutcome:
    """What banking `turn` points would do: `scored` (new score), `void` (final stretch), `fault` (rule of 50)."""

    kind: BankKind
    score: int  # the banked score after the bank


def bank_outcome(rules: Rules, score: int, turn: int) -> BankOutcome:
    """The effect of banking `turn` points on banked `score` (`BankRules.outcome`; legality is checked elsewhere)."""
    kind, new, _ = rules.banking.outcome(score, turn)
    return BankOutcome(KINDS[int(kind)], int(new))


def bank_allowed(rules: Rules, score: int, turn: int, rolled: bool, full_hand: bool) -> bool:
    """Whether the player may bank now (RULES.md 1.6, 3, 4: a roll made, full hand, opening, min_bank)."""
    return rolled and bool(rules.banking.allowed(score, turn, rules.dice if full_hand else None))


def reaches_goal(rules: Rules, score: int) -> bool:
    """Whether a banked score wins (or triggers the last round): `>= goal` or `== goal` under `exact`."""
    return bool(rules.banking.reaches(score))


def roll_points(keeps: tuple[Keep, ...]) -> int:
    """The points a roll scores: its best keep (0 for a bust)."""
    return max((k.points for k in keeps), default=0)


@lru_cache(maxsize=32)
def prediction_choices(rules: Rules) -> tuple[int, ...]:
    """The announcements a player may make for his last two dice: every non-zero score of two dice."""
    return tuple(sorted({roll_points(legal_keeps(rules, c)) for c in rolls_of(2)} - {0}))


@lru_cache(maxsize=32)
def keep_lookup(rules: Rules) -> dict[Counts, tuple[Keep, ...]]:
    """Legal keeps of every roll of 1..D dice, read once per ruleset (hashing `rules` once)."""
    return {c: legal_keeps(rules, c) for n in range(1, rules.dice + 1) for c in rolls_of(n)}
