"""The whole optimal policy of a ruleset as two tables, and the CSV / npz / parquet writers.

The bank/roll table has one row per bank-or-roll decision state that can
occur: banked scores `me`, `opp`, the mover's `seat` (under `last_round`, 0
for the player who opens each round and 1 for the other; always 0 otherwise)
or, under a counted `zero_turns` (`solver.turns.counted`), the scoreless-turn
counters `scoreless_me`, `scoreless_opp` instead of `seat`: every pair, each
0 .. count - 1, as `advise --scoreless MINE,HIS` reads it (`kind_labels`;
the files' metadata records the count as `scoreless`),
turn points `turn` (0 up to the pair's cap: the goal under `reach`, where a
bank wins; exactly the goal under `exact`), dice in hand `dice`. A state
(turn, dice) is listed when some sequence of keeps from the turn start reaches
it (`reachable`); the turn start itself (turn 0, all dice) is listed, with the
only action `roll` and no bank value. Columns: `action` (bank or roll, ties to
bank), `win` (the chance to win with best play), `bank` (chance to win by
banking now, NaN / empty / null where banking is not allowed) and `roll`.

The keep table (`keep_rows`) has one row per state of the bank/roll table
whose action is `roll` and per roll of its dice that does not bust (the
rolls in the order of `dice_tables`: sorted faces ascending): the faces
`rolled` and the best `keep` (both as decimal digits, 12335 for 1-2-3-3-5),
its `points`, the dice `left` in hand after it and what to do `then`
(`THEN`: bank, roll, win for an instant win, bust for an overshoot under
`end = exact`). Under `prediction` these are the keeps of a plain roll, as
`advise --roll` gives them. With `every` (`--all-keeps`) each roll lists every
legal keep, ranked as `advise --roll` ranks them, with `rank` (0: the best
keep's row), `win` and `expected` (`EVERY`); the same row builder
(`_fill_keeps`) writes both, and the files' metadata records `every_keep`.

Three players or more (`seat_tables`, `cinqmille export --players 3` or `4`): the same
two tables for the n-player solve, whose rows name every opponent in playing
order, `opp` (the next player), `opp2` (the one after him), `opp3`, instead of
`opp` and `seat` (the n-player solve has no last round); `win`, `bank` and
`roll` are the chances of the player to move. The rows of one (me, opp, ...) are one
kernel pass against every score of the last opponent (`n_player.seat_rows`, the
computation of the advice's rows); the decisions are the same `TurnRows`
functions. The whole three-player table is as many times the two-player one
as there are scores (86 under `standard`), so a slice is the practical export
and a keep table beyond `max_keep_rows` is refused. Files record `players`
in their metadata; `read_policy` reads either.

Every number and every decision is read from the solved result's policy table
(`cinqmille.solver.policy`: `banks`, `keep`, `move`), the one
that `advise` and the players read.

Layout: npz holds both tables in one archive (the keep columns as
``keeps/<column>``); CSV and parquet write the keep table to a second file
beside the first (`keeps_path`: ``policy.csv`` -> ``policy.keeps.csv``). Every
file documents its columns (`COLUMN_DOCS`, `KEEP_DOCS`): the npz `meta` JSON,
the parquet schema (field metadata and the ``cinqmille`` key), a JSON sidecar
``<file>.json`` beside each CSV file.

Files are written atomically (`files.atomic_write_all`), the keep table and
the sidecars too: a temporary file in the target's directory, renamed over the
target only once complete; the temporary files of a killed export are removed
by the next one. A target (the policy file or a file beside it) that exists
and is not a regular file (a device, a FIFO, a socket, a directory, or a
symbolic link to one) refuses the export before any file is written
(`check_targets`).
"""

from __future__ import annotations

import csv
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .errors import CinqmilleError
from .files import atomic_write_all, check_target
from .parsing import quoted, whole
from .position import check_score
from .rules import Rules, to_dict
from .rules.bank import UNIT
from .words import number_word

if TYPE_CHECKING:
    from .solver import SolveResult
    from .solver.rows import TurnRows

