"""A review of a finished game: the chance to win that each decision cost, against the best move.

A game log (`game_log`: what `cinqmille play --log FILE` writes) holds the
ruleset, the names, the starting sheets and every event of the referee, dice
included. `review_log` replays it through the referee (`engine.replay.script_of`)
with each seat's recorded answers, and at every question the referee asked
with the dice known (a keep after a roll, bank or roll after a keep, a
take-over offer) asks `advice.advise` for the same question, read as `play`
reads its hints (`play.view_position`): the chance to win with the best move
(`before`), after the move taken (`after`), and the difference (`loss`, the
advice's own `Choice.loss`). Decisions with one legal move are not reviewed.

At a table larger than the largest solved one the advice's chances are
estimated by playing the game out (figure kind "estimated", each within its
`margin`): a loss within the margin is not counted as a loss.

A score sheet (`engine.sheet`, the web page) holds outcomes, not dice: the
decisions it knows are the questions asked of the advice during the game
(`questions`: the entries written when asked, the points set aside, the
dice in hand, the faces rolled), which the page keeps and its download
carries. `review_sheet` reads the move taken at each from what followed in
the same turn: the next question (its points set aside and dice in hand say
which keep was taken, or that the player rolled on) or the turn's entry (a
bank of the points set aside after a keep; a bust, a roll). A question whose
move cannot be read so (a keep followed by a bust) is not reviewed. A sheet
without questions has no decision, and its review says so (`Review.note`).
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from .advice import Advice, Choice, advise
from ..words import faces_words, pct
from ..dice.scoring import Keep, faces_of
from ..engine.dice_source import ScriptedDice
from ..engine.errors import EngineError
from ..engine.log import Event, GameEnd, event_from_dict, event_to_dict
from ..engine.referee import Game
from ..engine.replay import script_of
from ..engine.sheet import LOG_FORMAT as SHEET_FORMAT
from ..engine.sheet import MAX_ENTRIES, Sheet, SheetError, check_names, entry_from_dict, read_sheet_log
from ..engine.state import GameView, PlayerState, ScoreEntry, TakeOverOffer
from ..errors import CinqmilleError
from ..files import atomic_write
from ..parsing import faces
from ..table.position import PositionError
from ..rules import Rules
from ..rules.loading import MAX_POINTS, PRESET_NAMES, rules_from_dict, to_dict
from ..work import Progress, working
from .play import view_position
from ..solver import solve
from ..solver.api import table_players

#: The format name and version of a game log (a game played with dice).
GAME_FORMAT, GAME_VERSION = "cinqmille-game", 1
#: Most events a game log holds (a long game has a few thousand).
MAX_EVENTS = 200_000
#: Largest log file read (a long game's log is well under a megabyte).
MAX_LOG_BYTES = 20_000_000
#: The work of one decision counted in turn states, for the progress report (a game of 50 decisions or more
#: shows one; `cli.progress.QUIET_STATES`).
WORK_PER_DECISION = 40_000
#: Losses at or below this are rounding, not a loss.
TOLERANCE = 1e-12

DecisionKind = Literal["keep", "bank_or_roll", "take_over"]
#: (players) -> the solved `win` table a game of that many players reads.
ResultFor = Callable[[int], Any]


class ReviewError(CinqmilleError):
    """A log that cannot be reviewed: missing, not JSON, not a game log, or not replaying as recorded."""


@dataclass(frozen=True)
class Decision:
    """One reviewed decision: who, when, the move taken and the best one, and the chance each leaves."""

    seat: int
    turn: int  # the game's turn number, from 0
    kind: DecisionKind
    scores: tuple[int, ...]  # every seat's banked score when the decision was taken
    turn_points: int  # points set aside in the turn (before the keep, for a keep)
    dice: int  # dice in hand (rolled, for a keep)
    roll: tuple[int, ...] | None  # the faces rolled (a keep)
    taken: str  # the move taken, in words
    best: str  # the best move, in words
    before: float  # the chance to win with the best move
    after: float  # the chance to win after the move taken
    loss: float  # before - after, as the advice ranks it (>= 0)
    figure: str  # the advice's figure kind ("exact", "settled", "estimated", ...)
    margin: float  # the figures' margin (estimated: the 95 % half-width)

    @property
    def counted(self) -> float:
        """The loss counted in the totals: nothing within the figures' margin (or rounding)."""
        return self.loss if self.loss > max(self.margin, TOLERANCE) else 0.0

    def words(self, names: Sequence[str]) -> str:
        """The decision in a sentence."""
        others = self.scores[self.seat + 1:] + self.scores[:self.seat]  # in playing order after the mover
        board = f"at {self.scores[self.seat]} to {', '.join(map(str, others))}"
        if self.kind == "keep":
            aside = f" with {self.turn_points} set aside" if self.turn_points else ""
            what = f"rolled {faces_words(self.roll or ())}{aside}"
        elif self.kind == "bank_or_roll":
            what = f"{self.turn_points} set aside, {self.dice} {'die' if self.dice == 1 else 'dice'} in hand"
        else:
            what = f"offered {self.turn_points} with {self.dice} {'die' if self.dice == 1 else 'dice'}"
        return (f"turn {self.turn + 1}, {names[self.seat]} {board}, {what}: {self.taken} "
                f"({pct(self.after)}) where {self.best} gave {pct(self.before)}: "
                f"{100 * self.loss:.2f} points lost.")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"seat": self.seat, "turn": self.turn, "kind": self.kind, "scores": list(self.scores),
                "turn_points": self.turn_points, "dice": self.dice,
                "roll": None if self.roll is None else list(self.roll), "taken": self.taken, "best": self.best,
                "before": self.before, "after": self.after, "loss": self.loss, "counted": self.counted,
                "figure": self.figure, "margin": self.margin}


