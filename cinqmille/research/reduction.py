"""The cost of the reduction, measured exactly: a player who reads a smaller table inside the exact larger game.

At a table of more players than the largest exact table, the optimal player
reads the table of `smaller` players against the opponents who threaten most
(`n_player.leading`). Where the game of `players` is solved exactly too, that
reduced player can be evaluated inside it: one seat plays the reduced policy,
every other seat the exact policy of the larger game, and the reduced seat's
chance to win is computed exactly (policy evaluation, not simulation).

The evaluation runs backward, level by level in decreasing total score, like
the solver (`n_player.solve_players`): every turn that banks points raises the
total, so a state's value reads only higher levels, except through a bust (or
a bank that scores nothing), which rotates the scores within the level. A
state is a score tuple ``T`` in playing order from the mover and the offset
``d`` of the seat whose chance is counted (0: the mover); its value is
``V(T, d) = c(T, d) + p(T) V(rot T, d - 1)``, with ``p`` the chance that the
turn passes the dice at the same scores and ``c`` the chance of the rest: a
win of the counted seat, or ``V`` of the tuple after the bank. The four
states ``(T, d), (rot T, d - 1), ...`` form a cycle solved in closed form.

- A mover who plays the exact policy: one kernel pass over the level's tuples
  with seat values (`TurnKernel.run`, as `table.policy.seat_rows`: the same bank
  values of the mover, so the same decisions), its columns after the mover's
  own the values ``V(T', d - 1)`` of the tuple each bank leads to, for every
  counted offset; the pass gives ``c`` (its A) and ``p`` (its B). A column the
  mover's win must count as 1 (the mover counted) holds the complement.
- A mover who reads the smaller table: the distribution of his turn over the
  scores it banks to, under the decisions of the smaller table's row (the
  mover against the opponents who threaten most), computed once per row of the
  smaller table (`SmallTurns`: a kernel pass with a column per new score for
  three players or more, the forward pass `turn_distributions` of the
  two-player policy table), is gathered against ``V`` of the tuples it leads to.

The scenarios (`Scenario`): one seat reads the smaller table (the cost of the
reduction), every seat does (the game the advice's estimate plays:
`exactness`), or none (the check).

Only one level's turns are in memory at a time; the values ``V`` of every
tuple (four offsets, float64) are the memory that grows with the goal. With
every seat exact the evaluation gives the solved chances (the check of
`tests/test_reduction.py`); the cost of the reduction for a seat is its
solved chance minus its chance when it alone plays the reduced policy. The
chance left unaccounted is what the smaller table's turns leave out past
their horizon (`TurnDistribution.lost`, at most `turn_dist.TRUNCATION` a
turn); the exact seats' turns leave nothing out.
"""

from __future__ import annotations

import resource
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from ..solver.api import solve
from ..solver.grid import ScoreGrid
from ..solver.compiled import BANK_BUST, BANK_NONE, BANK_WIN
from ..solver.keeps import NEG
from ..solver.kernel import BankTable
from ..solver.n_player import level_at, level_heads, level_sums
from ..solver.result import SolveResult
from ..solver.seats import every_seat, pass_dice
from ..solver.turns import counted
from ..table.locate import Layout, locate_rows
from ..table.policy import policy_of
from ..table.turn_dist import turn_distributions
from ..work import Progress

#: Tuples of one kernel pass (and of one gather): the bank table of a pass is about this many rows x 100 layers.
CHUNK = 4096
#: Rows of one kernel pass over a smaller table's turns (a column per score: the bank table is 90 times wider).
SMALL_CHUNK = 512


