"""The chance shown at a table larger than the solved one is that game's own chance, with its margin and its kind."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.app.advice import advise
from cinqmille.cli import main as cli
from cinqmille.engine import play_game
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.table.position import Position
from cinqmille.rules import rules_from_dict
from cinqmille.simulation.estimate import Start, estimate
from cinqmille.solver import solve

SMALL = {"goal": 500, "opening": 150}
#: Turn starts of a four-player game at goal 500 (points, playing order from the mover).
TURN_STARTS = [(0, 0, 0, 0), (150, 300, 0, 200), (400, 150, 300, 450), (0, 450, 450, 0), (300, 300, 300, 300),
               (200, 0, 350, 400)]


@pytest.fixture(scope="module")
def small_tables(session_cache_dir: Path) -> Iterator[tuple]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CINQMILLE_CACHE", str(session_cache_dir))
        rules = rules_from_dict(SMALL, "small")
        yield rules, solve(rules, "win", players=3), solve(rules, "win", players=4)


def test_four_player_estimates_hold_the_exact_four_player_chances(small_tables: tuple) -> None:
    """Read from the three-player table, every seat's estimated chance at a four-player turn start is within its
    stated margin (and the reduction's cost) of the exact four-player solve's, and it is labelled an estimate."""
    rules, three, four = small_tables
    misses = 0
    for me, *others in TURN_STARTS:
        advice = advise(three, Position(me, others[0], 0, rules.dice, others=tuple(others)))
        fig = advice.figure
        assert fig.kind == "estimated" and fig.players == 4 and fig.table == 3 and not advice.exact
        assert 0 < fig.margin <= 0.01 and fig.games >= 10_000
        first = [float(x) for x in four.seat_values([x // 50 for x in (me, *others)])]
        exact = np.array([*first, 1 - sum(first)])
        assert fig.seats is not None and math.isclose(sum(fig.seats), 1.0)
        assert advice.win == fig.seats[0]
        gap = np.abs(np.array(fig.seats) - exact)
        assert gap.max() < 2 * fig.margin + 0.005  # the reduction's cost at this goal is far below 0.5 points
        misses += int(gap.max() > fig.margin + 0.005)
    assert misses <= 1  # 95 % intervals: one miss in six turn starts at most


def test_five_player_estimates_hold_the_exact_five_player_chances(session_cache: object) -> None:
    """Read from the four-player table, every seat's estimated chance at a five-player turn start is within its
    stated margin (and the reduction's cost) of the exact five-player solve's."""
    rules = rules_from_dict({"goal": 400, "opening": 100}, "five")
    four, five = solve(rules, "win", players=4), solve(rules, "win", players=5)
    misses = 0
    starts = [(0, 0, 0, 0, 0), (100, 200, 0, 300, 150), (300, 300, 100, 0, 350)]
    for me, *others in starts:
        advice = advise(four, Position(me, others[0], 0, rules.dice, others=tuple(others)))
        fig = advice.figure
        assert fig.kind == "estimated" and (fig.players, fig.table) == (5, 4) and fig.seats is not None
        first = [float(x) for x in five.seat_values([x // 50 for x in (me, *others)])]
        gap = np.abs(np.array(fig.seats) - np.array([*first, 1 - sum(first)]))
        assert gap.max() < 2 * fig.margin + 0.005
        misses += int(gap.max() > fig.margin + 0.005)
    assert misses <= 1


def test_the_smaller_games_figure_is_not_shown(small_tables: tuple) -> None:
    """The three-player game's own figure differs from the four-player estimate shown, which replaces it."""
    rules, three, four = small_tables
    pos = Position(0, 0, 0, rules.dice, others=(0, 0, 0))
    smaller, own = float(three.seat_values([0, 0, 0])[0]), float(four.seat_values([0, 0, 0, 0])[0])
    shown = advise(three, pos)
    assert abs(smaller - own) > 0.03  # the first seat's chance at three players is not his chance at four
    assert abs(shown.win - own) < 2 * shown.figure.margin


def test_every_option_of_a_keep_is_estimated_from_its_own_start(small_tables: tuple) -> None:
    """Each keep's chance (and its bank and roll figures) is the estimate of the state after that keep, with
    the same seed: the option figures are those of `estimate` from those starts."""
    rules, three, _ = small_tables
    others = (300, 200, 450)
    advice = advise(three, Position(150, others[0], 0, 5, others=others), roll="15332")
    u = (150 // 50, *(o // 50 for o in others))
    for o in advice.options:
        assert o.turn is not None and o.dice is not None
        if o.roll is not None:
            want = estimate(rules, 4, [Start(u, 0, o.turn // 50, o.dice)])[0].seats[0]
            assert o.roll == want
        assert o.win == (o.roll if o.then == "roll" else o.bank)


def test_a_ruleset_the_game_cannot_be_played_out_under_shows_no_chance(session_cache: object, tmp_path: Path) -> None:
    """With a rule the simulator does not play (last round, at six players), the move is given with no chance:
    `?` in the text, null in the JSON, and the kind `none`."""
    runner = CliRunner()
    path = tmp_path / "lastround.toml"
    path.write_text('base = "standard"\ngoal = 500\nopening = 150\nlast_round = true\n')
    args = ["advise", "--rules", str(path), "--me", "150", "--opp", "300,200,450,0,150", "--turn", "200", "--dice", "2"]
    text = runner.invoke(cli, args)
    data = runner.invoke(cli, [*args, "--json"])
    assert text.exit_code == 0, text.output
    assert "?" in text.output and "%" not in text.output.split("\n")[1]
    got = json.loads(data.output)
    assert got["figure"]["kind"] == "none" and got["win"] is None
    assert all(o["win"] is None for o in got["options"])
    assert "no chance" in got["sentence"]


def test_exact_and_settled_figures_say_so(small_tables: tuple) -> None:
    """A table's own game is exact (every seat's chance at a turn start), and the JSON says how."""
    rules, three, four = small_tables
    got = advise(four, Position(150, 300, 0, 5, others=(300, 200, 450)))
    assert got.figure.kind in ("exact", "settled") and got.figure.seats is not None
    assert math.isclose(got.figure.seats[0], got.win, abs_tol=1e-12)
    assert math.isclose(sum(got.figure.seats), 1.0, abs_tol=1e-9)
    shown = got.as_dict()["figure"]
    assert shown["kind"] == got.figure.kind and shown["how"].startswith("exact")


def test_a_bust_names_the_next_player(small_tables: tuple) -> None:
    """After a bust at four players the sentence names who plays next (by his score)."""
    rules, three, _ = small_tables
    got = advise(three, Position(150, 300, 150, 2, others=(300, 200, 450)), roll="23")
    assert "the next player (on 300) to play" in got.sentence


@pytest.mark.slow
def test_five_player_estimate_agrees_with_the_referee(small_tables: tuple) -> None:
    """The vectorised estimate of a five-player start agrees with the referee's games of the same players (the
    optimal bot reading the three-player table) within four standard errors."""
    rules, _, _ = small_tables
    est = estimate(rules, 5, [Start((0,) * 5)])[0]
    rng = np.random.default_rng(11)
    bot = OptimalPolicy(rules)
    games = 3000
    wins = sum(play_game(rules, [bot] * 5, rng=rng).winner == 0 for _ in range(games))
    rate = wins / games
    assert abs(rate - est.seats[0]) < 4 * math.sqrt(rate * (1 - rate) / games) + est.margin
