"""The N-player brute force (tests/brute_force_n.py): agreement with the two-player solver, and three-player checks.

First-player chances at (0, 0, 0) with three players, to be compared with a
future three-player solver (mover first, then the next two players), are in
`RECORDED`; `test_recorded_first_player_chances` recomputes them.
"""

from __future__ import annotations

import random
from functools import lru_cache

import pytest

from brute_force import roll_outcomes
from brute_force_n import brute_force_n, brute_force_n_states, first_player_chances
from cinqmille.dice import legal_keeps
from cinqmille.rules import Rules, rules_from_dict
from cinqmille.solver import compute

TWO = {
    "open-250-reach-400": {"goal": 400, "opening": 250},
    "min-bank-400": {"goal": 400, "opening": 100, "min_bank": 100},
    "exact-350-open-200": {"goal": 350, "opening": 200, "end": "exact"},
}
TWO_SLOW = {
    "open-150-reach-400": {"goal": 400, "opening": 150},
    "exact-400-open-100": {"goal": 400, "opening": 100, "end": "exact"},
    "rule-of-50": {"goal": 400, "opening": 0, "rule_of_50": True, "hot_dice": "mandatory"},
    "stretch-no-cap": {"goal": 500, "opening": 100, "min_bank": 100, "final_stretch": {"from": 300, "cap": False}},
    "exact-house": {"base": "house", "goal": 300, "opening": 100, "min_bank": 100, "end": "exact",
                    "final_stretch": {"from": 200, "cap": True}},
    "six-dice": {"base": "six-dice", "goal": 350, "opening": 150},
    "exact-400-open-250-mandatory": {"goal": 400, "opening": 250, "min_bank": 50, "end": "exact",
                                     "hot_dice": "mandatory"},
}

THREE = {
    "reach-300": {"goal": 300, "opening": 0},
    "reach-350-min-bank": {"goal": 350, "opening": 100, "min_bank": 100},
    "exact-300-open-100": {"goal": 300, "opening": 100, "end": "exact"},
    "exact-350-open-200": {"goal": 350, "opening": 200, "end": "exact"},
    "exact-400-open-200": {"goal": 400, "opening": 200, "end": "exact"},
    "exact-400-open-250-mandatory": {"goal": 400, "opening": 250, "min_bank": 50, "end": "exact",
                                     "hot_dice": "mandatory"},
    "rule-of-50-300": {"goal": 300, "opening": 0, "rule_of_50": True, "hot_dice": "mandatory"},
    "dummy-250": {"goal": 250, "opening": 0, "min_bank": 100, "end": "exact", "five_ones": "multiples"},
}

#: Three players, the chances (first, second, third player) at (0, 0, 0), from brute_force_n with tol 1e-13.
RECORDED = {
    "reach-300": (0.64595346127082, 0.2540948036434887, 0.09995173508569147),
    "reach-350-min-bank": (0.5657378048717245, 0.2878266004165027, 0.14643559471177298),
    "exact-300-open-100": (0.5241797623075796, 0.30191937843150535, 0.17390085926091498),
    "exact-350-open-200": (0.4464721139241056, 0.32128510075783767, 0.23224278531805737),
    "exact-400-open-200": (0.4544818838261204, 0.31658178312840407, 0.22893633304547603),
    "exact-400-open-250-mandatory": (0.46604424901355973, 0.310851351343738, 0.2231043996427025),
    "rule-of-50-300": (0.6188314364754526, 0.2664463975484669, 0.1147221659760806),
    "dummy-250": (0.5693632861742123, 0.2864859088990924, 0.1441508049266957),
}


@lru_cache(maxsize=None)
def rules_of(name: str) -> Rules:
    return rules_from_dict({**TWO, **TWO_SLOW, **THREE}[name], name)


@lru_cache(maxsize=None)
def table(name: str, players: int):
    """Every state's value vector (cached: several tests read the same run)."""
    return brute_force_n_states(rules_of(name), players)


def starts(name: str, players: int) -> dict:
    d = rules_of(name).dice
    return {s: turn[(0, d)] for s, turn in table(name, players).items()}


