"""A solve on a Dask cluster, measured per worker: a script that prints figures (not a test).

    python benchmarks/bench_cluster.py                       # three players, goal 3000, two local workers
    python benchmarks/bench_cluster.py --players 4 --goal 1500 --opening 300 --workers 2
    python benchmarks/bench_cluster.py --players 5 --goal 1000 --opening 300 --json

The ruleset is solved in this process, then with every pass of `distributed.MIN_ROWS` rows or more sent
to a local cluster of `--workers` worker processes (one thread each) through `solve --scheduler`'s code
path (`distributed.use_cluster`). Printed: the turn states, both wall times, the passes sent, the bytes
shipped to the workers (each chunk's banks, `distributed.chunk_banks`, its scores, caps and bust values)
and back (its (A, B)), in all, per turn state and per level (the largest), with what the model of
docs/solver.md ("Five players at 5000 on a cluster") predicts from the chunks' distinct opponents' scores,
each worker's peak memory and compute time (the chunks' own CPU, measured on the worker) per turn state,
the driver's CPU per turn state, and whether the two tables are the same bits. On one machine the workers
share its cores with the driver, so for sizing a cluster read the per-worker figures, not the wall time
(docs/solver.md, "Beyond one machine").
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
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    from cinqmille.rules import rules_from_dict
    from cinqmille.solver import compute, distributed, n_player
    from cinqmille.solver.grid import ScoreGrid

    spec: dict[str, Any] = {"goal": args.goal}
    if args.opening is not None:
        spec["opening"] = args.opening
    rules = rules_from_dict(spec, f"bench{args.players}")
    grid = ScoreGrid.of(rules)
    s, k, d = len(grid.scores), args.players - 1, rules.dice
    cpu0, start = time.process_time(), time.perf_counter()
    here = compute(rules, players=args.players)
    alone, alone_cpu = time.perf_counter() - start, time.process_time() - cpu0

    # per level (in solving order): rows, turn states, bytes out and back, passes sent, turn states sent, and the
    # bytes the model predicts (each chunk's distinct opponents' scores x s x k floats, its distinct movers'
    # bank codes, 40 bytes a row: scores, caps, bust values and the two indices into them)
    levels: list[dict[str, int]] = []
    laid = distributed.chunk_banks
    real_run = distributed.run_on_cluster
    real_level = n_player.solve_level

    def counting(bank: Any, rows: Any) -> Any:
        part = laid(bank, rows)
        level = levels[-1]
        level["out"] += sum(x.nbytes for x in (getattr(part, name, None) for name in
                                               ("a", "b", "code", "starts", "mover", "others")) if x is not None)
        if hasattr(part, "starts"):
            level["model"] += part.starts.shape[0] * s * k * 8 + part.code.nbytes + len(rows) * 16
        return part

    def sending(client: Any, kernel: Any, scores: Any, caps: Any, bank: Any, l0: Any, term: Any, rows: Any) -> Any:
        cpu = time.process_time()
        done = real_run(client, kernel, scores, caps, bank, l0, term, rows)
        levels[-1]["sending_ns"] += int((time.process_time() - cpu) * 1e9)  # the driver's CPU while a pass is out
        if done is not None:
            index = np.arange(len(scores)) if rows is None else np.asarray(rows)
            level = levels[-1]
            level["passes"] += 1
            level["sent_states"] += int((caps[index] + 1).sum()) * d
            extra = 0 if term is None else sum(int(x[index].nbytes) for x in term)
            level["out"] += len(index) * 24 + extra
            level["model"] += len(index) * 24 + extra
            level["back"] += int(done[0].nbytes + done[1].nbytes)
        return done

    def leveled(kernel: Any, turns: Any, tol: float) -> Any:
        levels.append({"rows": len(turns.a), "states": int((turns.caps + 1).sum()) * d, "out": 0, "back": 0,
                       "model": 0, "passes": 0, "sent_states": 0, "sending_ns": 0})
        return real_level(kernel, turns, tol)

    distributed.chunk_banks = counting  # type: ignore[assignment]
    distributed.run_on_cluster = sending  # type: ignore[assignment]
    distributed._run_chunk = _timed_chunk  # type: ignore[assignment]  # pickled by value: timed on the worker
    n_player.solve_level = leveled  # type: ignore[assignment]
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as local, Client(local) as client:
        with distributed.use_cluster(client):
            cpu0, start = time.process_time(), time.perf_counter()
            there = compute(rules, players=args.players)
            spread, driver_cpu = time.perf_counter() - start, time.process_time() - cpu0
        figures = list(client.run(_worker_figures).values())
    states = here.states
    same = np.array_equal(here.values, there.values, equal_nan=True)
    out = sum(lv["out"] for lv in levels)
    back = sum(lv["back"] for lv in levels)
    model = sum(lv["model"] for lv in levels)
    sent_states = sum(lv["sent_states"] for lv in levels)
    top = max(levels, key=lambda lv: lv["out"])
    busy = sum(b for _, b in figures)
    result = {
        "players": args.players, "goal": rules.goal, "opening": rules.opening, "scores": s, "workers": args.workers,
        "states": states, "levels": len(levels), "largest_level_rows": max(lv["rows"] for lv in levels),
        "alone_s": round(alone, 2), "alone_cpu_ns_per_state": round(alone_cpu / states * 1e9, 1),
        "cluster_s": round(spread, 2), "driver_cpu_ns_per_state": round(driver_cpu / states * 1e9, 1),
        "driver_sending_ns_per_state": round(sum(lv["sending_ns"] for lv in levels) / states, 1),
        "worker_cpu_ns_per_state": round(busy / states * 1e9, 1), "passes_sent": sum(lv["passes"] for lv in levels),
        "states_sent": sent_states, "bytes_out": out, "bytes_back": back, "bytes_per_state": round((out + back) / states, 2),
        "model_bytes_out": model, "largest_level_bytes": top["out"] + top["back"], "largest_level_rows_of_it": top["rows"],
        "largest_level_passes": top["passes"], "worker_peak_mb": [round(p) for p, _ in figures],
        "worker_cpu_s": [round(b, 2) for _, b in figures], "same_bits": bool(same),
    }
    if args.json:
        import json

        print(json.dumps(result))
        return
    print(f"{rules.goal} points (opening {rules.opening}), {args.players} players, {s} scores: {states:,} turn states, "
          f"{len(levels)} levels; in this process {alone:.1f} s ({result['alone_cpu_ns_per_state']} ns of CPU a "
          f"state), on {args.workers} local workers {spread:.1f} s; same bits: {same}")
    print(f"  sent: {result['passes_sent']} passes, {sent_states:,} turn states; shipped {out / 1e6:,.1f} MB out "
          f"(the model: {model / 1e6:,.1f} MB) and {back / 1e6:,.1f} MB back, {result['bytes_per_state']} bytes a "
          f"turn state; largest level {(top['out'] + top['back']) / 1e6:,.1f} MB ({top['rows']:,} rows, "
          f"{top['passes']} passes)")
    print(f"  driver {result['driver_cpu_ns_per_state']} ns of CPU a state ({result['driver_sending_ns_per_state']} "
          f"while passes are out: chunks cut, sent and gathered, the local scheduler; the rest the level solver's "
          f"own work); workers {result['worker_cpu_ns_per_state']} ns of CPU a state in all")
    for i, (peak, b) in enumerate(figures):
        print(f"  worker {i}: peak {peak:,.0f} MB, chunks {b:.1f} s of CPU")


if __name__ == "__main__":
    main()
