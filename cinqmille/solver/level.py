r"""One level of turn starts solved: the fixed point of the turns linked by scoreless turns.

A level is the turn starts of one sum of scores (and of one sweep under
``zero_turns``); a bank leaves it for a larger sum, already solved. A
scoreless turn (a bust, a fault, an overshoot, a wrong announcement) of row
``i`` leads to row ``succ(i)`` of the same level, or out of it (a fall under
``zero_turns``, whose value ``outside`` is known). Values are stored per seat,
the first ``k = n - 1`` seats in playing order from the mover (`seats`), and
``pass_dice`` turns the next mover's values into the passer's:
``L_i = pass_dice(V_succ(i))``.

For a fixed policy a turn is affine in its bust vector (`TurnKernel.run`):
``V_i = A_i + B_i L_i``. The Newton (policy-iteration) step solves this linear
system exactly for the policy chosen at the current ``L``:

* on cycles (every row returns to itself after ``n`` scoreless turns: a bust
  rotates the scores), going round the cycle ``s_0 = i, s_{j+1} = succ(s_j)``
  with ``R`` the rotation of full seat vectors (``R^n = I``):

  .. math::  V(s_0) = \frac{\sum_{j<n} \big(\prod_{l<j} B(s_l)\big) R^j A(s_j)}{1 - \prod_{l<n} B(s_l)}

  (two players: ``W_p = (A_p + B_p (1 - A_q - B_q)) / (1 - B_p B_q)``);
* otherwise (chains of scoreless-turn counters) as one sparse system
  ``V_i - B_i M V_succ(i) = A_i + B_i e_0`` with ``pass_dice(v) = e_0 + M v``.

The step is repeated with the policy re-chosen at the new ``L`` until the
Bellman residual ``max |A_i + B_i L_i - V_i|`` of every seat is below ``tol``
for every row of a component (rows linked by scoreless turns finish
together). When Newton stops improving the residual a plain value-iteration
step is taken. For two players a turn's value is convex in its bust value, so
the residual after a Newton step is at most the change of ``L``: a component
whose ``L`` moved by less than ``tol`` is accepted without another pass.

Cycles without a stationary policy (``CHASE``): with three players or more
"each mover maximises his own chance" can have no stationary pure solution on
a bust cycle (RULES.md section 8 and the note after section 9): two players'
bank-or-roll choices chase each other like matching pennies, and the Newton
steps never settle. A cycle still above ``tol`` after `NEWTON_STEPS` is handed
to `settle.settle_cycle`: the mixed choice that leaves each chasing player
indifferent (a bank probability at each pivot state), solved to 1e-12, its
mixed-policy Bellman residual the level's. A cycle it cannot settle (no
interior solution, or not the simple model: see `settle`) is averaged as
before, the value iteration's iterates with step ``1/k`` for `SETTLE_STEPS`
more passes. Every chasing row is returned in ``unsettled``, and how each cycle
was settled in ``settled``, so that the solve can say so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernel import BankTable, Pair, StartBanks, TurnKernel
from .seats import every_seat, pass_dice, rotate
from .cycle import LevelTurns, newton_values
from .settle import Settled, settle_cycle

#: Newton steps before a cycle that does not settle is averaged (`CHASE`).
NEWTON_STEPS = 30
#: Averaged value-iteration passes after `NEWTON_STEPS` for cycles that chase (two players: plain passes).
SETTLE_STEPS = 400


#: A residual at or below the solver's stopping tolerance is round-off, whose digits depend on the CPU.
ROUND_OFF = 1e-12


def residual_words(residual: float) -> str:
    """A residual as text shows it: its digits, or "below 1e-12" where they are round-off (they differ between
    CPUs, so no text shows them)."""
    return f"residual below {ROUND_OFF:.0e}" if residual <= ROUND_OFF else f"residual {residual:.1e}"


@dataclass(frozen=True, slots=True)
class LevelSolution:
    """The turn-start values of a level's rows, their Bellman residual, the passes made, the rows that chase."""

    values: np.ndarray  # (P, k) stored seats, the mover first
    residual: float
    passes: int
    unsettled: np.ndarray  # rows of cycles without a stationary policy (`CHASE`), mixed or averaged
    settled: tuple[Settled, ...] = ()  # how each of those cycles was settled (`settle`)


