"""The cost of the reduction, measured exactly: a player who reads a smaller table inside the exact larger game.

At a table of more players than the largest exact table, the optimal player
reads the table of `smaller` players against the opponents who threaten most
(`n_player.leading`). Where the game of `players` is solved exactly too, that
reduced player can be evaluated inside it: one seat plays the reduced policy,
every other seat the exact policy of the larger game, and the reduced seat's
chance to win is computed by the game's Markov chain (policy evaluation, not
simulation):

- a state is the score tuple in playing order from the mover and the mover's
  seat; each turn's outcome (the points banked, a bust, an instant win) comes
  from one forward pass over the turns of every tuple (`turn_distributions`,
  read through `distribution._moves`), under the decisions of the table the
  mover reads: the larger game's row, or for the reduced seat the smaller
  table's row of the same mover against the leading opponents;
- the chain is followed turn by turn from the start until the chance that the
  game goes on is below `TAIL` (`distribution._follow`); each seat's chance to
  win is the chance that the game ends on its turn.

With every seat exact the chain gives the solved chances (the check of
`tests/test_reduction.py`); the cost of the reduction for a seat is its
solved chance minus its chance when it alone plays the reduced policy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..table.policy import policy_of
from ..errors import CinqmilleError
from ..rules import Rules
from ..rules.bank import UNIT
from ..table.locate import locate_rows
from .distribution import TAIL, _follow, _moves
from ..solver.api import solve
from ..solver.turns import counted


@dataclass(frozen=True)
class ReductionCost:
    """Each seat's solved chance in the game of `players`, and its chance when it alone reads the table of
    `smaller` players against the opponents who threaten most (the others playing the exact policy)."""

    rules: Rules
    players: int
    smaller: int
    exact: tuple[float, ...]  # the solved chances (the chain with every seat exact)
    reduced: tuple[float, ...]  # seat i's chance when seat i alone plays the reduced policy
    tail: float  # the largest chance left when a chain stopped

    @property
    def cost(self) -> tuple[float, ...]:
        """What the reduction costs each seat, in points of percentage (solved minus reduced)."""
        return tuple(100 * (e - r) for e, r in zip(self.exact, self.reduced))

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {"rules": self.rules.name, "players": self.players, "smaller": self.smaller,
                "exact": list(self.exact), "reduced": list(self.reduced), "cost_points": list(self.cost),
                "tail": self.tail}


def _destinations(src: np.ndarray, new: np.ndarray, rest: np.ndarray, s: int, goal: int,
                  index: np.ndarray) -> np.ndarray:
    """The tuple after each outcome: the next player to move, the mover's new score last (``s ** n`` for a
    score that reaches the goal: the end of the game)."""
    return np.where(new >= goal, len(rest), rest[src] * s + index[np.minimum(new, goal - 1)])


def reduction_cost(rules: Rules, players: int = 4, smaller: int = 3, tail: float = TAIL) -> ReductionCost:
    """Evaluate, seat by seat, the reduced player (the `smaller`-player table against the leading opponents)
    inside the exact game of `players` (module docstring); both games solved (from the cache when there)."""
    if not 2 <= smaller < players:
        raise CinqmilleError(f"the reduced table must be smaller than the game: {smaller} and {players} players")
    if rules.last_round or counted(rules) or rules.take_over:
        raise CinqmilleError(f"the reduction is evaluated without last_round, take_over or a counted zero_turns; "
                             f"'{rules.name}' has one of them")
    big, small = solve(rules, "win", players=players), solve(rules, "win", players=smaller)
    scores = big.grid.scores.astype(np.int64)
    s, goal, n = len(scores), rules.goal // UNIT, players
    states = np.arange(s ** n)
    ind = np.unravel_index(states, (s,) * n)  # the mover's index, then the opponents' in playing order
    index = np.full(goal + 1, -1, dtype=np.int64)
    index[scores] = np.arange(s)
    movers, rest = scores[ind[0]], states % (s ** (n - 1))
    k, new, prob = _moves(policy_of(big), states, movers, rules)
    full = (k, _destinations(k, new, rest, s, goal, index), prob)
    others = np.stack([scores[i] for i in ind[1:]], axis=1)
    table: Any = policy_of(small)
    small_rows = locate_rows(table, movers, *others.T)  # (the reduction to the `smaller - 1` who threaten most)
    # one pass per distinct row of the smaller table, spread back over the tuples that read it
    unique, back = np.unique(small_rows, return_inverse=True)
    first = np.zeros(len(unique), dtype=np.int64)
    first[back[::-1]] = np.arange(len(states))[::-1]
    k, new, prob = _moves(table, unique, movers[first], rules)
    counts = np.bincount(k, minlength=len(unique))
    starts = np.concatenate([[0], np.cumsum(counts)])
    lens = counts[back]
    take = np.repeat(starts[back], lens) + np.arange(int(lens.sum())) - np.repeat(np.cumsum(lens) - lens, lens)
    src = np.repeat(states, lens)
    reduced = (src, _destinations(src, new[take], rest, s, goal, index), prob[take])
    end, start = s ** n * n, 0
    exact_chances, worst = _chain(full, full, None, n, s ** n, end, start, tail)
    mine = []
    for seat in range(n):
        chances, left = _chain(full, reduced, seat, n, s ** n, end, start, tail)
        mine.append(chances[seat])
        worst = max(worst, left)
    return ReductionCost(rules, players, smaller, exact_chances, tuple(mine), worst)


def _chain(full: tuple[np.ndarray, ...], reduced: tuple[np.ndarray, ...], seat: int | None, n: int,
           n_states: int, end: int, start: int, tail: float) -> tuple[tuple[float, ...], float]:
    """Each seat's chance to win when `seat` (None: no seat) plays the `reduced` transitions and every other
    seat the `full` ones; states are ``tuple * n + mover's seat``. (The chances, the chance left.)"""
    srcs, dsts, probs = [], [], []
    for i in range(n):
        k, dst, prob = reduced if i == seat else full
        srcs.append(k * n + i)
        dsts.append(np.where(dst == n_states, end, dst * n + (i + 1) % n))
        probs.append(prob)
    src, dst, prob = np.concatenate(srcs), np.concatenate(dsts), np.concatenate(probs)
    _, left, seats = _follow(src, dst, prob, end, start, n, tail)
    return seats, left
