"""The two-player policy table on disk by groups: one advice reads the one group it needs, without the kernel.

The policy table (`solver.policy.PolicyTable`) computes its rows by *groups*,
one mover's seat and score against `policy.GROUP` consecutive opponent
scores, each by one kernel pass, compiled by Numba. A fresh process that
answers one question (`cinqmille advise`) spent most of its second on Numba's
import and first call for that one group. The *groups file* holds every group
of the complete table as one member of a zip (`np.savez_compressed`, no
pickle), one float64 array of the group's states with the columns ``bank``,
``roll``, ``move`` (one per number of dice in hand), then ``plain`` and
``predict`` under `prediction`: the very numbers of the kernel's passes (the
complete table is built by the same passes, `LazyGroups.complete`).

`GroupTable` is a `PolicyTable` whose groups are read from the file instead
of computed: a group is read when first needed, and taken only when its
checksum (one per group, in the file's metadata, whose identity names the
ruleset's content and the solver version) and its turn starts (the solved
chances ``W``) agree; anything else is one warning, the file deleted and
the group computed by the kernel. A file written by this user's cinqmille is
*vouched for* (`solver.cache.vouch`); one that is not (copied in) is first
sampled against the kernel (`policy.sample_groups`), as every cached table is.

`grouped(result)` gives the result's policy read from its groups file when
there is one (`result.policy` is then that table); `write_groups(result)`
builds the complete table and writes the file (about 2 s and 15 MB for
`standard`, once per ruleset and solver version).
"""

from __future__ import annotations

import hashlib
import json
import warnings
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..files import atomic_write
from ..rules import content_key
from ..solver import cache
from ..solver.policy import PolicyTable, differs, sample_groups

#: The format of a groups file (raised when its columns change).
FORMAT = 1
#: Largest difference between a group's stored turn starts and the solved chances.
START_TOL = 1e-9
#: Largest metadata record read (bytes: a checksum per group, about 70 bytes each).
MAX_META_BYTES = 20_000_000
#: Largest table the advise command writes a groups file for (turn states; `standard` has 1.7 million).
MAX_STATES = 12_000_000

__all__ = ["GroupTable", "groups_path", "grouped", "write_groups"]


def groups_path(rules: Any) -> Path:
    """The groups file of the two-player `win` table of `rules` in the cache directory."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)[:40]
    return cache.cache_dir() / f"{safe}-groups-t{FORMAT}-{content_key(rules)}-{cache.solver_version()}.npz"


def _spec(rules: Any) -> cache.TableSpec:
    return cache.TableSpec.of(rules, "groups", "win", 2, {})


def _columns(table: PolicyTable, cells: slice) -> np.ndarray:
    """The states `cells` of `table` as one float64 block: bank, roll, move (D columns each), plain, predict."""
    assert table.move_v is not None
    parts = [table.bank_v[cells], table.roll_v[cells], table.move_v[cells].astype(np.float64)]
    if table.plain_v is not None and table.predict_v is not None:
        parts += [table.plain_v[cells][:, None], table.predict_v[cells]]
    return np.ascontiguousarray(np.concatenate(parts, axis=1))


def _cells(table: PolicyTable, g: int) -> tuple[np.ndarray, slice]:
    """The rows of group g and their states (a group's rows share the mover, and so the cap)."""
    rows = table._group_rows(g)
    start = int(table.offset[rows[0]])
    return rows, slice(start, start + len(rows) * int(table.cap[rows[0]] + 2))


def _sum(block: np.ndarray) -> str:
    return hashlib.sha256(str(block.shape).encode() + block.tobytes()).hexdigest()


def write_groups(result: Any) -> Path:
    """Build the complete policy table of the solved two-player `win` result and write its groups file
    (atomically; vouched for, as the solver's own tables are). Returns the path."""
    table = result.policy.complete()  # the groups an advice computed already are kept
    path = groups_path(result.rules)
    blocks = {f"g{g}": _columns(table, _cells(table, g)[1]) for g in range(len(table._done))}
    sums = [_sum(blocks[f"g{g}"]) for g in range(len(blocks))]
    meta = {"format": FORMAT, "table": _spec(result.rules).identity(), "groups": sums,
            "checksum": hashlib.sha256("".join(sums).encode()).hexdigest()}
    payload = {**blocks, "meta": np.array(json.dumps(meta))}

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            np.savez_compressed(handle, **payload)  # type: ignore[arg-type]

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, write, public=False)
    cache.vouch(path, meta)
    cache.prune_stale(path)
    return path


