"""The Farkle family's combinations (RULES.md section 9): brute-force odds, values, validation, the solver."""

from __future__ import annotations

import itertools
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from brute_force import brute_force_win
from cinqmille.dice import counts_of, faces_of, legal_keeps, odds, value
from cinqmille.rules import PRESET_NAMES, Rules, RulesError, content_key, load_rules, rules_from_dict, to_toml
from cinqmille.rules.model import Straights
from cinqmille.solver import compute

# -- an independent reading of the rule text: which dice a roll of n dice can score ------------------------------
#
# A unit is a multiset of faces (a sorted tuple). These are written from RULES.md sections 2 and 9 directly,
# not through cinqmille.dice: single 1s and 5s; three of a kind; four to six of a kind when `multiples` gives
# them points (every formula but additive; fixed points when the size has some), five 1s or 5s when their own
# entry gives them a value; straights by faces (five-dice ones in a roll of exactly five dice, or of six with
# `from_six`; an integer `straights` means both five-dice straights with five dice, 1-2-3-4-5-6 with six);
# the full house, three pairs (and four of a kind plus a pair, with its setting), two triplets, four of a kind
# plus a pair, each on distinct faces.

Unit = tuple[int, ...]


def _straights(rules: Rules, n: int) -> list[Unit]:
    low, high, full, from_six = (rules.straights.low, rules.straights.high, rules.straights.full,
                                 rules.straights.from_six) if isinstance(rules.straights, Straights) else (
        (rules.straights, rules.straights, 0, False) if rules.dice == 5 else (0, 0, rules.straights, False))
    out = []
    if n == 5 or (n == 6 and from_six):
        out += [(1, 2, 3, 4, 5)] * bool(low) + [(2, 3, 4, 5, 6)] * bool(high)
    if n == 6 and full:
        out.append((1, 2, 3, 4, 5, 6))
    return out


def _patterns(sizes: tuple[int, ...]) -> list[Unit]:
    return sorted({tuple(sorted(f for f, k in zip(faces, sizes) for _ in range(k)))
                   for faces in itertools.permutations(range(1, 7), len(sizes))})


def rule_units(rules: Rules, n: int) -> dict[str, list[Unit]]:
    """The units that can score in a roll of n dice, by name, from the rule text."""
    units: dict[str, list[Unit]] = {"singles": [(f,) for f in (1, 5) if rules.single(f)],
                                    "of a kind": [(f,) * 3 for f in range(1, 7) if rules.triple(f)]}
    for size in range(4, rules.dice + 1):
        for f in range(1, 7):
            special = {1: rules.five_ones, 5: rules.five_fives}.get(f, "multiples") if size == 5 else "multiples"
            if special != "multiples":
                scores = True
            elif rules.multiples == "fixed":
                scores = bool(rules.kinds[size - 4]) if size - 4 < len(rules.kinds) else False
            else:
                scores = rules.multiples != "additive"
            if scores:
                units["of a kind"].append((f,) * size)
    for name, points, sizes in (("full house", rules.full_house, (3, 2)), ("three pairs", rules.three_pairs, (2, 2, 2)),
                                ("two triplets", rules.two_triplets, (3, 3)),
                                ("four of a kind and a pair", rules.four_and_pair, (4, 2))):
        if points:
            units[name] = _patterns(sizes)
    if rules.three_pairs and rules.four_and_pair_as_three_pairs:
        units["three pairs"] += _patterns((4, 2))
    for unit in _straights(rules, n):
        units["-".join(map(str, unit))] = [unit]
    units = {name: [u for u in found if len(u) <= n] for name, found in units.items()}
    if rules.no_score_roll and n == rules.dice:  # Zilch: a roll of all the dice holding no other unit is one
        others = [u for found in units.values() for u in found]
        units["no score"] = [roll for roll in itertools.combinations_with_replacement(range(1, 7), n)
                             if not any(_holds(roll, u) for u in others)]
    return units


def _holds(roll: Unit, unit: Unit) -> bool:
    return all(roll.count(f) >= unit.count(f) for f in set(unit))


