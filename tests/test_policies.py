"""The `optimal` and `expected` policies: their tables and decisions agree with the solver's own answers."""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.table.policy import policy_of
from cinqmille.app.advice import advise
from cinqmille.dice import dice_tables, faces_of, reachable
from cinqmille.engine import GameView, new_player, play_game
from cinqmille.errors import CinqmilleError
from cinqmille.policies import parse_policy
from cinqmille.policies.expected import ExpectedPolicy
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.table.load import policy_table
from cinqmille.table.position import Position
from cinqmille.rules import load_rules, rules_from_dict
from cinqmille.solver import solve
from cinqmille.solver.last_turn import LastTurn
from cinqmille.table.rows import last_turn_rows
from cinqmille.table.locate import locate_rows

pytestmark = pytest.mark.usefixtures("session_cache")

TINY = rules_from_dict({"name": "tiny1000", "goal": 1000, "opening": 300})
TINY_EXACT = rules_from_dict({"name": "tiny-exact", "goal": 1000, "opening": 300, "end": "exact"})


def view(rules, me: int, opp: int, turn: int, dice: int, roll=None) -> GameView:
    """A two-player view with seat 0 to move."""
    players = (new_player(rules, [me] if me else []), new_player(rules, [opp] if opp else []))
    return GameView(rules, 0, players, turn, dice, roll, turn > 0, False, False, True, None, 0)


@pytest.mark.parametrize("rules", [TINY, TINY_EXACT], ids=["reach", "exact"])
def test_table_matches_one_pair_kernel_passes(rules) -> None:
    """Every bank and roll value of the table equals a fresh kernel pass of its pair alone, and so do its decisions."""
    result = solve(rules, "win")
    table = policy_of(result).complete()
    model, kernel, w = result.model, result.kernel, result.tables
    d = rules.dice
    for a in table.scores:
        for b in table.scores:
            ss, aa, bb = np.array([0]), np.array([a]), np.array([b])
            caps = model.caps(ss, aa)
            bust = 1.0 - w[0, b, a]
            bank = model.bank(ss, aa, bb, kernel.tpad_for(int(caps[0])) - 1, w)
            _, _, ta, tb = kernel.run(aa, caps, bank, np.array([bust]), keep_table=True,
                                      term_bank=model.terminal_bank(ss, aa, bb))
            value = ta[0] + tb[0] * bust
            roll = kernel.rolling(value, bust)
            bank_v = bank.a[0] + bank.b[0] * bust
            r = locate_rows(table, a, b)
            t = np.arange(int(caps[0]) + 1)[:, None]
            m = np.arange(1, d + 1)[None, :]
            assert np.allclose(table.value(r, t, m), value[: len(t)], atol=1e-12, rtol=0)
            assert np.allclose(table.roll(r, t, m), roll[: len(t)], atol=1e-12, rtol=0)
            mine = table.bank(r, t, m)
            assert ((mine == -np.inf) == (bank_v[: len(t)] == -np.inf)).all()
            assert np.allclose(np.where(mine > -np.inf, mine, 0), np.where(mine > -np.inf, bank_v[: len(t)], 0),
                               atol=1e-12, rtol=0)
            clear = np.abs(bank_v[: len(t)] - roll[: len(t)]) > 1e-12
            assert (table.banks(r, t, m) == (bank_v[: len(t)] >= roll[: len(t)]))[clear].all()
            assert table.value(r, 0, d) == pytest.approx(w[0, a, b], abs=1e-12)


