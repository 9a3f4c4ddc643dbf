"""The solve's own keeps (σ): the kernel records the keep it takes in every roll class, and every reader reads it.

On every state of small rulesets (two and three players) and every roll class
the keep and the move of each reader — the advice (`keep_choices`, `advise`),
the engine's optimal bot, the simulator's `OptimalVec`, the export's keep table
and the turn passes of `dist` (`TurnRows.taken`) — are the keep and the move
the kernel's pass took. The keep the kernel took is checked against the values
(a best keep of its class) and, where every keep of five 1s wins, against its
tie rule (the most points: four 1s, not the instant win).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pytest

from cinqmille.table.locate import offer_options, spot
from cinqmille.table.policy import policy_of
from cinqmille.app import export as ex
from cinqmille.app.advice import advise
from cinqmille.dice import dice_tables, faces_of, legal_keeps
from cinqmille.engine.state import GameView, PlayerState
from cinqmille.policies.optimal import OptimalPolicy
from cinqmille.table.position import Position, PositionError
from cinqmille.rules import Rules, rules_from_dict
from cinqmille.simulation.vecpolicies import OptimalVec
from cinqmille.solver import SolveResult, compute
from cinqmille.solver.choice import block_graph
from cinqmille.table.rows import keep_choices
from cinqmille.table.locate import locate_rows

UNIT = 50
RULESETS = {
    "reach-300": {"goal": 300, "opening": 0},
    "exact-300-open-100": {"goal": 300, "opening": 100, "end": "exact"},
    "prediction-300": {"goal": 300, "opening": 0, "prediction": True},
}
CASES = [(name, 2) for name in RULESETS] + [("reach-300", 3), ("exact-300-open-100", 3)]


@lru_cache(maxsize=None)
def solved(name: str, players: int) -> tuple[Rules, SolveResult, Any]:
    rules = rules_from_dict(RULESETS[name], name)
    result = compute(rules, players=players)
    table = policy_of(result).complete()
    return rules, result, table


def scores_of(table: Any, players: int, r: int) -> tuple[int, ...]:
    """The banked scores (points, the mover first) of row `r` of a table."""
    s = len(table.scores)
    idx = np.unravel_index(r % s ** players, (s,) * players)
    return tuple(int(table.scores[i]) * UNIT for i in idx)


def states(rules: Rules, table: Any) -> list[tuple[int, int, int, int]]:
    """Every (row, turn units, dice rolled, class) of the table whose layer the pass decided, a class of that many
    dice (turn points up to the cap: past it under reach a terminal state, under exact the last before an
    overshoot)."""
    graph = block_graph(table)
    dice = (graph.class_prob > 0).argmax(axis=1) + 1
    out = []
    for r in range(len(table.cap)):
        for t in range(int(table.cap[r]) + 1):
            for c in range(len(graph.class_start)):
                out.append((r, t, int(dice[c]), c))
    return out


def outcome(graph: Any, k: int) -> tuple[int, int, bool]:
    return int(graph.keep_units[k]), int(graph.keep_next[k]), bool(graph.keep_win[k])


def a_roll(rules: Rules, m: int, c: int) -> tuple[int, ...]:
    """The counts of the first roll of `m` dice in class `c`."""
    graph = block_graph_of(rules)
    rolls = np.flatnonzero(graph.roll_class[m - 1] == c)
    return tuple(int(x) for x in dice_tables(rules)[m].counts[rolls[0]])


@lru_cache(maxsize=None)
def block_graph_of(rules: Rules) -> Any:
    class _Block:
        pass

    block = _Block()
    block.rules = rules  # type: ignore[attr-defined]
    return block_graph(block)


@pytest.mark.parametrize("name,players", CASES)
def test_the_kernels_keep_is_a_best_keep_and_five_ones_keep_four(name: str, players: int) -> None:
    """Every keep the pass took is a best keep of its class for the table's values, and where every keep of
    five 1s is worth a win the kernel's tie rule keeps the most points (four 1s), not the instant win."""
    rules, _, table = solved(name, players)
    graph = block_graph(table)
    r = np.repeat(np.arange(len(table.cap)), table.cap + 1)
    t = np.concatenate([np.arange(int(c) + 1) for c in table.cap])
    taken = table.taken(r, t)  # (n, C)
    values = table.keep_values(r, t, graph.keep_units, graph.keep_next, graph.keep_win)  # (n, K)
    top = np.maximum.reduceat(values, graph.class_start, axis=-1)
    assert (np.take_along_axis(values, taken, axis=1) >= top - 1e-9).all()
    five = graph.roll_class[4][dice_tables(rules)[5].roll_index((5, 0, 0, 0, 0, 0))]
    ks = np.arange(graph.class_start[five], graph.class_start[five + 1])
    assert graph.keep_win[ks].any()
    all_win = (values[:, ks] == 1.0).all(axis=1)
    assert all_win.sum() > 0 or rules.banking.exact  # (under exact four 1s overshoot: the win is the one best)
    kept = taken[all_win, five]
    assert not graph.keep_win[kept].any() and (graph.keep_units[kept] == graph.keep_units[ks].max()).all()


