"""The chance of a game larger than its solved table, estimated by playing it out: time and margin.

    python benchmarks/bench_estimate.py [--rules standard] [--repeats 5]

The smaller table's complete policy table is loaded (or built and cached) first, and that load is timed once;
then, in one process, `advise` is timed `--repeats` times at four, five and six players for a bank-or-roll
position and for a keep (every option estimated from its own start, 10,000 games each), and the figure's
margin (95 %) is printed. Medians: the machine is shared and noisy, so compare medians and ratios.
"""

from __future__ import annotations

import argparse
import statistics
import time

from cinqmille.app.advice import advise
from cinqmille.table.load import policy_table
from cinqmille.table.position import Position
from cinqmille.rules import load_rules
from cinqmille.solver import solve
from cinqmille.solver.api import table_players

QUESTIONS = (
    ("bank or roll", dict(me=2000, turn=300, dice=2), None),
    ("keep", dict(me=2000, turn=0, dice=None), "15332"),
)
OPPONENTS = {4: (3000, 1500, 2500), 5: (3000, 1500, 2500, 800), 6: (3000, 1500, 2500, 800, 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    rules = load_rules(args.rules)
    for players, others in OPPONENTS.items():
        seats = table_players(rules, players)
        result = solve(rules, "win", players=seats)
        start = time.perf_counter()
        policy_table(rules, seats, complete=True)
        print(f"{players} players, the {seats}-player table: loaded in {time.perf_counter() - start:.1f} s")
        for label, where, roll in QUESTIONS:
            position = Position(where["me"], others[0], where["turn"], where["dice"], others=others)
            times, margin = [], 0.0
            for _ in range(args.repeats):
                begin = time.perf_counter()
                answer = advise(result, position, roll)
                times.append(time.perf_counter() - begin)
                margin = answer.figure.margin
            print(f"  {label:<13} {len(answer.options)} options  median {statistics.median(times):5.2f} s  "
                  f"({answer.figure.kind}, within {100 * margin:.2f} points at 95 %)")


if __name__ == "__main__":
    main()