def test_optimal_policy_takes_the_solvers_best_options() -> None:
    """On random positions and rolls, the engine policy's keep and bank match the advice's best options."""
    rules = TINY
    result = solve(rules, "win")
    policy = OptimalPolicy(rules)
    rng = np.random.default_rng(3)
    scores = [0] + list(range(300, 1000, 50))
    tables = dice_tables(rules)
    checked = 0
    for _ in range(1000):
        me, opp = (int(x) for x in rng.choice(scores, 2))
        turn = int(rng.integers(0, 12)) * 50
        n = int(rng.integers(1, rules.dice + 1))
        if not reachable(rules, turn // 50)[turn // 50, n - 1]:
            continue  # no turn holds these points with these dice
        table = tables[n]
        r = int(rng.integers(len(table.ways)))
        keeps = table.keeps_of(r)
        if not len(keeps):
            continue
        from cinqmille.engine.judge import keep_lookup

        counts = tuple(int(c) for c in table.counts[r])
        legal = keep_lookup(rules)[counts]
        v = view(rules, me, opp, turn, n, counts)
        chosen = legal[policy.choose_keep(v, legal)]
        options = advise(result, Position(me, opp, turn, n), roll=faces_of(counts)).options
        best = options[0].win
        mine = next(o.win for o in options if o.keep == faces_of(chosen.dice) and o.points == chosen.points)
        assert mine == pytest.approx(best, abs=1e-12)
        if turn > 0 and rules.banking.allowed(me, turn):
            bank = policy.should_bank(view(rules, me, opp, turn, n))
            opts = advise(result, Position(me, opp, turn, n)).options
            by = {o.action: o.win for o in opts}
            assert bank == (by.get("bank", -1.0) >= by["roll"])
        checked += 1
    assert checked > 200


def test_last_turn_chances_are_exact() -> None:
    """The last-turn chances of the policy table equal hand-computed facts: need 50 points under reach, exactly 50 under exact."""
    reach = rules_from_dict({"base": "standard", "last_round": True})
    last = last_turn_rows(reach, LastTurn(reach), 4950 // 50, 4950 // 50)
    assert last.value(0, 0, 5) == pytest.approx(1 - 600 / 7776, abs=1e-12)
    exact = rules_from_dict({"base": "standard", "end": "exact", "last_round": True})
    last = last_turn_rows(exact, LastTurn(exact), 4950 // 50, exact.goal // 50)
    # a single 5 must be kept and banked; any other keep overshoots; five 1s win at once
    assert last.value(0, 0, 5) == pytest.approx(1 - (5 / 6) ** 5 + 1 / 7776, abs=1e-12)


def test_expected_policy_reads_the_expected_table() -> None:
    """The expected player banks exactly when its turn points are worth the solved E, and keeps the best E."""
    rules = load_rules("standard")
    e = solve(rules, "expected").values
    policy = ExpectedPolicy(rules)
    for t in range(1, 40):
        for m in range(1, 6):
            v = view(rules, 1000, 1000, t * 50, m)
            assert policy.should_bank(v) == (t * 50 >= e[1, t, m - 1])
    # with 1 die and 300 points, rolling risks 300 for a 1/3 chance: the table banks
    assert policy.should_bank(view(rules, 1000, 1000, 300, 1))
    # a winning bank is always taken, whatever E says
    assert policy.should_bank(view(rules, 4900, 0, 100, 5))


def test_expected_mean_turn_matches_solved_expectation() -> None:
    """Simulated points per turn of the expected player match E[opened, 0, D] within 4 standard errors."""
    from cinqmille.simulation import SimConfig, simulate_stats

    rules = rules_from_dict({"name": "long", "goal": 100_000, "opening": 0, "five_ones": "multiples"})
    stats, engine, _, _ = simulate_stats(SimConfig(rules, ("expected", "expected"), 60, seed=11))
    assert engine == "vectorised"
    target = solve(rules, "expected").values[1, 0, rules.dice - 1]
    turns = int(stats.turns.sum())
    mean = stats.banked_points.sum() / turns
    # per-turn points have a standard deviation below 1000 points
    assert abs(mean - target) < 4 * 1000 / np.sqrt(turns)
    assert abs(mean - target) / target < 0.03


def test_parse_policy_knows_optimal_and_expected() -> None:
    """`parse_policy` builds both new policies and rejects an argument with one line."""
    assert isinstance(parse_policy("optimal", TINY), OptimalPolicy)
    assert isinstance(parse_policy("expected", TINY), ExpectedPolicy)
    with pytest.raises(CinqmilleError, match="takes no argument"):
        parse_policy("optimal:3", TINY)
    with pytest.raises(CinqmilleError, match="takes no argument"):
        parse_policy("expected:x", TINY)


def test_optimal_plays_legal_games_under_history_rules_and_many_players() -> None:
    """Under the sheet rules (take-over, last round, crosses, deadly ties) and with three players, games end legally."""
    rules = rules_from_dict({"base": "sheet", "name": "tiny-sheet", "goal": 1500, "opening": 300})
    rng = np.random.default_rng(5)
    for players in (["optimal", "cautious"], ["optimal", "threshold:300", "optimal"]):
        pols = [parse_policy(p, rules, rng=rng) for p in players]
        for _ in range(15):
            result = play_game(rules, pols, rng=rng)
            assert 0 <= result.winner < len(players)


def test_table_is_cached_on_disk(session_cache) -> None:
    """The second request of a table is served from the cache directory with identical arrays."""
    first = policy_table(TINY, 2)
    files = list(session_cache.glob("tiny1000-optimal2p-policy-*.npz"))
    assert len(files) == 1
    from cinqmille.table import load as tables

    tables.forget()
    second = policy_table(TINY, 2)
    assert second is not first
    assert np.array_equal(first.roll_v, second.roll_v) and np.array_equal(first.bank_v, second.bank_v)
