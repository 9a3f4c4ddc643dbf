"""Advice latency with a warm cache: the whole command (Python start-up included) and the library call.

    python benchmarks/bench_advise.py [--rules standard] [--repeats 9]

The ruleset is solved (or loaded from the cache) first and its groups file written
(`table.groups`, what the first `advise` of a ruleset writes); then `cinqmille advise` runs
`--repeats` times as a fresh process for each of three positions (bank or roll, a keep, a bust),
Python's start-up and `import numpy` are timed the same way for scale, and the library's `advise`
is timed in one process on a cold and a warm turn table. Medians are printed, of the wall time and of the
CPU time (user + system) of each process, with the load average: the machine is shared and noisy, so
compare medians and ratios (the CPU time moves less with the load than the wall time), not single runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

from cinqmille.app.advice import advise
from cinqmille.table.groups import ensure_groups
from cinqmille.table.position import Position
from cinqmille.rules import load_rules
from cinqmille.solver import solve

POSITIONS = (
    ("--me", "2000", "--opp", "3000", "--turn", "300", "--dice", "2"),
    ("--me", "2000", "--opp", "3000", "--turn", "700", "--roll", "1,5,3,3,2"),
    ("--me", "2000", "--opp", "3000", "--roll", "2,3,4,6,6"),
)


def timed(command: Sequence[str], repeats: int) -> str:
    """Median wall and CPU time (user + system) of `repeats` runs of `command`, as printed."""
    walls, cpus = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return f"{statistics.median(walls) * 1000:7.0f} ms (CPU {statistics.median(cpus) * 1000:4.0f} ms)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    rules = load_rules(args.rules)
    result = solve(rules, "win")
    ensure_groups(result)
    print(f"ruleset {rules.name}; {args.repeats} runs per position; medians; load average "
          f"{os.getloadavg()[0]:.1f}")
    for label, code in (("python start-up", "pass"), ("python + import numpy", "import numpy")):
        print(f"  {label:<64} {timed([sys.executable, '-c', code], args.repeats)}")
    for pos in POSITIONS:
        took = timed([sys.executable, "-m", "cinqmille", "advise", "--rules", args.rules, *pos], args.repeats)
        print(f"  command  advise {' '.join(pos):<55} {took}")
    print(f"  (load average {os.getloadavg()[0]:.1f})")
    cold, warm = [], []
    for i in range(args.repeats):
        me = 1000 + 50 * i
        start = time.perf_counter()
        advise(result, Position(me, 3000, 300, 2))
        cold.append(time.perf_counter() - start)
        start = time.perf_counter()
        advise(result, Position(me, 3000, 300, 2))
        warm.append(time.perf_counter() - start)
    print(f"  library advise, new score pair: {statistics.median(cold) * 1000:.1f} ms; "
          f"same pair again: {statistics.median(warm) * 1000:.2f} ms")


if __name__ == "__main__":
    main()
