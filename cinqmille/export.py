"""The whole optimal policy of a ruleset as rows, and the CSV / npz / parquet writers.

One row per bank-or-roll decision state that can occur: banked scores `me`,
`opp`, the mover's `seat` (under `last_round`, 0 for the player who opens each
round and 1 for the other; always 0 otherwise), turn points `turn` (0 up to the pair's cap: the goal under `reach`, where
a bank wins; exactly the goal under `exact`), dice in hand `dice`. A state
(turn, dice) is listed when some sequence of keeps from the turn start reaches
it (`reachable`); the turn start itself (turn 0, all dice) is listed, with the
only action `roll` and no bank value. Columns: `action` (bank or roll, ties to
bank), `win` (the chance to win with best play), `bank` (chance to win by
banking now, NaN / empty / null where banking is not allowed) and `roll`. Every
number and every action is read from the solved result's policy table
(`cinqmille.solver.policy`), the one that `advise` and the players read.

Files are written atomically (`files.atomic_write`): a temporary file in the
target's directory, renamed over the target only once complete; the temporary
files of a killed export are removed by the next one.
"""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from .errors import CinqmilleError
from .files import atomic_write
from .parsing import quoted, whole
from .position import check_score
from .rules import Rules, to_dict

if TYPE_CHECKING:
    from .solver import SolveResult

UNIT = 50
COLUMNS: tuple[str, ...] = ("me", "opp", "seat", "turn", "dice", "action", "win", "bank", "roll")
FORMATS: tuple[str, ...] = ("csv", "npz", "parquet")
Columns = dict[str, np.ndarray]


# -- which states ------------------------------------------------------------------------
def reachable(rules: Rules, tmax: int) -> np.ndarray:
    """(tmax + 1, D) bool: turn states (t units, m dice) that some keeps from (0, D) reach."""
    from .dice import dice_tables

    d = rules.dice
    moves: dict[int, set[tuple[int, int]]] = {}
    for m, table in dice_tables(rules).items():
        moves[m] = {(int(p) // UNIT, int(left) or d)
                    for p, left, win in zip(table.keep_points, table.keep_left, table.keep_win) if not win}
    reach = np.zeros((tmax + 1, d), dtype=bool)
    reach[0, d - 1] = True
    for t in range(tmax + 1):
        for col in np.nonzero(reach[t])[0]:
            for units, left in moves[int(col) + 1]:
                if t + units <= tmax:
                    reach[t + units, left - 1] = True
    return reach


def pair_rows(result: "SolveResult", me: int, opp: int, reach: np.ndarray, seat: int = 0) -> Columns:
    """The rows of one score pair (real points) and seat, turn points ascending, then dice (from the policy table)."""
    block, r = result.policy.spot(me, opp, seat)
    cap = min(int(block.cap[r]), reach.shape[0] - 1)
    ts, ms = np.nonzero(reach[: cap + 1])
    dice = ms + 1
    bank = block.bank(r, ts, dice)
    n = len(ts)
    return {
        "me": np.full(n, me, dtype=np.int32), "opp": np.full(n, opp, dtype=np.int32),
        "seat": np.full(n, seat, dtype=np.int8), "turn": (ts * UNIT).astype(np.int32), "dice": dice.astype(np.int8),
        "action": np.where(block.banks(r, ts, dice), "bank", "roll"),
        "win": block.value(r, ts, dice), "bank": np.where(bank > -np.inf, bank, np.nan),
        "roll": block.roll(r, ts, dice).astype(float),
    }


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
    seats = range(result.seats)
    total = len(mes) * len(opps) * len(seats)
    done = 0
    for seat in seats:
        for me in mes:
            for opp in opps:
                chunks.append(pair_rows(result, me, opp, reach, seat))
                done += 1
                if progress is not None and (done % 64 == 0 or done == total):
                    progress(done / total)
    return {c: np.concatenate([ch[c] for ch in chunks]) for c in COLUMNS}


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


def meta_of(result: "SolveResult") -> dict:
    """What a policy file records besides its rows."""
    return {"rules": to_dict(result.rules), "solver_version": result.solver_version,
            "exact": result.exact, "assumptions": list(result.assumptions), "columns": list(COLUMNS)}


def write_policy(path: Path, fmt: str, cols: Columns, meta: dict) -> int:
    """Write the rows to `path` atomically in `fmt`; returns the file size in bytes."""
    writer = {"csv": _write_csv, "npz": _write_npz, "parquet": _write_parquet}[fmt]
    if fmt == "parquet":
        need_pyarrow()
    path = Path(path)
    atomic_write(path, lambda tmp: writer(tmp, cols, meta))
    return path.stat().st_size


def _write_csv(path: Path, cols: Columns, meta: dict) -> None:
    n = len(cols["me"])
    step = 200_000
    with open(path, "w", newline="", encoding="utf-8") as handle:
        out = csv.writer(handle, lineterminator="\n")
        out.writerow(COLUMNS)
        for start in range(0, n, step):
            sl = slice(start, start + step)
            bank = [("" if b != b else f"{b:.12g}") for b in cols["bank"][sl].tolist()]
            rows = zip(cols["me"][sl].tolist(), cols["opp"][sl].tolist(), cols["seat"][sl].tolist(),
                       cols["turn"][sl].tolist(),
                       cols["dice"][sl].tolist(), cols["action"][sl].tolist(),
                       (f"{w:.12g}" for w in cols["win"][sl].tolist()), bank,
                       (f"{r:.12g}" for r in cols["roll"][sl].tolist()))
            out.writerows(rows)


def _write_npz(path: Path, cols: Columns, meta: dict) -> None:
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **cols, meta=np.array(json.dumps(meta)))  # type: ignore[arg-type]


def _write_parquet(path: Path, cols: Columns, meta: dict) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays = {c: pa.array(cols[c]) for c in COLUMNS if c not in ("action", "bank")}
    arrays["action"] = pa.array(cols["action"].tolist()).dictionary_encode()
    arrays["bank"] = pa.array(cols["bank"], mask=np.isnan(cols["bank"]))
    table = pa.table({c: arrays[c] for c in COLUMNS}).replace_schema_metadata({"cinqmille": json.dumps(meta)})
    pq.write_table(table, path)


# -- reading back -------------------------------------------------------------------------
def read_policy(path: Path) -> Columns:
    """Read a policy file written by `write_policy` (by its suffix) back into columns."""
    path = Path(path)
    fmt = format_of(path, None)
    if fmt == "npz":
        with np.load(path, allow_pickle=False) as data:
            return {c: data[c] for c in COLUMNS}
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        out = {c: table.column(c).to_numpy(zero_copy_only=False) for c in COLUMNS}
        out["action"] = np.asarray(table.column("action").cast("string").to_pylist())
        out["bank"] = np.asarray(table.column("bank").to_numpy(zero_copy_only=False), dtype=float)
        return out
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header, body = rows[0], rows[1:]
    columns: list[tuple[str, ...]] = list(zip(*body)) if body else [() for _ in header]
    data = dict(zip(header, columns))
    return {
        "me": np.array(data["me"], dtype=np.int32), "opp": np.array(data["opp"], dtype=np.int32),
        "seat": np.array(data["seat"], dtype=np.int8), "turn": np.array(data["turn"], dtype=np.int32), "dice": np.array(data["dice"], dtype=np.int8),
        "action": np.array(data["action"]), "win": np.array(data["win"], dtype=float),
        "bank": np.array([float(b) if b else np.nan for b in data["bank"]]),
        "roll": np.array(data["roll"], dtype=float),
    }
