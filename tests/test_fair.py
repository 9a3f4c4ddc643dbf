"""Starting scores (`start`) and fair head starts (`cinqmille fair`), issue 23."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from brute_force import brute_force_win
from cinqmille.cli import main
from cinqmille.engine.referee import Game
from cinqmille.engine.sheet import SheetRefusal, play_sheet
from cinqmille.errors import CinqmilleError
from cinqmille.fair import fair_start, head_starts
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.rules import content_key, load_rules, rules_from_dict, to_toml
from cinqmille.rules.loading import RulesError, rules_from_text
from cinqmille.solver.api import compute, solve

TOL = 1e-9  # chances of two solves of the same game, or of the solver and the brute force
TINY = {"name": "fair-tiny", "goal": 300, "opening": 150}
SMALL = {"name": "fair-small", "goal": 1000, "opening": 150}


def test_start_is_read_validated_and_printed() -> None:
    """`start` pads with 0, prints back to the same ruleset, and leaves the content key (the tables') unchanged."""
    rules = rules_from_dict({**SMALL, "start": [0, 200]})
    assert rules.starts(3) == (0, 200, 0)
    again = rules_from_text(to_toml(rules))
    assert again.start == (0, 200)
    assert content_key(again) == content_key(rules_from_dict(SMALL))
    with pytest.raises(CinqmilleError, match="for 3 seats, not 2"):
        rules_from_dict({**SMALL, "start": [0, 100, 200]}).starts(2)


@pytest.mark.parametrize("data, says", [
    ({"start": 200}, "a list"),
    ({"start": [0, 1000]}, "below the goal"),
    ({"start": [0, 75]}, "multiple of 50"),
    ({"start": [-50]}, "non-negative"),
    ({"start": [0, 150], "rule_of_50": True}, "ending in 50"),
    ({"start": [0, 950], "final_stretch": {"from": 800}}, "capped final stretch"),
    ({"start": [0, 100], "zero_turns": {"to": -500}}, "cannot be told apart"),
])
def test_bad_starts_are_refused(data: dict, says: str) -> None:
    """Each bad starting score is refused in one line naming the key."""
    with pytest.raises(RulesError, match=says) as info:
        rules_from_dict({**SMALL, **data})
    assert "start" in str(info.value) and "\n" not in str(info.value)


def test_a_start_below_the_opening_is_not_opened_on_the_sheet() -> None:
    """The sheet (the referee) refuses a first bank below the opening from a start of 100, and adds the start to it."""
    rules = rules_from_dict({**SMALL, "start": [0, 100, 200]})
    with pytest.raises(SheetRefusal, match="has not opened"):
        play_sheet(rules, ("A", "B", "C"), [{"kind": "bust"}, {"kind": "bank", "points": 100}])
    state = play_sheet(rules, ("A", "B", "C"), [{"kind": "bust"}, {"kind": "bank", "points": 150},
                                                {"kind": "bank", "points": 50}])
    assert state.scores == (0, 250, 250)  # 200 is opened already: a bank of 50 counts


def test_chances_at_a_start_below_the_opening_match_the_brute_force() -> None:
    """The solver's chances from starts below the opening equal an independent brute force with those scores."""
    rules = rules_from_dict(TINY)
    brute = brute_force_win(rules, pending=(50, 100))
    for start in ((0, 50), (0, 100), (100, 50), (100, 200), (250, 100)):
        found = solve(replace(rules, start=start)).win
        assert found[0] == pytest.approx(brute[start], abs=TOL)
        assert sum(found) == pytest.approx(1.0, abs=1e-12)


def test_chances_at_an_opened_start_are_the_table() -> None:
    """From a start at or above the opening the chances are the table's turn-start value (`SolveResult.tables`)."""
    result = solve(rules_from_dict(SMALL))
    started = solve(rules_from_dict({**SMALL, "start": [0, 350]}))
    assert started.first_player_win == pytest.approx(float(result.tables[0, 0, 7]), abs=1e-15)
    assert started.win[1] == pytest.approx(1 - float(result.tables[0, 0, 7]), abs=1e-12)


def test_fair_head_start_two_players_is_the_best_of_its_neighbours() -> None:
    """The fair head start's chance is the solve's at that start, and no other head start is closer to 1/2."""
    rules = rules_from_dict(SMALL)
    fair = fair_start(rules)
    assert fair.start[0] == 0 and fair.players == 2
    assert fair.win_before == pytest.approx(solve(rules).win, abs=1e-15)
    assert fair.win_after == pytest.approx(solve(replace(rules, start=fair.start)).win, abs=TOL)
    for other in head_starts(rules):  # each start's extension solved on its own (the search solved them together)
        chance = compute(replace(rules, start=(0, other))).first_player_win
        assert abs(chance - 0.5) >= abs(fair.win_after[0] - 0.5) - TOL
    assert abs(fair.win_after[0] - 0.5) < abs(fair.win_before[0] - 0.5)


def test_fair_three_players_minimises_the_largest_deviation() -> None:
    """Three players: no pair of head starts leaves every seat nearer to 1/3 than the one reported."""
    rules = rules_from_dict({"name": "fair-three", "goal": 300, "opening": 100})
    fair = fair_start(rules, players=3)
    result = solve(rules, players=3)
    assert fair.win_before == pytest.approx(result.win, abs=1e-15)
    best = max(abs(p - 1 / 3) for p in fair.win_after)
    for b in head_starts(rules):
        for c in head_starts(rules):
            found = solve(replace(rules, start=(0, b, c)), players=3).win
            assert max(abs(p - 1 / 3) for p in found) >= best - TOL
    assert best < max(abs(p - 1 / 3) for p in fair.win_before)


def test_engine_games_from_the_fair_start_agree_with_the_solver() -> None:
    """Optimal engine games from the fair start (no opening: the start is opened) win as often as the solver says,
    within four standard errors."""
    rules = rules_from_dict({"name": "fair-open", "goal": 500, "opening": 0})
    fair = fair_start(rules)
    started = replace(rules, start=fair.start)
    policy = OptimalPolicy(started)
    rng = np.random.default_rng(23)
    games = 4000
    wins = sum(Game(started, [policy, policy], rng=rng).play().winner == 0 for _ in range(games))
    p = fair.win_after[0]
    assert abs(wins / games - p) < 4 * np.sqrt(p * (1 - p) / games)


def test_fair_command_json_and_text(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`fair --json` gives the start, the chances before and after and at every head start tried; the text says them
    in sentences."""
    path = tmp_path / "small.toml"
    path.write_text('goal = 1000\nopening = 150\n')
    runner = CliRunner()
    out = runner.invoke(main, ["fair", "--rules", str(path), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["rules"] == "small" and data["players"] == 2 and len(data["start"]) == 2
    fair = fair_start(load_rules(str(path)))
    assert data["start"] == list(fair.start)
    assert data["win_after"] == pytest.approx(list(fair.win_after), abs=1e-15)
    assert data["win_before"] == pytest.approx(list(fair.win_before), abs=1e-15)
    tried = {tuple(t["start"]): t["win"] for t in data["tried"]}  # the chance at every head start compared
    assert len(tried) == data["candidates"] and tried[tuple(fair.start)] == pytest.approx(data["win_after"], abs=1e-15)
    rules = load_rules(str(path))
    for start in ((0, 0), (0, 150), (0, 500)):
        assert tried[start] == pytest.approx(solve(replace(rules, start=start)).win, abs=TOL)
    text = runner.invoke(main, ["fair", "--rules", str(path)])
    assert text.exit_code == 0 and f"{fair.start[1]} points" in text.output


@pytest.mark.parametrize("args", [["--players", "9"], ["--rules", "no-such-preset"], ["--players", "x"]])
def test_fair_command_bad_input_is_one_line(args: list[str]) -> None:
    """Bad input: one `Error:` line and exit status 2."""
    out = CliRunner().invoke(main, ["fair", *args])
    assert out.exit_code == 2
    assert out.output.startswith("Error:") and out.output.count("\n") == 1
