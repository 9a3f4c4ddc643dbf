"""The on-disk cache of solved tables: `.npz` files that prove what they are.

A table file holds its arrays and one JSON metadata record. The record names
the table (`TableSpec.identity`: kind, content key of the ruleset, solver
version, objective, player count) and the shape and dtype of every array, and
carries a checksum of the arrays. `load_npz` checks, in this order and before
reading any large array: the zip structure, the identity against the one the
caller expects, each array's header (shape, dtype), then the checksum and the
caller's check of the values (finite, in range). Anything off is a
`CorruptTable`: `try_load` reports it in one warning, deletes the file and lets
the caller recompute. A file that exists but cannot be read (permissions), or
is not a regular file (a FIFO would block), is reported and left alone
(`UnreadableTable`). Files are written atomically (`files.atomic_write`) and
read with `allow_pickle=False`.

The callers then check what the checksum cannot prove (docs/solver.md,
"Caches"): the metadata's fields and types (`check_meta`), the layout
against the ruleset, and a sample of rows recomputed by the kernel; a failure
there is a `CorruptTable` too, reported and deleted the same way (`discard`).
That sample costs kernel passes (and Numba's start-up), so it is made once per
file: a file that passed it, or that the solver has just computed and written,
is *vouched for* (`vouch`: a record in the cache directory's ``vouched/`` of
the checksum of its arrays, its inode, size and change times, signed with a
per-user secret kept outside the cache folder, `secret_path`), and a later
load of the same file, unchanged, skips it (`vouched`). The checksum is
recomputed from the arrays at every load, so a vouch can only match the very
arrays that were sampled; replacing or rewriting the file changes its change
time (``st_ctime``, which no tool sets back), so a table copied in is sampled
again; and a record written by anyone but this user's cinqmille (who could
copy the inode and times from `stat`) lacks the signature, so a forged table
with a forged record is sampled too.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import re
import stat
import warnings
import zipfile
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..files import atomic_write, clean_stale_tmp
from ..rules import Rules, content_key, rules_from_dict, to_dict

FORMAT = 2
#: Largest metadata record read from a table file (characters).
MAX_META = 1_000_000

ArrayCheck = Callable[[Mapping[str, np.ndarray]], "str | None"]


#: Files of the solver that do not compute tables: changing them keeps the cached tables.
NOT_VERSIONED = frozenset({"budget.py"})


@lru_cache(maxsize=1)
def solver_version() -> str:
    """A hash of the code that computes tables: any change to it invalidates every cache file (`budget.py`,
    which only sizes a solve before it starts, is not part of it)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(f"format{FORMAT}".encode())
    for sub in ("solver", "dice"):
        for path in sorted((root / sub).glob("*.py")):
            if sub == "solver" and path.name in NOT_VERSIONED:
                continue
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    for path in sorted((root / "rules").glob("*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class TableSpec:
    """What a table file must be: who it is, and the shape and dtype of each of its arrays."""

    kind: str  # "solve" (a SolveResult) or "policy" (the optimal policy table)
    rules_key: str  # content_key of the ruleset
    objective: str
    players: int
    arrays: Mapping[str, tuple[tuple[int, ...] | None, str]]  # name -> (shape or None for any, dtype)
    check: ArrayCheck | None = field(default=None, compare=False)  # why the values are wrong, or None

    @classmethod
    def of(cls, rules: Rules, kind: str, objective: str, players: int,
           arrays: Mapping[str, tuple[tuple[int, ...] | None, str]], check: ArrayCheck | None = None) -> "TableSpec":
        return cls(kind, content_key(rules), objective, players, dict(arrays), check)

    def identity(self) -> dict[str, Any]:
        """The record a file of this spec carries, compared field by field on loading."""
        return {"kind": self.kind, "rules_key": self.rules_key, "objective": self.objective,
                "players": self.players, "solver_version": solver_version()}


def cache_dir() -> Path:
    """`$CINQMILLE_CACHE`, else `$XDG_CACHE_HOME/cinqmille`, else `~/.cache/cinqmille`."""
    env = os.environ.get("CINQMILLE_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cinqmille"


def cache_path(rules: Rules, objective: str, players: int = 2) -> Path:
    """Where the table of `rules` for `objective` (and `players` other than 2) is cached."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)[:40]
    kind = objective if players == 2 else f"{objective}{players}p"
    return cache_dir() / f"{safe}-{kind}-{content_key(rules)}-{solver_version()}.npz"


def prune_stale(path: Path) -> int:
    """Delete the cache files of the same ruleset and objective made by other solver versions."""
    stem, _, version = path.stem.rpartition("-")
    removed = 0
    for old in path.parent.glob(f"{stem}-*.npz"):
        if old != path and len(old.stem.rpartition("-")[2]) == len(version):
            try:
                old.unlink()
                removed += 1
            except OSError:
                pass
    return removed


#: The name of every table file the cache writes (`cache_path`; `table.load.table_path`): the ruleset's name cut
#: to 40 safe characters, the kind of table, the ruleset's content key and the solver version.
TABLE_NAME = re.compile(r"[\w-]{0,40}-[a-z0-9-]+-[0-9a-f]{20}-[0-9a-f]{16}\.npz")


def cache_file(path: Path) -> bool:
    """Whether `path` is a table file the cache wrote: named as it names them, and a regular file (not a symbolic
    link, a folder or a device). Nothing else in the cache folder is the cache's to delete."""
    try:
        return TABLE_NAME.fullmatch(path.name) is not None and stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def evict_oldest(directory: Path, max_bytes: int, keep: Collection[Path] = ()) -> int:
    """Delete the oldest table files of `directory` (by modification time) until they hold at most `max_bytes`.

    Only the cache's own table files count and go (`cache_file`: its naming, regular files, never a symbolic link
    or a file of the user's); files in `keep` (the table just written) stay; a file that vanishes or cannot
    be deleted meanwhile is skipped. Returns the number of files deleted.
    """
    kept = {Path(p).resolve() for p in keep}
    found = []
    for path in Path(directory).glob("*.npz"):
        if not cache_file(path):
            continue
        try:
            info = path.lstat()
        except OSError:
            continue
        found.append((info.st_mtime, path.name, info.st_size, path))
    total = sum(size for _, _, size, _ in found)
    removed = 0
    for _, _, size, path in sorted(found):
        if total <= max_bytes:
            break
        if path.resolve() in kept or not cache_file(path):
            continue
        try:
            path.unlink()
        except OSError:
            continue
        total -= size
        removed += 1
    return removed


def _checksum(arrays: Mapping[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        digest.update(name.encode())
        digest.update(str(arr.dtype).encode() + str(arr.shape).encode())
        digest.update(arr.data)  # the bytes in place: no copy of a large table
    return digest.hexdigest()


def save_npz(path: Path, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any],
             spec: TableSpec | None = None) -> None:
    """Write arrays and JSON metadata to `path` atomically, with their identity, layout and checksum."""
    path = Path(path)
    record = {**meta, "checksum": _checksum(arrays),
              "arrays": {name: [list(a.shape), str(a.dtype)] for name, a in arrays.items()}}
    if spec is not None:
        record["table"] = spec.identity()
    payload = {**arrays, "meta": np.array(json.dumps(record, allow_nan=False))}

    def write(tmp: Path) -> None:
        with open(tmp, "wb") as handle:
            # numpy's stub: a `**dict` of arrays could also fill `allow_pickle: bool`, which no array name here is
            np.savez_compressed(handle, **payload)  # type: ignore[arg-type]

    atomic_write(path, write, public=False)
    clean_stale_tmp(path.parent)


#: The cache directory's folder of vouches (`vouch`).
VOUCHED = "vouched"


def _vouch_path(path: Path) -> Path:
    name = hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:24]
    return cache_dir() / VOUCHED / f"{name}.json"


def _identity(path: Path, meta: Mapping[str, Any]) -> dict[str, Any]:
    info = os.stat(path)
    return {"path": str(Path(path).resolve()), "checksum": meta.get("checksum"), "device": info.st_dev,
            "inode": info.st_ino, "size": info.st_size, "mtime_ns": info.st_mtime_ns, "ctime_ns": info.st_ctime_ns}


#: The per-user secret that signs the vouches (`secret_path`): random bytes, as hex, in a file of mode 0600.
SECRET_BYTES = 32


def secret_path() -> Path:
    """Where the secret that signs vouches is kept: outside every cache folder, in the user's data folder
    (`$XDG_DATA_HOME/cinqmille/vouch.key`, else ``~/.local/share/cinqmille/vouch.key``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "cinqmille" / "vouch.key"


def _read_secret(path: Path) -> bytes | None:
    """The secret in `path` if it is a regular file of this user that no one else may read or write."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077 or info.st_uid != os.geteuid():
            return None
        text = os.read(fd, 4 * SECRET_BYTES).decode("ascii", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        secret = bytes.fromhex(text)
    except ValueError:
        return None
    return secret if len(secret) >= SECRET_BYTES else None


def _secret() -> bytes | None:
    """This user's secret (`secret_path`), made on first use: written to a temporary file of mode 0600, then
    linked to its name (`os.link` fails if another process made it first: that one is read). None when it
    cannot be read or made (then nothing is vouched for, and every table read is sampled)."""
    path = secret_path()
    found = _read_secret(path)
    if found is not None or os.path.lexists(path):
        return found
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        import tempfile  # lazy: start-up time (a warm advice writes nothing)

        fd, tmp = tempfile.mkstemp(prefix=".vouch.key.", suffix=".tmp", dir=path.parent)  # mode 0600
    except OSError:
        return None
    try:
        os.write(fd, os.urandom(SECRET_BYTES).hex().encode("ascii"))
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.link(tmp, path)
    except FileExistsError:
        pass
    except OSError:
        return None
    finally:
        if fd >= 0:
            os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
    return _read_secret(path)


def _signature(secret: bytes, identity: Mapping[str, Any]) -> str:
    return hmac.new(secret, json.dumps(identity, sort_keys=True).encode(), hashlib.sha256).hexdigest()


def vouch(path: Path, meta: Mapping[str, Any] | None = None) -> None:
    """Record that the table file at `path`, as it is now (its metadata `meta`, read from the file by default),
    holds the game's solution: it passed the callers' sample, or the solver has just computed and written it.

    The record is signed (HMAC-SHA256) with this user's secret (`secret_path`,
    outside the cache folder), so that a record written by anyone else (a
    forger who can write the cache folder and stat the file) is not taken.
    Nothing is recorded where the directory is read-only or there is no secret.
    """
    record = _vouch_path(path)
    try:
        secret = _secret()
        if secret is None:
            return
        if meta is None:
            with zipfile.ZipFile(path) as archive:
                meta = _read_meta(archive)
        identity = _identity(path, meta)
        text = json.dumps({"identity": identity, "signature": _signature(secret, identity)})
        record.parent.mkdir(parents=True, exist_ok=True)

        def write(tmp: Path) -> None:
            tmp.write_text(text)

        atomic_write(record, write, public=False)
    except (OSError, ValueError, CinqmilleError):
        pass


def vouched(path: Path, meta: Mapping[str, Any]) -> bool:
    """Whether the table file at `path` is the very file `vouch` recorded, unchanged since, and the record is
    signed with this user's secret (then the callers skip their sample of rows recomputed by the kernel)."""
    try:
        record = _vouch_path(path)
        if not stat.S_ISREG(os.stat(record).st_mode):  # a FIFO there would block the open
            return False
        with open(record, encoding="utf-8") as handle:
            found = json.loads(handle.read(10_000))  # a record is a few hundred characters
        if not isinstance(found, dict) or not isinstance(found.get("signature"), str) or not meta.get("checksum"):
            return False
        identity = _identity(path, meta)
        secret = _read_secret(secret_path())
        return (secret is not None and found.get("identity") == identity
                and hmac.compare_digest(found["signature"], _signature(secret, identity)))
    except (OSError, ValueError):
        return False


class CorruptTable(CinqmilleError):
    """A table file that is not the table it should be (damaged, foreign, or inconsistent)."""


class UnreadableTable(CinqmilleError):
    """A table file that exists but cannot be opened (permissions): left alone, not replaced."""


def _header(archive: zipfile.ZipFile, member: str) -> tuple[tuple[int, ...], np.dtype]:
    with archive.open(member) as handle:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
        else:
            shape, _, dtype = np.lib.format.read_array_header_2_0(handle)
    return tuple(int(n) for n in shape), np.dtype(dtype)


def _read_meta(archive: zipfile.ZipFile) -> dict[str, Any]:
    shape, dtype = _header(archive, "meta.npy")
    if shape != () or dtype.kind != "U" or dtype.itemsize // 4 > MAX_META:
        raise ValueError("metadata of the wrong type")
    with archive.open("meta.npy") as handle:
        text = str(np.lib.format.read_array(handle, allow_pickle=False))
    meta = json.loads(text)
    if not isinstance(meta, dict):
        raise ValueError("metadata is not a record")
    return meta


def load_npz(path: Path, spec: TableSpec | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a file written by `save_npz` and check it against `spec`; raise `CorruptTable` otherwise.

    A path that is not a regular file (a FIFO, a device, a directory) is not
    opened (a FIFO would block): `UnreadableTable`.
    """
    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = None  # reported below, when opening it
    if mode is not None and not stat.S_ISREG(mode):
        raise UnreadableTable(f"{path}: not a regular file")
    try:
        with zipfile.ZipFile(path) as archive:
            members = {n[:-4]: n for n in archive.namelist() if n.endswith(".npy")}
            if "meta" not in members:
                raise ValueError("no metadata")
            meta = _read_meta(archive)
            names = sorted(n for n in members if n != "meta")
            layout = meta.get("arrays")
            if not isinstance(layout, dict) or sorted(layout) != names:
                raise ValueError("arrays do not match the metadata")
            if spec is not None:
                why = _mismatch(spec, meta, {n: _header(archive, members[n]) for n in names})
                if why:
                    raise CorruptTable(f"{path}: {why}")
            arrays = {}
            for name in names:
                with archive.open(members[name]) as handle:
                    arrays[name] = np.lib.format.read_array(handle, allow_pickle=False)
    except (FileNotFoundError, PermissionError, IsADirectoryError, CorruptTable):
        raise
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.ENAMETOOLONG, errno.ENOTDIR, errno.ELOOP):
            raise
        raise CorruptTable(f"{path}: not a readable cinqmille table ({exc.__class__.__name__})") from None
    except Exception as exc:  # a damaged file fails in zlib, the npy header parser, json...: all mean the same
        raise CorruptTable(f"{path}: not a readable cinqmille table ({exc.__class__.__name__})") from None
    if meta.get("checksum") != _checksum(arrays):
        raise CorruptTable(f"{path}: checksum mismatch (truncated or altered file)")
    if spec is not None and spec.check is not None:
        try:
            why = spec.check(arrays)
        except Exception as exc:  # arrays so wrong (0-d, overflowing) that the check itself fails
            why = f"arrays the check cannot read ({exc.__class__.__name__})"
        if why:
            raise CorruptTable(f"{path}: {why}")
    return arrays, meta


def _mismatch(spec: TableSpec, meta: Mapping[str, Any],
              headers: Mapping[str, tuple[tuple[int, ...], np.dtype]]) -> str | None:
    """Why a file's identity or array headers are not those of `spec` (None when they are)."""
    found = meta.get("table")
    if not isinstance(found, dict):
        return "no identity record (written by an older version)"
    for key, want in spec.identity().items():
        if found.get(key) != want:
            return f"it is the table of another {key.replace('_', ' ')} ({found.get(key)!r}, expected {want!r})"
    if sorted(headers) != sorted(spec.arrays):
        return f"arrays {sorted(headers)}, expected {sorted(spec.arrays)}"
    for name, (shape, dtype) in spec.arrays.items():
        got_shape, got_dtype = headers[name]
        if got_dtype != np.dtype(dtype) or (shape is not None and got_shape != tuple(shape)):
            return f"array '{name}' is {got_dtype}{list(got_shape)}, expected {np.dtype(dtype)}" \
                   f"{list(shape) if shape is not None else ''}"
    return None


def rules_from_meta(meta: Mapping[str, Any]) -> Rules:
    """The ruleset stored in a table's metadata."""
    return rules_from_dict(meta["rules"], source="table metadata")


def rules_meta(rules: Rules) -> dict[str, Any]:
    """The ruleset as stored in a table's metadata."""
    return to_dict(rules)


def try_load(path: Path, spec: TableSpec | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """Load a cache file if it is there and is the table `spec` describes; else None (with a warning).

    A damaged or foreign file is reported and deleted (the caller recomputes and
    writes it again); a file that cannot be read is reported and left alone.
    """
    try:
        if not path.exists():
            return None
        return load_npz(path, spec)
    except CorruptTable as exc:
        discard(path, exc, stacklevel=3)
        return None
    except FileNotFoundError:
        return None
    except UnreadableTable:
        warnings.warn(f"the cached table {short_path(path)} is not a regular file; solving without the cache",
                      stacklevel=2)
        raise
    except OSError as exc:
        warnings.warn(f"cannot read the cached table {short_path(path)} ({exc.strerror or exc.__class__.__name__}); "
                      "solving without the cache", stacklevel=2)
        raise UnreadableTable(str(path)) from None


def discard(path: Path, exc: Exception, stacklevel: int = 2) -> None:
    """A cache file found damaged (`exc` says why): one warning, and the file deleted so that it is recomputed."""
    text = str(exc).replace(str(path), short_path(path))
    if short_path(path) not in text:
        text = f"{short_path(path)}: {text}"
    warnings.warn(f"{text}; recomputing", stacklevel=stacklevel + 1)
    try:
        if Path(path).is_file() or Path(path).is_symlink():
            Path(path).unlink()
    except OSError:
        pass


def check_meta(meta: Mapping[str, Any], fields: Mapping[str, type | tuple[type, ...]]) -> None:
    """Raise `CorruptTable` unless every field of `fields` is in `meta` with its type (bool is not an int here;
    a list's items must be strings)."""
    for name, kind in fields.items():
        value = meta.get(name)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if ok and isinstance(value, list):
            ok = all(isinstance(x, str) for x in value)
        if not ok:
            raise CorruptTable(f"metadata '{name}' is {type(value).__name__}, expected "
                               f"{' or '.join(k.__name__ for k in kinds)}")


def short_path(path: Path, limit: int = 200) -> str:
    """A path for a one-line message: cut in the middle when longer than `limit` characters."""
    text = str(path)
    return text if len(text) <= limit else f"{text[:limit // 2 - 2]}...{text[-(limit // 2 - 1):]}"


def bounded_check(low: float, high: float, *, nan_ok: bool = True,
                  names: tuple[str, ...] | None = None, neg_inf_ok: tuple[str, ...] = ()) -> ArrayCheck:
    """A value check: every number of the float arrays (or of `names`) lies in [low, high]; NaN only if
    `nan_ok`; -inf only in the arrays of `neg_inf_ok` (a value that the rules forbid, such as banking)."""
    def check(arrays: Mapping[str, np.ndarray]) -> str | None:
        for name, arr in arrays.items():
            if names is not None and name not in names or arr.dtype.kind != "f":
                continue
            with np.errstate(invalid="ignore"):
                bad = np.isinf(arr) | (arr < low) | (arr > high)
                if name in neg_inf_ok:
                    bad &= arr != -np.inf
            if not nan_ok:
                bad |= np.isnan(arr)
            if bad.any():
                return f"array '{name}' holds values outside [{low}, {high}]"
        return None

    return check
