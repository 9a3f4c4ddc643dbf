"""The files of an exported policy: CSV, npz and parquet writers (atomic) and their reading back."""

from __future__ import annotations

import csv
import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from ...errors import CinqmilleError
from ...files import atomic_write_all, check_target
from ...parsing import quoted, whole
from ...rules import to_dict
from .columns import (
    CHANCE,
    COLUMNS,
    EVERY,
    FORMATS,
    KEEP_COLUMNS,
    KEEP_COLUMNS_Z,
    KEEPS,
    THEN,
    Columns,
    Docs,
    Meta,
    columns_of,
    seat_columns,
)
from .keeps import points_dtype
from ...solver.turns import counted
from ...solver.n_player import MAX_PLAYERS

if TYPE_CHECKING:
    from ...solver import SolveResult

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
    meta = {**meta, "every_keep": keeps is not None and "rank" in keeps,
            "roll_chances": keeps is not None and "chance" in keeps}
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
    import pyarrow as pa  # lazy: optional dependency (extra 'parquet')

    fields = [pa.field(c, a.type, metadata={k: str(v) for k, v in docs[c].items()}) for c, a in arrays.items()]
    return pa.Table.from_arrays(list(arrays.values()), schema=pa.schema(fields, metadata={"cinqmille": json.dumps(meta)}))


def _write_parquet(path: Path, cols: Columns, meta: Meta) -> None:
    import pyarrow as pa  # lazy: optional dependency (extra 'parquet')
    import pyarrow.parquet as pq  # lazy: optional dependency (extra 'parquet')

    arrays = {c: pa.array(cols[c]) for c in cols if c not in ("action", "bank")}
    arrays["action"] = pa.array(cols["action"].tolist()).dictionary_encode()
    arrays["bank"] = pa.array(cols["bank"], mask=np.isnan(cols["bank"]))
    docs = _columns_of_meta(meta)[2]
    pq.write_table(_parquet_table({c: arrays[c] for c in cols}, docs, meta), path)


def _write_keeps_parquet(path: Path, cols: Columns, meta: Meta) -> None:
    import pyarrow as pa  # lazy: optional dependency (extra 'parquet')
    import pyarrow.parquet as pq  # lazy: optional dependency (extra 'parquet')

    arrays = {c: pa.array(cols[c]) for c in cols if c != "then"}
    arrays["then"] = pa.DictionaryArray.from_arrays(pa.array(cols["then"].astype(np.int8)), pa.array(THEN))
    docs = _columns_of_meta(meta)[3]
    pq.write_table(_parquet_table({c: arrays[c] for c in cols}, docs, meta), path, compression="zstd")


# -- reading back -------------------------------------------------------------------------
def _columns_of_meta(meta: Meta) -> tuple[tuple[str, ...], tuple[str, ...], Docs, Docs]:
    """`columns_of` the export a file's metadata describes (`players`, `scoreless`, `every_keep`, `roll_chances`)."""
    return columns_of(int(meta.get("players", 2)), int(meta.get("scoreless", 0) or 0), bool(meta.get("every_keep")),
                      bool(meta.get("roll_chances")))


def read_meta(path: Path) -> Meta:
    """What a policy file records besides its rows: ruleset, solver version, `columns` (name -> meaning, unit), `keeps`."""
    path = Path(path)
    fmt = format_of(path, None)
    if fmt == "npz":
        with np.load(path, allow_pickle=False) as data:
            meta: Meta = json.loads(str(data["meta"]))
        return meta
    if fmt == "parquet":
        import pyarrow.parquet as pq  # lazy: optional dependency (extra 'parquet')

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
    import pyarrow.parquet as pq  # lazy: optional dependency (extra 'parquet')

    table = pq.read_table(path)
    out = {c: table.column(c).to_numpy(zero_copy_only=False) for c in names}
    out["action"] = np.asarray(table.column("action").cast("string").to_pylist())
    out["bank"] = np.asarray(table.column("bank").to_numpy(zero_copy_only=False), dtype=float)
    return out


def _read_keeps_parquet(path: Path, names: tuple[str, ...] = KEEP_COLUMNS) -> Columns:
    import pyarrow.parquet as pq  # lazy: optional dependency (extra 'parquet')

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
              "rank": np.int8, "win": np.float64, "expected": np.float64, "chance": np.float64}
    with open(path, encoding="utf-8") as handle:
        header = tuple(handle.readline().rstrip("\n").split(","))
        parts: dict[str, list[np.ndarray]] = {c: [np.empty(0, dtypes[c])] for c in header if c in dtypes}
        kinds = (KEEP_COLUMNS, KEEP_COLUMNS_Z) + tuple(seat_columns(n)[1] for n in range(3, MAX_PLAYERS + 1))
        if header not in [k + extra + more for k in kinds for extra in ((), EVERY) for more in ((), CHANCE)]:
            raise CinqmilleError(f"{path}: not a keep table (columns {quoted(','.join(header))})")
        kind = np.float64 if set(header) & {*EVERY, *CHANCE} else np.int64  # chances among the numbers
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
