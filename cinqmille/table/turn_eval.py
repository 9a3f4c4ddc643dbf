"""What a policy's turn gives in points: expected points and bust chances, by one backward pass.

Expected points and bust chances
================================
`TurnRows.expectation(r, a)` evaluates the policy's turn in points, for the
advice: from every state of row ``r`` (mover's banked score ``a``), the mean
points that the turn banks when the player follows the table's decisions (its
moves, its keeps with their tie-break, its announcements) to the end of the
turn. One backward pass over the row's layers, each roll weighted class by
class as `kernel.backup` does: ``E(t, m)`` is, by the move of the state,

- banking: the points the bank adds to the score (``t``; what a final-stretch
  cap leaves; 0 for a void or faulty bank);
- rolling: ``sum_c P(c) E(t + p_k, m_k)`` over the roll classes, ``k`` the
  policy's keep of class ``c``; a bust banks 0; an instant win counts the turn
  points plus the goal in points (as the `expected` objective counts it); an
  overshoot of an exact goal banks 0;
- announcing ``v`` (`prediction`): the same over the two-dice classes that
  score ``v``, with the turn doubled after the keep; a wrong announcement banks 0.

Past the cap (``reach``) the decisions repeat with the period and the
expectation is affine in the turn points, ``E = 50 alpha t + beta``; ``alpha``
and ``beta`` of each terminal state are the fixed point of the same equations.
`TurnRows.roll_busts(m)` gives, per move, the exact chance that the next roll
fails at once (a bust; for an announcement, a bust or a wrong announcement).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Protocol

import numpy as np

from ..dice import dice_tables
from ..rules import Rules
from ..rules.bank import SCORED, UNIT, BankRules
from ..solver.choice import roll_classes
from ..solver.keeps import KeepGraph, Prediction


@lru_cache(maxsize=16)
def bust_odds(rules: Rules) -> tuple[dict[int, Fraction], dict[int, Fraction]]:
    """Exact chances that a roll fails at once: a bust of `m` dice; a wrong announcement of `v` points (or a bust).

    An announcement is right when the best keep of the two dice scores exactly `v`.
    """
    tables = dice_tables(rules)
    plain = {m: Fraction(t.bust_ways, 6**m) for m, t in tables.items()}
    right: dict[int, int] = {}
    if rules.dice >= 2:
        two = tables[2]
        for r in range(len(two.ways)):
            ks = two.keeps_of(r)
            if len(ks):
                best_points = int(two.keep_points[ks.start:ks.stop].max())
                right[best_points] = right.get(best_points, 0) + int(two.ways[r])
    return plain, {v: Fraction(36 - n, 36) for v, n in right.items()}


@dataclass(frozen=True, eq=False)
class TurnExpectation:
    """Expected points that one row's turn banks from each state, following the policy (module docstring).

    Real layers ``t = 0 .. last`` are stored; past them (``reach``) a state is
    worth ``50 alpha t + beta`` with the coefficients of its terminal layer
    (``(t - cap) % period``), and under ``exact`` an overshoot banks 0.
    """

    rules: Rules
    a: int  # the mover's banked score, units
    cap: int
    period: int
    exact: bool
    state_e: np.ndarray  # (last + 1, D) following the policy's move
    plain_e: np.ndarray  # (last + 1, D) rolling plainly, then following the policy
    predict_e: np.ndarray | None  # (last + 1, V) announcing each choice before rolling two dice
    terminal: dict[str, tuple[np.ndarray, np.ndarray]]  # "state", "plain", "predict": (alpha, beta) per period
    win_chance: np.ndarray  # (D,) chance that a roll of m dice offers an instant win (the policy takes it)

    def _read(self, name: str, real: np.ndarray, t: Any, col: Any) -> np.ndarray:
        t, col = np.broadcast_arrays(np.asarray(t, dtype=np.int64), np.asarray(col, dtype=np.int64))
        last = len(real) - 1
        inside = real[np.minimum(t, last), col]
        if self.exact:  # past the goal (a turn taken over there) only an instant win banks anything
            won = self.win_chance[col] * (UNIT * t + self.rules.goal) if name == "plain" else 0.0
            return np.where(t <= last, inside, won)
        alpha, beta = self.terminal[name]
        j = np.maximum(t - self.cap, 0) % self.period
        return np.asarray(np.where(t <= last, inside, UNIT * alpha[j, col] * t + beta[j, col]))

    def bank(self, t: Any) -> np.ndarray:
        """Points that banking `t` units adds to the score (0 for a void or faulty bank)."""
        return bank_gain(self.rules, self.a, t)

    def state(self, t: Any, m: Any) -> np.ndarray:
        """Expected points banked from (t units, m dice in hand), following the policy's move."""
        return self._read("state", self.state_e, t, np.asarray(m) - 1)

    def moves(self, t: int, m: int) -> np.ndarray:
        """Per move of `TurnRows.moves` (bank, roll plainly, announce each choice): the expected points banked."""
        out = [float(self.bank(t)), float(self._read("plain", self.plain_e, t, m - 1))]
        if self.predict_e is not None:
            v = self.predict_e.shape[1]
            out += list(self._read("predict", self.predict_e, t, np.arange(v)) if m == 2 else [np.nan] * v)
        return np.array(out, dtype=float)


