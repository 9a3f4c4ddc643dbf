"""The one-player objectives as blocks of turn rows, read as the policy table's are (`TurnRows.move`,
`TurnRows.keep`): the race policy (`race_rows`, a player alone racing to the goal in the fewest turns) and the
`expected` policy (`expected_rows`, the most points per turn), so that the turn passes (`turn_eval`, `turn_dist`)
play them; their values are the objectives' (`solver.objectives`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..rules import Rules
from ..rules.bank import UNIT, BankRules
from ..solver.grid import ScoreGrid
from ..solver.kernel import TurnKernel
from ..solver.keeps import KeepGraph, best_keeps, build_keep_graph, rolled
from ..solver.objectives import expected_turn, race_turns
from .rows import TurnRows


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
