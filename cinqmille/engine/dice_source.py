"""Where the dice come from: a seeded numpy Generator, or a scripted list of rolls (replays, tests)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, Union

import numpy as np

from .errors import ScriptError

RollSpec = Union[str, Sequence[int]]


class DiceSource(Protocol):
    """Anything that rolls n dice and returns their faces (Python ints 1..6) in the order rolled."""

    def roll(self, n: int) -> tuple[int, ...]: ...


class RandomDice:
    """Fair dice from a `numpy.random.Generator` (drawn in blocks; same seed, same game)."""

    _BLOCK = 1024

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._buf: list[int] = []
        self._pos = 0

    def roll(self, n: int) -> tuple[int, ...]:
        if self._pos + n > len(self._buf):
            self._buf = self._buf[self._pos:] + self._rng.integers(1, 7, size=self._BLOCK).tolist()
            self._pos = 0
        out = tuple(self._buf[self._pos:self._pos + n])
        self._pos += n
        return out


def parse_roll(spec: RollSpec) -> tuple[int, ...]:
    """Faces of a roll written as "6-6-4-3-2", "66432", "6 6 4 3 2" or a sequence of ints."""
    if isinstance(spec, str):
        faces = tuple(int(ch) for ch in spec if ch in "0123456789")
    else:
        faces = tuple(int(f) for f in spec)
    if not faces or any(f < 1 or f > 6 for f in faces):
        raise ScriptError(f"not a roll of dice: {spec!r}")
    return faces


class ScriptedDice:
    """Rolls taken in order from a script; a roll of the wrong size or a missing roll is a `ScriptError`."""

    def __init__(self, rolls: Iterable[RollSpec]):
        self._rolls = [parse_roll(r) for r in rolls]
        self._pos = 0

    @property
    def remaining(self) -> int:
        """Rolls of the script not used yet."""
        return len(self._rolls) - self._pos

    def roll(self, n: int) -> tuple[int, ...]:
        if self._pos >= len(self._rolls):
            raise ScriptError(f"the dice script is exhausted ({len(self._rolls)} rolls) at a roll of {n} dice")
        faces = self._rolls[self._pos]
        if len(faces) != n:
            raise ScriptError(f"scripted roll #{self._pos + 1} {'-'.join(map(str, faces))} has "
                              f"{len(faces)} dice, but {n} dice are in hand")
        self._pos += 1
        return faces
