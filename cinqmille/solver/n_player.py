r"""The exact win-maximising solver for three players or more.

Model
=====
Points in units of 50. A turn start is the banked scores in playing order
from the player to move, ``s = (a, b, c)`` for three players; its value is the
vector ``V(s)`` of each seat's chance to win, in that order (the mover first).
Tables store the first ``n - 1`` seats; the last is ``1 - sum`` (`seats`).

A bank of ``t`` moves to ``(b, c, a')`` (``a'`` the score after the bank:
final stretch and its cap as `BankRules.outcome` says), a bust (or a void bank,
or a rule-of-50 fault) to ``(b, c, a)``, a winning bank or an instant win ends
the game for the mover: ``e_0 = (1, 0, 0)``. Seen from ``s``, a state the dice
passed to is worth ``P V`` with ``P`` the rotation that puts the passer last
(`pass_dice`). Within a turn, for the bust vector ``L(s) = P V(b, c, a)``:

.. math::

    V(s,t,m) &= \operatorname{pick}\big(\mathrm{Bank}(s,t,m),\ \mathrm{Roll}(s,t,m)\big)\\
    \mathrm{Roll}(s,t,m) &= P_\mathrm{bust}(m)\,L(s)
        + \sum_{r} P(r)\, \operatorname{pick}_{k \in K(r)} V(s,t+p_k,m_k)\\
    \mathrm{Bank}(s,t,m) &= P\,V(b, c, a') \quad (e_0 \text{ when } a' \text{ wins})\\
    V(s) &= \mathrm{Roll}(s,0,D)

where ``pick`` takes the option with the largest mover's value, and among
options within ``TIE = 1e-12`` of it: bank before roll; among keeps, more
points, then more dice in hand (the other seats' values are those of the
option picked). Everything else (opening, ``min_bank``, full hands, exact end)
is as for two players (`two_player`).

How it is solved
================
A bank raises the sum of the scores, so turn starts are solved level by level
in decreasing sum. A bust rotates the scores: ``s -> (b, c, a) -> (c, a, b) ->
s``, a cycle of three (one when ``a = b = c``) inside a level. Each level is
solved by `level.solve_level`, the one level solver of every table size: for a
fixed policy a turn is affine in its bust vector, ``V(s) = A(s) + B(s) L(s)``
(`TurnKernel.run` with seat values), and a Newton step solves the cycle
exactly; cycles on which the players' choices chase each other (no
stationary policy, RULES.md section 8, ``CHASE`` in `level`) are averaged, and
the solve says so (``exact = False``, the cycles named in the assumptions with
their Bellman residual). Two players are the case ``n = 2`` of the same
equations (``P V = 1 - W``), whose driver (`two_player`) adds the last round,
take-over offers and the scoreless-turn counters.

What three players do not have yet: the last round and take-over offers are
solved as if off, and the history rules as for two players (`relaxations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..rules import Rules
from .grid import ScoreGrid
from .kernel import TurnKernel
from .level import LevelTurns, solve_level
from .seats import every_seat, pass_dice
from .turns import counted
from .two_player import LevelStats, Progress

if TYPE_CHECKING:
    from .policy import TurnRows
    from .result import SolveResult

#: Largest table size solved: players allowed by the solver.
MAX_PLAYERS = 4


def relaxations_n(rules: Rules, players: int) -> tuple[str, ...]:
    """What the n-player solver assumes away beyond the two-player relaxations."""
    out = []
    if rules.last_round:
        out.append(f"last_round: not yet solved for {players} players; solved as if the rule were off")
    if rules.take_over:
        out.append(f"take_over: not yet solved for {players} players; solved as if the rule were off")
    if counted(rules):
        out.append(f"zero_turns: the scoreless-turn counters are not yet solved for {players} players; solved as if "
                   f"the rule were off")
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Level:
    """The turn starts of one level (a sum of scores), sorted by the mover's cap, descending."""

    rows: np.ndarray  # (P, n) scores in playing order from the mover, units
    caps: np.ndarray  # (P,)
    succ: np.ndarray  # (P,) the row a bust leads to: the scores rotated, (a, b, c) -> (b, c, a)


def levels(grid: ScoreGrid, players: int) -> list[tuple[int, Level]]:
    """Every level of turn starts, highest sum first."""
    s = grid.scores
    rows = np.stack(np.meshgrid(*([s] * players), indexing="ij"), axis=-1).reshape(-1, players)
    sums = rows.sum(axis=1)
    out = []
    g = grid.goal
    for total in np.unique(sums)[::-1]:
        level = rows[sums == total]
        caps = grid.cap(level[:, 0])
        order = np.argsort(-caps, kind="stable")
        level, caps = level[order], caps[order]
        code = np.zeros(len(level), dtype=np.int64)
        key = np.zeros(len(level), dtype=np.int64)
        for j in range(players):
            code = code * g + level[:, j]
            key = key * g + level[:, (j + 1) % players]
        sort = np.argsort(code)
        succ = sort[np.searchsorted(code, key, sorter=sort)]
        out.append((int(total), Level(level, caps, succ)))
    return out


