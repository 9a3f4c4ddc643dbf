"""A short Python API for notebooks: solve a ruleset, locate a position, advise, distributions, matches, ablations.

Each function takes a ruleset as a preset name, a TOML file or a `Rules`
(or the solved result where one is needed) and returns the library's own
frozen result, whose fields and ``as_dict()`` are what the command line
prints as JSON. Solved tables are cached (``CINQMILLE_CACHE``, as the
commands do). The examples use a small ruleset (goal 500, opening 150), which
solves in a second:

>>> from cinqmille import notebook as cm
>>> rules = cm.ruleset({"goal": 500, "opening": 150})
>>> result = cm.solve(rules)
>>> round(result.first_player_win, 4)
0.618
>>> spot = cm.locate(result, me=150, opp=300, turn=200, dice=2)
>>> round(spot.win, 4), spot.position.turn
(0.3325, 200)
>>> advice = cm.advise(result, me=150, opp=300, roll="15332")
>>> [(o.keep, o.then, round(o.win, 4)) for o in advice.options[:2]]
[((1,), 'roll', 0.4868), ((1, 5), 'roll', 0.3924)]
>>> report = cm.dist(rules, me=150, opp=300, turn=200, dice=2)
>>> round(report.points.mean, 1), round(report.points.bust, 4)
(106.0, 0.7457)
>>> m = cm.match(rules, "optimal", "threshold:300")
>>> round(m.first, 4), round(m.second, 4)
(0.7062, 0.4653)
>>> abl = cm.ablate(rules, keys=("end",))
>>> [(row.label, round(row.first, 4), row.length.median) for row in abl.rows]
[('base', 0.618, 3), ('end = "exact"', 0.6067, 3)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .table.locate import spot
from .app.advice import Advice
from .app.advice import advise as _advise
from .table.position import Position
from .research.ablate import KEYS, Ablation
from .research.ablate import ablate as _ablate
from .research.distribution import DistReport, dist_report
from .research.match import Match
from .research.match import match as _match
from .rules import Rules, load_rules, rules_from_dict
from .rules.bank import UNIT
from .solver import SolveResult
from .solver import solve as _solve

RulesLike = Rules | str | dict[str, Any]


def ruleset(spec: RulesLike) -> Rules:
    """A ruleset from a preset name, a TOML file, a dict of keys over `standard` (as a file's), or as given."""
    if isinstance(spec, dict):
        return rules_from_dict(dict(spec), "notebook rules")
    return load_rules(spec)


def solve(rules: RulesLike, players: int = 2) -> SolveResult:
    """The solved game of `players` (from the cache when it is there): `first_player_win`, `win`, `policy`..."""
    return _solve(ruleset(rules), "win", players=players)


@dataclass(frozen=True)
class Located:
    """A position of the solved game and the mover's chance to win there under best play."""

    position: Position
    win: float


def locate(result: SolveResult, me: int, opp: int, turn: int = 0, dice: int | None = None,
           others: Sequence[int] | None = None) -> Located:
    """The position (banked `me` against `opp`, or against `others` in playing order at three players or more;
    `turn` points set aside and `dice` in hand, about to choose bank or roll) and its chance, read from the
    table's block and row as `advise` reads it (raises `PositionError` for a position that cannot occur)."""
    position = Position(me, opp, turn, dice, others=None if others is None else tuple(others))
    position = position.validate(result.rules)
    block, r = spot(result, position)
    return Located(position, float(block.value(r, turn // UNIT, position.hand(result.rules))))


def advise(result: SolveResult, me: int, opp: int, turn: int = 0, dice: int | None = None,
           roll: str | tuple[int, ...] | None = None, others: Sequence[int] | None = None) -> Advice:
    """The options of a position ranked (`advice.advise`): bank or roll, or the keeps of `roll`."""
    return _advise(result, Position(me, opp, turn, dice, others=None if others is None else tuple(others)), roll)


def dist(rules: RulesLike, me: int, opp: int, turn: int = 0, dice: int | None = None, turns: bool = False,
         objective: str = "win") -> DistReport:
    """The distribution of the turn's points from a position (`cinqmille dist`); with `turns`, the turns of a
    race alone and of the game (exact chains)."""
    return dist_report(ruleset(rules), Position(me, opp, turn, dice), objective, turns)


def match(rules: RulesLike, a: str, b: str) -> Match:
    """The exact chances of policy `a` against policy `b` in each seat (`cinqmille match`)."""
    return _match(ruleset(rules), a, b)


def ablate(rules: RulesLike, keys: Sequence[str] = tuple(KEYS)) -> Ablation:
    """One rule changed at a time, each ruleset's exact figures (`cinqmille ablate`)."""
    return _ablate(ruleset(rules), keys)


__all__ = ["Located", "ablate", "advise", "dist", "locate", "match", "ruleset", "solve"]
