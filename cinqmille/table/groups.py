"""The two-player policy table on disk by groups: one advice reads the one group it needs, without the kernel.

The policy table (`table.policy.PolicyTable`) computes its rows by *groups*,
one mover's seat and score against `policy.GROUP` consecutive opponent
scores, each by one kernel pass, compiled by Numba. A fresh process that
answers one question (`cinqmille advise`) spent most of its second on Numba's
import and first call for that one group. The *groups file* holds every group
of the complete table as members of a zip (`np.savez_compressed`, no pickle),
one member ``g<group>`` per group: the bytes of the arrays the table holds
(`NAMES`: the values of banking and rolling, the solve's decisions σ, move,
keep, keep after an announcement, take-over, and the announcement's values),
one after the other, their dtypes and shapes the table's own: the very numbers
and decisions of the kernel's passes (the complete table is built by the same
passes, `PolicyTable.complete`). One member per group keeps the zip's
directory short (a few hundred entries, read once per file opened), so that an
advice reads its group in a few milliseconds. The file also holds the ruleset's dice tables
(`dice.tables.DiceTable`, one member ``dice``: the bytes of their arrays, whose
names, dtypes and shapes the metadata lists), which a fresh process would
otherwise build in Python (about 20 ms for `standard`): they are taken from a
file vouched for (`take_dice`), checked against their own checksum.

`GroupTable` is a `PolicyTable` whose groups are read from the file instead
of computed: a group is read when first needed, and taken only when its
checksum (one per group, in the file's metadata, whose identity names the
ruleset's content and the solver version) and its turn starts (the solved
chances ``W``) agree; anything else is one warning, the file deleted and
the group computed by the kernel. A file written by this user's cinqmille is
*vouched for* (`solver.cache.vouch`); one that is not (copied in) is first
sampled against the kernel (`policy.sample_groups`), as every cached table is.

`grouped(result)` gives the result's policy read from its groups file when
there is one (`policy_of(result)` is then that table); `write_groups(result)`
builds the complete table and writes the file (about 2 s and 15 MB for
`standard`, once per ruleset and solver version).
"""

from __future__ import annotations

import hashlib
import json
import os
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..dice import dice_tables
from ..dice.tables import TABLE_ARRAYS, DiceTable, take_tables
from ..errors import CinqmilleError
from ..files import atomic_write
from ..rules import content_key
from ..solver import cache
from ..solver.choice import differs, sample_groups
from .policy import PolicyTable, policy_of

#: The format of a groups file (raised when its columns change; 3: one zip member per group).
FORMAT = 3
#: Largest difference between a group's stored turn starts and the solved chances.
START_TOL = 1e-9
#: Largest metadata record read (bytes: a checksum per group, about 70 bytes each).
MAX_META_BYTES = 20_000_000
#: Largest member of dice tables read (bytes: six dice have 462 rolls and some thousands of keeps, about 1 MB).
MAX_DICE_BYTES = 16 << 20
#: Largest table the advise command writes a groups file for (turn states; `standard` has 1.7 million).
MAX_STATES = 12_000_000

__all__ = ["GroupTable", "groups_path", "grouped", "write_groups"]