def _guess(grid: ScoreGrid, rows: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A starting estimate of a level's seat vectors: a neighbour one score up (solved), else equal shares."""
    n = rows.shape[1]
    guess = np.full((len(rows), n), np.nan)
    above = np.append(grid.scores, [grid.goal])
    for j in range(n - 1, -1, -1):
        up = rows.copy()
        up[:, j] = above[np.searchsorted(grid.scores, rows[:, j], side="right")]
        ok = np.isnan(guess[:, 0]) & (up[:, j] < grid.goal)
        if ok.any():
            guess[ok] = every_seat(w[tuple(up[ok].T)])
    return np.where(np.isnan(guess), 1.0 / n, guess)


def solve_players(rules: Rules, players: int = 3, tol: float = 1e-12, progress: Progress | None = None,
                  kernel: TurnKernel | None = None) -> tuple[np.ndarray, LevelStats, np.ndarray]:
    """Turn-start seat values ``W[a, b, c, j]`` (units of 50; j < players - 1; NaN for impossible scores),
    the solve's figures, and the score rows (units) of the cycles without a stationary policy (`CHASE`)."""
    if not 2 <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be 2 to {MAX_PLAYERS}, got {players}")
    grid = ScoreGrid.of(rules)
    kernel = kernel or TurnKernel(rules)
    g = grid.goal
    w = np.full((g,) * players + (players - 1,), np.nan)
    todo = levels(grid, players)
    passes = states = 0
    worst = 0.0
    chasing: list[np.ndarray] = []
    for i, (_, level) in enumerate(todo):
        a, others = level.rows[:, 0], level.rows[:, 1:]
        turns = LevelTurns(a, level.caps, grid.seat_bank_table(a, others, int(level.caps.max()), w), level.succ,
                           np.zeros((len(a), players - 1)), _guess(grid, level.rows, w)[:, : players - 1])
        solved = solve_level(kernel, turns, tol)
        w[tuple(level.rows.T)] = solved.values
        if len(solved.unsettled):
            chasing.append(level.rows[solved.unsettled])
        passes += solved.passes
        res = solved.residual
        states += int((level.caps + 1).sum()) * rules.dice
        worst = max(worst, res)
        if progress is not None:
            progress((i + 1) / len(todo))
    stats = LevelStats(levels=len(todo), passes=passes, states=states, residual=worst)
    return w, stats, (np.concatenate(chasing) if chasing else np.zeros((0, players), dtype=np.int64))


def chase_note(chasing: np.ndarray, residual: float) -> tuple[str, ...]:
    """The assumption that states the cycles without a stationary policy (`CHASE`), or nothing."""
    if not len(chasing):
        return ()
    cycles = {tuple(np.roll(r, -int(np.argmin(r))).tolist()) for r in chasing}  # in playing order
    names = ", ".join("/".join(str(x * 50) for x in c) for c in sorted(cycles)[:5])
    more = f" and {len(cycles) - 5} more" if len(cycles) > 5 else ""
    return (f"{chasing.shape[1]} players: on {len(cycles)} bust cycle{'s' if len(cycles) > 1 else ''} of scores ({names}{more}) "
            f"the players' bank-or-roll choices chase each other and no stationary policy exists; there the "
            f"values are averaged over the iterations (step 1/k, a mixed choice), Bellman residual {residual:.1e}",)


def leading(others: tuple[int, ...], keep: int) -> tuple[int, ...]:
    """The reduction of a larger table: the `keep` opponents who threaten most (the highest scores; on a tie,
    the one who plays sooner), in their playing order.

    >>> leading((3000, 4500, 1000, 4500), 2)
    (4500, 4500)
    >>> leading((3000, 1000, 4000), 2)
    (3000, 4000)
    """
    chosen = sorted(sorted(range(len(others)), key=lambda i: (-others[i], i))[:keep])
    return tuple(others[i] for i in chosen)


def seat_rows(result: "SolveResult", a: int, others: np.ndarray) -> "TurnRows":
    """The policy's rows of a mover with banked `a` against each row of `others` (units, shape (k, n - 1): the
    opponents in playing order from the mover), as one `TurnRows` block: row i is the turn against `others[i]`.

    One kernel pass with seat values (`seat_bank_table`, the bust vector
    ``P V(others, a)``) gives every turn state; the mover's values make the
    block, so that every decision (advice, export, the engine's table) is the
    policy table's.
    """
    from .kernel import rolled
    from .policy import TurnRows

    rules, kernel, grid = result.rules, result.kernel, result.grid
    w = result.values
    rest = np.asarray(others, dtype=np.int64).reshape(len(others), -1)
    if rest.shape[1] != result.players - 1:
        raise ValueError(f"a {result.players}-player table needs {result.players - 1} opponents per row")
    k = len(rest)
    mover = np.full(k, a, dtype=np.int64)
    caps = grid.cap(mover)
    n = int(caps[0]) + 2
    l0 = pass_dice(w[tuple(rest.T) + (mover,)])[:, 0].copy()
    bank = grid.seat_bank_table(mover, rest, n - 1, w)
    _, _, ta, tb = kernel.run(mover, caps, bank, l0, keep_table=True)
    value = ta[:, :n, :, 0] + tb[:, :n] * l0[:, None, None]
    plain, predict = kernel.roll_tables(value, l0)
    d = rules.dice
    choices = () if kernel.prediction is None else tuple(int(c) * 50 for c in kernel.prediction.choices)
    offset = np.arange(k, dtype=np.int64) * n
    bank_v = (bank.a[:, :n, :, 0] + bank.b[:, :n] * l0[:, None, None]).reshape(-1, d)
    return TurnRows(rules, caps, offset, l0, bank_v, rolled(plain, predict).reshape(-1, d),
                    None if predict is None else plain[:, :, 1].reshape(-1).copy(),
                    None if predict is None else predict.reshape(-1, predict.shape[-1]), choices, kernel.period)
