"""Advice latency with a warm cache: the whole command (Python start-up included) and the library call.

    python benchmarks/bench_advise.py [--rules standard] [--repeats 9]

The ruleset is solved (or loaded from the cache) first and its groups file written
(`table.groups`, what the first `advise` of a ruleset writes); then `cinqmille advise` runs
`--repeats` times as a fresh process for each of three positions (bank or roll, a keep, a bust),
Python's start-up and `import numpy` are timed the same way for scale, and the library's `advise`
is timed in one process on a cold and a warm turn table. Medians are printed: the machine is
shared and noisy, so compare medians and ratios, not single runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    rules = load_rules(args.rules)
    result = solve(rules, "win")
    ensure_groups(result)
    print(f"ruleset {rules.name}; {args.repeats} runs per position; medians")
    for label, code in (("python start-up", "pass"), ("python + import numpy", "import numpy")):
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            times.append(time.perf_counter() - start)
        print(f"  {label:<64} {statistics.median(times) * 1000:7.0f} ms")
    for pos in POSITIONS:
        times = []
        for _ in range(args.repeats):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "cinqmille", "advise", "--rules", args.rules, *pos],
                           check=True, capture_output=True)
            times.append(time.perf_counter() - start)
        print(f"  command  advise {' '.join(pos):<55} {statistics.median(times) * 1000:7.0f} ms")
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
