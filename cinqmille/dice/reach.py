"""Which turn states some sequence of keeps reaches: (turn points, dice in hand) from the start of a turn.

A turn starts with nothing set aside and all D dice in hand. Each keep adds its
points and leaves the dice not kept in hand (all D again after a full hand);
under `prediction` a right announcement before rolling two dice doubles the
turn points after the keep. `reachable` lists the states these moves reach
(instant wins end the turn and lead nowhere); `export` lists its rows from it
and `Position.validate` refuses the other states, with `why_unreachable`.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..rules import Rules
from ..rules.bank import UNIT
from .tables import dice_tables



@lru_cache(maxsize=32)
def _steps(rules: Rules) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per number of dice rolled: the distinct (units, dice in hand after) of its keeps that do not win at once."""
    d = rules.dice
    out = {}
    for m, table in dice_tables(rules).items():
        pairs = sorted({(int(p) // UNIT, int(left) or d)
                        for p, left, win in zip(table.keep_points, table.keep_left, table.keep_win) if not win})
        units, left = zip(*pairs) if pairs else ((), ())
        out[m] = (np.array(units, dtype=np.int64), np.array(left, dtype=np.int64))
    return out


def _walk(rules: Rules, tmax: int, full_hands: bool = True) -> np.ndarray:
    """(tmax + 1, D) bool: the states reached from (0, D); without `full_hands`, before any full hand."""
    d = rules.dice
    steps = _steps(rules)
    doubling = rules.prediction and d >= 2
    reach = np.zeros((tmax + 1, d), dtype=bool)
    reach[0, d - 1] = True
    for t in range(tmax + 1):
        for col in np.flatnonzero(reach[t]):
            m = int(col) + 1
            units, left = steps[m]
            if not full_hands:
                keep = left < d
                units, left = units[keep], left[keep]
            for target in (t + units,) + ((2 * (t + units),) if doubling and m == 2 else ()):
                ok = target <= tmax
                reach[target[ok], left[ok] - 1] = True
    return reach


@lru_cache(maxsize=64)
def _reachable(rules: Rules, tmax: int) -> np.ndarray:
    reach = _walk(rules, tmax)
    reach.flags.writeable = False
    return reach


def reachable(rules: Rules, tmax: int) -> np.ndarray:
    """(tmax + 1, D) bool: turn states (t units of 50, m dice in hand) that some keeps from (0, D) reach."""
    return _reachable(rules, int(tmax)).copy()


def why_unreachable(rules: Rules, turn: int, dice: int) -> str | None:
    """Why no turn holds `turn` points with `dice` in hand (None when some turn does)."""
    t, d = turn // UNIT, rules.dice
    if turn % UNIT == 0 and turn >= 0 and 1 <= dice <= d and _reachable(rules, t)[t, dice - 1]:
        return None
    if turn == 0:
        return (f"nothing set aside with {dice} {'die' if dice == 1 else 'dice'} in hand cannot occur: a turn starts "
                f"by rolling all {d} dice, and fewer are rolled only once some are set aside (give the turn points)")
    if dice == d:
        return (f"no turn holds {turn} points with all {d} dice in hand: you hold them all again only after a "
                f"full hand, and no full hand (or run of them) makes exactly {turn}")
    kept = d - dice
    plain = _walk(rules, t + max(int(u.max()) if len(u) else 0 for u, _ in _steps(rules).values()) * d,
                  full_hands=False)[:, dice - 1]
    totals = np.flatnonzero(plain) * UNIT
    noun, s = (f"{kept} die set aside", "s") if kept == 1 else (f"{kept} dice set aside", "")
    if not len(totals):
        why = f"{noun} never score{s} without a full hand"
    elif turn > totals.max():
        why = f"{noun} score{s} at most {totals.max()}"
    elif turn < totals.min():
        why = f"{noun} score{s} at least {totals.min()}"
    else:
        why = f"no keeps of {noun} add up to {turn}"
    return f"no turn holds {turn} points with {dice} {'die' if dice == 1 else 'dice'} in hand: {why} " \
           f"(and no full hand leads there)"
