r"""The score history that the history rules need, for two players: the model, its bounds, and its transitions.

The rules (RULES.md section 5, read as the referee does: docs/engine.md items 4, 9, 10, 11)
==========================================================================================
A player's *sheet* is the list of his totals not struck out, oldest first, strictly
increasing (a bank writes a larger total; strikes only remove entries); his score is
the latest entry, 0 (not opened) when the list is empty. Points are in units of 50.

- ``zero_turns.to = "previous"`` (count ``Z``): the ``Z``-th scoreless turn in a row
  strikes the latest entry (and the count goes back to 0); a bank clears the count.
- ``crosses``: a scoreless turn (a bust, an overshoot, a fault, a wrong announcement)
  adds a cross; the second cross strikes the latest entry (crosses back to 0); a bank
  clears them.
- ``bust_strikes_last_score``: a bust on a roll of all D dice strikes the latest
  entry; it is applied first, then the crosses or the count (so one turn can strike
  twice). A strike on an empty sheet does nothing.
- ``ties = knock_back``: a bank whose new total equals the opponent's score strikes
  the opponent's latest entry.
- ``ties = deadly``: a bank whose new total stands anywhere on the opponent's sheet
  strikes that entry (his latest: he falls back; an older one: his score stays).

The state
=========
Each player's sheet is abstracted to ``h = (a, p, d, c)``: his score ``a``, the entry
before it ``p`` (0 when there is none: then ``d = 0``), ``d = 1`` when entries *may*
stand below ``p`` (the sheet has three entries or more) and ``d = 0`` when none do,
and his counter ``c`` (crosses 0..1, or scoreless turns 0..Z-1; always 0 without
them). A *row* is ``(k, h_mover, h_other)``; ``k`` is the bound (below). A rule that
reaches back one entry (a strike of the latest entry, a deadly tie on ``a`` or on
``p``) is exact in this state whenever ``d = 0``: ``(a, p, 0, c)`` falls to
``(p, 0, 0, c')``. Where ``d = 1`` the entry below ``p`` is not in the state.

The bounds
==========
Where a strike exposes the unknown entry ``q`` below ``p`` (a fall from ``d = 1``,
or a deadly tie on ``p``), the set of sheets it may leave is

.. math:: N(a, p) = \{(p, 0, 0)\} \cup \{(p, q, d') : q \text{ opened}, q < p, d' \in \{0, 1\}\}

(for a fall; ``(a, q, d')`` for a tie on ``p``), a superset of what the real sheet
can hold. A deadly tie on an entry below ``p`` leaves ``(a, p, 1)``: the unknown part
stays unknown. Two games bound the truth: in game ``k = 0`` an adversary of the
mover of the row picks, at every such strike, the sheet worst for him (lowest of his
chance), in game ``k = 1`` the best. The adversary's choices include the truth, so the
lower game's value is at most the real chance and the upper's at least (adding a
choice to one side of a zero-sum game can only move its value that side's way). The
mover's adversary is his opponent's ally: a row of bound ``k`` hands the dice to a
row of bound ``1 - k``. Let ``W_k(x, y)`` be the mover's chance at a turn start of
bound ``k`` (``x``, ``y``: the mover's and the other's abstract sheets), and
``ext_0 = max``, ``ext_1 = min`` (over the successor's own value, the next mover's).

Bellman equations (the two-player equations of `two_player`, with these leaves):

.. math::

    \mathrm{Bank}_k(x, y, t) &= 1 - \mathrm{ext}_k\{W_{1-k}(y', \beta(x, a_x + t))
        : y' \in T(y, a_x + t)\} \quad (1 \text{ when } a_x + t \text{ wins})\\
    L_k(x, y) &= 1 - \mathrm{ext}_k\{W_{1-k}(y, x') : x' \in S(x)\}\\
    L^D_k(x, y) &= 1 - \mathrm{ext}_k\{W_{1-k}(y, x') : x' \in S^D(x)\}

with ``beta(x, n) = (n, a_x, [p_x > 0], 0)`` the banker's sheet after a bank to ``n``,
``T(y, n)`` the other's sheets after the tie rule (``{y}`` when it does not apply),
``S(x)`` the mover's sheets after a scoreless turn (the counters, and the strike they
may cause), ``S^D(x)`` after a bust on all D dice (``S`` after the strike of
``bust_strikes_last_score``). ``L`` is the value of every scoreless turn (a bust, an
overshoot, a fault, a wrong announcement); ``L^D`` replaces it for a roll of all D
dice that busts (`TurnKernel.run`'s ``strike``). A fault's or an overshoot's value is
``L`` in the kernel already (B = 1), so those readings come for free.

Exactness: ``W_0 <= W_true <= W_1`` at every row. Where no reachable strike ever
exposes an unknown entry the two games are one and ``W_0 = W_1``: `exact` is said
only when the interval of the first seat's chance is zero (within the solve's
tolerance). How it is solved: `history_solve`.

What is not in this model yet (refused in one line, `unsupported`): a last round and
take-over offers (the `sheet` preset), a final stretch together with crosses or the
scoreless count (its void bank neither counts nor clears them: a third scoreless
successor), `zero_turns` by points or to zero together with a history rule, three
players or more, and a bust on all D dice past the cap (mandatory hot dice under
``bust_strikes_last_score``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..rules import Rules
from .grid import ScoreGrid


def unsupported(rules: Rules) -> str | None:
    """Why the history model cannot solve `rules` for two players yet (None when it can)."""
    if not rules.history_rules:
        return "the ruleset has no history rule"
    zero = rules.zero_turns
    if any(rules.start):
        return "starting scores with a history rule are not in the history model yet"
    if rules.last_round or rules.take_over:
        return ("history rules with a last round or take-over offers (the 'sheet' preset) are not in the history "
                "model yet")
    if zero is not None and zero.to != "previous":
        return "zero_turns to zero or by points together with a history rule is not in the history model yet"
    if rules.final_stretch is not None and (rules.crosses or zero is not None):
        return ("a final stretch with crosses or scoreless-turn counts (its void bank leaves them as they are) is not "
                "in the history model yet")
    if rules.bust_strikes_last_score and rules.end == "reach" and (
            rules.hot_dice == "mandatory" or rules.rule_of_50 or rules.all_scoring_roll != "free"):
        return ("bust_strikes_last_score where a player past the goal may have to roll all the dice (mandatory hot "
                "dice, the rule of 50, keep-all-and-roll) is not in the history model yet")
    return None


def counter_size(rules: Rules) -> int:
    """How many values the per-player counter takes: 2 (crosses), `zero_turns.count` (to previous), or 1."""
    if rules.crosses:
        return 2
    if rules.zero_turns is not None and rules.zero_turns.to == "previous":
        return rules.zero_turns.count
    return 1


@dataclass(frozen=True, eq=False, slots=True)
class Sheets:
    """Every abstract sheet of one player, ``(a, p, d, c)`` (units), and what the rules do to them.

    Sets of sheets (the choices of the bounds) are rows of an index array padded
    with -1 (`pad`); every set is non-empty.
    """

    rules: Rules
    grid: ScoreGrid
    a: np.ndarray  # (S,) score
    p: np.ndarray  # (S,) entry before it (0: none)
    d: np.ndarray  # (S,) 1: entries may stand below p
    c: np.ndarray  # (S,) counter
    counters: int
    index: dict[tuple[int, int, int, int], int]
    bank_to: np.ndarray  # (S, G) the banker's sheet after a bank to each new score, -1 where it cannot be
    scoreless: np.ndarray  # (S, K) the sheets after a scoreless turn (not a bust on all the dice)
    all_dice: np.ndarray  # (S, K2) after a bust on all D dice
    fall_keep: np.ndarray  # (S, K3) after a strike of the latest entry, the counter kept (a tie)
    strike_p: np.ndarray  # (S, K4) after a strike of the entry before the latest (a deadly tie on p)

    @classmethod
    def of(cls, rules: Rules) -> "Sheets":
        grid = ScoreGrid.of(rules)
        opened = [int(s) for s in grid.scores if s > 0]
        counters = counter_size(rules)
        keys: list[tuple[int, int, int, int]] = []
        for a in [0] + opened:
            for p in [0] + [s for s in opened if s < a]:
                for d in ((0,) if p == 0 else (0, 1)):
                    keys.extend((a, p, d, c) for c in range(counters))
        index = {key: i for i, key in enumerate(keys)}
        arr = np.array(keys, dtype=np.int64).reshape(-1, 4)

        def below(p: int) -> list[tuple[int, int]]:
            """(q, d') of every entry that may stand below an entry p whose lower part is unknown."""
            return [(0, 0)] + [(q, dd) for q in opened if q < p for dd in (0, 1)]

        def fall(sheet: tuple[int, int, int]) -> set[tuple[int, int, int]]:
            a, p, d = sheet
            if a == 0:
                return {sheet}  # a strike on an empty sheet does nothing
            if d == 0:
                return {(p, 0, 0)}
            return {(p, q, dd) for q, dd in below(p)}

        def scoreless(key: tuple[int, int, int, int], all_dice: bool) -> list[int]:
            a, p, d, c = key
            sheets = {(a, p, d)}
            if rules.bust_strikes_last_score and all_dice:
                sheets = set().union(*(fall(s) for s in sheets))
            zero = rules.zero_turns
            limit = 2 if rules.crosses else (zero.count if zero is not None and zero.to == "previous" else 0)
            if limit:
                if c + 1 >= limit:
                    sheets, c = set().union(*(fall(s) for s in sheets)), 0
                else:
                    c += 1
            return sorted(index[(s[0], s[1], s[2], c)] for s in sheets)

        def strike_before(key: tuple[int, int, int, int]) -> list[int]:
            a, p, d, c = key
            if p == 0:
                return [index[key]]
            if d == 0:
                return [index[(a, 0, 0, c)]]
            return sorted(index[(a, q, dd, c)] for q, dd in below(p))

        g = grid.goal
        bank_to = np.full((len(keys), g), -1, dtype=np.int64)
        for i, (a, p, d, c) in enumerate(keys):
            for n in opened:
                if n > a:
                    bank_to[i, n] = index[(n, a, int(p > 0), 0)]
        return cls(rules, grid, arr[:, 0].copy(), arr[:, 1].copy(), arr[:, 2].copy(), arr[:, 3].copy(), counters,
                   index, bank_to,
                   pad([scoreless(k, False) for k in keys]), pad([scoreless(k, True) for k in keys]),
                   pad([sorted(index[(s[0], s[1], s[2], k[3])] for s in fall(k[:3])) for k in keys]),
                   pad([strike_before(k) for k in keys]))

    @staticmethod
    def count(rules: Rules) -> np.ndarray:
        """How many abstract sheets hold each score of the grid (`ScoreGrid.scores`), without building them."""
        scores = ScoreGrid.of(rules).scores
        below = np.arange(len(scores)) - 1  # opened scores below each (0 is not one)
        return np.where(scores > 0, 1 + 2 * np.maximum(below, 0), 1) * counter_size(rules)

    @property
    def size(self) -> int:
        return len(self.a)

    def start(self) -> int:
        """The sheet of a player before his first bank."""
        return self.index[(0, 0, 0, 0)]

    def of_history(self, standing: tuple[int, ...], counter: int = 0) -> int:
        """The abstract sheet of a real one: its standing totals (units, oldest first) and counter."""
        if any(y <= x for x, y in zip(standing, standing[1:])):
            raise ValueError(f"a sheet's standing totals increase, got {standing}")
        a = standing[-1] if standing else 0
        p = standing[-2] if len(standing) > 1 else 0
        return self.index[(a, p, int(len(standing) > 2), counter)]


def pad(sets: list[list[int]]) -> np.ndarray:
    """Sets of indices as rows of one array, padded with -1."""
    width = max(len(s) for s in sets)
    out = np.full((len(sets), width), -1, dtype=np.int64)
    for i, s in enumerate(sets):
        out[i, : len(s)] = s
    return out


def extreme(values: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Per row of `values` (padding NaN), its max where `upper` is False (the lower bound's adversary makes the next
    mover as strong as he can) and its min where True."""
    hi = np.max(np.where(np.isnan(values), -np.inf, values), axis=1)
    lo = np.min(np.where(np.isnan(values), np.inf, values), axis=1)
    return np.asarray(np.where(upper, lo, hi))


def gather(w: np.ndarray, kind: np.ndarray, mover: np.ndarray, others: np.ndarray) -> np.ndarray:
    """``w[kind, mover, others[:, j]]`` per row (`others`: padded sets of the other's sheets), NaN on padding."""
    safe = np.maximum(others, 0)
    out = w[kind[:, None], mover[:, None], safe]
    return np.where(others >= 0, out, np.nan)


def gather_movers(w: np.ndarray, kind: np.ndarray, movers: np.ndarray, other: np.ndarray) -> np.ndarray:
    """``w[kind, movers[:, j], other]`` per row (`movers`: padded sets of the next mover's sheets), NaN on padding."""
    safe = np.maximum(movers, 0)
    out = w[kind[:, None], safe, other[:, None]]
    return np.where(movers >= 0, out, np.nan)