def check_two_players(name: str) -> None:
    rules = rules_of(name)
    values = starts(name, 2)
    tables = compute(rules).tables
    worst = max(abs(float(tables[0, a // 50, b // 50]) - v[0]) for (a, b), v in values.items())
    assert worst <= 1e-10, f"{name}: largest difference {worst:.2e}"
    assert max(abs(v[0] + v[1] - 1.0) for v in values.values()) <= 1e-12


@pytest.mark.parametrize("name", sorted(TWO))
def test_two_players_agree_with_the_solver(name: str) -> None:
    """With two players every turn-start chance equals the solver's to 1e-10, and the second is 1 minus the first."""
    check_two_players(name)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TWO_SLOW))
def test_two_players_agree_with_the_solver_more_rules(name: str) -> None:
    """The same under rule of 50, final stretch, house keeps, six dice and mandatory hot dice."""
    check_two_players(name)


def one_turn_chance(rules: Rules, a: int) -> float:
    """Best chance for a player with banked `a` to win within this turn, whatever follows (a bank short counts 0)."""
    assert rules.can_bank_after_full_hand and rules.final_stretch is None and not rules.rule_of_50
    goal, d, exact = rules.goal, rules.dice, rules.end == "exact"
    least = rules.opening if (a == 0 and rules.opening > 0) else max(rules.min_bank, 50)
    cap = max(goal - a, least)
    rows = {m: roll_outcomes(rules, m) for m in range(1, d + 1)}

    @lru_cache(maxsize=None)
    def chance(t: int, m: int) -> float:
        if t >= least and (a + t == goal if exact else a + t >= goal):
            return 1.0
        total = 0.0
        for prob, keeps in rows[m]:
            best = 0.0
            for points, nxt, win in keeps:
                if win:
                    best = 1.0
                elif not (exact and a + t + points > goal):
                    best = max(best, chance(min(t + points, cap), nxt))
            total += prob * best
        return total

    return chance(0, d)


@pytest.mark.parametrize("players", [2, 3])
def test_vectors_are_chances_and_the_mover_wins_at_least_his_one_turn_chance(players: int) -> None:
    """Every state's components lie in [0, 1] and sum to 1, and the mover's chance is at least his one-turn chance."""
    name = "exact-350-open-200"
    rules = rules_of(name)
    states = table(name, players)
    assert len(states) == 4 ** players
    for s, turn in states.items():
        for vec in turn.values():
            assert len(vec) == players
            assert all(-1e-15 <= x <= 1 + 1e-12 for x in vec), (s, vec)
            assert abs(sum(vec) - 1.0) <= 1e-12, (s, vec)
    once = {a: one_turn_chance(rules, a) for a in (0, 200, 250, 300)}
    assert once[300] >= 1 - (5 / 6) ** 5 - 1e-12  # at least: keep a 5 of a roll that shows one, and bank
    for s, vec in starts(name, players).items():
        assert vec[0] >= once[s[0]] - 1e-12, (s, vec, once[s[0]])


def test_three_players_with_a_stuck_player_are_the_two_player_game() -> None:
    """A player who can never win (exact, 50 short, min_bank 100, five 1s not a win) only passes: the other two play the solver's two-player game."""
    rules = rules_of("dummy-250")
    stuck = 200
    values = starts("dummy-250", 3)
    w = compute(rules).tables[0]
    checked, worst = 0, 0.0
    for (a, b, c), vec in values.items():
        if c == stuck and (a, b) != (stuck, stuck):
            p = float(w[a // 50, b // 50])
            expected = (p, 1 - p, 0.0)
        elif b == stuck and (a, c) != (stuck, stuck):
            p = float(w[a // 50, c // 50])
            expected = (p, 0.0, 1 - p)
        elif a == stuck and (b, c) != (stuck, stuck):
            p = float(w[b // 50, c // 50])
            expected = (0.0, p, 1 - p)
        else:
            continue
        checked += 1
        worst = max(worst, max(abs(x - y) for x, y in zip(vec, expected)))
    assert checked == 5**3 - 4**3 - 1
    assert worst <= 1e-10, f"largest difference {worst:.2e}"
    assert values[(stuck, stuck, stuck)] == pytest.approx((1 / 3,) * 3, abs=1e-15)


def play_once(rules: Rules, states: dict, start: tuple[int, ...], rng: random.Random) -> int:
    """Play one game from `start` with the brute force's choices and real dice; the winner's seat (0: the mover)."""
    goal, d, players = rules.goal, rules.dice, len(start)
    assert rules.end == "exact" and rules.final_stretch is None and not rules.rule_of_50
    s, seat = start, 0
    while True:
        a = s[0]
        here = states[s]
        t, m, new = 0, d, a
        while True:
            if t > 0 and rules.banking.allowed(a, t) and (m < d or rules.can_bank_after_full_hand):
                if a + t == goal:
                    return seat
                w = states[s[1:] + (a + t,)][(0, d)]
                if w[-1] >= here[(t, m)][0] - 1e-12:  # the bank gives the mover the next turn's last component
                    new = a + t
                    break
            faces = [rng.randint(1, 6) for _ in range(m)]
            keeps = legal_keeps(rules, tuple(faces.count(f) for f in range(1, 7)))
            if not keeps:
                break
            bust_value = states[s[1:] + (a,)][(0, d)][-1]  # the mover is last in the next turn's order
            options = []
            for k in keeps:
                nxt = (m - k.size) or d
                if k.win:
                    value = 1.0
                elif a + t + k.points > goal:
                    value = bust_value  # an overshoot
                else:
                    value = here[(t + k.points, nxt)][0]
                options.append((value, k.points, nxt, k))
            best = max(o[0] for o in options)
            value, points, nxt, keep = max((o for o in options if o[0] >= best - 1e-12), key=lambda o: (o[1], o[2]))
            if keep.win:
                return seat
            if a + t + points > goal:
                break
            t, m = t + points, nxt
        s, seat = s[1:] + (new,), (seat + 1) % players


@pytest.mark.slow
def test_three_player_chances_match_played_games() -> None:
    """Games played with real dice and the brute force's own choices are won by each seat as often as its vector says."""
    name = "exact-400-open-250-mandatory"
    rules = rules_of(name)
    states = table(name, 3)
    rng = random.Random(5000)
    games = 20000
    for start in [(0, 0, 0), (350, 0, 250), (250, 350, 300)]:
        expected = states[start][(0, rules.dice)]
        wins = [0, 0, 0]
        for _ in range(games):
            wins[play_once(rules, states, start, rng)] += 1
        for seat in range(3):
            p = expected[seat]
            sigma = (p * (1 - p) / games) ** 0.5
            assert abs(wins[seat] / games - p) <= 4.5 * sigma, (start, seat, wins, expected)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RECORDED))
def test_recorded_first_player_chances(name: str) -> None:
    """The three-player chances at (0, 0, 0) are the recorded ones to 1e-12, each seat's in order."""
    found = first_player_chances(rules_of(name), 3)
    assert max(abs(x - y) for x, y in zip(found, RECORDED[name])) <= 1e-12, (name, found)


@pytest.mark.parametrize("spec, word", [
    ({"goal": 300, "opening": 0, "last_round": True}, "last_round"),
    ({"goal": 300, "opening": 0, "take_over": True}, "take_over"),
    ({"goal": 300, "opening": 0, "prediction": True}, "prediction"),
    ({"goal": 300, "opening": 0, "crosses": True}, "crosses"),
    ({"goal": 300, "opening": 0, "zero_turns": {"count": 3, "to": "zero"}}, "zero_turns"),
])
def test_refuses_rules_it_does_not_model(spec: dict, word: str) -> None:
    """Rules outside the model raise ValueError naming the rule."""
    with pytest.raises(ValueError, match=word):
        brute_force_n(rules_from_dict(spec), 3)


def test_refuses_one_player_and_reports_no_convergence() -> None:
    """One player is refused, and stopping before convergence raises RuntimeError rather than returning."""
    rules = rules_from_dict({"goal": 250, "opening": 200, "end": "exact"})
    with pytest.raises(ValueError, match="players"):
        brute_force_n(rules, 1)
    with pytest.raises(RuntimeError, match="no convergence"):
        brute_force_n(rules, 3, max_sweeps=2)


#: Five players: tiny rulesets that the brute force sweeps in seconds (default run) or minutes (slow).
FIVE = {"reach-150": {"goal": 150, "opening": 0}}
FIVE_SLOW = {
    "reach-200": {"goal": 200, "opening": 0},
    "exact-250-open-100": {"goal": 250, "opening": 100, "end": "exact"},
    "dummy-250": {"goal": 250, "opening": 0, "min_bank": 100, "end": "exact", "five_ones": "multiples"},
}


@pytest.mark.parametrize("name", [*FIVE, *(pytest.param(n, marks=pytest.mark.slow) for n in FIVE_SLOW)])
def test_five_players_agree_with_the_brute_force(name: str) -> None:
    """Every turn start of a five-player game: each seat's chance from the solver equals the brute force's."""
    rules = rules_from_dict({**FIVE, **FIVE_SLOW}[name], name)
    result = compute(rules, players=5)
    table = brute_force_n(rules, 5)
    assert result.exact and len(table) == len(result.grid.scores) ** 5
    worst = 0.0
    for scores, chances in table.items():
        first = [float(x) for x in result.seat_values([x // 50 for x in scores])]
        worst = max(worst, max(abs(a - b) for a, b in zip([*first, 1 - sum(first)], chances)))
    assert worst < 1e-11
