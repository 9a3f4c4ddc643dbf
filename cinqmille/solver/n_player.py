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
stationary pure policy, RULES.md section 8, ``CHASE`` in `level`) are settled
by the mixed choice that leaves each chasing player indifferent (`settle`;
averaged where that fails), and the solve says so (``exact = False``, the
cycles, the bank probabilities and the residual in the assumptions: `chase_note`). Two players are the case ``n = 2`` of the same
equations (``P V = 1 - W``), whose driver (`two_player`) adds the last round,
take-over offers and the scoreless-turn counters; for three players and more
the last round and take-over offers are below.

Last round and take-over
================="""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..rules import Rules
from .grid import ScoreGrid
from .checkpoint import Checkpoint, LevelRecord
from .kernel import TurnKernel
from .keeps import TIE
from .cycle import LevelTurns
from .level import find_rows, guess_above, residual_words, solve_level
from .settle import Settled
from .seats import pass_dice
from .turns import counted
from .two_player import LevelStats, Progress


#: Largest table size solved: players allowed by the solver.
MAX_PLAYERS = 5


def relaxations_n(rules: Rules, players: int) -> tuple[str, ...]:
    """What the n-player solver assumes away beyond the two-player relaxations (the last round and take-over
    offers are solved: `rounds`)."""
    out = []
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
    at: np.ndarray  # (P, n) the positions of the scores (`ScoreGrid.slots`): the row's cell of the table


def level_sums(grid: ScoreGrid, players: int) -> np.ndarray:
    """(sums, rows, states): every sum of `players` possible scores (units), highest first, with the number of
    score rows of that sum and their turn states (``(cap + 1) D`` per row), counted by convolution."""
    possible = np.zeros(grid.goal, dtype=np.int64)
    possible[grid.scores] = 1
    weight = np.zeros(grid.goal, dtype=np.int64)
    weight[grid.scores] = grid.cap(grid.scores) + 1
    rows, states = possible, weight
    for _ in range(players - 1):
        rows, states = np.convolve(rows, possible), np.convolve(states, possible)
    sums = np.flatnonzero(rows)[::-1]
    return np.stack([sums, rows[sums], states[sums] * grid.rules.dice], axis=1)


def level_at(grid: ScoreGrid, players: int, total: int, heads: tuple[np.ndarray, np.ndarray] | None = None,
             pending_only: bool = False) -> Level:
    """The level of sum `total` (units), built on its own: the rows of `players` possible scores adding up to
    `total` in lexicographic order, then sorted by the mover's cap (stable); `heads`: the `level_heads` of the
    grid, when the caller keeps them (`pending_only`: as `levels` says)."""
    s = grid.scores
    pos, sums = heads if heads is not None else level_heads(grid, players)
    parts = []
    for c in range(len(s)):  # the last score at position c: the heads that add up to the rest
        lo, hi = np.searchsorted(sums, [total - s[c], total - s[c] + 1])
        if hi > lo:
            parts.append(np.column_stack([pos[lo:hi], np.full(hi - lo, c, dtype=np.int64)]))
    at = np.concatenate(parts) if parts else np.zeros((0, players), dtype=np.int64)
    width = len(s)
    code = np.ravel_multi_index(tuple(at.T), (width,) * players) if len(at) else np.zeros(0, dtype=np.int64)
    at = at[np.argsort(code, kind="stable")]
    rows = s[at]
    if pending_only:
        keep = np.isin(rows, np.asarray(grid.pending, dtype=np.int64)).any(axis=1)
        at, rows = at[keep], rows[keep]
    caps = grid.cap(rows[:, 0])
    order = np.argsort(-caps, kind="stable")
    at, rows, caps = at[order], rows[order], caps[order]
    code = np.zeros(len(at), dtype=np.int64)
    key = np.zeros(len(at), dtype=np.int64)
    for j in range(players):
        code = code * width + at[:, j]
        key = key * width + at[:, (j + 1) % players]
    succ = find_rows(code, key)  # a bust rotates the scores: always a row of the level
    return Level(rows, caps, succ, at)


def level_heads(grid: ScoreGrid, players: int) -> tuple[np.ndarray, np.ndarray]:
    """Every choice of the first ``players - 1`` scores (positions, lexicographic order) sorted by their sum, and
    those sums (units): a level's rows are read from them (`level_at`)."""
    s = grid.scores
    k = players - 1
    pos = np.stack(np.meshgrid(*([np.arange(len(s))] * k), indexing="ij"), axis=-1).reshape(-1, k)
    sums = s[pos].sum(axis=1)
    order = np.argsort(sums, kind="stable")
    return pos[order], sums[order]


