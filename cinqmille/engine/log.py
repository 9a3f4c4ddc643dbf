"""The event log of a game: one frozen record per thing that happened, in order.

A log holds everything needed to replay a game: the faces of every roll, every
answer a player gave (keeps, `Roll.asked` = chose to roll, banks, take-overs,
predictions), and what the referee did with it (busts, penalties, score sheet
after each turn). `event_to_dict` / `event_from_dict` give a JSON-ready form.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, Literal, Union

from ..dice.scoring import Counts
from ..rules.bank import BankKind
from .errors import ScriptError

BustReason = Literal["no_score", "overshoot", "prediction"]
PenaltyKind = Literal["bust_strike", "cross", "cross_strike", "zero_turns", "knock_back", "deadly_tie"]


@dataclass(frozen=True, slots=True)
class TurnStart:
    """A turn begins (`turn` counts from 0 over the whole game)."""

    seat: int
    turn: int
    score: int


@dataclass(frozen=True, slots=True)
class TakeOver:
    """A take-over was offered; `accepted` is the player's answer."""

    seat: int
    points: int
    dice: int
    accepted: bool


@dataclass(frozen=True, slots=True)
class Prediction:
    """A prediction was offered before rolling the last two dice; `points` is None when declined."""

    seat: int
    points: int | None


@dataclass(frozen=True, slots=True)
class Roll:
    """Dice rolled; `asked` is True when the player chose to roll (banking was legal)."""

    seat: int
    faces: tuple[int, ...]
    asked: bool


@dataclass(frozen=True, slots=True)
class PredictionResult:
    """The roll after a prediction: what it scored and whether the prediction was right."""

    seat: int
    predicted: int
    scored: int
    right: bool


@dataclass(frozen=True, slots=True)
class Kept:
    """Dice kept from the last roll; turn points and dice in hand after the keep."""

    seat: int
    dice: Counts
    points: int
    turn_points: int
    dice_in_hand: int
    doubled: bool = False


@dataclass(frozen=True, slots=True)
class Bust:
    """The turn ends scoreless: no scoring die, an overshoot (`exact`) or a wrong prediction."""

    seat: int
    reason: BustReason
    lost: int
    all_dice: bool  # the busting roll was a roll of all D dice


@dataclass(frozen=True, slots=True)
class Banked:
    """The player banked `points`: `scored`, `void` (final stretch) or `fault` (rule of 50)."""

    seat: int
    points: int
    outcome: BankKind
    score_before: int
    score_after: int


@dataclass(frozen=True, slots=True)
class Penalty:
    """A penalty applied to `seat` (possibly another player than the one who played)."""

    seat: int
    kind: PenaltyKind
    score_before: int
    score_after: int


@dataclass(frozen=True, slots=True)
class InstantWin:
    """A keep that wins the game at once (five 1s)."""

    seat: int
    dice: Counts


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """The score sheet after the turn: every player's banked score."""

    seat: int
    scores: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class GameEnd:
    """The game is over."""

    winner: int
    reason: Literal["instant_win", "goal", "last_round"]
    scores: tuple[int, ...]


Event = Union[TurnStart, TakeOver, Prediction, Roll, PredictionResult, Kept, Bust, Banked,
              Penalty, InstantWin, TurnEnd, GameEnd]
#: Each event's class by name, called with the fields of a JSON record (`event_from_dict`).
EVENT_TYPES: dict[str, Callable[..., Event]] = {cls.__name__: cls for cls in (
    TurnStart, TakeOver, Prediction, Roll, PredictionResult, Kept, Bust, Banked, Penalty,
    InstantWin, TurnEnd, GameEnd)}


def event_to_dict(event: Event) -> dict[str, Any]:
    """A JSON-ready dict of one event, with its type under "event"."""
    out: dict[str, Any] = {"event": type(event).__name__}
    for f in dataclasses.fields(event):
        value = getattr(event, f.name)
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def event_from_dict(data: dict[str, Any]) -> Event:
    """The event of `event_to_dict` (lists become tuples again)."""
    kind = data.get("event")
    cls = EVENT_TYPES.get(str(kind))
    if cls is None:
        raise ScriptError(f"unknown event type {kind!r} in a game log")
    args = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k != "event"}
    try:
        return cls(**args)
    except TypeError as exc:
        raise ScriptError(f"bad {kind} event in a game log: {exc}") from None
