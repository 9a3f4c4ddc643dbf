"""What exactness buys, measured: the cost of reading a smaller table inside the exact four-player game of
`standard` at several goals (`reduction.measure`), and the figure the advice shows where it reads a smaller
table (an estimate, `simulation/estimate.py`) against the exact chances; the section of docs/variants.md
(`python -m cinqmille.research.page reduction docs/variants.md`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..app.advice import advise
from ..errors import CinqmilleError
from ..table.position import Position
from ..rules import Rules, load_rules
from ..rules.bank import UNIT
from ..solver.api import is_cached, solve
from ..solver.grid import ScoreGrid
from ..solver.n_player import level_sums
from ..solver.seats import every_seat
from ..words import duration_words
from .markdown import table as _table
from .players import at_goal
from .reduction import Evaluation, ReductionCost, Scenario, evaluate, measure


@dataclass(frozen=True)
class EstimateGap:
    """At one turn start of the game of `players` (the scores in playing order from the mover, points): each
    seat's chance the advice shows when it reads the table of `table` players (estimated by playing the game out,
    `simulation.estimate`, with its 95 % margin: the largest of the seats' half-widths), the game's exact chance
    (solved), and, where evaluated, the exact chance of the game the estimate plays (every seat reading that
    table: `Scenario("all", table)`)."""

    rules: Rules
    scores: tuple[int, ...]
    table: int
    estimated: tuple[float, ...]
    margin: float
    games: int
    exact: tuple[float, ...]
    played: tuple[float, ...] | None = None

    @property
    def gap(self) -> float:
        """The largest distance of a seat's estimate from its exact chance, in points of percentage."""
        return 100 * max(abs(e - x) for e, x in zip(self.estimated, self.exact))

    @property
    def inside(self) -> bool:
        """Whether every seat's exact chance lies within the stated margin of its estimate."""
        return self.gap <= 100 * self.margin

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {"rules": self.rules.name, "scores": list(self.scores), "table": self.table,
                "estimated": list(self.estimated), "margin": self.margin, "games": self.games,
                "exact": list(self.exact), "played": None if self.played is None else list(self.played),
                "gap_points": self.gap, "inside": self.inside}


