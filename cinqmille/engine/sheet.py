"""The score sheet: a game whose turns are entered as outcomes (points banked, a bust), without dice.

At a real table the dice are rolled by hand and only the outcome of each turn is
written down. `Sheet` plays such a game through the referee (`Game.begin_turn`,
`Game.end_turn`), so that every rule is applied as in a game with dice: the
opening and the minimum bank (`Rules.banking`), an exact end and its overshoots,
the last round, the final stretch, crosses, ties and every penalty, take-overs.
An entry that the rules refuse raises `SheetRefusal` with the reason, and the
sheet is left as it was.

Entries (also the JSON of the web API and of a sheet log):

- ``{"kind": "bank", "points": 350}``: the player banked 350 (``"dice": 2``,
  optional, the dice he had in hand, which the next player may take over;
  ``"taken": true`` when he took over the previous player's bank, whose points
  his 350 include);
- ``{"kind": "bust"}``: a scoreless turn (a bust, an overshoot under an exact
  end, a wrong prediction); ``"all_dice": true`` when it busted on a roll of
  all the dice (RULES.md 5, `bust_strikes_last_score`);
- ``{"kind": "win"}``: an instant win (five 1s when the ruleset says so).

A sheet log (`sheet_log`) holds the ruleset in full, the players' names and the
entries, with the scores the referee wrote; `replay_sheet_log` reads it back
and plays it again (`cinqmille.engine.replay`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..dice.reach import reachable
from ..errors import CinqmilleError
from ..table.position import Position
from ..rules import Rules
from ..rules.loading import MAX_POINTS, PRESET_NAMES, rules_from_dict, to_dict
from .log import Banked, Bust, Event, GameEnd, Penalty, TakeOver, TurnEnd, event_to_dict
from ..dice.scoring import Keep
from .protocol import KeepChoice, Policy
from .referee import MAX_PLAYERS, MIN_PLAYERS, Game, TurnOutcome
from .state import GameView, LastRound, PlayerState, TakeOverOffer

#: The format name and version of a sheet log.
LOG_FORMAT, LOG_VERSION = "cinqmille-sheet", 1
#: Most entries one sheet holds (a game of 5000 rarely lasts 200 turns).
MAX_ENTRIES = 5000
#: Longest player name.
MAX_NAME = 40
EntryKind = Literal["bank", "bust", "win"]


class SheetError(CinqmilleError):
    """A sheet or an entry that is not well formed (a missing field, a name too long)."""


class SheetRefusal(CinqmilleError):
    """An entry that the rules refuse; `index` is its place in the list of entries."""

    def __init__(self, index: int, reason: str):
        super().__init__(reason)
        self.index, self.reason = index, reason


@dataclass(frozen=True, slots=True)
class Entry:
    """One turn as written on the sheet."""

    kind: EntryKind
    points: int = 0
    dice: int | None = None
    taken: bool = False
    all_dice: bool = False

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of the entry (fields at their default left out)."""
        out: dict[str, Any] = {"kind": self.kind}
        if self.kind == "bank":
            out["points"] = self.points
            if self.dice is not None:
                out["dice"] = self.dice
            if self.taken:
                out["taken"] = True
        elif self.all_dice:
            out["all_dice"] = True
        return out


def _int(data: Mapping[str, Any], key: str, where: str) -> int:
    value = data.get(key)
    if type(value) is not int:
        raise SheetError(f"{where}: '{key}' must be a whole number, got {_short(value)}")
    return value


def _flag(data: Mapping[str, Any], key: str, where: str) -> bool:
    value = data.get(key, False)
    if type(value) is not bool:
        raise SheetError(f"{where}: '{key}' must be true or false, got {_short(value)}")
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def entry_from_dict(data: Any, index: int = 0) -> Entry:
    """Read one entry from its JSON form (raises `SheetError`)."""
    where = f"entry {index + 1}"
    if not isinstance(data, Mapping):
        raise SheetError(f"{where}: expected an object such as {{\"kind\": \"bank\", \"points\": 350}}")
    unknown = set(data) - {"kind", "points", "dice", "taken", "all_dice"}
    if unknown:
        raise SheetError(f"{where}: unknown field {_short(sorted(unknown)[0])}")
    kind = data.get("kind")
    if kind == "bank":
        dice = None if data.get("dice") is None else _int(data, "dice", where)
        return Entry("bank", _int(data, "points", where), dice, _flag(data, "taken", where))
    if kind == "bust":
        return Entry("bust", all_dice=_flag(data, "all_dice", where))
    if kind == "win":
        return Entry("win")
    raise SheetError(f"{where}: 'kind' must be 'bank', 'bust' or 'win', got {_short(kind)}")


