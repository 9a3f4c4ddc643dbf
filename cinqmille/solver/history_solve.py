"""The two-player solve of the history model (`history`): both bounds, level by level, swept until they settle.

The rows ``(k, x, y)`` (bound, the mover's abstract sheet, the other's) are
grouped in levels by the sum of the two scores; a bank leads to a larger sum,
or, through a tie that knocks the other back, possibly to a smaller one, and a
strike always leads to a smaller sum. So the levels are solved top down with
the values of smaller sums as the previous sweep left them, and the sweeps are
repeated (Gauss-Seidel over the levels, as for `zero_turns` in `two_player`)
until no value moves by more than the tolerance. Inside a level a scoreless
turn without a strike leads to one row of the same level (the counters grow),
which `level.solve_level` solves exactly (Newton steps on the functional graph
of scoreless turns); every other leaf of a turn is a known number: the bank
values (`BankTable`, with the bounds' choices at ties), the value of a
scoreless turn that strikes (``outside``), and of a bust on all the dice that
strikes (``strike``, read by the kernel at a roll of all D dice). The turn pass
is the solver's own (`TurnKernel.run`), unchanged but for that leaf.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any, Callable

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from .budget import PROCESS_BYTES, Limits, TooLarge
from .cycle import LevelTurns
from .grid import ScoreGrid
from .history import Sheets, extreme, gather, gather_movers, unsupported
from .kernel import BankTable, TurnKernel
from .level import find_rows, solve_level
from .two_player import relaxations, solve_game

#: Most top-down sweeps of the levels.
MAX_SWEEPS = 400
#: Turn states of one sweep admitted by default (a sweep of the history model is a two-player solve this large;
#: a solve makes several).
HISTORY_STATES = 200_000_000
#: Floats per turn state of a level held at once (bank values A and B, the kernel's copies).
_LEVEL_FLOATS = 6


class HistoryUnsupported(CinqmilleError):
    """A ruleset the history model does not solve yet (the message says why)."""


@dataclass(frozen=True, slots=True)
class HistoryEstimate:
    """The size of a history solve, before anything is allocated."""

    sheets: int  # abstract sheets of one player
    rows: int  # turn starts (both bounds)
    states: int  # turn states of one sweep
    bytes: int


@dataclass(frozen=True, slots=True)
class HistoryResult:
    """Both bounds of every turn start, and the figures of the solve."""

    rules: Rules
    sheets: Sheets
    w: np.ndarray  # (2, S, S): W_k(x, y), the mover's chance, k = 0 the lower bound, 1 the upper
    states: int  # turn states of one sweep
    rows: int
    sweeps: int
    passes: int
    residual: float  # the largest Bellman residual of the last sweep's levels, or the last change of a sweep
    seconds: float
    changes: tuple[float, ...] = ()  # the largest change of a value in each sweep

    def chance(self, mover: int, other: int) -> tuple[float, float]:
        """[lower, upper] of the mover's chance at a turn start (abstract sheets `mover`, `other`)."""
        return float(self.w[0, mover, other]), float(self.w[1, mover, other])

    @property
    def first_seat(self) -> tuple[float, float]:
        """[lower, upper] of the first seat's chance from the start of the game."""
        s = self.sheets.start()
        return self.chance(s, s)

    @property
    def width(self) -> float:
        """The width of the first seat's interval."""
        lo, hi = self.first_seat
        return hi - lo

    @property
    def exact(self) -> bool:
        """Whether the bounds meet at the start of the game (within the solve's tolerance, 1e-12, and its residual)."""
        return self.width <= max(1e-12, 2 * self.residual)

    def headline(self) -> dict[str, Any]:
        """The figures `cinqmille solve` prints for a history solve, as a JSON-ready dict: each seat's chance as
        its interval ``[lower, upper]`` (`win_bounds`), and as one number (`first_player_win`, `win`) the middle
        of it, exact when the interval is zero."""
        lo, hi = self.first_seat
        mid = (lo + hi) / 2
        return {
            "rules": self.rules.name, "objective": "win", "players": 2, "model": "history",
            "states": self.states, "sweeps": self.sweeps, "turn_starts": self.rows, "sheets": self.sheets.size,
            "seconds": round(self.seconds, 3), "residual": self.residual, "exact": self.exact,
            "assumptions": list(other_assumptions(self.rules)),
            "first_player_win": mid, "second_player_win": 1.0 - mid, "win": [mid, 1.0 - mid],
            "win_bounds": [[lo, hi], [1.0 - hi, 1.0 - lo]], "interval": hi - lo,
        }


