"""Fair starts: the head start of each later seat that brings the seats' chances closest to even (issue 23).

Under best play the first player has an edge. `fair_start` searches every
starting score the ruleset can write (`rules.loading.start_problem`: multiples
of 50 below the goal) for each later seat, the first seat starting at 0, and
takes the start whose largest deviation from an even share, ``1 / players``,
is smallest (on a tie, the earliest in the order of the search: smaller head
starts first). The chances are read from the solved table at each start
(`solver.result.chances`); a start below the opening is not opened.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from .rules import Rules, load_rules
from .rules.bank import UNIT
from .rules.loading import start_problem
from .solver.api import solve
from .solver.budget import Limits, estimate
from .solver.result import chances, extended, pending_of, start_notes
from .work import working


@dataclass(frozen=True)
class FairStart:
    """The fairest start found: each seat's starting score and the seats' chances before and after."""

    rules: Rules
    players: int
    start: tuple[int, ...]  # points, first seat first (the first seat starts at 0)
    win_before: tuple[float, ...]  # from the ruleset's own start (all 0 unless it has `start`)
    win_after: tuple[float, ...]  # from `start`
    candidates: int  # starts compared
    exact: bool
    assumptions: tuple[str, ...]
    tried: tuple[tuple[tuple[int, ...], tuple[float, ...]], ...] = ()  # every start compared and its chances

    @property
    def opened(self) -> tuple[bool, ...]:
        """Whether each seat counts as opened at its start (a start below the opening does not)."""
        return tuple(bool(self.rules.banking.opened(s)) for s in self.start)

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `cinqmille fair --json`."""
        return {"rules": self.rules.name, "players": self.players, "start": list(self.start),
                "opened": list(self.opened), "win_before": list(self.win_before), "win_after": list(self.win_after),
                "candidates": self.candidates, "exact": self.exact, "assumptions": list(self.assumptions),
                "tried": [{"start": list(start), "win": list(win)} for start, win in self.tried]}


def head_starts(rules: Rules) -> list[int]:
    """Every score (points) a later seat may start from under `rules`, smallest first."""
    return [s for s in range(0, rules.goal, UNIT) if start_problem(rules, s) is None]


def fair_start(rules: Rules | str, players: int = 2, limits: Limits | None = None) -> FairStart:
    """The start (the first seat at 0) that brings the seats' chances closest to even under best play."""
    rules = load_rules(rules)
    result = solve(rules, "win", limits=limits, players=players)
    before = rules.starts(players)
    scores = head_starts(rules)
    starts = [(0,) + rest for rest in itertools.product(scores, repeat=players - 1)]
    pending = pending_of(result, scores)
    size = estimate(rules, "win", players).states if pending else 0  # the starts below the opening: a solve
    with working(f"Solving the head starts below the opening of '{rules.name}' for {players} players "
                 f"({len(starts):,} starts compared)", size=size) as update:
        if pending:
            update(0.0)
        extended(result, pending, update)  # kept on the result: `chances` reads it
        update(1.0)
    found = chances(result, starts)
    worst = np.abs(found - 1.0 / players).max(axis=1)
    best = int(np.argmin(worst))
    notes = start_notes(result, starts + [before])
    return FairStart(rules, players, starts[best], tuple(float(x) for x in chances(result, [before])[0]),
                     tuple(float(x) for x in found[best]), len(starts), result.exact and not notes,
                     result.assumptions + notes,
                     tuple((start, tuple(float(x) for x in row)) for start, row in zip(starts, found)))