@dataclass(frozen=True)
class Review:
    """The review of one game: its decisions in order and the chance lost by each seat."""

    rules: Rules
    players: tuple[str, ...]
    decisions: tuple[Decision, ...]
    winner: int | None
    unreviewed: int = 0  # decisions the advice cannot answer (outside the solver's model)
    note: str | None = None  # why there is nothing to review (a score sheet)
    table: int = 2  # the players of the solved table read
    kinds: tuple[str, ...] = field(default=())  # the figure kinds met

    @property
    def lost(self) -> tuple[float, ...]:
        """The chance lost by each seat over the game (the sum of its decisions' counted losses)."""
        return tuple(sum((d.counted for d in self.decisions if d.seat == s), 0.0) for s in range(len(self.players)))

    @property
    def margin(self) -> float:
        """The largest margin of the figures (0 when every figure is exact)."""
        return max((d.margin for d in self.decisions), default=0.0)

    def costliest(self, count: int = 3) -> tuple[Decision, ...]:
        """The `count` decisions that lost the most (counted losses only), costliest first."""
        ranked = sorted((d for d in self.decisions if d.counted > 0), key=lambda d: -d.counted)
        return tuple(ranked[:count])

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of `cinqmille review --json`."""
        return {"rules": self.rules.name, "players": list(self.players), "winner": self.winner,
                "note": self.note, "table": self.table, "figures": list(self.kinds), "margin": self.margin,
                "lost": list(self.lost), "unreviewed": self.unreviewed,
                "costliest": [self.decisions.index(d) for d in self.costliest()],
                "costliest_words": [d.words(self.players) for d in self.costliest()],
                "decisions": [d.as_dict() for d in self.decisions]}


# -- the game log --------------------------------------------------------------------------------
def _player_to_dict(player: PlayerState) -> dict[str, Any]:
    return {"score": player.score, "opened": player.opened, "zero_turns": player.zero_turns,
            "crosses": player.crosses, "history": [[e.score, e.struck] for e in player.history]}


def _whole(value: Any, low: int = -MAX_POINTS, high: int = MAX_POINTS) -> bool:
    """A JSON whole number (not a boolean) within [low, high]."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _player_from_dict(data: Any) -> PlayerState:
    """A starting sheet of a game log, every field checked."""
    if not isinstance(data, Mapping):
        raise ReviewError("game log: each starting sheet must be an object")
    history = data.get("history", [])
    fields_ok = (_whole(data.get("score")) and isinstance(data.get("opened"), bool)
                 and _whole(data.get("zero_turns", 0), 0) and _whole(data.get("crosses", 0), 0)
                 and isinstance(history, list) and len(history) <= MAX_ENTRIES
                 and all(isinstance(e, list) and len(e) == 2 and _whole(e[0]) and isinstance(e[1], bool)
                         for e in history))
    if not fields_ok:
        raise ReviewError("game log: a starting sheet is not well formed")
    return PlayerState(data["score"], data["opened"], tuple(ScoreEntry(s, k) for s, k in history),
                       data.get("zero_turns", 0), data.get("crosses", 0))