def check_names(names: Sequence[Any]) -> tuple[str, ...]:
    """The players' names, checked: 2 to 8 names of 1 to `MAX_NAME` printable characters."""
    if not isinstance(names, (list, tuple)) or not MIN_PLAYERS <= len(names) <= MAX_PLAYERS:
        raise SheetError(f"players: a sheet has {MIN_PLAYERS} to {MAX_PLAYERS} players")
    out = []
    for i, name in enumerate(names):
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or not name.isprintable():
            raise SheetError(f"players: name {i + 1} must be 1 to {MAX_NAME} printable characters, got {_short(name)}")
        out.append(name.strip())
    return tuple(out)


class _NoDice:
    """The policy of a sheet seat: never asked, since no turn of a sheet rolls dice."""

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> KeepChoice:
        raise CinqmilleError("a score sheet never asks a player a question")

    def should_bank(self, view: GameView) -> bool:
        raise CinqmilleError("a score sheet never asks a player a question")

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        raise CinqmilleError("a score sheet never asks a player a question")

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        raise CinqmilleError("a score sheet never asks a player a question")


@dataclass(frozen=True, slots=True)
class SheetState:
    """The sheet after its entries: every player's sheet, who plays next, the winner."""

    rules: Rules
    names: tuple[str, ...]
    entries: tuple[Entry, ...]
    players: tuple[PlayerState, ...]
    events: tuple[Event, ...]
    to_move: int | None  # None once the game is over
    winner: int | None
    reason: str | None  # why the game ended: "goal", "last_round", "instant_win"
    last_round: LastRound | None
    offer: TakeOverOffer | None  # the bank the player to move may take over (with its dice known)

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(p.score for p in self.players)

    def position(self, turn: int = 0, dice: int | None = None) -> Position:
        """The question of the player to move (`Position.at_table`, the one reading of a table's state), with
        `turn` points set aside and `dice` in hand; the take-over offer (an opened mover) only
        before the turn has begun. Not validated."""
        rules, mover = self.rules, self.to_move
        if mover is None:
            raise SheetError("the game is over: there is no player to move")
        offer = None
        if self.offer is not None and rules.take_over and rules.banking.opened(self.scores[mover]) \
                and not turn and dice is None:
            offer = (self.offer.points, self.offer.dice)
        lr = self.last_round
        return Position.at_table(rules, self.scores, mover, tuple(p.zero_turns for p in self.players),
                                 target=None if lr is None else lr.target, offer=offer, turn=turn, dice=dice)

    def turns(self) -> list[dict[str, Any]]:
        """One record per entry: who played, what the sheet says happened, and the scores after it."""
        out: list[dict[str, Any]] = []
        current: dict[str, Any] | None = None
        for event in self.events:
            if isinstance(event, TurnEnd):
                if current is not None:
                    current["scores"] = list(event.scores)
                    out.append(current)
                current = None
            elif current is None and not isinstance(event, GameEnd):
                seat = getattr(event, "seat", 0)
                current = {"seat": seat, "notes": []}
            if current is not None:
                note = _note(self.names, event)
                if note:
                    current["notes"].append(note)
        return out

    def as_dict(self) -> dict[str, Any]:
        """The JSON form of the web API: scores, sheets, who plays, the winner, the turns."""
        lr = self.last_round
        return {
            "rules": self.rules.name,
            "players": [
                {"name": n, "score": p.score, "opened": p.opened, "crosses": p.crosses, "zero_turns": p.zero_turns,
                 "history": [{"score": e.score, "struck": e.struck} for e in p.history]}
                for n, p in zip(self.names, self.players)],
            "scores": list(self.scores),
            "to_move": self.to_move,
            "winner": self.winner,
            "reason": self.reason,
            "last_round": None if lr is None else {"trigger": lr.trigger, "leader": lr.leader, "target": lr.target},
            "offer": None if self.offer is None else {"seat": self.offer.seat, "points": self.offer.points,
                                                      "dice": self.offer.dice},
            "turns": self.turns(),
            "entries": [e.as_dict() for e in self.entries],
        }


