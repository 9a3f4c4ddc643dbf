"""Replaying a recorded game: scripted dice and scripted decisions taken from its event log."""

from __future__ import annotations

from collections.abc import Sequence

from ..rules import Rules
from .dice_source import ScriptedDice
from .log import Banked, Event, InstantWin, Kept, Prediction, Roll, TakeOver
from .referee import Game, GameResult
from .scripted import ScriptedPolicy
from .sheet import SheetError, SheetState, play_sheet, read_sheet_log
from .state import PlayerState


def script_of(events: Sequence[Event], n_players: int) -> tuple[list[tuple[int, ...]], list[ScriptedPolicy]]:
    """The rolls and, per seat, a `ScriptedPolicy` holding every answer recorded in `events`."""
    rolls: list[tuple[int, ...]] = []
    keeps: list[list[tuple[int, ...]]] = [[] for _ in range(n_players)]
    banks: list[list[bool]] = [[] for _ in range(n_players)]
    takes: list[list[bool]] = [[] for _ in range(n_players)]
    preds: list[list[int | None]] = [[] for _ in range(n_players)]
    for event in events:
        if isinstance(event, Roll):
            rolls.append(event.faces)
            if event.asked:
                banks[event.seat].append(False)
        elif isinstance(event, Banked):
            banks[event.seat].append(True)
        elif isinstance(event, (Kept, InstantWin)):
            keeps[event.seat].append(event.dice)
        elif isinstance(event, TakeOver):
            takes[event.seat].append(event.accepted)
        elif isinstance(event, Prediction):
            preds[event.seat].append(event.points)
    policies = [ScriptedPolicy(keeps[s], banks[s], takes[s], preds[s], name=f"replay of seat {s}")
                for s in range(n_players)]
    return rolls, policies


def replay_events(rules: Rules, events: Sequence[Event], initial: Sequence[PlayerState]) -> GameResult:
    """Play again the game recorded in `events` (with its starting sheets) and return its result."""
    rolls, policies = script_of(events, len(initial))
    return Game(rules, policies, dice=ScriptedDice(rolls), initial=initial).play()


def replay(result: GameResult) -> GameResult:
    """Replay a finished game from its own log; the replay has the same events and scores."""
    return replay_events(result.rules, result.events, result.initial)


def replay_sheet_log(data: object) -> SheetState:
    """Play again the score sheet of a sheet log (`engine.sheet.sheet_log`); its scores must come out the same."""
    rules, names, entries = read_sheet_log(data)
    state = play_sheet(rules, names, entries)
    recorded = data.get("scores") if isinstance(data, dict) else None
    if recorded is not None and recorded != list(state.scores):
        raise SheetError(f"sheet log: its entries give the scores {list(state.scores)}, not the {recorded} it records")
    return state
