"""A process short of memory (``ulimit -v``, an address-space limit), said in one line.

Below `FLOOR` the process cannot even load its libraries: NumPy's OpenBLAS
aborts the process while it is imported (no Python exception to catch), and
Numba's compiler library fails to load (an ``OSError`` without an error
number). `too_little` says so before anything is imported (the command line
asks it before loading a command). Above it, a want of memory can still show
as a `MemoryError`, a thread that cannot start (``RuntimeError``) or a library
that cannot be loaded (``OSError``, ``ImportError``): `worded` turns each into
one line. Two libraries still end the process themselves when an allocation
fails inside them, which no Python code can catch: OpenBLAS (NumPy's takes its
memory early, `reserve_blas`; SciPy's, loaded for three players and more, does
not) and LLVM compiling the kernel (``std::bad_alloc``, rare above `FLOOR`).
This module imports nothing heavy.
"""

from __future__ import annotations

import errno

#: The least address space in which a command can work (NumPy, Numba and its compiler loaded, the kernel
#: compiled): measured 2026-12-02, NumPy's OpenBLAS aborts below about 150 MB, Numba's compiler library loads
#: at 350 MB, not at 300 MB, LLVM can end the process compiling the kernel at 420 MB (`std::bad_alloc`), and
#: a first `advise` (the kernel compiled, `standard` solved) works from 480 MB.
FLOOR = 512 * 2**20


#: How the dynamic loader says that a library found no room (an `ImportError` of an extension module).
_NO_ROOM = ("failed to map segment", "cannot allocate memory")


def limit() -> int | None:
    """The process's address-space limit in bytes (``ulimit -v``), or None when there is none."""
    try:
        import resource  # lazy: POSIX only
    except ImportError:  # not a POSIX system
        return None
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


def reserve_blas() -> None:
    """Under an address-space limit, make OpenBLAS take its working memory now, while there is some: its first
    matrix product allocates it, and where that fails, OpenBLAS ends the process ("Memory allocation still failed
    after 10 retries"), with no exception to catch; later, a solve short of memory fails in NumPy instead, with a
    `MemoryError`. Without a limit, nothing is done (nor imported)."""
    if limit() is None:
        return
    import numpy as np  # lazy: nothing loaded without a limit

    square = np.ones((256, 256))  # big enough that every OpenBLAS thread takes a share (and its buffer)
    np.matmul(square, square)


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB"


def too_little() -> str | None:
    """Why the process cannot start its work (its address space below `FLOOR`), or None."""
    size = limit()
    if size is None or size >= FLOOR:
        return None
    return (f"the address space is limited to {_mb(size)} (ulimit -v): too little to load cinqmille's libraries "
            f"(at least {_mb(FLOOR)}; a solve needs more)")


def worded(exc: BaseException) -> str | None:
    """One line for a failure that means the process ran out of memory, or None for any other failure."""
    size = limit()
    under = f": the address space is limited to {_mb(size)} (ulimit -v)" if size is not None else ""
    if isinstance(exc, MemoryError):
        return f"out of memory{under or ' (see the limits in docs/rules.md: --max-memory, CINQMILLE_MAX_MEMORY)'}"
    if isinstance(exc, RuntimeError) and "can't start new thread" in str(exc):
        return f"out of memory: cannot start a thread{under}"
    if isinstance(exc, ImportError) and any(s in str(exc).lower() for s in _NO_ROOM):
        return f"out of memory: cannot load a library{under}"
    if isinstance(exc, OSError) and (exc.errno == errno.ENOMEM or exc.errno is None and under):
        # a shared library (Numba's compiler) that cannot be mapped under the limit has no error number
        return f"out of memory{under}"
    return None
