"""A level's rows as the kernel reads them, and the exact values of rows linked by busts (a Newton step).

`LevelTurns` is what one level of turn starts gives the kernel; `newton_values`
solves ``V_i = A_i + B_i L_i`` for rows closed under their bust successor: the
closed form on a cycle (``L_i = pass_dice(V_succ(i))``), a sparse solve
otherwise. The level solver (`level.solve_level`) and the settlement of
chasing cycles (`settle`) both read them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernel import BankTable, Pair, StartBanks
from .seats import rotate


@dataclass(frozen=True, slots=True)
class LevelTurns:
    """What the kernel needs of one level's rows, sorted by cap descending."""

    a: np.ndarray  # (P,) the mover's banked score, units
    caps: np.ndarray  # (P,) first turn total from which a row's states are terminal
    bank: BankTable | StartBanks  # bank values at every (row, t, m), or read from the turn starts
    succ: np.ndarray  # (P,) the row a scoreless turn leads to, -1 when it leaves the level
    outside: np.ndarray  # (P, k) the bust vector of rows whose scoreless turn leaves the level
    guess: np.ndarray  # (P, k) a starting estimate of the turn-start values
    term_bank: Pair | None = None  # (A, B) of banking past the cap per row (`TurnKernel.terminal`)
    strike: np.ndarray | None = None  # (P,) the value of a bust on all D dice where it is not L (`history`), NaN: L



def newton_values(full_a: np.ndarray, big_b: np.ndarray, succ: np.ndarray, outside: np.ndarray,
                  rows: np.ndarray) -> np.ndarray:
    """Stored seat values (len(rows), k) solving ``V_i = A_i + B_i L_i`` exactly for `rows` (closed under `succ`).

    `full_a` holds every seat (the last is ``1 - B - sum``), so that the cycle
    formula can rotate it; rows whose scoreless turn leaves the level take
    their bust vector from `outside`.
    """
    n = full_a.shape[1]
    s = succ[rows]
    walk = [rows]
    for _ in range(n):
        walk.append(np.where(walk[-1] >= 0, succ[np.maximum(walk[-1], 0)], -1))
    if (s >= 0).all() and np.array_equal(walk[n], rows):  # cycles: the closed form
        total = np.zeros((len(rows), n))
        weight = np.ones(len(rows))
        for j in range(n):
            member = walk[j]
            total += weight[:, None] * rotate(full_a[member], j)
            weight = weight * big_b[member]
        return (total / np.where(weight < 1.0, 1.0 - weight, 1.0)[:, None])[:, : n - 1]
    from scipy.sparse import coo_matrix, identity  # lazy: start-up time (SciPy only where a level needs it)
    from scipy.sparse.linalg import spsolve  # lazy: start-up time (SciPy only where a level needs it)

    k = n - 1
    local = np.full(len(succ), -1, dtype=np.int64)
    local[rows] = np.arange(len(rows))
    m = len(rows)
    inside = s >= 0
    # pass_dice(v) = e_0 + M v: (M v)_0 = -sum(v), (M v)_j = v_(j-1)
    lin = np.zeros((k, k))
    lin[0] = -1.0
    lin[np.arange(1, k), np.arange(k - 1)] = 1.0
    r, c = np.nonzero(lin)
    i = np.nonzero(inside)[0]
    entries = -(big_b[rows][i][:, None] * lin[r, c][None, :])
    matrix = identity(m * k, format="csr") + coo_matrix(
        (entries.ravel(), ((i[:, None] * k + r).ravel(), (local[s[i]][:, None] * k + c).ravel())),
        shape=(m * k, m * k)).tocsr()
    bust = np.where(inside[:, None], np.eye(1, k), outside[rows])
    rhs = full_a[rows, :k] + big_b[rows][:, None] * bust
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.atleast_1d(spsolve(matrix.tocsc(), rhs.ravel())).reshape(m, k)
