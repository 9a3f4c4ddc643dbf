"""`zero_turns` solved exactly: the scoreless-turn counters in the state, falls handled by sweeps."""

from __future__ import annotations

import numpy as np
import pytest
from brute_force import brute_force_counters

from cinqmille.rules import rules_from_dict
from cinqmille.solver import compute, relaxations
from cinqmille.solver.two_player import bellman_residual
from cinqmille.table.locate import locate_rows

UNIT = 50

SMALL = {
    "to-zero": {"goal": 300, "opening": 100, "zero_turns": {"count": 2, "to": "zero"}},
}
SLOW = {
    "by-points-below-opening": {"goal": 400, "opening": 150, "zero_turns": {"count": 2, "to": -100}},
    "every-bust": {"goal": 300, "opening": 0, "zero_turns": {"count": 1, "to": "zero"}},
    "exact-end": {"goal": 400, "opening": 100, "end": "exact", "zero_turns": {"count": 2, "to": -150}},
    "three-busts": {"goal": 350, "opening": 150, "zero_turns": {"count": 3, "to": "zero"}},
}


def check(name: str, spec: dict) -> None:
    rules = rules_from_dict(spec, name)
    result = compute(rules)
    assert result.exact and not result.assumptions
    c = rules.zero_turns.count
    values = result.values if c > 1 else result.values[None]  # one bust falls at once: no counter to hold
    assert values.shape[0] == c * c
    expected = brute_force_counters(rules)
    worst = max(abs(values[za * c + zb, a // UNIT, b // UNIT] - value)
                for (a, b, za, zb), value in expected.items())
    assert worst <= 1e-9, f"{name}: largest difference {worst:.2e}"
    assert bellman_residual(rules, result.values) <= 1e-9


@pytest.mark.parametrize("name", sorted(SMALL))
def test_counters_equal_brute_force(name: str) -> None:
    """Every turn start, at every pair of counters, agrees with plain value iteration to 1e-9."""
    check(name, SMALL[name])


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SLOW))
def test_counters_equal_brute_force_slow(name: str) -> None:
    """The same agreement with falls by points, an exact end, and one or three busts in a row."""
    check(name, SLOW[name])


def test_a_third_bust_is_worse_than_a_first() -> None:
    """With two scoreless turns behind him, a player is worse off than with none (a fall is near)."""
    rules = rules_from_dict({"goal": 1000, "opening": 0, "zero_turns": {"count": 3, "to": "zero"}}, "z")
    w = compute(rules).values
    a, b = 600 // UNIT, 300 // UNIT
    assert w[2 * 3 + 0, a, b] < w[1 * 3 + 0, a, b] < w[0, a, b]
    assert w[0, a, b] < w[0 * 3 + 2, a, b]  # and better off when the opponent is the one about to fall


def test_falls_by_points_reach_scores_below_the_opening() -> None:
    """A fall by points can leave an opened player under the opening: those scores are in the table."""
    rules = rules_from_dict({"goal": 1000, "opening": 500, "zero_turns": {"count": 2, "to": -400}}, "z")
    w = compute(rules).values
    assert np.isfinite(w[0, 200 // UNIT, 0])


@pytest.mark.parametrize("extra", [{"last_round": True}, {"take_over": True},
                                   {"final_stretch": {"from": 700, "cap": True}}])
def test_counters_with_other_state_rules_stay_relaxed(extra: dict) -> None:
    """With a last round, take-over or final stretch the counters are relaxed, and the solve says so."""
    rules = rules_from_dict({"goal": 1000, "opening": 300, "zero_turns": {"count": 3, "to": "zero"}, **extra}, "z")
    assert any(note.startswith("zero_turns") for note in relaxations(rules))


def test_advise_reads_the_counters(tmp_path) -> None:
    """`advise --scoreless` reads the table of those counters: one bust from a fall, rolling is worth less."""
    import json

    from click.testing import CliRunner

    from cinqmille.cli import main

    path = tmp_path / "z.toml"
    path.write_text('name = "z"\ngoal = 1000\nopening = 0\n[zero_turns]\ncount = 3\nto = "zero"\n')
    runner = CliRunner()
    rolls = []
    for counters in ("0", "2"):
        out = runner.invoke(main, ["advise", "--rules", str(path), "--me", "600", "--opp", "300", "--turn", "200",
                                   "--dice", "2", "--scoreless", counters, "--json"])
        assert out.exit_code == 0, out.output
        options = {o["action"]: o["win"] for o in json.loads(out.output)["options"]}
        rolls.append(options["roll"])
    assert rolls[1] < rolls[0]
    bad = runner.invoke(main, ["advise", "--me", "1000", "--scoreless", "1"])
    assert bad.exit_code == 2 and "zero_turns" in bad.output
    bad = runner.invoke(main, ["advise", "--rules", str(path), "--scoreless", "3"])
    assert bad.exit_code == 2 and "at most 2" in bad.output


def test_the_engine_plays_the_counters() -> None:
    """The engine's optimal player reads the row of the counters on the sheet, as `advise --scoreless` does."""
    from cinqmille.engine.state import GameView, new_player
    from cinqmille.policies.optimal import OptimalPolicy, view_position

    rules = rules_from_dict({"goal": 1000, "opening": 0, "zero_turns": {"count": 3, "to": "zero"}}, "z")
    policy = OptimalPolicy(rules)
    players = (new_player(rules, [600], zero_turns=2), new_player(rules, [300], zero_turns=1))
    view = GameView(rules, 0, players, 0, rules.dice, None, False, False, False, False, None, 0)
    assert view_position(view).scoreless == (2, 1)
    assert policy.spot(view) == (policy.table, locate_rows(policy.table, 12, 6, kinds=2 * 3 + 1))
    view = GameView(rules, 1, players, 0, rules.dice, None, False, False, False, False, None, 0)
    assert view_position(view).scoreless == (1, 2)
    assert policy.spot(view) == (policy.table, locate_rows(policy.table, 6, 12, kinds=1 * 3 + 2))


@pytest.mark.slow
def test_optimal_against_optimal_agrees_with_the_solve() -> None:
    """20,000 referee games of optimal against optimal: the first seat's rate is within 3 SE of the solve."""
    from cinqmille.simulation.runner import SimConfig, simulate

    rules = rules_from_dict({"goal": 1000, "opening": 300, "zero_turns": {"count": 2, "to": -200}}, "z")
    solved = compute(rules).first_player_win
    out = simulate(SimConfig(rules, ("optimal", "optimal"), games=20_000, seed=3, jobs=2))
    assert out.engine == "referee"  # the vectorised engine does not apply zero_turns
    rate = out.wins[0] / out.games
    se = (solved * (1 - solved) / out.games) ** 0.5
    assert abs(rate - solved) <= 3 * se, (rate, solved, se)
