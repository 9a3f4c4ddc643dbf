"""The keep table of an exported policy: per state whose move is roll, the solve's keep of every roll (or every
legal keep, ranked, with `--all-keeps`); with `--roll-chances`, each roll's chance and one row more for the rolls
that score nothing (`CHANCE`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

import numpy as np

from ...table.policy import policy_of
from ...errors import CinqmilleError
from ...rules import Rules
from ...rules.bank import UNIT
from .columns import BUST_ROLL, EVERY, MAX_EVERY_ROWS, SCORELESS, Columns, kinds_of
from ...solver.choice import block_graph, ranking
from ...table.rows import same_keep
from ...dice import dice_tables
from ...table.locate import locate_rows

if TYPE_CHECKING:
    from ...solver import SolveResult
    from ...table.rows import TurnRows

def _keep_arrays(n: int, pdt: type, every: bool, chances: bool = False) -> Columns:
    """The empty columns of `n` keep rows that `_fill_keeps` fills (with `every`, the columns `EVERY` too; with
    `chances`, the column `chance`)."""
    out: Columns = {"rolled": np.empty(n, np.int32), "keep": np.empty(n, np.int32), "points": np.empty(n, pdt),
                    "left": np.empty(n, np.int8), "then": np.empty(n, np.uint8)}
    if every:
        out.update(rank=np.empty(n, np.int8), win=np.empty(n, float), expected=np.empty(n, float))
    if chances:
        out["chance"] = np.empty(n, float)
    return out


def _keep_layout(rules: Rules, rolls: "dict[int, _Rolls]", dice: np.ndarray, every: bool = False,
                 chances: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Keep rows per exported state (one per distinct roll of its dice in hand, or with `every` one per legal
    keep of each; with `chances`, one more for the rolls that bust, when some do) and where each state's rows
    start."""
    per = np.zeros(rules.dice + 1, dtype=np.int64)
    for m, info in rolls.items():
        per[m] = (int(info.first[-1]) if every else len(info.rolled)) + (chances and info.bust > 0)
    count = per[dice]
    return count, np.concatenate([[0], np.cumsum(count)]).astype(np.int64)


def _fill_keeps(block: TurnRows, rr: np.ndarray, tt: np.ndarray, info: "_Rolls", start: np.ndarray,
                out: Columns, every: np.ndarray | None = None) -> None:
    """The keeps of every roll of `info` from the states (rows `rr`, turn units `tt`), written from `start`:
    the keep the solve took (`TurnRows.keep` of the roll's class), or with `every` (the states' banked
    scores, units) every legal keep ranked as `keep_choices` ranks them (the solve's first), with its chance
    to win (`TurnRows.keep_values`) and expected points (`TurnRows.expectation`). Where `out` has the column
    `chance`, each row gets its roll's chance, and the row after a state's rolls is its bust (`_bust_rows`)."""
    graph = block_graph(block)
    for pos, ids in info.groups:
        values = block.keep_values(rr, tt, info.units[ids], info.left[ids], info.win[ids])
        taken = block.keep(rr, tt, graph.roll_class[info.dice - 1][info.roll[pos]])
        chosen = same_keep(graph, taken, info.units[ids], info.left[ids], info.win[ids])  # (S, R_J)
        order = ranking(values, block.tie, chosen) if every is not None else chosen[..., None]  # (S, R_J, J or 1)
        choice = np.take_along_axis(np.broadcast_to(ids, values.shape), order, axis=-1)
        rank = np.broadcast_to(np.arange(order.shape[-1]), choice.shape)
        t2 = tt[..., None] + info.units[choice]
        left = info.left[choice]
        rows = np.broadcast_to(rr[..., None], choice.shape)
        move = block.move(rows, t2, left)
        over = block.exact & (t2 > block.cap[rows])
        win = info.win[choice]
        then = np.where(win, 2, np.where(over, 3, np.where(move == 0, 0, 1)))
        first = info.first[pos] if every is not None else pos
        dest = (start[:, None, None] + first[None, :, None] + rank).ravel()
        out["rolled"][dest] = np.broadcast_to(info.rolled[pos][None, :, None], choice.shape).ravel()
        out["keep"][dest] = info.code[choice].ravel()
        out["points"][dest] = info.points[choice].ravel()
        out["left"][dest] = left.ravel()
        out["then"][dest] = then.ravel()
        if every is not None:
            out["rank"][dest] = rank.ravel()
            out["win"][dest] = np.take_along_axis(values, order, axis=-1).ravel()
            out["expected"][dest] = _expected(block, rows, every, tt, t2, left, then).ravel()
        if "chance" in out:
            out["chance"][dest] = np.broadcast_to(info.chance[pos][None, :, None], choice.shape).ravel()
    if "chance" in out and info.bust > 0:
        _bust_rows(block, rr[:, 0], info, start + (int(info.first[-1]) if every is not None else len(info.rolled)),
                   out)