@pytest.mark.parametrize("name,players", CASES)
def test_every_reader_takes_the_kernels_keep(name: str, players: int) -> None:
    """On every state and roll class: the advice's first keep, the engine bot's keep, the simulator's keep and
    the turn passes' keep (`taken`) are the keep the kernel took (`TurnRows.keep`)."""
    rules, result, table = solved(name, players)
    graph = block_graph(table)
    todo = states(rules, table)
    r, t, m, c = (np.array(x) for x in zip(*todo))
    kernel = table.keep(r, t, c)
    assert np.array_equal(table.taken(r, t)[np.arange(len(c)), c], kernel)  # dist, expectations
    vec = OptimalVec(rules, table)
    assert np.array_equal(vec.keep(r, np.zeros_like(r), t, c), kernel)  # the simulator
    bot = OptimalPolicy(rules, table if players == 2 else None, seats=table if players > 2 else None)
    for (row, tt, mm, cc), k in zip(todo, kernel):
        want = outcome(graph, int(k))
        counts = a_roll(rules, mm, cc)
        faces = faces_of(counts)
        scores = scores_of(table, players, row)
        block, br = (table, row) if players == 2 else \
            spot(result, Position(scores[0], scores[1], tt * UNIT, mm, others=scores[1:]))  # as the advice reads it
        first = keep_choices(block, br, tt * UNIT, faces)[0]  # the advice's ranking
        assert (0 if first.then == "win" else first.points // UNIT, first.dice if first.then != "win" else
                want[1], first.then == "win") == want, (row, tt, faces)
        keeps = legal_keeps(rules, counts)
        players_ = tuple(PlayerState(score=x, opened=x > 0 or rules.opening == 0) for x in scores)
        view = GameView(rules, 0, players_, tt * UNIT, mm, counts, True, False, False, False, None, 0)
        j = bot.choose_keep(view, keeps)
        got = keeps[j]
        assert (0 if got.win else got.points // UNIT, ((mm - got.size) or rules.dice) if not got.win else want[1],
                got.win) == want, (row, tt, faces)


@pytest.mark.parametrize("name,players", CASES)
def test_advise_and_export_take_the_kernels_keep_and_move(name: str, players: int) -> None:
    """Every keep row of the export (every reachable state whose move is roll, every roll) and, on a sample,
    `advise --roll`'s best keep and `advise`'s move are the kernel's keep and move."""
    rules, result, table = solved(name, players)
    graph = block_graph(table)
    scores = [int(x) * UNIT for x in table.scores]
    if players == 2:
        cols = ex.policy_rows(result, scores, scores)
        keeps = ex.keep_rows(result, cols)
        rows = locate_rows(table, keeps["me"] // UNIT, keeps["opp"] // UNIT)
        others = [keeps["opp"]]
    else:
        cols, keeps = ex.seat_tables(result, scores, [scores] * (players - 1))
        assert keeps is not None
        names = ex.opponent_columns(players)
        others = [keeps[n] for n in names]
        rows = locate_rows(table, keeps["me"].astype(np.int64) // UNIT, *(o.astype(np.int64) // UNIT for o in others))
    t = keeps["turn"].astype(np.int64) // UNIT
    m = keeps["dice"].astype(np.int64)
    counts = np.array([[str(x).count(str(f)) for f in range(1, 7)] for x in keeps["rolled"]])
    c = np.array([graph.roll_class[mm - 1][dice_tables(rules)[mm].roll_index(tuple(cc))] for mm, cc in zip(m, counts)])
    k = table.keep(rows, t, c)
    then = np.array(ex.THEN)[keeps["then"]]
    won = then == "win"
    assert np.array_equal(won, graph.keep_win[k])
    assert np.array_equal(np.where(won, 0, keeps["points"] // UNIT), graph.keep_units[k])
    assert np.array_equal(np.where(won, graph.keep_next[k], keeps["left"]), graph.keep_next[k])
    rng = np.random.default_rng(3)
    for i in rng.choice(len(k), size=min(60, len(k)), replace=False):
        opp = tuple(int(o[i]) for o in others)
        position = Position(int(keeps["me"][i]), opp[0], int(keeps["turn"][i]), int(m[i]),
                            others=opp if players > 2 else None)
        best = advise(result, position, roll=faces_of(tuple(int(x) for x in counts[i]))).best
        assert (best.then == "win") == bool(graph.keep_win[k[i]])
        if best.then != "win":
            assert (best.points // UNIT) == graph.keep_units[k[i]]
        move = advise(result, Position(int(keeps["me"][i]), opp[0], int(keeps["turn"][i]), int(m[i]),
                                       others=opp if players > 2 else None)).best
        assert (move.action == "bank") == bool(table.move(rows[i], t[i], m[i]) == 0)


def test_take_overs_are_the_solves() -> None:
    """On every state of a take-over ruleset, the table, the simulator and `offer_options` (the advice) take
    over exactly where the solve's offers chose rolling over starting afresh (``offers > W``)."""
    rules = rules_from_dict({"goal": 600, "opening": 150, "take_over": True}, "take-600")
    result = compute(rules)
    table = policy_of(result).complete()
    assert result.offers is not None and table.take_v is not None
    s, d = len(table.scores), rules.dice
    vec = OptimalVec(rules, table)
    taken = advised = 0
    for r in range(len(table.cap)):
        ia, ib = (r // s) % s, r % s
        a, b = int(table.scores[ia]), int(table.scores[ib])
        t = np.arange(min(int(table.cap[r]) + 1, result.offers.shape[3]))[:, None]
        m = np.arange(1, d + 1)[None, :]
        want = result.offers[0, a, b, t, m - 1] > result.tables[0, a, b]
        assert np.array_equal(table.takes_over(r, t, m), want)
        assert np.array_equal(vec.take_over(np.full(t.shape, r), np.zeros(t.shape, dtype=np.int64), t, m), want)
        taken += int(want.sum())
        for tt, mm in zip(*np.nonzero(want[1:])):  # (an offer has points): a sample, read as the advice reads it
            if (tt + mm) % 5:
                continue
            position = Position(a * UNIT, b * UNIT, offer=((int(tt) + 1) * UNIT, int(mm) + 1))
            try:
                options = offer_options(result, position)
            except PositionError:  # an offer no bank leaves (the table has rows for every turn state)
                continue
            assert options[0].action == "take_over"
            advised += 1
    assert taken > 0 and advised > 0
