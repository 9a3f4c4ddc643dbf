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

A bank moves to a pair with a larger sum ``a + b`` (scores fall only under
``zero_turns``, below): pairs are solved level by level in decreasing order of
their sum. Inside a level, a bust links ``(a, b)`` to its mirror ``(b, a)``
only. Each level is solved by `level.solve_level`, the one level solver of
every table size: for a fixed policy the turn value is affine in the bust
value, ``W(a,b) = A + B L(a,b)`` (``B`` the chance the turn ends in a bust),
and a Newton (policy-iteration) step solves the 2-cycle

.. math::  W_p = A_p + B_p (1 - W_q), \qquad W_q = A_q + B_q (1 - W_p)

exactly, repeated with the policy re-chosen at the new ``L`` until the
Bellman residual is below ``tol`` for every pair of the level.

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

``zero_turns`` (a fall to zero or by points, `turns.counted`): the rows gain
the scoreless-turn counters ``(z_a, z_b)`` of both players, as the kind axis of
the tables, ``W[z_a * count + z_b, a, b]``. A bank clears the banker's counter:
it moves to ``(z_b, 0, b, a + t)``; a scoreless turn (a bust, a fault, an
overshoot, a wrong announcement) moves to ``(z_b, z_a + 1, b, a)``, or, when
``z_a + 1 = count``, to ``(z_b, 0, b, f(a))`` with ``f(a) = 0`` or
``max(0, a - points)`` (scores never fall below 0: the referee's reading,
docs/engine.md). Inside a level a scoreless turn leads to one row of the same
level: the rows form a functional graph (2-cycles without counters, chains and
longer cycles with them), whose linear system `level.newton_values` solves
exactly (in closed form on cycles, by a sparse solve otherwise). A fall leads to a smaller sum,
solved later in the sweep: its value is read as the previous sweep left it,
and the sweeps are repeated (Gauss-Seidel over the levels) until no
turn-start value changes by more than ``tol``.

Rules that need a score history (crosses, struck-out scores, knock-back and
deadly ties, ``zero_turns`` to ``previous``), and ``zero_turns`` together with a
last round, take-over offers or a final stretch, are not in this state: the
solver then solves the relaxation without them and says so (``exact = False``
and the list of assumptions).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..rules import Rules
from .grid import ScoreGrid
from .kernel import TurnKernel
from .cycle import LevelTurns
from .level import find_rows, guess_above, solve_level
from .seats import passed
from .turns import GameModel, counted

Progress = Callable[[float], None]
#: Most top-down sweeps of the levels under a counted `zero_turns` (a fall leads back to smaller sums).
MAX_SWEEPS = 400


@dataclass(frozen=True, slots=True)
class LevelStats:
    """Work done by the two-player driver."""

    levels: int
    passes: int
    states: int  # distinct turn states (of one sweep)
    residual: float
    sweeps: int = 1  # top-down sweeps of the levels (more than one only when scores can fall)


def relaxations(rules: Rules) -> tuple[str, ...]:
    """What the two-player solver assumes away for `rules` (empty when it is exact)."""
    out = []
    for name in rules.history_rules:
        out.append(f"{name}: needs a score history; solved as if the rule were off")
    if rules.zero_turns is not None and rules.zero_turns.to != "previous" and not counted(rules):
        out.append("zero_turns: the scoreless-turn counters are kept in the state only without a last round, "
                   "take-over or final stretch; solved as if the rule were off")
    if rules.prediction and rules.rule_of_50:
        out.append("prediction with the rule of 50: announcements past the goal are not considered")
    if rules.prediction and rules.last_round:
        out.append("prediction with a last round: the last turn is played without announcing")
    return tuple(out)


def level_pairs(grid: ScoreGrid, total: int) -> tuple[np.ndarray, np.ndarray]:
    """The pairs (a, b) of valid scores with a + b = total, sorted by a ascending."""
    a = grid.scores[(grid.scores <= total)]
    b = total - a
    ok = np.isin(b, grid.scores)  # `ScoreGrid.valid`: the valid scores are the grid's
    return a[ok], b[ok]


