"""Numba's on-disk cache of the compiled kernel, kept in the user's cache folder and read with care.

Numba's own ``cache=True`` writes beside the source, in the installed
package's ``__pycache__``: files that the package's uninstaller does not know,
which then shadow a later editable install (issue 29), and that a read-only
installation cannot hold. Here each compiled function of `compiled` gets a
cache of its own (`enable`, replacing Numba's for that function only: no
process-wide Numba setting is changed) in `kernel_cache_dir` (the table
cache's folder, ``numba/``), in Numba's layout (an index per function, a data
file per compiled signature), with three differences:

- A file is read only if it is a regular file of this user, not a symbolic
  link (never opened otherwise: a FIFO would block), and its header, Numba
  version and SHA-256 checksum of its contents match. A file that is missing,
  of another Numba version or of another source is a plain miss; a damaged,
  foreign or non-regular one is a miss too, with one warning, and the fresh
  compile replaces it.
- Files are written atomically and private (`files.atomic_write`, 0600).
- A folder that cannot be written leaves the code compiled in memory, with one
  warning per process; nothing is ever written inside the package.

The files are pickles (Numba's format): the checks above are against damage
and other users, in the user's own cache folder; whoever can write there can
already run code as the user.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import stat
import sys
import warnings
from pathlib import Path
from typing import Any

import numba
from numba.core import caching as _typed_caching

from ..errors import CinqmilleError
from ..files import atomic_write
from .cache import cache_dir, short_path

#: Numba's caching classes, untyped (their methods have no annotations).
caching: Any = _typed_caching
#: The subfolder of the cache folder that holds the compiled code.
SUBDIR = "numba"
#: The first line of every file (then Numba's version, a line; the SHA-256 of the rest; the pickle).
MAGIC = b"cinqmille compiled kernel cache 1\n"
#: A file larger than this is not read (the largest compiled function is a few hundred kB).
MAX_BYTES = 64 << 20
#: How a cache file is opened: never through a symbolic link, never waiting on a FIFO.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
#: The warnings already given in this process (one of each kind).
_warned: set[str] = set()


def kernel_cache_dir() -> Path:
    """Where the compiled kernel is cached: ``numba/`` in the table cache's folder (`cache.cache_dir`)."""
    return cache_dir() / SUBDIR


def _warn_once(kind: str, message: str) -> None:
    if kind not in _warned:
        _warned.add(kind)
        warnings.warn(message, stacklevel=2)


def _header() -> bytes:
    return MAGIC + str(numba.__version__).encode() + b"\n"


