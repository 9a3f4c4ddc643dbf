"""`optimal`: the player who maximises the solved chance to win (two players).

The policy reads one `OptimalTable`, built once per ruleset from the solved
turn-start table ``W[a, b]`` (``solve(rules, "win")``): the exact value
``V(a, b, t, m)`` of every turn state of every score pair and whether to bank
there, obtained by one kernel pass per group of pairs (``keep_table=True``,
bust value ``L = 1 - W[b, a]``); no iteration is needed because ``W`` is known.
The table is kept in memory and in the solver's cache directory (``.npz``, no
pickle), so that the engine policy here and the vectorised simulator share it.

Layout: the pairs ``(a, b)`` of valid scores (compact indices ``ia, ib``); pair
``p`` owns ``cap(a) + 2`` rows of turn points starting at ``offset[p]``, one
column per number of dice in hand. Turn points past the cap fold onto the last
rows: under ``reach`` the states past the cap are terminal and repeat with the
period of the rule of 50 (``cap + (t - cap) % period``); under ``exact`` row
``cap + 1`` is the overshoot row, worth the bust value.

Decisions:
    keep   the legal keep whose state after it has the largest ``V`` (an instant
           win is worth 1, an overshoot the bust value);
    bank   when banking is allowed and worth at least rolling (ties bank, as in
           the solver).

The table is that of the solver for the ruleset: under ``last_round`` it has a seat axis (seat 0
opens each round) and its bank values already weigh the opponent's last turn;
under ``take_over`` they weigh the offer a bank hands to the opponent. Then:

- ``take_over``: taken when rolling from the offered turn (the player must roll
  before banking) is worth more than starting afresh, both read from the table;
- ``last_round``: on his last turn a player maximises the chance that this turn
  ends with a bank that takes the victory (a one-turn table, `LastTurn`);
- ``prediction``: announces the score of the last two dice when the table says
  it beats rolling them plainly (never in a last turn);
- crosses, ties, struck scores, ``zero_turns``: ignored (the table is read at the
  current banked scores), the solver's stated relaxation.

More than two players: the two-player game is not defined by the table. The
documented reduction used here plays the two-player table against the best
score among the opponents (the leader), which keeps every answer legal.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from ..dice.scoring import Keep
from ..engine.judge import bank_outcome, reaches_goal
from ..engine.state import GameView, TakeOverOffer
from ..errors import CinqmilleError
from ..rules import Rules, content_key, load_rules
from ..solver import cache
from ..solver.api import solve
from ..solver.grid import ScoreGrid
from ..solver.kernel import UNIT, KeepGraph, Prediction, TurnKernel, build_keep_graph
from ..solver.result import SolveResult

TABLE_FORMAT = 2
#: Rows x dice of the kernel pass at a time when building a table (bounds memory).
CHUNK_CELLS = 400_000


@dataclass(frozen=True, eq=False)
class OptimalTable:
    """Values and bank decisions of every turn state of every pair, for the solved two-player game."""

    rules: Rules
    scores: np.ndarray  # (S,) valid banked scores, units of 50
    index: np.ndarray  # (goal,) compact index of a score in units, -1 if impossible
    caps: np.ndarray  # (seats*S,) cap of a mover of seat s with score scores[i], at s * S + i (GameModel.caps)
    offset: np.ndarray  # (seats*S*S,) first row of the pair id (s * S + ia) * S + ib
    value: np.ndarray  # (R, D) V(a, b, t, m)
    bank: np.ndarray  # (R, D) bool: bank here (allowed and worth at least rolling)
    bust: np.ndarray  # (seats*S*S,) value of a bust for the pair
    start: np.ndarray  # (seats*S*S,) W[s, a, b], the value of the turn start
    period: int

    @property
    def dice(self) -> int:
        return self.rules.dice

    @property
    def exact_end(self) -> bool:
        return self.rules.end == "exact"

    @cached_property
    def graph(self) -> KeepGraph:
        return build_keep_graph(self.rules)

    @property
    def seats(self) -> int:
        """2 under last_round (seat 0 opens each round), else 1."""
        return len(self.caps) // len(self.scores)

    def pair(self, a: np.ndarray | int, b: np.ndarray | int, seat: np.ndarray | int = 0) -> np.ndarray:
        """Pair ids of banked scores in units of 50 (and the mover's seat); raises for an impossible score."""
        ia, ib = self.index[np.asarray(a)], self.index[np.asarray(b)]
        if np.any(ia < 0) or np.any(ib < 0):
            raise CinqmilleError("a banked score that cannot occur under this ruleset")
        s = len(self.scores)
        return (np.minimum(seat, self.seats - 1) * s + ia) * s + ib

    def rows(self, pid: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Row of turn points `t` (units) for pairs `pid`, folding the states past the cap."""
        cap = self.caps[pid // len(self.scores)]
        t = np.asarray(t)
        if self.exact_end:
            folded = np.minimum(t, cap + 1)
        elif self.period == 1:
            folded = np.minimum(t, cap)
        else:
            folded = np.where(t < cap, t, cap + (t - cap) % self.period)
        return self.offset[pid] + folded

    def value_at(self, a: int, b: int, t: int, m: int, seat: int = 0) -> float:
        """V with banked `a`, `b` (points) and turn points `t` (units of 50) and `m` dice in hand."""
        pid = self.pair(a // UNIT, b // UNIT, seat)
        return float(self.value[self.rows(pid, t), m - 1])

    def bank_at(self, a: int, b: int, t: int, m: int, seat: int = 0) -> bool:
        """Whether the optimal player banks (banked `a`, `b` in points; `t` units set aside, `m` dice)."""
        pid = self.pair(a // UNIT, b // UNIT, seat)
        return bool(self.bank[self.rows(pid, t), m - 1])

    def roll_value(self, a: int, b: int, t: int, m: int, seat: int = 0) -> float:
        """Value of rolling the `m` dice in hand with `t` units set aside (banked `a`, `b` in points)."""
        g = self.graph
        pid = self.pair(a // UNIT, b // UNIT, seat)
        t2 = t + g.keep_units
        vals = self.value[self.rows(np.full(len(t2), pid), t2), g.keep_next - 1]
        vals = np.where(g.keep_win, 1.0, vals)
        best = np.maximum.reduceat(vals, g.class_start)
        return float(best @ g.class_prob[:, m - 1] + g.bust_prob[m - 1] * self.bust[pid])

    @cached_property
    def prediction(self) -> Prediction:
        return Prediction.of(self.graph)

    def predict_values(self, a: int, b: int, t: int, seat: int = 0) -> dict[int, float]:
        """Value of announcing each score (points) before rolling the last two dice with `t` units set aside."""
        pr = self.prediction
        pid = self.pair(a // UNIT, b // UNIT, seat)
        t2 = pr.targets(t)
        vals = self.value[self.rows(np.full(len(t2), pid), t2), pr.keep_next - 1]
        if self.exact_end:
            vals = np.where(a // UNIT + t2 > self.rules.goal // UNIT, self.bust[pid], vals)
        vals = np.where(pr.keep_win, 1.0, vals)
        best = np.maximum.reduceat(vals, pr.class_start)
        values = best @ pr.prob + (1.0 - pr.prob.sum(axis=0)) * self.bust[pid]
        return {int(c) * UNIT: float(v) for c, v in zip(pr.choices, values)}


def _layout(grid: ScoreGrid, caps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(index, offset) of the table layout for `grid`, given the caps per (seat, score)."""
    scores = grid.scores
    s = len(scores)
    index = np.full(grid.goal, -1, dtype=np.int64)
    index[scores] = np.arange(s)
    rows_a = caps + 2
    base = np.concatenate([[0], np.cumsum(rows_a * s)[:-1]])
    offset = (base[:, None] + np.arange(s)[None, :] * rows_a[:, None]).reshape(-1)
    return index, offset.astype(np.int64)


def build_table(result: SolveResult) -> OptimalTable:
    """Compute the table of a solved two-player result (one kernel pass per group of pairs)."""
    if result.objective != "win":
        raise ValueError("the optimal table needs a result of the 'win' objective")
    rules = result.rules
    w = result.tables
    model = result.model
    grid, kernel = model.grid, model.kernel
    d = rules.dice
    scores = grid.scores
    s = len(scores)
    seats = w.shape[0]
    mover = np.repeat(np.arange(seats), s)
    caps = model.caps(mover, np.tile(scores, seats)).astype(np.int64)
    index, offset = _layout(grid, caps)
    total_rows = int(((caps + 2) * s).sum())
    value = np.empty((total_rows, d))
    bank = np.zeros((total_rows, d), dtype=bool)
    order = np.argsort(-caps, kind="stable")  # (seat, a) by cap descending
    pos = 0
    while pos < len(order):
        group = [order[pos]]
        tpad = kernel.tpad_for(int(caps[order[pos]]))
        while pos + len(group) < len(order) and (len(group) + 1) * s * tpad * d <= CHUNK_CELLS:
            group.append(order[pos + len(group)])
        pos += len(group)
        sa = np.repeat(np.array(group), s)  # seat * S + ia
        seat, ia = sa // s, sa % s
        ib = np.tile(np.arange(s), len(group))
        aa, bb = scores[ia], scores[ib]
        cc = caps[sa]
        l0 = 1.0 - w[model.other(seat), bb, aa]
        tmax = int(cc.max()) + 1
        btab = model.bank(seat, aa, bb, tmax, w)
        _, _, ta, tb = kernel.run(aa, cc, btab, l0, keep_table=True, term_bank=model.terminal_bank(seat, aa, bb))
        for row in range(len(ia)):
            n = int(cc[row]) + 2
            start = int(offset[sa[row] * s + ib[row]])
            v = ta[row, :n] + tb[row, :n] * l0[row]
            bv = btab.a[row, :n] + btab.b[row, :n] * l0[row]
            value[start:start + n] = v
            bank[start:start + n] = np.isfinite(btab.a[row, :n]) & (bv >= v)
    pid = np.arange(seats * s * s)
    seat_all, ia_all, ib_all = pid // (s * s), (pid // s) % s, pid % s
    bust = 1.0 - w[model.other(seat_all), scores[ib_all], scores[ia_all]]
    start_v = w[seat_all, scores[ia_all], scores[ib_all]]
    return OptimalTable(rules, scores, index, caps, offset, value, bank, bust, start_v, kernel.period)


def _table_path(rules: Rules) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)[:40]
    return cache.cache_dir() / f"{safe}-optimal-policy-{content_key(rules)}-{cache.solver_version()}-t{TABLE_FORMAT}.npz"


_MEMO: dict[tuple[str, str], OptimalTable] = {}
_LOCK = threading.Lock()


def table_rules(rules: Rules) -> Rules:
    """The ruleset whose two-player table the policy reads: `rules` itself (every rule the solver
    carries is in the table)."""
    return rules


def optimal_table(rules: Rules | str, use_cache: bool = True) -> OptimalTable:
    """The table of a ruleset: from memory, from the cache directory, or built (and cached)."""
    rules = table_rules(load_rules(rules))
    key = (content_key(rules), str(cache.cache_dir()))
    with _LOCK:
        if key in _MEMO:
            table = _MEMO[key]
            return table if table.rules == rules else _renamed(table, rules)
    path = _table_path(rules)
    table = None
    if use_cache:
        found = cache.try_load(path)
        if found is not None:
            arrays, meta = found
            names = ("scores", "index", "caps", "offset", "value", "bank", "bust", "start")
            if meta.get("format") == TABLE_FORMAT and all(n in arrays for n in names) and "period" in meta:
                table = OptimalTable(rules, *(arrays[n] for n in names), int(meta["period"]))
    if table is None:
        table = build_table(solve(rules, "win", use_cache=use_cache))
        if use_cache:
            try:
                cache.save_npz(path, {"scores": table.scores, "index": table.index, "caps": table.caps,
                                      "offset": table.offset, "value": table.value, "bank": table.bank,
                                      "bust": table.bust, "start": table.start},
                               {"format": TABLE_FORMAT, "period": table.period, "rules": cache.rules_meta(rules)})
            except OSError:
                pass
    with _LOCK:
        if len(_MEMO) >= 4:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = table
    return table


def _renamed(table: OptimalTable, rules: Rules) -> OptimalTable:
    from dataclasses import replace
    return replace(table, rules=rules)


# -- the last turn of a last round ---------------------------------------------------------

class LastTurn:
    """Chances that this turn ends with a bank that takes the victory, for banked `score` and a bar.

    Under ``reach`` the bank must pass `target` (or reach the goal when nobody
    holds it); under ``exact`` it must reach the goal exactly. A bust (an
    overshoot) is worth 0, an instant win 1. One backward pass over turn points;
    past the point where every allowed bank wins the values repeat.
    """

    def __init__(self, rules: Rules, score: int, target: int, graph: KeepGraph):
        self.rules = rules
        d = rules.dice
        g = graph
        a = score // UNIT
        if rules.end == "exact":
            top = rules.goal // UNIT - a  # t above top: overshoot
        else:
            need = max(target + UNIT - score, 0) // UNIT
            top = max(need, rules.opening // UNIT, rules.min_bank // UNIT, 1) + 1
        self.top = top
        self.exact = rules.end == "exact"
        full_bank = rules.can_bank_after_full_hand

        def wins(t: int) -> bool:
            if not rules.can_bank(score, t * UNIT):
                return False
            out = bank_outcome(rules, score, t * UNIT)
            if out.kind != "scored" or not reaches_goal(rules, out.score):
                return False
            return rules.end == "exact" or out.score > target

        size = top + g.max_units + 2
        value = np.zeros((size, d))
        bankv = np.zeros((size, d), dtype=bool)
        # stationary region (reach): every allowed bank wins; a must-roll full hand needs one more roll
        if not self.exact:
            stat = np.ones(d)
            if not full_bank:
                for _ in range(200):
                    vals = np.where(g.keep_win, 1.0, stat[g.keep_next - 1])
                    best = np.maximum.reduceat(vals, g.class_start)
                    stat[d - 1] = float(best @ g.class_prob[:, d - 1])
            value[top:] = stat
            bankv[top:] = True
            if not full_bank:
                bankv[top:, d - 1] = False
        for t in range(min(top, size - 1), -1, -1):
            if not self.exact and t >= top:
                continue
            t2 = t + g.keep_units
            if self.exact:
                vals = np.where(t2 > top, 0.0, value[np.minimum(t2, size - 1), g.keep_next - 1])
            else:
                vals = value[np.minimum(t2, size - 1), g.keep_next - 1]
            vals = np.where(g.keep_win, 1.0, vals)
            best = np.maximum.reduceat(vals, g.class_start)
            roll = best @ g.class_prob
            if t > 0 and wins(t):
                can = np.ones(d, dtype=bool)
                if not full_bank:
                    can[d - 1] = False
                value[t] = np.where(can, 1.0, roll)
                bankv[t] = can
            else:
                value[t] = roll
        self.value, self.banks = value, bankv
        self._graph = g

    def _row(self, t: int) -> int:
        if self.exact:
            return t
        return min(t, self.top)

    def at(self, t: int, m: int) -> float:
        """Chance to take the victory from turn points t (units) with m dice in hand."""
        if self.exact and t > self.top:
            return 0.0
        return float(self.value[self._row(t), m - 1])

    def roll_value(self, t: int, m: int) -> float:
        """Chance when rolling now (must roll, e.g. after a take-over)."""
        g = self._graph
        vals = np.array([1.0 if w else self.at(t + int(u), int(n)) for u, n, w in
                         zip(g.keep_units, g.keep_next, g.keep_win)])
        best = np.maximum.reduceat(vals, g.class_start)
        return float(best @ g.class_prob[:, m - 1])


# -- the engine policy -------------------------------------------------------------------

class OptimalPolicy:
    """The solved two-player policy behind the engine's `Policy` protocol (see the module docstring)."""

    name = "optimal"

    def __init__(self, rules: Rules, table: OptimalTable | None = None):
        self.rules = rules
        self.table = table if table is not None else optimal_table(rules)
        self._last: dict[tuple[int, int], LastTurn] = {}

    def __repr__(self) -> str:
        return self.name

    # what the table is read at
    def _scores(self, view: GameView) -> tuple[int, int]:
        me = view.score
        others = [p.score for i, p in enumerate(view.players) if i != view.seat]
        return me, max(others)

    def _seat(self, view: GameView) -> int:
        """The seat the table is read at: under last_round 0 for the player who opens each round."""
        return 0 if self.table.seats == 1 or view.seat == 0 else 1

    def _last_turn(self, view: GameView) -> LastTurn | None:
        last = view.last_round
        if last is None:
            return None
        key = (view.score, last.target)
        if key not in self._last:
            if len(self._last) > 64:
                self._last.clear()
            self._last[key] = LastTurn(self.rules, view.score, last.target, self.table.graph)
        return self._last[key]

    def keep_values(self, view: GameView, keeps: tuple[Keep, ...]) -> np.ndarray:
        """Value of each keep of `keeps` (the state after it, played on optimally)."""
        d = self.rules.dice
        t0 = view.turn_points // UNIT
        last = self._last_turn(view)
        out = np.empty(len(keeps))
        a, b = self._scores(view)
        for i, k in enumerate(keeps):
            if k.win:
                out[i] = 2.0  # above every chance: winning now is never worse
                continue
            left = view.dice_in_hand - k.size
            m2 = left if left else d
            t2 = t0 + k.points // UNIT
            if last is not None:
                out[i] = last.at(t2, m2)
            else:
                out[i] = self.table.value_at(a, b, t2, m2, self._seat(view))
        return out

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> int:
        return int(np.argmax(self.keep_values(view, keeps)))

    def should_bank(self, view: GameView) -> bool:
        t, m = view.turn_points // UNIT, view.dice_in_hand
        last = self._last_turn(view)
        if last is not None:
            return bool(last.banks[last._row(t), m - 1]) if not (last.exact and t > last.top) else False
        a, b = self._scores(view)
        return self.table.bank_at(a, b, t, m, self._seat(view))

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        t, m = offer.points // UNIT, offer.dice
        last = self._last_turn(view)
        if last is not None:
            return last.roll_value(t, m) > last.at(0, self.rules.dice)
        a, b = self._scores(view)
        if self.rules.end == "exact" and view.score + offer.points > self.rules.goal:
            return False
        seat = self._seat(view)
        return self.table.roll_value(a, b, t, m, seat) > self.table.value_at(a, b, 0, self.rules.dice, seat)

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        """Announce the score of the last two dice when that beats rolling them plainly (not in a last turn)."""
        if self._last_turn(view) is not None:
            return None
        a, b = self._scores(view)
        seat, t = self._seat(view), view.turn_points // UNIT
        values = self.table.predict_values(a, b, t, seat)
        best = max((v for v in choices if v in values), key=lambda v: values[v], default=None)
        if best is None or values[best] <= self.table.roll_value(a, b, t, 2, seat):
            return None
        return best


def make_policy(arg: str | None, rules: Rules, rng: np.random.Generator | None = None) -> OptimalPolicy:
    """`parse_policy("optimal", rules)`: the solved policy (takes no argument)."""
    if arg:
        raise CinqmilleError(f"policy 'optimal' takes no argument, got 'optimal:{arg}'")
    return OptimalPolicy(rules)
