r"""Cycles that chase, settled by the mixed choice that leaves each chasing player indifferent (RULES.md, the note
after section 9).

The maths, once
===============
A row ``i`` of a bust cycle is a turn start; for the policy the kernel picks at
the mover's bust value ``l`` (`TurnKernel.run`: every decision compares the
mover's values at ``L = l``), the turn is affine in the bust vector,
``V_i = A_i + B_i L_i`` (``A_i`` the stored seats, ``B_i`` the bust chance).
The pair ``P_i(l) = (A_i, B_i)`` depends on ``l`` only through the decisions, so
it is piecewise constant in ``l``, and the mover's value
``f_i(l) = A_{i,0} + B_i l`` is the upper envelope of the lines of his pure
policies: convex, piecewise linear. A *kink* ``l*`` joins two pieces, the one
below, ``P^b`` (busting is worse there, so he banks more: at the pivot he
banks), and the one above, ``P^r``; both lines meet there,

.. math::  l^* = \frac{A^r_0 - A^b_0}{B^b - B^r}.

The two pure policies of a kink differ at the *pivot*, the turn state
``(t, m)`` whose bank-or-roll decision flips (usually one). A mixed choice
there, bank with probability ``q``, gives the pivot the pair
``q \mathrm{Bank} + (1 - q) \mathrm{Roll}``. A turn never revisits a state
(turn points only grow), so the turn start is affine in the pivot's pair with
the chance of reaching it as coefficient, and the mixed turn start is the same
mixture of the two pure ones:

.. math::  P_i(q) = q P^b_i + (1 - q) P^r_i .

(Where the two policies differ at several states, ``q`` is the chance of
playing the bank-side policy, drawn at the turn start: the same pair.)

The settlement of a cycle is a choice, for every row, of a pure piece or of a
kink with its ``q``, such that, with the values ``V(q)`` of the cycle formula
(`cycle.newton_values`, rational in ``q``) and ``L_i = pass_dice(V_succ(i))_0``:

* a mixing row is indifferent: ``L_i(q) = l*_i`` (both of its policies are
  then best responses, and so is every mixture), ``0 <= q_i <= 1``;
* a pure row's piece is the kernel's choice at ``L_i`` (checked by a pass).

Which kinks: the Newton steps of a chasing cycle jump between policies; the
range of each row's ``L`` over `WINDOW_STEPS` of them (from the values the
level solver hands over) holds the kinks that the chase crosses, found
exactly by intersecting pieces (`_kinks`). A row with no kink in its range is
pure; a row with one is a candidate, which may end up mixing, or pure on
either side (with no candidate at all, the one assignment is every row's pure
piece: a stationary pure policy the iteration jumped over, kept when the
conditions hold); every one of the ``3^c`` assignments of the ``c`` candidates is
solved (``brentq`` for one unknown, `scipy.optimize.root` then Newton for more,
to 1e-12 and below) and kept when the conditions above hold and the
mixed-policy Bellman residual of every seat is at most `TOL`. Several
solutions: the one with the fewest mixing rows, then the smallest bank
probabilities (in row order), is taken and the count reported. None, or a row
with several kinks in its range: the cycle is left to the level solver's
averaging (``CHASE`` in `level`), and the result says so.

The residual stated is the mixed policy's: for every row and seat,
``|A_i(q) + B_i(q) L_i - V_i|``, and for the mover, the gap between his best
pure reply (the kernel's pass at ``L_i``) and the mixed value. A reader of the
tables (the policy, the engine) plays pure decisions with the tie rule (bank
on a tie) at the pivots; `Settled.pure_gap` is the largest difference, for any
seat, between a turn so played (one pass at the settled values) and the
settled values. For the mover it is within the tie (he is indifferent).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Callable

import numpy as np

from .cycle import LevelTurns, newton_values
from .kernel import TurnKernel, bank_rows
from .seats import every_seat, pass_dice

#: Newton steps on a chasing cycle whose range of bust values holds the kinks the chase crosses.
WINDOW_STEPS = 12
#: Largest mixed-policy Bellman residual of a settled cycle (every seat), and of the indifference.
TOL = 1e-12
#: Depth of the search for kinks between two pieces (each level one kernel pass).
KINK_DEPTH = 12
#: How far (relative) the meeting point of two pieces may fall outside the range searched and still be its end: two
#: kinks that meet (four players at goal 2800, opening 750, 750/2300/1200/1900, is `standard`'s 2950/4500/3400/4100)
#: put the next split at the last one, a rounding below it.
RANGE_SLACK = 1e-12
#: Most assignments (a pure piece or a mixed kink per row) tried on one cycle.
MAX_CHOICES = 4096


@dataclass(frozen=True, slots=True)
class Settled:
    """One chasing cycle of a level, settled by a mixed choice (`rule` "mixed") or left to averaging ("averaged")."""

    rows: np.ndarray  # the level's rows of the cycle
    rule: str  # "mixed" or "averaged"
    mixing: np.ndarray  # the rows that mix (level indices)
    q: np.ndarray  # the bank probability of each mixing row's pivot
    pivots: tuple[tuple[tuple[int, int], ...], ...]  # per mixing row, the states (t units, m dice) whose decision flips
    residual: float  # mixed-policy Bellman residual, every seat (averaged: NaN, the level solver states it)
    pure_gap: float  # largest difference (any seat) between a pure pass with the tie rule and the settled values
    solutions: int  # settlements found (the one with the fewest mixing rows, then the smallest q, is taken)
    why: str = ""  # why a cycle was left to averaging
    kinks: int = 0  # the most kinks of one row's value in the chase's range (each a pure piece more to try)


Kink = tuple[float, np.ndarray, float, np.ndarray, float]  # (l*, A^b, B^b, A^r, B^r): the pieces below and above


def _full(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Every seat's A, the last ``1 - B - sum`` (the form `cycle.newton_values` rotates)."""
    return every_seat(a) - b[:, None] * np.eye(1, a.shape[1] + 1, a.shape[1])