COLUMNS: tuple[str, ...] = ("me", "opp", "seat", "turn", "dice", "action", "win", "bank", "roll")
KEEP_COLUMNS: tuple[str, ...] = ("me", "opp", "seat", "turn", "dice", "rolled", "keep", "points", "left", "then")
THEN: tuple[str, ...] = ("bank", "roll", "win", "bust")  # the codes 0..3 of the keep table's `then`
KEEPS = "keeps"  # npz: prefix of the keep table's arrays; CSV / parquet: infix of its file name
FORMATS: tuple[str, ...] = ("csv", "npz", "parquet")
Columns = dict[str, np.ndarray]
#: Meaning and unit of each column, by column name (`COLUMN_DOCS`, `KEEP_DOCS`).
Docs = dict[str, dict[str, str]]
#: What a policy file records besides its rows (`meta_of`, `read_meta`): JSON.
Meta = dict[str, Any]

_FACES = "faces as decimal digits, sorted ascending (12335 = 1, 2, 3, 3, 5)"
#: Meaning and unit of every column of the bank/roll table (written into every file).
COLUMN_DOCS: dict[str, dict[str, str]] = {
    "me": {"meaning": "banked score of the player to move (0 = not opened when the ruleset has an opening)",
           "unit": "points"},
    "opp": {"meaning": "banked score of the opponent", "unit": "points"},
    "seat": {"meaning": "under last_round: 0 if the player to move opens each round, 1 if he plays second; "
                        "0 otherwise", "unit": "seat index (0 or 1)"},
    "turn": {"meaning": "turn points set aside", "unit": "points"},
    "dice": {"meaning": "dice in hand (all of them after a full hand)", "unit": "dice"},
    "action": {"meaning": "the best move (ties: bank)", "unit": "label: bank | roll"},
    "win": {"meaning": "chance to win with the best move (the larger of bank and roll)", "unit": "probability (0..1)"},
    "bank": {"meaning": "chance to win by banking now; missing (empty in CSV, NaN in npz, null in parquet) "
                        "where banking is not allowed", "unit": "probability (0..1)"},
    "roll": {"meaning": "chance to win by rolling the dice in hand (after the best announcement under prediction)",
             "unit": "probability (0..1)"},
}
#: Meaning and unit of every column of the keep table.
KEEP_DOCS: dict[str, dict[str, str]] = {
    "me": COLUMN_DOCS["me"], "opp": COLUMN_DOCS["opp"], "seat": COLUMN_DOCS["seat"],
    "turn": {"meaning": "turn points set aside before the roll", "unit": "points"},
    "dice": {"meaning": "dice rolled (the dice in hand; the bank/roll row of (me, opp, seat, turn, dice) "
                        "has action roll)", "unit": "dice"},
    "rolled": {"meaning": "the roll (every roll of that many dice that does not bust is listed)", "unit": _FACES},
    "keep": {"meaning": "the best keep of the roll (ties: an instant win, then more points, then more dice left)",
             "unit": _FACES},
    "points": {"meaning": "points of the keep (the goal for an instant win)", "unit": "points"},
    "left": {"meaning": "dice in hand after the keep (all of them after a full hand)", "unit": "dice"},
    "then": {"meaning": "what to do after the keep: bank, roll, win (an instant win) or bust (the keep "
                        "overshoots the goal under end = exact)",
             "unit": "label: bank | roll | win | bust (npz: code 0 bank, 1 roll, 2 win, 3 bust)"},
}


#: `--all-keeps`: the keep table lists every legal keep of each roll, best first, with these columns after `then`.
EVERY: tuple[str, ...] = ("rank", "win", "expected")
EVERY_DOCS: dict[str, dict[str, str]] = {
    "rank": {"meaning": "--all-keeps: the keep's place among the legal keeps of the roll, 0 for the best (the keep "
                        "of the best-keep table; ties: an instant win, then more points, then more dice left)",
             "unit": "rank (0 = best)"},
    "win": {"meaning": "--all-keeps: chance to win after this keep, playing the policy on (advise --roll's win of "
                       "the keep)", "unit": "probability (0..1)"},
    "expected": {"meaning": "--all-keeps: mean points the turn banks after this keep, playing the policy on (an "
                            "instant win counts the turn points plus the goal, an overshoot 0; advise --roll's "
                            "expected)", "unit": "points"},
}
#: An exported turn state costs about as much as this many of a solve's turn states, with its keep rows and without
#: (measured on 'standard', two players: 1.5 million rows in 20.3 s and 3.2 s, its solve of 1.65 million turn
#: states 1.5 s), so that the work is reported (`cli.progress`) as a solve of that time is.
EXPORT_COST = 12
EXPORT_COST_NO_KEEPS = 2
#: An export whose every-keep table would pass this many rows is refused (export a slice).
MAX_EVERY_ROWS = 25_000_000


