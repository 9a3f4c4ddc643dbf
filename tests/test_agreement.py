"""The solved policy played through the game engine wins as often as the solver says it should."""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.table.policy import policy_of
from cinqmille.engine import play_game
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.rules import Rules, load_rules, rules_from_dict
from cinqmille.solver import compute, solve


def first_seat_rate(rules: Rules, result, games: int, seed: int) -> tuple[float, float]:
    """Share of `games` won by seat 0 when the optimal policy plays itself, and the solver's standard error."""
    policy = OptimalPolicy(rules, policy_of(result).complete())
    rng = np.random.default_rng(seed)
    wins = sum(play_game(rules, [policy, policy], rng=rng).winner == 0 for _ in range(games))
    p = result.first_player_win
    return wins / games, (p * (1 - p) / games) ** 0.5


def test_last_round_and_take_over_agree_with_simulation() -> None:
    """Under an exact end with a last round and take-overs, 3,000 engine games agree within 3 standard errors."""
    rules = rules_from_dict({"goal": 1000, "opening": 300, "last_round": True, "take_over": True,
                             "end": "exact"}, "small-sheet-like")
    result = compute(rules)
    assert result.exact
    rate, se = first_seat_rate(rules, result, 3000, seed=11)
    assert abs(rate - result.first_player_win) <= 3 * se


@pytest.mark.slow
@pytest.mark.parametrize("spec", [
    {"goal": 1000, "opening": 300, "last_round": True, "take_over": True},
    {"goal": 1000, "opening": 300, "last_round": True, "take_over": True, "end": "exact"},
])
def test_last_round_and_take_over_agree_with_many_games(spec: dict) -> None:
    """20,000 engine games of the solved policy agree with the solved value within 3 standard errors."""
    rules = rules_from_dict(spec, "small")
    result = compute(rules)
    rate, se = first_seat_rate(rules, result, 20_000, seed=5)
    assert abs(rate - result.first_player_win) <= 3 * se


@pytest.mark.slow
@pytest.mark.parametrize("name", ["standard", "house"])
def test_presets_agree_with_engine_games(name: str, tmp_path, monkeypatch) -> None:
    """20,000 games through the referee give the solved first-player chance within 3 standard errors."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path))
    rules = load_rules(name)
    rate, se = first_seat_rate(rules, solve(rules), 20_000, seed=3)
    assert abs(rate - solve(rules).first_player_win) <= 3 * se


def test_prediction_policy_agrees_with_simulation() -> None:
    """The solved policy that announces its last two dice wins, through the engine, as often as solved."""
    rules = rules_from_dict({"goal": 1000, "opening": 300, "prediction": True}, "small-prediction")
    result = compute(rules)
    assert result.exact
    rate, se = first_seat_rate(rules, result, 3000, seed=7)
    assert abs(rate - result.first_player_win) <= 3 * se
