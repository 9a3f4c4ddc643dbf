"""Whole games between the simple policies: every preset runs to a winner, and replays reproduce them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cinqmille.engine import (
    Banked,
    GameEnd,
    TurnEnd,
    event_from_dict,
    event_to_dict,
    play_game,
    reaches_goal,
    replay,
    replay_events,
)
from cinqmille.policies import parse_policy
from cinqmille.rules import PRESET_NAMES, load_rules, rules_from_dict

SPECS = ("threshold:350", "cautious", "random", "threshold:300/2")

HISTORY_RULESETS = {
    "penalties": {"base": "standard", "zero_turns": {"count": 3, "to": "previous"},
                  "bust_strikes_last_score": True, "ties": "knock_back", "prediction": True,
                  "last_round": True},
    "fifty": {"base": "standard", "zero_turns": {"count": 2, "to": -500}, "rule_of_50": True,
              "take_over": True, "final_stretch": {"from": 4000, "cap": False}, "last_round": True},
    "house-exact": {"base": "house", "ties": "deadly", "crosses": True, "take_over": True,
                    "end": "exact", "last_round": True},
}


def run(rules_name_or_dict: str | dict, seed: int, players: int = 3):  # type: ignore[no-untyped-def]
    """One seeded game between the first `players` simple policies."""
    rules = load_rules(rules_name_or_dict) if isinstance(rules_name_or_dict, str) \
        else rules_from_dict(rules_name_or_dict)
    rng = np.random.default_rng(seed)
    policies = [parse_policy(spec, rules, rng=rng) for spec in SPECS[:players]]
    return play_game(rules, policies, rng=rng)


def check_game(result) -> None:  # type: ignore[no-untyped-def]
    """The game has a winner who holds the goal (or won at once) and a replay gives the same game."""
    end = result.events[-1]
    assert isinstance(end, GameEnd) and end.winner == result.winner
    if end.reason != "instant_win":
        assert reaches_goal(result.rules, result.scores[result.winner])
    assert all(s >= 0 and s % 50 == 0 for sheet in result.score_sheet for s in sheet)
    again = replay(result)
    assert again.scores == result.scores and again.winner == result.winner
    assert again.events == result.events


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_preset_games_run_to_a_winner_and_replay(name: str) -> None:
    """200 seeded 3-player games of each preset end with a winner, and their replays give the same scores."""
    for seed in range(200):
        check_game(run(name, seed))


@pytest.mark.parametrize("name", sorted(HISTORY_RULESETS))
def test_history_rule_games_run_and_replay(name: str) -> None:
    """Games with the history rules switched on (4 players) end with a winner and replay exactly."""
    for seed in range(60):
        check_game(run(HISTORY_RULESETS[name], seed, players=4))


@pytest.mark.parametrize("players", [2, 5, 8])
def test_two_to_eight_players(players: int) -> None:
    """Games of 2, 5 and 8 players under `sheet` end with a winner."""
    specs = [SPECS[i % len(SPECS)] for i in range(players)]
    rules = load_rules("sheet")
    for seed in range(20):
        rng = np.random.default_rng(seed)
        result = play_game(rules, [parse_policy(s, rules, rng=rng) for s in specs], rng=rng)
        check_game(result)
        assert len(result.scores) == players


def test_same_seed_same_game() -> None:
    """A game is reproducible from its seed; another seed gives another game."""
    a, b, c = run("standard", 11), run("standard", 11), run("standard", 12)
    assert a.events == b.events
    assert a.events != c.events


def test_log_round_trips_through_json_and_replays() -> None:
    """The event log survives JSON and replays to the same scores."""
    result = run("sheet", 3, players=4)
    text = json.dumps([event_to_dict(e) for e in result.events])
    events = tuple(event_from_dict(d) for d in json.loads(text))
    assert events == result.events
    again = replay_events(result.rules, events, result.initial)
    assert again.scores == result.scores and again.winner == result.winner


def test_score_sheet_follows_the_banks() -> None:
    """Each TurnEnd shows the previous sheet plus the player's scored bank (standard has no penalties)."""
    result = run("standard", 5)
    sheet = [0, 0, 0]
    bank = None
    for e in result.events:
        if isinstance(e, Banked) and e.outcome == "scored":
            bank = e
        elif isinstance(e, TurnEnd):
            if bank is not None:
                sheet[bank.seat] += bank.points
            assert tuple(sheet) == e.scores
            bank = None
