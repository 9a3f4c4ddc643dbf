"""The two-player solver against an independent brute force, and sanity checks that can fail."""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np
import pytest

from brute_force import brute_force_game, brute_force_win
from cinqmille.app.advice import advise
from cinqmille.dice import dice_tables, faces_of, legal_keeps, reachable
from cinqmille.table.position import Position
from cinqmille.rules import Rules, rules_from_dict
from cinqmille.rules import load_rules
from cinqmille.solver import compute, relaxations
from cinqmille.solver.two_player import bellman_residual
from cinqmille.solver.grid import ScoreGrid
from turn_table import turn_table

TINY = {
    "tiny-prediction": {"goal": 350, "opening": 150, "prediction": True},
    "tiny-sheet-like": {"base": "sheet", "goal": 300, "opening": 100, "crosses": False, "ties": "off",
                        "take_over": False, "last_round": False},
    "tiny-exact-house": {"base": "house", "goal": 300, "opening": 100, "min_bank": 100, "end": "exact",
                         "final_stretch": {"from": 200, "cap": True}},
}
TINY_SLOW = {
    "tiny": {"goal": 300, "opening": 150},
    "small-standard": {"goal": 400, "opening": 150},
    "small-prediction": {"goal": 400, "opening": 150, "prediction": True},
    "small-prediction-exact": {"goal": 400, "opening": 100, "end": "exact", "prediction": True},
    "small-exact": {"goal": 400, "opening": 100, "end": "exact"},
    "tiny-house": {"base": "house", "goal": 600, "opening": 200, "min_bank": 100,
                   "final_stretch": {"from": 400, "cap": True}},
    "tiny-rule-of-50": {"goal": 400, "opening": 0, "rule_of_50": True, "hot_dice": "mandatory"},
    "tiny-stretch-no-cap": {"goal": 500, "opening": 100, "min_bank": 100,
                            "final_stretch": {"from": 300, "cap": False}},
    "tiny-six-dice": {"base": "six-dice", "goal": 350, "opening": 150},
    "tiny-linear-full-house": {"goal": 400, "opening": 100, "multiples": "linear", "full_house": 350,
                               "five_fives": "multiples"},
}


