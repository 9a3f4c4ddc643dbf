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
========================
Both are solved exactly for every table size (`rounds`, with the same kernel
and level solver; at ``n = 2`` its tables are the two-player driver's to
1e-15, a test). Under ``last_round`` the seat of the mover matters (seat 0
opens each round): the turn starts are ``V(k, s)``, a bust or a bank hands the
dice to seat ``k + 1 mod n``, so a bust cycle is still ``n`` rows of one level.
A bank of seat ``k < n - 1`` that reaches the goal (exactly, under ``exact``)
with ``new`` points, ``t`` turn points and ``m`` dice in hand starts the last
round: the seats ``k + 1 .. n - 1`` play one last turn each, in order. For the
seat ``j`` to play, against the target ``T`` (the leader's score under
``reach``, the goal under ``exact``) with the scores ``b_j, .., b_{n-1}`` of
the seats still to play, ``F_j(T, b, offer)`` is the vector of their chances
(the leader has the rest):

.. math::

    F_{n-1}(T, b) &= Q(b_{n-1}, T, \mathrm{offer}) \quad (\text{the two-player last turn, `LastTurn`})\\
    F_j(T, b) &= \text{the turn of seat } j \text{ with bust vector } (0, F_{j+1}(T, b_{>j}, -)),\
        \text{a bank of } t' \text{ with } m' \text{ dice that takes the victory}\\
        &\quad \text{worth } (1 - \textstyle\sum F_{j+1}, F_{j+1}(T', b_{>j}, (t', m'))),\
        T' = b_j + t' \ (\text{reach}),\ \text{the goal (exact)}

A bank takes the victory when it passes ``T`` (reach; an equal score does not)
or reaches the goal exactly (exact); a fault there counts as a bust; no other
bank is made in a last turn (it is worth nothing to the banker: rolling on is
never worth less). An instant win is the mover's; the trigger's bank is worth
``(1 - sum F_{k+1}, F_{k+1}, 0, ..)`` in his order. Under ``reach`` the trigger
and every middle seat may roll on past the target; their rows are followed
until the targets are alike (``LastTurn.reach_extension``, the chance of a
last turn no longer depending on the target to 1e-15): targets past
``goal + extension`` are moved back by whole periods (the taken points with
them), so that the banks past a row's cap depend on the parity only, and the
kernel's terminal states carry every seat (`compiled.terminal_rows`).

``take_over``: a bank of ``t`` points with ``m`` dice that leaves the banker
below the goal passes the dice to the next turn start ``s'``; if its mover has
opened (and, under ``exact``, ``t`` does not take him past the goal), it is
worth ``O(s', t, m)``: the next mover's turn start, or the vector of rolling
from ``(t, m)`` (he must roll before he banks) when that is better for him by
more than ``TIE`` (on a tie he starts afresh). The same offer is made in the
last round (the victory bank of the previous player, taken over with his
points). The roll from ``(t, m)`` of a row is its own turn shifted by ``t``
(`rounds.taken_rolls`: one kernel pass of a row of score ``a + t``, cap
``cap - t``, its bank at the taken state not allowed), so every seat's value
follows the mover's choices as in the turn itself. ``O`` of a level is
recorded when the level is solved, before any smaller sum needs it.

What the n-player solver does not have: the history rules and the
scoreless-turn counters are solved as for two players (`relaxations`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..rules import Rules
from .grid import ScoreGrid
from .kernel import TIE, TurnKernel
from .level import LevelTurns, find_rows, guess_above, residual_words, solve_level
from .settle import Settled
from .seats import pass_dice
from .turns import counted
from .two_player import LevelStats, Progress

if TYPE_CHECKING:
    from .kernel import BankTable, Decisions
    from .rows import TurnRows
    from .result import SolveResult

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


def levels(grid: ScoreGrid, players: int, pending_only: bool = False) -> list[tuple[int, Level]]:
    """Every level of turn starts, highest sum first (`pending_only`: the rows where a player holds a pending
    start, `ScoreGrid.pending`; a bust rotates a row, so they are closed under it)."""
    s = grid.scores
    rows = np.stack(np.meshgrid(*([s] * players), indexing="ij"), axis=-1).reshape(-1, players)
    if pending_only:
        rows = rows[np.isin(rows, np.asarray(grid.pending, dtype=np.int64)).any(axis=1)]
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
        succ = find_rows(code, key)  # a bust rotates the scores: always a row of the level
        out.append((int(total), Level(level, caps, succ)))
    return out


@dataclass(frozen=True, slots=True)
class Chasing:
    """The cycles without a stationary policy (`CHASE`) of a solve: their score rows, and how each was settled."""

    rows: np.ndarray  # (R, n) score rows (units, playing order from the mover) of every chasing cycle
    cycles: tuple[tuple[np.ndarray, Settled], ...] = ()  # per cycle: its score rows (units) and its settlement

    def __len__(self) -> int:
        return len(self.rows)


def solve_players(rules: Rules, players: int = 3, tol: float = 1e-12, progress: Progress | None = None,
                  kernel: TurnKernel | None = None, pending: tuple[int, ...] = (),
                  base: np.ndarray | None = None) -> tuple[np.ndarray, LevelStats, Chasing]:
    """Turn-start seat values ``W[a, b, c, j]`` (units of 50; j < players - 1; NaN for impossible scores),
    the solve's figures, and the cycles without a stationary policy (`CHASE`, `Chasing`).

    `pending` and `base` extend a solved table `base` to the starting scores below
    the opening (units; `solver.starts`): only the rows where a player holds one
    are solved, the others read from `base`.
    """
    if not 2 <= players <= MAX_PLAYERS:
        raise ValueError(f"players must be 2 to {MAX_PLAYERS}, got {players}")
    grid = ScoreGrid.of(rules, pending)
    kernel = kernel or TurnKernel(rules)
    g = grid.goal
    w = np.full((g,) * players + (players - 1,), np.nan) if base is None else base.copy()
    todo = levels(grid, players, pending_only=base is not None)
    passes = states = 0
    worst = 0.0
    chasing: list[np.ndarray] = []
    cycles: list[tuple[np.ndarray, Settled]] = []
    top = int(grid.cap(grid.scores).max())
    codes = grid.bank_codes(np.arange(g), top)  # every bank of every score, read with the turn starts (`StartBanks`)
    for i, (_, level) in enumerate(todo):
        a, others = level.rows[:, 0], level.rows[:, 1:]
        turns = LevelTurns(a, level.caps, grid.start_banks(a, others, top, w, codes=codes), level.succ,
                           np.zeros((len(a), players - 1)), guess_above(grid.scores, g, level.rows, w))
        solved = solve_level(kernel, turns, tol)
        w[tuple(level.rows.T)] = solved.values
        if len(solved.unsettled):
            chasing.append(level.rows[solved.unsettled])
            cycles.extend((level.rows[record.rows], record) for record in solved.settled)
        passes += solved.passes
        res = solved.residual
        states += int((level.caps + 1).sum()) * rules.dice
        worst = max(worst, res)
        if progress is not None:
            progress((i + 1) / len(todo))
    stats = LevelStats(levels=len(todo), passes=passes, states=states, residual=worst)
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
            f"({', '.join(names[:5])}{more}) the players' bank-or-roll choices chase each other and no stationary "
            f"pure policy exists")
    mixed = [(r, s) for r, s in found.cycles if s.rule == "mixed"]
    averaged = [(r, s) for r, s in found.cycles if s.rule != "mixed"]
    if not found.cycles:  # no record of how (an older caller): the averaging
        averaged = [(rows, Settled(rows[:0], "averaged", rows[:0], np.zeros(0), (), float("nan"), float("nan"), 0))]
    parts = [head]
    if mixed:
        where = []
        for score_rows, s in mixed[:5]:
            local = {int(i): j for j, i in enumerate(s.rows)}
            for i, q, pivots in zip(s.mixing, s.q, s.pivots):
                scores = "/".join(str(x * 50) for x in score_rows[local[int(i)]])
                at = " or ".join(f"{t * 50} points with {m} {'die' if m == 1 else 'dice'}" for t, m in pivots) or "the turn start (its policies "\
                    "differ in more than a bank)"
                where.append(f"the mover at {scores} banks with probability {q:.6f} at {at}")
        extra = f"; and {len(mixed) - 5} more cycles" if len(mixed) > 5 else ""
        several = [s.solutions for _, s in mixed if s.solutions > 1]
        choice = (f"; {len(several)} cycle{'s' if len(several) > 1 else ''} had several such settlements (up to "
                  f"{max(several)}): the one with the fewest mixing players, then the smallest bank probabilities, is "
                  f"taken") if several else ""
        gap = max(s.pure_gap for _, s in mixed)
        res = max(s.residual for _, s in mixed)
        parts.append(f"{len(mixed)} cycle{'s are' if len(mixed) > 1 else ' is'} settled by the mixed choice that "
                     f"leaves each chasing player indifferent: {'; '.join(where)}{extra}{choice}; mixed-policy Bellman "
                     f"{residual_words(res)} for every seat. The policy tables play the pure decision with the tie rule "
                     f"(bank) there: the mover's chance is the same, the other seats' differ from the settled values "
                     f"by at most {gap:.1e}")
    if averaged:
        names_avg = sorted({_name(r) for r, _ in averaged})
        why = sorted({s.why for _, s in averaged if s.why})
        parts.append(f"{'cycle ' + ', '.join(names_avg[:5]) + (' and more' if len(names_avg) > 5 else '') if mixed else 'they'}"
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


def _seat_pass(result: "SolveResult", a: int, others: np.ndarray, seat: int = 0,
               ) -> tuple[np.ndarray, int, np.ndarray, "BankTable", "Decisions", np.ndarray, np.ndarray]:
    """One kernel pass with seat values for a mover of `seat` at `a` against each row of `others` (`seat_rows`):
    (caps, layers, the bust vectors ``P V(others, a)``, the bank table, the decisions (σ), A, B of every turn
    state). Under a last round or take-over offers the banks and caps are the solve's
    (`rounds.Rounds.seat_inputs`)."""
    kernel, grid = result.kernel, result.grid
    rest = np.asarray(others, dtype=np.int64).reshape(len(others), -1)
    if rest.shape[1] != result.players - 1:
        raise ValueError(f"a {result.players}-player table needs {result.players - 1} opponents per row")
    k = len(rest)
    mover = np.full(k, a, dtype=np.int64)
    term = None
    if result.rounds is not None:
        caps, bank, term, bust = result.rounds.seat_inputs(seat, mover, rest, result.tables, result.offers)
    else:
        w = result.values
        caps = grid.cap(mover)
        bust = pass_dice(w[tuple(rest.T) + (mover,)])
        bank = grid.seat_bank_table(mover, rest, int(caps[0]) + 1, w)
    n = int(caps[0]) + 2
    moves = kernel.move_table(k, int(caps.max()))
    _, _, ta, tb = kernel.run(mover, caps, bank, bust[:, 0].copy(), keep_table=True, moves=moves, term_bank=term)
    return caps, n, bust, bank, moves, ta, tb


def seat_starts(result: "SolveResult", a: int, others: np.ndarray, seat: int = 0) -> np.ndarray:
    """Every stored seat's chance (k, n - 1), the mover first, at the turn start of a mover of `seat` at `a`
    against each row of `others`, computed afresh by one kernel pass from the table's values (``A + B L`` per
    seat: the check of a table read back from the cache, `SolveResult.sample_problem`)."""
    _, _, bust, _, _, ta, tb = _seat_pass(result, a, others, seat)
    d = result.rules.dice
    return np.asarray(ta[:, 0, d - 1, :] + tb[:, 0, d - 1, None] * bust[:, : ta.shape[-1]])


def last_rows(result: "SolveResult", seat: int, a: int, target: int, later: tuple[int, ...]) -> "TurnRows":
    """The policy's row of a last turn at a table of three or more: the mover of `seat` (banked `a`, units) plays
    against `target` with the scores `later` of the seats still to play after him (`rounds.Rounds.after_goal`;
    the last seat's is the two-player `LastTurn`'s, `rows.last_turn_rows`)."""
    from .rows import last_turn_rows

    rounds = result.rounds
    if rounds is None or rounds.last is None:
        raise ValueError(f"'{result.rules.name}' has no last round")
    if seat == result.players - 1:
        return last_turn_rows(result.rules, rounds.last, a, target)
    kernel = rounds.last_kernel
    caps, bank, term, bust = rounds.last_inputs(seat, target, np.array([(a,) + tuple(later)]))
    moves = kernel.move_table(1, int(caps.max()))
    _, _, ta, tb = kernel.run(np.array([a]), caps, bank, bust[:, 0].copy(), keep_table=True, moves=moves,
                              term_bank=term)
    return _turn_rows(result.rules, kernel, caps, int(caps[0]) + 2, bust, bank, moves, ta, tb)


def seat_rows(result: "SolveResult", a: int, others: np.ndarray, seat: int = 0) -> "TurnRows":
    """The policy's rows of a mover of `seat` with banked `a` against each row of `others` (units, shape (k, n - 1):
    the opponents in playing order from the mover), as one `TurnRows` block: row i is the turn against `others[i]`.

    One kernel pass with seat values (`seat_bank_table`, the bust vector
    ``P V(others, a)``) gives every turn state; the mover's values make the
    block, so that every decision (advice, export, the engine's table) is the
    policy table's.
    """
    return _turn_rows(result.rules, result.kernel, *_seat_pass(result, a, others, seat))


def _turn_rows(rules: Rules, kernel: TurnKernel, caps: np.ndarray, n: int, bust: np.ndarray, bank: "BankTable",
               moves: "Decisions", ta: np.ndarray, tb: np.ndarray) -> "TurnRows":
    """The `TurnRows` block of one kernel pass with seat values (the mover's values and the pass's moves)."""
    from .kernel import rolled
    from .rows import TurnRows

    k = len(caps)
    l0 = bust[:, 0].copy()
    value = ta[:, :n, :, 0] + tb[:, :n] * l0[:, None, None]
    plain, predict = kernel.roll_tables(value, l0)
    d = rules.dice
    choices = () if kernel.prediction is None else tuple(int(c) * 50 for c in kernel.prediction.choices)
    offset = np.arange(k, dtype=np.int64) * n
    bank_v = (bank.a[:, :n, :, 0] + bank.b[:, :n] * l0[:, None, None]).reshape(-1, d)
    return TurnRows(rules, caps, offset, l0, bank_v, rolled(plain, predict).reshape(-1, d),
                    None if predict is None else plain[:, :, 1].reshape(-1).copy(),
                    None if predict is None else predict.reshape(-1, predict.shape[-1]), choices, kernel.period,
                    tie=TIE, move=moves.move[:, :n].reshape(-1, d), keep=moves.keep[:, :n].reshape(k * n, -1),
                    told=None if predict is None else moves.told[:, :n].reshape(k * n, -1))
