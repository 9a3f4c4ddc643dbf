"""The seats' chances for two, three and four players side by side: how the first seat's edge changes with the
number of players, for every preset at the goals where the exact tables fit.

`players_rows(presets, goals)` solves each preset with its goal (and its
opening, where the opening is above the goal, set to half the goal) for two,
three and four players (`solve(rules, players=n)`, from the cache when it is
there), within the solver's default budget; a table beyond it is listed as
not solved. `players_section(rows)` writes the Markdown section of
docs/variants.md (`python -m cinqmille.research.page players docs/variants.md`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import CinqmilleError
from ..rules import Rules, load_rules, rules_from_dict, to_dict
from ..solver.budget import TooLarge, check_budget
from ..solver.n_player import MAX_PLAYERS
from ..solver.api import solve

#: The goals of the side-by-side table (small enough for four exact players on this machine).
GOALS: tuple[int, ...] = (1000, 1500, 2000)


@dataclass(frozen=True)
class SeatChances:
    """One solve: the ruleset, its players and each seat's chance to win from the start (None: not solved)."""

    rules: Rules
    players: int
    win: tuple[float, ...] | None
    exact: bool
    seconds: float
    why_not: str = ""

    @property
    def edge(self) -> float | None:
        """The first seat's chance above a fair share (1 / players), in points of percentage."""
        return None if self.win is None else 100 * (self.win[0] - 1 / self.players)


def at_goal(preset: str, goal: int) -> Rules:
    """The preset played to `goal` (its opening halved to fit where it is not below the goal; a final stretch
    or other rule that needs a larger goal makes the ruleset invalid: `CinqmilleError`)."""
    base = to_dict(load_rules(preset))
    base.update(name=f"{preset}@{goal}", goal=goal)
    if base.get("opening", 0) >= goal:
        base["opening"] = (goal // 2) // 50 * 50
    return rules_from_dict(base, f"{preset} at goal {goal}")


def seat_chances(rules: Rules, players: int) -> SeatChances:
    """Solve `rules` for `players` (from the cache when it is there), or say why not (beyond the budget)."""
    try:
        check_budget(rules, "win", players=players)
    except TooLarge as exc:
        return SeatChances(rules, players, None, False, 0.0, str(exc))
    start = time.perf_counter()
    result = solve(rules, "win", players=players)
    return SeatChances(rules, players, tuple(result.win), result.exact, time.perf_counter() - start)


def players_rows(presets: Sequence[str], goals: Sequence[int] = GOALS,
                 most: int = MAX_PLAYERS) -> list[tuple[str, int, list[SeatChances]]]:
    """(preset, goal, the solves for 2 to `most` players) of every preset and goal whose ruleset is valid."""
    out = []
    for preset in presets:
        for goal in goals:
            try:
                rules = at_goal(preset, goal)
            except CinqmilleError:
                continue
            out.append((preset, goal, [seat_chances(rules, n) for n in range(2, most + 1)]))
    return out
