"""The turn pass compiled (Numba): every row's backward pass over turn points, rows side by side in lanes.

`TurnKernel.run` hands over a call's tables rows first (banks
``bank_a[row, t, m, j]``); the pass takes the rows in blocks of `LANES`, one
row per lane, its working tables ``ab[state, column, lane]`` (per state the
stored seats' A, then B; states ``t * D + (m - 1)``, then the WIN and BUST
slots) and ``v[state, lane]`` (the mover's value at ``L0``). Rows are
independent, so a call's blocks may be cut between threads (the functions
release the GIL) without changing a bit of any row's arithmetic.

For each layer ``t`` from the row's top down, and each dice count ``m``: the
keep of each roll class chosen by the mover's value ``v = A + B L0``
(`choose`, every lane of a block side by side), the class-weighted sum of
the chosen keeps' columns plus the bust chance on B (`weigh`), the best
announcement before rolling two dice (`prediction`), and bank or roll. `terminal_rows` solves the states past the
cap (reach) with the same two steps.

Roll classes come as `Columns`-like arrays: ``start`` (C + 1) the first keep
of each class, and per column (dice rolled, or announcement) ``ptr`` into
``cls``/``prob``: the classes of that column and their chances, in class
order; ``bust`` the column's bust chance.
"""

from __future__ import annotations

import sys
import types
from typing import Any, Callable

import numpy as np
from numba import njit

from . import kernel_cache


def _array_maths_without_scipy_linalg() -> None:
    """Import Numba's array maths, which checks once that SciPy's BLAS imports (for ``np.dot``, which nothing
    here uses), without importing the whole of ``scipy.linalg`` for that check (0.15 s, a tenth of a two-player
    solve): during the import that module's name stands for an empty module, and is then forgotten, so that a
    later ``np.dot`` compiled anywhere imports the real one (`numba.np.linalg.ensure_blas`)."""
    name = "scipy.linalg.cython_blas"
    if "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules or name in sys.modules:
        return
    sys.modules[name] = stand_in = types.ModuleType(name)
    try:
        # lazy: under the stand-in set above
        import numba.np.arraymath  # noqa: F401
    finally:
        if sys.modules.get(name) is stand_in:
            del sys.modules[name]


_array_maths_without_scipy_linalg()


def JIT(func: Callable[..., None]) -> Any:
    """Compiled once and cached on disk in the user's cache folder (`kernel_cache`, never in the package), run
    without the GIL (`nogil`) so that threads share a pass."""
    return kernel_cache.enable(njit(nogil=True, error_model="numpy", boundscheck=False)(func))

#: Rows computed together, one per SIMD lane (the innermost axis of every table): a block of rows shares
#: its slots and loops, and the comparisons of different rows run side by side instead of one long chain.
LANES = 64
#: Layers of bank values gathered at once for a block (`fill_banks`): they stay in the core's cache.
BANK_LAYERS = 16


# The working arrays of a pass are made here, in NumPy, and handed to the compiled functions: NumPy's
# allocations compiled inside them would each be compiled anew on a machine's first run (a second apiece).
def terminal_work(n: int, classes: int, cols: int = 2) -> tuple[np.ndarray, ...]:
    """`terminal_rows`' working arrays for `n` states (parity, m), `classes` roll classes and `cols` columns (the
    stored seats' A, then B)."""
    return (np.zeros((n + 2, cols, LANES)), np.zeros((n, cols, LANES)), np.zeros((n + 2, LANES)),
            np.zeros((cols, LANES)),
            np.zeros(LANES), np.zeros((classes, LANES), dtype=np.int64), np.zeros(LANES, dtype=np.int64),
            np.zeros(classes, dtype=np.int64), np.zeros((n, LANES), dtype=np.bool_), np.zeros(LANES, dtype=np.bool_))


