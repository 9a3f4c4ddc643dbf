"""Three players and more: the figures that docs/variants.md reports, measured and recorded.

    python benchmarks/bench_three_players.py seats [PRESET ...]   # every preset solved for three players
    python benchmarks/bench_three_players.py check --games 200000 # three optimal players against the solve
    python benchmarks/bench_three_players.py reduction --games 40000  # the reduction's cost at four and six players

Each part merges its figures into `docs/figures/three-players.json` (or
`--out FILE`) with the date, the machine's load and the solver version, and
`cinqmille.research.page` writes them into docs/variants.md. The solves are the
library's (`solve(rules, players=3)`, cached); a preset beyond the default
budget (`cinqmille.solver.budget`) is recorded as not solved, with the estimate.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "figures" / "three-players.json"


def _load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text()) if path.exists() else {}


def _merge(path: Path, section: str, key: str | None, value: Any) -> None:
    """Write one figure into the record (re-read first: the parts may run one after another)."""
    data = _load(path)
    if key is None:
        data[section] = value
    else:
        data.setdefault(section, {})[key] = value
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    tmp.replace(path)


def _stamp() -> dict[str, Any]:
    from cinqmille.solver.cache import solver_version

    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_average": round(os.getloadavg()[0], 1), "solver_version": solver_version(),
            "cpus": os.cpu_count()}


def seats(presets: list[str], out: Path) -> None:
    """Solve each preset for three players (one at a time) and record each seat's chance and the time taken."""
    from cinqmille.rules import PRESET_NAMES, load_rules
    from cinqmille.solver import solve
    from cinqmille.solver.budget import Limits, TooLarge, estimate

    for name in presets or list(PRESET_NAMES):
        rules = load_rules(name)
        est = estimate(rules, "win", 3)
        record: dict[str, Any] = {"estimate_states": est.states, "estimate_gib": round(est.bytes / 2**30, 2),
                                  "budget_states": Limits.from_env().states}
        start = time.perf_counter()
        try:
            result = solve(rules, "win", players=3)
        except TooLarge as exc:
            record.update(solved=False, reason=str(exc))
        else:
            record.update(solved=True, win=list(result.win), exact=result.exact,
                          assumptions=list(result.assumptions), seconds=round(result.seconds, 1),
                          wall_seconds=round(time.perf_counter() - start, 1), states=result.states,
                          residual=result.residual)
        record.update(_stamp())
        _merge(out, "seats", name, record)
        print(name, json.dumps(record), flush=True)


def _rate(res: Any, seat: int) -> dict[str, Any]:
    """One seat's simulated figures: rate, binomial standard error, the 95% interval that `simulate` prints."""
    return {"rate": res.win_rate[seat], "se": res.std_error[seat], "ci95": list(res.ci95[seat]),
            "wins": res.wins[seat]}


def check(games: int, seed: int, jobs: int, out: Path, rules_name: str = "standard") -> None:
    """Three optimal players, `games` games: each seat's simulated win rate against the solved chance."""
    from cinqmille.table.load import policy_table
    from cinqmille.rules import load_rules
    from cinqmille.simulation import SimConfig, simulate
    from cinqmille.solver import solve

    rules = load_rules(rules_name)
    start = time.perf_counter()
    result = solve(rules, "win", players=3)
    solve_s = time.perf_counter() - start
    start = time.perf_counter()
    policy_table(rules, 3, complete=True)
    table_s = time.perf_counter() - start
    res = simulate(SimConfig(rules, ("optimal",) * 3, games, seed=seed, jobs=jobs))
    seats_out = []
    for i, win in enumerate(result.win):
        fig = _rate(res, i)
        fig.update(solved=win, z=(fig["rate"] - win) / fig["se"])
        seats_out.append(fig)
    record = {"rules": rules_name, "games": games, "seed": seed, "jobs": jobs, "engine": res.engine,
              "seats": seats_out, "exact": result.exact, "assumptions": list(result.assumptions),
              "solve_seconds": round(result.seconds, 1), "load_seconds": round(solve_s, 1),
              "table_seconds": round(table_s, 1), "simulate_seconds": round(res.seconds, 1),
              "mean_turns": res.mean_turns, "median_turns": res.median_turns, **_stamp()}
    _merge(out, "check", rules_name, record)
    print(json.dumps(record, indent=1), flush=True)


def reduction(games: int, seed: int, jobs: int, out: Path, counts: tuple[int, ...] = (4, 6),
              thresholds: tuple[int, ...] = (150, 200, 250, 300, 350, 400), scan_games: int = 5_000,
              rules_name: str = "standard") -> None:
    """The reduction's cost at 4 and 6 players: the reduced optimal player against copies of the best threshold
    heuristic (found by a smaller scan, then played with a fresh seed) and against reduced optimal players."""
    from cinqmille.rules import load_rules
    from cinqmille.simulation import SimConfig, simulate

    rules = load_rules(rules_name)
    for n in counts:
        start = time.perf_counter()
        scan = {}
        for t_ in thresholds:
            heur = f"threshold:{t_}"
            res = simulate(SimConfig(rules, ("optimal",) + (heur,) * (n - 1), scan_games, seed=seed + 1, jobs=jobs))
            scan[heur] = res.win_rate[0]
        best = min(scan, key=lambda h: scan[h])  # the heuristic that the optimal player beats least
        against_heuristic = []
        for i in range(n):
            seats = [best] * n
            seats[i] = "optimal"
            res = simulate(SimConfig(rules, tuple(seats), games, seed=seed, jobs=jobs))
            against_heuristic.append(_rate(res, i))
        res = simulate(SimConfig(rules, ("optimal",) * n, games, seed=seed, jobs=jobs))
        all_optimal = [_rate(res, i) for i in range(n)]
        record = {"rules": rules_name, "players": n, "games": games, "seed": seed, "scan_games": scan_games,
                  "scan_seed": seed + 1, "scan": scan, "heuristic": best, "engine": res.engine,
                  "against_heuristic": against_heuristic, "all_optimal": all_optimal,
                  "mean_turns": res.mean_turns, "seconds": round(time.perf_counter() - start, 1), **_stamp()}
        _merge(out, "reduction", str(n), record)
        print(json.dumps(record, indent=1), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("seats", "check", "reduction"))
    parser.add_argument("presets", nargs="*")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--games", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if args.part == "seats":
        seats(args.presets, args.out)
    elif args.part == "check":
        check(args.games, args.seed, args.jobs, args.out, *(args.presets[:1]))
    else:
        reduction(args.games, args.seed, args.jobs, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
