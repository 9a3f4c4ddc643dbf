"""A level's passes on a Dask cluster: `use_cluster(address)` for solves beyond one machine.

Within a pass the rows are independent given the values of the levels above
(their bank values) and the current bust values, so `TurnKernel.run` cuts a
pass over many rows into chunks of consecutive rows (they are sorted by cap,
so a chunk's layers stay alike) and runs each on a worker of the cluster:
the worker builds the ruleset's kernel once (kept per ruleset in the
worker's process) and runs the same compiled pass over its chunk. Each
row's arithmetic does not depend on the chunk it is in, so a distributed
solve gives the same bits as one in this process (a test checks it for
two, three and four players). What travels: per pass, each chunk's bust
values and its banks (`chunk_banks`: where the pass reads them from the turn
starts, the turn starts of the chunk's opponents' scores and the bank codes
of its movers' scores; else its rows of the laid-out bank table), and back
its (A, B); the solve's turn-start values stay with the driver, which
gathers the levels.

Needs the optional `dask` extra (`pip install 'cinqmille[dask]'`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules, content_key
from .kernel import CLUSTER, ON_WORKER, BankTable, Pair, StartBanks, TurnKernel, bank_rows

#: Passes over fewer rows run in this process (a round trip to the cluster costs more than they do).
MIN_ROWS = 512
#: Chunks per worker of one pass (some slack for workers of unequal speed).
CHUNKS_PER_WORKER = 2

_KERNELS: dict[tuple[str, float], TurnKernel] = {}  # a worker's kernels, by ruleset and value of a won game
_LOCK = threading.Lock()


def _worker_kernel(rules: Rules, win_value: float) -> TurnKernel:
    key = (content_key(rules), win_value)
    with _LOCK:
        if key not in _KERNELS:
            _KERNELS[key] = TurnKernel(rules, win_value=win_value)
        return _KERNELS[key]


def chunk_banks(bank: BankTable | StartBanks, rows: np.ndarray) -> BankTable | StartBanks:
    """What a chunk of rows needs of a pass's banks: read from the turn starts (`StartBanks`), the codes of its
    movers' scores and the turn starts of its opponents' scores only (a few MB: the arrays the pass reads, so
    the same bits); a laid-out `BankTable`, its rows."""
    if isinstance(bank, StartBanks):
        movers, mover = np.unique(bank.mover[rows], return_inverse=True)
        others, other = np.unique(bank.others[rows], return_inverse=True)
        return StartBanks(np.ascontiguousarray(bank.code[movers]), np.ascontiguousarray(bank.starts[others]),
                          mover.astype(np.int64).reshape(-1), other.astype(np.int64).reshape(-1), bank.win_value,
                          bank.per_seat)
    return bank_rows(bank, rows)


def _run_chunk(rules: Rules, win_value: float, scores: np.ndarray, caps: np.ndarray, bank: BankTable | StartBanks,
               l0: np.ndarray, term: Pair | None) -> tuple[np.ndarray, np.ndarray]:
    """On a worker: the compiled pass over one chunk of rows, in the worker's own process."""
    ON_WORKER.on = True  # a worker in the driver's process (threads) must not send the chunk on again
    try:
        a, b, _, _ = _worker_kernel(rules, win_value).run(scores, caps, bank, l0, term_bank=term)
    finally:
        ON_WORKER.on = False
    return a, b


def run_on_cluster(client: Any, kernel: TurnKernel, scores: np.ndarray, caps: np.ndarray,
                   bank: BankTable | StartBanks,
                   l0: np.ndarray, term_bank: Pair | None, rows: np.ndarray | None) -> Pair | None:
    """(A, B) of a pass run in chunks on the cluster of `client`; None when the pass is too small to send."""
    index = np.arange(len(scores)) if rows is None else np.asarray(rows, dtype=np.int64)
    if len(index) < MIN_ROWS:
        return None
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    cuts = np.array_split(index, min(len(index), workers * CHUNKS_PER_WORKER))
    l0 = np.asarray(l0, dtype=float)
    starts = np.cumsum([0] + [len(c) for c in cuts])
    futures = []
    for k, chunk in enumerate(cuts):
        term = None if term_bank is None else (np.ascontiguousarray(term_bank[0][chunk]),
                                               np.ascontiguousarray(term_bank[1][chunk]))
        futures.append(client.submit(_run_chunk, kernel.rules, kernel.win_value, scores[chunk], caps[chunk],
                                     chunk_banks(bank, chunk), l0[starts[k]:starts[k + 1]], term, pure=False))
    parts = client.gather(futures)
    return np.concatenate([x[0] for x in parts]), np.concatenate([x[1] for x in parts])


@contextmanager
def use_cluster(scheduler: Any) -> Iterator[Any]:
    """Run the solver's large passes on the Dask cluster at `scheduler` (an address such as tcp://host:8786, or a
    `distributed.Client`) while the block runs; yields the client."""
    try:
        from distributed import Client  # lazy: optional dependency (extra 'dask')
    except ImportError:
        raise CinqmilleError("--scheduler needs Dask's distributed scheduler: pip install 'cinqmille[dask]'") from None
    own = not isinstance(scheduler, Client)
    try:
        client = Client(scheduler, timeout=10) if own else scheduler
    except (OSError, TimeoutError, ValueError) as exc:
        raise CinqmilleError(f"--scheduler: cannot reach a Dask scheduler at {scheduler!r} ({exc})") from None
    CLUSTER[:] = [partial(run_on_cluster, client)]
    try:
        yield client
    finally:
        CLUSTER.clear()
        if own:
            client.close()