def groups_path(rules: Any) -> Path:
    """The groups file of the two-player `win` table of `rules` in the cache directory."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)[:40]
    return cache.cache_dir() / f"{safe}-groups-t{FORMAT}-{content_key(rules)}-{cache.solver_version()}.npz"


def _spec(rules: Any) -> cache.TableSpec:
    return cache.TableSpec.of(rules, "groups", "win", 2, {})


#: The table's arrays a group holds (`PolicyTable._group_arrays`: values and the solve's decisions, σ).
NAMES = ("bank_v", "roll_v", "move_v", "keep_v", "told_v", "take_v", "plain_v", "predict_v")


def _arrays(table: PolicyTable, cells: slice) -> dict[str, np.ndarray]:
    """The states `cells` of `table`: every array it holds (`NAMES`), by name."""
    out = {}
    for name in NAMES:
        whole = getattr(table, name)
        if whole is not None:
            out[name] = np.ascontiguousarray(whole[cells])
    return out


def _cells(table: PolicyTable, g: int) -> tuple[np.ndarray, slice]:
    """The rows of group g and their states (a group's rows share the mover, and so the cap)."""
    rows = table._group_rows(g)
    start = int(table.offset[rows[0]])
    return rows, slice(start, start + len(rows) * int(table.cap[rows[0]] + 2))


def _sum(arrays: dict[str, np.ndarray]) -> str:
    """One checksum of a group's arrays (names, dtypes, shapes and bytes)."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        block = arrays[name]
        digest.update(f"{name}{block.dtype.str}{block.shape}".encode())
        digest.update(block.tobytes())
    return digest.hexdigest()


def _dice_arrays(rules: Any) -> dict[str, np.ndarray]:
    """The dice tables of `rules`, their arrays named ``dice<n>-<field>``."""
    return {f"dice{n}-{name}": np.ascontiguousarray(getattr(table, name)) for n, table in dice_tables(rules).items()
            for name in TABLE_ARRAYS}


def _checksum(meta: dict[str, Any]) -> str:
    """The checksum of the file's checksums (the groups', then the dice tables'), which its vouch names."""
    return hashlib.sha256(("".join(meta["groups"]) + str(meta.get("dice"))).encode()).hexdigest()


def write_groups(result: Any) -> Path:
    """Build the complete policy table of the solved two-player `win` result and write its groups file
    (atomically; vouched for, as the solver's own tables are). Returns the path."""
    table = policy_of(result).complete()  # the groups an advice computed already are kept
    path = groups_path(result.rules)
    groups = [_arrays(table, _cells(table, g)[1]) for g in range(len(table._done))]
    sums = [_sum(arrays) for arrays in groups]
    blocks = {f"g{g}": np.frombuffer(b"".join(arrays[name].tobytes() for name in NAMES if name in arrays),
                                     dtype=np.uint8) for g, arrays in enumerate(groups)}
    dice = _dice_arrays(result.rules)
    meta: dict[str, Any] = {"format": FORMAT, "table": _spec(result.rules).identity(), "groups": sums,
                            "dice": _sum(dice),
                            "dice_layout": [[name, a.dtype.str, list(a.shape)] for name, a in dice.items()]}
    meta["checksum"] = _checksum(meta)
    blocks["dice"] = np.frombuffer(b"".join(a.tobytes() for a in dice.values()), dtype=np.uint8)
    payload = {**blocks, "meta": np.array(json.dumps(meta))}

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            np.savez_compressed(handle, **payload)  # type: ignore[arg-type]

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, write, public=False)
    cache.vouch(path, meta)
    cache.prune_stale(path)  # other solver versions
    for old in path.parent.glob(f"{path.name.split('-groups-t')[0]}-groups-t*-{content_key(result.rules)}-*.npz"):
        if old != path and cache.cache_file(old):  # other formats of this ruleset's groups file
            old.unlink(missing_ok=True)
    return path