@dataclass(frozen=True)
class ReductionCost:
    """Each seat's solved chance in the game of `players`, and its chance when it alone reads the table of
    `smaller` players against the opponents who threaten most (the others playing the exact policy)."""

    rules: Rules
    players: int
    smaller: int
    exact: tuple[float, ...]  # the solved chances
    reduced: tuple[float, ...]  # seat i's chance when seat i alone plays the reduced policy
    tail: float  # the largest chance one turn of the reduced seat leaves out (past its horizon)
    seconds: float = 0.0  # the time of the evaluation that gave it (shared by the costs of one evaluation)
    peak: int = 0  # the process's peak resident memory when that evaluation ended, bytes
    states: int = 0  # the turn states of one pass over every tuple (`n_player.level_sums`)

    @property
    def cost(self) -> tuple[float, ...]:
        """What the reduction costs each seat, in points of percentage (solved minus reduced)."""
        return tuple(100 * (e - r) for e, r in zip(self.exact, self.reduced))

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {"rules": self.rules.name, "players": self.players, "smaller": self.smaller,
                "exact": list(self.exact), "reduced": list(self.reduced), "cost_points": list(self.cost),
                "tail": self.tail, "seconds": self.seconds, "peak_bytes": self.peak, "states": self.states}


@dataclass(frozen=True)
class Scenario:
    """Who reads the smaller table: `kind` "one" (the counted seat alone), "all" (every seat) or "exact" (no
    seat); `smaller` the players of the table read (0 for "exact")."""

    kind: str
    smaller: int = 0

    def reduced(self, d: int) -> bool:
        """Whether the mover reads the smaller table when the counted seat is `d` places after him."""
        return self.kind == "all" or (self.kind == "one" and d == 0)


@dataclass(frozen=True, eq=False)
class Evaluation:
    """``values[scenario][d, flat]``: the chance that the seat `d` places after the mover wins, at the tuple of
    score positions ``flat`` (`np.ravel_multi_index` over the grid's possible scores), under each scenario."""

    grid: ScoreGrid
    players: int
    values: dict[Scenario, np.ndarray]
    tail: float  # the largest chance a turn of a smaller table leaves out
    seconds: float
    peak: int  # the process's peak resident memory when the evaluation ended, bytes

    def at(self, scenario: Scenario, scores: Any) -> np.ndarray:
        """Each seat's counted chance (offset 0: the mover) at the tuple `scores` (units, playing order)."""
        at = self.grid.slots(np.asarray(scores, dtype=np.int64))
        if (at < 0).any():
            raise CinqmilleError("a banked score that cannot occur under this ruleset")
        flat = int(np.ravel_multi_index(tuple(int(i) for i in at), (len(self.grid.scores),) * self.players))
        return np.asarray(self.values[scenario][:, flat])


@dataclass(frozen=True, eq=False)
class SmallTurns:
    """The turns of every row of a smaller table, by the mover's score position ``i`` and the row ``r`` of his
    opponents (`Layout` of the smaller table, the mover's part removed): ``bank[i, r, j]`` the chance to bank to
    the score at position ``j``, ``won[i, r]`` to win (a bank that reaches the goal, an instant win),
    ``stay[i, r]`` to pass the dice at the same scores (a bust, a bank that scores nothing)."""

    bank: np.ndarray
    won: np.ndarray
    stay: np.ndarray
    lost: float

    @classmethod
    def of(cls, small: SolveResult, grid: ScoreGrid) -> "SmallTurns":
        scores = grid.scores.astype(np.int64)
        s, goal, k = len(scores), grid.goal, small.players
        index = np.full(goal, -1, dtype=np.int64)
        index[scores] = np.arange(s)
        rest = np.stack(np.unravel_index(np.arange(s ** (k - 1)), (s,) * (k - 1)), axis=1)  # opponents' positions
        bank = np.zeros((s, len(rest), s))
        won, stay = np.zeros((s, len(rest))), np.zeros((s, len(rest)))
        lost = 0.0
        for i, a in enumerate(scores.tolist()):
            if k == 2:  # the two-player policy table, as `locate` reads it: its turns played forward
                rows = locate_rows(policy_of(small), a, scores[rest[:, 0]])
                dist = turn_distributions(policy_of(small), rows, np.full(len(rest), a))
                g = np.arange(dist.banked.shape[1])
                new = a + g
                inside = (g > 0) & (new < goal)
                j = index[np.minimum(new, goal - 1)]
                if (dist.banked[:, inside & (j < 0)] > 0).any():
                    raise CinqmilleError(f"a turn from {a} banks to a score that cannot occur")
                bank[i][:, j[inside]] = dist.banked[:, inside]  # one position per points banked
                won[i] = dist.wins.sum(axis=1) + dist.banked[:, (g > 0) & (new >= goal)].sum(axis=1)
                stay[i] = dist.banked[:, 0]
                lost = max(lost, float(dist.lost.max(initial=0.0)))
                continue
            # the n-player table: one kernel pass with a column per new score (`_pass`), nothing left out
            tuples = np.column_stack([np.full(len(rest), a), scores[rest]])
            caps = grid.cap(tuples[:, 0])
            for lo in range(0, len(rest), SMALL_CHUNK):
                part = slice(lo, lo + SMALL_CHUNK)
                bank[i, part], stay[i, part] = _pass(small, tuples[part], caps[part], None)
            won[i] = 1.0 - stay[i] - bank[i].sum(axis=1)
        return cls(bank, won, stay, lost)


