"""The exact distribution of the points a policy's turn banks, by one forward pass over its states."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..rules import Rules
from ..rules.bank import UNIT
from ..solver.choice import roll_classes
from ..solver.keeps import KeepGraph, Prediction
from .turn_eval import TurnPlay, bank_gain


#: Largest chance that a distribution leaves out (turns that pass its horizon, under ``reach``: `turn_distribution`).
TRUNCATION = 1e-14
#: The horizon of a distribution stops growing past this many goals of turn points (its `truncated` says what is left).
HORIZON = 32


@dataclass(frozen=True)
class TurnPoints:
    """The outcome of the rest of a turn played by the policy from one state: exact chances.

    `points` maps the points banked to their chance (0: a bust, an overshoot, a
    wrong announcement, or a bank that scores nothing); `wins` maps the turn
    points set aside at an instant win to its chance; `bust` is the chance that
    the turn ends on a failed roll; `truncated` the chance left out (turns that
    pass the horizon, at most `TRUNCATION`). The chances sum to 1.
    """

    points: dict[int, float]
    wins: dict[int, float]
    bust: float
    truncated: float
    goal: int

    @property
    def mean(self) -> float:
        """Mean points banked, an instant win counting its turn points plus the goal (as the `expected` figure)."""
        return (sum(x * p for x, p in self.points.items())
                + sum((t + self.goal) * p for t, p in self.wins.items()))

    @property
    def win(self) -> float:
        """Chance of an instant win."""
        return sum(self.wins.values())


@dataclass(frozen=True, eq=False)
class TurnDistribution:
    """The chance of each outcome of many turns (one per row of the pass), each from its start state.

    ``banked[i, g]``: the chance that turn ``i`` banks ``g`` units (a failed
    roll banks 0 and is counted here too); ``wins[i, t]``: an instant win with
    ``t`` units set aside; ``failed[i]``: a failed roll (a bust, a wrong
    announcement, an overshoot of an exact goal); ``lost[i]``: the chance left
    out past the horizon (`TurnPoints.truncated`).
    """

    rules: Rules
    banked: np.ndarray  # (n, G) float
    wins: np.ndarray  # (n, T) float
    failed: np.ndarray  # (n,)
    lost: np.ndarray  # (n,)

    def at(self, i: int = 0) -> TurnPoints:
        """The outcome of turn `i` as a `TurnPoints`."""
        banked, wins = self.banked[i], self.wins[i]
        return TurnPoints({int(g) * UNIT: float(banked[g]) for g in np.flatnonzero(banked > 0)},
                          {int(t) * UNIT: float(wins[t]) for t in np.flatnonzero(wins > 0)},
                          float(self.failed[i]), float(self.lost[i]), self.rules.goal)


def _grown(buffer: np.ndarray, size: int) -> np.ndarray:
    """`buffer` with axis 1 at least `size` long (zeros appended, doubling)."""
    if buffer.shape[1] >= size:
        return buffer
    pad = [(0, 0)] * buffer.ndim
    pad[1] = (0, max(size, 2 * buffer.shape[1]) - buffer.shape[1])
    return np.pad(buffer, pad)


def turn_distributions(block: TurnPlay, rows: Any, a: Any, t: int = 0, m: int | None = None,
                       tol: float = TRUNCATION, gain: Any = None, chunk: int = 2048) -> TurnDistribution:
    """The exact distribution of the outcome of the turns of `rows` (banked `a` units, per row) from the state
    (`t` units, `m` dice; default all of them) under the table's decisions, all rows in one pass.

    A forward pass over the turn's layers, ``t`` upward: the chance of reaching
    each state ``(t, m)`` moves, by the policy's move there (`TurnRows.move`),
    to a bank of ``gain(a, t)`` points (default `bank_gain`); or, rolling, to
    the state after the policy's keep of each roll class (`TurnRows.taken`, the keeps
    that `_backward` and the advice read), an instant win, or a failed roll
    with the bust chance; or, announcing, the same over the two-dice classes
    that score the announcement, the turn doubled, a wrong one failing. Every
    keep lands on a later layer. Under ``exact`` a keep past the cap is an
    overshoot (failed). Under ``reach`` a turn may go on past the cap (a full
    hand that must be rolled, `min_bank`): the pass goes on until the chance
    still in play is at most `tol` from every row, or `HORIZON` goals past the
    cap; that chance is `lost`. One row is the case ``rows = [r]``.
    """
    rules = block.rules
    rows = np.atleast_1d(np.asarray(rows, dtype=np.int64))
    a = np.broadcast_to(np.asarray(a, dtype=np.int64), rows.shape)
    gain = (lambda aa, ts: bank_gain(rules, aa, ts)) if gain is None else gain
    parts = [_forward(block, rows[lo:lo + chunk], a[lo:lo + chunk], int(t), rules.dice if m is None else int(m),
                      tol, gain) for lo in range(0, len(rows), chunk)]
    def joined(i: int) -> np.ndarray:
        width = max(p[i].shape[1] for p in parts)
        return np.concatenate([np.pad(p[i], ((0, 0), (0, width - p[i].shape[1]))) for p in parts])

    return TurnDistribution(rules, joined(0), joined(1),
                            np.concatenate([p[2] for p in parts]), np.concatenate([p[3] for p in parts]))


def _forward(block: TurnPlay, rows: np.ndarray, a: np.ndarray, t0: int, m0: int, tol: float,
             gain: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """`turn_distributions` of a chunk of rows: (banked, wins, failed, lost)."""
    rules = block.rules
    graph, pred = roll_classes(rules)
    n, d = len(rows), rules.dice
    caps = block.cap[rows]
    top = int(caps.max()) + 2
    end = top if block.exact else top + HORIZON * (rules.goal // UNIT)
    m_all = np.arange(1, d + 1)
    class_m = np.argmax(graph.class_prob > 0, axis=1)  # (C,) the column (dice - 1) each class is rolled with
    class_p = graph.class_prob[np.arange(len(class_m)), class_m]
    mass = np.zeros((n, max(top, t0 + 1) + 2 * graph.max_units + 2, d))
    mass[:, t0, m0 - 1] = 1.0
    banked = np.zeros((n, top + 1))
    wins = np.zeros((n, top + 1))
    failed, lost = np.zeros(n), np.zeros(n)
    inflight = np.ones(n)  # the chance still in play, per row (to stop under reach)
    t = hi = t0  # the layer, and the last one that holds any chance
    while True:
        here = mass[:, t]
        act = np.flatnonzero(here.any(axis=1))
        if len(act):
            w, rr = here[act], rows[act]
            tt = np.full(len(act), t)
            move = block.move(rr[:, None], t, m_all[None, :])
            points = np.asarray(gain(a[act], tt), dtype=float)
            g = (points // UNIT).astype(np.int64)
            banked = _grown(banked, int(g.max()) + 1)
            wins = _grown(wins, t + 1)
            np.add.at(banked, (act, g), (w * (move == 0)).sum(axis=1))
            flows: list[tuple[np.ndarray, KeepGraph | Prediction, np.ndarray, np.ndarray]] = []
            rolls = w * (move == 1)
            if rolls.any():
                pick = block.taken(rr, tt, False)
                flows.append((rolls[:, class_m] * class_p, graph, pick, t + graph.keep_units[pick]))
                failed[act] += rolls @ graph.bust_prob
            if pred is not None and (move[:, 1] >= 2).any():
                j = np.clip(move[:, 1] - 2, 0, len(pred.choices) - 1)
                said = np.where(move[:, 1] >= 2, w[:, 1], 0.0)
                pick = block.taken(rr, tt, True)
                flows.append((said[:, None] * pred.class_prob[:, j].T, pred, pick, 2 * (t + pred.keep_units[pick])))
                failed[act] += said * pred.bust_prob[j]
            for chance, classes, pick, t2 in flows:
                won = classes.keep_win[pick]
                wins[act, t] += (chance * won).sum(axis=1)
                over = (t2 > caps[act, None]) if block.exact else (t2 >= end)
                (failed if block.exact else lost)[act] += (chance * (over & ~won)).sum(axis=1)
                go = ~won & ~over & (chance > 0)
                ii, cc = np.nonzero(go)
                if len(ii):
                    hi = max(hi, int(t2[ii, cc].max()))
                    mass = _grown(mass, hi + 1)
                    np.add.at(mass, (act[ii], t2[ii, cc], classes.keep_next[pick[ii, cc]] - 1), chance[ii, cc])
                    inflight += np.bincount(act[ii], weights=chance[ii, cc], minlength=n)
            inflight[act] -= w.sum(axis=1)
        mass[:, t] = 0.0
        t += 1
        if t > hi or t >= end or (not block.exact and float(inflight.max()) <= tol):
            break
    left = mass[:, t:hi + 1].sum(axis=(1, 2)) if t <= hi else np.zeros(n)
    banked[:, 0] += failed
    return banked, wins, failed, lost + left


def turn_distribution(block: TurnPlay, r: int, a: int, t: int = 0, m: int | None = None,
                      tol: float = TRUNCATION, gain: Any = None) -> TurnPoints:
    """The exact distribution of the outcome of row `r`'s turn (banked `a` units) from (`t` units, `m` dice)
    under the table's decisions: `turn_distributions` of one row."""
    return turn_distributions(block, [r], [a], t, m, tol, gain).at(0)
