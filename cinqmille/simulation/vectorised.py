"""Many games at once, in numpy arrays, for the rulesets the solver treats exactly.

`play_batch`, for two to eight players: with three or more the optimal player
reads the n-player policy table at the row of the opponents who threaten most
(`n_player.threatening`, the reduction `n_player.leading` reads one game of):
exact up to the table's players, the documented reduction beyond.

State of a game: every seat's banked score (units of 50), the seat to move,
the row `pid` of the mover's policy table, turn points `t`, dice in hand `m`,
turns played. One loop step is one roll of every live
game: draw a roll class (or a bust), ask the mover's policy for a keep, apply
an instant win or (``exact``) an overshoot, ask bank or roll, and end the turns
that bust or bank. Finished games leave the arrays at once (their winner and
length are written by game index), so each step costs in proportion to the
games still playing.

Randomness: one uniform per live game per step from the batch's Generator, so
a batch is a pure function of its seed sequence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..rules import Rules
from ..rules.bank import SCORED
from ..solver.grid import ScoreGrid
from ..table.locate import Layout, row_reader
from .model import roll_model
from .stats import BatchStats
from .vecpolicies import VecPolicy

#: Rows of a policy table: ``row_of(mover, *opponents)``, banked scores in units, arrays, every opponent in
#: playing order (`locate.row_reader`: `locate_rows`, which reads the ones who threaten most at a smaller table).
RowOf = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Start:
    """Where every game of a batch starts: the banked scores by seat (units of 50), the seat to move, and his
    turn so far (`t` units set aside, `m` dice in hand, about to roll them; `m` None: all the dice)."""

    scores: tuple[int, ...]
    seat: int = 0
    t: int = 0
    m: int | None = None


def play_batch(rules: Rules, policies: tuple[VecPolicy, ...], games: int, rng: np.random.Generator,
               row_of: RowOf | None = None, max_steps: int = 1_000_000,
               start: Start | None = None) -> BatchStats:
    """Play `games` games of two to eight players (seat 0 starts, at 0 points) and return their statistics;
    with `start`, every game starts there instead (a position in the middle of a game: its `length` counts the
    turns from there).

    A policy's `pid` is the row of its policy table, ``row_of(mover,
    *opponents)`` (`locate.locate_rows`, the one reading of a table's row). By
    default the rows of the two-player tables with two seats (`Layout`), else 0.
    A policy's `b` is the best opponent's score.
    """
    model = roll_model(rules)
    grid = ScoreGrid.of(rules)
    br = grid.bank
    d = rules.dice
    n_seats = len(policies)
    units, nxt, win = model.units, model.next, model.win
    if row_of is None and n_seats == 2:
        row_of = row_reader(Layout.of(grid, 2))
    distinct = {id(p): p for p in policies}
    seat_of_policy = np.array([list(distinct).index(id(p)) for p in policies])

    gid = np.arange(games, dtype=np.int64)
    begin = start if start is not None else Start((0,) * n_seats)
    if len(begin.scores) != n_seats:
        raise ValueError(f"a start of {len(begin.scores)} scores for {n_seats} players")
    scores = np.tile(np.asarray(begin.scores, dtype=np.int64), (games, 1))
    seat = np.full(games, begin.seat, dtype=np.int64)
    t = np.full(games, begin.t, dtype=np.int64)
    m = np.full(games, d if begin.m is None else begin.m, dtype=np.int64)
    turns = np.zeros(games, dtype=np.int64)
    order = (np.arange(n_seats)[:, None] + np.arange(1, n_seats)[None, :]) % n_seats  # (seat, j): j-th opponent

    def rows_of(seat_: np.ndarray, sc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The new mover's banked score, his policy table's row and the best opponent's score."""
        others = np.take_along_axis(sc, order[seat_], axis=1)
        best = others.max(axis=1)
        mover = np.take_along_axis(sc, seat_[:, None], axis=1)[:, 0]
        if row_of is None:
            return mover, np.zeros(len(seat_), dtype=np.int64), best
        return mover, row_of(mover, *others.T), best

    mover, pid, best_opp = rows_of(seat, scores)
    winner = np.full(games, -1, dtype=np.int8)
    length = np.zeros(games, dtype=np.int64)
    seat_turns = np.zeros(n_seats, dtype=np.int64)
    seat_busts = np.zeros(n_seats, dtype=np.int64)
    seat_banks = np.zeros(n_seats, dtype=np.int64)
    seat_points = np.zeros(n_seats, dtype=np.int64)

    def per_seat(seats_: np.ndarray, out: np.ndarray, weights: np.ndarray | None = None) -> None:
        out += np.bincount(seats_, weights=weights, minlength=n_seats).astype(np.int64)

    def ask(sel_rows: np.ndarray, question: str, *extra: np.ndarray) -> np.ndarray:
        """The answers of each seat's policy for the games `sel_rows` (one call per distinct policy)."""
        kinds = seat_of_policy[seat[sel_rows]] if len(distinct) > 1 else None
        out: np.ndarray | None = None
        for j, pol in enumerate(distinct.values()):
            sel = np.flatnonzero(kinds == j) if kinds is not None else slice(None)
            rows = sel_rows[sel]
            if not len(rows):
                continue
            a_ = mover[rows]
            if question == "keep":
                ans = pol.keep(pid[rows], a_, t[rows], extra[0][sel])
            else:
                ans = pol.bank(pid[rows], a_, best_opp[rows], t[rows], m[rows])
            if out is None:
                out = np.empty(len(sel_rows), dtype=ans.dtype)
            out[sel] = ans
        return out if out is not None else np.empty(0, dtype=np.int64 if question == "keep" else bool)

    steps = 0
    while len(gid):
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"games did not end within {max_steps} rolls")
        n = len(gid)
        c = model.draw(m, rng.random(n))
        ok = np.flatnonzero(c >= 0)
        ended = c < 0
        won = np.zeros(n, dtype=bool)
        k = ask(ok, "keep", c[ok])
        a_ok = mover[ok]
        t_ok = t[ok] + units[k]
        t[ok] = t_ok
        m[ok] = nxt[k]
        w_ok = win[k]
        won[ok] = w_ok
        over = br.overshoots(a_ok, t_ok) & ~w_ok
        ended[ok[over]] = True
        cont = ok[~w_ok & ~over]
        bk = ask(cont, "bank")
        banked = cont[bk]
        busted = np.flatnonzero(ended)
        if len(busted):
            per_seat(seat[busted], seat_busts)
        if len(banked):
            kind, new, wins = br.outcome(mover[banked], t[banked])
            scored = kind == SCORED
            per_seat(seat[banked[scored]], seat_banks)
            per_seat(seat[banked[scored]], seat_points, t[banked[scored]])
            scores[banked, seat[banked]] = new
            mover[banked] = new
            won[banked[wins]] = True
            ended[banked] = True
        ended |= won
        if not ended.any():
            continue
        e = np.flatnonzero(ended)
        per_seat(seat[e], seat_turns)
        turns[e] += 1
        fin = np.flatnonzero(won)
        if len(fin):
            winner[gid[fin]] = seat[fin]
            length[gid[fin]] = turns[fin]
        go_on = e[~won[e]]
        seat[go_on] = (seat[go_on] + 1) % n_seats
        t[go_on] = 0
        m[go_on] = d
        mover[go_on], pid[go_on], best_opp[go_on] = rows_of(seat[go_on], scores[go_on])
        if len(fin):
            keep = np.flatnonzero(~won)
            gid, scores, seat, t, m, turns, mover, pid, best_opp = (
                x[keep] for x in (gid, scores, seat, t, m, turns, mover, pid, best_opp))
    return BatchStats.of(winner, length, seat_turns, seat_busts, seat_banks, seat_points * 50)
