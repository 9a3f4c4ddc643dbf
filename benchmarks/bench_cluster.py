"""A solve on a Dask cluster, measured per worker: a script that prints figures (not a test).

    python benchmarks/bench_cluster.py                       # three players, goal 3000, two local workers
    python benchmarks/bench_cluster.py --players 4 --goal 1500 --opening 300 --workers 2

The ruleset is solved in this process, then with every pass of `distributed.MIN_ROWS` rows or more sent
to a local cluster of `--workers` worker processes (one thread each) through `solve --scheduler`'s code
path (`distributed.use_cluster`). Printed: the turn states, both wall times, the passes sent, the banks
shipped to the workers (MB), each worker's peak memory and compute time (the chunks' own time,
measured on the worker) per turn state, and whether the two tables are the same bits. On one machine the
workers share its cores with the driver, so for sizing a cluster read the per-worker figures, not the
wall time (docs/solver.md, "Beyond one machine").
"""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any

import numpy as np


def _timed_chunk(*args: Any) -> Any:
    """`distributed._run_chunk` on a worker, its time added to the worker's total."""
    from cinqmille.solver import distributed

    start = time.process_time()
    out = distributed._run_chunk(*args)
    busy = distributed.__dict__.setdefault("_BENCH_BUSY", [0.0])
    busy[0] += time.process_time() - start
    return out


def _worker_figures() -> tuple[float, float]:
    """(peak resident MB, seconds of chunks) of this worker process."""
    from cinqmille.solver import distributed

    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            float(distributed.__dict__.get("_BENCH_BUSY", [0.0])[0]))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--goal", type=int, default=3000)
    parser.add_argument("--opening", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    from cinqmille.rules import rules_from_dict
    from cinqmille.solver import compute, distributed

    spec: dict[str, Any] = {"goal": args.goal}
    if args.opening is not None:
        spec["opening"] = args.opening
    rules = rules_from_dict(spec, f"bench{args.players}")
    start = time.perf_counter()
    here = compute(rules, players=args.players)
    alone = time.perf_counter() - start

    shipped, sent = [0], [0]
    laid = distributed.chunk_banks

    def counting(bank: Any, rows: Any) -> Any:
        part = laid(bank, rows)
        shipped[0] += sum(x.nbytes for x in (getattr(part, name, None) for name in
                                              ("a", "b", "code", "starts", "mover", "others")) if x is not None)
        return part

    real = distributed.run_on_cluster

    def sending(*call: Any) -> Any:
        done = real(*call)
        sent[0] += done is not None
        return done

    distributed.chunk_banks = counting  # type: ignore[assignment]
    distributed.run_on_cluster = sending  # type: ignore[assignment]
    distributed._run_chunk = _timed_chunk  # type: ignore[assignment]  # pickled by value: timed on the worker
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as local, Client(local) as client:
        with distributed.use_cluster(client):
            start = time.perf_counter()
            there = compute(rules, players=args.players)
            spread = time.perf_counter() - start
        figures = list(client.run(_worker_figures).values())
    states = here.states
    same = np.array_equal(here.values, there.values, equal_nan=True)
    print(f"{rules.goal} points, {args.players} players: {states:,} turn states; in this process {alone:.1f} s, "
          f"on {args.workers} local workers {spread:.1f} s ({sent[0]} passes sent, "
          f"{shipped[0] / 1e6:,.1f} MB of banks shipped, {shipped[0] / states:.1f} bytes a turn state); "
          f"same bits: {same}")
    for i, (peak, busy) in enumerate(figures):
        print(f"  worker {i}: peak {peak:,.0f} MB, chunks {busy:.1f} s of CPU, "
              f"{busy / states * 1e9 * args.workers:,.0f} ns of CPU per turn state of its share")


if __name__ == "__main__":
    main()