def check_rules(rules: Rules, players: int, smaller: tuple[int, ...]) -> None:
    """Raise (one line) unless the reduction can be evaluated: smaller tables, no last round, take-over or
    counted scoreless turns (the game is then a chain over score tuples)."""
    for k in smaller:
        if not 2 <= k < players:
            raise CinqmilleError(f"the reduced table must be smaller than the game: {k} and {players} players")
    if rules.last_round or counted(rules) or rules.take_over:
        raise CinqmilleError(f"the reduction is evaluated without last_round, take_over or a counted zero_turns; "
                             f"'{rules.name}' has one of them")


def evaluate(rules: Rules, players: int, scenarios: tuple[Scenario, ...],
             progress: Progress | None = None) -> Evaluation:
    """Every scenario's values at every tuple of the game of `players` (module docstring); the tables solved
    (from the cache when there)."""
    check_rules(rules, players, tuple(sc.smaller for sc in scenarios if sc.kind != "exact"))
    begun = time.time()
    big = solve(rules, "win", players=players)
    grid = big.grid
    s, n = len(grid.scores), players
    small = {k: SmallTurns.of(solve(rules, "win", players=k), grid)
             for k in sorted({sc.smaller for sc in scenarios if sc.kind != "exact"})}
    layouts = {k: Layout.of(grid, k) for k in small}
    values = {sc: np.full((n, s ** n), np.nan) for sc in scenarios}
    # the kernel's columns after the mover's own: (scenario, d) of every exact mover
    columns = [(sc, d) for sc in scenarios for d in range(n) if not sc.reduced(d)]
    sums = level_sums(grid, n)
    heads = level_heads(grid, n)
    total_states, done = max(int(sums[:, 2].sum()), 1), 0
    for total, _, level_states in sums.tolist():
        level = level_at(grid, n, total, heads)
        p_rows = len(level.rows)
        flat = np.ravel_multi_index(tuple(level.at.T), (s,) * n)
        c = {sc: np.zeros((p_rows, n)) for sc in scenarios}
        p = {sc: np.zeros((p_rows, n)) for sc in scenarios}
        for lo in range(0, p_rows, CHUNK):
            part = slice(lo, min(lo + CHUNK, p_rows))
            base = flat[part] % s ** (n - 1)  # the opponents' positions: after a bank, base * s + the new position
            if columns:
                after = []
                for sc, d in columns:  # d = 0: the complement, the mover counted (`_small_turns` counts 1 for a win)
                    got = values[sc][(d - 1) % n].reshape(-1, s)[base]
                    after.append(1.0 - got if d == 0 else got)
                a_cols, stay = _pass(big, level.rows[part], level.caps[part], after)
                for col, (sc, d) in enumerate(columns):
                    if d == 0:  # the complement (the mover counted): c = 1 - A - B
                        c[sc][part, 0] = 1.0 - a_cols[:, col] - stay
                    else:
                        c[sc][part, d] = a_cols[:, col]
                    p[sc][part, d] = stay
            for sc in scenarios:
                for d in range(n):
                    if sc.reduced(d):
                        c[sc][part, d], p[sc][part, d] = _small_turns(
                            small[sc.smaller], layouts[sc.smaller], level.rows[part], level.at[part, 0], base,
                            values[sc][(d - 1) % n], s, d == 0)
        for sc in scenarios:
            got = _cycle(c[sc], p[sc], level.succ)
            if np.isnan(got).any():
                raise CinqmilleError(f"the evaluation read a tuple before its value (level {total}): a bug")
            values[sc][:, flat] = got.T
        done += level_states
        if progress is not None:
            progress(done / total_states)
    tail = max((t.lost for t in small.values()), default=0.0)
    return Evaluation(grid, n, values, tail, time.time() - begun, peak_memory())


