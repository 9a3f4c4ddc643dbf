"""A game of 5000 in the terminal: people at one keyboard and bots of any policy, over the engine.

`play_text(rules, ["human", "optimal"], console, rng=...)` runs a full game with
the referee (`cinqmille.engine.Game`): the dice are shown, the score sheet after
each turn, and the optimal bot's moves are explained with the sentence of
`advise`. Seats are written as for `simulate` (`cinqmille.players`): `human`,
or a policy name (`optimal`, `bot` for short, `expected`, `threshold:T[/K]`,
`cautious`, `random`). At any decision a person may type `?` for advice, `q`
to quit, or Enter to take the advised move; the numbers typed (faces of a keep,
an announcement) are read by `cinqmille.parsing`. Input and output go through a
`Console` (injectable, so the loop is tested with scripted answers); end of
input quits cleanly.

The optimal bot is the engine policy `optimal` (`cinqmille.policies.optimal.OptimalPolicy`)
reading the solved result's policy table, the one that `advise` reads (with
three seats or more the three-player table, as `advise --opp B,C` reads it,
reduced to the two opponents who threaten most beyond three); after
each keep, take-over and announcement it says the sentence `advise` gives for
that question (`bot_narrator`). The other bots are `parse_policy`'s; their
moves are shown as the referee logs them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np

from ..table.policy import policy_of
from .advice import Advice, advise
from .advice_text import notes_text, render_text
from ..dice.scoring import Keep, counts_of, faces_of
from ..engine import DiceSource, Game
from ..engine import log as ev
from ..engine.state import GameView, TakeOverOffer
from ..errors import CinqmilleError
from ..parsing import faces, whole
from .players import HUMAN, SYNONYMS
from ..policies.heuristics import best_keep
from ..policies.optimal import Narrator, OptimalPolicy
from ..policies.optimal import view_position as engine_position
from ..table.locate import reduced
from ..words import dice_words, faces_words, players_words, table_words, threat_words
from ..table.position import Position, PositionError
from ..rules import Rules
from ..policies import parse_policy

if TYPE_CHECKING:
    from ..engine.protocol import Policy
    from ..solver import SolveResult

OPTIMAL = "optimal"


class Console(Protocol):
    """Where the game talks: `ask` returns one answer line (raises EOFError at end of input)."""

    def ask(self, prompt: str) -> str: ...

    def say(self, text: str = "") -> None: ...


class QuitGame(Exception):
    """A player typed q."""


ResultProvider = Callable[[], "SolveResult"]


def view_position(result: SolveResult, view: GameView, offer: tuple[int, int] | None = None) -> Position:
    """The solver's position for the question the referee asks in `view` (the engine policy's reading,
    `optimal.view_position`), for the advice of `result`."""
    if view.last_round is not None and not result.rules.last_round:
        raise PositionError("a last round is in progress, which this ruleset does not have")
    position = engine_position(view, offer)
    if position.others is not None and getattr(result, "players", 2) == 2:  # the two-player table: the leader
        return replace(position, opp=int(reduced(2, position.me, *position.others)[1]), others=None)
    return position


def view_advice(result: SolveResult, view: GameView) -> Advice:
    """Advice for the question the referee is asking in `view` (raises PositionError outside the model)."""
    position = view_position(result, view)
    if view.roll is not None:
        return advise(result, position, roll=faces_of(view.roll))
    return advise(result, position)


def keep_matching(keeps: tuple[Keep, ...], faces: tuple[int, ...]) -> Keep | None:
    """The legal keep whose dice are `faces`, if any."""
    target = counts_of(faces)
    return next((k for k in keeps if k.dice == target), None)


def bot_policy(result: SolveResult, explain: Callable[[str], None] | None = None) -> OptimalPolicy:
    """`play`'s bot: the engine policy `optimal` on the result's policy table, explaining itself to `explain`."""
    narrate = bot_narrator(result, explain) if explain is not None else None
    if getattr(result, "players", 2) > 2:  # the n-player table of the same result (rows computed when read)
        return OptimalPolicy(result.rules, narrate=narrate, seats=policy_of(result))
    return OptimalPolicy(result.rules, policy_of(result), narrate=narrate)


def bot_narrator(result: SolveResult, explain: Callable[[str], None]) -> Narrator:
    """What the bot says after its decisions: the sentence `advise` gives for the same question."""

    def narrate(question: str, view: GameView, answer: object, detail: object = None) -> None:
        try:
            if question == "keep":
                keep, doubled = cast("tuple[Keep, bool]", detail)
                if doubled:
                    turn = 2 * (view.turn_points + keep.points)
                    explain(f"keep {faces_words(faces_of(keep.dice))} ({keep.points}): the announcement "
                            f"came true, the turn doubles to {turn}.")
                else:
                    explain(view_advice(result, view).sentence)
            elif question == "take_over":
                offer = cast(TakeOverOffer, detail)
                explain(advise(result, view_position(result, view, offer=(offer.points, offer.dice))).sentence)
            elif question == "predict" and answer is not None:
                explain(advise(result, view_position(result, view)).sentence)
        except PositionError as exc:
            explain(f"(no advice here: {exc})")

    return narrate


class Table:
    """What the players share: the console, the names, the solved table (loaded once) and the narration."""

    def __init__(self, rules: Rules, names: Sequence[str], console: Console,
                 result_provider: ResultProvider | None):
        self.rules = rules
        self.names = list(names)
        self.console = console
        self._provider = result_provider
        self._result: SolveResult | None = None
        self.game: Game | None = None
        self._seen = 0

    def result(self) -> SolveResult:
        """The solved table the advice and the bots read, loaded on first use."""
        if self._result is None:
            if self._provider is None:
                raise PositionError("no solved table available for advice")
            self._result = self._provider()
        return self._result

    def say(self, text: str = "") -> None:
        self.console.say(text)

    def flush(self) -> None:
        """Narrate the events the referee logged since the last call."""
        if self.game is None:
            return
        events = self.game.events
        for event in events[self._seen:]:
            line = self.describe(event)
            if line is not None:
                self.say(line)
        self._seen = len(events)

    def sheet(self, scores: Sequence[int]) -> str:
        return "Score sheet: " + " | ".join(f"{n} {s}" for n, s in zip(self.names, scores))

    def describe(self, event: ev.Event) -> str | None:
        """One line for an event of the log (None for those not worth a line)."""
        names = self.names
        if isinstance(event, ev.TurnStart):
            return f"\n--- Turn {event.turn + 1}: {names[event.seat]} ({event.score}) ---"
        if isinstance(event, ev.TakeOver):
            verb = "takes over" if event.accepted else "declines to take over"
            return f"{names[event.seat]} {verb} {event.points} with {dice_words(event.dice)}."
        if isinstance(event, ev.Roll):
            return f"{names[event.seat]}: roll {faces_words(event.faces)}"
        if isinstance(event, ev.Kept):
            return (f"{names[event.seat]}: keep {faces_words(faces_of(event.dice))} ({event.points})"
                    f" -> turn {event.turn_points}, {dice_words(event.dice_in_hand)} in hand")
        if isinstance(event, ev.Bust):
            why = {"no_score": "no scoring die", "overshoot": f"past {self.rules.goal}",
                   "prediction": "wrong prediction"}[event.reason]
            lost = f", {event.lost} lost" if event.lost else ""
            return f"{names[event.seat]}: bust ({why}){lost}."
        if isinstance(event, ev.Banked):
            if event.outcome == "scored":
                return f"{names[event.seat]}: bank {event.points}: {event.score_before} -> {event.score_after}"
            why = "counts for nothing (final stretch)" if event.outcome == "void" else "is a fault (rule of 50)"
            return f"{names[event.seat]}: bank {event.points} {why}."
        if isinstance(event, ev.Penalty):
            return f"{names[event.seat]}: penalty ({event.kind.replace('_', ' ')}): {event.score_before} -> {event.score_after}"
        if isinstance(event, ev.InstantWin):
            return f"{names[event.seat]}: {faces_words(faces_of(event.dice))} wins the game at once!"
        if isinstance(event, ev.Prediction) and event.points is not None:
            return f"{names[event.seat]}: predicts {event.points} for the last two dice."
        if isinstance(event, ev.PredictionResult):
            return f"{names[event.seat]}: the dice scored {event.scored}: {'right' if event.right else 'wrong'}."
        if isinstance(event, ev.TurnEnd):
            return self.sheet(event.scores)
        if isinstance(event, ev.GameEnd):
            if event.reason == "instant_win":  # the sheet is left as it was: the winner need not lead it
                return f"\n{names[event.winner]} won by an instant win. {self.sheet(event.scores)}"
            return f"\n{names[event.winner]} won, {event.scores[event.winner]} to " \
                   f"{max(s for i, s in enumerate(event.scores) if i != event.winner)}."
        return None


class HumanPolicy:
    """A person at the keyboard: answers read from the console; `?` shows advice, Enter takes it."""

    def __init__(self, table: Table, seat: int):
        self.table = table
        self.seat = seat

    def _advice(self, view: GameView) -> Advice | str:
        try:
            return view_advice(self.table.result(), view)
        except PositionError as exc:
            return f"No advice here: {exc}."

    def _show_advice(self, view: GameView) -> None:
        advice = self._advice(view)
        lines = [advice] if isinstance(advice, str) else render_text(advice)
        for line in lines:
            self.table.say("  " + line)

    def _ask(self, prompt: str) -> str:
        answer = self.table.console.ask(prompt).strip().lower()
        if answer in ("q", "quit", "exit"):
            raise QuitGame
        return answer

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> Keep:
        self.table.flush()
        advice = self._advice(view)
        default = None
        if isinstance(advice, Advice) and advice.best is not None:
            default = keep_matching(keeps, advice.best.keep or ())
        default = default or best_keep(view, keeps)
        legal = ", ".join(f"{''.join(map(str, faces_of(k.dice)))} ({'wins' if k.win else k.points})" for k in keeps)
        self.table.say(f"  legal keeps: {legal}")
        shown = "".join(map(str, faces_of(default.dice)))
        while True:
            answer = self._ask(f"Keep which dice? (faces; Enter = {shown}; ? = advice; q = quit) ")
            if answer == "?":
                self._show_advice(view)
                continue
            if answer == "":
                return default
            try:
                keep = keep_matching(keeps, faces(answer, view.dice_in_hand, "keep"))
            except CinqmilleError:
                keep = None
            if keep is not None:
                return keep
            self.table.say(f"  '{answer}' is not a legal keep; choose one of: {legal}")

    def should_bank(self, view: GameView) -> bool:
        self.table.flush()
        advice = self._advice(view)
        default = "roll"  # rolling includes announcing, asked next
        if isinstance(advice, Advice) and advice.best is not None and advice.best.action == "bank":
            default = "bank"
        while True:
            answer = self._ask(f"Turn {view.turn_points}, {dice_words(view.dice_in_hand)} in hand: "
                               f"[b]ank or [r]oll? (Enter = {default}; ?; q) ")
            if answer == "?":
                self._show_advice(view)
                continue
            answer = answer or default
            if answer in ("b", "bank"):
                return True
            if answer in ("r", "roll"):
                return False
            self.table.say("  answer b (bank) or r (roll)")

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        self.table.flush()
        while True:
            answer = self._ask(f"Take over {offer.points} with {offer.dice} dice? [y/n] (Enter = n) ")
            if answer in ("y", "yes"):
                return True
            if answer in ("", "n", "no"):
                return False
            self.table.say("  answer y or n")

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        self.table.flush()
        advice = self._advice(view)
        default = None  # the advised move once rolling: an announcement, or none
        if isinstance(advice, Advice):
            rolling = next((o for o in advice.options if o.action != "bank"), None)
            if rolling is not None and rolling.action == "predict" and rolling.points in choices:
                default = rolling.points
        shown = "no prediction" if default is None else str(default)
        while True:
            answer = self._ask(f"Announce the points of your last two dice ({', '.join(map(str, choices))}), "
                               f"0 for no prediction (Enter = {shown}; ? = advice; q = quit): ")
            if answer == "?":
                self._show_advice(view)
                continue
            if answer == "":
                return default
            try:
                points = whole(answer, "announcement")
            except CinqmilleError:
                points = -1
            if points == 0:
                return None
            if points in choices:
                return points
            self.table.say(f"  choose one of {', '.join(map(str, choices))}, or Enter")


def seat_names(players: Sequence[str]) -> list[str]:
    """'You' for the one person, 'Player N' for several; 'Bot' for the optimal bot, 'Bot (cautious)' for
    another policy, numbered ('Bot 2 (cautious)') when there are several bots."""
    players = [SYNONYMS.get(p, p) for p in players]
    humans = players.count(HUMAN)
    bots = len(players) - humans
    names, counts = [], {HUMAN: 0, "bot": 0}
    for kind in players:
        if kind == HUMAN:
            counts[HUMAN] += 1
            names.append("You" if humans == 1 else f"Player {counts[HUMAN]}")
            continue
        counts["bot"] += 1
        name = "Bot" if bots == 1 else f"Bot {counts['bot']}"
        names.append(name if kind == OPTIMAL else f"{name} ({kind})")
    return names


def seat_policy(rules: Rules, spec: str, rng: np.random.Generator | None) -> Policy:
    """The engine policy of a bot seat other than the optimal one (`parse_policy`; its own random numbers)."""
    own = None
    if rng is not None:
        spawn = getattr(rng, "spawn", None)
        own = spawn(1)[0] if spawn is not None else np.random.default_rng(int(rng.integers(2**63)))
    return parse_policy(spec, rules, rng=own)


def seats_note(seats: int, solved_for: int) -> str:
    """What the bot's table is at a table of `seats` players, its result being solved for `solved_for`."""
    if solved_for == seats:
        return f"Note: the bot plays the exact {table_words(seats)[4:]}."
    return (f"Note: the bot is solved for {players_words(solved_for)}; with {seats} it plays against "
            f"{threat_words(solved_for - 1)} (the highest scores).")