def _bust_rows(block: TurnRows, rows: np.ndarray, info: "_Rolls", dest: np.ndarray, out: Columns) -> None:
    """The row of the rolls that score nothing of each state (rows `rows` of `block`), at `dest`: `rolled`
    `BUST_ROLL`, no keep, `then` bust, their chance together; with `--all-keeps` rank 0, the chance to win of
    the bust (the next player's turn: `TurnRows.bust`) and no points."""
    for name, value in (("rolled", BUST_ROLL), ("keep", 0), ("points", 0), ("left", 0), ("then", 3)):
        out[name][dest] = value
    out["chance"][dest] = info.bust
    if "rank" in out:
        out["rank"][dest] = 0
        out["win"][dest] = block.bust[rows]
        out["expected"][dest] = 0.0


def _expected(block: TurnRows, rows: np.ndarray, a: np.ndarray, tt: np.ndarray,
              t2: np.ndarray, left: np.ndarray, then: np.ndarray) -> np.ndarray:
    """Mean points the turn banks after each keep (as `advise --roll` says): the policy's expectation of the
    state after it (`TurnRows.expectation` of the row), the turn points plus the goal for an instant win, 0
    for an overshoot. `rows`, `t2`, `left`, `then`: (S, R, J); `a`, `tt`: the states' (S,) and (S, 1)."""
    out = np.zeros(rows.shape)
    goal = block.rules.goal
    for s, r in enumerate(rows[:, 0, 0]):
        expect = block.expectation(int(r), int(a[s]))
        out[s] = np.where(then[s] == 2, float(tt[s, 0]) * UNIT + goal,
                          np.where(then[s] == 3, 0.0, expect.state(t2[s], left[s])))
    return out


# -- the keep table ------------------------------------------------------------------------
def faces_code(counts: np.ndarray) -> np.ndarray:
    """Sorted faces of count vectors (..., 6) as decimal digits: (1, 0, 2, 0, 1, 0) -> 1335."""
    counts = np.asarray(counts, dtype=np.int64)
    code = np.zeros(counts.shape[:-1], dtype=np.int64)
    for f in range(6):
        p = 10 ** counts[..., f]
        code = code * p + (f + 1) * (p - 1) // 9
    return code


def points_dtype(goal: int) -> type:
    """The integer type of the keep table's point columns (me, opp, turn, points): int16 when the goal fits."""
    return np.int16 if goal <= np.iinfo(np.int16).max else np.int32


@dataclass(frozen=True, eq=False)
class _Rolls:
    """The rolls of m dice that do not bust and their legal keeps (ids into `DiceTable`), as `keep` reads them."""

    rolled: np.ndarray  # (R,) the rolls' faces as digits, in the dice table's order
    first: np.ndarray  # (R + 1,) where each roll's keeps start among the keeps of all R rolls (their total last)
    groups: tuple[tuple[np.ndarray, np.ndarray], ...]  # (positions among the R rolls, (R_J, J) keep ids)
    units: np.ndarray  # per keep id: points in units of 50 (0 for an instant win, as `keep_choices`)
    left: np.ndarray  # per keep id: dice in hand after it (all D after a full hand)
    win: np.ndarray  # per keep id: an instant win
    code: np.ndarray  # per keep id: the kept faces as digits
    points: np.ndarray  # per keep id: points (the goal for an instant win)
    roll: np.ndarray  # (R,) the rolls' ids in the dice table
    dice: int  # the dice rolled
    chance: np.ndarray  # (R,) the chance of each roll: its ordered rolls among the 6 ** dice
    bust: float  # the chance that the roll scores nothing


