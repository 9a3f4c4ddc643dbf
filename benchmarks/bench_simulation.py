"""Simulation speed: games per second of optimal against optimal (standard), 1 and 2 workers, and the
wall time of one million games. A script that prints figures, not a timed test.

    python benchmarks/bench_simulation.py [--games 1000000] [--repeats 3] [--rules standard]

The solved table and the policy table are built (or loaded from the cache) before any timing; each
timing is the median of `--repeats` runs of `simulate` with a warm worker pool.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from cinqmille.table.load import policy_table
from cinqmille.rules import load_rules
from cinqmille.simulation import SimConfig, simulate
from cinqmille.solver import solve


def timed(config: SimConfig) -> tuple[float, float]:
    """(wall seconds, first-player win rate) of one simulation."""
    start = time.perf_counter()
    res = simulate(config)
    return time.perf_counter() - start, res.win_rate[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--scaling-games", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rules = load_rules(args.rules)
    print(f"cpus: {os.cpu_count()}; ruleset {rules.name}")
    t0 = time.perf_counter()
    solved = solve(rules, "win")
    policy_table(rules, 2)
    print(f"solve + policy table (or cache load): {time.perf_counter() - t0:.1f} s; "
          f"solved first-player win {solved.first_player_win:.5f}")
    rates = {}
    for jobs in (1, 2):
        config = SimConfig(rules, ("optimal", "optimal"), args.scaling_games, seed=1, jobs=jobs)
        simulate(SimConfig(rules, ("optimal", "optimal"), 50_000, seed=99, jobs=jobs))  # warm the workers
        runs = [timed(config)[0] for _ in range(args.repeats)]
        rates[jobs] = args.scaling_games / statistics.median(runs)
        print(f"jobs={jobs}: {args.scaling_games:,} games, median {statistics.median(runs):.2f} s "
              f"({', '.join(f'{r:.2f}' for r in runs)}) -> {rates[jobs]:,.0f} games/s")
    print(f"speed-up 1 -> 2 workers: {rates[2] / rates[1]:.2f}x")
    runs = []
    for _ in range(args.repeats):
        seconds, rate = timed(SimConfig(rules, ("optimal", "optimal"), args.games, seed=2024, jobs=2))
        runs.append(seconds)
    se = (rate * (1 - rate) / args.games) ** 0.5
    print(f"{args.games:,} games, 2 workers: median {statistics.median(runs):.1f} s "
          f"({', '.join(f'{r:.1f}' for r in runs)}); first-player win {rate:.5f} ± {se:.5f} "
          f"(solved {solved.first_player_win:.5f}, {abs(rate - solved.first_player_win) / se:.1f} SE)")


if __name__ == "__main__":
    main()