def estimate_gaps(rules: Rules, positions: tuple[tuple[int, ...], ...], players: int = 4, table: int = 3,
                  played: Evaluation | None = None) -> list[EstimateGap]:
    """The figure the advice shows at each turn start of `positions` (scores in points, playing order from the
    mover) when it reads the `table`-player table (`advice.advise`: an estimate), against the exact chances of the
    game of `players` (solved), and those of every seat reading that table where `played` evaluated them."""
    big, small = solve(rules, "win", players=players), solve(rules, "win", players=table)
    out = []
    for scores in positions:
        if len(scores) != players:
            raise CinqmilleError(f"a position of {players} players needs {players} scores, got {len(scores)}")
        answer = advise(small, Position(scores[0], scores[1], others=tuple(scores[1:])))
        figure = answer.figure
        if figure.kind != "estimated" or figure.seats is None:
            raise CinqmilleError(f"the advice at {scores} shows no estimate ({figure.kind})")
        units = np.array([x // UNIT for x in scores])
        exact = tuple(float(x) for x in every_seat(big.seat_values(units)))
        everyone = Scenario("all", table)
        seen = None if played is None or everyone not in played.values else \
            tuple(float(x) for x in played.at(everyone, units))
        out.append(EstimateGap(rules, tuple(scores), table, tuple(figure.seats), figure.margin, figure.games, exact,
                               seen))
    return out


def typical_positions(rules: Rules, players: int = 4) -> tuple[tuple[int, ...], ...]:
    """The start and a few turn starts of a game of `rules` (points, playing order from the mover): early, the
    middle, a runaway leader, the end near; each score a fraction of the goal (`TYPICAL`), a score short of the
    opening raised to it."""
    out = []
    for fractions in TYPICAL:
        scores = []
        for f in fractions[:players]:
            x = int(round(f * rules.goal / UNIT)) * UNIT
            scores.append(0 if x == 0 else max(x, rules.opening))
        out.append(tuple(scores))
    return tuple(out)


#: The positions of `typical_positions`, as fractions of the goal (four players, playing order from the mover).
TYPICAL: tuple[tuple[float, ...], ...] = ((0, 0, 0, 0), (0.15, 0, 0.3, 0.2), (0.5, 0.4, 0.6, 0.3),
                                          (0.3, 0.8, 0.2, 0.4), (0.8, 0.9, 0.7, 0.85))


# -- the section of docs/variants.md ---------------------------------------------------------------------------
HEADING = "## The cost of the reduction, measured exactly"
COMMAND = "python -m cinqmille.research.page reduction docs/variants.md"  # [GOAL ...]: goals beyond `GOALS`
#: The goals of `standard` whose reductions are evaluated (four players solved exactly, one evaluation each).
GOALS: tuple[int, ...] = (1000, 1500, 2000, 2500, 3000)
GAPS_HEADING = "## The figure an estimate shows, against the exact chances"
GAPS_COMMAND = "python -m cinqmille.research.page estimates docs/variants.md"  # [GOAL ...]: the played game too
#: The goals where the advice's estimate is compared with the exact chances (one beyond `GOALS`: only when its
#: four-player table is cached, since its solve is long).
ESTIMATE_GOALS: tuple[int, ...] = (3000, 5000)


def standard_at(goal: int) -> Rules:
    """`standard` at `goal`: the preset itself at its own goal (its cached tables), else `players.at_goal`."""
    rules = load_rules("standard")
    return rules if goal == rules.goal else at_goal("standard", goal)


@dataclass(frozen=True)
class Measured:
    """What a section shows: the costs at every goal (`section`), or the advice's estimates against the exact
    chances (`gaps_section`); the load average when the measurement ended; the goals left out (not cached)."""

    costs: tuple[ReductionCost, ...] = ()
    gaps: tuple[EstimateGap, ...] = ()
    load: float = 0.0
    skipped: tuple[int, ...] = ()


def measure_costs(goals: tuple[int, ...] = GOALS) -> Measured:
    """The costs of the three- and two-player tables at `goals` (one evaluation each, `reduction.measure`)."""
    costs: list[ReductionCost] = []
    for goal in goals:
        costs += measure(standard_at(goal), 4, (3, 2))[0]
    return Measured(tuple(costs), load=os.getloadavg()[0])


def measure_gaps(goals: tuple[int, ...] = ESTIMATE_GOALS, played: tuple[int, ...] = GOALS) -> Measured:
    """The advice's estimates at the `typical_positions` of `goals` against the exact chances, with the game
    where every seat reads the three-player table evaluated at the goals in `played`; a goal not in `played`
    is measured only when its four-player table is cached (its solve is long)."""
    gaps: list[EstimateGap] = []
    skipped = []
    for goal in goals:
        rules = standard_at(goal)
        if goal not in played and not is_cached(rules, 4):
            skipped.append(goal)
            continue
        everyone = evaluate(rules, 4, (Scenario("all", 3),)) if goal in played else None
        gaps += estimate_gaps(rules, typical_positions(rules), played=everyone)
        del everyone
    return Measured(gaps=tuple(gaps), load=os.getloadavg()[0], skipped=tuple(skipped))


def section(measured: Measured, when: str = "") -> list[str]:
    """The Markdown section of the measurements (`HEADING`)."""
    costs = measured.costs
    if not costs:
        return []
    tail = max(c.tail for c in costs)
    out = [HEADING, "",
           "A table of more players than the largest exact one is read from a smaller table against the opponents "
           "who threaten most (`n_player.leading`). Where four players are solved exactly, that reduced player is "
           "evaluated inside the exact four-player game: one seat reads the smaller table, the three others play "
           "the exact four-player policy, and the reduced seat's chance is computed exactly, by policy evaluation "
           "(not simulation): `cinqmille/research/reduction.py` goes backward level by level in decreasing total "
           "score, as the solver does; an exact mover's turn is one kernel pass under the solve's own decisions "
           "with a column per counted seat, a reduced mover's turn the distribution of his table's turn, and the "
           "bust cycle of each level is solved in closed form. Only one level's turns are in memory at a time. "
           "The chance left unaccounted is what a reduced turn leaves out past its horizon: "
           + (f"at most {tail:.0e} a turn here" if tail > 0 else "nothing here (every turn's distribution is "
              "complete; the figures are exact to the rounding of float64)")
           + ". The cost is the seat's solved chance minus its reduced chance, in points; `standard` rules "
           f"at each goal (opening 750). Written by `{COMMAND}` (this section alone){when}.", ""]
    cells = [["goal", "table read", "cost by seat (points)", "largest", "solved chances"]]
    for c in costs:
        cells.append([str(c.rules.goal), f"{c.smaller} players", ", ".join(f"{x:.3f}" for x in c.cost),
                      f"{max(c.cost):.3f}", ", ".join(f"{100 * x:.2f}%" for x in c.exact)])
    worst = {k: max(max(c.cost) for c in costs if c.smaller == k) for k in sorted({c.smaller for c in costs})}
    said = "; ".join(f"reading the {k}-player table costs a seat at most {v:.3f} points" for k, v in worst.items())
    out += _table(cells) + ["", f"Over these goals, {said}. Five to eight players therefore read the largest "
                            "exact table that fits (`api.table_players`) against the opponents who threaten most; "
                            "its error grows with the opponents left out, and this page measures it only where a "
                            "larger exact game exists.", ""]
    return out + _costs_section(measured)


def _costs_section(measured: Measured) -> list[str]:
    """What each evaluation cost, and what goal 5000 would."""
    runs = {c.rules.goal: c for c in measured.costs}
    cells = [["goal", "score tuples", "turn states (one pass)", "time", "peak memory"]]
    for goal, c in sorted(runs.items()):
        tuples = len(ScoreGrid.of(c.rules).scores) ** c.players
        cells.append([str(goal), f"{tuples:,}", f"{c.states:,}", f"{c.seconds:.0f} s", f"{c.peak / 2**20:,.0f} MiB"])
    last = runs[max(runs)]
    rules = load_rules("standard")
    grid = ScoreGrid.of(rules)
    states = int(level_sums(grid, last.players)[:, 2].sum())
    tuples = len(grid.scores) ** last.players
    rate = last.states / max(last.seconds, 1e-9)
    values = 2 * last.players * tuples * 8 / 2**30  # the three- and two-player costs: two scenarios' values
    return [f"Each goal is one evaluation (both tables read), on the project's shared two-core machine, others' "
            f"work running "
            f"(load average {measured.load:.1f} at the end): the times are upper bounds; the peak memory is the "
            f"process's, the solved tables included.", ""] + _table(cells) + [
            "", f"At `standard`'s own goal, {rules.goal}, the same evaluation passes {states:,} turn states over "
            f"{tuples:,} score tuples: at the rate of goal {last.rules.goal} ({rate / 1e6:.1f} million turn states a "
            f"second under that load) {duration_words(states / rate)}, with {values:.1f} GiB of values beside the "
            "solved four-player table.", ""]


def gaps_section(measured: Measured, when: str = "") -> list[str]:
    """The Markdown section of the advice's estimates against the exact chances (`GAPS_HEADING`)."""
    gaps = measured.gaps
    out = [GAPS_HEADING, "",
           "At a table of more players than the table it reads, the advice shows each seat's chance in the "
           "player's own game, estimated by playing the game out from the position (`simulation/estimate.py`, "
           "read by `advice._this_game`: 10,000 seeded games, every seat reading the same table, with the 95 % "
           "margin of the seat whose interval is widest). Here it reads the three-player table at a four-player "
           "table, at the start and at turn starts of a game (`exactness.typical_positions`: fractions of the goal), "
           "against the exact four-player chances (solved) and, where evaluated, the exact chances of the game the "
           "estimate plays (every seat reading the three-player table, evaluated as in the section above). Chances "
           f"in playing order from the mover, in percent. Written by `{GAPS_COMMAND}` (this section alone){when}; "
           f"load average {measured.load:.1f} at the end.", ""]
    if measured.skipped:
        out += [f"Goal {', '.join(str(g) for g in measured.skipped)}: not measured (its four-player table was not "
                "cached when this section was written).", ""]
    if not gaps:
        return out
    cells = [["goal", "scores", "advice shows (estimate)", "exact (solved)", "all on the 3-player table (exact)",
              "largest gap", "exact within the margin"]]
    for g in gaps:
        cells.append([str(g.rules.goal), "/".join(str(x) for x in g.scores),
                      ", ".join(f"{100 * x:.2f}" for x in g.estimated) + f" ± {100 * g.margin:.2f}",
                      ", ".join(f"{100 * x:.2f}" for x in g.exact),
                      "—" if g.played is None else ", ".join(f"{100 * x:.2f}" for x in g.played),
                      f"{g.gap:.2f}", "yes" if g.inside else "no"])
    inside = sum(g.inside for g in gaps)
    out += _table(cells) + ["", f"Over these {len(gaps)} positions the figure the advice shows is at most "
                            f"{max(g.gap for g in gaps):.2f} points from the exact chance (in points of "
                            f"percentage), and the exact chance lies within the stated margin at {inside} of them.",
                            ""]
    return out