def read_payload(path: str) -> bytes | None:
    """The checked contents of a cache file, or None: missing, of another Numba version (silently), or
    damaged, foreign, not a regular file, not this user's (one warning). Nothing is opened but a regular file."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    why = None
    if not stat.S_ISREG(info.st_mode):
        why = "is not a regular file"
    elif hasattr(os, "geteuid") and info.st_uid != os.geteuid():
        why = "belongs to another user"
    elif info.st_size > MAX_BYTES:
        why = "is too large"
    data = b""
    if why is None:
        try:
            fd = os.open(path, _READ_FLAGS)
        except OSError:
            return None  # gone meanwhile, or unreadable: compiled again, and rewritten if the folder allows
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):  # replaced between the two looks
                why = "is not a regular file"
            else:
                with os.fdopen(os.dup(fd), "rb") as handle:
                    data = handle.read(MAX_BYTES + 1)
        except OSError:
            return None
        finally:
            os.close(fd)
    if why is None:
        if data.startswith(MAGIC) and not data.startswith(_header()):
            return None  # written by another Numba version: replaced by the next compile, as Numba does
        head = len(_header())
        digest, payload = data[head:head + 32], data[head + 32:]
        if not data.startswith(_header()) or hashlib.sha256(payload).digest() != digest:
            why = "is damaged"
        else:
            return payload
    _warn_once("damaged", f"the compiled kernel's cache file {short_path(Path(path))} {why}; compiling it again")
    return None


def write_payload(path: str, payload: bytes) -> None:
    """Write a cache file atomically (0600): its header, checksum and `payload`. Something other than a regular
    file or a folder in its place (a FIFO, a symbolic link) is removed first, not opened."""
    try:
        mode = os.lstat(path).st_mode
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            os.unlink(path)
    except FileNotFoundError:
        pass
    data = _header() + hashlib.sha256(payload).digest() + payload

    def write(tmp: Path) -> None:
        tmp.write_bytes(data)

    atomic_write(Path(path), write, public=False)


# Numba's caching classes have no type information (they are `Any` to mypy): subclassing them is `misc` under
# --strict, hence the ignores on the four classes below.
class _Locator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):  # type: ignore[misc]
    """The function's folder in `kernel_cache_dir`, looked up at each use (the cache folder may change in a
    process: tests, the simulator's workers); its source stamp and name as Numba's."""

    def __init__(self, py_func: Any, py_file: str) -> None:
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._subpath = self.get_suitable_cache_subpath(py_file)

    def get_cache_path(self) -> str:
        return str(kernel_cache_dir() / self._subpath)

    def ensure_cache_path(self) -> None:
        os.makedirs(self.get_cache_path(), mode=0o700, exist_ok=True)


class _Impl(caching.CompileResultCacheImpl):  # type: ignore[misc]
    """Numba's compile-result cache, always with `_Locator` (never the package's ``__pycache__``, whatever
    ``NUMBA_CACHE_LOCATOR_CLASSES`` says)."""

    def __init__(self, py_func: Any) -> None:
        source = inspect.getfile(py_func)
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _Locator(py_func, source)
        module = os.path.splitext(os.path.basename(source))[0]
        self._filename_base = self.get_filename_base(f"{module}.{py_func.__qualname__}", getattr(sys, "abiflags", ""))


class _File(caching.IndexDataCacheFile):  # type: ignore[misc]
    """Numba's index and data files, read and written through `read_payload` and `write_payload`."""

    def _load_index(self) -> dict[Any, str]:
        payload = read_payload(self._index_path)
        if payload is None:
            return {}
        try:
            stamp, overloads = pickle.loads(payload)
        except Exception:  # checksummed, so written by this code: another layout
            return {}
        if stamp != self._source_stamp or not isinstance(overloads, dict):
            return {}  # another source: stale, replaced by the next compile
        return overloads

    def _save_index(self, overloads: dict[Any, str]) -> None:
        write_payload(self._index_path, self._dump((self._source_stamp, overloads)))

    def _load_data(self, name: str) -> Any:
        payload = read_payload(self._data_path(name))
        if payload is None:
            return None
        try:
            return pickle.loads(payload)
        except Exception:
            return None

    def _save_data(self, name: str, data: Any) -> None:
        write_payload(self._data_path(name), self._dump(data))

    def data_name(self, key: Any) -> str:
        """The data file of the signature `key`: named by its hash, so that two processes compiling two
        signatures at once never write one file (Numba numbers its files by the index's length, read before
        either writes: one signature's code could then be read for the other, and crash)."""
        base = self._index_name[: -len(".nbi")]
        return f"{base}.{hashlib.sha256(pickle.dumps(key)).hexdigest()[:16]}.nbc"

    def save(self, key: Any, data: Any) -> None:
        """Write the code of `key` with `key` itself (checked on load), then list it in the index."""
        name = self.data_name(key)
        self._save_data(name, (key, data))
        overloads = self._load_index()
        overloads[key] = name
        self._save_index(overloads)

    def load(self, key: Any) -> Any:
        """The code of `key`, or None: not listed, unreadable, or a file that holds another signature's code."""
        name = self._load_index().get(key)
        stored = None if name is None else self._load_data(name)
        if not (isinstance(stored, tuple) and len(stored) == 2 and stored[0] == key):
            return None
        return stored[1]


class KernelCache(caching.FunctionCache):  # type: ignore[misc]
    """The on-disk cache of one compiled function (`enable`): any failure to read is a miss (the function is
    compiled), any failure to write leaves it compiled in memory (one warning per process, none when the cache
    folder itself cannot be written: the table cache says so)."""

    _impl_class = _Impl

    def __init__(self, py_func: Any) -> None:
        self._name = repr(py_func)
        self._py_func = py_func
        self._impl = _Impl(py_func)
        self._stamp = self._impl.locator.get_source_stamp()
        self._file: _File | None = None
        self.enable()

    @property
    def _cache_path(self) -> str:
        return str(self._impl.locator.get_cache_path())

    @property
    def _cache_file(self) -> _File:
        path = self._cache_path
        if self._file is None or self._file._cache_path != path:
            self._file = _File(path, self._impl.filename_base, self._stamp)
        return self._file

    def _load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            return super()._load_overload(sig, target_context)
        except Exception:  # an index or data file that unpickles to something else: compiled again
            return None

    def _save_overload(self, sig: Any, data: Any) -> None:
        try:
            super()._save_overload(sig, data)
        except (OSError, CinqmilleError) as exc:
            folder = cache_dir()
            try:
                usable = folder.is_dir() and os.access(folder, os.W_OK)
            except OSError:  # a folder that cannot even be looked at (a path too long)
                usable = False
            if not usable:
                return  # the cache folder itself: the table cache's warning names it
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).rpartition("(")[2]
            _warn_once("unwritable", f"cannot keep the compiled kernel in {short_path(kernel_cache_dir())} "
                                     f"({reason.rstrip(')')}); it is compiled again at each run")


def enable(dispatcher: Any) -> Any:
    """Give a Numba dispatcher (``njit`` without ``cache``) its `KernelCache`; without one (its source file
    cannot be read) it compiles in memory at each run. Returns the dispatcher."""
    try:
        dispatcher._cache = KernelCache(dispatcher.py_func)
    except Exception:
        pass
    return dispatcher