def _note(names: Sequence[str], event: Event) -> str | None:
    """A short line for the events a score sheet shows (banks, busts, penalties, take-overs)."""
    if isinstance(event, Banked):
        if event.outcome == "void":
            return f"{names[event.seat]}: {event.points} counts for nothing (final stretch: short of the goal)"
        if event.outcome == "fault":
            return f"{names[event.seat]}: {event.points} is a fault (rule of 50)"
        return f"{names[event.seat]}: banks {event.points}, {event.score_before} -> {event.score_after}"
    if isinstance(event, Bust):
        return f"{names[event.seat]}: scoreless turn"
    if isinstance(event, TakeOver) and event.accepted:
        return f"{names[event.seat]}: takes over {event.points}"
    if isinstance(event, Penalty) and event.score_before != event.score_after:
        what = {"bust_strike": "a bust on all the dice strikes the latest score",
                "cross_strike": "second cross: the latest score is struck out",
                "zero_turns": "scoreless turns in a row", "knock_back": "tie: knocked back",
                "deadly_tie": "deadly tie: that score is struck out", "cross": "a cross"}[event.kind]
        return f"{names[event.seat]}: {what}, {event.score_before} -> {event.score_after}"
    if isinstance(event, Penalty) and event.kind == "cross":
        return f"{names[event.seat]}: a cross"
    if isinstance(event, GameEnd):
        return f"{names[event.winner]} wins"
    return None


