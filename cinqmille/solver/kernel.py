"""The turn kernel: one backward pass over turn points for many score pairs at once.

Values inside a turn are kept *affine in the bust value* `L` of each pair:
`value = A + B * L`, where `B` is the probability that the turn (played with the
policy chosen at the current estimate `L0`) ends in a bust. The driver uses the
pair `(A, B)` of the turn start for an exact Newton step on the bust cycle
(`level`).

State layout: a table of `Tpad * D + 2` states by rows by `J + 1` columns
(states first, so that a layer's gathers take whole rows of states; per state
and row the stored seats' A, ``J = 1`` for two players, then B), state
`(t, m)` (t turn points in units of 50, m dice in hand, 1..m..D) at index
`t * D + (m - 1)`, followed by two slots: WIN (value 1) and BUST (value L).
A layer picks each roll class's keep by the mover's value (`pick_slots`) and
weighs the chosen keeps (`roll_pair`); `TurnKernel.run_blocks` runs blocks of
rows on every core.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, overload

import numpy as np

from ..dice import dice_tables
from ..rules import Rules
from ..rules.bank import UNIT, BankRules

NEG = -np.inf
#: Rows per block of `TurnKernel.run_blocks`: small enough for a layer's work to stay in cache.
BLOCK_ROWS = 256
_POOL: list[ThreadPoolExecutor] = []
os.register_at_fork(after_in_child=_POOL.clear)  # a forked child has none of its parent's threads
Pair = tuple[np.ndarray, np.ndarray]  # (A, B) of values affine in the bust value: A + B L


def class_buckets(class_start: np.ndarray, keeps: int) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """The roll classes grouped by size (1, 2, 3-4, 5-8, ...): for each group, its classes and their keeps
    padded to the group's width by repeating each class's last keep, so that a group's best keep is one
    reduction over a rectangular block (`pick_slots`)."""
    ends = np.append(class_start[1:], keeps)
    sizes = ends - class_start
    out = []
    width = 1
    while width < 2 * sizes.max(initial=1):
        chosen = np.flatnonzero((sizes <= width) & (sizes > width // 2))
        if len(chosen):
            out.append((chosen, np.minimum(class_start[chosen, None] + np.arange(width), ends[chosen, None] - 1)))
        width *= 2
    return tuple(out)


@dataclass(frozen=True, eq=False, slots=True)
class KeepGraph:
    """The keeps of every roll of 1..D dice, merged into roll classes, as flat arrays.

    Rolls with the same set of keep outcomes `(points, dice in hand after, win)`
    are one class, whose probability is the sum of theirs. Keeps are grouped by
    class (`class_start`), classes by the number of dice rolled (`class_dice`).
    """

    dice: int
    keep_units: np.ndarray  # (K,) points of the keep in units of 50
    keep_next: np.ndarray  # (K,) dice in hand after (D after a full hand)
    keep_win: np.ndarray  # (K,) the keep wins at once
    keep_class: np.ndarray  # (K,) class of each keep
    class_start: np.ndarray  # (C,) first keep of each class
    class_prob: np.ndarray  # (C, D) probability of class c when rolling column+1 dice
    bust_prob: np.ndarray  # (D,) probability to bust with n = 1..D dice
    max_units: int  # largest keep in units
    buckets: tuple[tuple[np.ndarray, np.ndarray], ...] = field(init=False)  # `class_buckets`

    def __post_init__(self) -> None:
        object.__setattr__(self, "buckets", class_buckets(self.class_start, len(self.keep_units)))

    def targets(self, t: np.ndarray) -> np.ndarray:
        """Turn units after each keep, from turn units `t`: (..., K)."""
        return np.asarray(t)[..., None] + self.keep_units


def build_keep_graph(rules: Rules) -> KeepGraph:
    """Merge the dice tables of `rules` into the kernel's keep graph."""
    d = rules.dice
    keeps: list[tuple[int, int, bool, int]] = []  # (units, dice in hand after, win, class)
    starts: list[int] = []
    probs: list[np.ndarray] = []
    bust = np.zeros(d)
    for n, table in dice_tables(rules).items():
        merged: dict[tuple, float] = {}
        for r in range(len(table.ways)):
            ks = table.keeps_of(r)
            if not len(ks):
                bust[n - 1] += table.prob[r]
                continue
            outcomes = set()
            for k in ks:
                left = int(table.keep_left[k])
                is_win = bool(table.keep_win[k])
                pts = 0 if is_win else int(table.keep_points[k]) // UNIT
                outcomes.add((pts, left if left else d, is_win))
            key = tuple(sorted(outcomes))
            merged[key] = merged.get(key, 0.0) + float(table.prob[r])
        for key, prob in merged.items():
            keeps.extend((pts, nx, w, len(starts)) for pts, nx, w in key)
            starts.append(len(keeps) - len(key))
            probs.append(np.eye(d)[n - 1] * prob)
    units, nxt, win, cls = zip(*keeps)
    keep_units = np.array(units, dtype=np.int64)
    return KeepGraph(d, keep_units, np.array(nxt, dtype=np.int64), np.array(win, dtype=bool),
                     np.array(cls, dtype=np.int64), np.array(starts, dtype=np.int64),
                     np.array(probs).reshape(-1, d), bust, int(keep_units.max()))


