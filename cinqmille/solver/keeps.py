"""The keeps of a roll, written once: a ruleset's rolls merged into classes (`KeepGraph`, and after a right
announcement `Prediction`), the Bellman backup of a roll (`backup`), the keep taken in each class (`best_keeps`,
the tie rule of the compiled pass) and the value of rolling (`rolled`).

Rolls that offer the same keeps (same points, same dice in hand after, same
instant win) are one class, whose probability is the sum of theirs; the turn
kernel (`kernel`) and every reader of a table read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from ..dice import dice_tables
from ..rules import Rules
from ..rules.bank import UNIT

NEG = -np.inf


@dataclass(frozen=True, eq=False, slots=True)
class Columns:
    """Roll classes as the compiled pass reads them (`compiled`): the first keep of each class, then per
    column (dice rolled, or announcement) its classes and their chances, in class order, and its bust chance."""

    start: np.ndarray  # (C + 1,) keeps of class c: start[c] .. start[c + 1] - 1
    ptr: np.ndarray  # (columns + 1,) entries of column n: ptr[n] .. ptr[n + 1] - 1
    cls: np.ndarray  # (entries,) the class of each entry
    prob: np.ndarray  # (entries,) its chance in that column
    bust: np.ndarray  # (columns,)

    @classmethod
    def of(cls, class_start: np.ndarray, keeps: int, class_prob: np.ndarray, bust_prob: np.ndarray) -> "Columns":
        col, c = np.nonzero(class_prob.T > 0)  # column-major: each column's classes in class order
        return cls(np.append(class_start, keeps).astype(np.int64),
                   np.searchsorted(col, np.arange(class_prob.shape[1] + 1)).astype(np.int64),
                   c.astype(np.int64), np.ascontiguousarray(class_prob.T[col, c]),
                   np.ascontiguousarray(bust_prob, dtype=float))


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
    roll_class: tuple[np.ndarray, ...] = ()  # per dice count n (n - 1): the class of each roll of `dice_tables`, -1 a bust
    columns: Columns = field(init=False)  # the classes as the compiled pass reads them
    choosing: np.ndarray = field(init=False)  # (Cc,) the classes of more than one keep, whose keep the pass records

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", Columns.of(self.class_start, len(self.keep_units), self.class_prob,
                                                       self.bust_prob))
        object.__setattr__(self, "choosing", choosing(self.class_start, len(self.keep_units)))

    def targets(self, t: np.ndarray) -> np.ndarray:
        """Turn units after each keep, from turn units `t`: (..., K)."""
        return np.asarray(np.asarray(t)[..., None] + self.keep_units)


@lru_cache(maxsize=16)
def build_keep_graph(rules: Rules) -> KeepGraph:
    """Merge the dice tables of `rules` into the kernel's keep graph (built once per ruleset: the kernel and the
    readers of its decisions, `choice.roll_classes`, share it; it is never written to)."""
    d = rules.dice
    keeps: list[tuple[int, int, bool, int]] = []  # (units, dice in hand after, win, class)
    starts: list[int] = []
    probs: list[np.ndarray] = []
    bust = np.zeros(d)
    roll_class: list[np.ndarray] = []
    for n, table in dice_tables(rules).items():
        merged: dict[tuple[tuple[int, int, bool], ...], float] = {}
        keys: list[tuple[tuple[int, int, bool], ...] | None] = []
        for r in range(len(table.ways)):
            ks = table.keeps_of(r)
            if not len(ks):
                bust[n - 1] += table.prob[r]
                keys.append(None)
                continue
            outcomes = set()
            for k in ks:
                left = int(table.keep_left[k])
                is_win = bool(table.keep_win[k])
                pts = 0 if is_win else int(table.keep_points[k]) // UNIT
                outcomes.add((pts, left if left else d, is_win))
            key = tuple(sorted(outcomes))
            merged[key] = merged.get(key, 0.0) + float(table.prob[r])
            keys.append(key)
        ids = {}
        for key, prob in merged.items():
            ids[key] = len(starts)
            keeps.extend((pts, nx, w, len(starts)) for pts, nx, w in key)
            starts.append(len(keeps) - len(key))
            probs.append(np.eye(d)[n - 1] * prob)
        roll_class.append(np.array([-1 if key is None else ids[key] for key in keys], dtype=np.int64))
    units, nxt, win, cls = zip(*keeps)
    keep_units = np.array(units, dtype=np.int64)
    return KeepGraph(d, keep_units, np.array(nxt, dtype=np.int64), np.array(win, dtype=bool),
                     np.array(cls, dtype=np.int64), np.array(starts, dtype=np.int64),
                     np.array(probs).reshape(-1, d), bust, int(keep_units.max()), tuple(roll_class))


def choosing(class_start: np.ndarray, keeps: int) -> np.ndarray:
    """The roll classes of more than one keep (a choice the pass records, `Decisions.keep`)."""
    size = np.diff(np.append(class_start, keeps))
    return np.flatnonzero(size > 1).astype(np.int64)


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
    two: np.ndarray  # (C2,) the `KeepGraph` class of each two-dice class (same keeps, in the same order)
    columns: Columns = field(init=False)  # the classes as the compiled pass reads them
    choosing: np.ndarray = field(init=False)  # (C2c,) the classes of more than one keep

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", Columns.of(self.class_start, len(self.keep_units), self.class_prob,
                                                       self.bust_prob))
        object.__setattr__(self, "choosing", choosing(self.class_start, len(self.keep_units)))

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
                   local, np.searchsorted(local, np.arange(len(two))), prob, 1.0 - prob.sum(axis=0), two)

    def targets(self, t: np.ndarray | int) -> np.ndarray:
        """Turn units after a right prediction and each keep, from turn units `t`: (..., K2)."""
        return np.asarray(2 * (np.asarray(t)[..., None] + self.keep_units))


def fold_slots(target: np.ndarray, next_dice: np.ndarray, d: int, last: int, period: int, exact: bool,
               bust_slot: int) -> np.ndarray:
    """Flat slots of turn units `target` with `next_dice` in hand; past the table: folded (reach) or bust (exact)."""
    folded = np.where(target > last, last - (target - last) % period, target)
    idx = folded * d + (next_dice - 1)
    if exact:
        idx = np.where(target > last, bust_slot, idx)
    return np.asarray(idx)


def backup(classes: KeepGraph | Prediction, a: np.ndarray, bust: Any = 0.0) -> np.ndarray:
    r"""The Bellman backup of a roll, written once: the best keep of each roll class, weighted by its chance.

    ``Roll[..., n] = sum_c class_prob[c, n] max_{k in c} a[..., k] + bust_prob[n] bust``,
    where `a[..., k]` is the value after keep k (gathered by the caller) and `n`
    the dice rolled (or, for a `Prediction`, the announcement). `bust` broadcasts
    against ``a[..., 0]``. The kernel's affine form is `compiled.choose` then `compiled.weigh`.
    """
    return np.asarray((np.maximum.reduceat(a, classes.class_start, axis=-1) @ classes.class_prob
            + classes.bust_prob * np.asarray(bust)[..., None]))


def best_keeps(classes: KeepGraph | Prediction, a: np.ndarray, tie: float = 0.0) -> np.ndarray:
    """The keep `compiled.choose` takes in each roll class for the values `a[..., k]` after each keep: the last
    of the class's keeps within `tie` of its best (a class lists its keeps by points, then dice in hand after:
    the most points, then the most dice), as ids into the classes' keeps, shape ``a.shape[:-1] + (C,)``.

    The compiled pass records its own (`Decisions.keep`); this is its rule for tables made without that pass
    (a rule of thumb's, `research.card`; the `expected` objective's, `objectives.ExpectedRows`).
    """
    a = np.asarray(a)
    top = np.maximum.reduceat(a, classes.class_start, axis=-1)[..., classes.keep_class]
    near = (a == top) if tie == 0.0 else (a >= top - tie)
    ids = np.where(near, np.arange(a.shape[-1]), -1)
    return np.asarray(np.maximum.reduceat(ids, classes.class_start, axis=-1))


#: Values this close are a tie for the player to move (docs/solver.md, "Ties").
TIE = 1e-12


def rolled(plain: np.ndarray, predict: np.ndarray | None) -> np.ndarray:
    """Value of rolling: plainly, or with two dice after the best announcement if that is better."""
    if predict is None:
        return plain
    roll = plain.copy()
    roll[..., 1] = np.maximum(roll[..., 1], predict.max(axis=-1))
    return roll
