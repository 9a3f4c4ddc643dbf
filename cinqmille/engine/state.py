"""The state of the players and the frozen view of a game that policies receive.

A player's score sheet is a history of `ScoreEntry` values (every total ever
written, some struck out); the banked score is the latest entry not struck
out, or 0. A score of 0 means "not opened" (unless the opening is 0). The
functions here are the only ones that change a sheet, each returning a new
`PlayerState`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..dice.scoring import Counts
from ..rules import Rules


@dataclass(frozen=True, slots=True)
class ScoreEntry:
    """One total written on a player's score sheet; `struck` once crossed out."""

    score: int
    struck: bool = False


@dataclass(frozen=True, slots=True)
class PlayerState:
    """A player between turns: banked score, opened flag, score sheet and penalty counters."""

    score: int = 0
    opened: bool = False
    history: tuple[ScoreEntry, ...] = ()
    zero_turns: int = 0  # scoreless turns in a row (rule zero_turns)
    crosses: int = 0  # crosses under the latest score (rule crosses)

    @property
    def standing(self) -> tuple[int, ...]:
        """The totals of the sheet that are not struck out, oldest first."""
        return tuple(e.score for e in self.history if not e.struck)


def _with_history(rules: Rules, player: PlayerState, history: tuple[ScoreEntry, ...],
                  **changes: int) -> PlayerState:
    score = next((e.score for e in reversed(history) if not e.struck), 0)
    return replace(player, score=score, opened=bool(rules.banking.opened(score)), history=history, **changes)


def new_player(rules: Rules, scores: Sequence[int] = (), *, zero_turns: int = 0,
               crosses: int = 0) -> PlayerState:
    """A player whose sheet holds `scores` (oldest first, none struck); for set-ups and tests."""
    history = tuple(ScoreEntry(int(s)) for s in scores)
    return _with_history(rules, PlayerState(), history, zero_turns=zero_turns, crosses=crosses)


def record(rules: Rules, player: PlayerState, score: int) -> PlayerState:
    """Write a new total (a bank): clears crosses and the scoreless-turn count."""
    return _with_history(rules, player, player.history + (ScoreEntry(score),), zero_turns=0, crosses=0)


def write_penalty_total(rules: Rules, player: PlayerState, score: int) -> PlayerState:
    """Write a lower total after a points penalty; a total of 0 strikes the whole sheet."""
    if score <= 0:
        return strike_all(rules, player)
    return _with_history(rules, player, player.history + (ScoreEntry(score),))


def strike_latest(rules: Rules, player: PlayerState) -> PlayerState:
    """Strike out the latest standing total: the player falls back to the one before (or 0)."""
    history = list(player.history)
    for i in range(len(history) - 1, -1, -1):
        if not history[i].struck:
            history[i] = ScoreEntry(history[i].score, True)
            break
    return _with_history(rules, player, tuple(history))


def strike_value(rules: Rules, player: PlayerState, score: int) -> PlayerState:
    """Strike out every standing total equal to `score` (a deadly tie)."""
    history = tuple(ScoreEntry(e.score, True) if (e.score == score and not e.struck) else e
                    for e in player.history)
    return _with_history(rules, player, history)


def strike_all(rules: Rules, player: PlayerState) -> PlayerState:
    """Strike out the whole sheet: back to 0, not opened."""
    history = tuple(ScoreEntry(e.score, True) for e in player.history)
    return _with_history(rules, player, history)


def check_player(rules: Rules, player: PlayerState) -> str | None:
    """Why an initial `PlayerState` is inconsistent, or None when it is fine."""
    score = next((e.score for e in reversed(player.history) if not e.struck), 0)
    if player.score != score:
        return f"score {player.score} is not the latest standing total of its sheet ({score})"
    if player.opened != rules.banking.opened(score):
        return f"opened flag {player.opened} does not match score {score}"
    if score < 0 or score % 50:
        return f"score {score} is not a non-negative multiple of 50"
    if player.zero_turns < 0 or player.crosses < 0:
        return "negative penalty counter"
    return None


@dataclass(frozen=True, slots=True)
class TakeOverOffer:
    """The turn that the previous player banked: his turn points and the dice he had in hand."""

    seat: int
    points: int
    dice: int


@dataclass(frozen=True, slots=True)
class LastRound:
    """The last round in progress: who reached the goal first, who leads, what must be beaten.

    Under `reach` a later player must strictly pass `target` (the leader's score);
    under `exact` he must reach `target` (the goal) to take the victory. The game
    ends after seat `final_seat` has played.
    """

    trigger: int
    leader: int
    target: int
    final_seat: int


@dataclass(frozen=True, slots=True)
class GameView:
    """Everything a policy may look at when it is asked a question (frozen snapshot).

    `turn_points` and `dice_in_hand` describe the turn in progress; for a keep
    question `roll` is the roll just made (`dice_in_hand` dice) and the points
    of the keep are not yet added. `can_bank` says whether banking is legal now.
    """

    rules: Rules
    seat: int
    players: tuple[PlayerState, ...]
    turn_points: int
    dice_in_hand: int
    roll: Counts | None
    rolled: bool  # at least one roll made in this turn
    full_hand: bool  # every die has scored and all D dice came back
    taken_over: bool
    can_bank: bool
    last_round: LastRound | None
    turn_number: int  # 0-based count of turns played in the game

    @property
    def me(self) -> PlayerState:
        return self.players[self.seat]

    @property
    def score(self) -> int:
        """The banked score of the player to move."""
        return self.players[self.seat].score

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(p.score for p in self.players)

    @property
    def opened(self) -> tuple[bool, ...]:
        return tuple(p.opened for p in self.players)

    @property
    def histories(self) -> tuple[tuple[ScoreEntry, ...], ...]:
        return tuple(p.history for p in self.players)

    @property
    def zero_turns(self) -> tuple[int, ...]:
        return tuple(p.zero_turns for p in self.players)

    @property
    def crosses(self) -> tuple[int, ...]:
        return tuple(p.crosses for p in self.players)
