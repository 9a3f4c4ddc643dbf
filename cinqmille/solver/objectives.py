"""The one-player objectives: `expected` points of one turn, the `average` of a long game, the `race` to the goal.

expected
    ``E(t, m) = max(t if banking is allowed, sum_r P(r) max_k E(t + p_k, m_k))``,
    a bust worth 0 and an instant win worth the goal in points; solved for an
    opened player (``min_bank``) and one not yet opened (``opening``). Goal and
    end-of-game rules do not enter a single turn. Turn totals past
    ``EXPECTED_SPAN`` times the goal are taken as banked at once (a must-roll
    full hand there as rolled once), an approximation whose error is below the
    chance of such a turn.
average
    the most points per turn over a long game, when the scoreless-turn counter
    ``z`` of `zero_turns` (``count`` turns in a row cost ``P`` points, and the
    count starts again) carries from turn to turn: an average-reward MDP over
    the counter values ``z = 0 .. count - 1``, with a policy for each. With the
    relative values ``h`` (``h(0) = 0``) and the gain ``g`` (the long-run mean
    points per turn), its optimality equations are
    ``h(z) + g = V(b_z)``: the turn of `expected` whose bank of ``t`` is worth
    ``t + h(0) = t`` and whose scoreless end is worth ``b_z = h(z + 1)``, or
    ``-P + h(0) = -P`` for the turn that makes the count. ``V`` is convex and
    increasing with slope below 1, so for a given ``g`` the ``h`` follow by
    back-substitution from ``z = count - 1`` down, and ``g`` is the root of
    ``h(0) = 0`` (found by `brentq`, residual stated). Without `zero_turns` it
    is ``V(0)``, the `expected` turn. A long game is far from a score of 0, so
    a penalty is never cut by the floor at 0; the player has opened.
race
    ``R(s)``: the minimum expected number of turns for one player alone to go
    from score ``s`` to the goal, with every banking and end rule. For a fixed
    policy the turn is affine in the value of a scoreless turn, ``-R(s)``; the
    fixed point ``R(s) = 1 + A + B R(s)`` is solved by Newton steps, scores in
    decreasing order (a bank only raises the score). `objective_rows.race_rows` gives the
    race policy's turn states as a `policy.TurnRows` block, one row per score,
    from the same kernel pass at the solved ``R``, so that its decisions are
    read as the policy table's are (`TurnRows.move`, `TurnRows.keep`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.bank import UNIT, BankRules
from .grid import ScoreGrid
from .kernel import TurnKernel
from .keeps import KeepGraph, backup, build_keep_graph, rolled

EXPECTED_SPAN = 4


def expected_turn(rules: Rules, graph: KeepGraph | None = None, bust: float = 0.0) -> np.ndarray:
    """``E[opened, t, m-1]`` in points: the best expected points of the rest of a turn, a scoreless end worth `bust`."""
    g = graph or build_keep_graph(rules)
    br = BankRules.of(rules)
    d = rules.dice
    top = EXPECTED_SPAN * br.goal
    tpad = top + g.max_units + 1
    out = np.zeros((2, top + 1, d))
    t_all = np.arange(tpad)
    m = np.arange(1, d + 1)
    idx_base = g.keep_units * d + (g.keep_next - 1)
    for opened in (0, 1):  # banked 0 (not opened, if there is an opening) or the smallest opened score
        allowed = br.allowed(opened * br.opened_from, t_all[:, None], m)
        # past the span: bank at once (a must-roll full hand is rolled once, then banked)
        value = np.repeat((t_all * float(UNIT))[:, None], d, axis=1)
        must = ~br.hand_ok(m)
        value[:, must] = value[:, must] * (1.0 - g.bust_prob[d - 1]) + g.bust_prob[d - 1] * bust
        for t in range(top, -1, -1):
            gathered = np.where(g.keep_win, t * UNIT + float(rules.goal), value.reshape(-1)[idx_base + t * d])
            roll = backup(g, gathered, bust)
            value[t] = np.where(allowed[t], np.maximum(t * UNIT, roll), roll)
        out[opened] = value[: top + 1]
    return out


@dataclass(frozen=True, slots=True)
class AverageTurn:
    """The `average` objective: the gain, each counter's relative value and bust value, and the turn tables."""

    gain: float  # long-run mean points per turn
    relative: tuple[float, ...]  # h(z), h(0) = 0
    bust: tuple[float, ...]  # b_z: what a scoreless turn from counter z leaves, relative to h(0)
    tables: np.ndarray  # E[z, t, m-1] in points: the turn of counter z, banks worth t, a scoreless end b_z
    residual: float  # |h(0)| at the gain found