class GroupTable(PolicyTable):
    """A `PolicyTable` whose groups are read from a groups file when first needed (computed where it fails)."""

    _path: Path
    _sums: list[str]
    _result: Any
    _failed: bool = False
    _archive: zipfile.ZipFile | None = None  # the file, open (its directory read once)

    @classmethod
    def reading(cls, result: Any, path: Path, meta: dict[str, Any],
                archive: zipfile.ZipFile | None = None) -> "GroupTable":
        """The table of `result` read from the groups file `path` (its metadata `meta`; open as `archive`,
        which the table then owns)."""
        table = cls.of(result)  # `of` builds an instance of the class it is called on
        assert isinstance(table, cls)
        table._path, table._sums, table._result, table._archive = path, list(meta["groups"]), result, archive
        if len(table._sums) != len(table._done):
            raise cache.CorruptTable(f"{path}: {len(table._sums)} groups, expected {len(table._done)}")
        return table

    def close(self) -> None:
        """Close the file (a later read opens it again)."""
        if self._archive is not None:
            self._archive.close()
            self._archive = None

    def _read(self, g: int) -> dict[str, np.ndarray]:
        """The stored arrays of group g, checked against its checksum and the solved turn starts."""
        rows, cells = _cells(self, g)
        wholes = {name: getattr(self, name) for name in NAMES if getattr(self, name) is not None}
        shapes = {name: (cells.stop - cells.start,) + whole.shape[1:] for name, whole in wholes.items()}
        sizes = {name: int(np.prod(shape)) * wholes[name].dtype.itemsize for name, shape in shapes.items()}
        if self._archive is None:
            self._archive = zipfile.ZipFile(self._path)
        info = self._archive.getinfo(f"g{g}.npy")
        if info.file_size > sum(sizes.values()) + 1024:  # an .npy header is at most a few hundred bytes
            raise cache.CorruptTable(f"{self._path}: group {g} has the wrong size")
        with self._archive.open(info) as handle:
            block = np.lib.format.read_array(handle, allow_pickle=False)
        if block.dtype != np.uint8 or block.shape != (sum(sizes.values()),):
            raise cache.CorruptTable(f"{self._path}: group {g} has the wrong size")
        arrays, at = {}, 0
        for name, whole in wholes.items():  # the table's arrays, in the order of `NAMES` (as written)
            arrays[name] = block[at:at + sizes[name]].view(whole.dtype).reshape(shapes[name])
            at += sizes[name]
        if _sum(arrays) != self._sums[g]:
            raise cache.CorruptTable(f"{self._path}: group {g} does not match its checksum")
        d = self.dice
        n = int(self.cap[rows[0]]) + 2
        start = np.maximum(arrays["bank_v"][::n], arrays["roll_v"][::n])[:, d - 1]  # turn starts, all the dice
        s = len(self.scores)
        seat, ia = divmod(int(rows[0]) // s, s)
        want = self._result.tables[seat, self.scores[ia], self.scores[rows % s]]
        if differs(start, want, START_TOL):
            raise cache.CorruptTable(f"{self._path}: group {g} is not the solved table's")
        return arrays

    def _group(self, g: int) -> None:
        if self._failed:
            super()._group(g)
            return
        try:
            block = self._read(g)
        except (OSError, KeyError, ValueError, zipfile.BadZipFile, cache.CorruptTable) as exc:
            self._failed = True
            self.close()
            reason = exc if isinstance(exc, cache.CorruptTable) else cache.CorruptTable(
                f"{self._path}: not a readable groups file ({exc.__class__.__name__})")
            cache.discard(self._path, reason, stacklevel=4)
            super()._group(g)
            return
        rows, cells = _cells(self, g)
        for name, values in block.items():
            getattr(self, name)[cells] = values
        self._values(rows)

    def sample_problem(self) -> str | None:
        """Why the file is not the kernel's table, on `policy.SAMPLE_GROUPS` groups recomputed (None: it is)."""
        fresh = PolicyTable.of(self._result)
        for g in sample_groups(len(self._done)):
            rows, cells = _cells(self, int(g))
            self._ready(rows)
            fresh._ready(rows)
            for name in NAMES:
                mine, theirs = getattr(self, name), getattr(fresh, name)
                if mine is not None and differs(mine[cells], theirs[cells]):
                    return f"group {int(g)} differs from the kernel's ({name[:-2]})"
        return None


def _meta(archive: zipfile.ZipFile, path: Path) -> dict[str, Any]:
    """The metadata of the groups file `path` (open as `archive`), its checksums consistent."""
    if archive.getinfo("meta.npy").file_size > MAX_META_BYTES:
        raise cache.CorruptTable(f"{path}: a metadata record larger than a groups file's")
    with archive.open("meta.npy") as handle:
        text = str(np.lib.format.read_array(handle, allow_pickle=False))
    meta = json.loads(text)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or not isinstance(meta.get("groups"), list):
        raise cache.CorruptTable(f"{path}: not a groups file of format {FORMAT}")
    if not all(isinstance(s, str) for s in meta["groups"]) or not isinstance(meta.get("dice"), str) or \
            meta.get("checksum") != _checksum(meta):
        raise cache.CorruptTable(f"{path}: its checksums do not match")
    return meta


def _plain(text: Any) -> np.dtype | None:
    """The dtype `text` names if it is a plain number or boolean of at most 8 bytes (a dice table's), else None."""
    try:
        kind = np.dtype(str(text))
    except (TypeError, ValueError):
        return None
    return kind if kind.kind in "biuf" and kind.itemsize <= 8 else None


def take_dice(archive: zipfile.ZipFile, path: Path, rules: Any, meta: dict[str, Any]) -> None:
    """Use the dice tables stored in the groups file `path` (open as `archive`) as those of `rules` in this
    process (`dice.tables.take_tables`): read with `allow_pickle=False`, checked against their checksum and
    shapes (`CorruptTable` otherwise). Only for a file vouched for: a file that is not is sampled against the
    kernel, whose passes must then use tables built here."""
    layout = meta.get("dice_layout")
    names = [f"dice{n}-{name}" for n in range(1, rules.dice + 1) for name in TABLE_ARRAYS]
    if not isinstance(layout, list) or [item[0] if isinstance(item, list) and len(item) == 3 else None
                                        for item in layout] != names \
            or not all(_plain(item[1]) is not None and isinstance(item[2], list) and len(item[2]) <= 2
                       and all(isinstance(k, int) and 0 <= k <= MAX_DICE_BYTES for k in item[2]) for item in layout):
        raise cache.CorruptTable(f"{path}: its dice tables are not laid out as a groups file's")
    shapes = {name: (np.dtype(str(kind)), tuple(shape)) for name, kind, shape in layout}
    sizes = {name: int(np.prod(shape)) * kind.itemsize for name, (kind, shape) in shapes.items()}
    info = archive.getinfo("dice.npy")
    if info.file_size > MAX_DICE_BYTES or sum(sizes.values()) > MAX_DICE_BYTES:
        raise cache.CorruptTable(f"{path}: its dice tables are too large")
    with archive.open(info) as handle:
        block = np.lib.format.read_array(handle, allow_pickle=False)
    if block.dtype != np.uint8 or block.shape != (sum(sizes.values()),):
        raise cache.CorruptTable(f"{path}: its dice tables have the wrong size")
    arrays, at = {}, 0
    for name, (kind, shape) in shapes.items():
        arrays[name] = block[at:at + sizes[name]].view(kind).reshape(shape)
        at += sizes[name]
    if _sum(arrays) != meta["dice"]:
        raise cache.CorruptTable(f"{path}: its dice tables do not match their checksum")
    tables = {n: DiceTable(n, **{name: arrays[f"dice{n}-{name}"] for name in TABLE_ARRAYS})
              for n in range(1, rules.dice + 1)}
    try:
        take_tables(rules, tables)
    except ValueError as exc:
        raise cache.CorruptTable(f"{path}: {exc}") from None


def grouped(result: Any) -> bool:
    """Read the policy of the two-player `win` `result` from its groups file, if the cache holds one (then
    `policy_of(result)` is a `GroupTable`); False where there is none (the kernel computes the groups)."""
    if result.objective != "win" or result.players != 2 or "_policy" in vars(result):
        return False
    path = groups_path(result.rules)
    archive = None
    try:
        if not cache.cache_file(path):
            return False
        archive = zipfile.ZipFile(path)  # kept open by the table: its directory is read once
        meta = _meta(archive, path)
        if meta.get("table") != _spec(result.rules).identity():
            raise cache.CorruptTable(f"{path}: the groups of another table")
        trusted = cache.vouched(path, meta)
        if trusted:  # before the table is laid out: its keep graph reads the dice tables
            take_dice(archive, path, result.rules, meta)
        table = GroupTable.reading(result, path, meta, archive)
        if not trusted:
            why = table.sample_problem()
            if why:
                raise cache.CorruptTable(f"{path}: {why}")
            cache.vouch(path, meta)
    except cache.CorruptTable as exc:
        if archive is not None:
            archive.close()
        cache.discard(path, exc, stacklevel=3)
        return False
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        if archive is not None:
            archive.close()
        cache.discard(path, cache.CorruptTable(f"{path}: not a readable groups file ({exc.__class__.__name__})"),
                      stacklevel=3)
        return False
    vars(result)["_policy"] = table  # the result's table (`policy_of`), set before its first read
    return True


def ensure_groups(result: Any) -> Path | None:
    """The groups file of `result` (two players, `win`), written if the cache has none; None where it is not
    written (a table of more than `MAX_STATES` turn states, or a read-only cache directory: the advice then
    computes its groups)."""
    if result.objective != "win" or result.players != 2:
        return None
    if int((policy_of(result).cap + 2).sum()) * result.rules.dice > MAX_STATES:
        return None
    path = groups_path(result.rules)
    try:
        if cache.cache_file(path):
            return path
        if not path.parent.is_dir() or not os.access(path.parent, os.W_OK):
            return None  # no cache folder to write in: the table's own write has said so (one warning)
    except OSError:
        return None  # a cache folder that cannot be read (a path too long): the table's read has said so
    try:
        return write_groups(result)
    except (OSError, CinqmilleError) as exc:
        warnings.warn(f"could not write the groups file {cache.short_path(path)} ({exc})", stacklevel=2)
        return None