def check_against_brute_force(name: str, spec: dict) -> None:
    rules = rules_from_dict(spec, name)
    expected = brute_force_win(rules)
    result = compute(rules)
    assert result.residual <= 1e-9
    worst = max(abs(float(result.tables[0, a // 50, b // 50]) - value) for (a, b), value in expected.items())
    assert worst <= 1e-9, f"{name}: largest difference {worst:.2e}"


@pytest.mark.parametrize("name", sorted(TINY))
def test_solver_equals_brute_force(name: str) -> None:
    """Every turn-start value agrees with plain value iteration over all states to 1e-9."""
    check_against_brute_force(name, TINY[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TINY_SLOW))
def test_solver_equals_brute_force_more_rules(name: str) -> None:
    """The same agreement under final stretch, rule of 50, mandatory hot dice, six dice, linear multiples."""
    check_against_brute_force(name, TINY_SLOW[name])


@pytest.mark.parametrize("spec", [{"goal": 2500, "opening": 500},
                                  {"base": "house", "goal": 2000, "final_stretch": {"from": 1500}}])
def test_bellman_residual_of_a_medium_ruleset(spec: dict) -> None:
    """Every turn, evaluated afresh from the solved table, reproduces its value to 1e-9."""
    rules = rules_from_dict(spec)
    result = compute(rules)
    assert bellman_residual(rules, result.values) <= 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("name", ["standard", "house", "sheet", "six-dice"])
def test_bellman_residual_of_presets(name: str) -> None:
    """The presets' solved tables satisfy the Bellman equations to 1e-9 at every pair."""
    rules = load_rules(name)
    result = compute(rules)
    assert result.residual <= 1e-9
    assert bellman_residual(rules, result.values) <= 1e-9


GAME = {
    "tiny-last-round-take-over-exact": {"goal": 300, "opening": 100, "last_round": True, "take_over": True,
                                        "end": "exact"},
}
GAME_SLOW = {
    "take-over-reach": {"goal": 500, "opening": 100, "take_over": True},
    "take-over-exact": {"goal": 350, "opening": 0, "take_over": True, "end": "exact"},
    "last-round-take-over-exact": {"goal": 400, "opening": 0, "last_round": True, "take_over": True, "end": "exact"},
    "last-round-reach": {"goal": 300, "opening": 100, "last_round": True, "five_ones": "multiples"},
}


def check_game_against_brute_force(name: str, spec: dict) -> None:
    rules = rules_from_dict(spec, name)
    expected = brute_force_game(rules, far=12000)
    result = compute(rules)
    assert result.exact and result.residual <= 1e-9
    worst = max(abs(result.tables[s, a // 50, b // 50] - value) for (s, a, b), value in expected.items())
    assert worst <= 1e-9, f"{name}: largest difference {worst:.2e}"


@pytest.mark.parametrize("name", sorted(GAME))
def test_last_round_and_take_over_equal_brute_force(name: str) -> None:
    """With a last round (two seats) and take-overs, every seat's turn-start value agrees to 1e-9."""
    check_game_against_brute_force(name, GAME[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(GAME_SLOW))
def test_last_round_and_take_over_equal_brute_force_more(name: str) -> None:
    """The same under reach (rolling on past the goal in a last round) and take-overs alone (minutes)."""
    check_game_against_brute_force(name, GAME_SLOW[name])


def test_take_over_changes_values_where_it_should() -> None:
    """Take-overs change the values of opened pairs, and the stored offers are never below a fresh start."""
    plain = compute(rules_from_dict({"goal": 1500, "opening": 300}))
    taken = compute(rules_from_dict({"goal": 1500, "opening": 300, "take_over": True}))
    assert np.nanmax(np.abs(plain.values - taken.values)) > 1e-3
    offers = taken.offers
    assert offers is not None
    grid = ScoreGrid.of(taken.rules)
    for a in grid.scores[1::7]:
        for b in grid.scores[::7]:
            assert (offers[0, a, b] >= taken.values[a, b] - 1e-15).all()
    assert np.allclose(offers[0, 0, 6], taken.values[0, 6])  # not opened: no take-over


@pytest.fixture(scope="module")
def small() -> tuple[Rules, object]:
    """A small ruleset with opening, minimum bank and a final stretch, solved once."""
    rules = rules_from_dict({"goal": 1500, "opening": 300, "min_bank": 100,
                             "final_stretch": {"from": 1200, "cap": True}}, "small")
    return rules, compute(rules)


def test_values_are_probabilities(small) -> None:
    """Every turn-start value lies in [0, 1] and is defined for every possible pair."""
    rules, result = small
    grid = ScoreGrid.of(rules)
    w = result.values[np.ix_(grid.scores, grid.scores)]
    assert not np.isnan(w).any()
    assert (w >= 0).all() and (w <= 1).all()


def test_bank_never_beats_the_solved_value(small) -> None:
    """In every turn state the value of banking (and of rolling) is at most the solved value."""
    rules, result = small
    grid = ScoreGrid.of(rules)
    for a in grid.scores[::3]:
        for b in grid.scores[::4]:
            table = turn_table(result, Position(int(a) * 50, int(b) * 50))
            assert (table.bank <= table.value + 1e-12).all()
            assert (table.roll <= table.value + 1e-12).all()
            assert np.allclose(np.maximum(table.bank, table.roll)[: table.cap], table.value[: table.cap], atol=1e-12)


def test_reaching_the_goal_is_worth_one() -> None:
    """Under `reach`, a position whose bank reaches the goal (and may be banked) is worth 1."""
    rules = rules_from_dict({"goal": 1000, "opening": 300, "min_bank": 150}, "reach")
    result = compute(rules)
    reach = reachable(rules, 1600 // 50)
    for me in (0, 300, 650, 900, 950):
        table = turn_table(result, Position(me, 300))
        for turn in range(max(1000 - me, 150, 300 if me == 0 else 0), 1600, 50):
            for dice in (m for m in range(1, rules.dice) if reach[turn // 50, m - 1]):
                assert advise(result, Position(me, 300, turn, dice)).win == pytest.approx(1.0, abs=1e-12)
                assert table.at(turn // 50, dice) == pytest.approx(1.0, abs=1e-12)


def turn_outcomes(result, me: int, opp: int) -> dict[str, float]:
    """Forward distribution of how the mover's turn ends (bank t / bust / win) under the solved policy."""
    rules = result.rules
    d = rules.dice
    tables = dice_tables(rules)
    table = turn_table(result, Position(me, opp))
    mass: dict[tuple[int, int], float] = {(0, d): 1.0}
    ends: dict[str, float] = {}
    for t in range(0, 400):
        for m in range(d, 0, -1):
            p = mass.pop((t, m), 0.0)
            if not p:
                continue
            row = table._row(t)
            if t and table.bank[row, m - 1] >= table.roll[row, m - 1]:
                ends[f"bank{t}"] = ends.get(f"bank{t}", 0.0) + p
                continue
            tab = tables[m]
            for r in range(len(tab.ways)):
                pr = p * tab.prob[r]
                ks = tab.keeps_of(r)
                if not len(ks):
                    ends["bust"] = ends.get("bust", 0.0) + pr
                    continue
                best, move = -1.0, None
                for k in ks:
                    if tab.keep_win[k]:
                        value, nxt = 1.0, "win"
                    else:
                        t2 = t + int(tab.keep_points[k]) // 50
                        m2 = int(tab.keep_left[k]) or d
                        value, nxt = table.at(t2, m2), (t2, m2)
                    if value > best:
                        best, move = value, nxt
                if move == "win":
                    ends["win"] = ends.get("win", 0.0) + pr
                else:
                    mass[move] = mass.get(move, 0.0) + pr
    assert sum(mass.values()) < 1e-12
    return ends


def test_two_seats_sum_to_one_at_the_start() -> None:
    """The first player's value plus the second's, through the first turn's outcomes, is 1 (the game ends)."""
    rules = rules_from_dict({"goal": 1000, "opening": 300}, "seats")
    result = compute(rules)
    first = result.first_player_win
    ends = turn_outcomes(result, 0, 0)
    second = ends.get("bust", 0.0) * float(result.tables[0, 0, 0])
    for key, p in ends.items():
        if key.startswith("bank"):
            banked = int(key[4:]) * 50
            second += p * (0.0 if banked >= rules.goal else float(result.tables[0, 0, banked // 50]))
    assert first + second == pytest.approx(1.0, abs=1e-9)
    assert abs(sum(ends.values()) - 1.0) < 1e-12


def test_turn_start_value_equals_its_outcome_mixture(small) -> None:
    """W(a, b) equals the mixture of bust, banks and instant wins that its policy produces."""
    rules, result = small
    for a, b in ((0, 0), (300, 900), (1250, 400), (1000, 1000)):
        ends = turn_outcomes(result, a, b)
        total = ends.get("win", 0.0) + ends.get("bust", 0.0) * (1 - float(result.tables[0, b // 50, a // 50]))
        for key, p in ends.items():
            if key.startswith("bank"):
                table = turn_table(result, Position(a, b))
                t = int(key[4:])
                total += p * float(table.bank[table._row(t), 0])
        assert total == pytest.approx(float(result.tables[0, a // 50, b // 50]), abs=1e-9)


def test_best_keep_is_the_best_option() -> None:
    """The keep options of a roll are ranked, and the best equals the best continuation value."""
    rules = rules_from_dict({"goal": 1000, "opening": 300}, "keeps")
    result = compute(rules)
    position = Position(300, 500, 100)  # 100 points set aside: four dice in hand (`advise` checks the roll's)
    options = advise(result, Position(300, 500), roll="11535").options
    assert [o.win for o in options] == sorted((o.win for o in options), reverse=True)
    kept = {o.keep for o in options}
    assert kept == {faces_of(k.dice) for k in legal_keeps(rules, (2, 0, 1, 0, 2, 0))}
    assert advise(result, position, roll="2346").options == ()


def test_prediction_is_worth_something_and_solved() -> None:
    """Announcing the last two dice changes the values, and the result is exact (no relaxation left)."""
    plain = compute(rules_from_dict({"goal": 1500, "opening": 300}))
    result = compute(rules_from_dict({"goal": 1500, "opening": 300, "prediction": True}))
    assert result.exact and np.nanmax(np.abs(result.values - plain.values)) > 1e-4
    assert bellman_residual(result.rules, result.values) <= 1e-9
    table = turn_table(result, Position(600, 900))
    assert table.predict is not None and table.choices == (50, 100, 150, 200)
    row = table._row(6)
    assert table.roll[row, 1] == pytest.approx(max(table.plain_roll[row, 1], table.predict[row].max()))


def test_relaxations_are_listed() -> None:
    """History rules and the rules outside the state are reported, never silently dropped."""
    assert relaxations(rules_from_dict({})) == ()
    sheet = rules_from_dict({"base": "sheet"})
    listed = " ".join(relaxations(sheet))
    for rule in ("crosses", "deadly"):
        assert rule in listed
    assert "last_round" not in listed and "take_over" not in listed  # solved exactly
    assert relaxations(rules_from_dict({"last_round": True, "take_over": True})) == ()


def brute_expected(rules: Rules, opened: bool) -> float:
    """Best expected points of one turn by plain recursion (banks forced past 6000 points)."""
    d = rules.dice
    least = max(rules.min_bank if opened else rules.opening, 50)
    outcomes = {}
    for n in range(1, d + 1):
        rows = []
        for combo in itertools.combinations_with_replacement(range(1, 7), n):
            counts = tuple(combo.count(f) for f in range(1, 7))
            rows.append((counts, [(k.points, (n - k.size) or d, k.win) for k in legal_keeps(rules, counts)]))
        outcomes[n] = rows
    probs = {n: {c: p for c, p in zip(map(tuple, dice_tables(rules)[n].counts), dice_tables(rules)[n].prob)}
             for n in outcomes}

    @lru_cache(maxsize=None)
    def value(t: int, m: int) -> float:
        if t >= 6000:
            return float(t)
        roll = 0.0
        for counts, keeps in outcomes[m]:
            p = probs[m][counts]
            if keeps:
                roll += p * max(t + rules.goal if w else value(t + pts, nxt) for pts, nxt, w in keeps)
        bank = t if t >= least and (m < d or rules.can_bank_after_full_hand) else -1.0
        return max(bank, roll)

    return value(0, d)


def test_expected_objective_equals_plain_recursion() -> None:
    """The expected points of one turn, opened and not, equal a plain recursion to 1e-6."""
    rules = rules_from_dict({"opening": 500, "min_bank": 200}, "exp")
    result = compute(rules, "expected")
    assert result.values[1, 0, 4] == pytest.approx(brute_expected(rules, True), abs=1e-6)
    assert result.values[0, 0, 4] == pytest.approx(brute_expected(rules, False), abs=1e-6)


def test_race_is_consistent() -> None:
    """The race needs at least one turn, fewer from higher scores, and more with a higher opening."""
    low = compute(rules_from_dict({"goal": 2000, "opening": 300}), "race")
    high = compute(rules_from_dict({"goal": 2000, "opening": 1000}), "race")
    grid = ScoreGrid.of(low.rules)
    turns = low.values[grid.scores[1:]]
    assert (turns >= 1.0).all()
    assert (np.diff(turns) <= 1e-12).all()
    assert high.values[0] > low.values[0]
    assert low.residual <= 1e-9
