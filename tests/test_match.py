"""`cinqmille match`: two policies against each other by the game's chain; `simulate` seating a card."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.errors import CinqmilleError
from cinqmille.policies import parse_policy
from cinqmille.research.card import Card, evaluate
from cinqmille.research.match import match, match_turns
from cinqmille.rules import rules_from_dict
from cinqmille.simulation.runner import SimConfig, simulate
from cinqmille.solver import solve

from small_rulesets import TURN_RULESETS

pytestmark = pytest.mark.usefixtures("session_cache")

#: A chance computed two exact ways agrees to this.
EXACT_TOL = 1e-9
PLAIN = ("tiny", "exact", "mandatory")


def _rules(name: str):  # type: ignore[no-untyped-def]
    return rules_from_dict(TURN_RULESETS[name], name)


@pytest.mark.parametrize("name", PLAIN)
def test_threshold_through_its_vector_form_is_the_threshold_card(name: str) -> None:
    """`threshold:T` read from the simulator's vector form (`VecPlay`) gives the card evaluation of
    `Card.threshold` (the card's own rows) against optimal to 1e-9, in each seat."""
    rules = _rules(name)
    result = solve(rules, "win")
    for points in (150, 300):
        ev = evaluate(result, Card.threshold(rules, points))
        m = match_turns(result, f"threshold:{points}", "optimal")
        assert abs(m.first - ev.first) < EXACT_TOL and abs(m.second - ev.second) < EXACT_TOL


@pytest.mark.parametrize("name", PLAIN)
def test_optimal_against_optimal_is_the_solved_chance(name: str) -> None:
    """optimal against optimal wins the solved first-player chance moving first (1e-9)."""
    result = solve(_rules(name), "win")
    m = match_turns(result, "bot", "optimal")
    assert abs(m.first - result.first_player_win) < EXACT_TOL
    assert abs(m.second - (1 - result.first_player_win)) < EXACT_TOL
    assert abs(m.edge) < EXACT_TOL


def test_swapping_the_players_swaps_the_seats() -> None:
    """A against B moving first is one minus B against A moving second."""
    result = solve(_rules("tiny"), "win")
    ab = match_turns(result, "cautious", "expected")
    ba = match_turns(result, "expected", "cautious")
    assert abs(ab.first - (1 - ba.second)) < EXACT_TOL and abs(ab.second - (1 - ba.first)) < EXACT_TOL


@pytest.mark.parametrize("pair", [("cautious", "expected"), ("card:100/150/150/200/250:few:50", "threshold:200/2"),
                                  ("expected", "optimal")])
def test_match_agrees_with_simulation(pair: tuple[str, str]) -> None:
    """The exact chance of A moving first lies within 4 standard errors of 40,000 simulated games (the
    vectorised loop, an independent player of the same policies)."""
    rules = _rules("exact")
    m = match(rules, *pair)
    games = 40_000
    sim = simulate(SimConfig(rules, pair, games, seed=5))
    se = math.sqrt(m.first * (1 - m.first) / games)
    assert abs(sim.win_rate[0] - m.first) < 4 * se, (pair, sim.win_rate, m.first)


def test_simulate_plays_a_card_on_either_engine() -> None:
    """`simulate` seats a card: the vectorised engine and the referee (the engine policy) both agree with the
    card's exact chance within 4 standard errors."""
    rules = _rules("tiny")
    pair = ("card", "expected")
    m = match(rules, *pair)
    for engine, games in (("vectorised", 40_000), ("referee", 3_000)):
        sim = simulate(SimConfig(rules, pair, games, seed=3, engine=engine))  # type: ignore[arg-type]
        se = math.sqrt(m.first * (1 - m.first) / games)
        assert abs(sim.win_rate[0] - m.first) < 4 * se, (engine, sim.win_rate, m.first)


def test_card_policy_names() -> None:
    """`card` is the card found for standard fitted to the dice; `card:L1/.../LD[:few:DIE]` reads the lines."""
    rules = _rules("tiny")
    assert parse_policy("card", rules).name == "card"  # type: ignore[attr-defined]
    card = parse_policy("card:100/150/200/250/300:few:50", rules).card  # type: ignore[attr-defined]
    assert card == Card((100, 150, 200, 250, 300), keep="few", die=50)
    for bad in ("card:1/2", "card:100/x", "card:100/100/100/100/100:many:5", "card:100/100/100/100/100:few"):
        with pytest.raises(CinqmilleError):
            parse_policy(bad, rules)


def test_match_command(tiny_rules_file) -> None:  # type: ignore[no-untyped-def]
    """`match --json` gives both seats' chances that sum to one; the text says them; bad policies and rulesets
    are one line with exit status 2, before any solve."""
    runner = CliRunner()
    res = runner.invoke(main, ["match", "--rules", str(tiny_rules_file), "optimal", "threshold:300", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert abs(data["a_first"] + data["b_second"] - 1) < 1e-12 and data["a_chance"] > 0.5
    assert data["edge_points"] == pytest.approx(100 * (data["a_chance"] - 0.5))
    res = runner.invoke(main, ["match", "--rules", str(tiny_rules_file), "optimal", "threshold:300"])
    assert res.exit_code == 0 and "moving first" in res.output
    for args in (["random", "optimal"], ["optimal", "threshold:33"], ["--rules", "sheet", "optimal", "expected"]):
        res = runner.invoke(main, ["match", *args])
        assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1 and "Error:" in res.output, res.output
        assert "Solving" not in res.output