def bank_gain(rules: Rules, a: int, t: Any) -> np.ndarray:
    """Points that banking `t` units adds to banked `a` (units): what a final-stretch cap leaves, 0 if void or a fault."""
    kind, new, _ = BankRules.of(rules).outcome(a, np.asarray(t, dtype=np.int64))
    return np.where(kind == SCORED, (new - a) * UNIT, 0).astype(float)


class TurnPlay(Protocol):
    """What the turn passes (`_backward`, `turn_distributions`) read of a policy: its rows' caps, its move in
    each state and its keep in each roll class (`TurnRows.taken`: the solve's own).

    `TurnRows` (the solved policy and every block of rows) is one; a rule of
    thumb written as a block of rows (`research.card`) is another, so that the
    same passes give the outcome of a turn under any table of decisions.
    """

    rules: Rules
    dice: int
    exact: bool
    cap: np.ndarray
    tie: float

    def move(self, r: Any, t: Any, m: Any) -> np.ndarray: ...

    def taken(self, r: Any, t: Any, doubled: bool = False) -> np.ndarray: ...


class PeriodicPlay(TurnPlay, Protocol):
    """A `TurnPlay` whose states past the cap repeat with the period of the rule of 50 (`TurnRows`): what the
    backward pass of the expected points reads."""

    period: int


def _per_class(classes: KeepGraph | Prediction, pick: np.ndarray, per_keep: np.ndarray,
               failed: np.ndarray | None = None) -> np.ndarray:
    """Sum over roll classes of their chance times the figure of the policy's keep (`pick`, `TurnRows.taken`).

    `per_keep` holds a figure per keep, (n, K) -> (n, D), or a vector per keep,
    (n, K, W) -> (n, D, W); a failed roll (a bust, a wrong announcement) adds
    its chance times `failed` (W,), or counts 0 when `failed` is None.
    """
    if per_keep.ndim == 2:
        out = np.take_along_axis(per_keep, pick, axis=1) @ classes.class_prob
    else:
        picked = np.take_along_axis(per_keep, pick[..., None], axis=1)  # (n, C, W)
        out = np.swapaxes(np.swapaxes(picked, 1, 2) @ classes.class_prob, 1, 2)
    if failed is not None:
        out = out + classes.bust_prob[:, None] * failed
    return np.asarray(out)


@dataclass(frozen=True, eq=False)
class _Ends:
    """What each end of a turn puts into the vector (width W) that the backward pass carries per state.

    The expected points carry one number (the points banked); a distribution
    carries the chance of each outcome (one slot per outcome).
    """

    width: int
    bank: Any  # turn units (n,) -> (n, W): a bank of t
    win: Any  # turn units t -> (W,): an instant win with t set aside
    failed: np.ndarray | None  # (W,): a bust or a wrong announcement (None: counts 0)
    beyond: Any  # turn units (n,) past the pass's last layer -> (n, D, W): what those states are worth


def _backward(block: PeriodicPlay, r: int, last: int, ends: _Ends) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """The turn of row `r` under the policy, backward over layers ``last .. 0``: per state a vector (`ends`).

    ``X(t, m)`` is, by the policy's move (`TurnRows.move`): a bank,
    ``ends.bank(t)``; a roll, ``sum_c P(c) X(t + p_k, m_k) + P(bust) ends.failed``
    over the roll classes, ``k`` the policy's keep of class ``c`` (`TurnRows.taken`),
    an instant win being ``ends.win(t)``; an announcement, the same over the
    two-dice classes that score it, the turn doubled. Every keep lands on a
    later layer; layers past `last` are ``ends.beyond``. Returns the states'
    vectors (last + 1, D, W), those of rolling plainly (last + 1, D, W) and of
    each announcement (last + 1, V, W) or None.
    """
    graph, pred = roll_classes(block.rules)
    d = block.dice
    m_all = np.arange(1, d + 1)
    reach_units = int(graph.max_units) if pred is None else 2 * int(max(graph.max_units, pred.keep_units.max()))
    top = 2 * (last + 1) + reach_units + 1
    layers = np.zeros((top, d, ends.width))  # the vector of every state a keep can reach; flat below
    layers[last + 1:] = ends.beyond(np.arange(last + 1, top))
    flat = layers.reshape(top * d, ends.width)
    state = np.zeros((last + 1, d, ends.width))
    plain = np.zeros((last + 1, d, ends.width))
    predict = None if pred is None else np.zeros((last + 1, len(pred.choices), ends.width))
    slot = graph.keep_units * d + graph.keep_next - 1
    slot_p = None if pred is None else 2 * pred.keep_units * d + pred.keep_next - 1
    chunk = 256
    for hi in range(last, -1, -chunk):
        ts = np.arange(max(hi - chunk + 1, 0), hi + 1)
        move = block.move(np.full((len(ts), d), r), ts[:, None], m_all[None, :])
        banked = ends.bank(ts)
        pick = block.taken(r, ts, False)
        pick_p = None if pred is None else block.taken(r, ts, True)
        for i in range(len(ts) - 1, -1, -1):
            t = int(ts[i])
            won = ends.win(t)
            ek = np.where(graph.keep_win[:, None], won, flat[t * d + slot])
            plain[t] = _per_class(graph, pick[i:i + 1], ek[None], ends.failed)[0]
            row = np.where((move[i] == 0)[:, None], banked[i], plain[t])
            if predict is not None and pred is not None and pick_p is not None and slot_p is not None:
                ek = np.where(pred.keep_win[:, None], won, flat[2 * t * d + slot_p])
                predict[t] = _per_class(pred, pick_p[i:i + 1], ek[None], ends.failed)[0]
                if move[i, 1] >= 2:
                    row[1] = predict[t, move[i, 1] - 2]
            state[t] = row
            flat[t * d:(t + 1) * d] = row
    return state, plain, predict


