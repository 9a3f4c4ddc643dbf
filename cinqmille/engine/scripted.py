"""A policy that plays answers from a script: worked examples, tests and replays.

Answers are kept in four queues, one per kind of question, consumed in order.
A keep is written as faces ("555", "1-5") or a count vector. Asking a question
whose queue is empty, or scripting a keep that is not legal, is a `ScriptError`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Union

from ..dice.scoring import Counts, Keep, counts_of, faces_of
from .dice_source import parse_roll
from .errors import ScriptError
from .state import GameView, TakeOverOffer

KeepSpec = Union[str, Sequence[int]]


def _keep_counts(spec: KeepSpec) -> Counts:
    if isinstance(spec, str):
        return counts_of(parse_roll(spec))
    values = tuple(int(v) for v in spec)
    if len(values) != 6:
        raise ScriptError(f"a scripted keep is faces as a string or a count vector of 6, got {spec!r}")
    return values


class ScriptedPolicy:
    """Plays scripted keeps, bank-or-roll answers, take-over answers and predictions, in order."""

    def __init__(self, keeps: Iterable[KeepSpec] = (), banks: Iterable[bool] = (),
                 take_overs: Iterable[bool] = (), predictions: Iterable[int | None] = (),
                 name: str = "script"):
        self.name = name
        self._keeps = deque(_keep_counts(k) for k in keeps)
        self._banks = deque(bool(b) for b in banks)
        self._take_overs = deque(bool(b) for b in take_overs)
        self._predictions = deque(predictions)

    @property
    def unused(self) -> dict[str, int]:
        """How many scripted answers of each kind were never asked for."""
        return {"keeps": len(self._keeps), "banks": len(self._banks),
                "take_overs": len(self._take_overs), "predictions": len(self._predictions)}

    def _missing(self, what: str, view: GameView) -> ScriptError:
        return ScriptError(f"{self.name}: no scripted answer left for '{what}' (seat {view.seat}, "
                           f"turn points {view.turn_points}, {view.dice_in_hand} dice, turn #{view.turn_number})")

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> Keep:
        if not self._keeps:
            raise self._missing("keep", view)
        want = self._keeps.popleft()
        for keep in keeps:
            if keep.dice == want:
                return keep
        roll = "-".join(map(str, faces_of(view.roll))) if view.roll else "?"
        legal = ", ".join("".join(map(str, faces_of(k.dice))) for k in keeps)
        raise ScriptError(f"{self.name}: scripted keep {''.join(map(str, faces_of(want)))} is not legal "
                          f"after roll {roll} (legal: {legal})")

    def should_bank(self, view: GameView) -> bool:
        if not self._banks:
            raise self._missing("bank?", view)
        return self._banks.popleft()

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        if not self._take_overs:
            raise self._missing("take over?", view)
        return self._take_overs.popleft()

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        if not self._predictions:
            raise self._missing("predict?", view)
        return self._predictions.popleft()