_FLAGS = frozenset({"asked", "accepted", "right", "doubled", "all_dice"})
_WORDS = frozenset({"reason", "outcome", "kind"})
_SEATS = frozenset({"seat", "winner"})


def _event_ok(data: Mapping[str, Any], rules: Rules, players: int) -> bool:
    """Every field of one event of a game log has the shape of its kind (before the event is built)."""
    kind = data.get("event")
    for key, value in data.items():
        if key == "event":
            continue
        if key in _FLAGS:
            good = isinstance(value, bool)
        elif key in _WORDS:
            good = isinstance(value, str) and len(value) <= 40
        elif key in _SEATS:
            good = _whole(value, 0, players - 1)
        elif key == "faces":
            good = (isinstance(value, list) and 1 <= len(value) <= rules.dice
                    and all(_whole(f, 1, 6) for f in value))
        elif key == "dice" and kind in ("Kept", "InstantWin"):
            good = (isinstance(value, list) and len(value) == 6 and all(_whole(c, 0, rules.dice) for c in value)
                    and sum(value) <= rules.dice)
        elif key == "scores":
            good = isinstance(value, list) and len(value) == players and all(_whole(v) for v in value)
        elif key == "points" and kind == "Prediction":
            good = value is None or _whole(value)
        else:
            good = _whole(value)
        if not good:
            return False
    return True


def game_log(rules: Rules, names: Sequence[str], initial: Sequence[PlayerState],
             events: Sequence[Event]) -> dict[str, Any]:
    """The log of a game played with dice: the ruleset in full, the names, the starting sheets and every event."""
    end = next((e for e in reversed(events) if isinstance(e, GameEnd)), None)
    return {"format": GAME_FORMAT, "version": GAME_VERSION, "rules": to_dict(rules), "players": list(names),
            "initial": [_player_to_dict(p) for p in initial],
            "scores": None if end is None else list(end.scores), "winner": None if end is None else end.winner,
            "events": [event_to_dict(e) for e in events]}


def write_log_file(path: str | Path, log: Mapping[str, Any]) -> None:
    """Write a log as JSON, atomically (`files.atomic_write`: nothing half-written, no device followed)."""
    text = json.dumps(log, indent=1) + "\n"

    def write(tmp: Path) -> None:
        tmp.write_text(text, encoding="utf-8")

    atomic_write(Path(path), write, links=False)


def read_log_file(path: str | Path) -> Any:
    """The JSON of a log file (raises `ReviewError` with one line: missing, too large, not JSON)."""
    path = Path(path)
    try:  # opened without blocking (a FIFO), then read only if it is a regular file (never a device)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise ReviewError(f"{path}: not a regular file")
            raw = handle.read(MAX_LOG_BYTES + 1)
    except OSError as exc:
        raise ReviewError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > MAX_LOG_BYTES:
        raise ReviewError(f"{path}: larger than a game log ({MAX_LOG_BYTES:,} bytes)")
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise ReviewError(f"{path}: not a game log (not JSON)") from None


def _log_rules(data: Mapping[str, Any]) -> Rules:
    """The log's own ruleset (a log always carries its ruleset in full)."""
    rules_data = data.get("rules")
    if not isinstance(rules_data, dict):
        raise ReviewError("game log: 'rules' must be the ruleset as an object")
    if rules_data.get("base", PRESET_NAMES[0]) not in PRESET_NAMES:
        raise ReviewError("game log: the rules' 'base' must be a preset")
    return rules_from_dict(dict(rules_data), "game log rules")


# -- the review ----------------------------------------------------------------------------------
@dataclass
class _Asked:
    """A question the referee asked during the replay, with the answer the log gave."""

    kind: DecisionKind
    view: GameView
    answer: Any
    offer: TakeOverOffer | None = None
    prediction: int | None = None  # rolling on: the announcement made next, if any


class _Recorder:
    """A seat's scripted answers (`script_of`), recording each question asked with its answer."""

    def __init__(self, inner: Any, asked: list[_Asked]):
        self.inner, self.asked = inner, asked
        self._rolled: _Asked | None = None

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> Keep:
        self._rolled = None  # an announcement follows its bank-or-roll question at once, or never
        keep = cast(Keep, self.inner.choose_keep(view, keeps))
        if len(keeps) > 1:
            self.asked.append(_Asked("keep", view, keep))
        return keep

    def should_bank(self, view: GameView) -> bool:
        bank = bool(self.inner.should_bank(view))
        self.asked.append(_Asked("bank_or_roll", view, bank))
        self._rolled = None if bank else self.asked[-1]
        return bank

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        take = bool(self.inner.should_take_over(view, offer))
        self.asked.append(_Asked("take_over", view, take, offer=offer))
        return take

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        points = cast("int | None", self.inner.predict(view, choices))
        if self._rolled is not None:
            self._rolled.prediction = points
            self._rolled = None
        return points


