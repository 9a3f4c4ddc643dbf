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
    decreasing order (a bank only raises the score). `race_rows` gives the
    race policy's turn states as a `policy.TurnRows` block, one row per score,
    from the same kernel pass at the solved ``R``, so that its decisions are
    read as the policy table's are (`TurnRows.move`, `TurnRows.keep`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.bank import UNIT, BankRules
from .grid import ScoreGrid
from .kernel import TurnKernel
from .keeps import KeepGraph, backup, best_keeps, build_keep_graph, rolled
from .rows import TurnRows

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


def race_rows(rules: Rules, remaining: np.ndarray | None = None, kernel: TurnKernel | None = None) -> TurnRows:
    """The race policy as a `TurnRows` block: row i is the turn of a player alone on score `grid.scores[i]`.

    The states' values are minus the expected turns still needed after this
    one (a bank on ``s'`` is worth ``-R(s')``, reaching the goal 0, a bust
    ``-R(s)``), from one kernel pass at the solved ``R`` (`race_turns`, or
    `remaining` when given).
    """
    grid = ScoreGrid.of(rules)
    kernel = kernel or TurnKernel(rules, win_value=0.0)
    if remaining is None:
        remaining, _ = race_turns(rules, kernel=kernel)
    scores = grid.scores.astype(np.int64)
    goal = grid.goal
    start_value = np.full((goal, goal), np.nan)
    start_value[0, scores] = 1.0 + remaining[scores]
    caps = grid.cap(scores).astype(np.int64)
    u = -remaining[scores]
    bank = grid.bank_table(scores, np.zeros_like(scores), int(caps.max()) + 1, start_value, win_value=0.0)
    sigma = kernel.move_table(len(scores), int(caps.max()))
    _, _, ta, tb = kernel.run(scores, caps, bank, u, keep_table=True, moves=sigma)
    banks, rolls, plains, predicts = [], [], [], []
    for i, cap in enumerate(caps):
        n = int(cap) + 2
        value = ta[i, :n] + tb[i, :n] * u[i]
        if value.ndim == 3:
            value = value[..., 0]
        plain, predict = kernel.roll_tables(value, u[i])
        banks.append(bank.a[i, :n] + bank.b[i, :n] * u[i])
        rolls.append(rolled(plain, predict))
        plains.append(plain[:, 1])
        predicts.append(predict)
    offset = np.concatenate([[0], np.cumsum(caps + 2)[:-1]]).astype(np.int64)
    pred = kernel.prediction
    choices = () if pred is None else tuple(int(c) * UNIT for c in pred.choices)
    def decided(x: np.ndarray) -> np.ndarray:  # the rows' layers of a decision array of the pass (σ)
        return np.concatenate([x[i, : int(cap) + 2] for i, cap in enumerate(caps)])

    return TurnRows(rules, caps, offset, u, np.concatenate(banks), np.concatenate(rolls),
                    None if pred is None else np.concatenate(plains),
                    None if pred is None else np.concatenate([x for x in predicts if x is not None]),
                    choices, kernel.period, move=decided(sigma.move), keep=decided(sigma.keep),
                    told=None if pred is None else decided(sigma.told))


def expected_rows(rules: Rules, values: np.ndarray | None = None) -> TurnRows:
    """The `expected` policy as a `TurnRows` block in points: row 0 not opened, row 1 opened (``E[opened]``).

    Banking is worth the turn points where allowed, rolling ``E`` (so the
    policy banks when ``t >= E``, as `policies.expected` does), an instant win
    its turn points plus the goal (as `expected_turn` counts it); the goal and the end rules do not enter (the objective
    is one turn alone); past the table the turn is banked at once.
    """
    e = expected_turn(rules) if values is None else values
    br = BankRules.of(rules)
    top, d = e.shape[1] - 1, rules.dice
    extra = build_keep_graph(rules).max_units + 2  # every keep from the table lands inside the block
    t = np.arange(top + 1 + extra)[:, None]
    m = np.arange(1, d + 1)[None, :]
    banks, rolls = [], []
    for opened in (0, 1):  # past the table (layers top + 1 on) the turn is banked at once, as `expected_turn` says
        banks.append(np.where(br.allowed(opened * br.opened_from, t, m) | (t > top), (t * UNIT).astype(float),
                              -np.inf))
        rolls.append(np.concatenate([e[opened], np.full((extra, d), -np.inf)]))
    cap = top + extra - 1
    block = ExpectedRows(rules, np.array([cap, cap]), np.array([0, cap + 2]), np.zeros(2),
                     np.concatenate(banks), np.concatenate(rolls), period=1, ready=False)
    block._values(np.arange(2))
    return block


class ExpectedRows(TurnRows):
    """A `TurnRows` block in points of one turn alone: no goal to overshoot, an instant win worth ``t + goal``."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.exact = False

    def win_worth(self, t: Any) -> Any:
        return np.asarray(t) * float(UNIT) + float(self.rules.goal)

    def taken(self, r: Any, t: Any, doubled: bool = False) -> np.ndarray:
        """The keep of every roll class: solved in NumPy (`expected_turn`), the block has no pass's record;
        its keep is the kernel's rule on its values (`kernel.best_keeps`). No announcement (one turn alone)."""
        graph = build_keep_graph(self.rules)
        rows = np.broadcast_to(np.asarray(r), np.shape(t))
        return best_keeps(graph, self.keep_values(rows, t, graph.keep_units, graph.keep_next, graph.keep_win))

    def keep(self, r: Any, t: Any, c: Any, doubled: Any = False) -> np.ndarray:
        """The keep `taken` takes in roll class `c` (of the `KeepGraph`)."""
        r, t, c = np.broadcast_arrays(np.asarray(r), np.asarray(t), np.asarray(c))
        return np.asarray(np.take_along_axis(self.taken(r, t), c[..., None], axis=-1)[..., 0])