@dataclass(frozen=True, eq=False, slots=True)
class Prediction:
    """The prediction of the last two dice (`prediction`): announce what two dice will score.

    Before rolling two dice the player may announce `v` (one of `choices`, in
    units): if the roll's best keep scores exactly `v`, he keeps as he likes and
    the turn points are doubled, ``t' = 2 (t + p_k)``; otherwise the turn is a
    bust. `class_prob[c, j]` is the probability of two-dice class c when it
    scores `choices[j]`, `bust_prob[j]` that of a wrong announcement: a
    `KeepGraph`'s layout with announcements for columns, so `backup` reads both.
    """

    choices: np.ndarray  # (V,) announced points, units
    keep_units: np.ndarray  # (K2,) keeps of the two-dice classes
    keep_next: np.ndarray
    keep_win: np.ndarray
    keep_class: np.ndarray  # (K2,) local class index
    class_start: np.ndarray  # (C2,)
    class_prob: np.ndarray  # (C2, V)
    bust_prob: np.ndarray  # (V,)
    buckets: tuple[tuple[np.ndarray, np.ndarray], ...] = field(init=False)  # `class_buckets`

    def __post_init__(self) -> None:
        object.__setattr__(self, "buckets", class_buckets(self.class_start, len(self.keep_units)))

    @classmethod
    def of(cls, graph: KeepGraph) -> "Prediction":
        two = np.flatnonzero(graph.class_prob[:, 1] > 0)  # the classes of two dice (none if two dice never score)
        ks = np.flatnonzero(np.isin(graph.keep_class, two))  # their keeps, class by class
        local = np.searchsorted(two, graph.keep_class[ks])
        best = [int(graph.keep_units[ks[local == j]].max()) for j in range(len(two))]
        choices = np.array(sorted(set(best)), dtype=np.int64)
        prob = np.zeros((len(two), len(choices)))
        for j, c in enumerate(two):
            prob[j, int(np.searchsorted(choices, best[j]))] = graph.class_prob[c, 1]
        return cls(choices, graph.keep_units[ks], graph.keep_next[ks], graph.keep_win[ks],
                   local, np.searchsorted(local, np.arange(len(two))), prob, 1.0 - prob.sum(axis=0))

    def targets(self, t: np.ndarray | int) -> np.ndarray:
        """Turn units after a right prediction and each keep, from turn units `t`: (..., K2)."""
        return 2 * (np.asarray(t)[..., None] + self.keep_units)


def fold_slots(target: np.ndarray, next_dice: np.ndarray, d: int, last: int, period: int, exact: bool,
               bust_slot: int) -> np.ndarray:
    """Flat slots of turn units `target` with `next_dice` in hand; past the table: folded (reach) or bust (exact)."""
    folded = np.where(target > last, last - (target - last) % period, target)
    idx = folded * d + (next_dice - 1)
    if exact:
        idx = np.where(target > last, bust_slot, idx)
    return idx


