"""Blocks of turn rows: every turn state's values and the solve's decisions (σ), read by every reader.

Rows
====
A *row* is the turn of one mover against one opponent: ``(seat, a, b)`` (seat
0 unless `last_round`; seat 0 opens each round) in the `PolicyTable`, or a
last turn ``(a, target)`` of a last round (`PolicyTable.last_turn`). Row ``r``
owns the turn layers ``t = 0 .. cap[r] + 1`` (units of 50) from
``offset[r]``, one column per number of dice in hand; turn points past them
fold back (`fold`): under ``reach`` the states from the cap on are terminal and
repeat with the period of the rule of 50; under ``exact`` layer ``cap + 1``
stands for every overshoot. Per state ``(t, m)`` a block of rows stores

- ``bank``: the value of banking (``-inf`` where the rules forbid it);
- ``roll``: the value of rolling the ``m`` dice in hand (after the best
  announcement, before rolling two dice under `prediction`);
- ``plain`` and ``predict`` (`prediction`): rolling two dice without
  announcing, and announcing each of `choices`.

The value of a state is ``max(bank, roll)``, except that an overshoot is worth
the bust value of the row.

Decisions
=========
Each decision lists its options in a fixed tie-break order (RULES.md section
8) and takes the first of the best (`best`; `ranking` orders them all, for the
advice):

- bank or roll (`move`, `banks`, `announcement`): the move the solve's pass
  took (σ, `move_v`) where it took one; elsewhere (a last turn of a last
  round) bank, roll plainly, then the announcements from the smallest (a tie
  goes to banking; between announcing and rolling plainly, to rolling plainly);
- which keep (`keep`, `taken`): not decided here but read: the keep the
  solve's pass took in each roll class (σ, `kernel.Decisions.keep`; on a tie
  the kernel's rule, `compiled.choose`: the most points, then the most dice in
  hand after);
- a take-over offer (`takes_over`): the solve's (σ, `take_v`: where its
  offers took over) where the table holds it; elsewhere start afresh, then
  take over (a tie starts afresh).

Every function is vectorised over states (arrays that broadcast); one state is
arrays of one element.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..dice import counts_of, dice_tables, faces_of
from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.bank import UNIT
from ..solver.choice import best, fold, ranking, roll_classes
from ..solver.keeps import NEG, KeepGraph, Prediction, rolled
from .turn_eval import TurnExpectation, bust_odds, turn_expectation

WIN = 1.0  # value of an instant win (the win objective)


class TurnRows:
    """Turn rows and the values of their states; every decision of the policy (see the module docstring)."""


    def __init__(self, rules: Rules, cap: np.ndarray, offset: np.ndarray, bust: np.ndarray,
                 bank: np.ndarray, roll: np.ndarray, plain: np.ndarray | None = None,
                 predict: np.ndarray | None = None, choices: tuple[int, ...] = (), period: int = 1,
                 ready: bool = True, tie: float = 0.0, move: np.ndarray | None = None,
                 keep: np.ndarray | None = None, told: np.ndarray | None = None, take: np.ndarray | None = None):
        self.rules = rules
        self.dice = rules.dice
        self.exact = rules.banking.exact
        self.period = period
        self.cap = np.asarray(cap, dtype=np.int64)  # (rows,)
        self.offset = np.asarray(offset, dtype=np.int64)  # (rows,)
        self.bust = np.asarray(bust, dtype=float)  # (rows,)
        self.bank_v = bank  # (layers, D)
        self.roll_v = roll  # (layers, D)
        self.plain_v = plain  # (layers,) or None
        self.predict_v = predict  # (layers, V) or None
        self.choices = tuple(int(c) for c in choices)  # announcements, in points
        self.tie = tie  # values this close are a tie for the player to move (0: exact ties, two players)
        self.move_v = move  # (layers, D) int8: the move the solve's pass took (σ; -1 where it took none), or None
        # (layers, Cc) int8: the keep the pass took at each layer in each roll class with a choice (σ,
        # `kernel.Decisions.keep`), and (layers, C2c) after a right announcement (`told`); None: not kept
        self.keep_v, self.told_v = keep, told
        # (layers, D) bool: whether the solve took over an offer of (t, m) (σ, its `offers`); None: not kept
        self.take_v = take
        self.value_v = np.empty_like(roll)  # (layers, D) value of the state, filled by `_values`
        self._expected: dict[tuple[int, int], TurnExpectation] = {}
        if ready:
            self._values(np.arange(len(self.cap)))

    def _values(self, rows: np.ndarray) -> None:
        """Fill `value_v` for `rows` (whose layers are computed): max(bank, roll), a bust on an overshoot layer."""
        if not len(rows):
            return
        span = self.cap[rows] + 2
        ends = np.cumsum(span)
        i = np.repeat(self.offset[rows], span) + np.arange(ends[-1]) - np.repeat(ends - span, span)
        v = np.maximum(self.bank_v[i], self.roll_v[i])
        if self.exact:
            v[ends - 1] = self.bust[rows][:, None]  # the overshoot layer
        self.value_v[i] = v

    def _ready(self, r: np.ndarray) -> None:
        """Make sure the rows `r` are computed (a block built whole has nothing to do)."""

    # -- reading ------------------------------------------------------------------------------
    def layer(self, r: Any, t: Any) -> np.ndarray:
        """Index into the state arrays of turn points `t` (units) of rows `r`."""
        r = np.asarray(r)
        self._ready(r)
        return np.asarray(self.offset[r] + fold(t, self.cap[r], self.period, self.exact))

    def _cell(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Flat index of states (layer, dice) into the (layers, D) arrays."""
        return np.asarray(self.layer(r, t) * self.dice + (np.asarray(m) - 1))

    def bank(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Value of banking `t` units with `m` dice in hand (-inf where not allowed)."""
        return np.take(self.bank_v.reshape(-1), self._cell(r, t, m))

    def roll(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Value of rolling the `m` dice in hand (after the best announcement, if any)."""
        return np.take(self.roll_v.reshape(-1), self._cell(r, t, m))

    def value(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Value of the state (the better of banking and rolling; an overshoot is worth a bust)."""
        return np.take(self.value_v.reshape(-1), self._cell(r, t, m))

    def moves(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Values of the moves in tie-break order, shape (..., 2 + V): bank, roll plainly, announce each choice."""
        m = np.asarray(m)
        i = self.layer(r, t)
        cell = i * self.dice + (m - 1)
        bank, roll = np.take(self.bank_v.reshape(-1), cell), np.take(self.roll_v.reshape(-1), cell)
        if self.predict_v is None or self.plain_v is None:
            return np.stack([bank, roll], axis=-1)
        two = m == 2
        plain = np.where(two, np.take(self.plain_v, i), roll)
        announce = np.where(two[..., None], self.predict_v[i], NEG)
        return np.concatenate([bank[..., None], plain[..., None], announce], axis=-1)

    def keep_values(self, r: Any, t: Any, units: Any, left: Any, win: Any, doubled: Any = False) -> np.ndarray:
        """Value of each keep (`units` points, `left` dice in hand after, instant `win`) from turn points `t`.

        `r` and `t` describe the states (shape S), the keeps are the last axis
        (shape S + (J,)); `doubled`: the keeps follow a right announcement, which
        doubles the turn points.
        """
        r, t = np.asarray(r)[..., None], np.asarray(t)[..., None]
        t2 = t + np.asarray(units)
        if np.any(doubled):
            t2 = np.where(np.asarray(doubled)[..., None], 2 * t2, t2)
        return np.where(win, self.win_worth(t), self.value(r, t2, left))

    def win_worth(self, t: Any) -> Any:
        """The value of a keep that wins at once from turn units `t` (the `win` objective: 1)."""
        return WIN

    def offer_values(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Values of a take-over offer (`t` units, `m` dice) in tie-break order: start afresh, take over."""
        r = np.asarray(r)
        fresh = self.value(r, np.zeros_like(r), np.full(r.shape, self.dice))
        return np.stack([fresh, self.roll(r, t, m)], axis=-1)

    # -- the decisions --------------------------------------------------------------------------
    def move(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """The move: 0 bank, 1 roll plainly, 2 + j announce `choices[j]` and roll. It is the one the kernel's
        pass took (`move_v`, σ) where it took one, else the tie-break rule on the values (`best`: a last turn
        of a last round, an overshoot)."""
        if self.move_v is not None:
            taken = np.take(self.move_v.reshape(-1), self._cell(r, t, m)).astype(np.int64)
            if (taken >= 0).all():
                return taken
            return np.where(taken >= 0, taken, best(self.moves(r, t, m), self.tie))
        return best(self.moves(r, t, m), self.tie)

    def banks(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Bank (True) or roll."""
        return np.asarray(self.move(r, t, m) == 0)

    def announcement(self, r: Any, t: Any) -> np.ndarray:
        """Points announced before rolling the last two dice, 0 to roll them plainly."""
        r = np.asarray(r)
        if self.predict_v is None:
            return np.zeros(np.broadcast(r, t).shape, dtype=np.int64)
        two = np.full(r.shape, 2)
        if self.move_v is None:
            j = best(self.moves(r, t, two)[..., 1:], self.tie)
        else:  # the pass's roll where it rolled (after a bank, the rule says how it would roll)
            taken = np.take(self.move_v.reshape(-1), self._cell(r, t, two)).astype(np.int64)
            j = taken - 1 if (taken >= 1).all() else np.where(taken >= 1, taken - 1,
                                                               best(self.moves(r, t, two)[..., 1:], self.tie))
        return np.asarray(np.array((0,) + self.choices, dtype=np.int64)[j])

    def taken(self, r: Any, t: Any, doubled: bool = False) -> np.ndarray:
        """The keep the solve took in every roll class from turn units `t` of rows `r` (σ, `keep_v`): shape
        ``S + (C,)``, the index of the keep among the classes' keeps (of the `KeepGraph`, or after a right
        announcement, `doubled`, of the `Prediction`)."""
        graph, pred = roll_classes(self.rules)
        classes: KeepGraph | Prediction | None = pred if doubled else graph
        table = self.told_v if doubled else self.keep_v
        if classes is None or table is None:
            raise CinqmilleError("this block of rows holds no keeps" if classes is not None
                                 else "no announcement under this ruleset")
        local = table[self.layer(r, t)]
        if (local < 0).any():
            raise CinqmilleError("a keep asked where the solve took none (past the goal)")
        out = np.broadcast_to(classes.class_start, local.shape[:-1] + classes.class_start.shape).copy()
        out[..., classes.choosing] += local
        return out

    def keep(self, r: Any, t: Any, c: Any, doubled: Any = False) -> np.ndarray:
        """The keep the solve took in roll class `c` (of the `KeepGraph`, broadcast with `r` and `t`) from turn
        units `t` of rows `r`, after a right announcement where `doubled`: the keep's index in the graph."""
        graph, pred = roll_classes(self.rules)
        r, t, c, doubled = np.broadcast_arrays(np.asarray(r), np.asarray(t), np.asarray(c), np.asarray(doubled))
        i = self.layer(r, t)
        local = np.zeros(c.shape, dtype=np.int64)
        for told, classes, cls in ((False, graph, c), (True, pred, c)):
            sel = doubled == told
            if not sel.any():
                continue
            table = self.told_v if told else self.keep_v
            if classes is None or table is None:
                raise CinqmilleError("this block of rows holds no keeps" if classes is not None
                                     else "no announcement under this ruleset")
            if told:
                assert isinstance(classes, Prediction)
                cls = np.searchsorted(classes.two, c)
            col = np.minimum(np.searchsorted(classes.choosing, cls), max(len(classes.choosing) - 1, 0))
            chooses = sel & (classes.choosing[col] == cls) if len(classes.choosing) else np.zeros_like(sel)
            found = table[i[chooses], col[chooses]] if chooses.any() else np.zeros(0, dtype=np.int8)
            if (found < 0).any():
                raise CinqmilleError("a keep asked where the solve took none (past the goal)")
            local[chooses] = found
        return np.asarray(graph.class_start[c] + local)

    def takes_over(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """Take over the offered turn (True) or start afresh."""
        if self.take_v is not None:  # the solve's own decision (`PolicyTable`: the offers it solved)
            return np.asarray(np.take(self.take_v.reshape(-1), self._cell(r, t, m)))
        return np.asarray(best(self.offer_values(r, t, m), self.tie) == 1)

    # -- what the decisions give in points ---------------------------------------------------
    def expectation(self, r: int, a: int) -> TurnExpectation:
        """Expected points banked from every state of row `r` (mover's banked score `a`, units) under the policy."""
        key = (int(r), int(a))
        found = self._expected.get(key)
        if found is None:
            found = turn_expectation(self, key[0], key[1])
            if len(self._expected) >= 256:
                self._expected.clear()
            self._expected[key] = found
        return found

    def roll_busts(self, m: int) -> np.ndarray:
        """Per move of `moves` (bank, roll plainly, announce each choice): the chance that the next roll of `m`
        dice fails at once (NaN for banking and for announcements with other than two dice)."""
        odds = bust_odds(self.rules)
        out = [np.nan, float(odds[0][m])]
        if self.predict_v is not None:
            out += [float(odds[1][c]) if m == 2 else np.nan for c in self.choices]
        return np.array(out)

    @staticmethod
    def concat(blocks: list["TurnRows"]) -> "TurnRows":
        """One block holding the rows of `blocks` (complete blocks of one ruleset), in order."""
        first = blocks[0]
        sizes = [len(b.bank_v) for b in blocks]
        base = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        def join(name: str) -> Any:
            return None if getattr(first, name) is None else np.concatenate([getattr(b, name) for b in blocks])

        def joined(name: str) -> Any:
            return None if any(getattr(b, name) is None for b in blocks) else join(name)

        return TurnRows(first.rules, np.concatenate([b.cap for b in blocks]),
                        np.concatenate([b.offset + o for b, o in zip(blocks, base)]),
                        np.concatenate([b.bust for b in blocks]), join("bank_v"), join("roll_v"),
                        join("plain_v"), join("predict_v"), first.choices, first.period, tie=first.tie,
                        move=joined("move_v"), keep=joined("keep_v"), told=joined("told_v"))


def last_turn_rows(rules: Rules, last: Any, a: int, target: int) -> TurnRows:
    """One row: the last turn of a player with banked `a` against `target` (units), from the solver's `LastTurn`.

    A bank wins (1) only past `target` (``reach``; by the rule of 50 only on a
    score ending in 00) or exactly on the goal (``exact``); any other bank, a
    bust and an overshoot are worth 0. The values of the states are the
    `LastTurn` tables'; rolling is their backup (`TurnKernel.roll_tables`).
    """
    d = rules.dice
    bank_rules, end = last.bank, last.bank.end
    thr, possible, c = last.threshold(a, target)
    n = thr + 2
    t = np.arange(n)[:, None]
    m = np.arange(1, d + 1)[None, :]
    shape = (n, d)
    if possible:
        value = np.broadcast_to(last._lookup(last.value, np.full(shape, c), thr - t, m), shape).copy()
    else:
        value = np.zeros(shape)
    if last.exact:
        value[-1] = 0.0  # the overshoot row
    new = a + t
    success = end.beats(new, target) & (bank_rules.fault(new) ^ True)
    can = bank_rules.allowed(a, t, m) & (end.overshoots(a, t) ^ True)
    bank = np.where(can, np.where(success & possible, 1.0, 0.0), NEG)
    kernel = last.kernel
    plain, predict = kernel.roll_tables(value, 0.0)
    roll = rolled(plain, predict)
    if last.exact:  # taking over past the goal: worth nothing (as `LastTurn.chance` counts it)
        roll[-1] = plain[-1] = 0.0
        if predict is not None:
            predict[-1] = 0.0
    choices = () if kernel.prediction is None else tuple(int(x) * UNIT for x in kernel.prediction.choices)
    keep = last.keeps(int(c), thr - np.arange(n))  # the keeps of the `LastTurn` pass (σ), on the same values
    return TurnRows(rules, np.array([thr]), np.array([0]), np.array([0.0]), bank, roll,
                    None if predict is None else plain[:, 1].copy(), predict, choices, last.period, keep=keep)


# -- the keeps of one roll, for the advice ------------------------------------------------
@dataclass(frozen=True)
class KeepChoice:
    """One legal keep of a roll: its value, and the move after it (`then`: win, bust, bank or roll)."""

    keep: tuple[int, ...]  # kept faces, sorted
    points: int  # points of the keep
    win: float  # value of the keep
    then: str  # "win" (an instant win), "bust" (an overshoot), "bank" or "roll"
    turn: int  # turn points after the keep
    dice: int  # dice in hand after the keep
    bank: float | None  # after the keep: value of banking (None when not allowed)
    roll: float | None  # after the keep: value of rolling on


def roll_keep(block: "TurnRows", r: Any, t: Any, counts: tuple[int, ...], doubled: bool = False) -> int:
    """The keep the solve took for the roll `counts` (dice per face) from turn units `t` of row `r`, after a
    right announcement where `doubled`: its index in the `KeepGraph` (`TurnRows.keep` of the roll's class)."""
    return int(block.keep(r, t, roll_class(block.rules, counts), doubled))


def roll_class(rules: Rules, counts: tuple[int, ...]) -> int:
    """The roll class (of the `KeepGraph`) of the roll `counts` (dice per face)."""
    graph, _ = roll_classes(rules)
    n = sum(counts)
    c = int(graph.roll_class[n - 1][dice_tables(rules)[n].roll_index(counts)])
    if c < 0:
        raise CinqmilleError("a roll that scores nothing has no keep")
    return c


def same_keep(graph: KeepGraph, k: Any, units: Any, left: Any, win: Any, valid: Any = True) -> np.ndarray:
    """The first candidate along the last axis (`units` points, `left` dice in hand after, instant `win`;
    `valid` masks padding) that is the graph's keep `k` (one per row of candidates): same points, same dice
    in hand after, same win; keeps alike in all three are worth the same in every state."""
    k = np.asarray(k)[..., None]
    same = ((np.asarray(units) == graph.keep_units[k]) & (np.asarray(left) == graph.keep_next[k])
            & (np.asarray(win, dtype=bool) == graph.keep_win[k]) & np.asarray(valid, dtype=bool))
    return np.asarray(np.argmax(same, axis=-1))


def keep_choices(block: TurnRows, r: int, turn: int, faces: tuple[int, ...]) -> list[KeepChoice]:
    """Every legal keep of the roll `faces` with `turn` points set aside: the solve's keep first (`roll_keep`),
    then the others from best to worst (ties in the dice table's order)."""
    rules = block.rules
    d = rules.dice
    table = dice_tables(rules)[len(faces)]
    ks = np.array(table.keeps_of(table.roll_index(counts_of(faces))), dtype=np.int64)
    if not len(ks):
        return []
    win = table.keep_win[ks].astype(bool)
    points = table.keep_points[ks].astype(np.int64)
    units = np.where(win, 0, points // UNIT)
    left = np.where(table.keep_left[ks] == 0, d, table.keep_left[ks]).astype(np.int64)
    t0 = turn // UNIT
    values = block.keep_values(r, t0, units, left, win)
    taken = same_keep(roll_classes(rules)[0], roll_keep(block, r, t0, counts_of(faces)), units, left, win)
    t2 = t0 + units
    move = block.move(r, t2, left)
    bank, roll = block.bank(r, t2, left), block.roll(r, t2, left)
    over = block.exact & (t2 > block.cap[r])
    out = []
    for j in ranking(values, block.tie, taken):
        then = "win" if win[j] else "bust" if over[j] else "bank" if move[j] == 0 else "roll"
        plain = then in ("bank", "roll")
        kept: Any = tuple(int(x) for x in table.keep_dice[ks[j]])
        out.append(KeepChoice(faces_of(kept), int(points[j]),
                              float(values[j]), then, int(t2[j]) * UNIT, int(left[j]),
                              float(bank[j]) if plain and bank[j] > NEG else None,
                              float(roll[j]) if plain else None))
    return out
