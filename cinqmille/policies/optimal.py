"""`optimal`: the solved policy behind the engine's `Policy` protocol, for 2 to 8 players.

Every decision is a policy table's (`table.load.policy_table`: the
the `PolicyTable` of the table's size, built from the solved `win` result of
that size): this module only turns
the referee's question into a position (`view_position`, through
`Position.at_table`, the one reading of a table's state) and asks the table
where that position is read (`table.locate.locate`) and what its one function decides:

- which keep: the one the solve took for the roll (`roll_keep`; after a right
  announcement the keeps double the turn points);
- bank or roll: `banks`; which announcement before rolling two dice:
  `announcement`; take over an offer or start afresh: `takes_over`.

Which table: two players read the two-player table (the row of the seat
under `last_round`, of the scoreless-turn counters under a counted
`zero_turns`, or in a last round the mover's last turn against the score to
beat, `PolicyTable.last_turn`). A game of N players reads the exact table of
the most players up to N that is cached or fits the solver's budget
(`api.table_players`: four at small goals, three under `standard`), against
the opponents who threaten most when N is larger (`n_player.leading`: the
highest scores, on a tie the one who plays sooner, kept in their playing
order), the reduction that `advise --opp` uses. Under a last round or
take-over offers, a game whose size is the solved table's reads the solve
itself (`table.locate.spot`, the advice's rows: the seat's own turns, the
offers, every last turn), kept once loaded; a larger game reads as before:
offers declined, and each last turn from the two-player table (the best
chance to pass the score to beat, exact for the last player to move). Where
no table of three or more fits, the two-player table is played against the
leading opponent, and a warning says so once.

Rules outside the solved state (crosses, ties, struck scores) are played by
reading the table at the current banked scores: the solver's stated
relaxation.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np

from ..table.locate import spot
from ..dice.scoring import Keep
from ..engine.state import GameView, TakeOverOffer
from ..errors import CinqmilleError
from ..table.position import Position
from ..rules import Rules
from ..rules.end import UNIT
from ..solver.api import solve, table_players
from ..solver.choice import block_graph
from ..table.policy import PolicyTable
from ..table.locate import locate
from ..solver.rounds import rounds_solved
from ..table.rows import TurnRows, roll_keep, same_keep
from ..solver.result import SolveResult
from ..words import table_words, threat_words
from ..table.load import policy_table

#: Called after each decision with the question ("keep", "bank", "take_over", "predict"), the view, the
#: answer and a detail: (the kept `Keep`, whether it follows a right announcement) for a keep, the offer for
#: a take-over, None otherwise.
Narrator = Callable[[str, GameView, Any, Any], None]
#: The answer `OptimalPolicy._said` passes on unchanged.
_Answer = TypeVar("_Answer")


# -- the engine policy -------------------------------------------------------------------
def view_position(view: GameView, offer: tuple[int, int] | None = None) -> Position:
    """The solver's question in `view` (`Position.at_table`): the scores in playing order from the mover, the
    seat, the scoreless-turn counters, a last round's score to beat, a take-over offer at a turn start."""
    target = view.last_round.target if view.last_round is not None else None
    return Position.at_table(view.rules, view.scores, view.seat, tuple(p.zero_turns for p in view.players),
                             target=target, offer=offer, turn=0 if offer is not None else view.turn_points,
                             dice=None if view.roll is not None or offer is not None else view.dice_in_hand)


_TOO_LARGE_SAID: set[str] = set()