def _replay(rules: Rules, data: Mapping[str, Any]) -> tuple[tuple[str, ...], list[_Asked], int | None]:
    """Replay a game log through the referee: the names, the questions asked, the winner."""
    if data.get("version") != GAME_VERSION:
        raise ReviewError(f"game log version {str(data.get('version'))[:20]} is not {GAME_VERSION}")
    raw_events, raw_initial = data.get("events"), data.get("initial")
    if not isinstance(raw_events, list) or not all(isinstance(e, dict) for e in raw_events):
        raise ReviewError("game log: 'events' must be a list of objects")
    if not isinstance(raw_initial, list):
        raise ReviewError("game log: 'initial' must be the list of starting sheets")
    initial = [_player_from_dict(p) for p in raw_initial]
    try:
        names = check_names(data.get("players", ()))
        if len(names) != len(initial):
            raise ReviewError("game log: one name per starting sheet")
        if len(raw_events) > MAX_EVENTS:
            raise ReviewError(f"game log: more than {MAX_EVENTS:,} events")
        bad = next((i for i, e in enumerate(raw_events) if not _event_ok(e, rules, len(initial))), None)
        if bad is not None:
            raise ReviewError(f"game log: event {bad + 1} ({str(raw_events[bad].get('event'))[:20]}) is not "
                              f"well formed")
        events = [event_from_dict(e) for e in raw_events]
        rolls, scripts = script_of(events, len(initial))
        asked: list[_Asked] = []
        seats = [_Recorder(s, asked) for s in scripts]
        result = Game(rules, seats, dice=ScriptedDice(rolls), initial=initial).play()
    except (EngineError, SheetError) as exc:
        raise ReviewError(f"game log: {exc}") from None
    if tuple(result.events) != tuple(events):
        raise ReviewError("game log: its answers and dice do not replay to the events it records")
    return names, asked, result.winner


def _taken(advice: Advice, asked: _Asked) -> Choice | None:
    """The option of `advice` that the move taken is."""
    if asked.kind == "keep":
        faces = faces_of(cast(Keep, asked.answer).dice)
        return next((o for o in advice.options if o.keep == faces), None)
    if asked.kind == "take_over":
        return next((o for o in advice.options if o.action == ("take_over" if asked.answer else "start")), None)
    if asked.answer:
        return next((o for o in advice.options if o.action == "bank"), None)
    if asked.prediction is not None:
        chosen = next((o for o in advice.options if o.action == "predict" and o.points == asked.prediction), None)
        if chosen is not None:
            return chosen
    return next((o for o in advice.options if o.action == "roll"), None)


def choice_words(choice: Choice) -> str:
    """An option as a move: 'keep 1-5 and roll', 'bank', 'announce 50', 'take over', 'start afresh'."""
    if choice.keep is not None:
        then = {"bank": " and bank", "roll": " and roll", "win": " (wins)", "bust": " (busts)"}.get(choice.then or "", "")
        return f"keep {faces_words(choice.keep)}{then}"
    return {"take_over": "take over", "start": "start afresh", "bank": "bank", "roll": "roll"}.get(
        choice.action or "", f"announce {choice.points}" if choice.action == "predict" else str(choice.action))


def _decision(result: Any, asked: _Asked) -> Decision | None:
    """The reviewed decision of one question (None when the advice has no chance to give for it)."""
    view = asked.view
    offer = None if asked.offer is None else (asked.offer.points, asked.offer.dice)
    position = view_position(result, view, offer)
    roll = faces_of(view.roll) if asked.kind == "keep" and view.roll is not None else None
    advice = advise(result, position, roll)
    if asked.offer is not None:
        points, dice = asked.offer.points, asked.offer.dice
    else:
        points, dice = view.turn_points, view.dice_in_hand
    return _judged(advice, _taken(advice, asked), view.seat, view.turn_number, asked.kind, tuple(view.scores),
                   points, dice)


