"""Files that cinqmille writes: atomically (a temporary file, then a rename), cleaning what a crash left.

A temporary file is named ``.{target}.{pid}.{random}.tmp`` beside its target.
A run that was killed before the rename leaves one behind; the next write to
the same directory removes those whose process is gone (and, for names
without a process id, those older than `STALE_SECONDS`).
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .errors import CinqmilleError


class WriteError(CinqmilleError):
    """A file that cannot be written: a target in the way, a folder that cannot be written, a full disk."""


#: Age after which a temporary file of unknown owner is taken as left by a crash.
STALE_SECONDS = 3600

_TMP = re.compile(r"^\..+?\.(?:(?P<pid>\d+)\.)?[^.]*\.tmp$")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


def clean_stale_tmp(directory: Path, target: str | None = None) -> int:
    """Delete the temporary files of dead writers in `directory` (of `target` only, if named); return how many."""
    removed = 0
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return 0
    now = time.time()
    for entry in entries:
        match = _TMP.match(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False):
            continue
        if target is not None and not entry.name.startswith(f".{target[:80]}."):
            continue
        pid = match.group("pid")
        try:
            stale = (not _alive(int(pid))) if pid else now - entry.stat().st_mtime > STALE_SECONDS
            if stale and (not pid or int(pid) != os.getpid()):
                os.unlink(entry.path)
                removed += 1
        except OSError:
            pass
    return removed


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def check_target(path: Path, links: bool = True) -> None:
    """Refuse (`WriteError`, one line) a target that exists and is not a regular file, or a link to one.

    A rename would put a regular file in the place of a device, a FIFO, a
    socket or a symbolic link to one of them (a directory cannot be renamed
    over at all); a missing target, a regular file and a dangling link are fine.
    With `links` False any symbolic link is refused too (figures: the user who
    links a figure's name somewhere meant something we cannot guess).
    """
    path = Path(path)
    if not links and path.is_symlink():
        raise WriteError(f"{path}: is a symbolic link, not a regular file; refusing to write through it or "
                         f"replace it")
    try:
        info = os.stat(path)  # follows symbolic links: a link to /dev/null is a device
    except FileNotFoundError:
        return
    except OSError as exc:
        raise WriteError(f"{path}: cannot write here ({exc.strerror or exc})") from None
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
        link = " (through a symbolic link)" if path.is_symlink() else ""
        raise WriteError(f"{path}: is {kind}{link}, not a regular file; refusing to replace it")


def check_folder(path: Path) -> None:
    """Refuse (`WriteError`, one line) a target whose folder cannot be written, before any work.

    The nearest folder of `path` that exists must be a directory in which a
    file can be made: a temporary file is made there and removed (a
    read-only folder or file system, or a folder of another user, fails
    here, as it would after the work). The target itself is checked by
    `check_target`.
    """
    folder = Path(path).absolute().parent
    while not os.path.lexists(folder) and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise WriteError(f"{path}: cannot write here ({folder} is not a directory)")
    try:
        import tempfile  # lazy: start-up time (a warm advice writes nothing)

        fd, name = tempfile.mkstemp(prefix=f".{Path(path).name[:80]}.{os.getpid()}.", suffix=".tmp", dir=folder)
        os.close(fd)
        os.unlink(name)
    except OSError as exc:
        raise WriteError(f"{path}: cannot write here ({os_words(exc)})") from None


def error_chain(exc: BaseException) -> list[BaseException]:
    """`exc` and the exceptions it was raised from or while handling, outermost first."""
    out: list[BaseException] = []
    found: BaseException | None = exc
    while found is not None and all(found is not seen for seen in out):
        out.append(found)
        found = found.__cause__ or found.__context__
    return out


def os_error_of(exc: BaseException) -> OSError | None:
    """The `OSError` that `exc` is, or that it was raised while handling (a library may turn a full disk into
    another error: matplotlib's PDF backend raises an `AttributeError` while closing a stream it could not
    write); None if there is none."""
    return next((e for e in error_chain(exc) if isinstance(e, OSError)), None)


def os_words(exc: OSError) -> str:
    """The reason of an `OSError` in words (its `strerror`, else its text, else its class name)."""
    return str(exc.strerror or str(exc) or exc.__class__.__name__)


def atomic_write(path: Path, write: Callable[[Path], None], *, public: bool = True, links: bool = True) -> None:
    """Call `write(tmp)` on a temporary file beside `path`, then rename it to `path`.

    `public` gives the file the usual permissions (umask) instead of 0600. A
    target that exists and is not a regular file (with `links` False: or is a
    symbolic link) is refused (`check_target`) before anything is written. An
    `OSError`, or an error raised while handling one (`os_error_of`: a full
    disk), becomes a one-line `WriteError`; nothing is left behind.
    """
    path = Path(path)
    check_target(path, links)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        clean_stale_tmp(path.parent, path.name)
        import tempfile  # lazy: start-up time (a warm advice writes nothing)

        fd, name = tempfile.mkstemp(prefix=f".{path.name[:80]}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise WriteError(f"{path}: cannot write here ({os_words(exc)})") from None
    tmp = Path(name)
    try:
        os.close(fd)
        if public:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        write(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        error = os_error_of(exc) if isinstance(exc, Exception) and not isinstance(exc, CinqmilleError) else None
        if error is not None:
            raise WriteError(f"{path}: cannot write ({os_words(error)})") from None
        raise


def atomic_write_all(jobs: Sequence[tuple[Path, Callable[[Path], None]]], *, public: bool = True) -> None:
    """Write several files as one: every target is checked (`check_target`) before any is written, each is
    written to its temporary file, and they are renamed at the end, the first one last."""
    for path, _ in jobs:
        check_target(path)
    _nested(list(jobs), public)


def _nested(jobs: list[tuple[Path, Callable[[Path], None]]], public: bool) -> None:
    if not jobs:
        return
    (path, write), rest = jobs[0], jobs[1:]

    def then_rest(tmp: Path) -> None:
        write(tmp)
        _nested(rest, public)

    atomic_write(path, then_rest, public=public)
