"""Scoring of one roll: readings, the value of a set of dice, and the legal keeps.

A set of dice is a count vector `c` of length 6 (`c[f-1]` dice show face f).
A *reading* splits dice into scoring units (RULES.md section 2): per face, at
most one group of three or more (valued by `multiples`, or by the five-of-a-kind
entry for exactly five 1s or 5s) plus single 1s and 5s; or a straight (all D
dice of a D-dice roll); or a full house plus per-face units. A reading is
*complete* when it uses every die. The value of a kept set is its best
complete reading; a set with no complete reading cannot be kept.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache

from ..rules import Rules

Counts = tuple[int, ...]  # six counts, one per face
WIN = float("inf")


@dataclass(frozen=True, slots=True)
class Reading:
    """One way to read a set of dice: its value, combinations and free singles."""

    value: float  # WIN for an instant win
    combos: tuple[Counts, ...]  # multi-dice units, each a count vector
    singles: Counts  # 1s and 5s scored alone
    used: Counts  # every die this reading scores


def _zero() -> list[int]:
    return [0] * 6


def group_value(rules: Rules, face: int, size: int) -> float:
    """Value of `size` (>= 3) dice of `face` read as one group (WIN for five 1s that win)."""
    special = {1: rules.five_ones, 5: rules.five_fives}.get(face)
    if size == 5 and special is not None and special != "multiples":
        return WIN if special == "win" else float(special)
    base = rules.triple(face)
    if size == 3:
        return float(base)
    if rules.multiples == "additive":
        # k of a kind is one triple plus k - 3 dice that score only as single 1s or 5s:
        # the extra dice are read as singles, so a group of more than three does not exist.
        return -1.0
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


def _straights(rules: Rules) -> list[Counts]:
    if not rules.straights:
        return []
    if rules.dice == 5:
        return [(1, 1, 1, 1, 1, 0), (0, 1, 1, 1, 1, 1)]
    return [(1, 1, 1, 1, 1, 1)]


def _per_face_readings(rules: Rules, counts: Counts, complete: bool, base_value: float,
                       base_combos: tuple[Counts, ...], base_used: list[int]) -> list[Reading]:
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


@lru_cache(maxsize=None)
def readings(rules: Rules, counts: Counts, complete: bool) -> tuple[Reading, ...]:
    """Every reading of `counts` that scores at least one die (all dice if `complete`)."""
    n = sum(counts)
    out: list[Reading] = []
    if n == rules.dice:
        for straight in _straights(rules):
            if counts == straight:
                out.append(Reading(float(rules.straights), (straight,), (0,) * 6, straight))
    if rules.full_house:
        for a in range(6):
            for b in range(6):
                if a != b and counts[a] >= 3 and counts[b] >= 2:
                    fh = _zero()
                    fh[a], fh[b] = 3, 2
                    rest = tuple(c - u for c, u in zip(counts, fh))
                    out.extend(_per_face_readings(rules, rest, complete, float(rules.full_house),
                                                  (tuple(fh),), fh))
    out.extend(_per_face_readings(rules, counts, complete, 0.0, (), _zero()))
    if complete:
        out = [r for r in out if r.used == counts]
    return tuple(out)


@lru_cache(maxsize=None)
def value(rules: Rules, counts: Counts) -> float | None:
    """Value of keeping exactly these dice (WIN for an instant win), or None if some die does not score."""
    options = readings(rules, counts, True)
    if not options:
        return None
    return max(r.value for r in options)


def is_bust(rules: Rules, counts: Counts) -> bool:
    """Whether a roll has no scoring die at all."""
    return not readings(rules, counts, False)


def sub_counts(counts: Counts):
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
    if val == WIN:
        return rules.goal, True
    return int(val), False


@lru_cache(maxsize=None)
def legal_keeps(rules: Rules, counts: Counts) -> tuple[Keep, ...]:
    """Every legal keep of a roll under the keep rules of RULES.md section 3 (empty for a bust)."""
    counts = tuple(counts)
    if is_bust(rules, counts):
        return ()
    whole = value(rules, counts)
    if whole is not None and rules.all_scoring_roll == "keep_all_and_roll":
        return (Keep(counts, *_points_of(rules, whole)),)
    if rules.split_combinations:
        candidates = {sub for sub in sub_counts(counts) if value(rules, sub) is not None}
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
    for kept in sorted(candidates):
        val = value(rules, kept)
        assert val is not None
        keeps.append(Keep(kept, *_points_of(rules, val)))
    return tuple(keeps)


def counts_of(faces) -> Counts:
    """Count vector of a sequence of faces 1..6."""
    c = [0] * 6
    for face in faces:
        c[int(face) - 1] += 1
    return tuple(c)


def faces_of(counts: Counts) -> tuple[int, ...]:
    """Sorted faces of a count vector."""
    return tuple(f + 1 for f in range(6) for _ in range(counts[f]))
