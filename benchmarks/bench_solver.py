"""Solver speed: cold solves of the presets, states and time per state, peak memory, and the
ratio against a plain textbook value iteration.  A script that prints figures (not a test):

    python benchmarks/bench_solver.py              # standard x3, ten-thousand x1, textbook ratio
    python benchmarks/bench_solver.py --quick      # standard x1 and the textbook ratio only
    python benchmarks/bench_solver.py --players 3  # standard for three players, x1 (--repeat N for a median)
    python benchmarks/bench_solver.py --players 4 --goal 2000 --opening 500  # four players at goal 2000
    python benchmarks/bench_solver.py --compile    # the compiled kernel's first-run cost (an empty kernel cache)

Each solve runs in a fresh process (no table cache: `compute`), so its peak memory is its own; the
compiled kernel is read from its on-disk cache (``numba/`` in the cache folder; compiled on the first run
ever: `--compile`, which gives each run a fresh CINQMILLE_CACHE). Numba's import (which the solve's first
pass would do) is timed apart and printed beside the solve's time; its first call (loading the cached
code, about 0.3 s) is inside the solve's.
Machines are shared and noisy: read the medians and the ratios.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, resource, sys, time
from cinqmille.rules import load_rules, rules_from_dict
from cinqmille.solver import compute
spec = json.loads(sys.argv[1])
rules = load_rules(spec) if isinstance(spec, str) else rules_from_dict(spec)
start = time.perf_counter()
import numba  # the solve imports it with its first pass: timed apart, so that both parts show
numba_import = time.perf_counter() - start
start = time.perf_counter()
result = compute(rules, players=int(sys.argv[2]))
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "numba_import": numba_import, "states": result.states,
                  "residual": result.residual,
                  "first_player_win": result.first_player_win,
                  "passes": result.extra.get("passes"), "levels": result.extra.get("levels"),
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def cold_solve(spec, players: int = 2, env: dict | None = None) -> dict:
    """Solve in a fresh interpreter; return its figures."""
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec), str(players)], capture_output=True, text=True,
                         check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def compile_cost() -> None:
    """The first-run compile cost: a solve with an empty Numba cache (the kernel compiled), then again (read
    from that cache), the difference; for the default ruleset (`standard`: what a first `advise` compiles) and
    for a tiny ruleset with announcements and the rule of 50 (a second version of the pass, and the terminal
    states' iteration: every compiled function)."""
    import os
    import tempfile

    tiny = {"goal": 500, "opening": 150, "prediction": True, "rule_of_50": True}
    for name, spec in (("standard", "standard"), ("tiny, every function", tiny)):
        with tempfile.TemporaryDirectory() as cache:
            env = {**os.environ, "CINQMILLE_CACHE": cache}  # the compiled kernel's cache is its numba/
            first = cold_solve(spec, env=env)["seconds"]
            again = statistics.median(cold_solve(spec, env=env)["seconds"] for _ in range(3))
        print(f"compile ({name}): first run {first:.2f} s, cached {again:.2f} s (median of 3): "
              f"compile cost {first - again:.2f} s")


def report(name: str, runs: list[dict]) -> None:
    secs = [r["seconds"] for r in runs]
    med = statistics.median(secs)
    r = runs[0]
    numba = statistics.median(x.get("numba_import", 0.0) for x in runs)
    print(f"{name:>14}: median {med:7.2f} s over {len(runs)} run(s) (min {min(secs):.2f}; and {numba:.2f} s "
          f"importing Numba before it), "
          f"{r['states']:,} states, {1e9 * med / r['states']:.0f} ns/state, "
          f"{r['passes']} kernel passes over {r['levels']} levels, peak {max(x['peak_mb'] for x in runs):.0f} MB, "
          f"residual {r['residual']:.1e}, first player {r['first_player_win']:.6f}")


def textbook_ratio(spec: dict) -> None:
    sys.path.insert(0, str(HERE))
    from textbook_vi import textbook_value_iteration

    import numpy as np
    from cinqmille.rules import rules_from_dict
    from cinqmille.solver import compute

    rules = rules_from_dict(spec, "textbook-size")
    w, sweeps, slow = textbook_value_iteration(rules, tol=1e-9)
    fast = []
    for _ in range(3):
        start = time.perf_counter()
        result = compute(rules)
        fast.append(time.perf_counter() - start)
    ok = ~np.isnan(w)
    diff = float(np.abs(w[ok] - result.values[ok]).max())
    med = statistics.median(fast)
    print(f"textbook value iteration on {spec}: {slow:.2f} s ({sweeps} sweeps of every state) "
          f"vs the solver {med:.3f} s (median of 3): ratio {slow / med:.0f}x; largest difference {diff:.1e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="standard once and the textbook ratio")
    parser.add_argument("--players", type=int, default=2, help="3: time the three-player solve of standard only")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the three-player solve (median)")
    parser.add_argument("--compile", action="store_true", help="the compiled kernel's first-run cost only")
    parser.add_argument("--goal", type=int, default=None, help="with --players: standard at this goal instead")
    parser.add_argument("--opening", type=int, default=None, help="with --goal: this opening (default standard's)")
    args = parser.parse_args()
    if args.compile:
        compile_cost()
        return
    if args.players != 2 or args.goal is not None:
        spec: object = "standard"
        name = f"standard, {args.players} players"
        if args.goal is not None:
            spec = {"goal": args.goal, **({"opening": args.opening} if args.opening is not None else {})}
            name = f"goal {args.goal}, {args.players} players"
        report(name, [cold_solve(spec, args.players) for _ in range(args.repeat)])
        return
    runs = 1 if args.quick else 3
    report("standard", [cold_solve("standard") for _ in range(runs)])
    if not args.quick:
        for name in ("wikipedia", "house", "sheet", "six-dice"):
            report(name, [cold_solve(name)])
        report("ten-thousand", [cold_solve("ten-thousand")])
    textbook_ratio({"goal": 1500, "opening": 300})


if __name__ == "__main__":
    main()