def opponent_columns(players: int) -> tuple[str, ...]:
    """The opponents' score columns of a table of `players` (three or more), in playing order from the mover:
    `opp` (the next player), `opp2`, `opp3`, ..."""
    return ("opp",) + tuple(f"opp{i}" for i in range(2, players))


def _opponent_doc(i: int, players: int) -> dict[str, str]:
    """The doc of the i-th opponent's column (1: the next player)."""
    last = " (who plays last of the round)" if i == players - 1 else ""
    which = "the next player (who plays right after the player to move)" if i == 1 else \
        f"the player {i} places after the player to move{last}"
    return {"meaning": f"banked score of {which}", "unit": "points"}


def seat_columns(players: int) -> tuple[tuple[str, ...], tuple[str, ...], Docs, Docs]:
    """(bank/roll columns, keep columns, their docs) of a table of three players or more: the columns name
    every opponent in playing order instead of `opp` and `seat` (the n-player solve has no last round)."""
    opps = opponent_columns(players)
    chance = f" ({number_word(players)} players: the chance of the player to move)"
    main = ("me",) + opps + COLUMNS[3:]
    keep = ("me",) + opps + KEEP_COLUMNS[3:]
    scores = {"me": COLUMN_DOCS["me"], **{c: _opponent_doc(i + 1, players) for i, c in enumerate(opps)}}
    docs = {**scores, **{c: COLUMN_DOCS[c] for c in ("turn", "dice", "action")},
            **{c: {"meaning": COLUMN_DOCS[c]["meaning"] + chance, "unit": COLUMN_DOCS[c]["unit"]}
               for c in ("win", "bank", "roll")}}
    keep_docs = {**scores, **{c: KEEP_DOCS[c] for c in KEEP_COLUMNS[3:]}}
    return main, keep, docs, keep_docs




#: A counted `zero_turns` (`solver.turns.counted`): the scoreless-turn counters take the place of `seat`.
SCORELESS: tuple[str, str] = ("scoreless_me", "scoreless_opp")
COLUMNS_Z: tuple[str, ...] = ("me", "opp") + SCORELESS + COLUMNS[3:]
KEEP_COLUMNS_Z: tuple[str, ...] = ("me", "opp") + SCORELESS + KEEP_COLUMNS[3:]
_COUNTERS = {
    "scoreless_me": {"meaning": "zero_turns: scoreless turns in a row of the player to move, before this turn "
                                "(advise --scoreless MINE,HIS: MINE)", "unit": "turns (0 .. count - 1)"},
    "scoreless_opp": {"meaning": "zero_turns: scoreless turns in a row of the opponent (advise --scoreless "
                                 "MINE,HIS: HIS)", "unit": "turns (0 .. count - 1)"},
}
COLUMN_DOCS_Z: dict[str, dict[str, str]] = {c: COLUMN_DOCS.get(c) or _COUNTERS[c] for c in COLUMNS_Z}
KEEP_DOCS_Z: dict[str, dict[str, str]] = {c: KEEP_DOCS.get(c) or _COUNTERS[c] for c in KEEP_COLUMNS_Z}


def columns_of(players: int, scoreless: int = 0, every: bool = False) -> tuple[tuple[str, ...], tuple[str, ...],
                                                                              Docs, Docs]:
    """(bank/roll columns, keep columns, their docs) of an export for `players`; `scoreless`: the count of a
    counted `zero_turns` (its counters replace `seat`), 0 otherwise; `every`: the keep table of
    `--all-keeps` (the columns `EVERY` after `then`)."""
    if players > 2:
        out = seat_columns(players)
    elif scoreless:
        out = (COLUMNS_Z, KEEP_COLUMNS_Z, COLUMN_DOCS_Z, KEEP_DOCS_Z)
    else:
        out = (COLUMNS, KEEP_COLUMNS, COLUMN_DOCS, KEEP_DOCS)
    if not every:
        return out
    return out[0], out[1] + EVERY, out[2], {**out[3], **EVERY_DOCS}


def kind_labels(result: "SolveResult") -> list[tuple[int, dict[str, int]]]:
    """Every kind of row of a two-player table (`solver.turns`) and its label columns: the seat (under
    last_round both seats, else seat 0), or the counters (scoreless_me, scoreless_opp) of a counted zero_turns."""
    from .solver.turns import counted

    c = counted(result.rules)
    if c:
        return [(k, dict(zip(SCORELESS, divmod(k, c)))) for k in range(c * c)]
    return [(k, {"seat": k}) for k in range(result.seats)]


