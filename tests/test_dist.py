"""`cinqmille dist`: the exact distribution of a turn's points, the turns of a race and of a game."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.table.policy import policy_of
from cinqmille.app.advice import advise
from cinqmille.cli import main
from cinqmille.engine import Banked, Game, new_player
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.table.position import Position, PositionError
from cinqmille.research.distribution import expected_points, game_length, race_length, turn_points
from cinqmille.rules import rules_from_dict
from cinqmille.solver import solve

from small_rulesets import TURN_RULESETS

pytestmark = pytest.mark.usefixtures("session_cache")

RULESETS = TURN_RULESETS
#: The mean of a distribution and advise's expected agree to this (points).
MEAN_TOL = 1e-9


def _rules(name: str):  # type: ignore[no-untyped-def]
    return rules_from_dict(RULESETS[name], name)


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_mean_is_advise_expected(name: str) -> None:
    """At several positions (turn starts and bank-or-roll states) the distribution's mean is advise's expected
    figure for the advised move, to 1e-9 points, and its chances sum to 1."""
    rules = _rules(name)
    result = solve(rules, "win")
    scores = [int(s) * 50 for s in result.grid.scores]
    checked = 0
    for me, opp in [(scores[0], scores[0]), (scores[len(scores) // 2], scores[-1]), (scores[-1], scores[1])]:
        for turn, dice in [(0, None), (100, 3), (200, 2), (300, 5)]:
            pos = Position(me, opp, turn, dice)
            try:
                want = advise(result, pos).best.expected
            except PositionError:  # a position that cannot occur under this ruleset
                continue
            got = turn_points(result, pos)
            assert got.mean == pytest.approx(want, abs=MEAN_TOL), (me, opp, turn, dice)
            total = sum(got.points.values()) + got.win + got.truncated
            assert total == pytest.approx(1.0, abs=1e-12)
            checked += 1
    assert checked >= 4


def test_bust_and_support_of_a_small_turn() -> None:
    """From one die and 300 points under the tiny rules (which the policy rolls or banks), the chances are exact:
    a bank takes everything at 300; a roll busts with 4/6 exactly."""
    rules = _rules("tiny")
    result = solve(rules, "win")
    got = turn_points(result, Position(150, 300, 300, 1))
    if 300 in got.points and got.points[300] == pytest.approx(1.0):
        assert got.bust == 0.0
    else:
        assert got.bust == pytest.approx(4 / 6, abs=1e-12)


def test_engine_turns_agree_with_the_distribution() -> None:
    """Turns played by the engine with seeded dice and the `optimal` policy bank each amount as often as the
    distribution says: every outcome of chance 2 % or more within 4 standard errors, and the bust chance too."""
    rules = _rules("tiny")
    result = solve(rules, "win")
    want = turn_points(result, Position(200, 300))
    policy = OptimalPolicy(rules, policy_of(result))
    players = (new_player(rules, [200]), new_player(rules, [300]))
    rng = np.random.default_rng(23)
    n = 6000
    seen: dict[int, int] = {}
    for _ in range(n):
        game = Game(rules, [policy, policy], rng=rng, initial=players)
        game.play_turn()
        points = 0
        for event in game.events:
            if isinstance(event, Banked) and event.outcome == "scored":
                points = event.score_after - event.score_before
        seen[points] = seen.get(points, 0) + 1
    for x, p in want.points.items():
        if p < 0.02:
            continue
        se = np.sqrt(p * (1 - p) / n)
        assert abs(seen.get(x, 0) / n - p) < 4 * se, (x, seen.get(x, 0) / n, p)


@pytest.mark.parametrize("name", ["tiny", "exact"])
def test_expected_objective_mean_is_the_solved_e(name: str) -> None:
    """Under the `expected` policy the mean is E of `solve --objective expected` (opened and not), to 1e-9."""
    rules = _rules(name)
    e = solve(rules, "expected").values
    for me, turn, dice, opened in [(0, 0, None, 0), (200, 0, None, 1), (200, 150, 2, 1)]:
        got = expected_points(rules, Position(me, 0, turn, dice))
        assert got.mean == pytest.approx(e[opened, turn // 50, (dice or rules.dice) - 1], abs=MEAN_TOL)


@pytest.mark.parametrize("name", ["tiny", "exact"])
def test_race_mean_is_solve_race(name: str) -> None:
    """The turns alone to the goal have the mean of `solve --objective race` to 1e-9, and their chances sum to 1
    less the stated tail (below 1e-9)."""
    rules = _rules(name)
    race = solve(rules, "race")
    for score in (0, 300):
        count = race_length(rules, score)
        assert count.mean == pytest.approx(race.race_turns(score), abs=1e-9)
        assert count.tail < 1e-9
        assert sum(count.chances) + count.tail == pytest.approx(1.0, abs=1e-12)


GAMES = {2: {"goal": 500, "opening": 150}, 3: {"goal": 700, "opening": 150}, 4: {"goal": 450, "opening": 0}}


@pytest.mark.parametrize("players", sorted(GAMES))
def test_game_length_seat_chances_are_the_solved_win(players: int) -> None:
    """The chain of a game of 2, 3 or 4 players gives each seat the chance to win that the solve gives it
    (within the reported tail, below 1e-9), its turn counts sum to 1 less the tail, and the seats differ."""
    rules = rules_from_dict(GAMES[players], f"g{players}")
    result = solve(rules, "win", players=players)
    count = game_length(result, 0, (0,) * (players - 1))
    assert count.tail < 1e-9 and count.seat_wins is not None and len(count.seat_wins) == players
    for got, want in zip(count.seat_wins, result.win):
        assert abs(got - want) <= count.tail + 1e-12, (got, want)
    assert sum(count.chances) + count.tail == pytest.approx(1.0, abs=1e-12)
    assert count.chances[0] > 0 and count.mean > 1
    assert count.first_player_win == count.seat_wins[0] > max(count.seat_wins[1:])


def test_game_length_from_a_position_is_the_solved_chance() -> None:
    """From scores other than the start (three players: 300, 150, 450) the mover's chain chance is the solved
    W of that tuple, within the tail."""
    rules = rules_from_dict(GAMES[3], "g3")
    result = solve(rules, "win", players=3)
    count = game_length(result, 300, (150, 450))
    want = float(result.seat_values([6, 3, 9])[0])  # the scores in units of 50: the mover's chance
    assert count.seat_wins is not None and abs(count.seat_wins[0] - want) <= count.tail + 1e-12


def test_cli_json_and_text(tiny_rules_file) -> None:  # type: ignore[no-untyped-def]
    """`dist --json` gives the points map, mean, bust and turn counts; the text shows a table and the mean."""
    runner = CliRunner()
    done = runner.invoke(main, ["dist", "--rules", str(tiny_rules_file), "--me", "150", "--opp", "300", "--turns",
                                "--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert sum(data["points"].values()) + data["instant_win"] + data["truncated"] == pytest.approx(1.0, abs=1e-12)
    assert data["bust"] <= data["points"]["0"]
    assert [t["what"].split()[0] for t in data["turns"]] == ["turns", "turns"]
    text = runner.invoke(main, ["dist", "--rules", str(tiny_rules_file), "--me", "150"])
    assert text.exit_code == 0 and "Mean " in text.output and "points" in text.output


@pytest.mark.parametrize("args", [["--me", "1005"], ["--turn", "100"], ["--dice", "9"], ["--objective", "race"]])
def test_cli_bad_input_is_one_line(args: list[str], tiny_rules_file) -> None:  # type: ignore[no-untyped-def]
    """A bad position or option is one line `Error: ...` and exit status 2, no traceback."""
    done = CliRunner().invoke(main, ["dist", "--rules", str(tiny_rules_file), *args])
    assert done.exit_code == 2
    lines = [x for x in done.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ")


def test_plot_is_written(tmp_path, tiny_rules_file) -> None:  # type: ignore[no-untyped-def]
    """--plot writes a PNG (with matplotlib installed), and refuses a suffix it cannot write in one line."""
    pytest.importorskip("matplotlib")
    target = tmp_path / "dist.png"
    done = CliRunner().invoke(main, ["dist", "--rules", str(tiny_rules_file), "--turns", "--plot", str(target)])
    assert done.exit_code == 0, done.output
    assert target.read_bytes()[:4] == b"\x89PNG"
    bad = CliRunner().invoke(main, ["dist", "--rules", str(tiny_rules_file), "--plot", str(tmp_path / "x.txt")])
    assert bad.exit_code == 2 and bad.output.startswith("Error: ")


def test_a_table_beyond_four_players_is_refused_naming_opp() -> None:
    """`dist --opp` with five opponents (six players) is one line about `--opp`, exit status 2."""
    from click.testing import CliRunner

    from cinqmille.cli import main

    out = CliRunner().invoke(main, ["dist", "--rules", "standard", "--opp", "0,0,0,0,0"])
    assert out.exit_code == 2 and "--opp" in out.output and "Traceback" not in out.output
