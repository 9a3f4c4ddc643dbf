"""Three players and more at the table: the three-player policy table read by the engine and the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.table.locate import spot
from cinqmille.table.policy import policy_of
from cinqmille.engine import play_game
from cinqmille.policies.optimal import OptimalPolicy, view_position
from cinqmille.rules import rules_from_dict
from cinqmille.simulation import SimConfig, simulate
from cinqmille.solver import compute
from cinqmille.solver.n_player import leading, threatening
from cinqmille.table.policy import seat_rows
from cinqmille.table.locate import locate, locate_rows

SMALL = {"goal": 500, "opening": 150}
EXACT = {"goal": 400, "opening": 100, "end": "exact"}


def _states(block, r: int, dice: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    n = int(block.cap[r]) + 2
    t = np.repeat(np.arange(n), dice).reshape(n, dice)
    m = np.tile(np.arange(1, dice + 1), (n, 1))
    return np.full(t.shape, r), t, m


@pytest.mark.parametrize("rules_dict, players", [
    (SMALL, 3), (EXACT, 3), ({"goal": 300, "opening": 100, "end": "exact", "prediction": True}, 3),
    ({"goal": 300, "opening": 100, "end": "exact"}, 4), ({"goal": 300, "opening": 100, "prediction": True}, 4)])
def test_every_decision_of_the_table_is_the_advice_rows(rules_dict: dict, players: int) -> None:
    """At every row and turn state the table's move, announcement and keep of every roll class (stored from
    groups of rows) are those of the advice's row alone (`table.policy.seat_rows`), and its values agree to 1e-13,
    for three and four players; the engine policy reads the same row."""
    import itertools

    from cinqmille.table.position import Position

    rules = rules_from_dict(rules_dict)
    result = compute(rules, players=players)
    table = policy_of(result).complete()
    d = rules.dice
    scores = [int(x) for x in result.grid.scores]
    checked = 0
    for a, *others in itertools.product(scores, repeat=players):
        block = seat_rows(result, a, np.array([others]))
        row = int(locate_rows(table, a, *others))
        pos = Position(a * 50, others[0] * 50, others=tuple(o * 50 for o in others))
        assert locate(table, pos) == (table, row)
        advice_block, _ = spot(result, pos)
        r0, t, m = _states(block, 0, d)
        assert np.array_equal(advice_block.move(r0, t, m), block.move(r0, t, m))
        rr = np.full(t.shape, row)
        assert np.abs(block.value(r0, t, m) - table.value(rr, t, m)).max() < 1e-13
        assert np.array_equal(block.move(r0, t, m), table.move(rr, t, m))
        assert np.array_equal(block.announcement(r0[:, 0], t[:, 0]), table.announcement(rr[:, 0], t[:, 0]))
        tt = t[:, 0]
        assert np.array_equal(block.taken(np.zeros_like(tt), tt), table.taken(np.full_like(tt, row), tt))
        checked += 1
    assert checked == len(scores) ** players


def test_the_reduction_keeps_the_highest_scores_in_playing_order() -> None:
    """`threatening` (and `leading`, one game of it) keeps the highest scores, a tie to who plays sooner, in
    playing order: checked against the definition written out by hand."""
    rng = np.random.default_rng(3)
    for n in (2, 3, 5, 7):
        for keep in (1, 2, 3):
            others = rng.choice([0, 150, 200, 300, 450], size=(300, n))
            got = np.take_along_axis(others, threatening(others, keep), axis=1)
            for row, pick in zip(others, got):
                best = sorted(sorted(range(n), key=lambda i: (-int(row[i]), i))[:keep])
                want = tuple(int(row[i]) for i in best)
                assert tuple(int(x) for x in pick) == want == leading(tuple(int(x) for x in row), keep)


def test_the_engine_policy_reads_the_row_of_the_two_who_threaten_most() -> None:
    """With four players the engine policy reads the three-player row of the mover against the two leading
    opponents in playing order; with three, the row of both opponents."""
    rules = rules_from_dict(SMALL)
    result = compute(rules, players=3)
    table = policy_of(result)
    policy = OptimalPolicy(rules, seats=table)
    seen: list[tuple[tuple[int, ...], int, int]] = []

    class Spy(OptimalPolicy):
        def spot(self, view):  # type: ignore[no-untyped-def]
            block, row = super().spot(view)
            seen.append((view.scores, view.seat, int(row)))
            return block, row

    for n in (3, 4):
        seen.clear()
        spy = Spy(rules, seats=table)
        play_game(rules, [spy] * n, rng=np.random.default_rng(n))
        assert seen
        for scores, seat, row in seen:
            others = tuple(scores[(seat + i) % n] for i in range(1, n))
            b, c = leading(others, 2)
            assert row == locate_rows(table, scores[seat] // 50, b // 50, c // 50)
    assert policy.seats(4) is table


def test_three_optimal_players_match_the_solve() -> None:
    """Three optimal players on a small ruleset, 30,000 vectorised games: each seat's win rate within 3.5
    standard errors of the solved chance (seeded, so the figure is fixed)."""
    rules = rules_from_dict(SMALL)
    result = compute(rules, players=3)
    res = simulate(SimConfig(rules, ("optimal",) * 3, 30_000, seed=11))
    assert res.engine == "vectorised"
    for rate, se, win in zip(res.win_rate, res.std_error, result.win):
        assert abs(rate - win) < 3.5 * se


def test_the_referee_and_the_vector_engine_agree_with_three_and_four_players() -> None:
    """The referee (engine policy `optimal`) and the vectorised loop play the same policies: their per-seat win
    rates agree within 4 standard errors of the difference, with three and with four players."""
    rules = rules_from_dict(SMALL)
    for seats in (("optimal",) * 3, ("optimal", "threshold:200", "optimal", "threshold:200")):
        vec = simulate(SimConfig(rules, seats, 20_000, seed=5))
        ref = simulate(SimConfig(rules, seats, 2_000, seed=6, engine="referee"))
        assert vec.engine == "vectorised" and ref.engine == "referee"
        for i in range(len(seats)):
            se = np.hypot(vec.std_error[i], ref.std_error[i])
            assert abs(vec.win_rate[i] - ref.win_rate[i]) < 4 * se


def test_others_are_read_in_playing_order() -> None:
    """`view_position` lists the opponents from the next player on."""
    rules = rules_from_dict(SMALL)

    class Grab(OptimalPolicy):
        def should_bank(self, view):  # type: ignore[no-untyped-def]
            assert view_position(view).others == tuple(view.scores[(view.seat + i) % 4] for i in (1, 2, 3))
            return super().should_bank(view)

    play_game(rules, [Grab(rules, seats=policy_of(compute(rules, players=3)))] * 4, rng=np.random.default_rng(1))


@pytest.mark.slow
def test_three_optimal_players_match_the_solve_at_goal_1500() -> None:
    """Three optimal players, goal 1500 (opening 300), 200,000 games: each seat within 3 standard errors."""
    rules = rules_from_dict({"goal": 1500, "opening": 300})
    result = compute(rules, players=3)
    res = simulate(SimConfig(rules, ("optimal",) * 3, 200_000, seed=2))
    for rate, se, win in zip(res.win_rate, res.std_error, result.win):
        assert abs(rate - win) < 3 * se


def test_the_bots_of_a_game_share_one_table() -> None:
    """Every bot of a three-player game reads one policy table (one per bot reserved gigabytes under `standard`)."""
    from cinqmille.app.play import bot_policy

    result = compute(rules_from_dict({"goal": 300, "opening": 100, "end": "exact"}), players=3)
    bots = [bot_policy(result) for _ in range(5)]
    assert len({id(bot.seats(3)) for bot in bots}) == 1