def turn_work(size: int, cols: int, dice: int, keeps: int, classes: int, p_keeps: int,
              p_classes: int) -> tuple[np.ndarray, ...]:
    """`turn_rows`' working arrays for `size` slots of `cols` columns, `keeps` plain keeps in `classes` roll
    classes and `p_keeps` announced keeps in `p_classes`."""
    return (np.zeros((size, cols, LANES)), np.zeros((BANK_LAYERS, dice, cols, LANES)), np.zeros((dice, cols, LANES)),
            np.zeros((size, LANES)), np.zeros((dice + 2 * cols + 3, LANES)), np.zeros((3, LANES), dtype=np.int64),
            np.zeros((classes, LANES), dtype=np.int64), np.zeros((p_classes, LANES), dtype=np.int64),
            np.zeros(keeps, dtype=np.int64), np.zeros(classes, dtype=np.int64), np.zeros(p_keeps, dtype=np.int64),
            np.zeros(p_classes, dtype=np.int64), np.zeros((2, LANES), dtype=np.bool_))


@JIT
def choose(v: np.ndarray, slot: np.ndarray, start: np.ndarray, tie: float, w: int, chosen: np.ndarray,
           alike: np.ndarray, best: np.ndarray, pick: np.ndarray) -> None:
    """The state ``chosen[c, lane]`` that the keep taken in class c leads to, for lanes ``0..w-1`` (keep k
    leads to ``slot[k]``, worth ``v[slot[k], lane]``): the best; on a tie (within `tie`, exactly equal when
    0) the last keep of its class (classes list their keeps by points, then dice in hand: the most points,
    then the most dice); ``alike[c]`` that state when every lane takes it (rows of a block are alike), else -1.
    `best` and `pick` are scratch (LANES)."""
    for c in range(len(start) - 1):
        k0, k1 = start[c], start[c + 1]
        s0 = slot[k0]
        row = v[s0]
        for lane in range(w):
            best[lane] = row[lane]
            pick[lane] = s0
        # one sweep: the last keep within `tie` of the best so far is the last within `tie` of the best (with
        # tie 0: the last of the best)
        for k in range(k0 + 1, k1):
            s = slot[k]
            row = v[s]
            for lane in range(w):
                x = row[lane]
                b = x if x > best[lane] else best[lane]  # max(best[lane], x), as Python's
                best[lane] = b
                pick[lane] = s if x >= b - tie else pick[lane]
        out = chosen[c]
        first = pick[0]
        same = 0
        for lane in range(w):
            out[lane] = pick[lane]
            same += pick[lane] == first
        alike[c] = first if same == w else -1  # one state for every lane: `weigh` reads its row whole


@JIT
def taken(chosen: np.ndarray, slot: np.ndarray, start: np.ndarray, choosing: np.ndarray, lane: int,
          out: np.ndarray) -> None:
    """The keep that `choose` took in each class with a choice, ``out[i]`` for class ``choosing[i]`` (its index
    in the class): the last keep of the class that leads to the state chosen (``chosen[c, lane]``), which is
    the one `choose`'s sweep took (a later keep to the same state is worth as much, so the sweep takes it)."""
    for i in range(len(choosing)):
        c = choosing[i]
        k0 = start[c]
        k = start[c + 1] - 1
        s = chosen[c, lane]
        while k > k0 and slot[k] != s:
            k -= 1
        out[i] = k - k0


@JIT
def told_slots(t: int, p_units: np.ndarray, p_next: np.ndarray, p_win: np.ndarray, win_slot: int, bust_slot: int,
               last: int, exact: bool, period: int, d: int, out: np.ndarray) -> None:
    """The state each keep after a right announcement leads to from layer t, ``out[k]``: ``2 (t + p_units[k])``
    with ``p_next[k]`` dice, WIN, or past the table folded by `period` (reach) or BUST (exact)."""
    for k in range(len(p_units)):
        target = 2 * (t + p_units[k])
        if p_win[k]:
            out[k] = win_slot
        elif target > last:
            out[k] = bust_slot if exact else (last - (target - last) % period) * d + p_next[k] - 1
        else:
            out[k] = target * d + p_next[k] - 1


