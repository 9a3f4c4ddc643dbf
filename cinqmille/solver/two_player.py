r"""The exact win-maximising solver for two players.

Model
=====
Points are counted in units of 50. A *position* is ``(a, b, t, m)``: the banked
score ``a`` of the player to move, the opponent's ``b`` (0 = not opened when the
ruleset has an opening), the turn points ``t`` and the ``m`` dice in hand.
``W(a, b)`` is the probability that the player to move wins from the start of
a turn (``t = 0``, ``m = D``), both players playing to win.

Actions: after a roll, a legal keep ``k`` (points ``p_k``, dice ``m_k`` in hand
after, ``D`` after a full hand); then bank or roll. Banking is allowed when the
rules allow it (opening, ``min_bank``, full hands under ``hot_dice``).

Bellman equations, with ``L(a, b) = 1 - W(b, a)`` the value of a bust (the dice
pass; scores unchanged):

.. math::

    V(a,b,t,m) &= \max\big(\mathrm{Bank}(a,b,t,m),\ \mathrm{Roll}(a,b,t,m)\big)\\
    \mathrm{Roll}(a,b,t,m) &= P_\mathrm{bust}(m)\,L(a,b)
        + \sum_{r} P(r) \max_{k \in K(r)} V(a,b,t+p_k,m_k)\\
    \mathrm{Bank}(a,b,t,m) &= 1 - W(b, a + t) \quad (\text{or } 1 \text{ when } a + t \text{ wins})\\
    W(a,b) &= \mathrm{Roll}(a,b,0,D)

A keep that wins at once is worth 1; under ``end = exact`` a keep past the goal
is an overshoot, worth ``L``. ``final_stretch`` (stopping short counts for
nothing: worth ``L``; the cap moves the new score to ``from``) and
``rule_of_50`` (a fault is worth ``L``) change only ``Bank``.

How the cyclic game is solved
=============================
Within a turn the points only grow, so for a fixed ``L`` a turn is one
backward pass over ``t`` (``TurnKernel``). Past a cap (every bank wins under
``reach``; every keep overshoots under ``exact``) the states are terminal.

Scores never fall in the rulesets solved exactly, so a bank moves to a pair
with a larger sum ``a + b``: pairs are solved level by level in decreasing
order of their sum. Inside a level, a bust links ``(a, b)`` to its mirror
``(b, a)`` only. For a fixed policy the turn value is affine in the bust value,
``W(a,b) = A + B L(a,b)``, with ``B`` the chance the turn ends in a bust; the
pass returns ``(A, B)`` and the 2-cycle

.. math::  W_p = A_p + B_p (1 - W_q), \qquad W_q = A_q + B_q (1 - W_p)

is solved exactly: ``W_p = (A_p + B_p (1 - A_q - B_q)) / (1 - B_p B_q)``.
This is a Newton (policy-iteration) step on the piecewise-linear fixed point;
it is repeated with the policy re-chosen at the new ``L`` until the Bellman
residual ``|W_p - (A_p + B_p L_p)|`` is below ``tol`` for every pair of the
level (a plain value-iteration step is taken if Newton stalls).

Stopping rule: a level is done when its residual is below ``tol`` (default
1e-12); the residual reported is the largest over all levels. It is the exact
Bellman residual of every state, since the other states of a turn are computed
exactly from ``L`` and the values of larger sums.

Extra state: last round and take-over
=====================================
``take_over``: a bank of ``t`` points with ``m`` dice in hand offers the opened
opponent a choice at the start of his turn, ``O(x, y, t, m) = max(W(x, y),
Roll(x, y, t, m))`` (taking over means rolling first). The bank is then worth
``1 - O(b, a + t, t, m)``. ``O`` of a pair is recorded when its level is solved
(one more pass with the final bust value), before any smaller sum needs it.

``last_round`` (two players): the seat matters, so every table has a seat axis,
``W[s, a, b]`` with seat 0 opening each round, and a bust or bank hands the dice
to the other seat: the 2-cycle links ``(s, a, b)`` and ``(1 - s, b, a)``. A bank
of seat 1 that reaches the goal wins; a bank of seat 0 that reaches ``new``
points is worth ``1 - Q(b, new, t, m)``, the chance that seat 1 passes ``new``
(``reach``) or reaches the goal exactly (``exact``) in one last turn, from
scratch or by taking over (``LastTurn``, one table for every target since the
chance depends only on the points still needed). Under ``reach`` seat 0 may
roll on past the goal: its states are real until ``Q`` stops changing (within
1e-15; under ``five_ones = "win"`` it settles at the chance of five 1s), and
are terminal past that, with bank values ``1 - Q`` in place of 1.

``prediction``: before rolling two dice the player may announce ``v``; the
roll is then worth ``sum_{r: score(r) = v} P(r) max_k V(a, b, 2 (t + p_k), m_k)
+ (1 - P(v)) L`` and ``Roll(a, b, t, 2)`` takes the best of rolling plainly
and every announcement (``Prediction``). Doubling only raises ``t``, so a turn
is still one backward pass. With a last round the last turn is valued without
announcements (a doubled turn depends on the points set aside, not only on
the points still needed, so the one-table-for-every-target `LastTurn` does not
apply): a stated relaxation.

Rules that need a score history (crosses, struck-out scores, knock-back and
deadly ties, ``zero_turns`` to ``previous``) and ``zero_turns`` counters
(scores that fall break the order of the levels) are not in this state: the
solver then solves the relaxation without them and says so (``exact = False``
and the list of assumptions).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..rules import Rules
from .grid import ScoreGrid
from .kernel import BankTable, TurnKernel
from .seats import passed
from .turns import GameModel

Progress = Callable[[float], None]


@dataclass(frozen=True, slots=True)
class LevelStats:
    """Work done by the two-player driver."""

    levels: int
    passes: int
    states: int
    residual: float


def relaxations(rules: Rules) -> tuple[str, ...]:
    """What the two-player solver assumes away for `rules` (empty when it is exact)."""
    out = []
    for name in rules.history_rules:
        out.append(f"{name}: needs a score history; solved as if the rule were off")
    if rules.zero_turns is not None and rules.zero_turns.to != "previous":
        out.append("zero_turns: scoreless-turn counters are not in the state; solved as if the rule were off")
    if rules.prediction and rules.rule_of_50:
        out.append("prediction with the rule of 50: announcements past the goal are not considered")
    if rules.prediction and rules.last_round:
        out.append("prediction with a last round: the last turn is played without announcing")
    return tuple(out)


def level_pairs(grid: ScoreGrid, total: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (a, b) of valid scores with a + b = total, sorted by a ascending."""
    a = grid.scores[(grid.scores <= total)]
    b = total - a
    ok = np.array([grid.valid(int(x)) for x in b], dtype=bool) if len(a) else np.zeros(0, bool)
    return a[ok], b[ok]


