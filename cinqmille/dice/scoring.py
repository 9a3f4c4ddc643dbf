"""Scoring of one roll: readings, the value of a set of dice, and the legal keeps.

A set of dice is a count vector `c` of length 6 (`c[f-1]` dice show face f).
Every scoring combination of a ruleset is written here, once:

- per face, at most one group of three or more of a kind (valued by
  `multiples`: additive, linear, doubling or fixed points, or by the
  five-of-a-kind entry for exactly five 1s or 5s), plus single 1s and 5s;
- the combinations of several faces, as data (`combinations(rules)`): each a
  count vector with its points and the numbers of dice rolled in which it
  counts (straights by their faces, the full house, three pairs, two
  triplets, four of a kind and a pair, and under `no_score_roll` each roll
  of all the dice that holds no other unit: Zilch's "nothing").

A *reading* splits dice into these units; it is *complete* when it uses every
die. The value of a set kept from a roll of `roll` dice is its best complete
reading; a set with no complete reading cannot be kept.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Iterable, Iterator

from ..rules import Rules

Counts = tuple[int, ...]  # six counts, one per face
INSTANT_WIN = float("inf")


@dataclass(frozen=True, slots=True)
class Reading:
    """One way to read a set of dice: its value, combinations and free singles."""

    value: float  # INSTANT_WIN for an instant win
    combos: tuple[Counts, ...]  # multi-dice units, each a count vector
    singles: Counts  # 1s and 5s scored alone
    used: Counts  # every die this reading scores


@dataclass(frozen=True, slots=True)
class Combination:
    """A scoring unit of several faces: its dice, its points and the numbers of dice rolled in which it counts."""

    name: str
    dice: Counts
    points: int
    rolls: frozenset[int]


def _zero() -> list[int]:
    return [0] * 6


def _pattern(sizes: tuple[int, ...]) -> list[Counts]:
    """Every count vector with groups of these sizes on distinct faces (equal sizes not repeated)."""
    out = set()
    for faces in itertools.permutations(range(6), len(sizes)):
        vec = _zero()
        for face, size in zip(faces, sizes):
            vec[face] = size
        out.add(tuple(vec))
    return sorted(out)


@lru_cache(maxsize=64)
def combinations(rules: Rules) -> tuple[Combination, ...]:
    """The combinations of several faces that score under `rules` (RULES.md sections 2 and 9)."""
    d = rules.dice
    any_roll = frozenset(range(1, d + 1))
    st = rules.straights_by_faces
    five_rolls = frozenset({5, 6} if st.from_six else {5})
    out: list[Combination] = []

    def add(name: str, vectors: list[Counts], points: int, rolls: frozenset[int]) -> None:
        if points:
            out.extend(Combination(name, vec, points, rolls) for vec in vectors if sum(vec) <= d)

    add("1-2-3-4-5", [(1, 1, 1, 1, 1, 0)], st.low, five_rolls)
    add("2-3-4-5-6", [(0, 1, 1, 1, 1, 1)], st.high, five_rolls)
    add("1-2-3-4-5-6", [(1, 1, 1, 1, 1, 1)], st.full, frozenset({6}))
    add("full house", _pattern((3, 2)), rules.full_house, any_roll)
    add("three pairs", _pattern((2, 2, 2)), rules.three_pairs, any_roll)
    if rules.four_and_pair_as_three_pairs:
        add("three pairs", _pattern((4, 2)), rules.three_pairs, any_roll)
    add("two triplets", _pattern((3, 3)), rules.two_triplets, any_roll)
    add("four of a kind and a pair", _pattern((4, 2)), rules.four_and_pair, any_roll)
    if rules.no_score_roll:  # every roll of all the dice that would be a bust without this rule
        plain = replace(rules, no_score_roll=0)
        rolls = {counts_of(f + 1 for f in faces) for faces in itertools.combinations_with_replacement(range(6), d)}
        add("no score", sorted(c for c in rolls if is_bust(plain, c)), rules.no_score_roll, frozenset({d}))
    return tuple(out)


def group_value(rules: Rules, face: int, size: int) -> float:
    """Value of `size` (>= 3) dice of `face` read as one group (INSTANT_WIN for five 1s that win; -1 if no such group)."""
    special = {1: rules.five_ones, 5: rules.five_fives}.get(face)
    if size == 5 and special is not None and special != "multiples":
        return INSTANT_WIN if special == "win" else float(special)
    base = rules.triple(face)
    if size == 3:
        return float(base)
    if rules.multiples == "additive":
        # k of a kind is one triple plus k - 3 dice that score only as single 1s or 5s:
        # the extra dice are read as singles, so a group of more than three does not exist.
        return -1.0
    if rules.multiples == "fixed":
        return float(rules.kind(size)) or -1.0
    if rules.multiples == "linear":
        return float(base * (size - 2))
    return float(base * 2 ** (size - 3))


def _face_options(rules: Rules, face: int, count: int, complete: bool) -> list[tuple[float, int, int]]:
    """(value, group size, singles) for `count` dice of `face`; leftovers allowed unless complete."""
    options = []
    single = rules.single(face)
    for group in [0] + list(range(3, count + 1)):
        gvalue = 0.0 if group == 0 else group_value(rules, face, group)
        if gvalue < 0:
            continue
        rest = count - group
        for singles in range(rest + 1) if not complete else [rest]:
            if singles and not single:
                continue
            if complete and singles != rest:
                continue
            options.append((gvalue + singles * single, group, singles))
    return options


def _per_face_readings(rules: Rules, counts: Counts, complete: bool, base_value: float,
                       base_combos: tuple[Counts, ...], base_used: Counts) -> list[Reading]:
    per_face = [_face_options(rules, f + 1, counts[f], complete) for f in range(6)]
    readings = []
    for choice in itertools.product(*per_face):
        value = base_value
        combos = list(base_combos)
        singles = _zero()
        used = list(base_used)
        for f, (v, group, nsingle) in enumerate(choice):
            value += v
            if group:
                vec = _zero()
                vec[f] = group
                combos.append(tuple(vec))
            singles[f] = nsingle
            used[f] += group + nsingle
        if any(used):
            readings.append(Reading(value, tuple(combos), tuple(singles), tuple(used)))
    return readings


def _combination_choices(units: tuple[Combination, ...], counts: Counts,
                         start: int = 0) -> Iterator[tuple[tuple[Combination, ...], Counts]]:
    """Every choice of disjoint combinations (in list order) within `counts`, with the dice left over."""
    yield (), counts
    for i in range(start, len(units)):
        dice = units[i].dice
        if all(u <= c for u, c in zip(dice, counts)):
            rest = tuple(c - u for c, u in zip(counts, dice))
            for more, left in _combination_choices(units, rest, i):
                yield (units[i],) + more, left


def readings(rules: Rules, counts: Counts, complete: bool, roll: int | None = None) -> tuple[Reading, ...]:
    """Every reading of `counts`, taken from a roll of `roll` dice (default: these dice), that scores at least one die.

    With `complete`, only the readings that use every die.
    """
    counts = tuple(counts)
    return _readings(rules, counts, complete, sum(counts) if roll is None else roll)


@lru_cache(maxsize=None)
def _readings(rules: Rules, counts: Counts, complete: bool, roll: int) -> tuple[Reading, ...]:
    units = tuple(c for c in combinations(rules) if roll in c.rolls)
    out: list[Reading] = []
    for chosen, rest in _combination_choices(units, counts):
        used = tuple(c - r for c, r in zip(counts, rest))
        out.extend(_per_face_readings(rules, rest, complete, float(sum(c.points for c in chosen)),
                                      tuple(c.dice for c in chosen), used))
    if complete:
        out = [r for r in out if r.used == counts]
    return tuple(out)


def value(rules: Rules, counts: Counts, roll: int | None = None) -> float | None:
    """Value of keeping exactly these dice from a roll of `roll` dice (default: these dice).

    INSTANT_WIN for an instant win, None if some die does not score.
    """
    counts = tuple(counts)
    return _value(rules, counts, sum(counts) if roll is None else roll)


@lru_cache(maxsize=None)
def _value(rules: Rules, counts: Counts, roll: int) -> float | None:
    options = _readings(rules, counts, True, roll)
    if not options:
        return None
    return max(r.value for r in options)


def is_bust(rules: Rules, counts: Counts) -> bool:
    """Whether a roll has no scoring die at all."""
    return not readings(rules, counts, False)


def sub_counts(counts: Counts) -> Iterator[Counts]:
    """Every non-empty sub-multiset of `counts`."""
    for sub in itertools.product(*(range(c + 1) for c in counts)):
        if any(sub):
            yield sub


@dataclass(frozen=True, slots=True)
class Keep:
    """A legal keep: the kept dice, the points they score, and whether they win at once."""

    dice: Counts
    points: int
    win: bool

    @property
    def size(self) -> int:
        return sum(self.dice)


def _points_of(rules: Rules, val: float) -> tuple[int, bool]:
    if val == INSTANT_WIN:
        return rules.goal, True
    return int(val), False


@lru_cache(maxsize=None)
def legal_keeps(rules: Rules, counts: Counts) -> tuple[Keep, ...]:
    """Every legal keep of a roll under the keep rules of RULES.md section 3 (empty for a bust)."""
    counts = tuple(counts)
    roll = sum(counts)
    if is_bust(rules, counts):
        return ()
    whole = value(rules, counts)
    if whole is not None and rules.all_scoring_roll == "keep_all_and_roll":
        return (Keep(counts, *_points_of(rules, whole)),)
    if rules.split_combinations:
        candidates = {sub for sub in sub_counts(counts) if value(rules, sub, roll) is not None}
    else:
        all_readings = readings(rules, counts, False)
        best = max(r.value for r in all_readings)
        candidates = set()
        for reading in all_readings:
            if reading.value != best:
                continue
            units = list(reading.combos)
            free1, free5 = reading.singles[0], reading.singles[4]
            for mask in itertools.product((0, 1), repeat=len(units)):
                for n1 in range(free1 + 1):
                    for n5 in range(free5 + 1):
                        kept = [0] * 6
                        for take, unit in zip(mask, units):
                            if take:
                                kept = [k + u for k, u in zip(kept, unit)]
                        kept[0] += n1
                        kept[4] += n5
                        if any(kept):
                            candidates.add(tuple(kept))
    if rules.must_keep_triples:
        candidates = {k for k in candidates
                      if all(k[f] >= 3 for f in range(6) if counts[f] >= 3)}
    keeps = []
    for chosen in sorted(candidates):
        val = value(rules, chosen, roll)
        assert val is not None
        keeps.append(Keep(chosen, *_points_of(rules, val)))
    return tuple(keeps)


def counts_of(faces: Iterable[int]) -> Counts:
    """Count vector of a sequence of faces 1..6."""
    c = [0] * 6
    for face in faces:
        c[int(face) - 1] += 1
    return tuple(c)


def faces_of(counts: Counts) -> tuple[int, ...]:
    """Sorted faces of a count vector."""
    return tuple(f + 1 for f in range(6) for _ in range(counts[f]))