class GroupTable(PolicyTable):
    """A `PolicyTable` whose groups are read from a groups file when first needed (computed where it fails)."""

    _path: Path
    _sums: list[str]
    _result: Any
    _failed: bool = False

    @classmethod
    def reading(cls, result: Any, path: Path, meta: dict[str, Any]) -> "GroupTable":
        table = cls.of(result)  # `of` builds an instance of the class it is called on
        assert isinstance(table, cls)
        table._path, table._sums, table._result = path, list(meta["groups"]), result
        if len(table._sums) != len(table._done):
            raise cache.CorruptTable(f"{path}: {len(table._sums)} groups, expected {len(table._done)}")
        return table

    def _read(self, g: int) -> np.ndarray:
        """The stored block of group g, checked against its checksum and the solved turn starts."""
        with zipfile.ZipFile(self._path) as archive, archive.open(f"g{g}.npy") as handle:
            block = np.lib.format.read_array(handle, allow_pickle=False)
        d = self.dice
        width = 3 * d + (0 if self.plain_v is None or self.predict_v is None else 1 + self.predict_v.shape[1])
        rows, cells = _cells(self, g)
        if block.dtype != np.float64 or block.shape != (cells.stop - cells.start, width):
            raise cache.CorruptTable(f"{self._path}: group {g} has the wrong shape")
        if _sum(block) != self._sums[g]:
            raise cache.CorruptTable(f"{self._path}: group {g} does not match its checksum")
        n = int(self.cap[rows[0]]) + 2
        start = np.maximum(block[::n, :d], block[::n, d:2 * d])[:, d - 1]  # the rows' turn starts, all the dice
        s = len(self.scores)
        seat, ia = divmod(int(rows[0]) // s, s)
        want = self._result.tables[seat, self.scores[ia], self.scores[rows % s]]
        if differs(start, want, START_TOL):
            raise cache.CorruptTable(f"{self._path}: group {g} is not the solved table's")
        return block

    def _group(self, g: int) -> None:
        if self._failed:
            super()._group(g)
            return
        try:
            block = self._read(g)
        except (OSError, KeyError, ValueError, zipfile.BadZipFile, cache.CorruptTable) as exc:
            self._failed = True
            reason = exc if isinstance(exc, cache.CorruptTable) else cache.CorruptTable(
                f"{self._path}: not a readable groups file ({exc.__class__.__name__})")
            cache.discard(self._path, reason, stacklevel=4)
            super()._group(g)
            return
        d = self.dice
        rows, cells = _cells(self, g)
        assert self.move_v is not None
        self.bank_v[cells] = block[:, :d]
        self.roll_v[cells] = block[:, d:2 * d]
        self.move_v[cells] = block[:, 2 * d:3 * d].astype(np.int8)
        if self.plain_v is not None and self.predict_v is not None:
            self.plain_v[cells] = block[:, 3 * d]
            self.predict_v[cells] = block[:, 3 * d + 1:]
        self._values(rows)

    def sample_problem(self) -> str | None:
        """Why the file is not the kernel's table, on `policy.SAMPLE_GROUPS` groups recomputed (None: it is)."""
        fresh = PolicyTable.of(self._result)
        for g in sample_groups(len(self._done)):
            rows, cells = _cells(self, int(g))
            self._ready(rows)
            fresh._ready(rows)
            for name in ("bank_v", "roll_v", "plain_v", "predict_v", "move_v"):
                mine, theirs = getattr(self, name), getattr(fresh, name)
                if mine is not None and differs(mine[cells], theirs[cells]):
                    return f"group {int(g)} differs from the kernel's ({name[:-2]})"
        return None


def _meta(path: Path) -> dict[str, Any]:
    """The metadata of a groups file, checked against the identity expected of it."""
    with zipfile.ZipFile(path) as archive:
        if archive.getinfo("meta.npy").file_size > MAX_META_BYTES:
            raise cache.CorruptTable(f"{path}: a metadata record larger than a groups file's")
        with archive.open("meta.npy") as handle:
            text = str(np.lib.format.read_array(handle, allow_pickle=False))
    meta = json.loads(text)
    if not isinstance(meta, dict) or meta.get("format") != FORMAT or not isinstance(meta.get("groups"), list):
        raise cache.CorruptTable(f"{path}: not a groups file of format {FORMAT}")
    if not all(isinstance(s, str) for s in meta["groups"]) or \
            meta.get("checksum") != hashlib.sha256("".join(meta["groups"]).encode()).hexdigest():
        raise cache.CorruptTable(f"{path}: its checksums do not match")
    return meta


def grouped(result: Any) -> bool:
    """Read the policy of the two-player `win` `result` from its groups file, if the cache holds one (then
    `result.policy` is a `GroupTable`); False where there is none (the kernel computes the groups)."""
    if result.objective != "win" or result.players != 2 or "policy" in vars(result):
        return False
    path = groups_path(result.rules)
    try:
        if not cache.cache_file(path):
            return False
        meta = _meta(path)
        if meta.get("table") != _spec(result.rules).identity():
            raise cache.CorruptTable(f"{path}: the groups of another table")
        table = GroupTable.reading(result, path, meta)
        if not cache.vouched(path, meta):
            why = table.sample_problem()
            if why:
                raise cache.CorruptTable(f"{path}: {why}")
            cache.vouch(path, meta)
    except cache.CorruptTable as exc:
        cache.discard(path, exc, stacklevel=3)
        return False
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        cache.discard(path, cache.CorruptTable(f"{path}: not a readable groups file ({exc.__class__.__name__})"),
                      stacklevel=3)
        return False
    vars(result)["policy"] = table  # the result's cached property, set before its first read
    return True


def ensure_groups(result: Any) -> Path | None:
    """The groups file of `result` (two players, `win`), written if the cache has none; None where it is not
    written (a table of more than `MAX_STATES` turn states, or a read-only cache directory: the advice then
    computes its groups)."""
    if result.objective != "win" or result.players != 2:
        return None
    if int((result.policy.cap + 2).sum()) * result.rules.dice > MAX_STATES:
        return None
    path = groups_path(result.rules)
    if cache.cache_file(path):
        return path
    try:
        return write_groups(result)
    except (OSError, CinqmilleError) as exc:
        warnings.warn(f"could not write the groups file {cache.short_path(path)} ({exc})", stacklevel=2)
        return None