def levels(grid: ScoreGrid, players: int, pending_only: bool = False) -> list[tuple[int, Level]]:
    """Every level of turn starts, highest sum first (`pending_only`: the rows where a player holds a pending
    start, `ScoreGrid.pending`; a bust rotates a row, so they are closed under it). Every level at once: the
    solver builds them one at a time (`level_at`)."""
    heads = level_heads(grid, players)
    out = [(int(t), level_at(grid, players, int(t), heads, pending_only)) for t in level_sums(grid, players)[:, 0]]
    return [(t, lv) for t, lv in out if len(lv.rows)]


@dataclass(frozen=True, slots=True)
class Chasing:
    """The cycles without a stationary policy (`CHASE`) of a solve: their score rows, and how each was settled."""

    rows: np.ndarray  # (R, n) score rows (units, playing order from the mover) of every chasing cycle
    cycles: tuple[tuple[np.ndarray, Settled], ...] = ()  # per cycle: its score rows (units) and its settlement

    def __len__(self) -> int:
        return len(self.rows)


def solve_players(rules: Rules, players: int = 3, tol: float = 1e-12, progress: Progress | None = None,
                  kernel: TurnKernel | None = None, pending: tuple[int, ...] = (),
                  base: np.ndarray | None = None, base_scores: np.ndarray | None = None,
                  checkpoint: Checkpoint | None = None) -> tuple[np.ndarray, LevelStats, Chasing]:
    """Turn-start seat values ``W[ia, ib, ic, j]`` (j < players - 1) at the positions of the possible scores
    (`ScoreGrid.slots`: read them with `ScoreGrid.seat_values`), the solve's figures, and the cycles without a
    stationary policy (`CHASE`, `Chasing`).

    `pending` and `base` extend a solved table `base` (laid out on the scores
    `base_scores`, by default the ruleset's) to the starting scores below the
    opening (units; `solver.result`): only the rows where a player holds one
    are solved, the others read from `base`. With a `checkpoint` every finished
    level is kept on disk, and the levels found there are read, not solved
    (`checkpoint`). `progress` is told the fraction of turn states done.
    """
    if not 2 <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be 2 to {MAX_PLAYERS}, got {players}")
    grid = ScoreGrid.of(rules, pending)
    kernel = kernel or TurnKernel(rules)
    g, s = grid.goal, len(grid.scores)
    w = np.full((s,) * players + (players - 1,), np.nan)
    if base is not None:
        from_scores = ScoreGrid.of(rules).scores if base_scores is None else np.asarray(base_scores)
        w[np.ix_(*([grid.slots(from_scores)] * players))] = base
    sums = level_sums(grid, players)
    heads = level_heads(grid, players)
    total_states = max(int(sums[:, 2].sum()), 1)
    done_states = levels_done = passes = states = 0
    worst = 0.0
    chasing: list[np.ndarray] = []
    cycles: list[tuple[np.ndarray, Settled]] = []
    top = int(grid.cap(grid.scores).max())
    codes = grid.position_codes(top)  # every bank of every score, read with the turn starts (`StartBanks`)
    resuming = checkpoint is not None
    for total, _, level_states in sums.tolist():
        level = level_at(grid, players, total, heads, pending_only=base is not None)
        done_states += level_states
        if not len(level.rows):
            continue
        found = checkpoint.load(total, len(level.rows)) if resuming and checkpoint is not None else None
        resuming = found is not None
        if found is None:
            a, others = level.rows[:, 0], level.rows[:, 1:]
            turns = LevelTurns(a, level.caps, grid.start_banks(a, others, top, w, codes=codes), level.succ,
                               np.zeros((len(a), players - 1)), guess_above(grid.scores, g, level.rows, w, grid.where))
            solved = solve_level(kernel, turns, tol)
            found = LevelRecord(solved.values, solved.passes, solved.residual,
                                int((level.caps + 1).sum()) * rules.dice, solved.unsettled, solved.settled)
            if checkpoint is not None and not checkpoint.save(total, found):
                checkpoint = None  # warned once: the rest is solved without keeping it
        w[tuple(level.at.T)] = found.values
        if len(found.unsettled):
            chasing.append(level.rows[found.unsettled])
            cycles.extend((level.rows[record.rows], record) for record in found.settled)
        levels_done += 1
        passes += found.passes
        states += found.states
        worst = max(worst, found.residual)
        if progress is not None:
            progress(done_states / total_states)
    stats = LevelStats(levels=levels_done, passes=passes, states=states, residual=worst)
    rows = np.concatenate(chasing) if chasing else np.zeros((0, players), dtype=np.int64)
    return w, stats, Chasing(rows, tuple(cycles))


def _name(rows: np.ndarray) -> str:
    """A cycle's name: its scores in playing order from the rotation that reads smallest (points)."""
    first = min(tuple(np.roll(r, -j).tolist()) for r in rows for j in range(len(r)))
    return "/".join(str(x * 50) for x in first)