def _minus(roll: Unit, unit: Unit) -> Unit:
    rest = list(roll)
    for f in unit:
        rest.remove(f)
    return tuple(rest)


def brute_odds(rules: Rules, n: int) -> tuple[Fraction, Fraction, dict[str, Fraction]]:
    """Bust chance, full-hand chance and the chance to hold each combination, over all 6**n ordered rolls."""
    units = rule_units(rules, n)
    every = [u for found in units.values() for u in found]

    kinds = set(units["of a kind"])

    @lru_cache(maxsize=None)
    def covered(roll: Unit, grouped: frozenset[int] = frozenset()) -> bool:
        """Whether the dice split entirely into units (smallest face first), one group of a kind per face."""
        if not roll:
            return True
        return any(_holds(roll, u) and roll[0] in u and not (u in kinds and u[0] in grouped)
                   and covered(_minus(roll, u), grouped | {u[0]} if u in kinds else grouped) for u in every)

    names = [name for name in units if name not in ("singles", "of a kind")]

    @lru_cache(maxsize=None)
    def judge(roll: Unit) -> tuple[bool, bool, tuple[bool, ...]]:
        return (not any(_holds(roll, u) for u in every), covered(roll),
                tuple(any(_holds(roll, u) for u in units[name]) for name in names))

    bust = full = 0
    held = dict.fromkeys(names, 0)
    for ordered in itertools.product(range(1, 7), repeat=n):
        is_bust, is_full, holds = judge(tuple(sorted(ordered)))
        bust += is_bust
        full += is_full
        for name, h in zip(names, holds):
            held[name] += h
    total = 6**n
    return Fraction(bust, total), Fraction(full, total), {k: Fraction(v, total) for k, v in held.items() if v}


SIX = {"base": "six-dice"}
RULESETS: dict[str, dict[str, Any]] = {
    "three-pairs": {**SIX, "three_pairs": 1500},
    "three-pairs-with-four-and-pair": {**SIX, "three_pairs": 750, "four_and_pair_as_three_pairs": True},
    "two-triplets": {**SIX, "two_triplets": 2500},
    "four-and-pair": {**SIX, "four_and_pair": 1500},
    "fixed-kinds-5": {"multiples": "fixed", "kinds": {"4": 1000, "5": 2000}, "five_ones": "multiples",
                      "five_fives": "multiples"},
    "fixed-kinds-6": {**SIX, "multiples": "fixed", "kinds": {"4": 1000, "5": 2000, "6": 3000}},
    "straights-5-by-faces": {"straights": {"12345": 500, "23456": 750}},
    "straights-6-five-dice-rolls": {**SIX, "straights": {"12345": 500, "23456": 750, "123456": 1500}},
    "straights-6-from-six": {**SIX, "straights": {"12345": 500, "23456": 750, "123456": 1500, "from_six": True}},
    "no-score-roll-6": {**SIX, "three_pairs": 1500, "straights": 1500, "no_score_roll": 500},
    "no-score-roll-5": {"no_score_roll": 300},
    "everything": {**SIX, "multiples": "fixed", "kinds": {"4": 1000, "5": 2000, "6": 3000}, "full_house": 1250,
                   "three_pairs": 1500, "four_and_pair_as_three_pairs": True, "two_triplets": 2500,
                   "four_and_pair": 1500, "straights": {"12345": 500, "23456": 750, "from_six": True}},
}
ALL = {**{name: rules_from_dict(spec, name) for name, spec in RULESETS.items()},
       **{name: load_rules(name) for name in PRESET_NAMES}}


@pytest.mark.parametrize("name", sorted(ALL))
def test_odds_equal_a_brute_force_count_of_every_roll(name: str) -> None:
    """Bust, full-hand and combination chances of n = 1..D dice equal a count over all 6**n rolls."""
    rules = ALL[name]
    for row in odds(rules):
        bust, full, held = brute_odds(rules, row.n)
        assert (row.bust, row.full_hand) == (bust, full), f"{name}, {row.n} dice"
        assert dict(row.combinations) == held, f"{name}, {row.n} dice"