def level_rows(model: GameModel, total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows (seat, a, b) of one level, sorted by cap descending (as the kernel wants)."""
    a, b = level_pairs(model.grid, total)
    seat = np.repeat(np.arange(model.seats), len(a))
    a, b = np.tile(a, model.seats), np.tile(b, model.seats)
    caps = model.caps(seat, a)
    order = np.argsort(-caps, kind="stable")
    return seat[order], a[order], b[order]


def _guess(grid: ScoreGrid, w: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A starting estimate of W[a, b], extrapolated from the solved levels above."""
    g = w.shape[0]
    above = np.append(grid.scores, [g, g])
    nxt = np.searchsorted(grid.scores, np.stack([a, b]), side="right")
    up1, up2 = above[nxt], above[nxt + 1]
    guess = np.full(len(a), np.nan)
    for x1, y1, x2, y2 in ((a, up1[1], a, up2[1]), (up1[0], b, up2[0], b)):
        ok = np.isnan(guess) & (x1 < g) & (y1 < g)
        near = np.full(len(a), np.nan)
        near[ok] = w[x1[ok], y1[ok]]
        far = np.full(len(a), np.nan)
        ok2 = ok & (x2 < g) & (y2 < g)
        far[ok2] = w[x2[ok2], y2[ok2]]
        step = np.where(np.isnan(far), 0.0, near - far)
        guess = np.where(ok, near + step, guess)
    return np.clip(np.where(np.isnan(guess), 0.5, guess), 0.0, 1.0)


def solve_level(model: GameModel, seat: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray,
                tol: float, max_iter: int = 60) -> tuple[np.ndarray, float, int]:
    """Solve the rows of one level (sorted by cap descending); their turn-start values, residual, passes."""
    kernel, grid = model.kernel, model.grid
    p = len(a)
    caps = model.caps(seat, a)
    other = model.other(seat)
    pos = {(int(s), int(x), int(y)): i for i, (s, x, y) in enumerate(zip(seat, a, b))}
    mirror = np.array([pos[(int(o), int(y), int(x))] for o, x, y in zip(other, a, b)])
    bank = model.bank(seat, a, b, int(caps.max()), w)
    term = model.terminal_bank(seat, a, b)
    l0 = np.empty(p)
    for s in range(model.seats):
        sel = seat == s
        l0[sel] = passed(_guess(grid, w[int(model.other(np.array(s)))], b[sel], a[sel]))
    big_a, big_b, step = np.zeros(p), np.zeros(p), np.zeros(p)
    values = np.zeros(p)
    previous = np.full(p, np.inf)
    residual = 0.0
    passes = 0
    rows = np.arange(p)  # rows still iterating; a row and its mirror leave together
    for it in range(max_iter):
        if not len(rows):
            break
        sub = BankTable(bank.a[rows], bank.b[rows])
        sub_term = None if term is None else (term[0][rows], term[1][rows])
        big_a[rows], big_b[rows], _, _ = kernel.run(a[rows], caps[rows], sub, l0[rows], term_bank=sub_term)
        passes += 1
        here = big_a[rows] + big_b[rows] * l0[rows]
        res = np.abs(here - passed(l0[mirror[rows]]))
        qa, qb = big_a[mirror[rows]], big_b[mirror[rows]]
        denom = 1.0 - big_b[rows] * qb
        newton_ok = (it == 0) | ((it < max_iter // 2) & (res < previous[rows] * 0.999))
        safe = newton_ok & (denom > 1e-15)
        newton = (big_a[rows] + big_b[rows] * (1.0 - qa - qb)) / np.where(safe, denom, 1.0)
        step[rows] = np.where(safe, newton, here)  # else a plain value-iteration step
        new_l0 = passed(step[mirror[rows]])
        # Each turn value is convex in its bust value (a max of affine functions), so the
        # Bellman residual at the new point is at most the change of L: accept the step then.
        bound = np.abs(new_l0 - l0[rows])
        by_bound = safe & (bound <= tol)
        by_res = res <= tol
        # a row and its mirror finish together, on the same criterion, so their values agree
        flag_bound = np.zeros(p, dtype=bool)
        flag_res = np.zeros(p, dtype=bool)
        flag_bound[rows], flag_res[rows] = by_bound, by_res
        both_bound = (flag_bound & flag_bound[mirror])[rows]
        both_res = (flag_res & flag_res[mirror])[rows] & ~both_bound
        finished = both_bound | both_res
        values[rows] = np.where(both_bound, step[rows], here)
        if finished.any():
            residual = max(residual, float(np.where(both_bound, bound, res)[finished].max()))
        l0[rows] = np.where(finished, l0[rows], new_l0)
        previous[rows] = res
        rows = rows[~finished]
    else:
        if len(rows):
            residual = max(residual, float(previous[rows].max()))
    return values, residual, passes


def solve_game(rules: Rules, tol: float = 1e-12, progress: Progress | None = None,
               kernel: TurnKernel | None = None) -> tuple[np.ndarray, np.ndarray | None, LevelStats]:
    """Turn-start win probabilities ``W[a, b]`` (units of 50, NaN for impossible scores), the take-over
    offer tables (None without take_over) and the work done.

    Under `last_round` the table has a leading seat axis: ``W[seat, a, b]``, seat 0
    being the player who opens each round.
    """
    model = GameModel(rules, kernel)
    grid = model.grid
    g = grid.goal
    w = np.full((model.seats, g, g), np.nan)
    top = 2 * (g - 1)
    levels = passes = states = 0
    worst = 0.0
    total_pairs = len(grid.scores) ** 2
    done = 0
    for total in range(top, -1, -1):
        seat, a, b = level_rows(model, total)
        if not len(a):
            continue
        values, res, n = solve_level(model, seat, a, b, w, tol)
        w[seat, a, b] = values
        model.record_offers(seat, a, b, model.caps(seat, a), values, w)
        levels += 1
        passes += n
        states += int((model.caps(seat, a) + 1).sum()) * rules.dice
        worst = max(worst, res)
        done += len(a) // model.seats
        if progress is not None:
            progress(done / total_pairs)
    stats = LevelStats(levels=levels, passes=passes, states=states, residual=worst)
    return (w[0] if model.seats == 1 else w), model.offers, stats


def bellman_residual(rules: Rules, w: np.ndarray, kernel: TurnKernel | None = None) -> float:
    """The largest ``|W(a, b) - Roll(a, b, 0, D)|`` over every row, each turn evaluated afresh from `w`.

    An independent check of a solved table: one backward pass per level with the
    bust values read from the table, no iteration (take-over offers are rebuilt
    level by level from the table itself).
    """
    model = GameModel(rules, kernel)
    w = w if w.ndim == 3 else w[None]
    worst = 0.0
    for total in range(2 * (model.grid.goal - 1), -1, -1):
        seat, a, b = level_rows(model, total)
        if not len(a):
            continue
        caps = model.caps(seat, a)
        l0 = passed(w[model.other(seat), b, a])
        bank = model.bank(seat, a, b, int(caps.max()), w)
        big_a, big_b, _, _ = model.kernel.run(a, caps, bank, l0, term_bank=model.terminal_bank(seat, a, b))
        worst = max(worst, float(np.abs(big_a + big_b * l0 - w[seat, a, b]).max()))
        model.record_offers(seat, a, b, caps, w[seat, a, b], w)
    return worst
