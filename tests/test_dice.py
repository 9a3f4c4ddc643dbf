"""Dice: exact probabilities, the bust figures of RULES.md section 7, scoring and keep rules."""

from __future__ import annotations

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cinqmille.dice import counts_of, dice_tables, faces_of, legal_keeps, odds, value
from cinqmille.rules import PRESET_NAMES, load_rules, rules_from_dict

STANDARD = load_rules("standard")
BUST = {1: Fraction(4, 6), 2: Fraction(16, 36), 3: Fraction(60, 216), 4: Fraction(204, 1296),
        5: Fraction(600, 7776), 6: Fraction(1440, 46656)}
#: RULES.md section 9: with three pairs scoring, six dice bust only on two pairs and two singles of 2, 3, 4 or 6.
BUST_THREE_PAIRS = Fraction(1080, 46656)


def three_pairs(roll: tuple[int, ...] | list[int]) -> bool:
    """Whether six dice show three faces twice each."""
    return len(roll) == 6 and sorted(roll.count(f) for f in set(roll)) == [2, 2, 2]


def brute_bust(n: int, pairs: bool = False) -> Fraction:
    """Bust chance by enumerating all 6**n ordered rolls: no 1, no 5, no face three times (nor three pairs)."""
    busts = sum(
        1 for roll in itertools.product(range(1, 7), repeat=n)
        if 1 not in roll and 5 not in roll and all(roll.count(f) < 3 for f in range(1, 7))
        and not (pairs and three_pairs(roll))
    )
    return Fraction(busts, 6**n)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_bust_chances_equal_the_rule_book(name: str) -> None:
    """Bust figures are exactly 4/6, 16/36, 60/216, 204/1296, 600/7776 (and 1440/46656 with 6 dice, 1080 with three pairs)."""
    rules = load_rules(name)
    for row in odds(rules):
        pairs = bool(rules.three_pairs) and row.n == 6
        assert row.bust == (BUST_THREE_PAIRS if pairs else BUST[row.n]) == brute_bust(row.n, pairs)


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_roll_probabilities_sum_to_one(name: str) -> None:
    """The multiset probabilities of n dice sum to 1 exactly (integer ways over 6**n)."""
    for n, table in dice_tables(load_rules(name)).items():
        assert int(table.ways.sum()) == 6**n


@pytest.mark.parametrize(
    ("faces", "points"),
    [("11152", None), ("1115", 1050), ("1", 100), ("5", 50), ("555", 500), ("1111", 1100),
     ("2222", None), ("222", 200), ("12345", 1500), ("23456", 1500), ("55555", 5000), ("11", 200)],
)
def test_value_of_kept_dice_under_standard(faces: str, points: int | None) -> None:
    """Standard values: 1-1-1-5 = 1050, four 1s = 1100, a fourth 2 does not score, straights 1500."""
    assert value(STANDARD, counts_of(faces)) == points


def test_multiples_modes() -> None:
    """Four 2s: additive cannot keep them, linear 400, doubling 400; five 4s linear 1200."""
    linear = rules_from_dict({"multiples": "linear"})
    doubling = rules_from_dict({"multiples": "doubling"})
    assert value(linear, counts_of("2222")) == 400
    assert value(linear, counts_of("44444")) == 1200
    assert value(doubling, counts_of("2222")) == 400
    assert value(doubling, counts_of("44444")) == 1600
    assert value(doubling, counts_of("5555")) == 1000
    assert value(doubling, counts_of("55555")) == 5000  # five_fives takes precedence


def test_six_dice_straight_only_with_all_six() -> None:
    """With six dice the only straight is 1-2-3-4-5-6; 1-2-3-4-5 is just 150."""
    six = load_rules("six-dice")
    assert value(six, counts_of("123456")) == 1500
    assert value(six, counts_of("12345")) is None
    keeps = {faces_of(k.dice): k.points for k in legal_keeps(six, counts_of("123452"))}
    assert max(keeps.values()) == 150


def test_split_false_four_ones() -> None:
    """Under unsplittable combinations with additive, four 1s allow keeping 1, 111 or 1111, not 11."""
    rules = rules_from_dict({"split_combinations": False})
    kept = {faces_of(k.dice) for k in legal_keeps(rules, counts_of("11113"))}
    assert kept == {(1,), (1, 1, 1), (1, 1, 1, 1)}
    straight = {faces_of(k.dice) for k in legal_keeps(rules, counts_of("12345"))}
    assert straight == {(1, 2, 3, 4, 5)}


def test_must_keep_triples_and_keep_all() -> None:
    """House: a rolled triple must be kept; an all-scoring roll must be kept whole."""
    house = load_rules("house")
    kept = {faces_of(k.dice) for k in legal_keeps(house, counts_of("22253"))}
    assert kept == {(2, 2, 2), (2, 2, 2, 5)}
    whole = legal_keeps(house, counts_of("55515"))
    assert [(faces_of(k.dice), k.points) for k in whole] == [((1, 5, 5, 5, 5), 650)]


def test_full_house_when_enabled() -> None:
    """A full house, when it has a value, is read if it beats the triple and pair."""
    rules = rules_from_dict({"full_house": 1000})
    assert value(rules, counts_of("22233")) == 1000
    assert value(rules, counts_of("22255")) == 1000
    assert value(STANDARD, counts_of("22255")) == 300


faces = st.lists(st.integers(1, 6), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(faces, st.sampled_from(PRESET_NAMES), st.randoms())
def test_roll_value_does_not_depend_on_order(roll: list[int], name: str, rnd) -> None:
    """Shuffling a roll changes neither its keeps nor their points."""
    rules = load_rules(name)
    if len(roll) > rules.dice:
        roll = roll[: rules.dice]
    shuffled = roll[:]
    rnd.shuffle(shuffled)
    assert legal_keeps(rules, counts_of(roll)) == legal_keeps(rules, counts_of(shuffled))


@settings(max_examples=200, deadline=None)
@given(faces, st.sampled_from(PRESET_NAMES))
def test_keeps_use_only_rolled_dice_and_bust_has_none(roll: list[int], name: str) -> None:
    """Every keep is a non-empty part of the roll; a roll with no 1, 5 or triple has no keep."""
    rules = load_rules(name)
    roll = roll[: rules.dice]
    counts = counts_of(roll)
    keeps = legal_keeps(rules, counts)
    scoring = (1 in roll or 5 in roll or any(roll.count(f) >= 3 for f in range(1, 7))
               or (bool(rules.three_pairs) and three_pairs(roll)))
    assert bool(keeps) == scoring
    for keep in keeps:
        assert keep.size >= 1
        assert all(k <= c for k, c in zip(keep.dice, counts))
        assert keep.points > 0 and keep.points % 50 == 0