def other_assumptions(rules: Rules) -> tuple[str, ...]:
    """What the history solve still assumes for `rules`: the two-player solver's relaxations that are not about
    the score history (the kernel's own: announcements)."""
    history = tuple(f"{name}:" for name in rules.history_rules)
    return tuple(a for a in relaxations(rules) if not a.startswith(history))


def estimate_history(rules: Rules) -> HistoryEstimate:
    """Rows, turn states of one sweep and peak bytes of a history solve of `rules` (counted, not allocated)."""
    sheets = Sheets.count(rules)
    grid = ScoreGrid.of(rules)
    scores = grid.scores
    per = sheets  # sheets per score
    caps = grid.cap(scores) + 1
    d = rules.dice
    by_sum: dict[int, tuple[int, int]] = {}
    rows = states = 0
    for ia, a in enumerate(scores):
        for ib, b in enumerate(scores):
            n = 2 * per[ia] * per[ib]
            rows += n
            states += n * int(caps[ia]) * d
            r, s = by_sum.get(int(a + b), (0, 0))
            by_sum[int(a + b)] = (r + n, s + n * int(caps[ia]) * d)
    total = int(sum(per))
    widest = max(s for _, s in by_sum.values())
    return HistoryEstimate(total, rows, states, 2 * total * total * 8 * 4 + _LEVEL_FLOATS * 8 * widest + PROCESS_BYTES)


def check_history(rules: Rules, limits: Limits | None = None) -> HistoryEstimate:
    """The estimate of a history solve; raise `HistoryUnsupported` or `TooLarge` (one line each) when it cannot run."""
    why = unsupported(rules)
    if why is not None:
        raise HistoryUnsupported(f"'{rules.name}': {why}")
    est = estimate_history(rules)
    limits = limits or Limits(states=HISTORY_STATES)
    if est.states > limits.states or est.bytes > limits.bytes:
        raise TooLarge(f"'{rules.name}' with its score history (two players) would hold {est.rows:,} turn starts "
                       f"({est.sheets:,} sheets a player), visit about {est.states:,} turn states a sweep (several "
                       f"sweeps) and need about {est.bytes / 2**30:,.1f} GiB, above the limits of {limits.states:,} "
                       f"states and {limits.bytes / 2**30:,.1f} GiB (--max-states, --max-memory); --relaxed solves it "
                       "as if the history rules were off")
    return est


def _level_rows(sheets: Sheets, total: int, by_score: dict[int, np.ndarray]) -> tuple[np.ndarray, ...]:
    """The rows (k, x, y) of one level, sorted by the mover's cap descending."""
    ks, xs, ys = [], [], []
    for a, mine in by_score.items():
        theirs = by_score.get(total - a)
        if theirs is None:
            continue
        x, y = np.meshgrid(mine, theirs, indexing="ij")
        for bound in (0, 1):
            ks.append(np.full(x.size, bound))
            xs.append(x.ravel())
            ys.append(y.ravel())
    if not ks:
        return (np.zeros(0, dtype=np.int64),) * 3
    kind, x, y = np.concatenate(ks), np.concatenate(xs), np.concatenate(ys)
    caps = sheets.grid.cap(sheets.a[x])
    order = np.argsort(-caps, kind="stable")
    return kind[order], x[order], y[order]


