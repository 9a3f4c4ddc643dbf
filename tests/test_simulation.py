"""The simulator: agreement with the solver, with the referee, and seeded reproducibility whatever the workers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.dice import dice_tables
from cinqmille.engine import GameView, new_player
from cinqmille.engine.judge import bank_allowed, bank_outcome, keep_lookup, reaches_goal
from cinqmille.errors import CinqmilleError
from cinqmille.policies.heuristics import best_keep
from cinqmille.rules import load_rules, rules_from_dict
from cinqmille.simulation import SimConfig, simulate, simulate_stats, std_error, wilson
from cinqmille.simulation.model import SCORED, BankRules, roll_model
from cinqmille.solver import solve

pytestmark = pytest.mark.usefixtures("session_cache")

TINY = rules_from_dict({"name": "tiny1000", "goal": 1000, "opening": 300})
EXACT_PRESETS = ["standard", "wikipedia", "house", "six-dice", "ten-thousand"]


def test_tiny_optimal_self_play_matches_solver() -> None:
    """Optimal against optimal on a tiny ruleset: first-player win rate within 3 SE of the solved value."""
    res = simulate(SimConfig(TINY, ("optimal", "optimal"), 60_000, seed=2024, jobs=1))
    solved = solve(TINY, "win").first_player_win
    assert res.engine == "vectorised"
    assert abs(res.win_rate[0] - solved) < 3 * std_error(solved, res.games)
    assert sum(res.wins) == res.games


@pytest.mark.slow
@pytest.mark.parametrize("preset", EXACT_PRESETS)
def test_preset_optimal_self_play_matches_solver(preset: str) -> None:
    """For every preset solved exactly, simulated optimal self-play agrees with first_player_win within 3 SE."""
    rules = load_rules(preset)
    res = simulate(SimConfig(rules, ("optimal", "optimal"), 300_000, seed=7, jobs=2))
    solved = solve(rules, "win").first_player_win
    assert abs(res.win_rate[0] - solved) < 3 * std_error(solved, res.games)


def test_vectorised_and_referee_agree_on_heuristics() -> None:
    """threshold:350 against cautious on standard: the two engines agree on win rate, length and busts."""
    rules = load_rules("standard")
    vec = simulate(SimConfig(rules, ("threshold:350", "cautious"), 40_000, seed=1))
    ref = simulate(SimConfig(rules, ("threshold:350", "cautious"), 2_000, seed=1, engine="referee"))
    assert (vec.engine, ref.engine) == ("vectorised", "referee")
    se = np.hypot(vec.std_error[0], ref.std_error[0])
    assert abs(vec.win_rate[0] - ref.win_rate[0]) < 3.5 * se
    # game length: the standard deviation of a game's length is below 15 turns
    assert abs(vec.mean_turns - ref.mean_turns) < 3.5 * 15 / np.sqrt(ref.games)
    assert abs(vec.bust_rate - ref.bust_rate) < 0.02
    assert abs(vec.mean_banked_turn - ref.mean_banked_turn) < 25


def test_vectorised_and_referee_agree_on_optimal_and_expected() -> None:
    """optimal against expected on the tiny ruleset: both engines (two implementations of each policy) agree."""
    vec = simulate(SimConfig(TINY, ("optimal", "expected"), 40_000, seed=3))
    ref = simulate(SimConfig(TINY, ("optimal", "expected"), 3_000, seed=3, engine="referee"))
    se = np.hypot(vec.std_error[0], ref.std_error[0])
    assert abs(vec.win_rate[0] - ref.win_rate[0]) < 3.5 * se
    assert abs(vec.mean_turns - ref.mean_turns) < 0.5


@pytest.mark.parametrize("engine", ["vectorised", "referee"])
def test_same_seed_same_result_whatever_the_jobs(engine: str) -> None:
    """The same seed gives identical per-game results with 1 and 2 workers; another seed does not."""
    games, batch = (6_000, 1_000) if engine == "vectorised" else (120, 30)
    one = simulate_stats(SimConfig(TINY, ("optimal", "threshold:300"), games, seed=9, jobs=1, engine=engine,
                                   batch_size=batch))[0]
    two = simulate_stats(SimConfig(TINY, ("optimal", "threshold:300"), games, seed=9, jobs=2, engine=engine,
                                   batch_size=batch))[0]
    other = simulate_stats(SimConfig(TINY, ("optimal", "threshold:300"), games, seed=10, jobs=1, engine=engine,
                                     batch_size=batch))[0]
    assert one.equals(two)
    assert not one.equals(other)


@pytest.mark.parametrize("spec", [
    {"base": "standard"}, {"base": "house"}, {"base": "standard", "end": "exact"},
    {"base": "standard", "rule_of_50": True, "min_bank": 300, "final_stretch": {"from": 4000, "cap": False}},
    {"base": "six-dice", "hot_dice": "mandatory", "opening": 0},
])
def test_bank_rules_match_the_judge(spec: dict) -> None:
    """The vectorised banking rules equal the engine's judge on every score and turn total."""
    rules = rules_from_dict(spec)
    br = BankRules.of(rules)
    a = np.repeat(np.arange(0, rules.goal // 50), 130)
    t = np.tile(np.arange(0, 130), rules.goal // 50)
    kind, new, wins = br.outcome(a, t)
    names = {"scored": 0, "void": 1, "fault": 2}
    for m in (1, rules.dice):
        allowed = br.allowed(a, t, np.full(len(a), m))
        for i in range(0, len(a), 7):
            ai, ti = int(a[i]) * 50, int(t[i]) * 50
            if ai and ai < rules.opening:
                continue
            full = m == rules.dice
            assert allowed[i] == bank_allowed(rules, ai, ti, True, full)
            out = bank_outcome(rules, ai, ti)
            assert kind[i] == names[out.kind]
            assert new[i] * 50 == out.score
            assert wins[i] == (out.kind == "scored" and reaches_goal(rules, out.score))
    assert SCORED == 0


@pytest.mark.parametrize("preset", ["standard", "house", "six-dice"])
def test_heuristic_keep_is_the_engines_best_keep(preset: str) -> None:
    """For every roll, the roll model's heuristic keep has the outcome of the engine's `best_keep`."""
    rules = load_rules(preset)
    model = roll_model(rules)
    d = rules.dice
    lookup = keep_lookup(rules)
    outcome_sets = {}
    for c in range(len(model.cand)):
        ks = model.cand[c][model.cand_ok[c]]
        key = frozenset((int(model.units[k]), int(model.next[k]), bool(model.win[k])) for k in ks)
        outcome_sets[(int(model.class_dice[c]), key)] = c
    players = (new_player(rules, [1000]), new_player(rules, [1000]))
    for n, table in dice_tables(rules).items():
        for r in range(len(table.ways)):
            counts = tuple(int(x) for x in table.counts[r])
            keeps = lookup[counts]
            if not keeps:
                continue
            key = frozenset((0 if k.win else k.points // 50, (n - k.size) or d, k.win) for k in keeps)
            c = outcome_sets[(n, key)]
            v = GameView(rules, 0, players, 0, n, counts, False, False, False, False, None, 0)
            k = best_keep(v, keeps)
            h = model.heuristic_keep[c]
            assert (0 if k.win else k.points // 50, (n - k.size) or d, k.win) == \
                (int(model.units[h]), int(model.next[h]), bool(model.win[h]))


def test_roll_model_draws_busts_at_the_exact_rate() -> None:
    """Drawn busts of 5 dice occur at 600/7776 within 4 standard errors; the slots cover [0, 1) per dice count."""
    model = roll_model(load_rules("standard"))
    rng = np.random.default_rng(0)
    n = 400_000
    c = model.draw(np.full(n, 5), rng.random(n))
    p = 600 / 7776
    assert abs((c < 0).mean() - p) < 4 * std_error(p, n)
    assert (model.class_dice[c[c >= 0]] == 5).all()
    c1 = model.draw(np.full(n, 1), rng.random(n))
    assert abs((c1 < 0).mean() - 4 / 6) < 4 * std_error(4 / 6, n)


def test_wilson_interval_contains_the_rate() -> None:
    """The Wilson interval brackets the observed rate and shrinks with more games."""
    lo, hi = wilson(520, 1000)
    assert lo < 0.52 < hi and hi - lo == pytest.approx(2 * 1.96 * np.sqrt(0.52 * 0.48 / 1000), rel=0.02)
    assert wilson(5200, 10000)[1] - wilson(5200, 10000)[0] < hi - lo


def test_bad_simulations_are_one_line_errors() -> None:
    """Too few players, a forced vectorised engine that cannot apply, and bad names raise CinqmilleError."""
    with pytest.raises(CinqmilleError, match="2 to 8 players"):
        simulate(SimConfig(TINY, ("optimal",), 10))
    with pytest.raises(CinqmilleError, match="vectorised"):
        simulate(SimConfig(TINY, ("optimal", "random"), 10, engine="vectorised"))
    with pytest.raises(CinqmilleError, match="vectorised"):
        simulate(SimConfig(load_rules("sheet"), ("cautious", "cautious"), 10, engine="vectorised"))
    with pytest.raises(CinqmilleError):
        simulate(SimConfig(TINY, ("optimal", "nonsense"), 10))


def test_simulate_command_json(tiny_rules_file) -> None:
    """`cinqmille simulate --json` reports the documented keys, and wins add up to the games."""
    runner = CliRunner()
    out = runner.invoke(main, ["simulate", "--rules", str(tiny_rules_file), "--players", "optimal,threshold:200",
                               "--games", "3000", "--seed", "4", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    for key in ("games", "wins", "win_rate", "ci95", "mean_turns", "median_turns", "bust_rate",
                "mean_banked_turn", "seconds", "players", "rules", "seed", "engine"):
        assert key in data
    assert sum(data["wins"]) == data["games"] == 3000 and data["engine"] == "vectorised"
    text = runner.invoke(main, ["simulate", "--rules", str(tiny_rules_file), "--players", "optimal,cautious,random",
                                "--games", "20"])
    assert text.exit_code == 0 and "referee engine" in text.output
    bad = runner.invoke(main, ["simulate", "--players", "optimal,bogus", "--games", "5"])
    assert bad.exit_code == 2 and "bogus" in bad.output


def test_dask_backend_gives_the_local_result() -> None:
    """On a local Dask cluster the same seed gives exactly the local result."""
    distributed = pytest.importorskip("distributed")
    config = dict(rules=TINY, players=("optimal", "threshold:250"), games=4_000, seed=12, batch_size=1_000)
    local = simulate_stats(SimConfig(**config))[0]
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = simulate_stats(SimConfig(**config, backend="dask", scheduler=cluster.scheduler_address))[0]
    assert local.equals(remote)
