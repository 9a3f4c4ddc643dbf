"""The engine's exceptions: all are `CinqmilleError`s with a one-line message."""

from __future__ import annotations

from ..errors import CinqmilleError


class EngineError(CinqmilleError):
    """A game that cannot be set up or played on (bad seats, bad initial state, too long)."""


class IllegalMoveError(EngineError):
    """A policy answered with a move that the rules do not allow; the message names move and state."""


class ScriptError(EngineError):
    """A scripted dice sequence or scripted decision list does not fit the game being played."""