class Sheet:
    """A game of 2 to 8 players written on a score sheet, one entry per turn, refereed by `Game`."""

    def __init__(self, rules: Rules, names: Sequence[str]):
        self.rules = rules
        self.names = check_names(names)
        policies: list[Policy] = [_NoDice() for _ in self.names]
        self._game = Game(rules, policies, dice=_EmptyDice(), max_turns=MAX_ENTRIES)
        self._entries: list[Entry] = []
        self._dice_of_offer: int | None = None  # the dice in hand of the last bank, when entered

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._entries)

    def refusal(self, entry: Entry) -> str | None:
        """Why the rules refuse `entry` as the next turn (None when they accept it)."""
        rules, game = self.rules, self._game
        if game.finished:
            return "the game is over"
        seat = game.seat_to_play
        player = game.players[seat]
        if entry.kind == "win":
            if rules.five_ones != "win":
                return f"'{rules.name}' has no instant win (five 1s are not a win under these rules)"
            return None
        if entry.kind == "bust":
            return None
        points, banking = entry.points, rules.banking
        if entry.dice is not None and not 1 <= entry.dice <= rules.dice:
            return f"the dice in hand must be between 1 and {rules.dice}, got {entry.dice}"
        if points <= 0 or points % 50:
            return f"a bank is a positive multiple of 50 points, got {points}"
        if points > MAX_POINTS:
            return f"a bank of more than {MAX_POINTS:,} points is not a turn of this game"
        own = points
        if entry.taken:
            offer = game.offer
            if not rules.take_over:
                return f"'{rules.name}' has no take-over"
            if offer is None:
                return "there is no bank to take over (the previous player did not bank)"
            if not player.opened:
                return "only an opened player may take over"
            if points <= offer.points:
                return (f"a bank that takes over {offer.points} is entered whole, the taken points included: more "
                        f"than {offer.points}, as the taker must roll before banking; got {points}")
            own = points - offer.points
        if own <= rules.goal * 2 and not entry.taken and not reachable(rules, 2 * rules.goal // 50)[own // 50].any():
            return f"no turn makes exactly {points} points under '{rules.name}'"
        if not banking.allowed(player.score, points, entry.dice):
            if not banking.hand_ok(entry.dice):
                return f"after a full hand the player must roll all {rules.dice} dice again: no bank with them all in hand"
            if not player.opened:
                return f"{self.names[seat]} has not opened: the first bank must be at least {rules.opening}"
            return f"the minimum bank is {rules.min_bank}"
        if banking.overshoots(player.score, points):
            return (f"{player.score} + {points} passes the goal ({rules.goal}): under an exact end that turn is "
                    f"a bust (an overshoot), enter it as a bust")
        return None

    def enter(self, entry: Entry) -> None:
        """Write the next turn on the sheet, or raise `SheetRefusal` with the reason (the sheet unchanged)."""
        why = self.refusal(entry)
        if why is not None:
            raise SheetRefusal(len(self._entries), why)
        game = self._game
        offer = game.offer
        seat = game.begin_turn()
        if offer is not None and self.rules.take_over and game.players[seat].opened:
            game.log(TakeOver(seat, offer.points, offer.dice, entry.taken))
        if entry.kind == "win":
            outcome = TurnOutcome("win")
        elif entry.kind == "bust":
            outcome = TurnOutcome("bust", all_dice=entry.all_dice)
            game.log(Bust(seat, "no_score", 0, entry.all_dice))
        else:
            outcome = TurnOutcome("bank", entry.points, entry.dice or 0)
        game.end_turn(seat, outcome)
        self._entries.append(entry)
        self._dice_of_offer = entry.dice if entry.kind == "bank" else None

    def state(self) -> SheetState:
        """The frozen sheet as it stands."""
        game = self._game
        events = game.events
        end = next((e for e in reversed(events) if isinstance(e, GameEnd)), None)
        offer = game.offer
        if offer is not None and (self._dice_of_offer is None or not self.rules.take_over):
            offer = None
        return SheetState(self.rules, self.names, self.entries, game.players, events,
                          None if game.finished else game.seat_to_play, game.winner,
                          None if end is None else end.reason, game.last_round, offer)


class _EmptyDice:
    """The dice of a sheet: never rolled."""

    def roll(self, n: int) -> tuple[int, ...]:
        raise CinqmilleError("a score sheet never rolls dice")


def play_sheet(rules: Rules, names: Sequence[str], entries: Sequence[Any]) -> SheetState:
    """The sheet after `entries` (dicts or `Entry`); raises `SheetRefusal` at the first entry the rules refuse."""
    if not isinstance(entries, (list, tuple)):
        raise SheetError("entries: expected a list")
    if len(entries) > MAX_ENTRIES:
        raise SheetError(f"entries: a sheet holds at most {MAX_ENTRIES} turns")
    sheet = Sheet(rules, names)
    for i, data in enumerate(entries):
        sheet.enter(data if isinstance(data, Entry) else entry_from_dict(data, i))
    return sheet.state()


def sheet_log(state: SheetState) -> dict[str, Any]:
    """The downloadable log of a sheet: the ruleset in full, the names, the entries and what the referee wrote."""
    return {
        "format": LOG_FORMAT,
        "version": LOG_VERSION,
        "rules": to_dict(state.rules),
        "players": list(state.names),
        "entries": [e.as_dict() for e in state.entries],
        "scores": list(state.scores),
        "winner": state.winner,
        "events": [event_to_dict(e) for e in state.events],
    }


def read_sheet_log(data: Any) -> tuple[Rules, tuple[str, ...], list[Any]]:
    """The ruleset, names and entries of a sheet log (raises `SheetError` or `RulesError`)."""
    if not isinstance(data, Mapping) or data.get("format") != LOG_FORMAT:
        raise SheetError(f"not a sheet log (expected \"format\": \"{LOG_FORMAT}\")")
    if data.get("version") != LOG_VERSION:
        raise SheetError(f"sheet log version {_short(data.get('version'))} is not {LOG_VERSION}")
    rules_data = data.get("rules")
    if not isinstance(rules_data, dict):
        raise SheetError("sheet log: 'rules' must be the ruleset as an object")
    if rules_data.get("base", PRESET_NAMES[0]) not in PRESET_NAMES:
        raise SheetError("sheet log: the rules' 'base' must be a preset")
    rules = rules_from_dict(dict(rules_data), "sheet log rules")
    entries = data.get("entries")
    if not isinstance(entries, list):
        raise SheetError("sheet log: 'entries' must be a list")
    return rules, check_names(data.get("players", ())), entries
