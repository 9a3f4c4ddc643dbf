"""The turn pass compiled (Numba): every row's backward pass over turn points, one row after another.

`TurnKernel.run` lays a call's tables out rows first (``ab[row, state, col]``:
per state the stored seats' A, then B; states ``t * D + (m - 1)``, then the
WIN and BUST slots) and hands them here. A row's tables (a few kB) stay in
the core's cache for its whole pass; rows are independent, so a call's rows
may be cut between threads (the functions release the GIL) without changing a
bit of any row's arithmetic.

For each layer ``t`` from the row's top down, and each dice count ``m``: the
keep of each roll class chosen by the mover's value ``v = A + B L0``
(`choose`), the class-weighted sum of the chosen keeps' columns plus the bust
chance on B (`weigh`), the best announcement before rolling two dice
(`prediction`), and bank or roll. `terminal_rows` solves the states past the
cap (reach) with the same two steps.

Roll classes come as `Columns`-like arrays: ``start`` (C + 1) the first keep
of each class, and per column (dice rolled, or announcement) ``ptr`` into
``cls``/``prob``: the classes of that column and their chances, in class
order; ``bust`` the column's bust chance.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Compiled once and cached on disk (`cache`), run without the GIL (`nogil`) so that threads share a pass.
JIT = njit(cache=True, nogil=True, error_model="numpy", boundscheck=False)


@JIT
def choose(v: np.ndarray, slot: np.ndarray, start: np.ndarray, tie: float, chosen: np.ndarray) -> None:
    """The state ``chosen[c]`` that the keep taken in class c leads to (keep k leads to ``slot[k]``, worth
    ``v[slot[k]]``): the best; on a tie (within `tie`, exactly equal when 0) the last keep of its class
    (classes list their keeps by points, then dice in hand: the most points, then the most dice)."""
    for c in range(len(start) - 1):
        k0, k1 = start[c], start[c + 1]
        pick = slot[k0]
        best = v[pick]
        if tie == 0.0:
            for k in range(k0 + 1, k1):  # branch-free: the comparisons do not predict
                s = slot[k]
                x = v[s]
                ge = x >= best
                best = x if ge else best
                pick = s if ge else pick
        else:
            for k in range(k0 + 1, k1):
                best = max(best, v[slot[k]])
            floor = best - tie
            for k in range(k1 - 1, k0 - 1, -1):
                if v[slot[k]] >= floor:
                    pick = slot[k]
                    break
        chosen[c] = pick


@JIT
def weigh(ab: np.ndarray, chosen: np.ndarray, ptr: np.ndarray, cls: np.ndarray, prob: np.ndarray,
          bust: np.ndarray, col: int, out: np.ndarray) -> None:
    """``out = sum_c P(c | col) ab[chosen[c]]`` in class order, plus the bust chance of `col` on B (the last
    column)."""
    cols = ab.shape[1]
    if cols == 2:  # the mover's A and B: two running sums
        a = b = 0.0
        for e in range(ptr[col], ptr[col + 1]):
            s = chosen[cls[e]]
            a += prob[e] * ab[s, 0]
            b += prob[e] * ab[s, 1]
        out[0] = a
        out[1] = b + bust[col]
        return
    if cols == 3:  # two stored seats' A and B (three players)
        a = a1 = b = 0.0
        for e in range(ptr[col], ptr[col + 1]):
            s = chosen[cls[e]]
            a += prob[e] * ab[s, 0]
            a1 += prob[e] * ab[s, 1]
            b += prob[e] * ab[s, 2]
        out[0] = a
        out[1] = a1
        out[2] = b + bust[col]
        return
    for j in range(cols):
        out[j] = 0.0
    for e in range(ptr[col], ptr[col + 1]):
        s = chosen[cls[e]]
        p = prob[e]
        for j in range(cols):
            out[j] += p * ab[s, j]
    out[cols - 1] += bust[col]


@JIT
def terminal_rows(rows: np.ndarray, bank_a: np.ndarray, bank_b: np.ndarray, l0: np.ndarray, won: float,
                  term_idx: np.ndarray, start: np.ndarray, ptr: np.ndarray, cls: np.ndarray, prob: np.ndarray,
                  bust: np.ndarray, iterations: int, out_a: np.ndarray, out_b: np.ndarray) -> None:
    """(A, B) of the states past the cap (reach), ``out_*[row, parity, m - 1]``, for each of `rows`.

    States (parity, m); keep k from parity ``par`` leads to ``term_idx[par, k]``
    (the parity after its points, or the WIN slot ``period * D``; BUST is the
    next). Value iteration (every state from the previous iterate) with the
    keeps chosen at ``L = l0`` and bank when ``bank >= roll``, each row until
    its A and B changes add up to less than 1e-15, or `iterations`.
    """
    per, d = bank_a.shape[1], bank_a.shape[2]
    n = per * d
    tab = np.zeros((n + 2, 2))
    new = np.zeros((n, 2))
    v = np.zeros(n + 2)
    chosen = np.zeros(len(start) - 1, dtype=np.int64)
    roll = np.zeros(2)
    for r in rows:
        lr = l0[r]
        tab[:, :] = 0.0
        tab[:n + 1, 0] = won  # every state (and WIN) starts won; BUST is worth L
        tab[n + 1, 1] = 1.0
        for _ in range(iterations):
            for s in range(n + 2):
                v[s] = tab[s, 0] + tab[s, 1] * lr
            for par in range(per):
                choose(v, term_idx[par], start, 0.0, chosen)
                for m in range(d):
                    weigh(tab, chosen, ptr, cls, prob, bust, m, roll)
                    s = par * d + m
                    if bank_a[r, par, m] + bank_b[r, par, m] * lr >= roll[0] + roll[1] * lr:
                        new[s, 0], new[s, 1] = bank_a[r, par, m], bank_b[r, par, m]
                    else:
                        new[s, 0], new[s, 1] = roll[0], roll[1]
            da = db = 0.0
            for s in range(n):
                da = max(da, abs(new[s, 0] - tab[s, 0]))
                db = max(db, abs(new[s, 1] - tab[s, 1]))
                tab[s, 0], tab[s, 1] = new[s, 0], new[s, 1]
            if da + db < 1e-15:
                break
        for par in range(per):
            for m in range(d):
                out_a[r, par, m] = tab[par * d + m, 0]
                out_b[r, par, m] = tab[par * d + m, 1]


@JIT
def turn_rows(rows: np.ndarray, table: np.ndarray, begin: np.ndarray, scores: np.ndarray, caps: np.ndarray,
              bank_a: np.ndarray, bank_b: np.ndarray, l0: np.ndarray, term_a: np.ndarray, term_b: np.ndarray,
              tpad: int, exact: bool, period: int, tie: float, won: float,
              base: np.ndarray, win: np.ndarray, start: np.ndarray, ptr: np.ndarray, cls: np.ndarray,
              prob: np.ndarray, bust: np.ndarray,
              p_units: np.ndarray, p_next: np.ndarray, p_win: np.ndarray, p_start: np.ndarray,
              p_ptr: np.ndarray, p_cls: np.ndarray, p_prob: np.ndarray, p_bust: np.ndarray) -> None:
    """One backward pass for each of `rows`: the turn start's columns in ``begin[row]`` (J + 1: the stored
    seats' A, then B), and every state's in ``table[row]`` (size, J + 1) unless `table` has no rows.

    Every state starts at its value past the cap: under exact an overshoot
    (B = 1), under reach ``term_*[row, (score + t) % period, m - 1]``; WIN is
    worth `won` to the mover, BUST is B = 1. Then the layers below the row's
    cap (``t < cap``, or ``t <= cap`` under exact), from the top down. The
    plain keep k leads from layer t to ``base[k] + t * D`` (WIN if ``win[k]``);
    an announcement's keep (the `p_*` arrays, none without prediction) to
    ``2 (t + p_units)``, folded by `period` past the table (reach) or BUST
    (exact). A row's arithmetic is its own: the same whichever rows share the call.
    """
    cols = begin.shape[1]
    jb = cols - 1  # B's column
    d = bank_a.shape[2]
    seats = bank_a.shape[3]
    size = tpad * d + 2
    win_slot, bust_slot = size - 2, size - 1
    last = tpad - 1
    announcements = len(p_ptr) - 1
    scratch = np.zeros((size, cols))
    v = np.zeros(size)
    slot = np.zeros(len(base), dtype=np.int64)
    chosen = np.zeros(len(start) - 1, dtype=np.int64)
    p_slot = np.zeros(len(p_units), dtype=np.int64)
    p_chosen = np.zeros(len(p_start) - 1, dtype=np.int64)
    rolls = np.zeros((d, cols))
    roll_v = np.zeros(d)
    told = np.zeros(cols)
    best_told = np.zeros(cols)
    for r in rows:
        ab = table[r] if len(table) else scratch
        lr = l0[r]
        for t in range(tpad):
            par = (scores[r] + t) % period
            for m in range(d):
                s = t * d + m
                for j in range(cols):
                    ab[s, j] = 0.0
                if exact:
                    ab[s, jb] = 1.0
                else:
                    ab[s, 0], ab[s, jb] = term_a[r, par, m], term_b[r, par, m]
        for j in range(cols):
            ab[win_slot, j] = 0.0
            ab[bust_slot, j] = 0.0
        ab[win_slot, 0] = won
        ab[bust_slot, jb] = 1.0
        for s in range(size):
            v[s] = ab[s, 0] + ab[s, jb] * lr
        top = caps[r] if exact else caps[r] - 1
        for t in range(top, -1, -1):
            off = t * d
            for k in range(len(base)):
                slot[k] = win_slot if win[k] else base[k] + off
            choose(v, slot, start, tie, chosen)
            for m in range(d):
                weigh(ab, chosen, ptr, cls, prob, bust, m, rolls[m])
                roll_v[m] = rolls[m, 0] + rolls[m, jb] * lr
            if announcements and d >= 2:
                for k in range(len(p_units)):
                    target = 2 * (t + p_units[k])
                    if p_win[k]:
                        p_slot[k] = win_slot
                    elif target > last:
                        p_slot[k] = bust_slot if exact else (last - (target - last) % period) * d + p_next[k] - 1
                    else:
                        p_slot[k] = target * d + p_next[k] - 1
                choose(v, p_slot, p_start, tie, p_chosen)
                best_v = -np.inf
                for a in range(announcements):  # the first best announcement
                    weigh(ab, p_chosen, p_ptr, p_cls, p_prob, p_bust, a, told)
                    told_v = told[0] + told[jb] * lr
                    if told_v > best_v:
                        best_v = told_v
                        best_told[:] = told
                if best_v > roll_v[1] + tie:
                    rolls[1, :] = best_told
                    roll_v[1] = best_v
            for m in range(d):
                s = off + m
                bank_v = bank_a[r, t, m, 0] + bank_b[r, t, m] * lr
                if bank_v >= roll_v[m] - tie:
                    for j in range(seats):
                        ab[s, j] = bank_a[r, t, m, j]
                    ab[s, jb] = bank_b[r, t, m]
                    v[s] = bank_v
                else:
                    for j in range(cols):
                        ab[s, j] = rolls[m, j]
                    v[s] = roll_v[m]
        for j in range(cols):
            begin[r, j] = ab[d - 1, j]