def peak_memory() -> int:
    """The peak resident memory of this process so far, in bytes (`getrusage`: kilobytes on Linux)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def _banks(result: SolveResult, rows: np.ndarray, caps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                              np.ndarray]:
    """The banks of a kernel pass of `rows` (score tuples, units) under the solved `result`, as
    `table.policy.seat_rows` reads them (`StartBanks.table`: the same mover's values, so the same decisions), the
    dice-in-hand axis of length 1 where no bank depends on it: (code (P, T, D): the position of the new score or
    a `compiled.BANK_*`; the mover's A; B; the mover's bust value)."""
    grid, w = result.grid, result.values
    s, n = len(grid.scores), result.players
    a, others = rows[:, 0], rows[:, 1:]
    code = grid.position_codes(int(caps.max()) + 1)[grid.slots(a)]
    if bool((code == code[..., :1]).all()):
        code = code[..., :1]
    at = grid.slots(others)
    flat = np.ravel_multi_index(tuple(at.T), (s,) * (n - 1))
    starts = w.reshape(s ** (n - 1), s, n - 1)
    scored = code >= 0
    mover = np.zeros(code.shape)
    rr = np.broadcast_to(flat[:, None, None], code.shape)[scored]
    mover[scored] = pass_dice(starts[rr, code[scored]])[:, 0]
    mover[code == BANK_WIN] = result.kernel.win_value
    mover[code == BANK_NONE] = NEG
    bust = pass_dice(grid.seat_values(w, np.column_stack([others, a])))[:, 0]
    return code, mover, (code == BANK_BUST).astype(float), np.ascontiguousarray(bust)


def _pass(result: SolveResult, rows: np.ndarray, caps: np.ndarray, after: list[np.ndarray] | None,
          ) -> tuple[np.ndarray, np.ndarray]:
    """One kernel pass of `rows` under the decisions of `result` (`_banks`), its columns after the mover's own
    each bank's value by the new score's position: ``after[i][p, j]`` for row p banking to position j, or with
    `after` None one column per position (the chance of banking to each). (A of those columns, B.)"""
    code, mover, b, bust = _banks(result, rows, caps)
    s = len(result.grid.scores)
    scored = code >= 0
    j = np.where(scored, code, 0).reshape(len(rows), -1)
    extra = s if after is None else len(after)
    a_ext = np.zeros(code.shape + (1 + extra,))
    a_ext[..., 0] = mover
    if after is None:
        p, t, m = np.nonzero(scored)
        a_ext[p, t, m, 1 + code[p, t, m]] = 1.0
    else:
        for col, values in enumerate(after, 1):
            a_ext[..., col] = np.where(scored, np.take_along_axis(values, j, axis=1).reshape(code.shape), 0.0)
    start_a, start_b, _, _ = result.kernel.run(rows[:, 0], caps, BankTable(a_ext, b), bust)
    return np.asarray(start_a)[:, 1:], np.asarray(start_b)


def _small_turns(turns: SmallTurns, layout: Layout, rows: np.ndarray, mover: np.ndarray, base: np.ndarray,
                 after: np.ndarray, s: int, counted_mover: bool) -> tuple[np.ndarray, np.ndarray]:
    """(c, p) of movers reading a smaller table at `rows` (score tuples, units; `mover` their positions):
    their turns (`SmallTurns`) against `after`, the values of the tuples after a bank (``base * s + j``); a
    win counts 1 when the mover is the counted seat."""
    k = layout.players
    r = locate_rows(layout, rows[:, 0], *rows[:, 1:].T) - mover * s ** (k - 1)
    c = np.zeros(len(rows))
    nxt = after.reshape(-1, s)
    for i in np.unique(mover).tolist():
        sel = np.flatnonzero(mover == i)
        cols = slice(i + 1, s)  # a bank raises the mover's score: the positions above his
        c[sel] = (turns.bank[i, r[sel], cols] * nxt[base[sel], cols]).sum(axis=1)
        if counted_mover:
            c[sel] += turns.won[i, r[sel]]
    return c, turns.stay[mover, r]


def _cycle(c: np.ndarray, p: np.ndarray, succ: np.ndarray) -> np.ndarray:
    """``V(i, d) = c(i, d) + p(i, d) V(succ i, d - 1)`` around its cycle of ``n`` states, in closed form."""
    rows, n = c.shape
    j = np.repeat(np.arange(rows)[:, None], n, axis=1)
    d = np.repeat(np.arange(n)[None, :], rows, axis=0)
    num, prod = np.zeros((rows, n)), np.ones((rows, n))
    for _ in range(n):
        num += prod * c[j, d]
        prod *= p[j, d]
        j, d = succ[j], (d - 1) % n
    return np.asarray(num / (1.0 - prod))


def measure(rules: Rules, players: int = 4, smaller: tuple[int, ...] = (3, 2), everyone: tuple[int, ...] = (),
            progress: Progress | None = None) -> tuple[tuple[ReductionCost, ...], Evaluation]:
    """Evaluate, seat by seat, the reduced player (each `smaller`-player table against the leading opponents)
    inside the exact game of `players` (module docstring), one evaluation for every table read; with
    `everyone`, also the game where every seat reads each of those tables (`Scenario("all", k)`, the game an
    estimate plays: `estimate_gaps`). (The costs, the evaluation.)"""
    scenarios = tuple(Scenario("one", k) for k in smaller) + tuple(Scenario("all", k) for k in everyone)
    ev = evaluate(rules, players, scenarios, progress)
    exact = solve(rules, "win", players=players).win
    start = ev.grid.slots(np.zeros(players, dtype=np.int64))
    flat = int(np.ravel_multi_index(tuple(int(i) for i in start), (len(ev.grid.scores),) * players))
    states = int(level_sums(ev.grid, players)[:, 2].sum())
    return tuple(ReductionCost(rules, players, sc.smaller, exact,
                               tuple(float(ev.values[sc][seat, flat]) for seat in range(players)), ev.tail,
                               ev.seconds, ev.peak, states) for sc in scenarios[:len(smaller)]), ev


def reduction_costs(rules: Rules, players: int = 4, smaller: tuple[int, ...] = (3, 2),
                    progress: Progress | None = None) -> tuple[ReductionCost, ...]:
    """The costs of `measure`."""
    return measure(rules, players, smaller, (), progress)[0]


def reduction_cost(rules: Rules, players: int = 4, smaller: int = 3) -> ReductionCost:
    """`reduction_costs` of one smaller table."""
    return reduction_costs(rules, players, (smaller,))[0]


def exact_check(rules: Rules, players: int = 4) -> float:
    """The largest difference, over every tuple and seat, between the exact policy evaluated here and the solved
    values (every seat, `every_seat`): the check of the evaluation."""
    ev = evaluate(rules, players, (Scenario("exact"),))
    w = solve(rules, "win", players=players).values
    solved = every_seat(w.reshape(-1, players - 1)).T
    return float(np.abs(ev.values[Scenario("exact")] - solved).max())