def test_three_pairs_bust_figure_of_the_rule_book() -> None:
    """With three pairs scoring, six dice bust only on two pairs and two singles of 2, 3, 4, 6: 1080/46656."""
    rules = ALL["three-pairs"]
    assert odds(rules)[5].bust == Fraction(1080, 46656) == brute_odds(rules, 6)[0]
    assert odds(load_rules("farkle-cardgames"))[5].bust == Fraction(1080, 46656)
    assert odds(load_rules("six-dice"))[5].bust == Fraction(1440, 46656)


@pytest.mark.parametrize(("name", "faces", "points"), [
    ("three-pairs", "223344", 1500), ("three-pairs", "222244", None), ("three-pairs", "222222", None),
    ("three-pairs", "115566", 1500), ("three-pairs-with-four-and-pair", "222244", 750),
    ("three-pairs-with-four-and-pair", "111155", 1200),  # three 1s, a 1 and two 5s beat three pairs
    ("two-triplets", "222333", 2500), ("two-triplets", "222222", None), ("two-triplets", "111555", 2500),
    ("four-and-pair", "333366", 1500), ("four-and-pair", "3333", None),
    ("fixed-kinds-5", "2222", 1000), ("fixed-kinds-5", "1111", 1100), ("fixed-kinds-5", "11111", 2000),
    ("fixed-kinds-5", "66665", 1050), ("fixed-kinds-6", "444444", 3000),
    ("fixed-kinds-6", "555555", 5050),  # five 5s are 5000 under six-dice, and the sixth a single
    ("straights-5-by-faces", "12345", 500), ("straights-5-by-faces", "23456", 750),
    ("straights-6-five-dice-rolls", "123456", 1500), ("straights-6-five-dice-rolls", "23456", 750),
    ("straights-6-five-dice-rolls", "234565", None), ("straights-6-from-six", "234565", 800),
    ("straights-6-from-six", "112345", 600), ("straights-6-from-six", "234566", None),
    ("no-score-roll-6", "223346", 500), ("no-score-roll-6", "22334", None), ("no-score-roll-6", "223345", None),
    ("no-score-roll-5", "22346", 300), ("no-score-roll-5", "2234", None),
])
def test_value_of_a_whole_roll(name: str, faces: str, points: int | None) -> None:
    """The points of keeping a whole roll, worked out by hand from the rule text (None: some die cannot score)."""
    assert value(ALL[name], counts_of(faces)) == points


def test_five_dice_straight_counts_by_roll_size() -> None:
    """Without from_six a five-dice straight counts in a roll of five dice only; with it, from six dice too."""
    five_only, from_six = ALL["straights-6-five-dice-rolls"], ALL["straights-6-from-six"]
    straight = counts_of("23456")
    assert value(five_only, straight, 5) == 750 and value(five_only, straight, 6) is None
    assert value(from_six, straight, 6) == 750
    keeps = {faces_of(k.dice): k.points for k in legal_keeps(from_six, counts_of("234566"))}
    assert keeps == {(5,): 50, (2, 3, 4, 5, 6): 750}
    keeps = {faces_of(k.dice): k.points for k in legal_keeps(five_only, counts_of("234566"))}
    assert keeps == {(5,): 50}


def test_no_score_roll_is_a_full_hand_of_its_points() -> None:
    """Under no_score_roll, six dice that score nothing are one keep of all six, worth its points; fewer dice bust."""
    rules = ALL["no-score-roll-6"]
    assert [(faces_of(k.dice), k.points) for k in legal_keeps(rules, counts_of("224466"))] == [((2, 2, 4, 4, 6, 6),
                                                                                                 1500)]
    assert [(faces_of(k.dice), k.points) for k in legal_keeps(rules, counts_of("223346"))] == [((2, 2, 3, 3, 4, 6),
                                                                                                 500)]
    assert odds(rules)[5].bust == 0 and odds(rules)[4].bust == odds(load_rules("six-dice"))[4].bust
    assert legal_keeps(rules, counts_of("22346")) == ()


