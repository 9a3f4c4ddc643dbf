"""The on-disk cache of solved tables: `.npz` files keyed by ruleset content and solver version.

Files are written atomically (temporary file, then rename), read with
`allow_pickle=False`, and checked against a checksum of their arrays; a corrupt
or truncated file is reported with a warning, deleted and recomputed.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules, content_key, rules_from_dict, to_dict

FORMAT = 1


@lru_cache(maxsize=1)
def solver_version() -> str:
    """A hash of the code that computes tables: any change to it invalidates every cache file."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256(f"format{FORMAT}".encode())
    for sub in ("solver", "dice"):
        for path in sorted((root / sub).glob("*.py")):
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    digest.update((root / "rules" / "model.py").read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path:
    """`$CINQMILLE_CACHE`, else `$XDG_CACHE_HOME/cinqmille`, else `~/.cache/cinqmille`."""
    env = os.environ.get("CINQMILLE_CACHE")
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cinqmille"


def cache_path(rules: Rules, objective: str) -> Path:
    """Where the table of `rules` for `objective` is cached."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)[:40]
    return cache_dir() / f"{safe}-{objective}-{content_key(rules)}-{solver_version()}.npz"


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


def _checksum(arrays: dict[str, np.ndarray]) -> str:
    digest = hashlib.sha256()
    for name in sorted(arrays):
        arr = np.ascontiguousarray(arrays[name])
        digest.update(name.encode())
        digest.update(str(arr.dtype).encode() + str(arr.shape).encode())
        digest.update(arr.tobytes())
    return digest.hexdigest()


def save_npz(path: Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write arrays and JSON metadata to `path` atomically, with a checksum."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {**meta, "checksum": _checksum(arrays)}
    payload = {**arrays, "meta": np.array(json.dumps(meta))}
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            np.savez_compressed(handle, **payload)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class CorruptTable(CinqmilleError):
    """A table file that cannot be read back as written."""


def load_npz(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Read a file written by `save_npz`; raise `CorruptTable` if it does not check out."""
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {name: data[name] for name in data.files if name != "meta"}
            meta = json.loads(str(data["meta"]))
    except FileNotFoundError:
        raise
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise CorruptTable(f"{path}: not a readable cinqmille table ({exc.__class__.__name__})") from None
    if meta.get("checksum") != _checksum(arrays):
        raise CorruptTable(f"{path}: checksum mismatch (truncated or altered file)")
    return arrays, meta


def rules_from_meta(meta: dict[str, Any]) -> Rules:
    """The ruleset stored in a table's metadata."""
    return rules_from_dict(meta["rules"], source="table metadata")


def rules_meta(rules: Rules) -> dict[str, Any]:
    """The ruleset as stored in a table's metadata."""
    return to_dict(rules)


def try_load(path: Path) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """Load a cache file if present and sound; warn about and delete a corrupt one."""
    if not path.exists():
        return None
    try:
        return load_npz(path)
    except CorruptTable as exc:
        warnings.warn(f"{exc}; recomputing", stacklevel=2)
        try:
            path.unlink()
        except OSError:
            pass
        return None
