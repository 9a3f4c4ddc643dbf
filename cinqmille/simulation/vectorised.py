"""Many two-player games at once, in numpy arrays, for the rulesets the solver treats exactly.

State of a game, seat-relative: banked `a` of the player to move and `b` of
the other (units of 50), their pair id `pid`, the seat to move, turn points
`t`, dice in hand `m`, turns played. One loop step is one roll of every live
game: draw a roll class (or a bust), ask the mover's policy for a keep, apply
an instant win or (``exact``) an overshoot, ask bank or roll, and end the turns
that bust or bank. Finished games leave the arrays at once (their winner and
length are written by game index), so each step costs in proportion to the
games still playing.

Randomness: one uniform per live game per step from the batch's Generator, so
a batch is a pure function of its seed sequence.
"""

from __future__ import annotations

import numpy as np

from ..rules import Rules
from ..solver.grid import ScoreGrid
from .model import SCORED, roll_model
from .stats import BatchStats
from .vecpolicies import VecPolicy


def play_batch(rules: Rules, policies: tuple[VecPolicy, VecPolicy], games: int,
               rng: np.random.Generator, max_steps: int = 1_000_000) -> BatchStats:
    """Play `games` two-player games (seat 0 starts) and return their statistics."""
    model = roll_model(rules)
    grid = ScoreGrid.of(rules)
    br = grid.bank
    d = rules.dice
    s = len(grid.scores)
    index = np.full(grid.goal + 1, -1, dtype=np.int64)
    index[grid.scores] = np.arange(s)
    same = policies[0] is policies[1]
    units, nxt, win = model.units, model.next, model.win

    gid = np.arange(games, dtype=np.int64)
    a = np.zeros(games, dtype=np.int64)
    b = np.zeros(games, dtype=np.int64)
    pid = np.full(games, index[0] * s + index[0], dtype=np.int64)
    seat = np.zeros(games, dtype=np.int64)
    t = np.zeros(games, dtype=np.int64)
    m = np.full(games, d, dtype=np.int64)
    turns = np.zeros(games, dtype=np.int64)

    winner = np.full(games, -1, dtype=np.int8)
    length = np.zeros(games, dtype=np.int64)
    seat_turns = np.zeros(2, dtype=np.int64)
    seat_busts = np.zeros(2, dtype=np.int64)
    seat_banks = np.zeros(2, dtype=np.int64)
    seat_points = np.zeros(2, dtype=np.int64)

    def per_seat(mask_seats: np.ndarray, out: np.ndarray, weights: np.ndarray | None = None) -> None:
        out += np.bincount(mask_seats, weights=weights, minlength=2).astype(np.int64)

    steps = 0
    while len(gid):
        steps += 1
        if steps > max_steps:
            raise RuntimeError(f"games did not end within {max_steps} rolls")
        n = len(gid)
        c = model.draw(m, rng.random(n))
        ok = np.flatnonzero(c >= 0)
        ended = c < 0  # busts; banks and wins added below
        won = np.zeros(n, dtype=bool)
        # keeps
        c_ok = c[ok]
        if same:
            k = policies[0].keep(pid[ok], a[ok], t[ok], c_ok)
        else:
            k = np.empty(len(ok), dtype=np.int64)
            for s_ in (0, 1):
                sel = np.flatnonzero(seat[ok] == s_)
                rows = ok[sel]
                k[sel] = policies[s_].keep(pid[rows], a[rows], t[rows], c_ok[sel])
        t_ok = t[ok] + units[k]
        t[ok] = t_ok
        m[ok] = nxt[k]
        w_ok = win[k]
        won[ok] = w_ok
        over = br.overshoots(a[ok], t_ok) & ~w_ok
        ended[ok[over]] = True
        alive = ~w_ok & ~over
        cont = ok[alive]
        # bank or roll
        if same:
            bk = policies[0].bank(pid[cont], a[cont], b[cont], t[cont], m[cont])
        else:
            bk = np.empty(len(cont), dtype=bool)
            for s_ in (0, 1):
                sel = np.flatnonzero(seat[cont] == s_)
                rows = cont[sel]
                bk[sel] = policies[s_].bank(pid[rows], a[rows], b[rows], t[rows], m[rows])
        banked = cont[bk]
        busted = np.flatnonzero(ended)
        if len(busted):
            per_seat(seat[busted], seat_busts)
        if len(banked):
            kind, new, wins = br.outcome(a[banked], t[banked])
            scored = kind == SCORED
            per_seat(seat[banked[scored]], seat_banks)
            per_seat(seat[banked[scored]], seat_points, t[banked[scored]])
            a[banked] = new
            won[banked[wins]] = True
            ended[banked] = True
        ended |= won
        if not ended.any():
            continue
        # end the turns
        e = np.flatnonzero(ended)
        per_seat(seat[e], seat_turns)
        turns[e] += 1
        fin = np.flatnonzero(won)
        if len(fin):
            winner[gid[fin]] = seat[fin]
            length[gid[fin]] = turns[fin]
        go_on = e[~won[e]]
        a_new = a[go_on]
        a[go_on] = b[go_on]
        b[go_on] = a_new
        seat[go_on] ^= 1
        t[go_on] = 0
        m[go_on] = d
        pid[go_on] = index[a[go_on]] * s + index[b[go_on]]
        if len(fin):
            keep = np.flatnonzero(~won)
            gid, a, b, pid, seat, t, m, turns = (x[keep] for x in (gid, a, b, pid, seat, t, m, turns))
    return BatchStats.of(winner, length, seat_turns, seat_busts, seat_banks, seat_points * 50)