def test_unsplittable_three_pairs_are_kept_whole_or_not_at_all() -> None:
    """With split_combinations false, three pairs 1-1-5-5-6-6 are kept whole, not as single 1s and 5s."""
    rules = rules_from_dict({**SIX, "three_pairs": 1500, "split_combinations": False})
    assert {faces_of(k.dice) for k in legal_keeps(rules, counts_of("115566"))} == {(1, 1, 5, 5, 6, 6)}


def test_presets_of_the_family() -> None:
    """farkle-cardgames and kcd hold what RULES.md section 9 says."""
    farkle, kcd = load_rules("farkle-cardgames"), load_rules("kcd")
    assert (farkle.dice, farkle.goal, farkle.opening, farkle.last_round, farkle.hot_dice) == (6, 10000, 0, False, "optional")
    assert [value(farkle, counts_of(f)) for f in ("1", "5", "222", "111", "3333", "33333", "333333", "223344",
                                                  "222233", "123456")] == [100, 50, 200, 1000, 1000, 2000, 3000,
                                                                           1500, 1500, 2500]
    assert (kcd.dice, kcd.goal, kcd.opening, kcd.last_round, kcd.hot_dice) == (6, 4000, 0, False, "optional")
    assert [value(kcd, counts_of(f)) for f in ("1", "5", "333", "3333", "33333", "333333", "111", "1111", "12345",
                                               "23456", "123456", "123455")] == [100, 50, 300, 600, 1200, 2400,
                                                                                 1000, 2000, 500, 750, 1500, 550]


@pytest.mark.parametrize(("spec", "fragment"), [
    ({"three_pairs": 1500}, "key 'three_pairs': three pairs need six dice"),
    ({"two_triplets": 1500}, "key 'two_triplets'"),
    ({"four_and_pair": 1500}, "key 'four_and_pair'"),
    ({**SIX, "four_and_pair_as_three_pairs": True}, "key 'four_and_pair_as_three_pairs'"),
    ({"multiples": "fixed"}, "needs the points of 4, 5 of a kind"),
    ({"multiples": "fixed", "kinds": {"4": 1000}}, "needs the points of 5 of a kind"),
    ({"kinds": {"4": 1000, "5": 2000}}, "key 'kinds'"),
    ({"multiples": "fixed", "kinds": {"4": 1000, "5": 2000, "6": 3000}}, "key 'kinds.6'"),
    ({"multiples": "fixed", "kinds": {"3": 300}}, "key 'kinds.3'"),
    ({"straights": {"123456": 1500}}, "key 'straights.123456'"),
    ({"straights": {"from_six": True}}, "key 'straights.from_six'"),
    ({**SIX, "straights": {"from_six": True}}, "no five-dice straight scores"),
    ({"straights": {"1234": 100}}, "key 'straights.1234'"),
    ({"straights": {"12345": 125}}, "multiple of 50"),
    ({"three_pairs": "yes"}, "key 'three_pairs'"),
])
def test_contradictions_are_refused_in_one_line(spec: dict[str, Any], fragment: str) -> None:
    """Combinations that cannot be played (three pairs with five dice...) are refused, naming the key."""
    with pytest.raises(RulesError) as info:
        rules_from_dict(spec, "table")
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_inherited_fixed_points_give_way_to_a_formula(tmp_path: Path) -> None:
    """A file over farkle-cardgames that sets multiples = "doubling" drops the base's [kinds]."""
    path = tmp_path / "t.toml"
    path.write_text('base = "farkle-cardgames"\nmultiples = "doubling"\n')
    rules = load_rules(str(path))
    assert rules.kinds == () and value(rules, counts_of("2222")) == 400


def test_straights_table_over_an_integer_base() -> None:
    """A [straights] table changes only the straights it names; what the integer says is kept."""
    rules = rules_from_dict({"straights": {"23456": 750}})
    assert rules.straights == Straights(low=1500, high=750)
    assert value(rules, counts_of("12345")) == 1500 and value(rules, counts_of("23456")) == 750