def _judged(advice: Advice, taken: Choice | None, seat: int, turn: int, kind: DecisionKind,
            scores: tuple[int, ...], points: int, dice: int) -> Decision | None:
    """The decision of `advice` where the move `taken` was made (None where there is no choice or no chance)."""
    best = advice.best
    if taken is None or best is None or advice.figure.kind == "none" or len(advice.options) < 2:
        return None
    # the taken move, said as taken: a keep then bank or roll is judged at the next question
    taken_words = f"keep {faces_words(taken.keep)}" if taken.keep is not None else choice_words(taken)
    return Decision(seat=seat, turn=turn, kind=kind, scores=scores, turn_points=points, dice=dice,
                    roll=advice.roll, taken=taken_words, best=choice_words(best), before=best.win, after=taken.win,
                    loss=taken.loss, figure=advice.figure.kind, margin=advice.figure.margin)


# -- a score sheet's questions -------------------------------------------------------------------
@dataclass(frozen=True)
class Question:
    """A question asked of the advice during a sheet's game: after `entry` entries, `turn` points set aside,
    `dice` in hand (bank or roll?) or the faces `roll` (which keep?)."""

    entry: int
    turn: int
    dice: int | None
    roll: tuple[int, ...] | None

    @classmethod
    def of(cls, data: Any, rules: Rules, entries: int) -> "Question":
        """A question of a sheet log or the page (every field checked; `ReviewError` with one line)."""
        if not isinstance(data, Mapping):
            raise ReviewError("questions: each question must be an object")
        entry, turn, dice, roll = data.get("entry"), data.get("turn") or 0, data.get("dice"), data.get("roll")
        if not _whole(entry, 0, entries):
            raise ReviewError(f"questions: 'entry' must be a whole number from 0 to {entries}")
        if not _whole(turn, 0):
            raise ReviewError("questions: 'turn' must be a whole number of points")
        if dice is not None and not _whole(dice, 1, rules.dice):
            raise ReviewError(f"questions: 'dice' must be 1 to {rules.dice}")
        rolled: tuple[int, ...] | None = None
        if roll is not None:
            text = ",".join(str(f) for f in roll) if isinstance(roll, list) else roll
            if not isinstance(text, str) or len(text) > 40:
                raise ReviewError("questions: 'roll' must be faces such as \"15332\"")
            try:
                rolled = faces(text, rules.dice, "questions: 'roll'")
            except CinqmilleError as exc:
                raise ReviewError(str(exc).splitlines()[0]) from None
        if roll is None and dice is None and turn:
            raise ReviewError("questions: a question with points set aside gives 'dice' or 'roll'")
        return cls(int(cast(int, entry)), int(turn), dice, rolled)

    def hand(self, rules: Rules) -> int:
        """Dice in hand (the faces rolled, or all the dice when not given)."""
        return len(self.roll) if self.roll is not None else self.dice if self.dice is not None else rules.dice


def _sheet_taken(advice: Advice, question: Question, after: Question | None, entry: Any, rules: Rules) -> Choice | None:
    """The option of `advice` the player took at `question`, read from the next question of the same turn
    (`after`) or from the turn's entry; None where neither says it."""
    if question.roll is not None:
        if after is not None:  # the keep that leads to the next question: its points and dice in hand
            return next((o for o in advice.options if o.then in ("bank", "roll") and o.turn == after.turn
                         and o.dice == after.hand(rules)), None)
        if isinstance(entry, Mapping) and entry.get("kind") == "bank" and not entry.get("taken"):
            return next((o for o in advice.options if o.then in ("bank", "roll") and o.turn == entry.get("points")
                         and o.bank is not None), None)
        return None
    if after is not None:  # rolled on: the next question is a roll of the dice in hand, same points
        rolled = after.turn == question.turn and after.hand(rules) == question.hand(rules)
        return next((o for o in advice.options if o.action == "roll"), None) if rolled else None
    if isinstance(entry, Mapping) and entry.get("kind") == "bank" and not entry.get("taken"):
        action = "bank" if entry.get("points") == question.turn else "roll"
        return next((o for o in advice.options if o.action == action), None)
    if isinstance(entry, Mapping) and entry.get("kind") == "bust":
        return next((o for o in advice.options if o.action == "roll"), None)
    return None


