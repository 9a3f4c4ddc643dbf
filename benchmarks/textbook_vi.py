"""A plain textbook value iteration over every state, the baseline the solver is measured against.

Every sweep updates all states ``(a, b, t, m)`` at once (Jacobi), vectorised
with numpy over the score pairs, until the largest change is below `tol`.
It knows nothing of sum levels, the bust 2-cycle or terminal states.
"""

from __future__ import annotations

import time

import numpy as np

from cinqmille.rules import Rules
from cinqmille.solver.grid import ScoreGrid
from cinqmille.solver.keeps import build_keep_graph


def textbook_value_iteration(rules: Rules, tol: float = 1e-9, max_sweeps: int = 100_000):
    """Turn-start values W[a, b] (units), the number of sweeps and the seconds taken."""
    start = time.perf_counter()
    grid = ScoreGrid.of(rules)
    g = build_keep_graph(rules)
    d, goal = rules.dice, grid.goal
    scores = grid.scores
    a = np.repeat(scores, len(scores))
    b = np.tile(scores, len(scores))
    p = len(a)
    period = 2 if rules.rule_of_50 else 1
    tmax = int(grid.cap(scores).max())
    tpad = tmax + g.max_units + period + 1
    last = tpad - 1
    exact = rules.end == "exact"
    v = np.full((p, tpad, d), 0.5)
    w = np.full((goal, goal), np.nan)
    mirror_rows = np.searchsorted(scores, b) * len(scores) + np.searchsorted(scores, a)
    targets = np.arange(tpad)[:, None] + g.keep_units[None, :]
    folded = np.where(targets > last, last - (targets - last) % period, targets)
    over = targets > last
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        w[a, b] = v[:, 0, d - 1]
        bank = ScoreGrid.bank_table(grid, a, b, last, w)
        bust = 1.0 - v[mirror_rows, 0, d - 1]
        flat = np.concatenate([v.reshape(p, -1), np.ones((p, 1)), bust[:, None]], axis=1)
        win_slot, bust_slot = tpad * d, tpad * d + 1
        new = np.empty_like(v)
        for t in range(tpad):
            idx = folded[t] * d + g.keep_next - 1
            if exact:
                idx = np.where(over[t] | (a[:, None] + targets[t][None, :] > goal), bust_slot, idx[None, :])
            else:
                idx = np.broadcast_to(idx, (p, len(idx)))
            idx = np.where(g.keep_win[None, :], win_slot, idx)
            gathered = np.take_along_axis(flat, idx, axis=1)
            best = np.maximum.reduceat(gathered, g.class_start, axis=1)
            roll = best @ g.class_prob + g.bust_prob[None, :] * bust[:, None]
            bank_value = bank.a[:, t] + bank.b[:, t] * bust[:, None]
            new[:, t] = np.maximum(bank_value, roll)
        change = float(np.abs(new - v).max())
        v = new
        if change < tol:
            break
    w[a, b] = v[:, 0, d - 1]
    return w, sweeps, time.perf_counter() - start