def level_rows(model: GameModel, total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows (seat, a, b) of one level, sorted by cap descending (as the kernel wants)."""
    a, b = level_pairs(model.grid, total)
    seat = np.repeat(np.arange(model.seats), len(a))
    a, b = np.tile(a, model.seats), np.tile(b, model.seats)
    caps = model.caps(seat, a)
    order = np.argsort(-caps, kind="stable")
    return seat[order], a[order], b[order]


def level_turns(model: GameModel, seat: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray) -> LevelTurns:
    """What `level.solve_level` needs of one level's rows (sorted by cap descending).

    A scoreless turn leads to a row of the same level (`GameModel.bust_next`),
    or under a counted `zero_turns` fall, out of it: to a smaller sum, whose
    value is read from `w` as the previous sweep left it.
    """
    caps = model.caps(seat, a)
    nxt = model.bust_next(seat, a, b)
    g = model.grid.goal
    succ = find_rows((seat * g + a) * g + b, (nxt[0] * g + nxt[1]) * g + nxt[2])  # rows (seat, a, b) as numbers
    outside = np.where(succ >= 0, 0.0, passed(np.nan_to_num(w[nxt], nan=0.5)))
    guess = np.empty((len(a), 1))
    for k in np.unique(seat):
        sel = seat == k
        guess[sel] = guess_above(model.grid.scores, model.grid.goal, np.stack([a[sel], b[sel]], axis=1),
                                 w[int(k)][..., None])
    return LevelTurns(a, caps, model.level_bank(seat, a, b, int(caps.max()), w), succ, outside[:, None], guess,
                      model.terminal_bank(seat, a, b))


def solve_game(rules: Rules, tol: float = 1e-12, progress: Progress | None = None,
               kernel: TurnKernel | None = None, pending: tuple[int, ...] = (),
               base: tuple[np.ndarray, np.ndarray | None] | None = None,
               ) -> tuple[np.ndarray, np.ndarray | None, LevelStats]:
    """Turn-start win probabilities ``W[a, b]`` (units of 50, NaN for impossible scores), the take-over
    offer tables (None without take_over) and the work done.

    Under `last_round` the table has a leading seat axis: ``W[seat, a, b]``, seat 0
    being the player who opens each round.

    `pending` and `base` extend a solved table (`base`: its ``W`` and offers) to
    the starting scores below the opening (`pending`, units; `solver.result`):
    only the rows where a player holds one are solved, by the same levels, the
    others read from `base` (no state of the table leads to a pending one).
    """
    model = GameModel(rules, kernel, pending)
    grid = model.grid
    g = grid.goal
    w = np.full((model.seats, g, g), np.nan)
    extra = np.asarray(grid.pending, dtype=np.int64)
    if base is not None:
        w[:] = base[0] if base[0].ndim == 3 else base[0][None]
        if model.offers is not None and base[1] is not None:
            model.offers[:] = base[1]
    top = 2 * (g - 1)
    levels = passes = states = 0
    worst = 0.0
    total_pairs = len(grid.scores) ** 2 - (len(grid.scores) - len(extra)) ** 2 * (base is not None)
    shown = 0.0
    for sweep in range(MAX_SWEEPS):
        before = w.copy() if model.counters else None
        done = 0
        for total in range(top, -1, -1):
            seat, a, b = level_rows(model, total)
            if base is not None:
                keep = np.isin(a, extra) | np.isin(b, extra)
                seat, a, b = seat[keep], a[keep], b[keep]
            if not len(a):
                continue
            solved = solve_level(model.kernel, level_turns(model, seat, a, b, w), tol)
            values, res, n = solved.values[:, 0], solved.residual, solved.passes
            w[seat, a, b] = values
            model.record_offers(seat, a, b, model.caps(seat, a), values, w)
            levels += 1
            passes += n
            if not sweep:
                states += int((model.caps(seat, a) + 1).sum()) * rules.dice
            worst = max(worst, res)
            done += len(a) // model.seats
            if progress is not None:
                shown = max(shown, (sweep + done / total_pairs) / (sweep + 1.5 if before is not None else 1))
                progress(min(shown, 1.0))
        if before is None:
            break
        # a fall leads to a smaller sum, solved after: sweep again until the tables stop changing
        change = float(np.nanmax(np.abs(w - before))) if sweep else np.inf
        if change <= tol:
            worst = max(worst, change)
            break
    else:
        worst = max(worst, change)
    stats = LevelStats(levels=levels, passes=passes, states=states, residual=worst, sweeps=sweep + 1)
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
        l0 = model.bust_value(seat, a, b, w)
        bank = model.bank(seat, a, b, int(caps.max()), w)
        big_a, big_b, _, _ = model.kernel.run(a, caps, bank, l0, term_bank=model.terminal_bank(seat, a, b))
        worst = max(worst, float(np.abs(big_a + big_b * l0 - w[seat, a, b]).max()))
        model.record_offers(seat, a, b, caps, w[seat, a, b], w)
    return worst