class OptimalPolicy:
    """The solved policy behind the engine's `Policy` protocol, for 2 to 8 players (see the module docstring)."""

    name = "optimal"

    def __init__(self, rules: Rules, table: PolicyTable | None = None, narrate: Narrator | None = None,
                 seats: PolicyTable | None = None):
        self.rules = rules
        self._table = table
        self._seats: dict[int, PolicyTable | None] = {} if seats is None else {seats.players: seats}
        self._given = seats
        self.narrate = narrate
        self._announced: dict[int, tuple[int, int]] = {}  # seat -> (turn number, turn points) of an announcement
        self._results: dict[int, SolveResult] = {}  # the solves read under a last round or take-over offers
        self._sizes: dict[int, int] = {}

    def __repr__(self) -> str:
        return self.name

    @property
    def table(self) -> PolicyTable:
        """The two-player policy table (read when first needed)."""
        if self._table is None:
            self._table = policy_table(self.rules, 2)
        return self._table

    def seats(self, players: int) -> PolicyTable | None:
        """The table of three players or more that a game of `players` reads (`api.table_players`; given, or
        read when first needed), or None when only the two-player table fits the budget."""
        if self._given is not None:
            return self._given
        if players not in self._seats:
            size = table_players(self.rules, players)
            table = policy_table(self.rules, size, complete=False) if size > 2 else None
            if table is None and self.rules.name not in _TOO_LARGE_SAID:
                _TOO_LARGE_SAID.add(self.rules.name)
                warnings.warn(f"optimal: the {players}-player solve of '{self.rules.name}' is beyond the budget; "
                              f"playing {table_words(2)} against {threat_words(1)}", stacklevel=3)
            self._seats[players] = table
        return self._seats[players]

    def spot(self, view: GameView, offer: tuple[int, int] | None = None) -> tuple[TurnRows, int]:
        """(block, row) of the table where the referee's question in `view` is read (`view_position`, then the
        `locate`: the one reading of a position)."""
        position = view_position(view, offer)
        n = len(view.players)
        if n > 2 and self._given is None and rounds_solved(self.rules) and self._size(n) == n:
            return spot(self._solved(n), position)  # a last round or offers: the solve's own rows
        seats = self.seats(n) if n > 2 and position.target is None else None  # a last turn at a larger table:
        return locate(seats or self.table, position)  # the two-player table's

    def _size(self, players: int) -> int:
        """The exact table a game of `players` reads (`api.table_players`), kept."""
        if players not in self._sizes:
            self._sizes[players] = table_players(self.rules, players)
        return self._sizes[players]

    def _solved(self, players: int) -> SolveResult:
        """The solved `players` table (under a last round or take-over offers its rows are read from it), kept."""
        found = self._results.get(players)
        if found is None:
            found = self._results[players] = solve(self.rules, "win", players=players)
        return found

    def _said(self, question: str, view: GameView, answer: _Answer, detail: Any = None) -> _Answer:
        if self.narrate is not None:
            self.narrate(question, view, answer, detail)
        return answer

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> int:
        block, r = self.spot(view)
        d, n = self.rules.dice, view.dice_in_hand
        units = np.array([0 if k.win else k.points // UNIT for k in keeps])
        left = np.array([(n - k.size) or d for k in keeps])
        win = np.array([k.win for k in keeps], dtype=bool)
        doubled = self._announced.pop(view.seat, None) == (view.turn_number, view.turn_points) and n == 2
        assert view.roll is not None
        taken = roll_keep(block, r, view.turn_points // UNIT, tuple(view.roll), doubled)
        choice = int(same_keep(block_graph(block), taken, units, left, win))
        return self._said("keep", view, choice, (keeps[choice], doubled))

    def should_bank(self, view: GameView) -> bool:
        block, r = self.spot(view)
        return self._said("bank", view, bool(block.banks(r, view.turn_points // UNIT, view.dice_in_hand)))

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        block, r = self.spot(view, (offer.points, offer.dice))
        return self._said("take_over", view, bool(block.takes_over(r, offer.points // UNIT, offer.dice)), offer)

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        """Announce the points of the last two dice where the table says that beats rolling them plainly."""
        block, r = self.spot(view)
        points = int(block.announcement(r, view.turn_points // UNIT))
        answer = points if points in choices else None
        if answer is not None:
            self._announced[view.seat] = (view.turn_number, view.turn_points)
        return self._said("predict", view, answer)


def make_policy(arg: str | None, rules: Rules, rng: np.random.Generator | None = None) -> OptimalPolicy:
    """`parse_policy("optimal", rules)`: the solved policy (takes no argument)."""
    if arg:
        raise CinqmilleError(f"policy 'optimal' takes no argument, got 'optimal:{arg}'")
    return OptimalPolicy(rules)
