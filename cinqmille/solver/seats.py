"""Values per seat: what a state is worth to each player, in playing order from the player to move.

A turn-start table stores, for a game of ``n`` players, the chances of the
first ``n - 1`` seats (the mover first); the last seat's chance is what they
leave, ``1 - sum`` (somebody always wins). When the dice pass, the player who
moved becomes the last seat of the next state: `pass_dice` turns the next
mover's values into the values seen by the player who passed. For two players
it is ``L = 1 - W(b, a)``.

>>> pass_dice(np.array([0.7]))          # two players: the next mover's 0.7 is my 0.3
array([0.3])
>>> pass_dice(np.array([0.5, 0.3]))     # three players: next mover 0.5, the one after 0.3, me 0.2
array([0.2, 0.5])
>>> every_seat(np.array([0.5, 0.3]))
array([0.5, 0.3, 0.2])
"""

from __future__ import annotations

import numpy as np


def every_seat(values: np.ndarray) -> np.ndarray:
    """The stored values of the first n - 1 seats completed with the last seat's ``1 - sum``."""
    values = np.asarray(values, dtype=float)
    return np.concatenate([values, 1.0 - values.sum(axis=-1, keepdims=True)], axis=-1)


def pass_dice(theirs: np.ndarray) -> np.ndarray:
    """Stored values of a state seen by the player who just passed the dice into it (he is now last).

    ``theirs[..., j]`` is seat j's chance in the next state's order (its mover
    first); the result is in the passer's order: the passer's own chance
    (``1 - sum``, the next state's last seat) first, then the next mover, ...
    """
    theirs = np.asarray(theirs, dtype=float)
    ours = np.empty_like(theirs)
    ours[..., 0] = 1.0 - theirs.sum(axis=-1)
    ours[..., 1:] = theirs[..., :-1]
    return ours


def passed(w_next: np.ndarray) -> np.ndarray:
    """Two players: what a state whose mover's chance is `w_next` is worth to the player who passed (``1 - W``)."""
    return pass_dice(np.asarray(w_next, dtype=float)[..., None])[..., 0]


def rotate(full: np.ndarray, steps: int = 1) -> np.ndarray:
    """Full seat vectors (every seat) of a state `steps` passes later, seen from this state's order."""
    steps %= full.shape[-1]
    return full if not steps else np.concatenate([full[..., -steps:], full[..., :-steps]], axis=-1)  # np.roll's