def test_off_keys_and_equivalent_tables_keep_the_ruleset() -> None:
    """Writing the family keys at their off values, or straights as an equal table, is the same ruleset and key."""
    standard, six = load_rules("standard"), load_rules("six-dice")
    off = {"three_pairs": 0, "two_triplets": False, "four_and_pair": 0, "four_and_pair_as_three_pairs": False,
           "kinds": False}
    same = rules_from_dict({"base": "standard", **off, "straights": {"12345": 1500, "23456": 1500}})
    assert same == standard and content_key(same) == content_key(standard)
    same6 = rules_from_dict({**SIX, **off, "straights": {"12345": 0, "123456": 1500}})
    assert same6 == six and content_key(same6) == content_key(six)
    assert len({content_key(r) for r in ALL.values()}) == len(ALL)


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_family_rulesets_round_trip_through_toml(name: str, tmp_path: Path) -> None:
    """`rules show` output of a ruleset with the new keys reads back to the same ruleset."""
    path = tmp_path / "r.toml"
    path.write_text(to_toml(ALL[name]))
    assert load_rules(str(path)) == ALL[name]


# -- the solver against the brute force of the tests, on tiny rulesets that use each new key -------------------

TINY_MIX = {**SIX, "goal": 300, "opening": 100, "multiples": "fixed", "kinds": {"4": 200, "5": 250, "6": 300},
            "five_ones": "multiples", "five_fives": "multiples", "three_pairs": 250,
            "four_and_pair_as_three_pairs": True, "two_triplets": 300,
            "straights": {"12345": 100, "23456": 150, "123456": 250, "from_six": True}}
TINY_FAMILY: dict[str, dict[str, Any]] = {
    "tiny-three-pairs": {**SIX, "goal": 300, "opening": 100, "three_pairs": 250,
                         "four_and_pair_as_three_pairs": True},
    "tiny-triplets-four-pair": {**SIX, "goal": 300, "opening": 100, "two_triplets": 250, "four_and_pair": 200,
                                "five_ones": "multiples", "straights": 0},
    "tiny-fixed-kinds": {**SIX, "goal": 300, "opening": 100, "multiples": "fixed",
                         "kinds": {"4": 250, "5": 250, "6": 250}, "five_ones": "multiples",
                         "five_fives": "multiples"},
    "tiny-straights-from-six": {**SIX, "goal": 300, "opening": 100,
                                "straights": {"12345": 100, "23456": 150, "123456": 250, "from_six": True}},
    "tiny-straights-five-dice": {**SIX, "goal": 300, "opening": 100,
                                 "straights": {"12345": 150, "23456": 200, "123456": 0}},
    "tiny-no-score-roll": {**SIX, "goal": 300, "opening": 100, "no_score_roll": 100},
    "tiny-five-dice-family": {"goal": 350, "opening": 100, "multiples": "fixed", "kinds": {"4": 250, "5": 300},
                              "five_ones": "multiples", "straights": {"12345": 150, "23456": 250}},
}


def check_against_brute_force(name: str, spec: dict[str, Any]) -> None:
    rules = rules_from_dict(spec, name)
    expected = brute_force_win(rules)
    result = compute(rules)
    assert result.residual <= 1e-9
    worst = max(abs(float(result.tables[0, a // 50, b // 50]) - v) for (a, b), v in expected.items())
    assert worst <= 1e-9, f"{name}: largest difference {worst:.2e}"


def test_solver_equals_brute_force_with_the_new_combinations() -> None:
    """Every turn-start value of a tiny ruleset with most new keys at once agrees with value iteration to 1e-9."""
    check_against_brute_force("tiny-mix", TINY_MIX)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TINY_FAMILY))
def test_solver_equals_brute_force_for_each_new_key(name: str) -> None:
    """The same agreement on one tiny ruleset per new key (five-dice straights by roll size included)."""
    check_against_brute_force(name, TINY_FAMILY[name])