def _rolls(rules: Rules) -> dict[int, _Rolls]:
    """`_Rolls` of every number of dice: rolls with the same number of keeps form one group, keeps in the dice
    table's order."""
    out = {}
    for m, table in dice_tables(rules).items():
        count = np.diff(table.keep_start)
        rolls = np.flatnonzero(count > 0)
        win = table.keep_win.astype(bool)
        units = np.where(win, 0, table.keep_points // UNIT).astype(np.int64)
        left = np.where(table.keep_left == 0, rules.dice, table.keep_left).astype(np.int64)
        groups = []
        for j in np.unique(count[rolls]):
            pos = np.flatnonzero(count[rolls] == j)
            ids = table.keep_start[rolls[pos]][:, None] + np.arange(j)
            groups.append((pos, ids))
        first = np.concatenate([[0], np.cumsum(count[rolls])]).astype(np.int64)
        out[m] = _Rolls(faces_code(table.counts[rolls]), first, tuple(groups), units, left, win,
                        faces_code(table.keep_dice), table.keep_points.astype(np.int64), rolls, int(m),
                        table.prob[rolls], table.bust_ways / 6 ** int(m))
    return out


def every_rows_at_least(rules: Rules, tuples: int) -> int:
    """A lower bound of the rows of an `--all-keeps` table over `tuples` score tuples, known before any
    solve: the turn's first state (no points, every die in hand) is always rolled, and each of its rolls has
    a row per legal keep."""
    return tuples * int(_rolls(rules)[rules.dice].first[-1])


def check_every_rows(rules: Rules, tuples: int, flags: str, max_rows: int = MAX_EVERY_ROWS) -> None:
    """Refuse (one line), before the work, an `--all-keeps` export that `every_rows_at_least` puts past
    `max_rows`."""
    least = every_rows_at_least(rules, tuples)
    if least > max_rows:
        raise CinqmilleError(f"--all-keeps: this export has at least {least:,} keep rows (every keep of the first "
                             f"roll of its {tuples:,} score tuples), more than {max_rows:,}; export a slice ({flags})")


def keep_rows(result: "SolveResult", cols: Columns, progress: Callable[[float], None] | None = None,
              chunk: int = 8192, every: bool = False, max_rows: int | None = None, chances: bool = False) -> Columns:
    """The keep table of the bank/roll rows `cols`: per row whose action is roll, the best keep of every roll that does not bust.

    Rows follow the order of `cols`, then the rolls (`_Rolls.rolled`); `then`
    holds codes into `THEN`. The keep is the solve's (`TurnRows.keep` of the
    roll's class), the move after it `TurnRows.move` (what `advise --roll` reads).
    With `every` (`--all-keeps`) each roll has a row per legal keep, ranked as
    `advise --roll` ranks them (`rank` 0 is the best keep's row), with the
    columns `EVERY` (its chance to win, its expected points); more than
    `max_rows` rows (default `MAX_EVERY_ROWS`) are refused before they are computed.
    With `chances` (`--roll-chances`) the rows carry their roll's chance (`chance`:
    the probability of rolling it with the dice in hand), and each state has one
    more row after its rolls, for the rolls that score nothing (`rolled` `BUST_ROLL`,
    `then` bust), so that a state's chances sum to 1.
    """
    rules = result.rules
    policy = policy_of(result)
    rolls = _rolls(rules)
    sel = np.flatnonzero(cols["action"] == "roll")
    me, opp, turn, dice = (cols[c][sel].astype(np.int64) for c in ("me", "opp", "turn", "dice"))
    kind = kinds_of(result, cols)[sel]
    count, start = _keep_layout(rules, rolls, dice, every, chances)
    max_rows = MAX_EVERY_ROWS if max_rows is None else max_rows
    if every and start[-1] > max_rows:
        raise CinqmilleError(f"--all-keeps: this export has {int(start[-1]):,} keep rows, more than "
                             f"{max_rows:,}; export a slice (--me, --opp)")
    pdt = points_dtype(rules.goal)
    labels = [c for c in cols if c in ("seat",) + SCORELESS]
    out: Columns = {
        "me": np.repeat(me.astype(pdt), count), "opp": np.repeat(opp.astype(pdt), count),
        **{c: np.repeat(cols[c][sel].astype(np.int8), count) for c in labels},
        "turn": np.repeat(turn.astype(pdt), count), "dice": np.repeat(dice.astype(np.int8), count),
    }
    out.update(_keep_arrays(int(start[-1]), pdt, every, chances))
    if not len(sel):
        return out
    r = locate_rows(policy, me // UNIT, opp // UNIT, kinds=kind)
    t = turn // UNIT
    for lo in range(0, len(sel), chunk):
        part = np.arange(lo, min(lo + chunk, len(sel)))
        for m in np.unique(dice[part]):
            ii = part[dice[part] == m]
            _fill_keeps(policy, r[ii, None], t[ii, None], rolls[int(m)], start[ii], out,
                        me[ii] // UNIT if every else None)
        if progress is not None:
            progress(part[-1] / len(sel))
    if progress is not None:
        progress(1.0)
    return out