def play_text(rules: Rules, players: Sequence[str], console: Console, *,
              rng: np.random.Generator | None = None, dice: DiceSource | None = None,
              result_provider: ResultProvider | None = None, verbose: bool = False,
              on_end: Callable[[Game], None] | None = None) -> int | None:
    """Play a game in the console; returns the winner's seat, or None if the game was abandoned (`verbose`: the
    solver's assumptions as the solver states them; `on_end`: called with the finished game, e.g. to log it).

    `players` are seats as `cinqmille.players.parse_players` reads them: `human`, `optimal` (or `bot`),
    or any other policy name of `parse_policy`.
    """
    players = [SYNONYMS.get(p, p) for p in players]
    table = Table(rules, seat_names(players), console, result_provider)
    policies: list[Policy] = []
    for seat, kind in enumerate(players):
        if kind == HUMAN:
            policies.append(HumanPolicy(table, seat))
        elif kind == OPTIMAL:
            name = table.names[seat]

            def explain(text: str, name: str = name) -> None:
                table.flush()
                table.say(f"{name} thinks: {text}")

            policies.append(bot_policy(table.result(), explain))
        else:
            policies.append(seat_policy(rules, kind, rng))
    game = Game(rules, policies, rng=rng, dice=dice)
    table.game = game
    if len(players) > 2 and OPTIMAL in players:
        table.say(seats_note(len(players), getattr(table.result(), "players", 2)))
    if OPTIMAL in players and not table.result().exact:
        for line in notes_text(False, tuple(table.result().assumptions), verbose):
            table.say(line.replace("these figures are", "the bot's figures are"))
    table.say(f"5000 under '{rules.name}': {', '.join(table.names)} (first to play: {table.names[0]}).")
    try:
        while not game.finished:
            game.play_turn()
            table.flush()
    except QuitGame:
        table.say("\nGame abandoned.")
        return None
    except EOFError:
        table.say("\nEnd of input: game abandoned.")
        return None
    if on_end is not None:
        on_end(game)
    return game.winner