def average_counters(rules: Rules) -> tuple[int, int]:
    """(count, penalty in points) of the scoreless-turn rule as the `average` objective reads it ((1, 0) without it).

    A fall to zero or to the previous score depends on the score, which a long game
    does not have: refused.
    """
    zero = rules.zero_turns
    if zero is None:
        return 1, 0
    if not isinstance(zero.to, int):
        raise CinqmilleError(f'--objective average: zero_turns.to must be a number of points (a fall to '
                             f'"{zero.to}" depends on the score, which a long game does not have)')
    return zero.count, -zero.to


def average_turn(rules: Rules, graph: KeepGraph | None = None, tol: float = 1e-12) -> AverageTurn:
    """The `average` objective solved exactly: the gain g (points per turn) and the policy of each counter value."""
    g = graph or build_keep_graph(rules)
    count, penalty = average_counters(rules)
    d = rules.dice
    memo: dict[float, float] = {}

    def start(bust: float) -> float:
        if bust not in memo:
            memo[bust] = float(expected_turn(rules, g, bust)[1, 0, d - 1])
        return memo[bust]

    def relative(gain: float) -> list[float]:
        """h(0..count-1) for a trial gain, by back-substitution from the turn that makes the count."""
        h = [0.0] * count
        nxt = -float(penalty)
        for z in range(count - 1, -1, -1):
            h[z] = start(nxt) - gain
            nxt = h[z]
        return h

    high = start(0.0)  # no penalty can raise the gain above the plain turn's value
    low = start(-float(penalty)) if penalty else high  # nor lower it below every scoreless turn's penalty
    if high - low > tol:
        # lazy: start-up time (SciPy only where a level needs it)
        from scipy.optimize import brentq  # imported here: SciPy's optimiser costs a third of a second to import

        gain = float(brentq(lambda x: relative(x)[0], low - 1.0, high + 1.0, xtol=tol, rtol=1e-15))
    else:
        gain = high
    h = relative(gain)
    busts = tuple(h[z + 1] if z + 1 < count else -float(penalty) for z in range(count))
    tables = np.stack([expected_turn(rules, g, b)[1] for b in busts])
    return AverageTurn(gain, tuple(h), busts, tables, abs(h[0]))


def race_turns(rules: Rules, tol: float = 1e-12, kernel: TurnKernel | None = None,
               max_iter: int = 100) -> tuple[np.ndarray, float]:
    """``R[s]`` (units of 50, NaN for impossible scores): fewest expected turns to the goal; and the residual."""
    grid = ScoreGrid.of(rules)
    kernel = kernel or TurnKernel(rules, win_value=0.0)
    goal = grid.goal
    remaining = np.full(goal, np.nan)
    start_value = np.full((goal, goal), np.nan)
    worst = 0.0
    for s in grid.scores[::-1]:
        a = np.array([s])
        caps = grid.cap(a)
        bank = grid.bank_table(a, np.array([0]), int(caps.max()), start_value, win_value=0.0)
        u = np.array([-float(np.nanmax(np.append(remaining, 1.0)))])  # -R(s) guess
        res = np.inf
        for _ in range(max_iter):
            big_a, big_b, _, _ = kernel.run(a, caps, bank, u)
            value = -1.0 + big_a + big_b * u
            res = float(abs(value - u)[0])
            if res <= tol * max(1.0, abs(float(u[0]))):
                break
            u = np.where(big_b < 1.0, (big_a - 1.0) / (1.0 - big_b), value)
        worst = max(worst, res)
        remaining[s] = -float(u[0])
        start_value[0, s] = 1.0 + remaining[s]
    return remaining, worst