def kinds_of(result: "SolveResult", cols: Columns) -> np.ndarray:
    """The kind of row (`kind_labels`) of each exported row, from its label columns."""
    from .solver.turns import counted

    c = counted(result.rules)
    if c:
        return cols["scoreless_me"].astype(np.int64) * c + cols["scoreless_opp"].astype(np.int64)
    return cols["seat"].astype(np.int64)


# -- which states ------------------------------------------------------------------------
def reachable(rules: Rules, tmax: int) -> np.ndarray:
    """(tmax + 1, D) bool: turn states (t units, m dice) that some keeps from (0, D) reach (`cinqmille.dice.reach`)."""
    from .dice.reach import reachable as reach

    return reach(rules, tmax)


def pair_rows(result: "SolveResult", me: int, opp: int, reach: np.ndarray, seat: int = 0,
              labels: dict[str, int] | None = None) -> Columns:
    """The rows of one score pair (real points) and kind of row (`seat`: the seat, or the counters'
    kind), turn points ascending, then dice (from the policy table); `labels`: its label columns."""
    from .solver.locate import locate_rows

    block, r = result.policy, int(locate_rows(result.policy, me // UNIT, opp // UNIT, kinds=seat))
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

    One kernel pass (`n_player.seat_rows`, which the advice and the engine's table read too).
    """
    from .solver.n_player import seat_rows

    k = len(lasts)
    others = [np.full(k, x // UNIT) for x in first[1:]] + [np.array(lasts, dtype=np.int64) // UNIT]
    block = seat_rows(result, first[0] // UNIT, np.stack(others, axis=1))
    return block, np.arange(k)


def _seat_tables(result: "SolveResult", mes: list[int], opps: list[list[int]], keeps: bool,
                 progress: Callable[[float], None] | None = None,
                 max_keep_rows: int | None = None, every: bool = False) -> tuple[Columns, Columns | None]:
    import itertools

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
        about = _keep_rows_about(result, prefixes, opps[-1], reach, rolls, main_cols, names, every)
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
                                  keep_cols + (EVERY if every else ()), every)
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
                     every: bool) -> int:
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
            count, _ = _keep_layout(rules, rolls, cols["dice"][cols["action"] == "roll"].astype(np.int64), every)
            counted += int(count.sum())
    return int(counted * len(prefixes) / len(picks))


def seat_tables(result: "SolveResult", mes: list[int], opps: list[list[int]], keeps: bool = True,
                progress: Callable[[float], None] | None = None,
                max_keep_rows: int | None = 100_000_000, every: bool = False) -> tuple[Columns, Columns | None]:
    """Three players or more: the bank/roll table and (with `keeps`) the keep table of every tuple of scores
    (me, then each opponent's list in `opps`, in playing order); `every`: every legal keep of each roll
    (`keep_rows`)."""
    if result.players < 3 or len(opps) != result.players - 1:
        raise CinqmilleError(f"the export of {len(opps) + 1} players needs a solve of as many players")
    if every and max_keep_rows is not None:
        max_keep_rows = min(max_keep_rows, MAX_EVERY_ROWS)
    return _seat_tables(result, mes, opps, keeps, progress, max_keep_rows, every)


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
                 names: tuple[str, ...], every: bool = False) -> Columns:
    """The keep rows of the bank/roll rows `cols` of a block (the rows whose action is roll; `r` their block row)."""
    rules = block.rules
    sel = np.flatnonzero(cols["action"] == "roll")
    labels = [c for c in names[: names.index("turn")]]
    turn, dice = cols["turn"][sel].astype(np.int64), cols["dice"][sel].astype(np.int64)
    count, start = _keep_layout(rules, rolls, dice, every)
    pdt = points_dtype(rules.goal)
    out: Columns = {c: np.repeat(cols[c][sel].astype(pdt), count) for c in labels}
    out.update(turn=np.repeat(turn.astype(pdt), count), dice=np.repeat(dice.astype(np.int8), count))
    out.update(_keep_arrays(int(start[-1]), pdt, every))
    t = turn // UNIT
    a = cols["me"][sel].astype(np.int64) // UNIT
    for m in np.unique(dice):
        ii = np.flatnonzero(dice == m)
        _fill_keeps(block, r[ii, None], t[ii, None], rolls[int(m)], start[ii], out, a[ii] if every else None)
    return {c: out[c] for c in names}


def _keep_arrays(n: int, pdt: type, every: bool) -> Columns:
    """The empty columns of `n` keep rows that `_fill_keeps` fills (with `every`, the columns `EVERY` too)."""
    out: Columns = {"rolled": np.empty(n, np.int32), "keep": np.empty(n, np.int32), "points": np.empty(n, pdt),
                    "left": np.empty(n, np.int8), "then": np.empty(n, np.uint8)}
    if every:
        out.update(rank=np.empty(n, np.int8), win=np.empty(n, float), expected=np.empty(n, float))
    return out


def _keep_layout(rules: Rules, rolls: "dict[int, _Rolls]", dice: np.ndarray,
                 every: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Keep rows per exported state (one per distinct roll of its dice in hand, or with `every` one per legal
    keep of each) and where each state's rows start."""
    per = np.zeros(rules.dice + 1, dtype=np.int64)
    for m, info in rolls.items():
        per[m] = int(info.first[-1]) if every else len(info.rolled)
    count = per[dice]
    return count, np.concatenate([[0], np.cumsum(count)]).astype(np.int64)


def _fill_keeps(block: TurnRows, rr: np.ndarray, tt: np.ndarray, info: "_Rolls", start: np.ndarray,
                out: Columns, every: np.ndarray | None = None) -> None:
    """The keeps of every roll of `info` from the states (rows `rr`, turn units `tt`), written from `start`:
    the keep the solve took (`TurnRows.keep` of the roll's class), or with `every` (the states' banked
    scores, units) every legal keep ranked as `keep_choices` ranks them (the solve's first), with its chance
    to win (`TurnRows.keep_values`) and expected points (`TurnRows.expectation`)."""
    from .solver.choice import block_graph, ranking
    from .solver.rows import same_keep

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


def _rolls(rules: Rules) -> dict[int, _Rolls]:
    """`_Rolls` of every number of dice: rolls with the same number of keeps form one group, keeps in the dice
    table's order."""
    from .dice import dice_tables

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
                        faces_code(table.keep_dice), table.keep_points.astype(np.int64), rolls, int(m))
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
              chunk: int = 8192, every: bool = False, max_rows: int | None = None) -> Columns:
    """The keep table of the bank/roll rows `cols`: per row whose action is roll, the best keep of every roll that does not bust.

    Rows follow the order of `cols`, then the rolls (`_Rolls.rolled`); `then`
    holds codes into `THEN`. The keep is the solve's (`TurnRows.keep` of the
    roll's class), the move after it `TurnRows.move` (what `advise --roll` reads).
    With `every` (`--all-keeps`) each roll has a row per legal keep, ranked as
    `advise --roll` ranks them (`rank` 0 is the best keep's row), with the
    columns `EVERY` (its chance to win, its expected points); more than
    `max_rows` rows (default `MAX_EVERY_ROWS`) are refused before they are computed.
    """
    rules = result.rules
    policy = result.policy
    rolls = _rolls(rules)
    sel = np.flatnonzero(cols["action"] == "roll")
    me, opp, turn, dice = (cols[c][sel].astype(np.int64) for c in ("me", "opp", "turn", "dice"))
    kind = kinds_of(result, cols)[sel]
    count, start = _keep_layout(rules, rolls, dice, every)
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
    out.update(_keep_arrays(int(start[-1]), pdt, every))
    if not len(sel):
        return out
    from .solver.locate import locate_rows

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

# -- writers ------------------------------------------------------------------------------
def format_of(path: Path, fmt: str | None) -> str:
    """The format named, or the one of the file's suffix."""
    if fmt:
        return fmt
    suffix = path.suffix.lower().lstrip(".")
    if suffix in FORMATS:
        return suffix
    raise CinqmilleError(f"{path}: say --format csv|npz|parquet (cannot tell from the file name)")


def need_pyarrow() -> None:
    """Raise a one-line error when pyarrow (the `parquet` extra) is missing."""
    if importlib.util.find_spec("pyarrow") is None:
        raise CinqmilleError("parquet needs pyarrow: pip install 'cinqmille[parquet]' (or use --format csv|npz)")


def meta_of(result: "SolveResult") -> Meta:
    """What a policy file records besides its rows (the writers add its `table`, `columns` and `keeps`)."""
    from .solver.turns import counted

    return {"rules": to_dict(result.rules), "solver_version": result.solver_version,
            "exact": result.exact, "assumptions": list(result.assumptions), "players": result.players,
            "scoreless": counted(result.rules) if result.players == 2 else 0}


def keeps_path(path: Path) -> Path:
    """The keep table's file beside a CSV or parquet policy file: policy.csv -> policy.keeps.csv."""
    path = Path(path)
    return path.with_name(f"{path.stem}.{KEEPS}{path.suffix}")


def sidecar_path(path: Path) -> Path:
    """The JSON file documenting a CSV file: policy.csv -> policy.csv.json."""
    path = Path(path)
    return path.with_name(path.name + ".json")


def policy_files(path: Path, fmt: str, keeps: bool) -> list[Path]:
    """The files an export to `path` writes, the policy file first: its keep table and the CSV sidecars beside it."""
    path = Path(path)
    if fmt == "npz":
        return [path]
    files = [path, keeps_path(path)] if keeps else [path]
    if fmt == "csv":
        files = [f for p in files for f in (p, sidecar_path(p))]
    return files


def check_targets(path: Path, fmt: str, keeps: bool) -> None:
    """Refuse an export whose policy file or any file beside it exists and is not a regular file (`files.check_target`)."""
    for target in policy_files(path, fmt, keeps):
        check_target(target)


def write_policy(path: Path, fmt: str, cols: Columns, meta: Meta, keeps: Columns | None = None) -> list[Path]:
    """Write the bank/roll rows (and the keep table, if given) in `fmt`; returns the files written.

    npz: one archive, the keep columns as ``keeps/<column>``. CSV and parquet:
    the keep table in `keeps_path`; CSV files each get a JSON sidecar
    (`sidecar_path`). Every target is checked first (`files.atomic_write_all`:
    one that exists and is not a regular file, a device or a FIFO, refuses the
    whole export before anything is written); every file is written to a
    temporary file and all are renamed at the end, the policy file last: a
    failure leaves every target as it was.
    """
    if fmt == "parquet":
        need_pyarrow()
    path, kpath = Path(path), keeps_path(path)
    meta = {**meta, "every_keep": keeps is not None and "rank" in keeps}
    _, _, col_docs, keep_docs = _columns_of_meta(meta)
    main = {**meta, "table": "policy", "rows": len(cols["me"]), "columns": dict(col_docs), "keeps": None}
    if keeps is not None and fmt == "npz":
        main["keeps"] = {"rows": len(keeps["me"]), "prefix": f"{KEEPS}/"}
        main["columns"].update({f"{KEEPS}/{c}": doc for c, doc in keep_docs.items()})
    elif keeps is not None:
        main["keeps"] = {"rows": len(keeps["me"]), "file": kpath.name}
    side = {**meta, "table": KEEPS, "rows": len(keeps["me"]) if keeps is not None else 0,
            "columns": dict(keep_docs), "policy": path.name}
    writers: dict[Path, Callable[[Path], None]] = {}
    if fmt == "npz":
        writers[path] = lambda tmp: _write_npz(tmp, cols, main, keeps)
    else:
        main_writer, keep_writer = {"csv": (_write_csv, _write_keeps_csv),
                                    "parquet": (_write_parquet, _write_keeps_parquet)}[fmt]
        writers[path] = lambda tmp: main_writer(tmp, cols, main)
        if keeps is not None:
            writers[kpath] = lambda tmp: keep_writer(tmp, keeps, side)
        for file, record in ((path, main), (kpath, side)):  # the CSV sidecars
            writers[sidecar_path(file)] = _json_writer({"file": file.name, **record})
    jobs = [(p, writers[p]) for p in policy_files(path, fmt, keeps is not None)]
    atomic_write_all(jobs)
    return [p for p, _ in jobs]


def _json_writer(data: Meta) -> Callable[[Path], None]:
    return lambda tmp: _write_json(tmp, data)


def _write_json(path: Path, data: Meta) -> None:
    Path(path).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def _write_csv(path: Path, cols: Columns, meta: Meta) -> None:
    n = len(cols["me"])
    step = 200_000
    names = tuple(cols)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(names)
        for start in range(0, n, step):
            sl = slice(start, start + step)
            fields = []
            for c in names:
                values = cols[c][sl].tolist()
                if c == "bank":
                    fields.append([("" if b != b else f"{b:.12g}") for b in values])
                elif c in ("win", "roll"):
                    fields.append([f"{w:.12g}" for w in values])
                else:
                    fields.append(values)
            out.writerows(zip(*fields))


def _write_keeps_csv(path: Path, cols: Columns, meta: Meta) -> None:
    """The keep table as CSV: the integer columns are small and non-negative (or a label), printed by table
    look-up; the chances and points of `--all-keeps` (`EVERY`) to 12 significant digits."""
    names: dict[str, np.ndarray] = {"then": np.array(THEN, dtype=object)}
    order = tuple(cols)
    floats = [c for c in order if cols[c].dtype.kind == "f"]
    for c in order:
        if c not in names and c not in floats:
            top = int(cols[c].max()) if len(cols[c]) else 0
            names[c] = np.array([str(v) for v in range(top + 1)], dtype=object)
    n = len(cols["me"])
    step = 500_000
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(",".join(order) + "\n")
        for start in range(0, n, step):
            parts = [[f"{x:.12g}" for x in cols[c][start:start + step].tolist()] if c in floats
                     else names[c][cols[c][start:start + step]].tolist() for c in order]
            handle.write("".join(map(_csv_line, *parts)))


def _csv_line(*fields: str) -> str:
    return ",".join(fields) + "\n"


def _write_npz(path: Path, cols: Columns, meta: Meta, keeps: Columns | None = None) -> None:
    arrays = dict(cols)
    if keeps is not None:
        arrays.update({f"{KEEPS}/{c}": keeps[c] for c in keeps})
    with open(path, "wb") as handle:
        # numpy's stub: a `**dict` of arrays could also fill `allow_pickle: bool`, which no array name here is
        np.savez_compressed(handle, **arrays, meta=np.array(json.dumps(meta)))  # type: ignore[arg-type]


def _parquet_table(arrays: dict[str, Any], docs: Docs, meta: Meta) -> Any:  # pyarrow arrays -> a pyarrow.Table (untyped)
    """A table whose fields carry their meaning and unit, and the file's metadata under the key ``cinqmille``."""
    import pyarrow as pa

    fields = [pa.field(c, a.type, metadata={k: str(v) for k, v in docs[c].items()}) for c, a in arrays.items()]
    return pa.Table.from_arrays(list(arrays.values()), schema=pa.schema(fields, metadata={"cinqmille": json.dumps(meta)}))


def _write_parquet(path: Path, cols: Columns, meta: Meta) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {c: pa.array(cols[c]) for c in cols if c not in ("action", "bank")}
    arrays["action"] = pa.array(cols["action"].tolist()).dictionary_encode()
    arrays["bank"] = pa.array(cols["bank"], mask=np.isnan(cols["bank"]))
    docs = _columns_of_meta(meta)[2]
    pq.write_table(_parquet_table({c: arrays[c] for c in cols}, docs, meta), path)


def _write_keeps_parquet(path: Path, cols: Columns, meta: Meta) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {c: pa.array(cols[c]) for c in cols if c != "then"}
    arrays["then"] = pa.DictionaryArray.from_arrays(pa.array(cols["then"].astype(np.int8)), pa.array(THEN))
    docs = _columns_of_meta(meta)[3]
    pq.write_table(_parquet_table({c: arrays[c] for c in cols}, docs, meta), path, compression="zstd")


# -- reading back -------------------------------------------------------------------------
def _columns_of_meta(meta: Meta) -> tuple[tuple[str, ...], tuple[str, ...], Docs, Docs]:
    """`columns_of` the export a file's metadata describes (`players`, `scoreless`, `every_keep`)."""
    return columns_of(int(meta.get("players", 2)), int(meta.get("scoreless", 0) or 0), bool(meta.get("every_keep")))


def read_meta(path: Path) -> Meta:
    """What a policy file records besides its rows: ruleset, solver version, `columns` (name -> meaning, unit), `keeps`."""
    path = Path(path)
    fmt = format_of(path, None)
    if fmt == "npz":
        with np.load(path, allow_pickle=False) as data:
            meta: Meta = json.loads(str(data["meta"]))
        return meta
    if fmt == "parquet":
        import pyarrow.parquet as pq

        meta = json.loads(pq.read_schema(path).metadata[b"cinqmille"])
        return meta
    side = sidecar_path(path)
    return json.loads(side.read_text(encoding="utf-8")) if side.exists() else {}


def read_policy(path: Path, keeps: bool = True) -> Columns:
    """Read a policy file written by `write_policy` (by its suffix) back into columns.

    With `keeps`, the keep table's columns follow as ``keeps/<column>`` (when
    the export has one; `then` as codes into `THEN`, as npz stores it).
    """
    path = Path(path)
    fmt = format_of(path, None)
    meta = read_meta(path)
    names, keep_names, _, _ = _columns_of_meta(meta)
    if fmt == "npz":
        with np.load(path, allow_pickle=False) as data:
            out = {c: data[c] for c in names}
            if keeps and f"{KEEPS}/{keep_names[0]}" in data.files:
                out.update({f"{KEEPS}/{c}": data[f"{KEEPS}/{c}"] for c in keep_names})
        return out
    out = _read_parquet(path, names) if fmt == "parquet" else _read_csv(path)
    info = meta.get("keeps")
    if keeps and info:
        kpath = path.with_name(info["file"])
        if not kpath.exists():
            raise CinqmilleError(f"{path}: its keep table {kpath.name} is missing (export again, or read it with keeps=False)")
        table = _read_keeps_parquet(kpath, keep_names) if fmt == "parquet" else _read_keeps_csv(kpath, meta)
        out.update({f"{KEEPS}/{c}": table[c] for c in keep_names})
    return out


def _read_parquet(path: Path, names: tuple[str, ...] = COLUMNS) -> Columns:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    out = {c: table.column(c).to_numpy(zero_copy_only=False) for c in names}
    out["action"] = np.asarray(table.column("action").cast("string").to_pylist())
    out["bank"] = np.asarray(table.column("bank").to_numpy(zero_copy_only=False), dtype=float)
    return out


def _read_keeps_parquet(path: Path, names: tuple[str, ...] = KEEP_COLUMNS) -> Columns:
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    out = {c: table.column(c).to_numpy() for c in names if c != "then"}
    parts = [np.empty(0, np.uint8)]
    for chunk in table.column("then").chunks:  # each chunk (row group) has its own dictionary
        codes = np.array([THEN.index(x) for x in chunk.dictionary.to_pylist()] + [255], dtype=np.uint8)
        parts.append(codes[chunk.indices.to_numpy(zero_copy_only=False)])
    out["then"] = np.concatenate(parts)
    return out


def _read_csv(path: Path) -> Columns:
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    columns: list[tuple[str, ...]] = list(zip(*body)) if body else [() for _ in header]
    data = dict(zip(header, columns))
    dtypes: dict[str, type] = {"me": np.int32, "opp": np.int32, "opp2": np.int32, "opp3": np.int32, "seat": np.int8,
                               "scoreless_me": np.int8, "scoreless_opp": np.int8, "turn": np.int32, "dice": np.int8, "win": float, "roll": float}
    out: Columns = {}
    for c in header:
        if c == "action":
            out[c] = np.array(data[c])
        elif c == "bank":
            out[c] = np.array([float(b) if b else np.nan for b in data[c]])
        else:
            out[c] = np.array(data[c], dtype=dtypes[c])
    return out


def _read_keeps_csv(path: Path, meta: Meta) -> Columns:
    """The keep table of a CSV file, by blocks of lines: labels of `then` become their codes, numpy parses the numbers."""
    pdt = points_dtype(int(meta.get("rules", {}).get("goal", 1 << 20)))
    dtypes = {"me": pdt, "opp": pdt, "opp2": pdt, "opp3": pdt, "seat": np.int8, "scoreless_me": np.int8,
              "scoreless_opp": np.int8, "turn": pdt, "dice": np.int8, "rolled": np.int32,
              "keep": np.int32, "points": pdt, "left": np.int8, "then": np.uint8,
              "rank": np.int8, "win": np.float64, "expected": np.float64}
    with open(path, encoding="utf-8") as handle:
        header = tuple(handle.readline().rstrip("\n").split(","))
        parts: dict[str, list[np.ndarray]] = {c: [np.empty(0, dtypes[c])] for c in header if c in dtypes}
        from .solver.n_player import MAX_PLAYERS

        kinds = (KEEP_COLUMNS, KEEP_COLUMNS_Z) + tuple(seat_columns(n)[1] for n in range(3, MAX_PLAYERS + 1))
        if header not in [k + extra for k in kinds for extra in ((), EVERY)]:
            raise CinqmilleError(f"{path}: not a keep table (columns {quoted(','.join(header))})")
        kind = np.float64 if header[-len(EVERY):] == EVERY else np.int64  # --all-keeps: chances among the numbers
        while True:
            lines = handle.readlines(1 << 26)
            if not lines:
                break
            text = "".join(lines)
            for code, label in enumerate(THEN):
                text = text.replace(label, str(code))
            numbers = np.fromstring(text.replace("\n", ","), dtype=kind, sep=",")
            if len(numbers) % len(header):
                raise CinqmilleError(f"{path}: a line does not have {len(header)} numbers")
            grid = numbers.reshape(-1, len(header))
            for i, c in enumerate(header):
                parts[c].append(grid[:, i].astype(dtypes[c]))
    return {c: np.concatenate(parts[c]) for c in header}