def chase_note(chasing: "Chasing | np.ndarray", residual: float) -> tuple[str, ...]:
    """The assumption that states the cycles without a stationary policy (`CHASE`) and how they were settled
    (`settle`), or nothing."""
    if not len(chasing):
        return ()
    found = chasing if isinstance(chasing, Chasing) else Chasing(np.asarray(chasing))
    rows = found.rows
    names = sorted({_name(r[None]) for r in rows})
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    n = rows.shape[1]
    head = (f"{n} players: on {len(names)} bust cycle{'s' if len(names) > 1 else ''} of scores "
            f"({', '.join(names[:5])}{more}) the players' bank-or-roll choices chase each other as the values are "
            f"iterated")
    settled = [(r, s) for r, s in found.cycles if s.rule == "mixed"]
    mixed = [(r, s) for r, s in settled if len(s.mixing)]
    pure = [r for r, s in settled if not len(s.mixing)]  # a stationary pure policy the iteration did not reach
    averaged = [(r, s) for r, s in found.cycles if s.rule != "mixed"]
    if not found.cycles:  # no record of how (an older caller): the averaging
        averaged = [(rows, Settled(rows[:0], "averaged", rows[:0], np.zeros(0), (), float("nan"), float("nan"), 0))]
    parts = [head]
    if settled:
        where = []
        for score_rows, s in mixed[:5]:
            local = {int(i): j for j, i in enumerate(s.rows)}
            for i, q, pivots in zip(s.mixing, s.q, s.pivots):
                scores = "/".join(str(x * 50) for x in score_rows[local[int(i)]])
                at = " or ".join(f"{t * 50} points with {m} {'die' if m == 1 else 'dice'}" for t, m in pivots) or "the turn start (its policies "\
                    "differ in more than a bank)"
                where.append(f"the mover at {scores} banks with probability {q:.6f} at {at}")
        extra = f"; and {len(mixed) - 5} more cycles" if len(mixed) > 5 else ""
        several = [s.solutions for _, s in settled if s.solutions > 1]
        choice = (f"; {len(several)} cycle{'s' if len(several) > 1 else ''} had several such settlements (up to "
                  f"{max(several)}): the one with the fewest mixing players, then the smallest bank probabilities, is "
                  f"taken") if several else ""
        gap = max(s.pure_gap for _, s in settled)
        res = max(s.residual for _, s in settled)
        how = []
        if mixed:
            how.append(f"{len(mixed)} cycle{'s are' if len(mixed) > 1 else ' is'} settled by the mixed choice that "
                       f"leaves each chasing player indifferent: {'; '.join(where)}{extra}")
        if pure:
            pure_names = sorted(_name(r) for r in pure)
            how.append(f"{len(pure)} cycle{'s are' if len(pure) > 1 else ' is'} settled by a stationary pure policy "
                       f"that the iteration did not reach, where no player mixes ("
                       f"{', '.join(pure_names[:5])}{' and more' if len(pure_names) > 5 else ''})")
        parts.append(f"{'; '.join(how)}{choice}; mixed-policy Bellman {residual_words(res)} for every seat. The "
                     f"policy tables play the pure decision with the tie rule (bank) there: the mover's chance is "
                     f"the same, the other seats' differ from the settled values by at most {gap:.1e}")
    if averaged:
        names_avg = sorted({_name(r) for r, _ in averaged})
        why = sorted({s.why for _, s in averaged if s.why})
        parts.append(f"{'cycle ' + ', '.join(names_avg[:5]) + (' and more' if len(names_avg) > 5 else '') if settled else 'they'}"
                     f" could not be settled by a mixed choice{' (' + '; '.join(why) + ')' if why else ''}: "
                     f"there the values are averaged over the iterations (step 1/k, a mixed choice), Bellman "
                     f"{residual_words(residual)}")
    return ("; ".join(parts),)


def leading(others: tuple[int, ...], keep: int) -> tuple[int, ...]:
    """The reduction of a larger table: the `keep` opponents who threaten most (the highest scores; on a tie,
    the one who plays sooner), in their playing order (one game of `threatening`).

    >>> leading((3000, 4500, 1000, 4500), 2)
    (4500, 4500)
    >>> leading((3000, 1000, 4000), 2)
    (3000, 4000)
    """
    chosen = threatening(np.array([others], dtype=np.int64), keep)[0]
    return tuple(int(others[i]) for i in chosen)


def threatening(others: np.ndarray, keep: int = 2) -> np.ndarray:
    """Column indices (games, keep) of the `keep` opponents who threaten most, in playing order: the highest
    scores, on a tie the one who plays sooner (`others` holds the opponents' scores in playing order, one
    game a row)."""
    n = others.shape[1]
    key = others * (n + 1) + (n - np.arange(n))[None, :]  # higher score first, then sooner
    top = np.argsort(-key, axis=1, kind="stable")[:, :keep]
    return np.asarray(np.sort(top, axis=1))