class _Cycle:
    """The kernel passes and cycle solves of one cycle's rows."""

    def __init__(self, kernel: TurnKernel, level: LevelTurns, rows: np.ndarray):
        self.kernel, self.level, self.rows = kernel, level, rows
        local = np.full(len(level.succ), -1, dtype=np.int64)
        local[rows] = np.arange(len(rows))
        self.succ = local[level.succ[rows]]
        self.k = level.guess.shape[1]

    def pieces(self, who: np.ndarray, l0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The kernel's (A, B) for the cycle's rows `who` (local, ascending) at the mover's bust values `l0`."""
        lv, idx = self.level, self.rows[who]
        term = None if lv.term_bank is None else (lv.term_bank[0][idx], lv.term_bank[1][idx])
        a, b, _, _ = self.kernel.run(lv.a[idx], lv.caps[idx], bank_rows(lv.bank, idx),
                                     np.asarray(l0, dtype=float), term_bank=term)
        return a.reshape(len(idx), self.k), b

    def tables(self, i: int, l0: float) -> tuple[np.ndarray, np.ndarray]:
        """The kernel's full (A, B) tables of row `i` at the mover's bust value `l0`: (Tpad, D, k), (Tpad, D)."""
        lv, idx = self.level, self.rows[i : i + 1]
        term = None if lv.term_bank is None else (lv.term_bank[0][idx], lv.term_bank[1][idx])
        _, _, ta, tb = self.kernel.run(lv.a[idx], lv.caps[idx], bank_rows(lv.bank, idx),
                                       np.array([l0]), keep_table=True, term_bank=term)
        return ta[0].reshape(ta.shape[1], ta.shape[2], self.k), tb[0]

    def values(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Stored seat values of the cycle's rows for the turn pairs (a, b): the cycle formula."""
        c = len(self.rows)
        return newton_values(_full(a, b), b, self.succ, np.zeros((c, self.k)), np.arange(c))

    def bust(self, v: np.ndarray) -> np.ndarray:
        """Each row's bust vector (stored seats, the passer first) from the cycle's values."""
        return pass_dice(v[self.succ])


def _kinks(cycle: _Cycle, i: int, lo: float, hi: float, a_lo: np.ndarray, b_lo: float, a_hi: np.ndarray,
           b_hi: float, depth: int = 0) -> list[Kink] | None:
    """The kinks of row `i`'s value between `lo` and `hi` (pieces known at both ends): (l*, A^b, B^b, A^r, B^r)
    in increasing l*; None when the search does not resolve them."""
    if np.array_equal(a_lo, a_hi) and b_lo == b_hi:
        return []
    if b_lo == b_hi or depth > KINK_DEPTH:
        return None
    x = (a_hi[0] - a_lo[0]) / (b_lo - b_hi)
    slack = RANGE_SLACK * max(1.0, abs(lo), abs(hi))  # a kink at an end of the range, off by a rounding
    if not lo - slack <= x <= hi + slack:
        return None
    x = min(max(x, lo), hi)
    a_xs, b_xs = cycle.pieces(np.array([i]), np.array([x]))
    a_x, b_x = a_xs[0], float(b_xs[0])
    if abs((a_x[0] + b_x * x) - (a_lo[0] + b_lo * x)) <= TOL * 1e-1:
        return [(float(x), a_lo, b_lo, a_hi, b_hi)]
    left = _kinks(cycle, i, lo, x, a_lo, b_lo, a_x, b_x, depth + 1)
    right = _kinks(cycle, i, x, hi, a_x, b_x, a_hi, b_hi, depth + 1)
    return None if left is None or right is None else left + right


def _root(fun: Callable[[np.ndarray], np.ndarray], u: int) -> list[np.ndarray]:
    """Zeros of `fun` on [0, 1]^u (u unknowns): brentq for one, root from a few starts then Newton for more."""
    from scipy.optimize import brentq, root  # lazy: start-up time (SciPy only where a level needs it)

    if u == 1:
        lo, hi = float(fun(np.array([0.0]))[0]), float(fun(np.array([1.0]))[0])
        if lo == 0.0:
            return [np.array([0.0])]
        if hi == 0.0:
            return [np.array([1.0])]
        if not (np.isfinite(lo) and np.isfinite(hi)) or np.sign(lo) == np.sign(hi):
            return []
        return [np.array([brentq(lambda x: float(fun(np.array([x]))[0]), 0.0, 1.0, xtol=1e-15, rtol=1e-15,
                                 maxiter=200)])]
    found = []
    starts = [np.full(u, 0.5)] + [np.random.default_rng(seed).uniform(0.05, 0.95, u) for seed in range(4)]
    for x0 in starts:
        sol = root(fun, x0, method="hybr", options={"xtol": 1e-15})
        x = np.asarray(sol.x, dtype=float)
        for _ in range(4):  # Newton polish, the Jacobian by central differences
            g = fun(x)
            h = 1e-7
            jac = np.column_stack([(fun(x + h * e) - fun(x - h * e)) / (2 * h) for e in np.eye(u)])
            try:
                x = x - np.linalg.solve(jac, g)
            except np.linalg.LinAlgError:
                break
        if np.isfinite(x).all() and np.abs(fun(x)).max() <= TOL * 1e-1:
            found.append(x)
    return found


def settle_cycle(kernel: TurnKernel, level: LevelTurns, rows: np.ndarray, value: np.ndarray,
                 ) -> tuple[Settled, np.ndarray | None]:
    """Settle the chasing cycle `rows` (level indices, ascending) of `level` from the level solver's `value`:
    the record, and the rows' settled stored seat values (None: left to averaging)."""
    cycle = _Cycle(kernel, level, rows)
    c, k = len(rows), cycle.k
    everyone = np.arange(c)

    def averaged(why: str) -> tuple[Settled, None]:
        return Settled(rows, "averaged", rows[:0], np.zeros(0), (), float("nan"), float("nan"), 0, why), None

    if (cycle.succ < 0).any():
        return averaged("not a bust cycle (a scoreless turn leaves the rows)")
    v = value[rows].astype(float, copy=True)
    seen = [cycle.bust(v)[:, 0]]
    for _ in range(WINDOW_STEPS):  # Newton steps: the chase's range of bust values
        a, b = cycle.pieces(everyone, seen[-1])
        v = cycle.values(a, b)
        if not np.isfinite(v).all():
            return averaged("a Newton step of the chase has no finite solution")
        seen.append(cycle.bust(v)[:, 0])
    lo, hi = np.min(seen, axis=0), np.max(seen, axis=0)
    a_lo, b_lo = cycle.pieces(everyone, lo)
    a_hi, b_hi = cycle.pieces(everyone, hi)
    kinks: dict[int, list[Kink]] = {}
    for i in range(c):
        found = _kinks(cycle, i, float(lo[i]), float(hi[i]), a_lo[i], float(b_lo[i]), a_hi[i], float(b_hi[i]))
        if found is None:
            return averaged("the chase crosses kinks of one row's value that the search does not resolve")
        if found:
            kinks[i] = found
    candidates = sorted(kinks)  # none: the one choice to try is every row's pure piece (a stationary pure policy)
    # a row whose value has kinks k_0 < k_1 < ... in the chase's range: its pure pieces (below k_0, between two
    # kinks, above the last) and a mixed choice at each kink
    options = {i: [("pure", p) for p in range(len(kinks[i]) + 1)] + [("mix", k) for k in range(len(kinks[i]))]
               for i in candidates}
    if np.prod([len(options[i]) for i in candidates], dtype=float) > MAX_CHOICES:
        return averaged(f"the chase crosses {sum(len(k) for k in kinks.values())} kinks of {len(candidates)} rows: "
                        f"more than {MAX_CHOICES} choices to try")

    def piece(i: int, p: int) -> tuple[np.ndarray, float]:
        """Row i's pure piece p (0: below its first kink)."""
        row = kinks[i]
        return (row[p][1], row[p][2]) if p < len(row) else (row[-1][3], row[-1][4])

    def pairs(choice: tuple[tuple[str, int], ...], q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        a, b = a_lo.copy(), b_lo.astype(float, copy=True)
        qi = iter(q)
        for i, (how, at) in zip(candidates, choice):
            if how == "mix":
                _, ab, bb, ar, br = kinks[i][at]
                w = next(qi)
                a[i], b[i] = w * ab + (1 - w) * ar, w * bb + (1 - w) * br
            else:
                a[i], b[i] = piece(i, at)
        return a, b

    solutions = []
    for choice in itertools.product(*(options[i] for i in candidates)):
        mix = [i for i, how in zip(candidates, choice) if how[0] == "mix"]
        star = np.array([kinks[i][how[1]][0] for i, how in zip(candidates, choice) if how[0] == "mix"])

        def gap(q: np.ndarray, choice: tuple[tuple[str, int], ...] = choice, mix: list[int] = mix,
                star: np.ndarray = star) -> np.ndarray:
            with np.errstate(all="ignore"):
                return np.asarray(cycle.bust(cycle.values(*pairs(choice, q)))[mix, 0] - star)

        qs = _root(gap, len(mix)) if mix else [np.zeros(0)]
        for q in qs:
            if not ((q >= -TOL) & (q <= 1 + TOL)).all():
                continue
            q = np.clip(q, 0.0, 1.0)
            a, b = pairs(choice, q)
            vals = cycle.values(a, b)
            if not np.isfinite(vals).all():
                continue
            bust = cycle.bust(vals)
            # the mixed policy's residual, every seat; the mover's best pure reply at his bust value
            residual = float(np.abs(a + b[:, None] * bust - vals).max())
            best_a, best_b = cycle.pieces(everyone, bust[:, 0])
            best = best_a[:, 0] + best_b * bust[:, 0]
            residual = max(residual, float(np.abs(best - vals[:, 0]).max()))
            pure = [i for i in range(c) if i not in mix]  # a pure row plays the kernel's choice
            if pure:
                residual = max(residual, float(np.abs(best_a[pure] + best_b[pure, None] * bust[pure]
                                                      - vals[pure]).max()))
            if residual <= TOL:
                at = [kinks[i][how[1]] for i, how in zip(candidates, choice) if how[0] == "mix"]
                solutions.append((len(mix), tuple(q.tolist()), mix, q, vals, residual, best_a, best_b, bust, at))
    if not solutions:
        return averaged("no mixed choice leaves the chasing players indifferent within the chase's range"
                        if candidates else "no row's choice flips within the chase, and its pure policy is not "
                        "stationary")
    solutions.sort(key=lambda s: (s[0], s[1]))
    _, _, mix, q, vals, residual, best_a, best_b, bust, at = solutions[0]
    distinct = len({np.round(s[4], 10).tobytes() for s in solutions})
    pure_gap = float(np.abs(best_a + best_b[:, None] * bust - vals).max())
    return Settled(rows, "mixed", rows[np.array(mix, dtype=np.int64)], np.asarray(q, dtype=float),
                   tuple(_pivots(cycle, i, kink) for i, kink in zip(mix, at)), residual, pure_gap, distinct,
                   kinks=max((len(k) for k in kinks.values()), default=0)), vals


def _pivots(cycle: _Cycle, i: int, kink: Kink) -> tuple[tuple[int, int], ...]:
    """The turn states (t units, m dice) where the bank decisions of row `i`'s two policies at its kink differ
    (probed just below and above the kink, past the tie; empty when the probes do not give the kink's pieces)."""
    x, a_b, b_b, a_r, b_r = kink
    lv, idx = cycle.level, int(cycle.rows[i])
    cap = int(lv.caps[idx])
    laid = bank_rows(lv.bank, np.array([idx]))
    bank_a, bank_b = laid.a[0, : cap + 1].reshape(cap + 1, -1, cycle.k), laid.b[0, : cap + 1]
    banks = []
    for l0, want in ((x - 1e-8, (a_b, b_b)), (x + 1e-8, (a_r, b_r))):
        ta, tb = cycle.tables(i, l0)
        start = laid.a.shape[2] - 1  # (0 points, D dice)
        if not (np.array_equal(ta[0, start], want[0]) and tb[0, start] == want[1]):
            return ()
        banks.append(np.isfinite(bank_a[..., 0]) & (ta[: cap + 1] == bank_a).all(axis=-1) & (tb[: cap + 1] == bank_b))
    t, m = np.nonzero(banks[0] != banks[1])
    return tuple((int(a), int(b) + 1) for a, b in zip(t, m))
