"""Dice tables: every roll of n dice with its exact probability and legal keeps, as arrays.

Built once per ruleset (`dice_tables(rules)` is cached) and read by the solver,
the policies, the engine and the CLI instead of re-deriving the scoring.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ..rules import Rules
from .scoring import Counts, combinations, legal_keeps, value


def rolls_of(n: int) -> list[Counts]:
    """Every multiset of n dice as a count vector, in a fixed order."""
    out = []
    for combo in itertools.combinations_with_replacement(range(6), n):
        c = [0] * 6
        for f in combo:
            c[f] += 1
        out.append(tuple(c))
    return out


def ways(counts: Counts) -> int:
    """Number of ordered rolls that give this multiset (multinomial coefficient)."""
    total = math.factorial(sum(counts))
    for c in counts:
        total //= math.factorial(c)
    return total


@dataclass(frozen=True, eq=False, slots=True)
class DiceTable:
    """The rolls of `n` dice and their legal keeps, flattened (CSR by roll).

    `keep_start[r]:keep_start[r+1]` are the keeps of roll r. `keep_left` is the
    number of dice left in hand after the keep (0 = a full hand: all D dice
    come back). A bust roll has no keeps.
    """

    n: int
    counts: np.ndarray  # (R, 6) int8
    ways: np.ndarray  # (R,) int64, ordered rolls giving this multiset; prob = ways / 6**n
    prob: np.ndarray  # (R,) float64
    all_scoring: np.ndarray  # (R,) bool: every die of the roll scores
    keep_start: np.ndarray  # (R+1,) int64
    keep_roll: np.ndarray  # (K,) int32: the roll of each keep
    keep_dice: np.ndarray  # (K, 6) int8: kept dice as counts
    keep_points: np.ndarray  # (K,) int64: points of the keep (goal for an instant win)
    keep_left: np.ndarray  # (K,) int8
    keep_win: np.ndarray  # (K,) bool

    @property
    def bust(self) -> np.ndarray:
        """(R,) bool: the roll has no legal keep."""
        return np.asarray(self.keep_start[1:] == self.keep_start[:-1])

    @property
    def bust_ways(self) -> int:
        """Ordered rolls of n dice that bust (out of 6**n)."""
        return int(self.ways[self.bust].sum())

    def keeps_of(self, roll: int) -> range:
        """Indices of the keeps of one roll."""
        return range(int(self.keep_start[roll]), int(self.keep_start[roll + 1]))

    def roll_index(self, counts: Counts) -> int:
        """Index of the roll with these counts."""
        hits = np.flatnonzero((self.counts == np.asarray(counts, dtype=np.int8)).all(axis=1))
        if hits.size != 1:
            raise ValueError(f"{counts} is not a roll of {self.n} dice")
        return int(hits[0])


def build_table(rules: Rules, n: int) -> DiceTable:
    """The table of n dice under `rules`."""
    rolls = rolls_of(n)
    starts, keep_roll, keep_dice, points, left, win, all_scoring = [0], [], [], [], [], [], []
    for r, counts in enumerate(rolls):
        keeps = legal_keeps(rules, counts)
        for keep in keeps:
            keep_roll.append(r)
            keep_dice.append(keep.dice)
            points.append(keep.points)
            left.append(n - keep.size)
            win.append(keep.win)
        starts.append(len(keep_roll))
        all_scoring.append(value(rules, counts) is not None)
    w = np.array([ways(c) for c in rolls], dtype=np.int64)
    return DiceTable(
        n=n,
        counts=np.array(rolls, dtype=np.int8),
        ways=w,
        prob=w / float(6**n),
        all_scoring=np.array(all_scoring, dtype=bool),
        keep_start=np.array(starts, dtype=np.int64),
        keep_roll=np.array(keep_roll, dtype=np.int32),
        keep_dice=np.array(keep_dice, dtype=np.int8).reshape(-1, 6),
        keep_points=np.array(points, dtype=np.int64),
        keep_left=np.array(left, dtype=np.int8),
        keep_win=np.array(win, dtype=bool),
    )


#: The dice tables of the rulesets met in this process (`dice_tables`), at most `KEPT` of them.
_TABLES: dict[Rules, dict[int, DiceTable]] = {}
KEPT = 32
#: The arrays of a `DiceTable` (all its fields but `n`), as a table file stores them (`table.groups`).
TABLE_ARRAYS = tuple(f for f in DiceTable.__slots__ if f != "n")


def dice_tables(rules: Rules) -> dict[int, DiceTable]:
    """Tables for n = 1..D dice in hand, built once per ruleset (or taken from a checked file, `take_tables`)."""
    found = _TABLES.get(rules)
    if found is None:
        found = {n: build_table(rules, n) for n in range(1, rules.dice + 1)}
        take_tables(rules, found)
    return found


def take_tables(rules: Rules, tables: dict[int, DiceTable]) -> None:
    """Use `tables` as the dice tables of `rules` from now on, unless it has some already: the ones built here,
    or read from a table file that this user's cinqmille wrote (`table.groups`: a fresh `advise` reads them
    instead of building them, a fifth of its work). Their shapes are checked here."""
    if sorted(tables) != list(range(1, rules.dice + 1)):
        raise ValueError(f"dice tables of {sorted(tables)} dice, expected 1 to {rules.dice}")
    for n, table in tables.items():
        rolls, keeps = len(table.counts), len(table.keep_roll)
        if table.n != n or table.counts.shape != (math.comb(n + 5, 5), 6) or table.keep_start.shape != (rolls + 1,) \
                or int(table.keep_start[0]) != 0 or int(table.keep_start[-1]) != keeps \
                or any(getattr(table, f).shape[:1] != (rolls,) for f in ("ways", "prob", "all_scoring")) \
                or any(getattr(table, f).shape[:1] != (keeps,) for f in TABLE_ARRAYS if f.startswith("keep_") and
                       f != "keep_start"):
            raise ValueError(f"the dice table of {n} dice has the wrong shape")
    if len(_TABLES) >= KEPT and rules not in _TABLES:
        _TABLES.clear()
    _TABLES.setdefault(rules, tables)


@dataclass(frozen=True, slots=True)
class DiceOdds:
    """Headline odds of rolling n dice: bust, full hand, mean points of the best keep, each combination.

    `combinations` gives, for each combination of several faces that the
    ruleset scores (by name, in the order of `cinqmille.dice.combinations`), the
    chance that a roll of n dice holds it; it is empty where none can count.
    """

    n: int
    bust: Fraction
    full_hand: Fraction
    mean_best: float
    combinations: tuple[tuple[str, Fraction], ...] = ()


def odds(rules: Rules) -> list[DiceOdds]:
    """For each number of dice in hand, the exact bust and full-hand chances and the mean best keep.

    The mean best keep counts a bust as 0 and an instant win as the goal.
    """
    out = []
    units = combinations(rules)
    for n, table in dice_tables(rules).items():
        total = 6**n
        held: dict[str, np.ndarray] = {}
        for unit in units:
            if n in unit.rolls and sum(unit.dice) <= n:
                holds = (table.counts >= np.array(unit.dice, dtype=np.int8)).all(axis=1)
                held[unit.name] = held.get(unit.name, np.zeros(len(table.ways), dtype=bool)) | holds
        best = np.zeros(len(table.ways))
        for r in range(len(table.ways)):
            ks = table.keeps_of(r)
            if len(ks):
                best[r] = table.keep_points[ks.start:ks.stop].max()
        out.append(DiceOdds(
            n=n,
            bust=Fraction(table.bust_ways, total),
            full_hand=Fraction(int(table.ways[table.all_scoring].sum()), total),
            mean_best=float((best * table.ways).sum() / total),
            combinations=tuple((name, Fraction(int(table.ways[mask].sum()), total)) for name, mask in held.items()),
        ))
    return out