def components(succ: np.ndarray, n: int) -> np.ndarray:
    """The component of every row: rows linked by scoreless turns share one.

    When every row comes back to itself after `n` scoreless turns (bust cycles),
    a component is a cycle, named by its smallest row; otherwise the weakly
    connected components of the graph.
    """
    rows = np.arange(len(succ))
    walk, smallest = rows, rows
    for _ in range(n):
        walk = np.where(walk >= 0, succ[np.maximum(walk, 0)], -1)
        smallest = np.minimum(smallest, np.where(walk >= 0, walk, rows))
    if np.array_equal(walk, rows):
        return smallest
    from scipy.sparse import csr_matrix  # lazy: start-up time (SciPy only where a level needs it)
    from scipy.sparse.csgraph import connected_components  # lazy: start-up time (SciPy only where a level needs it)

    p = len(succ)
    inside = succ >= 0
    links = csr_matrix((np.ones(int(inside.sum())), (rows[inside], succ[inside])), shape=(p, p))
    return np.asarray(connected_components(links, directed=True, connection="weak")[1])


def find_rows(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """The row of `keys` (unique, a row's scores as one number) holding each of `wanted`, -1 where none does: the
    row a scoreless turn leads to."""
    if not len(keys):
        return np.full(len(wanted), -1, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    at = np.minimum(np.searchsorted(keys, wanted, sorter=order), len(keys) - 1)
    return np.where(keys[order[at]] == wanted, order[at], -1).astype(np.int64)


def guess_above(scores: np.ndarray, goal: int, rows: np.ndarray, w: np.ndarray,
                where: np.ndarray | None = None) -> np.ndarray:
    """A starting estimate of a level's stored seat values (P, n - 1), extrapolated from the levels above.

    `rows` (P, n) are a row's scores in playing order (units), which index the
    solved table `w` (stored seats on its last axis, NaN for impossible
    scores), or, with `where` (`ScoreGrid.where`), their positions do. For the first
    seat, in that order, whose next score up is a solved state ``near`` (the
    mover's own first), the estimate is ``2 near - far`` where the score after
    that is solved too (``far``), else ``near``, clipped to chances that add
    up to 1; equal shares where no neighbour is solved. Only the number of
    passes depends on it, not the fixed point (measured: three-player
    `standard` makes a quarter fewer row-layers than from ``near`` alone).
    """
    p, n = rows.shape
    guess = np.full((p, n), np.nan)
    above = np.append(scores, [goal, goal])
    for j in range(n):
        step = np.searchsorted(scores, rows[:, j], side="right")
        todo = np.isnan(guess[:, 0])
        found = []
        for up in (above[step], above[step + 1]):
            at = rows.copy()
            at[:, j] = up
            near = np.full((p, n), np.nan)
            ok = todo & (up < goal)
            if ok.any():
                cells = at[ok] if where is None else where[at[ok]]
                near[ok] = every_seat(w[tuple(cells.T)])
            found.append(near)
        near, far = found
        have = np.isfinite(near).all(axis=1)
        line = np.where(np.isfinite(far).all(axis=1)[:, None], 2.0 * near - far, near)
        line = np.clip(line, 0.0, 1.0)
        guess[have] = line[have] / line[have].sum(axis=1, keepdims=True)
    guess = np.where(np.isnan(guess), 1.0 / n, guess)
    return guess[:, : n - 1]


def _all_in(component: np.ndarray, rows: np.ndarray, flag: np.ndarray) -> np.ndarray:
    """For each of `rows`: whether `flag` holds for every row of its component."""
    bad = np.bincount(component[rows], weights=~flag, minlength=int(component.max()) + 1)
    return np.asarray(bad[component[rows]] == 0)


def solve_level(kernel: TurnKernel, level: LevelTurns, tol: float) -> LevelSolution:
    """The fixed point of one level: Newton steps, value iteration where they stall, averaging where cycles chase.

    Only the components not yet within `tol` are passed again; a component's
    rows finish together, on one criterion, so that their values agree.
    """
    a, caps, bank, succ, outside = level.a, level.caps, level.bank, level.succ, level.outside
    p, k = level.guess.shape
    n = k + 1
    if not p:
        return LevelSolution(level.guess.copy(), 0.0, 0, np.zeros(0, dtype=np.int64))
    component = components(succ, n)
    value = level.guess.astype(float, copy=True)
    full_a, big_b, here = np.zeros((p, n)), np.zeros(p), np.zeros((p, k))
    previous = np.full(p, np.inf)
    residual, passes = 0.0, 0
    active = np.arange(p)  # sorted, so still by cap descending
    last_seat = np.eye(1, n, k)

    def bust_of(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
        s = succ[rows]
        return np.where((s >= 0)[:, None], pass_dice(values[np.maximum(s, 0)]), outside[rows])

    chasing, settled = active[:0], []
    for it in range(NEWTON_STEPS + SETTLE_STEPS):
        if it == NEWTON_STEPS and k > 1:  # the choices chase each other: the mixed choice, see `CHASE`
            chasing = active
            for c in np.unique(component[active]):
                record, mixed = settle_cycle(kernel, level, active[component[active] == c], value)
                settled.append(record)
                if mixed is not None:
                    value[record.rows] = mixed
                    residual = max(residual, record.residual)
            active = active[~np.isin(active, [r for s in settled if s.rule == "mixed" for r in s.rows])]
            if not len(active):
                return LevelSolution(value, residual, passes, chasing, tuple(settled))
        bust = bust_of(value, active)
        big_a, big_b[active], _, _ = kernel.run(a, caps, bank, bust[:, 0].copy(), term_bank=level.term_bank,
                                                rows=active, strike=level.strike)
        passes += 1
        full_a[active] = every_seat(big_a.reshape(len(active), k)) - big_b[active, None] * last_seat
        here[active] = full_a[active, :k] + big_b[active, None] * bust
        res = np.abs(here[active] - value[active]).max(axis=1)
        worst = np.zeros(int(component.max()) + 1)
        np.maximum.at(worst, component[active], res)
        res_c = worst[component[active]]  # a component's largest residual
        if it < NEWTON_STEPS:
            improving = (it == 0) | (res_c < previous[active] * 0.999)
            linear = newton_values(full_a, big_b, succ, outside, active)
            safe = improving & np.isfinite(linear).all(axis=1)
            step = np.where(safe[:, None], linear, here[active])  # else a plain value-iteration step
        elif k == 1:
            safe = np.zeros(len(active), dtype=bool)
            step = here[active]
        else:  # the choices chase each other: average the iterates (step 1 / k), see `CHASE`
            safe = np.zeros(len(active), dtype=bool)
            step = value[active] + (here[active] - value[active]) / (it - NEWTON_STEPS + 2)
        measured = res
        by_bound = np.zeros(len(active), dtype=bool)
        if k == 1:  # convex in L: the residual after the step is at most the change of L
            trial = value.copy()
            trial[active] = step
            bound = np.abs(bust_of(trial, active) - bust)[:, 0]
            by_bound = _all_in(component, active, safe & (bound <= tol))
            measured = np.where(by_bound, bound, res)
        by_res = _all_in(component, active, res <= tol) & ~by_bound
        finished = by_res | by_bound
        if finished.any():
            residual = max(residual, float(measured[finished].max()))
        value[active] = np.where(by_res[:, None], here[active], step)
        previous[active] = res_c
        active = active[~finished]
        if not len(active):
            return LevelSolution(value, residual, passes, chasing, tuple(settled))
    return LevelSolution(value, max(residual, float(previous[active].max())), passes, chasing if k > 1 else active,
                         tuple(settled))