def backup(classes: KeepGraph | Prediction, a: np.ndarray, bust: Any = 0.0) -> np.ndarray:
    r"""The Bellman backup of a roll, written once: the best keep of each roll class, weighted by its chance.

    ``Roll[..., n] = sum_c class_prob[c, n] max_{k in c} a[..., k] + bust_prob[n] bust``,
    where `a[..., k]` is the value after keep k (gathered by the caller) and `n`
    the dice rolled (or, for a `Prediction`, the announcement). `bust` broadcasts
    against ``a[..., 0]``. The kernel's affine form is `pick_slots` then `roll_pair`.
    """
    return (np.maximum.reduceat(a, classes.class_start, axis=-1) @ classes.class_prob
            + classes.bust_prob * np.asarray(bust)[..., None])


#: Values this close are a tie for the player to move (docs/solver.md, "Ties").
TIE = 1e-12


#: Below this many rows `pick_slots` reduces every class in one call; above, group by group (faster per row).
FEW_ROWS = 48


def pick_slots(classes: KeepGraph | Prediction, slot: np.ndarray, v: np.ndarray, tie: float = 0.0) -> np.ndarray:
    """The state that the keep the mover takes in each roll class leads to: shape (C, rows).

    Keep k leads to state ``slot[k]``, worth ``v[slot[k], row]`` to the mover
    (states first: a state's values for every row are contiguous). The best is
    taken; among the keeps within `tie` of it, the last of its class (classes
    list their keeps by points, then dice in hand, ascending): the most points,
    then the most dice.
    """
    if v.shape[1] < FEW_ROWS:  # few rows: fewer, longer calls (one reduction over every class at once)
        if not tie:  # complex numbers compare by real part, then imaginary: the best, and the last on a tie
            keyed = np.empty((len(slot), v.shape[1]), dtype=complex)
            keyed.real = v.take(slot, axis=0)
            keyed.imag = np.arange(len(slot))[:, None]
            best_last = np.maximum.reduceat(keyed, classes.class_start, axis=0)
            return slot.take(best_last.imag.astype(np.int64))
        values = v[slot]
        near = values >= np.maximum.reduceat(values, classes.class_start, axis=0)[classes.keep_class] - tie
        last = np.maximum.reduceat(near * np.arange(len(slot), dtype=np.int32)[:, None], classes.class_start, axis=0)
        return slot[last]
    out = np.empty((len(classes.class_start), v.shape[1]), dtype=np.int64)
    for chosen, padded in classes.buckets:
        slots = slot[padded]  # (classes, width)
        if slots.shape[1] == 1:
            out[chosen] = slots
            continue
        values = v[slots]  # (classes, width, rows)
        best = values.max(axis=1)
        if tie:
            best -= tie
        last = ((values >= best[:, None]).view(np.int8) * np.arange(slots.shape[1], dtype=np.int8)[:, None]).max(axis=1)
        out[chosen] = slots.reshape(-1).take(last + slots.shape[1] * np.arange(len(slots))[:, None])
    return out


def roll_pair(classes: KeepGraph | Prediction, slots: np.ndarray, ab: np.ndarray) -> np.ndarray:
    """(A, B) of rolling, shape (n, rows, J + 1): the value ``A + B L`` affine in the bust value, when each roll
    class's keep leads to the state `slots[c, row]` of `ab` (states, all rows, J + 1): the stored seats' A,
    then B in the last column. One take and one matrix product for every column; `slots` covers the first
    rows."""
    width, cols = ab.shape[1], ab.shape[2]
    flat = slots * width + np.arange(slots.shape[1])  # one index per (class, row): rows of `cols` values
    chosen = ab.reshape(-1, cols).take(flat.reshape(-1), axis=0)  # (C * rows, cols)
    c, r = slots.shape
    out = (classes.class_prob.T @ chosen.reshape(c, r * cols)).reshape(-1, r, cols)
    out[..., -1] += classes.bust_prob[:, None]
    return out


def rolled(plain: np.ndarray, predict: np.ndarray | None) -> np.ndarray:
    """Value of rolling: plainly, or with two dice after the best announcement if that is better."""
    if predict is None:
        return plain
    roll = plain.copy()
    roll[..., 1] = np.maximum(roll[..., 1], predict.max(axis=-1))
    return roll


@dataclass(frozen=True, eq=False, slots=True)
class BankTable:
    """Affine value of banking at every (pair, t, m): A + B * L; A = -inf where not allowed."""

    a: np.ndarray  # (P, T, D)
    b: np.ndarray  # (P, T, D)


