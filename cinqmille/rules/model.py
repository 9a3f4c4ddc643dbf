"""The `Rules` value: every parameter of the rule book (RULES.md sections 2 to 5 and 9).

A `Rules` is frozen and hashable; `standard` defaults are the field defaults.
It knows nothing of dice or solving: `cinqmille.dice` reads it to build the
scoring tables, the engine and the solver read it for everything else.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any, Literal, Union

from ..errors import CinqmilleError
from .bank import BankRules

Multiples = Literal["additive", "linear", "doubling", "fixed"]
End = Literal["reach", "exact"]
AllScoringRoll = Literal["free", "keep_all_and_roll"]
HotDice = Literal["optional", "mandatory"]
Ties = Literal["off", "knock_back", "deadly"]
FiveOfAKind = Union[Literal["win", "multiples"], int]
ZeroTurnsTo = Union[Literal["zero", "previous"], int]

#: Default values of a triple of each face 1..6.
DEFAULT_TRIPLES: tuple[int, ...] = (1000, 200, 300, 400, 500, 600)


@dataclass(frozen=True, slots=True)
class Straights:
    """Straights by their faces (RULES.md section 9): points of each (0 = none) and `from_six`.

    A five-dice straight counts in a roll of exactly five dice, and with
    `from_six` also in a roll of six dice (the sixth die may still score).
    1-2-3-4-5-6 counts in a roll of six dice.
    """

    low: int = 0  # 1-2-3-4-5
    high: int = 0  # 2-3-4-5-6
    full: int = 0  # 1-2-3-4-5-6
    from_six: bool = False


@dataclass(frozen=True, slots=True)
class FinalStretch:
    """`final_stretch`: at or above `start` a turn counts only if it reaches the goal."""

    start: int = 4000
    cap: bool = True


@dataclass(frozen=True, slots=True)
class ZeroTurns:
    """`zero_turns`: after `count` scoreless turns in a row, fall back (`to`)."""

    count: int = 3
    to: ZeroTurnsTo = "zero"


@dataclass(frozen=True)
class Rules:
    """One ruleset of 5000; field names follow RULES.md, points are real points."""

    name: str = "standard"
    description: str = ""
    dice: int = 5
    goal: int = 5000
    end: End = "reach"
    opening: int = 750
    min_bank: int = 0
    single_1: int = 100
    single_5: int = 50
    triples: tuple[int, ...] = DEFAULT_TRIPLES
    multiples: Multiples = "additive"
    straights: int | Straights = 1500  # an int keeps the meaning of RULES.md section 2
    full_house: int = 0
    kinds: tuple[int, ...] = ()  # multiples = "fixed": points of 4, 5 and 6 of a kind (0 = none)
    three_pairs: int = 0
    four_and_pair_as_three_pairs: bool = False
    two_triplets: int = 0
    four_and_pair: int = 0
    no_score_roll: int = 0  # a roll of all the dice with no scoring die scores these points (Zilch), 0 = a bust
    five_ones: FiveOfAKind = "win"
    five_fives: FiveOfAKind = 5000
    split_combinations: bool = True
    must_keep_triples: bool = False
    all_scoring_roll: AllScoringRoll = "free"
    hot_dice: HotDice = "optional"
    rule_of_50: bool = False
    take_over: bool = False
    last_round: bool = False
    final_stretch: FinalStretch | None = None
    zero_turns: ZeroTurns | None = None
    crosses: bool = False
    bust_strikes_last_score: bool = False
    ties: Ties = "off"
    prediction: bool = False
    start: tuple[int, ...] = ()  # starting scores per seat, first seat first (missing seats start at 0)
    extra: tuple[tuple[str, str], ...] = field(default=(), compare=False, repr=False)

    def __hash__(self) -> int:
        """The dataclass's hash (of the fields that compare), computed once: a ruleset keys many caches
        (`functools.lru_cache`), which hash it at every call (a tenth of building its dice tables)."""
        found: int | None = self.__dict__.get("_hash")
        if found is None:
            found = hash(tuple(getattr(self, f.name) for f in fields(self) if f.compare))
            self.__dict__["_hash"] = found
        return found

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without its hash: another process hashes its strings differently."""
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    # -- derived facts used everywhere -------------------------------------------
    def triple(self, face: int) -> int:
        """Value of three of a kind of `face` (1..6)."""
        return self.triples[face - 1]

    def single(self, face: int) -> int:
        """Value of a single die of `face` (0 for faces that never score alone)."""
        if face == 1:
            return self.single_1
        if face == 5:
            return self.single_5
        return 0

    @property
    def straights_by_faces(self) -> Straights:
        """The straights as a table: an integer `straights` is both 5-dice straights with 5 dice, 1-2-3-4-5-6 with 6."""
        if isinstance(self.straights, Straights):
            return self.straights
        if self.dice == 5:
            return Straights(low=self.straights, high=self.straights)
        return Straights(full=self.straights)

    def kind(self, size: int) -> int:
        """Points of `size` (4 to 6) of a kind under `multiples = "fixed"` (0 = no such group)."""
        index = size - 4
        return self.kinds[index] if 0 <= index < len(self.kinds) else 0

    @property
    def can_bank_after_full_hand(self) -> bool:
        """Whether a player with a full hand may bank instead of rolling all dice."""
        return self.hot_dice == "optional" and self.all_scoring_roll == "free"

    @property
    def history_rules(self) -> tuple[str, ...]:
        """Names of the active rules that need a score history (RULES.md section 5)."""
        names = []
        if self.zero_turns is not None and self.zero_turns.to == "previous":
            names.append("zero_turns.to = previous")
        if self.crosses:
            names.append("crosses")
        if self.bust_strikes_last_score:
            names.append("bust_strikes_last_score")
        if self.ties != "off":
            names.append(f"ties = {self.ties}")
        return tuple(names)

    def starts(self, players: int) -> tuple[int, ...]:
        """The starting score of each of `players` seats (`start`, padded with 0), first seat first.

        A start at or above the opening counts as opened; below it the seat still
        needs the opening, and the start is added to the bank that opens
        (`BankRules.opened`: a score below the opening is not opened).
        """
        if len(self.start) > players:
            raise CinqmilleError(f"the ruleset '{self.name}' gives starting scores for {len(self.start)} seats, "
                                 f"not {players}")
        return self.start + (0,) * (players - len(self.start))

    @cached_property
    def banking(self) -> BankRules:
        """The banking rules in real points (`cinqmille.rules.bank`)."""
        return BankRules.of(self, unit=1)