def turn_expectation(block: PeriodicPlay, r: int, a: int, tol: float = 1e-13,
                     max_iter: int = 100_000) -> TurnExpectation:
    """Expected points banked from every state of row `r` (banked `a` units) under the table's decisions."""
    rules = block.rules
    graph, pred = roll_classes(rules)
    d, per, exact = rules.dice, block.period, block.exact
    cap = int(block.cap[r])
    last = cap if exact else cap - 1  # past `last`: overshoots (exact) or terminal states (reach)
    goal = float(rules.goal)
    m_all = np.arange(1, d + 1)
    v = 0 if pred is None else len(pred.choices)

    # terminal states (reach): E = 50 alpha t + beta, one (alpha, beta) per layer cap + j and dice in hand
    terminal: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if not exact:
        tj = cap + np.arange(per)
        move = block.move(np.full((per, d), r), tj[:, None], m_all[None, :])
        g0, g1 = bank_gain(rules, a, tj), bank_gain(rules, a, tj + per)
        bank_alpha = (g1 - g0) / (UNIT * per)
        bank_beta = g0 - UNIT * bank_alpha * tj
        pick = block.taken(r, tj, False)
        pick_p = None if pred is None else block.taken(r, tj, True)
        alpha, beta = np.zeros((per, d)), np.zeros((per, d))
        for _ in range(max_iter):
            j2 = (tj[:, None] + graph.keep_units - cap) % per
            ak = np.where(graph.keep_win, 1.0, alpha[j2, graph.keep_next - 1])
            bk = np.where(graph.keep_win, goal, UNIT * ak * graph.keep_units + beta[j2, graph.keep_next - 1])
            plain = (_per_class(graph, pick, ak), _per_class(graph, pick, bk))
            new_a = np.where(move == 0, bank_alpha[:, None], plain[0])
            new_b = np.where(move == 0, bank_beta[:, None], plain[1])
            if pred is not None and pick_p is not None:
                j2 = (2 * (tj[:, None] + pred.keep_units) - cap) % per
                a2 = alpha[j2, pred.keep_next - 1]
                ak2 = np.where(pred.keep_win, 1.0, 2 * a2)
                bk2 = np.where(pred.keep_win, goal, 2 * UNIT * a2 * pred.keep_units + beta[j2, pred.keep_next - 1])
                announce = (_per_class(pred, pick_p, ak2), _per_class(pred, pick_p, bk2))
                pick_v = np.clip(move[:, 1] - 2, 0, v - 1)
                new_a[:, 1] = np.where(move[:, 1] >= 2, announce[0][np.arange(per), pick_v], new_a[:, 1])
                new_b[:, 1] = np.where(move[:, 1] >= 2, announce[1][np.arange(per), pick_v], new_b[:, 1])
            delta = max(np.abs(new_a - alpha).max(), np.abs(new_b - beta).max() / max(goal, 1.0))
            alpha, beta = new_a, new_b
            if delta < tol:
                break
        terminal["state"] = (alpha, beta)
        terminal["plain"] = plain
        if pred is not None:
            terminal["predict"] = announce

    def beyond(t_out: np.ndarray) -> np.ndarray:
        """Past the real layers: an overshoot banks 0 (exact); a terminal state its affine value (reach)."""
        if exact:
            return np.zeros((len(t_out), d, 1))
        alpha, beta = terminal["state"]
        j = (t_out - cap) % per
        return np.asarray(UNIT * alpha[j] * t_out[:, None] + beta[j])[..., None]

    ends = _Ends(1, lambda ts: bank_gain(rules, a, ts)[:, None], lambda t: np.array([t * UNIT + goal]), None, beyond)
    state_e, plain_e, predict_e = _backward(block, r, last, ends)
    win_chance = np.maximum.reduceat(graph.keep_win.astype(float), graph.class_start) @ graph.class_prob
    return TurnExpectation(rules, int(a), cap, per, exact, state_e[..., 0], plain_e[..., 0],
                           None if predict_e is None else predict_e[..., 0], terminal, win_chance)
