"""Each seat's chance from a position of a game larger than its solved table, estimated by playing it out.

Where a table of `n` players is read from the solved table of fewer (the
opponents who threaten most, `n_player.leading`), that table's figure is the
chance in a smaller game, not in this one. The chance in this game is
estimated here: `games` games of all `n` seats, each playing the decisions of
the table read (the optimal player of the simulator, `OptimalVec`, at the row
the reduction gives), from the position itself. Every start of one question
(the options of one decision) is played with the same seed, so that the
differences between options carry less noise than each figure.

A figure is the share of games each seat wins; its margin is the largest
half-width of the seats' 95 % Wilson intervals (`stats.wilson`): with the
default 10,000 games at most 0.98 points.

>>> from cinqmille.rules import rules_from_dict
>>> rules = rules_from_dict({"goal": 500, "opening": 150})
>>> est = estimate(rules, 3, [Start((0, 0, 0))], games=2000)[0]
>>> len(est.seats), round(sum(est.seats), 9), est.games, est.margin < 0.025
(3, 1.0, 2000, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from .runner import vector_players, vectorisable
from .stats import wilson
from .vectorised import Start, play_batch

#: Games played from each start: the margin (95 %) is then at most 0.98 points of chance.
ESTIMATE_GAMES = 10_000
#: The seed of every estimate: the same question always gets the same figures.
ESTIMATE_SEED = 20261202

__all__ = ["ESTIMATE_GAMES", "Estimate", "Start", "estimate", "why_not"]


@dataclass(frozen=True)
class Estimate:
    """Each seat's share of the games won from one start (seat order of the start), with its 95 % margin."""

    seats: tuple[float, ...]
    margin: float  # the largest half-width of the seats' 95 % Wilson intervals
    games: int


def why_not(rules: Rules, players: int) -> str | None:
    """Why the chance of a `players`-seat game cannot be estimated by playing it out (None when it can)."""
    why = vectorisable(rules, ("optimal",) * players)
    if why is None or why.startswith("the vectorised engine starts every game at 0"):
        return None  # a start from a position does not read the ruleset's starting scores
    return why


def estimate(rules: Rules, players: int, starts: Sequence[Start], games: int = ESTIMATE_GAMES,
             seed: int = ESTIMATE_SEED, table: int | None = None) -> list[Estimate]:
    """Each seat's chance from every start, `games` games each, all seats playing the optimal table read for a
    game of `players` (`table`: its players, by default the one `runner.table_seats` reads; raises
    `CinqmilleError` where the simulator cannot play the ruleset)."""
    why = why_not(rules, players)
    if why is not None:
        raise CinqmilleError(f"the chances of {players} players cannot be estimated: {why}")
    pols, row_of = vector_players(rules, ("optimal",) * players, table=table)
    out = []
    for start in starts:
        stats = play_batch(rules, pols, games, np.random.default_rng(seed), row_of, start=start)
        wins = np.bincount(stats.winner.astype(np.int64), minlength=players)[:players]
        half = max((hi - lo) / 2 for lo, hi in (wilson(int(w), games) for w in wins))
        out.append(Estimate(tuple(float(w) / games for w in wins), float(half), games))
    return out