@JIT
def weigh(ab: np.ndarray, chosen: np.ndarray, alike: np.ndarray, ptr: np.ndarray, cls: np.ndarray,
          prob: np.ndarray, bust: np.ndarray, col: int, w: int, out: np.ndarray) -> None:
    """``out[:, lane] = sum_c P(c | col) ab[chosen[c, lane], :, lane]`` in class order, plus the bust chance
    of `col` on B (the last column), for lanes ``0..w-1``."""
    cols = ab.shape[1]
    for j in range(cols):
        for lane in range(w):
            out[j, lane] = 0.0
    for e in range(ptr[col], ptr[col + 1]):
        pick = chosen[cls[e]]
        p = prob[e]
        one = alike[cls[e]]
        if one >= 0:
            for j in range(cols):
                acc = out[j]
                row = ab[one, j]
                for lane in range(w):
                    acc[lane] += p * row[lane]
        else:
            for j in range(cols):
                acc = out[j]
                for lane in range(w):
                    acc[lane] += p * ab[pick[lane], j, lane]
    last = out[cols - 1]
    for lane in range(w):
        last[lane] += bust[col]


@JIT
def terminal_rows(blocks: np.ndarray, index: np.ndarray, bank_a: np.ndarray, bank_b: np.ndarray, l0: np.ndarray,
                  won: float, term_idx: np.ndarray, start: np.ndarray, ptr: np.ndarray, cls: np.ndarray,
                  prob: np.ndarray, bust: np.ndarray, iterations: int, out_a: np.ndarray, out_b: np.ndarray,
                  out_move: np.ndarray, out_keep: np.ndarray, choosing: np.ndarray,
                  work: tuple[np.ndarray, ...]) -> None:
    """(A, B) of the states past the cap (reach), ``out_a[row, parity, m - 1, j]`` (the stored seats' A: one
    column for the mover alone) and ``out_b[row, parity, m - 1]``, the move taken there (``out_move``: 0 bank,
    1 roll) and, unless `out_keep` has no rows, the keep taken in each class with a choice
    (``out_keep[row, parity, i]``: the keep of class ``choosing[i]``, `taken`), for the rows of `blocks` (pairs
    ``first, end`` of at most LANES rows; row r's bank ``bank_a[index[r], parity, m - 1, j]``,
    ``bank_b[...]``), in the working arrays `work` (`terminal_work`).

    States (parity, m); keep k from parity ``par`` leads to ``term_idx[par, k]``
    (the parity after its points, or the WIN slot ``period * D``: `won` to the
    mover, 0 to the others; BUST is the next). Value iteration (every state
    from the previous iterate) with the keeps chosen by the mover's value at
    ``L = l0`` and bank when ``bank >= roll``, each row until its column changes
    add up to less than 1e-15 (then it is left as it is), or `iterations`.
    """
    per, d, seats = bank_a.shape[1], bank_a.shape[2], bank_a.shape[3]
    n = per * d
    tab, new, v, roll, best, chosen, pick, alike, take, done = work
    jb = seats
    for first, end in blocks:
        w = end - first
        tab[:, :, :] = 0.0
        tab[:n + 1, 0, :] = won  # every state (and WIN) starts won; BUST is worth L
        tab[n + 1, jb, :] = 1.0
        done[:] = False
        for _ in range(iterations):
            for s in range(n + 2):
                for lane in range(w):
                    v[s, lane] = tab[s, 0, lane] + tab[s, jb, lane] * l0[first + lane]
            for par in range(per):
                choose(v, term_idx[par], start, 0.0, w, chosen, alike, best, pick)
                if len(out_keep):
                    for lane in range(w):
                        if not done[lane]:
                            taken(chosen, term_idx[par], start, choosing, lane, out_keep[first + lane, par])
                for m in range(d):
                    weigh(tab, chosen, alike, ptr, cls, prob, bust, m, w, roll)
                    s = par * d + m
                    for lane in range(w):
                        r = index[first + lane]
                        lr = l0[first + lane]
                        banked = bank_a[r, par, m, 0] + bank_b[r, par, m] * lr >= roll[0, lane] + roll[jb, lane] * lr
                        if not done[lane]:
                            take[s, lane] = banked
                        if banked:
                            for j in range(seats):
                                new[s, j, lane] = bank_a[r, par, m, j]
                            new[s, jb, lane] = bank_b[r, par, m]
                        else:
                            for j in range(seats + 1):
                                new[s, j, lane] = roll[j, lane]
            settled = True
            for lane in range(w):
                if done[lane]:
                    continue
                change = 0.0
                for j in range(seats + 1):
                    most = 0.0
                    for s in range(n):
                        e = abs(new[s, j, lane] - tab[s, j, lane])
                        most = e if e > most else most
                        tab[s, j, lane] = new[s, j, lane]
                    change += most
                done[lane] = change < 1e-15
                settled = settled and done[lane]
            if settled:
                break
        for lane in range(w):
            for par in range(per):
                for m in range(d):
                    for j in range(seats):
                        out_a[first + lane, par, m, j] = tab[par * d + m, j, lane]
                    out_b[first + lane, par, m] = tab[par * d + m, jb, lane]
                    out_move[first + lane, par, m] = 0 if take[par * d + m, lane] else 1


