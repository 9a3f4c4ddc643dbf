"""The page's figures of three players and more, computed by its one command (`rebuild.three_players`).

- `seat_record`: a preset solved for three players (`solve(rules, players=3)`,
  from the cache when there), each seat's chance, the time, the states, the
  assumptions; a preset beyond `PAGE_LIMITS` is recorded as not solved, with
  the budget's estimate;
- `check_record`: three optimal players played against the solve (the
  vectorised simulator), each seat's simulated rate beside the solved chance;
- `crowd_record`: a table of `players` beyond the largest exact one (six),
  where no exact game exists to measure the reduced player against: the
  reduced optimal player in each seat against copies of the best fixed
  threshold, and every seat optimal, in play (estimated, with margins).

Each record carries the date, the machine's load and the solver version.
"""

from __future__ import annotations

import datetime
import os
import time
from typing import Any

from ..rules import load_rules
from ..simulation import SimConfig, simulate
from ..solver import solve
from ..solver.budget import Limits, TooLarge, estimate
from ..solver.cache import solver_version

#: The largest three-player solve the page makes (turn states; the default memory limit): every preset up to
#: `six-dice` (about 213 million); the larger ones are listed with the budget's estimate.
PAGE_LIMITS = Limits(states=250_000_000)
#: The table size whose reduced player is measured in play (four players are measured exactly:
#: `reduction.reduction_cost`).
CROWD = 6


def stamp() -> dict[str, Any]:
    """When, at what load and by which solver a figure was computed."""
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "load_average": round(os.getloadavg()[0], 1), "solver_version": solver_version(),
            "cpus": os.cpu_count()}


def seat_record(name: str, limits: Limits = PAGE_LIMITS) -> dict[str, Any]:
    """Solve the preset `name` for three players and record each seat's chance and the time taken."""
    rules = load_rules(name)
    est = estimate(rules, "win", 3)
    record: dict[str, Any] = {"estimate_states": est.states, "estimate_gib": round(est.bytes / 2**30, 2),
                              "budget_states": limits.states}
    start = time.perf_counter()
    try:
        result = solve(rules, "win", players=3, limits=limits)
    except TooLarge as exc:
        record.update(solved=False, reason=str(exc))
    else:
        record.update(solved=True, win=list(result.win), exact=result.exact,
                      assumptions=list(result.assumptions), seconds=round(result.seconds, 1),
                      wall_seconds=round(time.perf_counter() - start, 1), states=result.states,
                      residual=result.residual)
    return {**record, **stamp()}


def _rate(res: Any, seat: int) -> dict[str, Any]:
    """One seat's simulated figures: rate, binomial standard error, the 95% interval that `simulate` prints."""
    return {"rate": res.win_rate[seat], "se": res.std_error[seat], "ci95": list(res.ci95[seat]),
            "wins": res.wins[seat]}


def check_record(rules_name: str = "standard", games: int = 200_000, seed: int = 0,
                 jobs: int = 1) -> dict[str, Any]:
    """Three optimal players, `games` games: each seat's simulated win rate against the solved chance."""
    rules = load_rules(rules_name)
    result = solve(rules, "win", players=3)
    res = simulate(SimConfig(rules, ("optimal",) * 3, games, seed=seed, jobs=jobs))
    seats = []
    for i, win in enumerate(result.win):
        fig = _rate(res, i)
        fig.update(solved=win, z=(fig["rate"] - win) / fig["se"])
        seats.append(fig)
    return {"rules": rules_name, "games": games, "seed": seed, "jobs": jobs, "engine": res.engine,
            "seats": seats, "exact": result.exact, "assumptions": list(result.assumptions),
            "simulate_seconds": round(res.seconds, 1), "mean_turns": res.mean_turns,
            "median_turns": res.median_turns, **stamp()}


def crowd_record(players: int = CROWD, games: int = 40_000, seed: int = 0, jobs: int = 1,
                 thresholds: tuple[int, ...] = (150, 200, 250, 300, 350, 400), scan_games: int = 5_000,
                 rules_name: str = "standard") -> dict[str, Any]:
    """The reduced optimal player at a table of `players`, in play: against copies of the best threshold
    heuristic (found by a smaller scan, then played with a fresh seed), and every seat optimal."""
    rules = load_rules(rules_name)
    start = time.perf_counter()
    scan = {}
    for t in thresholds:
        heuristic = f"threshold:{t}"
        res = simulate(SimConfig(rules, ("optimal",) + (heuristic,) * (players - 1), scan_games, seed=seed + 1,
                                 jobs=jobs))
        scan[heuristic] = res.win_rate[0]
    best = min(scan, key=lambda h: scan[h])  # the heuristic that the optimal player beats least
    against_heuristic = []
    for i in range(players):
        seats = [best] * players
        seats[i] = "optimal"
        res = simulate(SimConfig(rules, tuple(seats), games, seed=seed, jobs=jobs))
        against_heuristic.append(_rate(res, i))
    res = simulate(SimConfig(rules, ("optimal",) * players, games, seed=seed, jobs=jobs))
    return {"rules": rules_name, "players": players, "games": games, "seed": seed, "scan_games": scan_games,
            "scan_seed": seed + 1, "scan": scan, "heuristic": best, "engine": res.engine,
            "against_heuristic": against_heuristic, "all_optimal": [_rate(res, i) for i in range(players)],
            "mean_turns": res.mean_turns, "seconds": round(time.perf_counter() - start, 1), **stamp()}
