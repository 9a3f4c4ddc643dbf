"""Which states an export holds: the bank/roll rows of every score pair or tuple (`policy_rows`, `seat_tables`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from ...table.policy import policy_of
from ...errors import CinqmilleError
from ...parsing import quoted, whole
from ...table.position import check_score
from ...rules import Rules
from ...rules.bank import UNIT
from .columns import (CHANCE, COLUMNS, EVERY, MAX_EVERY_ROWS, Columns, kind_labels, opponent_columns,
                      seat_columns)
from .keeps import _fill_keeps, _keep_arrays, _keep_layout, _Rolls, _rolls, points_dtype
from ...dice.reach import reachable as reach
from ...table.locate import locate_rows
from ...table.policy import seat_rows
import itertools

if TYPE_CHECKING:
    from ...solver import SolveResult
    from ...table.rows import TurnRows

# -- which states ------------------------------------------------------------------------
def reachable(rules: Rules, tmax: int) -> np.ndarray:
    """(tmax + 1, D) bool: turn states (t units, m dice) that some keeps from (0, D) reach (`cinqmille.dice.reach`)."""
    return reach(rules, tmax)


def pair_rows(result: "SolveResult", me: int, opp: int, reach: np.ndarray, seat: int = 0,
              labels: dict[str, int] | None = None) -> Columns:
    """The rows of one score pair (real points) and kind of row (`seat`: the seat, or the counters'
    kind), turn points ascending, then dice (from the policy table); `labels`: its label columns."""
    block, r = policy_of(result), int(locate_rows(policy_of(result), me // UNIT, opp // UNIT, kinds=seat))
    labels = {"seat": seat} if labels is None else labels
    names = ("me", "opp", *labels, *COLUMNS[3:])
    return _block_rows(block, r, reach, {"me": me, "opp": opp, **labels}, names)


def parse_scores(text: str | None, rules: Rules, label: str) -> list[int]:
    """Scores (points) named by `--me`/`--opp`: all when None, one score, or an inclusive range LO:HI."""
    valid = [0] if rules.opening else []
    valid += list(range(max(rules.opening, UNIT), rules.goal, UNIT))
    if text is None or text.strip() in ("", "all", ":"):
        return valid
    lo_text, sep, hi_text = text.partition(":")
    try:
        lo = whole(lo_text, label, signed=True) if lo_text.strip() else 0
        hi = whole(hi_text, label, signed=True) if hi_text.strip() else rules.goal - UNIT
    except CinqmilleError:
        raise CinqmilleError(f"{label}: expected POINTS or a range LO:HI in points, got {quoted(text)}") from None
    if not sep:
        return [check_score(rules, lo, label)]
    for value in (lo, hi):
        if value < 0 or value % UNIT:
            raise CinqmilleError(f"{label}: range ends must be non-negative multiples of 50, got {quoted(text)}")
    if lo > hi:
        raise CinqmilleError(f"{label}: empty range {quoted(text)} (LO must not exceed HI)")
    chosen = [s for s in valid if lo <= s <= hi]
    if not chosen:
        raise CinqmilleError(f"{label}: no score that can occur lies in {quoted(text)} under '{rules.name}'")
    return chosen


def policy_rows(result: "SolveResult", mes: list[int], opps: list[int],
                progress: Callable[[float], None] | None = None) -> Columns:
    """Rows of every pair (me, opp) of the two lists, concatenated."""
    rules = result.rules
    reach = reachable(rules, rules.goal // UNIT)
    chunks = []
    kinds = kind_labels(result)
    total = len(mes) * len(opps) * len(kinds)
    done = 0
    for kind, labels in kinds:
        for me in mes:
            for opp in opps:
                chunks.append(pair_rows(result, me, opp, reach, kind, labels))
                done += 1
                if progress is not None and (done % 64 == 0 or done == total):
                    progress(done / total)
    return {c: np.concatenate([ch[c] for ch in chunks]) for c in chunks[0]}


def _seat_block(result: "SolveResult", first: tuple[int, ...], lasts: list[int]) -> tuple[TurnRows, np.ndarray]:
    """(block, rows) of the n-player policy: the rows of the mover and the first opponents `first` (points,
    the mover first) against each score in `lasts` of the last opponent.

    One kernel pass (`table.policy.seat_rows`, which the advice and the engine's table read too).
    """
    k = len(lasts)
    others = [np.full(k, x // UNIT) for x in first[1:]] + [np.array(lasts, dtype=np.int64) // UNIT]
    block = seat_rows(result, first[0] // UNIT, np.stack(others, axis=1))
    return block, np.arange(k)


def _seat_tables(result: "SolveResult", mes: list[int], opps: list[list[int]], keeps: bool,
                 progress: Callable[[float], None] | None = None,
                 max_keep_rows: int | None = None, every: bool = False,
                 chances: bool = False) -> tuple[Columns, Columns | None]:
    rules = result.rules
    main_cols, keep_cols, _, _ = seat_columns(result.players)
    names = opponent_columns(result.players)
    reach = reachable(rules, rules.goal // UNIT)
    rolls = _rolls(rules) if keeps else None
    chunks, kchunks = [], []
    prefixes = list(itertools.product(mes, *opps[:-1]))
    total, done, kept_rows = len(prefixes), 0, 0
    flags = ", ".join(f"--{c}" for c in ("me",) + names)
    if rolls is not None and max_keep_rows is not None:  # a sample of the tuples first: refused before the work
        about = _keep_rows_about(result, prefixes, opps[-1], reach, rolls, main_cols, names, every, chances)
        if about > SAMPLE_MARGIN * max_keep_rows:
            raise CinqmilleError(f"the keep table of this export would have about {about:,} rows (from a sample of "
                                 f"its score tuples), more than {max_keep_rows:,}; export a slice ({flags}) or "
                                 f"--no-keeps")
    for first in prefixes:
        block, rows = _seat_block(result, first, opps[-1])
        for r, last in zip(rows, opps[-1]):
            labels = dict(zip(("me",) + names, first + (last,)))
            cols = _block_rows(block, int(r), reach, labels, main_cols)
            chunks.append(cols)
            if rolls is not None:
                kc = _block_keeps(block, np.full(int((cols["action"] == "roll").sum()), int(r)), cols, rolls,
                                  keep_cols + (EVERY if every else ()) + (CHANCE if chances else ()), every, chances)
                kept_rows += len(kc["me"])
                if max_keep_rows is not None and kept_rows > max_keep_rows:
                    raise CinqmilleError(f"the keep table of this export passes {max_keep_rows:,} rows; export "
                                         f"a slice ({flags}) or --no-keeps")
                kchunks.append(kc)
        done += 1
        if progress is not None and (done % 8 == 0 or done == total):
            progress(done / total)
    main = {c: np.concatenate([ch[c] for ch in chunks]) for c in main_cols}
    kept = {c: np.concatenate([ch[c] for ch in kchunks]) for c in kchunks[0]} if rolls is not None else None
    return main, kept


#: The keep rows estimated from a sample refuse an export when they pass the limit by this factor (the count
#: during the work refuses the others).
SAMPLE_MARGIN = 1.1
#: The score tuples (prefixes of all but the last opponent) whose keep rows are counted for the estimate.
SAMPLE_PREFIXES = 6


def _keep_rows_about(result: "SolveResult", prefixes: list[tuple[int, ...]], lasts: list[int], reach: np.ndarray,
                     rolls: "dict[int, _Rolls]", main_cols: tuple[str, ...], names: tuple[str, ...],
                     every: bool, chances: bool = False) -> int:
    """The keep rows of an n-player export estimated from `SAMPLE_PREFIXES` of its prefixes, evenly spaced (one
    kernel pass each, no keep computed)."""
    rules = result.rules
    picks = sorted({round(i * (len(prefixes) - 1) / max(1, SAMPLE_PREFIXES - 1)) for i in range(SAMPLE_PREFIXES)})
    counted = 0
    for i in picks:
        first = prefixes[i]
        block, rows = _seat_block(result, first, lasts)
        for r, last in zip(rows, lasts):
            cols = _block_rows(block, int(r), reach, dict(zip(("me",) + names, first + (last,))), main_cols)
            count, _ = _keep_layout(rules, rolls, cols["dice"][cols["action"] == "roll"].astype(np.int64), every,
                                    chances)
            counted += int(count.sum())
    return int(counted * len(prefixes) / len(picks))


def seat_tables(result: "SolveResult", mes: list[int], opps: list[list[int]], keeps: bool = True,
                progress: Callable[[float], None] | None = None,
                max_keep_rows: int | None = 100_000_000, every: bool = False,
                chances: bool = False) -> tuple[Columns, Columns | None]:
    """Three players or more: the bank/roll table and (with `keeps`) the keep table of every tuple of scores
    (me, then each opponent's list in `opps`, in playing order); `every`: every legal keep of each roll;
    `chances`: each roll's chance, and a row for the rolls that bust (`keep_rows`)."""
    if result.players < 3 or len(opps) != result.players - 1:
        raise CinqmilleError(f"the export of {len(opps) + 1} players needs a solve of as many players")
    if every and max_keep_rows is not None:
        max_keep_rows = min(max_keep_rows, MAX_EVERY_ROWS)
    return _seat_tables(result, mes, opps, keeps, progress, max_keep_rows, every, chances)


def _block_rows(block: TurnRows, r: int, reach: np.ndarray, labels: dict[str, int],
                names: tuple[str, ...]) -> Columns:
    """The bank/roll rows of row `r` of a `TurnRows` block (`labels`: the score columns), as `pair_rows` makes them."""
    cap = min(int(block.cap[r]), reach.shape[0] - 1)
    ts, ms = np.nonzero(reach[: cap + 1])
    dice = ms + 1
    bank = block.bank(r, ts, dice)
    n = len(ts)
    out: Columns = {c: np.full(n, v, dtype=np.int32 if c == "me" or c.startswith("opp") else np.int8)
                    for c, v in labels.items()}
    out.update({"turn": (ts * UNIT).astype(np.int32), "dice": dice.astype(np.int8),
                "action": np.where(block.banks(r, ts, dice), "bank", "roll"),
                "win": block.value(r, ts, dice), "bank": np.where(bank > -np.inf, bank, np.nan),
                "roll": block.roll(r, ts, dice).astype(float)})
    return {c: out[c] for c in names}


def _block_keeps(block: TurnRows, r: np.ndarray, cols: Columns, rolls: dict[int, _Rolls],
                 names: tuple[str, ...], every: bool = False, chances: bool = False) -> Columns:
    """The keep rows of the bank/roll rows `cols` of a block (the rows whose action is roll; `r` their block row)."""
    rules = block.rules
    sel = np.flatnonzero(cols["action"] == "roll")
    labels = [c for c in names[: names.index("turn")]]
    turn, dice = cols["turn"][sel].astype(np.int64), cols["dice"][sel].astype(np.int64)
    count, start = _keep_layout(rules, rolls, dice, every, chances)
    pdt = points_dtype(rules.goal)
    out: Columns = {c: np.repeat(cols[c][sel].astype(pdt), count) for c in labels}
    out.update(turn=np.repeat(turn.astype(pdt), count), dice=np.repeat(dice.astype(np.int8), count))
    out.update(_keep_arrays(int(start[-1]), pdt, every, chances))
    t = turn // UNIT
    a = cols["me"][sel].astype(np.int64) // UNIT
    for m in np.unique(dice):
        ii = np.flatnonzero(dice == m)
        _fill_keeps(block, r[ii, None], t[ii, None], rolls[int(m)], start[ii], out, a[ii] if every else None)
    return {c: out[c] for c in names}
