"""The game as arrays: roll sampling by roll class for many games at once.

Rolls are drawn from the solver's keep graph (`build_keep_graph`): rolls of n
dice with the same set of keep outcomes ``(points, dice in hand after, instant
win)`` form one class, whose probability is the sum of theirs; a simulated
roll is one draw of a class (or a bust), which has exactly the distribution of
the outcomes of a real roll. Every quantity is in units of 50 points; the
banking rules are `cinqmille.rules.bank.BankRules` (re-exported here).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..rules import Rules
from ..rules.bank import SCORED, BankRules  # noqa: F401 (re-exported)
from ..solver.keeps import KeepGraph, build_keep_graph


@dataclass(frozen=True, eq=False, slots=True)
class RollModel:
    """Arrays to draw rolls and read their keeps, for one ruleset.

    `cdf` holds, for n = 1..D dice, ``n - 1 +`` the cumulative probabilities of
    the classes of n dice followed by a bust; ``searchsorted(cdf, n - 1 + u)`` of
    a uniform u gives a slot, `slot_class` its class (-1 for a bust). `cand` lists
    the keeps of each class, padded with the dummy keep `K` (`cand_ok` False).
    The keep arrays have one extra (dummy) entry at index K.
    """

    graph: KeepGraph  # the solver's roll classes, which the arrays below index
    cdf: np.ndarray  # (slots,)
    slot_class: np.ndarray  # (slots,) class or -1 (bust)
    cand: np.ndarray  # (C, J) keep indices, K for padding
    cand_ok: np.ndarray  # (C, J) bool
    units: np.ndarray  # (K+1,) points of a keep (0 for an instant win)
    next: np.ndarray  # (K+1,) dice in hand after (D after a full hand)
    win: np.ndarray  # (K+1,) instant win
    class_dice: np.ndarray  # (C,) dice rolled for the class
    heuristic_keep: np.ndarray  # (C,) the keep of `best_keep` (most points, fewest dice) ignoring `exact`
    pref: np.ndarray  # (C, J) keeps of each class in `best_keep` order (padding last)

    def draw(self, m: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Classes (-1 = bust) of rolls of `m` dice for uniforms `u` in [0, 1)."""
        classes: np.ndarray = self.slot_class[np.searchsorted(self.cdf, (m - 1) + u, side="right")]
        return classes


@lru_cache(maxsize=16)
def roll_model(rules: Rules) -> RollModel:
    """The roll model of `rules` (cached)."""
    g = build_keep_graph(rules)
    d = rules.dice
    n_keeps = len(g.keep_units)
    n_class = len(g.class_start)
    class_dice = (g.class_prob > 0).argmax(axis=1) + 1
    cdf, slot = [], []
    for n in range(1, d + 1):
        cls = np.flatnonzero(class_dice == n)
        probs = np.append(g.class_prob[cls, n - 1], g.bust_prob[n - 1])
        cum = np.cumsum(probs)
        cum = cum / cum[-1]
        cum[-1] = 1.0
        cdf.extend(n - 1 + cum)
        slot.extend(list(cls) + [-1])
    cdf_a = np.array(cdf)
    # a slot is found by searchsorted(..., side="right") of n - 1 + u: the first cumulative value above it
    ends = np.append(g.class_start[1:], n_keeps)
    width = int((ends - g.class_start).max())
    cand = np.full((n_class, width), n_keeps, dtype=np.int64)
    ok = np.zeros((n_class, width), dtype=bool)
    units = np.append(g.keep_units, 0)
    nxt = np.append(g.keep_next, 1)
    win = np.append(g.keep_win, False)
    size = np.zeros(n_keeps + 1, dtype=np.int64)
    pref = np.full((n_class, width), n_keeps, dtype=np.int64)
    for c in range(n_class):
        ks = np.arange(g.class_start[c], ends[c])
        cand[c, : len(ks)] = ks
        ok[c, : len(ks)] = True
        n = int(class_dice[c])
        size[ks] = np.where(g.keep_next[ks] == d, n, n - g.keep_next[ks])
        order = sorted(ks, key=lambda k: (-int(g.keep_win[k]), -int(g.keep_units[k]), int(size[k])))
        pref[c, : len(ks)] = order
    # the padding's slot index 0 below: the shifted search never lands before slot 0
    return RollModel(g, cdf_a, np.array(slot, dtype=np.int64), cand, ok, units, nxt, win, class_dice,
                     pref[:, 0].copy(), pref)