class TurnKernel:
    """Backward passes over one turn for a batch of score pairs.

    `caps[p]` is the first turn total (units) from which pair p's states are
    *terminal*: under `reach`, every bank from there wins; under `exact`, states
    beyond `caps[p]` are overshoots (bust). Terminal values are filled in, not
    iterated over layers.
    """

    def __init__(self, rules: Rules, graph: KeepGraph | None = None, win_value: float = 1.0):
        self.rules = rules
        self.win_value = win_value  # value of a won game: 1 for win chances, 0 turns left for the race
        self.graph = graph or build_keep_graph(rules)
        self.d = rules.dice
        self.bank = BankRules.of(rules)
        self.exact = self.bank.exact
        self.period = self.bank.period
        g = self.graph
        self.prediction = Prediction.of(g) if rules.prediction and rules.dice >= 2 else None
        parity = np.arange(self.period)[:, None]
        fault = np.broadcast_to(self.bank.fault(parity), parity.shape)
        ok = self.bank.hand_ok(np.arange(1, self.d + 1))[None, :]
        self._terminal_bank = (np.where(ok, np.where(fault, 0.0, win_value), NEG), np.where(ok & fault, 1.0, 0.0))
        # terminal sub-model (reach only): states (parity, m), successors by parity shift
        if not self.exact:
            nterm = self.period * self.d
            self.term_win, self.term_bust = nterm, nterm + 1
            idx = np.empty((self.period, len(g.keep_units)), dtype=np.int64)
            for par in range(self.period):
                idx[par] = ((par + g.keep_units) % self.period) * self.d + (g.keep_next - 1)
                idx[par, g.keep_win] = self.term_win
            self.term_idx = idx

    def roll_tables(self, value: np.ndarray, bust: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """Value of rolling at every (t, m) of rows whose optimal values are `value` ((T, D) or (P, T, D)).

        Successors past the table fold onto its last rows by `period` (reach), or
        are overshoots worth `bust` (a number, or one per row) under exact. The
        second table is the value of each announcement before rolling two dice,
        shape (..., T, V) (None without `prediction`).
        """
        single = value.ndim == 2
        values = value[None] if single else value
        p, tpad, d = values.shape
        busts = np.broadcast_to(np.asarray(bust, dtype=float), (p,))
        flat = np.concatenate([values.reshape(p, -1), np.full((p, 1), self.win_value), busts[:, None]], axis=1)
        t = np.arange(tpad)

        def roll(classes: KeepGraph | Prediction) -> np.ndarray:
            idx = fold_slots(classes.targets(t), classes.keep_next[None, :], d, tpad - 1, self.period, self.exact,
                             tpad * d + 1)
            idx[:, classes.keep_win] = tpad * d  # the win slot
            out = backup(classes, flat[:, idx], busts[:, None])
            return out[0] if single else out

        return roll(self.graph), None if self.prediction is None else roll(self.prediction)

    def rolling(self, value: np.ndarray, bust: Any) -> np.ndarray:
        """Value of rolling at every state, the best announcement included before rolling two dice."""
        return rolled(*self.roll_tables(value, bust))

    def tpad_for(self, tmax: int) -> int:
        """Layers needed so that every keep from a layer below `tmax` lands inside the table."""
        return tmax + self.graph.max_units + self.period + 1

    def terminal_bank(self, p: int) -> Pair:
        """Default (A, B) of banking past the cap, shape (P, period, D): a win, a fault, or not allowed.

        Indexed by the new score modulo `period`: under the rule of 50 an odd one
        is a fault (worth a bust); a full hand that must be rolled cannot be banked.
        """
        a, b = self._terminal_bank
        return np.broadcast_to(a, (p,) + a.shape), np.broadcast_to(b, (p,) + b.shape)

    def terminal(self, scores: np.ndarray, l0: np.ndarray, bank: Pair | None = None,
                 iterations: int = 400) -> Pair:
        """(A, B) of shape (P, period, D): values of states past the cap under `reach`.

        Past the cap the value of a bank no longer depends on the turn points
        (by default every allowed bank wins; `bank` may say otherwise, per row);
        what remains are must-roll full hands and (rule of 50) banks that would
        end in 50. Solved by fixed-point iteration (a contraction: each must-roll
        hand busts or ends with some chance).
        """
        p = len(scores)
        d, per = self.d, self.period
        won = self.win_value
        bank_a, bank_b = bank if bank is not None else self.terminal_bank(p)
        if bank is None and (bank_a == won).all():
            return np.full((p, per, d), won), np.zeros((p, per, d))
        tab = np.zeros((per * d + 2, p, 2))  # states first, rows last (`pick_slots`); A, then B
        tab[self.term_win, :, 0] = won
        tab[self.term_bust, :, 1] = 1.0
        tab[: per * d, :, 0] = won
        new = np.empty((per, d, p, 2))
        banks = np.stack([bank_a, bank_b], axis=-1).transpose(1, 2, 0, 3)  # (period, D, P, 2), as `new`
        bank_v = banks[..., 0] + banks[..., 1] * l0
        for _ in range(iterations):
            v = tab[..., 0] + tab[..., 1] * l0
            for par in range(per):
                r = roll_pair(self.graph, pick_slots(self.graph, self.term_idx[par], v), tab)
                take_bank = bank_v[par] >= r[..., 0] + r[..., 1] * l0
                new[par] = np.where(take_bank[..., None], banks[par], r)
            delta = np.abs(new.reshape(-1, p, 2) - tab[: per * d]).max(axis=(0, 1)).sum()
            tab[: per * d] = new.reshape(-1, p, 2)
            if delta < 1e-15:
                break
        return new[..., 0].transpose(2, 0, 1).copy(), new[..., 1].transpose(2, 0, 1).copy()

    @overload
    def run(self, scores: np.ndarray, caps: np.ndarray, bank: BankTable, l0: np.ndarray,
            keep_table: Literal[False] = False, term_bank: Pair | None = None,
            ) -> tuple[np.ndarray, np.ndarray, None, None]: ...

    @overload
    def run(self, scores: np.ndarray, caps: np.ndarray, bank: BankTable, l0: np.ndarray,
            keep_table: Literal[True], term_bank: Pair | None = None,
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...

    def run(self, scores: np.ndarray, caps: np.ndarray, bank: BankTable, l0: np.ndarray,
            keep_table: bool = False, term_bank: Pair | None = None,
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None]:
        """One backward pass for P pairs; returns (A, B) of the turn start (0 points, D dice).

        Rows must be sorted by `caps` descending. `bank` covers layers 0..max(caps).
        With `keep_table`, also returns the full (A, B) tables, shape (P, Tpad, D).
        `term_bank` gives the (A, B) of banking past the cap per row (see `terminal`).
        """
        d = self.d
        p = len(scores)
        seats = bank.a.shape[3:]  # () for the mover's value alone, (J,) for a vector of seat values
        j = seats[0] if seats else 1
        tmax = int(caps.max()) if p else 0
        tpad = self.tpad_for(tmax)
        size = tpad * d + 2  # the states, then the win and bust slots
        win_slot, bust_slot = size - 2, size - 1
        # Every state starts at its value past the cap (a win for the mover, or a bust; the other seats'
        # values are 0 there and at a win); the layers below each row's cap are then computed. States
        # first, rows last, so that a layer's gathers take whole rows of states (`pick_slots`); per state
        # and row, the stored seats' A, then B (`roll_pair`).
        states = tpad * d
        ab = np.zeros((size, p, j + 1))
        if self.exact:
            ab[:states, :, j] = 1.0
        else:
            term_a, term_b = self.terminal(scores, l0, term_bank)  # (P, period, D)
            by_layer = (tpad, d, p)
            if self.period == 1:
                ab[:states, :, 0].reshape(by_layer)[...] = term_a[:, 0].T
                ab[:states, :, j].reshape(by_layer)[...] = term_b[:, 0].T
            else:
                par = (scores[None, :] + np.arange(tpad)[:, None]) % self.period  # (Tpad, P)
                rows = np.arange(p)
                ab[:states, :, 0] = term_a[rows, par].swapaxes(1, 2).reshape(states, p)
                ab[:states, :, j] = term_b[rows, par].swapaxes(1, 2).reshape(states, p)
        ab[win_slot, :, 0] = self.win_value
        ab[bust_slot, :, j] = 1.0
        # the bank's (A, B) layer by layer, rows last, and its value to the mover at L = l0
        layers = bank.a.shape[1]
        bank_ab = np.empty((layers, d, p, j + 1))
        bank_ab[..., :j] = bank.a.reshape(p, layers, d, j).transpose(1, 2, 0, 3)
        bank_ab[..., j] = bank.b.transpose(1, 2, 0)
        bank_v = bank_ab[..., 0] + bank_ab[..., j] * l0
        g = self.graph
        base = g.keep_units * d + (g.keep_next - 1)
        last = tmax if self.exact else tmax - 1
        tie = TIE if seats else 0.0  # seat values: a tie goes to banking, then to more points and dice
        v_flat = ab[..., 0] + ab[..., j] * l0  # the mover's value at L = l0
        # number of active rows at each layer (rows sorted by cap descending)
        # reach: layer t is real for caps > t; exact: for caps >= t
        active_at = np.searchsorted(-caps, -np.arange(last + 1), side="right" if self.exact else "left")
        layer_slots = base + d * np.arange(max(last + 1, 0))[:, None]  # (layer, keep): the state each keep leads to
        layer_slots[:, g.keep_win] = win_slot
        for t in range(last, -1, -1):
            k = int(active_at[t])
            if k == 0:
                continue
            vk, lk = v_flat[:, :k], l0[:k]
            r = roll_pair(g, pick_slots(g, layer_slots[t], vk, tie), ab)  # (D, k, J + 1)
            roll_v = r[..., 0] + r[..., j] * lk
            if self.prediction is not None:
                pr = self.prediction
                pidx = fold_slots(pr.targets(t), pr.keep_next, d, tpad - 1, self.period, self.exact, bust_slot)
                pidx[pr.keep_win] = win_slot
                pr_ab = roll_pair(pr, pick_slots(pr, pidx, vk, tie), ab)  # (V, k, J + 1)
                pv = pr_ab[..., 0] + pr_ab[..., j] * lk
                best = np.argmax(pv, axis=0)
                cols = np.arange(k)
                better = pv[best, cols] > roll_v[1] + tie
                r[1] = np.where(better[:, None], pr_ab[best, cols], r[1])
                roll_v[1] = np.where(better, pv[best, cols], roll_v[1])
            bv = bank_v[t, :, :k]
            take_bank = bv >= (roll_v - tie if tie else roll_v)
            sl = slice(t * d, (t + 1) * d)
            ab[sl, :k] = np.where(take_bank[..., None], bank_ab[t, :, :k], r)
            v_flat[sl, :k] = np.where(take_bank, bv, roll_v)
        start = d - 1
        a_start = ab[start, :, :j] if seats else ab[start, :, 0]
        if keep_table:
            table = ab[:states].swapaxes(0, 1).reshape((p, tpad, d, j + 1))
            return (a_start, ab[start, :, j], table[..., :j] if seats else table[..., 0], table[..., j])
        return a_start, ab[start, :, j], None, None

    def run_blocks(self, scores: np.ndarray, caps: np.ndarray, bank: BankTable, l0: np.ndarray,
                   term_bank: Pair | None = None) -> Pair:
        """`run`'s (A, B) of the turn start, the rows cut into blocks of `BLOCK_ROWS` run on every core.

        Rows are independent within a pass; the blocks follow the cap order, so
        a block of low caps runs few layers, and a block's layer stays in cache.
        NumPy releases the GIL inside its larger calls, so the blocks run in
        threads (about 10 % faster on two cores than one after another).
        """
        p = len(scores)
        if p <= BLOCK_ROWS:
            a, b, _, _ = self.run(scores, caps, bank, l0, term_bank=term_bank)
            return a, b
        if not _POOL:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
            _POOL.append(ThreadPoolExecutor(max(1, cores or 1)))
        cuts = [slice(i, min(i + BLOCK_ROWS, p)) for i in range(0, p, BLOCK_ROWS)]

        def block(rows: slice) -> tuple[np.ndarray, np.ndarray, None, None]:
            term = None if term_bank is None else (term_bank[0][rows], term_bank[1][rows])
            return self.run(scores[rows], caps[rows], BankTable(bank.a[rows], bank.b[rows]), l0[rows],
                            term_bank=term)

        parts = list(_POOL[0].map(block, cuts))
        return np.concatenate([x[0] for x in parts]), np.concatenate([x[1] for x in parts])
