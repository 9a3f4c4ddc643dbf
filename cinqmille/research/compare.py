"""Compare rulesets: the first player's chance (solved and simulated), game length, busts, and how
much the optimal player gains over the expected-points player and the best fixed threshold.

Per ruleset (`compare_ruleset`):

- optimal against optimal: the first player's simulated win rate next to the
  solver's ``first_player_win`` (of the relaxation when the ruleset has rules
  outside the solved state, which the simulation then plays in full through
  the referee), the game length in turns, the bust rate, the mean banked turn;
- optimal against `expected`, against `cautious` and against the best
  ``threshold:T`` of a small grid: the optimal player's win rate over every
  seat (the same number of games in each), the other seats played by copies of
  the heuristic.

Where the game is a chain over score pairs (two players, solved exactly, no
last round, take-over, counted scoreless turns or starting scores:
`exact_chain`), the matchups and the game's length are exact
(`research.match`, `distribution.game_length`; a `Rate` of 0 games), the
threshold scan too, so the best T is the best of the grid. Elsewhere they are
simulated: the best T is the one that does best against optimal on a first,
smaller run, then played again with a fresh seed (no selection bias in the
reported rate), and the games of the referee are as many as `margin` asks
(`games_for_margin`: the 95% interval's half-width at most `margin` points).

With ``players = 3`` the table has three seats: the solve is the exact
three-player one (`solve(..., players=3)`), every seat's chance is given
(`solved_win`, `simulated_win`), and a matchup puts the optimal player in each
seat in turn against two copies of the other policy.

Every simulation goes through `simulation.simulate` (joblib batches, local or
Dask), seeded from the comparison's seed, the ruleset and the matchup.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules, load_rules
from ..simulation import SimConfig, choose_engine, simulate, std_error, wilson
from ..simulation.runner import Backend
from ..solver import SolveResult, relaxations, solve
from .distribution import check_chain, game_length
from .match import match_turns
from ..rules import PRESET_NAMES
from importlib import resources
import time

DEFAULT_THRESHOLDS: tuple[int, ...] = (100, 150, 200, 250, 300, 350, 400, 500)


@dataclass(frozen=True, slots=True)
class CompareConfig:
    """What to compare and with how many games."""

    rulesets: tuple[str | Rules, ...]  # preset names, TOML files or rulesets
    games: int = 40_000  # games per matchup with the vectorised simulator
    referee_games: int | None = None  # games per matchup through the referee (None: from `margin`)
    margin: float = 0.5  # points: the half-width of a refereed rate's 95% interval at worst (`games_for_margin`)
    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS
    seed: int = 0
    jobs: int = 1
    backend: Backend = "loky"
    scheduler: str | None = None
    players: int = 2  # seats at the table: 2, or 3 with the exact three-player solve


    @property
    def referee(self) -> int:
        """The games of a matchup through the referee: `referee_games`, or as many as `margin` asks."""
        return self.referee_games if self.referee_games is not None else games_for_margin(self.margin)


def games_for_margin(margin: float) -> int:
    """The games after which a rate's 95% interval is at most `margin` points on either side (at a rate of one
    half, the widest): ``(1.96 / 2 / (margin / 100))^2``."""
    return int(np.ceil((1.96 * 0.5 / (margin / 100)) ** 2))


@dataclass(frozen=True, slots=True)
class Rate:
    """A win rate with its binomial standard error and the games behind it (0 games: exact, no error)."""

    rate: float
    se: float
    games: int

    @property
    def exact(self) -> bool:
        """Computed exactly (the game's chain), not simulated."""
        return self.games == 0

    @property
    def ci95(self) -> tuple[float, float]:
        """The 95% Wilson score interval of the rate: the interval that `simulate` prints (the rate if exact)."""
        return (self.rate, self.rate) if self.exact else wilson(round(self.rate * self.games), self.games)

    @property
    def half_width(self) -> float:
        """Half the width of the 95% interval (what ± means on the page and in the terminal table)."""
        lo, hi = self.ci95
        return (hi - lo) / 2

    def text(self, digits: int = 2) -> str:
        """``52.00% ± 0.49``: the rate and half the width of its 95% interval, in percentage points; an exact
        rate alone (``52.00%``)."""
        if self.exact:
            return f"{100 * self.rate:.{digits}f}%"
        return f"{100 * self.rate:.{digits}f}% ± {100 * self.half_width:.{digits}f}"


#: What ± means wherever a simulated rate is shown (the page, the terminal table).
PLUS_MINUS = ("± is half the width of the 95% interval (Wilson score interval, the one `cinqmille simulate` "
              "prints), in percentage points; a rate without ± is exact (the game's chain)")


def preset_names_found() -> tuple[str, ...]:
    """Every preset file in the package's presets directory: the known presets in their order, then the others."""
    found = {Path(str(f)).stem for f in resources.files("cinqmille.data").joinpath("presets").iterdir()
             if str(f).endswith(".toml")}
    return tuple(n for n in PRESET_NAMES if n in found) + tuple(sorted(found - set(PRESET_NAMES)))


@dataclass(frozen=True, slots=True)
class RulesetComparison:
    """The comparison of one ruleset (see the module docstring)."""

    rules: str
    exact: bool
    assumptions: tuple[str, ...]
    engine: str
    solved_first_player_win: float
    simulated_first_player_win: Rate
    mean_turns: float
    median_turns: float
    bust_rate: float
    mean_banked_turn: float
    optimal_vs_expected: Rate
    optimal_vs_cautious: Rate
    best_threshold: int
    optimal_vs_best_threshold: Rate
    threshold_scan: tuple[tuple[int, float], ...]  # (T, optimal's win rate on the scan run)
    seconds: float
    players: int = 2
    solved_win: tuple[float, ...] = ()  # every seat's solved chance, first seat first
    simulated_win: tuple[Rate, ...] = ()  # every seat's simulated rate (optimal players in every seat)
    turns_exact: bool = False  # the game length is the chain's (`game_length`), not the simulation's

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["assumptions"] = list(self.assumptions)
        out["solved_win"] = list(self.solved_win)
        out["threshold_scan"] = {str(t): r for t, r in self.threshold_scan}
        return out


def _seed(base: int, *parts: str) -> int:
    return (base * 1_000_003 + zlib.crc32("|".join(parts).encode())) % (2**63)


def first_player_win(result: SolveResult) -> float:
    """The solved chance of the first player at the start of the game (also for a table with a seat axis)."""
    values = np.asarray(result.values)
    if values.ndim == 2 or result.players > 2:
        return result.first_player_win
    return float(values[(0,) * values.ndim])  # W[seat 0, 0, 0]: the player who opens the round


def matchup(rules: Rules, a: str, b: str, games: int, config: CompareConfig, tag: str) -> Rate:
    """`a`'s win rate against copies of `b` in the other seats, `a` in each seat for an equal share of the games."""
    n = config.players
    share = max(1, games // n)
    wins = 0
    total = 0
    for seat in range(n):
        seats = tuple(a if i == seat else b for i in range(n))
        res = simulate(SimConfig(rules, seats, share, seed=_seed(config.seed, rules.name, tag, *seats),
                                 jobs=config.jobs, backend=config.backend, scheduler=config.scheduler))
        wins += res.wins[seat]
        total += res.games
    p = wins / total
    return Rate(p, std_error(p, total), total)


def exact_chain(solved: SolveResult) -> bool:
    """Whether the game of `solved` is a chain over score pairs that the exact evaluation reads (two players,
    solved exactly, no last round, take-over, counted scoreless turns or starting scores)."""
    rules = solved.rules
    try:
        check_chain(solved)
    except CinqmilleError:
        return False
    return solved.exact and not relaxations(rules) and not any(rules.starts(2))


def compare_ruleset(spec: str | Rules, config: CompareConfig,
                    progress: Callable[[float], None] | None = None) -> RulesetComparison:
    """Compare one ruleset (solving it first if it is not in the cache)."""
    start = time.perf_counter()
    rules = load_rules(spec)
    tick = progress or (lambda f: None)
    solved = solve(rules, "win", players=config.players)
    tick(0.1)
    optimal = ("optimal",) * config.players
    engine = choose_engine(rules, optimal)
    games = config.games if engine == "vectorised" else config.referee
    base = simulate(SimConfig(rules, optimal, games, seed=_seed(config.seed, rules.name, "self"),
                              jobs=config.jobs, backend=config.backend, scheduler=config.scheduler))
    seats = tuple(Rate(r, se, base.games) for r, se in zip(base.win_rate, base.std_error))
    solved_first = first_player_win(solved)
    tick(0.3)
    chain = exact_chain(solved)

    def against(policy: str, games_: int, tag: str) -> Rate:
        if chain:
            return Rate(match_turns(solved, "optimal", policy).chance, 0.0, 0)
        return matchup(rules, "optimal", policy, games_, config, tag)

    vs_expected = against("expected", games, "expected")
    tick(0.45)
    vs_cautious = against("cautious", games, "cautious")
    tick(0.6)
    scan = []
    for i, t in enumerate(config.thresholds):
        scan.append((t, against(f"threshold:{t}", max(2, games // 4), "scan").rate))
        tick(0.6 + 0.25 * (i + 1) / len(config.thresholds))
    best = min(scan, key=lambda x: x[1])[0] if scan else 0
    vs_best = against(f"threshold:{best}", games, "best") if scan else Rate(float("nan"), 0.0, 0)
    mean_turns, median_turns = base.mean_turns, base.median_turns
    if chain:
        length = game_length(solved)
        mean_turns, median_turns = length.mean, float(length.median)
    tick(1.0)
    return RulesetComparison(
        rules=rules.name, exact=solved.exact, assumptions=tuple(relaxations(rules)), engine=engine,
        solved_first_player_win=solved_first, simulated_first_player_win=seats[0],
        mean_turns=mean_turns, median_turns=median_turns, bust_rate=base.bust_rate,
        mean_banked_turn=base.mean_banked_turn, optimal_vs_expected=vs_expected, optimal_vs_cautious=vs_cautious,
        best_threshold=best, optimal_vs_best_threshold=vs_best, threshold_scan=tuple(scan),
        seconds=time.perf_counter() - start, players=config.players,
        solved_win=solved.win if config.players > 2 else (solved_first, 1.0 - solved_first), simulated_win=seats,
        turns_exact=chain,
    )


def compare(config: CompareConfig, progress: Callable[[float], None] | None = None) -> list[RulesetComparison]:
    """Compare every ruleset of `config`, in order."""
    out = []
    n = len(config.rulesets)
    for i, spec in enumerate(config.rulesets):
        def sub(f: float, i: int = i) -> None:
            if progress is not None:
                progress((i + f) / n)
        out.append(compare_ruleset(spec, config, sub))
    return out


def table_rows(rows: Sequence[RulesetComparison]) -> list[list[str]]:
    """The comparison as text cells, header first (the Markdown page); ± as `PLUS_MINUS` says."""
    head = ["ruleset", "first player (solved)", "first player (simulated)", "turns (mean/median)", "bust rate",
            "banked turn", "optimal vs expected", "optimal vs cautious", "best T", "optimal vs threshold:T"]
    out = [head]
    for r in rows:
        solved = f"{r.solved_first_player_win:.2%}" + ("" if r.exact else " (relaxed)")
        out.append([
            r.rules, solved, r.simulated_first_player_win.text(),
            f"{r.mean_turns:.1f} / {r.median_turns:.0f}" + ("" if r.turns_exact else " (simulated)"),
            f"{r.bust_rate:.1%}", f"{r.mean_banked_turn:.0f}", r.optimal_vs_expected.text(),
            r.optimal_vs_cautious.text(), str(r.best_threshold), r.optimal_vs_best_threshold.text(),
        ])
    return out


#: Widest line of the terminal table of `compare`.
TERMINAL_WIDTH = 100


def terminal_rows(rows: Sequence[RulesetComparison]) -> list[list[str]]:
    """The comparison as short text cells for the terminal (one decimal; fits `TERMINAL_WIDTH` columns)."""
    head = ["ruleset", "1st solved", "1st sim.", "turns", "busts", "banked", "vs exp.", "vs caut.", "T", "vs T"]
    out = [head]
    for r in rows:
        name = r.rules if len(r.rules) <= 18 else r.rules[:17] + "~"
        out.append([name, f"{r.solved_first_player_win:.1%}" + ("" if r.exact else "*"),
                    r.simulated_first_player_win.text(1).replace("% ± ", "±"),
                    f"{r.mean_turns:.1f}/{r.median_turns:.0f}" + ("" if r.turns_exact else "*"), f"{r.bust_rate:.1%}",
                    f"{r.mean_banked_turn:.0f}",
                    *(x.text(1).replace("% ± ", "±") for x in (r.optimal_vs_expected, r.optimal_vs_cautious)),
                    str(r.best_threshold), r.optimal_vs_best_threshold.text(1).replace("% ± ", "±")])
    return out


def terminal_table(rows: Sequence[RulesetComparison]) -> list[str]:
    """The lines `compare` prints: the table (at most `TERMINAL_WIDTH` columns) and what its columns mean."""
    cells = terminal_rows(rows)
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
             for row in cells]
    notes = ["1st: the first player's chance, solved (* of the solver's relaxation) and simulated (optimal vs",
             "optimal); turns: mean/median of both players; vs X: optimal's win rate against X, both seats;",
             "T: the best threshold:T. Rates in %; ±: half the width of the 95% interval (as simulate prints)."]
    n = max((r.players for r in rows), default=2)
    if n > 2:
        notes[1] = f"optimal); turns: mean/median of the {n} players; vs X: optimal's rate against {n - 1} copies of X,"
        notes[2] = "in every seat; T: the best threshold:T. Rates in %; ±: half the 95% interval (as simulate prints)."
        seats = [f"{r.rules}: every seat solved " + " / ".join(f"{100 * w:.1f}" for w in r.solved_win)
                 + "%, simulated " + " / ".join(x.text(1).replace("% ± ", "±") for x in r.simulated_win) + "%"
                 for r in rows]
        return lines + seats + notes
    notes[1] = "optimal); turns: mean/median of both players (the exact chain; * simulated); vs X: optimal's"
    notes[2] = "win rate against X, both seats; T: the best threshold:T. Rates in %; ±: half the 95% interval"
    return lines + notes + ["(as simulate prints); a rate without ± is exact (the game's chain)."]


def agreement(row: RulesetComparison) -> float:
    """How many standard errors the simulated first-player rate lies from the solved one."""
    sim = row.simulated_first_player_win
    return float(abs(sim.rate - row.solved_first_player_win) / sim.se) if sim.se > 0 else float(np.inf)