def review_sheet(rules: Rules, names: Sequence[str], entries: Sequence[Any], questions: Sequence[Any],
                 result_for: ResultFor | None = None, progress: Progress | None = None) -> Review:
    """The review of a score sheet's game from the questions asked of the advice during it (module docstring)."""
    if len(questions) > MAX_EVENTS:
        raise ReviewError(f"questions: more than {MAX_EVENTS:,}")
    asked = [Question.of(q, rules, len(entries)) for q in questions]
    try:
        sheet = Sheet(rules, names)
        states = [sheet.state()]
        for i, data in enumerate(entries):
            sheet.enter(entry_from_dict(data, i))
            states.append(sheet.state())
    except CinqmilleError as exc:
        raise ReviewError(f"sheet: {str(exc).splitlines()[0]}") from None
    final = states[-1]
    if not asked:
        return Review(rules, final.names, (), final.winner,
                      note=f"this score sheet's {len(entries)} turns were entered as outcomes, without dice, and no "
                           f"question was asked of the advice during the game, so no decision is known")
    result = (result_for or default_result(rules))(len(final.names))
    decisions: list[Decision] = []
    unreviewed = 0
    with working(f"Reviewing {len(asked)} questions", progress, size=len(asked) * WORK_PER_DECISION) as update:
        for i, q in enumerate(asked):
            state = states[q.entry]
            nxt = asked[i + 1] if i + 1 < len(asked) and asked[i + 1].entry == q.entry else None
            decision = None
            if state.to_move is not None:
                try:
                    position = state.position(q.turn, q.dice if q.roll is None else len(q.roll))
                    advice = advise(result, position, q.roll)
                    entry = entries[q.entry] if q.entry < len(entries) else None
                    kind: DecisionKind = "keep" if q.roll is not None else "bank_or_roll"
                    decision = _judged(advice, _sheet_taken(advice, q, nxt, entry, rules), state.to_move, q.entry,
                                       kind, state.scores, q.turn, q.hand(rules))
                except PositionError:
                    unreviewed += 1
            if decision is not None:
                decisions.append(decision)
            update((i + 1) / len(asked))
    kinds = tuple(sorted({d.figure for d in decisions}))
    return Review(rules, final.names, tuple(decisions), final.winner, unreviewed=unreviewed,
                  table=int(getattr(result, "players", 2)), kinds=kinds)


def default_result(rules: Rules) -> ResultFor:
    """The solved `win` table that `advise` reads at a table of n players (`api.table_players`; solved if need be)."""
    def result_for(players: int) -> Any:
        return solve(rules, "win", players=table_players(rules, players))

    return result_for


def review_log(data: Any, result_for: ResultFor | None = None, progress: Progress | None = None) -> Review:
    """The review of a game log (`game_log`) or a score sheet's log (no dice: no decision, a `note`).

    The log carries its ruleset in full (both formats do). `result_for` gives the solved table for a number of players (default: `default_result`).
    Raises `ReviewError` for a log that is not one or does not replay.
    """
    if not isinstance(data, Mapping):
        raise ReviewError("not a game log (expected a JSON object)")
    kind = data.get("format")
    if kind == SHEET_FORMAT:
        try:
            sheet_rules, names, entries = read_sheet_log(data)
        except CinqmilleError as exc:
            raise ReviewError(str(exc)) from None
        questions = data.get("questions", [])
        if not isinstance(questions, list):
            raise ReviewError("sheet log: 'questions' must be a list")
        return review_sheet(sheet_rules, names, entries, questions, result_for, progress)
    if kind != GAME_FORMAT:
        raise ReviewError(f"not a game log (expected \"format\": \"{GAME_FORMAT}\" or \"{SHEET_FORMAT}\")")
    game_rules = _log_rules(data)
    names, asked, winner = _replay(game_rules, data)
    result = (result_for or default_result(game_rules))(len(names))
    decisions: list[Decision] = []
    unreviewed = 0
    with working(f"Reviewing {len(asked)} decisions", progress, size=len(asked) * WORK_PER_DECISION) as update:
        for i, question in enumerate(asked):
            try:
                decision = _decision(result, question)
            except PositionError:
                decision = None
                unreviewed += 1
            if decision is not None:
                decisions.append(decision)
            update((i + 1) / max(1, len(asked)))
    kinds = tuple(sorted({d.figure for d in decisions}))
    return Review(game_rules, names, tuple(decisions), winner, unreviewed=unreviewed,
                  table=int(getattr(result, "players", 2)), kinds=kinds)


def review_file(path: str | Path, result_for: ResultFor | None = None, progress: Progress | None = None) -> Review:
    """`review_log` of the log in the file at `path`."""
    return review_log(read_log_file(path), result_for, progress)
