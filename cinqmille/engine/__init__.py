"""The game engine: a referee for full games of 2 to 8 players under any ruleset.

    from cinqmille.engine import play_game, replay
    result = play_game(rules, [policy_a, policy_b], rng=np.random.default_rng(7))
    result.winner, result.scores, result.events        # seat index, final scores, event log
    assert replay(result).scores == result.scores

Modules: `state` (player sheets, the `GameView` given to policies), `protocol`
(the `Policy` protocol), `judge` (pure rule judgements shared with policies),
`dice_source` (seeded or scripted dice), `log` (events), `referee` (`Game`,
`play_game`), `scripted` (`ScriptedPolicy`), `replay`, `errors`.
"""

from .dice_source import DiceSource, RandomDice, ScriptedDice, parse_roll
from .errors import EngineError, IllegalMoveError, ScriptError
from .judge import BankOutcome, bank_allowed, bank_outcome, prediction_choices, reaches_goal
from .log import (
    Banked,
    Bust,
    Event,
    GameEnd,
    InstantWin,
    Kept,
    Penalty,
    Prediction,
    PredictionResult,
    Roll,
    TakeOver,
    TurnEnd,
    TurnStart,
    event_from_dict,
    event_to_dict,
)
from .protocol import KeepChoice, Policy
from .referee import Game, GameResult, play_game
from .replay import replay, replay_events, script_of
from .scripted import ScriptedPolicy
from .state import GameView, LastRound, PlayerState, ScoreEntry, TakeOverOffer, new_player

__all__ = [
    "BankOutcome", "Banked", "Bust", "DiceSource", "EngineError", "Event", "Game", "GameEnd",
    "GameResult", "GameView", "IllegalMoveError", "InstantWin", "KeepChoice", "Kept", "LastRound",
    "Penalty", "PlayerState", "Policy", "Prediction", "PredictionResult", "RandomDice", "Roll",
    "ScoreEntry", "ScriptError", "ScriptedDice", "ScriptedPolicy", "TakeOver", "TakeOverOffer",
    "TurnEnd", "TurnStart", "bank_allowed", "bank_outcome", "event_from_dict", "event_to_dict",
    "new_player", "parse_roll", "play_game", "prediction_choices", "reaches_goal", "replay",
    "replay_events", "script_of",
]