#: Codes of a bank in the tables of `fill_banks` besides a new score (>= 0): a bust, a win, not allowed.
BANK_BUST, BANK_WIN, BANK_NONE = -1, -2, -3


@JIT
def fill_banks(index: np.ndarray, first: int, w: int, top: np.ndarray, lo: int, hi: int, code: np.ndarray,
               crow: np.ndarray, src_a: np.ndarray, src_b: np.ndarray, srow: np.ndarray, passing: bool, won: float,
               out: np.ndarray) -> None:
    """The bank (A..., B) of lanes ``0..w-1`` (rows ``index[first + lane]``) at layers ``lo..hi`` (up to
    ``top[lane]``), every m, into ``out[t - lo, m - 1, :, lane]``.

    Row r's bank at (t, m) is ``c = code[crow[r], t, m - 1]`` (the m axis of `code` and of `src_*` may have
    length 1: the same for every m): ``src_a[srow[r], c, m - 1]`` and ``src_b[...]`` as they are, or with
    `passing` the turn start ``src_a[srow[r], c]`` the bank passes the dice to, seen by the banker
    (`seats.pass_dice`: his ``1 - sum``, then the others; B = 0); `BANK_BUST` is A = 0, B = 1; `BANK_WIN`
    `won` to the banker, 0 to the others; `BANK_NONE` A = -inf (not allowed).
    """
    d, cols = out.shape[1], out.shape[2]
    jb = cols - 1
    one_code, one_src = code.shape[2] == 1, src_a.shape[2] == 1
    for lane in range(w):
        r = index[first + lane]
        cr, sr = crow[r], srow[r]
        for t in range(lo, (hi if hi < top[lane] else top[lane]) + 1):
            before = BANK_NONE - 1
            for m in range(d):
                c = code[cr, t, 0 if one_code else m]
                here = out[t - lo, m]
                if c == before and one_src:  # the same bank as with one die fewer
                    for j in range(cols):
                        here[j, lane] = out[t - lo, m - 1, j, lane]
                    continue
                before = c
                if c >= 0:
                    mm = 0 if one_src else m
                    if passing:
                        total = -0.0  # the order of NumPy's sum (`pass_dice`)
                        for j in range(jb):
                            total += src_a[sr, c, mm, j]
                        here[0, lane] = 1.0 - total
                        for j in range(1, jb):
                            here[j, lane] = src_a[sr, c, mm, j - 1]
                        here[jb, lane] = 0.0
                    else:
                        for j in range(jb):
                            here[j, lane] = src_a[sr, c, mm, j]
                        here[jb, lane] = src_b[sr, c, mm]
                else:
                    for j in range(cols):
                        here[j, lane] = 0.0
                    if c == BANK_BUST:
                        here[jb, lane] = 1.0
                    elif c == BANK_WIN:
                        here[0, lane] = won
                    else:
                        here[0, lane] = -np.inf


