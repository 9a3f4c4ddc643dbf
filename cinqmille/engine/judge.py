"""Pure rule judgements shared by the referee and the policies (one definition of each).

What a bank does to a score (final stretch, cap, rule of 50), whether banking is
legal, whether a score reaches the goal, which predictions may be announced, and
the per-ruleset keep lookup (a dict over the cached `legal_keeps`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from ..dice import legal_keeps, rolls_of
from ..dice.scoring import Counts, Keep
from ..rules import Rules

BankKind = Literal["scored", "void", "fault"]


@dataclass(frozen=True)
class BankOutcome:
    """What banking `turn` points would do: `scored` (new score), `void` (final stretch), `fault` (rule of 50)."""

    kind: BankKind
    score: int  # the banked score after the bank


def bank_outcome(rules: Rules, score: int, turn: int) -> BankOutcome:
    """The effect of banking `turn` points on banked `score` (legality is checked elsewhere)."""
    new = score + turn
    stretch = rules.final_stretch
    if stretch is not None:
        if score >= stretch.start and new < rules.goal:
            return BankOutcome("void", score)
        if stretch.cap and score < stretch.start < new < rules.goal:
            new = stretch.start
    if rules.rule_of_50 and new % 100 == 50:
        return BankOutcome("fault", score)
    return BankOutcome("scored", new)


def bank_allowed(rules: Rules, score: int, turn: int, rolled: bool, full_hand: bool) -> bool:
    """Whether the player may bank now (RULES.md 1.6, 3, 4: a roll made, full hand, opening, min_bank)."""
    if not rolled:
        return False
    if full_hand and not rules.can_bank_after_full_hand:
        return False
    return rules.can_bank(score, turn)


def reaches_goal(rules: Rules, score: int) -> bool:
    """Whether a banked score wins (or triggers the last round): `>= goal` or `== goal` under `exact`."""
    return score == rules.goal if rules.end == "exact" else score >= rules.goal


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