def _ties(sheets: Sheets, y: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The other's possible sheets after a bank to `new` (per cell), padded with -1: the tie rule, or himself."""
    rules = sheets.rules
    width = max(sheets.fall_keep.shape[1], sheets.strike_p.shape[1])
    out = np.full((len(y), width), -1, dtype=np.int64)
    out[:, 0] = y
    if rules.ties == "off":
        return out
    latest = new == sheets.a[y]
    out[latest, : sheets.fall_keep.shape[1]] = sheets.fall_keep[y[latest]]
    if rules.ties == "deadly":
        before = (new == sheets.p[y]) & (sheets.p[y] > 0) & ~latest
        out[before] = -1
        out[before, : sheets.strike_p.shape[1]] = sheets.strike_p[y[before]]
    return out


def _banks(sheets: Sheets, codes: np.ndarray, k: np.ndarray, x: np.ndarray, y: np.ndarray, tmax: int,
           w: np.ndarray) -> BankTable:
    """The bank values (A + B L) of rows (k, x, y) at turn totals 0..tmax, every hand (`history`'s ``Bank_k``)."""
    from .compiled import BANK_BUST, BANK_WIN  # lazy: start-up time (compiled imports Numba)

    code = codes[sheets.a[x], : tmax + 1]  # (P, T, D)
    new = code.max(axis=2)  # the new score where a bank scores (the same for every hand that may bank)
    rows, cols = np.nonzero(new >= 0)
    n = new[rows, cols]
    mover = sheets.bank_to[x[rows], n]
    nxt = 1 - k[rows]
    value = w[nxt, y[rows], mover]
    tie = np.zeros(len(rows), dtype=bool)
    if sheets.rules.ties != "off":
        tie = (n == sheets.a[y[rows]]) | ((sheets.rules.ties == "deadly") & (n == sheets.p[y[rows]])
                                          & (sheets.p[y[rows]] > 0))
        if tie.any():
            sets = _ties(sheets, y[rows[tie]], n[tie])
            value[tie] = extreme(gather_movers(w, nxt[tie], sets, mover[tie]), nxt[tie] == 0)
    scored = np.full(new.shape, np.nan)
    scored[rows, cols] = 1.0 - value
    a_val = np.where(code >= 0, scored[..., None], -np.inf)
    a_val = np.where(code == BANK_WIN, 1.0, a_val)
    a_val = np.where(code == BANK_BUST, 0.0, a_val)
    return BankTable(a_val, (code == BANK_BUST).astype(float))


def _leaf(sheets: Sheets, w: np.ndarray, k: np.ndarray, x_sets: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The mover's value of handing the dice over with his sheet one of `x_sets` (per row), the bound's choice."""
    nxt = 1 - k
    return 1.0 - extreme(gather(w, nxt, y, x_sets), nxt == 0)


#: Sweeps between two extrapolations (`jump`).
JUMP_EVERY = 4


def jump(x0: np.ndarray, x1: np.ndarray, x2: np.ndarray) -> np.ndarray:
    """Three successive sweeps' values extrapolated to their limit, value by value (Aitken's delta squared), where
    they move geometrically (each step a fixed fraction of the last, below 0.95 in size, either sign); as they
    are elsewhere. Only the number of sweeps depends on it: the sweeps that follow still settle the fixed point."""
    d1, d2 = x1 - x0, x2 - x1
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = d2 / d1
        ok = (np.abs(ratio) < 0.95) & (np.abs(d1) > 0)
        limit = x2 + d2 * ratio / (1.0 - ratio)
    return np.where(ok, np.clip(limit, 0.0, 1.0), x2)


def relaxed_guess(rules: Rules, sheets: Sheets) -> np.ndarray:
    """A starting estimate of both bounds: the relaxed game's chance at the rows' scores (the history rules off,
    `two_player.solve_game`). Only the number of sweeps depends on it, not the fixed point."""
    off = replace(rules, crosses=False, bust_strikes_last_score=False, ties="off", zero_turns=None)
    w = solve_game(off)[0]
    w = w if w.ndim == 2 else w[0]
    guess = np.nan_to_num(w[sheets.a[:, None], sheets.a[None, :]], nan=0.5)
    return np.stack([guess, guess])


def solve_history(rules: Rules, tol: float = 1e-12, limits: Limits | None = None,
                  progress: Callable[[float], None] | None = None, kernel: TurnKernel | None = None) -> HistoryResult:
    """Both bounds of the two-player game with its history rules (`history`), to `tol`."""
    check_history(rules, limits)
    began = time.perf_counter()
    sheets = Sheets.of(rules)
    kernel = kernel or TurnKernel(rules)
    grid = sheets.grid
    g, s = grid.goal, sheets.size
    w = relaxed_guess(rules, sheets)
    by_score = {int(a): np.flatnonzero(sheets.a == a) for a in grid.scores}
    top_cap = int(grid.cap(grid.scores).max())
    codes = grid.bank_codes(np.arange(g), top_cap)
    single = (sheets.scoreless[:, 1:] < 0).all(axis=1) if sheets.scoreless.shape[1] > 1 else \
        np.ones(s, dtype=bool)
    stays = single & (sheets.a[sheets.scoreless[:, 0]] == sheets.a)  # a scoreless turn that strikes nothing
    special = (sheets.all_dice != sheets.scoreless).any(axis=1) if sheets.all_dice.shape == sheets.scoreless.shape \
        else np.ones(s, dtype=bool)
    levels = [(t, _level_rows(sheets, t, by_score)) for t in range(2 * (g - 1), -1, -1)]
    levels = [(t, rows) for t, rows in levels if len(rows[0])]
    states = sum(int((grid.cap(sheets.a[x]) + 1).sum()) * rules.dice for _, (_, x, _) in levels)
    passes = sweeps = 0
    residual = change = 0.0
    changes: list[float] = []
    rates: list[float] = []  # the contraction of plain sweeps (a sweep after a plain sweep)
    older: np.ndarray | None = None
    jumped = True
    for sweeps in range(1, MAX_SWEEPS + 1):
        before = w.copy()
        worst = 0.0
        for done, (_, (k, x, y)) in enumerate(levels):
            caps = grid.cap(sheets.a[x])
            tmax = int(caps.max())
            bank = _banks(sheets, codes, k, x, y, tmax, w)
            inside = stays[x]
            keys = (k * s + x) * s + y
            wanted = ((1 - k) * s + y) * s + np.maximum(sheets.scoreless[x, 0], 0)
            succ = np.where(inside, find_rows(keys, wanted), -1)
            outside = _leaf(sheets, w, k, sheets.scoreless[x], y)
            strike = None
            if rules.bust_strikes_last_score:
                strike = np.where(special[x], _leaf(sheets, w, k, sheets.all_dice[x], y), np.nan)
            turns = LevelTurns(sheets.a[x], caps, bank, succ, outside[:, None], w[k, x, y][:, None].copy(),
                               strike=strike)
            solved = solve_level(kernel, turns, tol)
            w[k, x, y] = solved.values[:, 0]
            passes += solved.passes
            worst = max(worst, solved.residual)
            if progress is not None:
                progress(min(1.0, (done + 1) / len(levels)))
        change = float(np.abs(w - before).max())
        if not jumped and changes[-1] > 0:
            rates.append(change / changes[-1])
        changes.append(change)
        residual = worst
        if change <= tol:
            break
        jumped = False
        if older is not None and sweeps % JUMP_EVERY == 0 and change > 1e3 * tol:
            w, jumped = jump(older, before, w), True
        older = before
    # plain sweeps contract geometrically (measured: by 0.55 to 0.7 a sweep under knock-back ties): what is left
    # after the last is at most its change times rate / (1 - rate), the largest rate of the plain sweeps
    rate = min(max(rates[-4:], default=0.0), 0.99)
    tail = change * rate / (1.0 - rate)
    return HistoryResult(rules, sheets, w, states, sum(len(r[0]) for _, r in levels), sweeps, passes,
                         max(residual, change, tail), time.perf_counter() - began, tuple(changes))