@JIT
def turn_rows(blocks: np.ndarray, index: np.ndarray, table: np.ndarray, begin: np.ndarray, scores: np.ndarray,
              caps: np.ndarray, code: np.ndarray, crow: np.ndarray, src_a: np.ndarray, src_b: np.ndarray,
              srow: np.ndarray, passing: bool, l0: np.ndarray, strike: np.ndarray, term_a: np.ndarray,
              term_b: np.ndarray, term_move: np.ndarray, moves: np.ndarray, keeps: np.ndarray, told_keeps: np.ndarray,
              term_keep: np.ndarray, choosing: np.ndarray, p_choosing: np.ndarray, tpad: int, exact: bool,
              period: int, tie: float, won: float,
              base: np.ndarray, win: np.ndarray, start: np.ndarray, ptr: np.ndarray, cls: np.ndarray,
              prob: np.ndarray, bust: np.ndarray,
              announced: tuple[np.ndarray, ...] | None, dice: int, work: tuple[np.ndarray, ...]) -> None:
    """One backward pass for the rows of `blocks` (pairs ``first, end`` of at most LANES rows, best of
    similar caps): the turn start's columns in ``begin[row]`` (J + 1: the stored seats' A, then B), and
    every state's in ``table[row]`` (size, J + 1) unless `table` has no rows, and with it, unless `moves` has
    no rows, the move each state takes in ``moves[row, state]`` (σ: 0 bank, 1 roll plainly, 2 + j announce
    the j-th choice; past the cap under reach the terminal move ``term_move[row, parity, m - 1]``; -1 where
    there is no decision: an overshoot, WIN, BUST), and the keep taken at each layer in each roll class with a
    choice in ``keeps[row, t, i]`` (class ``choosing[i]``; the keep's index in its class, `taken`; past the cap
    under reach ``term_keep[row, parity, i]``) and, after an announcement, in ``told_keeps[row, t, i]``
    (two-dice class ``p_choosing[i]`` of `announced`); on the two layers past a row's top, where a reader may
    ask off the policy, the keeps `choose` takes on the values there; -1 above them. Row r reads `l0` and `term_*`
    at r, `scores`, `caps`, the bank and `strike` at ``index[r]`` (`strike`: empty, or per row the value of a bust
    on all D dice, NaN where it is L) (a pass over some rows of a level reads their banks
    where they are). The banks of a block are gathered a few layers at a time (`fill_banks`: what `code`,
    `crow`, `src_*`, `srow` and `passing` say) as the layers go down.

    Every state starts at its value past the cap: under exact an overshoot
    (B = 1), under reach ``term_*[row, (score + t) % period, m - 1]``; WIN is
    worth `won` to the mover, BUST is B = 1. Then the layers below the row's
    cap (``t < cap``, or ``t <= cap`` under exact), from the top down. The
    plain keep k leads from layer t to ``base[k] + t * D`` (WIN if ``win[k]``);
    an announcement's keep (`announced`: the arrays ``p_units, p_next, p_win,
    p_start, p_ptr, p_cls, p_prob, p_bust`` of `Prediction`, or None without
    prediction) to ``2 (t + p_units)``, folded by `period` past the table
    (reach) or BUST (exact). A row's arithmetic is its own (one lane): the same
    whichever rows share its block or its call.

    Without prediction `announced` is None and Numba prunes the announcements'
    code before typing it (`if announced is not None`): a ruleset without them
    compiles a smaller pass (a version of its own, cached beside the other).
    """
    cols = begin.shape[1]
    jb = cols - 1  # B's column
    d = dice
    seats = cols - 1
    size = tpad * d + 2
    win_slot, bust_slot = size - 2, size - 1
    last = tpad - 1
    announcements = 0
    if announced is not None:
        announcements = len(announced[4]) - 1
    ab, banks, rolls, v, lanes_f, lanes_i, chosen, p_chosen, slot, alike, p_slot, p_alike, flags = work
    roll_v, told, best_told = lanes_f[:d], lanes_f[d:d + cols], lanes_f[d + cols:d + 2 * cols]
    best, best_v, lr = lanes_f[d + 2 * cols], lanes_f[d + 2 * cols + 1], lanes_f[d + 2 * cols + 2]
    pick, top, told_at = lanes_i[0], lanes_i[1], lanes_i[2]  # told_at: the announcement taken with two dice (-1: none)
    take, live = flags[0], flags[1]
    keep_moves = len(moves) > 0
    reach = 0  # the most layers a plain keep moves up
    for k in range(len(base)):
        reach = base[k] // d if base[k] // d > reach else reach  # the block's bank (A..., B) at (t, m) of a few layers
    for first, end in blocks:
        w = end - first
        high = -1
        for lane in range(w):
            r = first + lane
            lr[lane] = l0[r]
            top[lane] = caps[index[r]] if exact else caps[index[r]] - 1
            high = top[lane] if top[lane] > high else high
        # the layers this block reads: up to its top layer's largest keep (all, for a kept table or announcements,
        # whose keeps fold into the table's last layers)
        span = tpad - 1 if len(table) or announcements else (high + reach if high + reach < tpad - 1 else tpad - 1)
        used = (span + 1) * d
        for i in range(used + 2):
            s = i if i < used else size - 2 + (i - used)  # then the WIN and BUST slots
            for j in range(cols):
                for lane in range(w):
                    ab[s, j, lane] = 0.0
        for t in range(span + 1):
            for m in range(d):
                s = t * d + m
                for lane in range(w):
                    if exact:
                        ab[s, jb, lane] = 1.0
                    else:
                        r = first + lane
                        par = (scores[index[r]] + t) % period
                        for j in range(seats):
                            ab[s, j, lane] = term_a[r, par, m, j]
                        ab[s, jb, lane] = term_b[r, par, m]
                    if keep_moves:
                        moves[first + lane, s] = -1 if exact else term_move[first + lane,
                                                                            (scores[index[first + lane]] + t) % period, m]
            if keep_moves:
                for lane in range(w):
                    par = (scores[index[first + lane]] + t) % period
                    for i in range(len(choosing)):
                        keeps[first + lane, t, i] = -1 if exact else term_keep[first + lane, par, i]
                    for i in range(len(p_choosing)):
                        told_keeps[first + lane, t, i] = -1
        if keep_moves:
            for lane in range(w):
                for s in range((span + 1) * d, size):
                    moves[first + lane, s] = -1
        for lane in range(w):
            ab[win_slot, 0, lane] = won
            ab[bust_slot, jb, lane] = 1.0
        for i in range(used + 2):
            s = i if i < used else size - 2 + (i - used)
            for lane in range(w):
                v[s, lane] = ab[s, 0, lane] + ab[s, jb, lane] * lr[lane]
        if keep_moves:
            # past a row's top (the layers cap, cap + 1 a table stores) the pass takes no decision but the moves
            # past the cap (reach: `terminal_rows`, with its keeps); a reader's question off the policy there (a
            # turn taken over past an exact goal, an announcement past the cap) reads the keep `choose` takes on
            # the states' values there: an overshoot's (exact), a terminal state's (reach)
            low = high
            for lane in range(w):
                low = top[lane] if top[lane] < low else low
            for t in range(low + 1, high + 3 if high + 3 < tpad else tpad):
                if exact:
                    for k in range(len(base)):
                        slot[k] = win_slot if win[k] else base[k] + t * d
                    choose(v, slot, start, tie, w, chosen, alike, best, pick)
                    for lane in range(w):
                        if top[lane] < t <= top[lane] + 2:
                            taken(chosen, slot, start, choosing, lane, keeps[first + lane, t])
                if announced is not None and announcements and d >= 2:
                    told_slots(t, announced[0], announced[1], announced[2], win_slot, bust_slot, last, exact,
                               period, d, p_slot)
                    choose(v, p_slot, announced[3], tie, w, p_chosen, p_alike, best, pick)
                    for lane in range(w):
                        if top[lane] < t <= top[lane] + 2:
                            taken(p_chosen, p_slot, announced[3], p_choosing, lane, told_keeps[first + lane, t])
        lo = high + 1
        for t in range(high, -1, -1):
            off = t * d
            if t < lo:  # the banks of the next few layers down, gathered for the block's lanes
                lo = t - t % BANK_LAYERS
                fill_banks(index, first, w, top, lo, t, code, crow, src_a, src_b, srow, passing, won, banks)
            # the lanes up to the last one whose row has layer t (all of a block sorted by cap); an int64 from
            # the start, not a literal 0, so that `choose` and `weigh` are compiled once
            wide = w - w
            for lane in range(w):
                if top[lane] >= t:
                    wide = lane + 1
            for k in range(len(base)):
                slot[k] = win_slot if win[k] else base[k] + off
            choose(v, slot, start, tie, wide, chosen, alike, best, pick)
            if keep_moves:
                for lane in range(wide):
                    if t <= top[lane]:
                        taken(chosen, slot, start, choosing, lane, keeps[first + lane, t])
            for m in range(d):
                weigh(ab, chosen, alike, ptr, cls, prob, bust, m, wide, rolls[m])
                if m == d - 1 and len(strike):  # a bust on all D dice worth ``strike`` (history rules), not L
                    for lane in range(wide):
                        x = strike[index[first + lane]]
                        if x == x:
                            rolls[m, 0, lane] += bust[m] * x
                            rolls[m, jb, lane] -= bust[m]
                for lane in range(wide):
                    roll_v[m, lane] = rolls[m, 0, lane] + rolls[m, jb, lane] * lr[lane]
            if announced is not None and announcements and d >= 2:
                p_units, p_next, p_win, p_start, p_ptr, p_cls, p_prob, p_bust = announced
                told_slots(t, p_units, p_next, p_win, win_slot, bust_slot, last, exact, period, d, p_slot)
                choose(v, p_slot, p_start, tie, wide, p_chosen, p_alike, best, pick)
                if keep_moves:
                    for lane in range(wide):
                        if t <= top[lane]:
                            taken(p_chosen, p_slot, p_start, p_choosing, lane, told_keeps[first + lane, t])
                for lane in range(wide):
                    best_v[lane] = -np.inf
                    told_at[lane] = -1
                for a in range(announcements):  # the first best announcement
                    weigh(ab, p_chosen, p_alike, p_ptr, p_cls, p_prob, p_bust, a, wide, told)
                    for lane in range(wide):
                        told_v = told[0, lane] + told[jb, lane] * lr[lane]
                        if told_v > best_v[lane]:
                            best_v[lane] = told_v
                            told_at[lane] = a
                            for j in range(cols):
                                best_told[j, lane] = told[j, lane]
                for lane in range(wide):
                    if best_v[lane] > roll_v[1, lane] + tie:
                        for j in range(cols):
                            rolls[1, j, lane] = best_told[j, lane]
                        roll_v[1, lane] = best_v[lane]
                    else:
                        told_at[lane] = -1
            for m in range(d):  # bank or roll, lane by lane side by side; past a row's cap its states stay terminal
                s = off + m
                here, roll, now = banks[t - lo, m], rolls[m], v[s]
                for lane in range(wide):
                    bank_v = here[0, lane] + here[jb, lane] * lr[lane]
                    take[lane] = bank_v >= roll_v[m, lane] - tie
                    live[lane] = t <= top[lane]
                    if live[lane]:
                        now[lane] = bank_v if take[lane] else roll_v[m, lane]
                for j in range(cols):
                    cell, bank_j, roll_j = ab[s, j], here[j], roll[j]
                    for lane in range(wide):
                        if live[lane]:
                            cell[lane] = bank_j[lane] if take[lane] else roll_j[lane]
                if keep_moves:
                    for lane in range(wide):
                        if live[lane]:
                            told_here = told_at[lane] if m == 1 and announcements and d >= 2 else -1
                            moves[first + lane, s] = 0 if take[lane] else (1 if told_here < 0 else 2 + told_here)
        for lane in range(w):
            r = first + lane
            for j in range(cols):
                begin[r, j] = ab[d - 1, j, lane]
            if len(table):
                for s in range(size):
                    for j in range(cols):
                        table[r, s, j] = ab[s, j, lane]
