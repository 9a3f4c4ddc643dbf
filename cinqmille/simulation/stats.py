"""What a batch of games returns, how batches combine, and the statistics reported.

Confidence intervals of win rates are Wilson score intervals at 95 %; the
standard error of a rate is the binomial one, ``sqrt(p (1 - p) / n)``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Z95 = 1.959963984540054


@dataclass(frozen=True, eq=False, slots=True)
class BatchStats:
    """Per-game winners and lengths (turns), and per-seat counts of turns, busts and scored banks."""

    winner: np.ndarray  # (games,) seat index
    length: np.ndarray  # (games,) turns played in the game
    turns: np.ndarray  # (players,) turns played by each seat
    busts: np.ndarray  # (players,) turns that ended in a bust (no scoring die, overshoot, wrong prediction)
    banks: np.ndarray  # (players,) banks that were written on the sheet
    banked_points: np.ndarray  # (players,) points of those banks (the turn points)

    @classmethod
    def of(cls, winner: np.ndarray, length: np.ndarray, turns: np.ndarray, busts: np.ndarray,
           banks: np.ndarray, banked_points: np.ndarray) -> "BatchStats":
        return cls(np.asarray(winner, dtype=np.int8), np.asarray(length, dtype=np.int32),
                   *(np.asarray(x, dtype=np.int64) for x in (turns, busts, banks, banked_points)))

    @classmethod
    def combine(cls, parts: Sequence["BatchStats"]) -> "BatchStats":
        """The batches of one simulation, in batch order."""
        return cls(np.concatenate([p.winner for p in parts]), np.concatenate([p.length for p in parts]),
                   *(np.sum([getattr(p, f) for p in parts], axis=0) for f in ("turns", "busts", "banks", "banked_points")))

    def equals(self, other: "BatchStats") -> bool:
        """Same games, same outcomes (for reproducibility checks)."""
        return all(np.array_equal(getattr(self, f), getattr(other, f))
                   for f in ("winner", "length", "turns", "busts", "banks", "banked_points"))


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def std_error(p: float, n: int) -> float:
    """Binomial standard error of a rate p estimated from n trials."""
    return math.sqrt(max(p * (1 - p), 0.0) / n) if n else float("nan")
