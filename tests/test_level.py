"""The one level solver: the Newton step's linear system, solved in closed form or sparse, against a dense solve."""

from __future__ import annotations

import numpy as np
import pytest

from cinqmille.solver.cycle import newton_values


def dense_fixed_point(full_a: np.ndarray, big_b: np.ndarray, succ: np.ndarray, outside: np.ndarray) -> np.ndarray:
    """Every seat of ``V_i = A_i + B_i L_i`` (``L_i`` the passer's view of ``V_succ(i)``), by one dense solve."""
    p, n = full_a.shape
    m = np.zeros((p * n, p * n))
    rhs = np.zeros(p * n)
    # seen by the passer, the next mover's seat j is seat j + 1 (the passer is last, seat 0 of the full vector)
    for i in range(p):
        for j in range(n):
            m[i * n + j, i * n + j] = 1.0
            if succ[i] >= 0:
                m[i * n + j, succ[i] * n + (j - 1) % n] -= big_b[i]
                rhs[i * n + j] = full_a[i, j]
            else:
                seen = np.append(outside[i], 1.0 - outside[i].sum())
                rhs[i * n + j] = full_a[i, j] + big_b[i] * seen[j]
    return np.linalg.solve(m, rhs).reshape(p, n)


def random_turns(rng: np.random.Generator, p: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Turn-start (A, B) of `p` rows with `n` seats: B the bust chance, A the other seats' shares of the rest."""
    big_b = rng.uniform(0.05, 0.9, p)
    share = rng.dirichlet(np.ones(n), p)
    return share * (1.0 - big_b)[:, None], big_b


@pytest.mark.parametrize("n", [2, 3])
def test_cycle_formula_equals_dense_solve(n: int) -> None:
    """On bust cycles (the scores rotate) the closed form is the exact fixed point of the linear system."""
    rng = np.random.default_rng(n)
    cycles = 5
    rows = np.arange(cycles * n).reshape(cycles, n)
    succ = np.roll(rows, -1, axis=1).reshape(-1)
    full_a, big_b = random_turns(rng, cycles * n, n)
    got = newton_values(full_a, big_b, succ, np.zeros((cycles * n, n - 1)), np.arange(cycles * n))
    want = dense_fixed_point(full_a, big_b, succ, np.zeros((cycles * n, n - 1)))
    np.testing.assert_allclose(got, want[:, : n - 1], atol=1e-14)


@pytest.mark.parametrize("n", [2, 3])
def test_chains_and_falls_equal_dense_solve(n: int) -> None:
    """Rows whose scoreless turns form chains, longer cycles and exits (`zero_turns`) are solved exactly too."""
    rng = np.random.default_rng(10 + n)
    succ = np.array([1, 2, 0, 0, 3, -1, 5, 4])  # a 3-cycle with a chain into it, an exit with a chain into it
    p = len(succ)
    full_a, big_b = random_turns(rng, p, n)
    outside = rng.dirichlet(np.ones(n), p)[:, : n - 1]
    got = newton_values(full_a, big_b, succ, outside, np.arange(p))
    want = dense_fixed_point(full_a, big_b, succ, outside)
    np.testing.assert_allclose(got, want[:, : n - 1], atol=1e-14)


def test_bust_cycles_are_their_own_components() -> None:
    """Rows that return to themselves after n scoreless turns form one component per cycle, as a graph search says."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    from cinqmille.solver.level import components

    rng = np.random.default_rng(4)
    rows = rng.permutation(12).reshape(4, 3)  # four 3-cycles, rows in random places
    succ = np.empty(12, dtype=np.int64)
    succ[rows.reshape(-1)] = np.roll(rows, -1, axis=1).reshape(-1)
    got = components(succ, 3)
    want = connected_components(csr_matrix((np.ones(12), (np.arange(12), succ)), shape=(12, 12)),
                                directed=True, connection="weak")[1]
    same_got = got[:, None] == got[None, :]
    assert (same_got == (want[:, None] == want[None, :])).all()
    chained = succ.copy()
    chained[rows[0, 0]] = rows[1, 0]  # no longer cycles: the graph search decides
    got = components(chained, 3)
    assert len(set(got[rows[0]]) | set(got[rows[1]])) == 1
