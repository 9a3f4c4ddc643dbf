"""The referee: plays a game of 2 to 8 players under any ruleset, every rule of RULES.md 1-5b.

`Game` holds the state between turns and plays one turn at a time
(`play_turn`) or to the end (`play`); `play_game` is the one-call form. The
referee asks the policies only real questions (see `protocol`), checks every
answer, applies the rules, and records everything in an event log (`log`).
The decisions taken where the rule book is silent are listed in docs/engine.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from ..dice.scoring import Counts, Keep, counts_of, faces_of
from ..rules import Rules
from . import state as st
from .dice_source import DiceSource, RandomDice, ScriptedDice
from .errors import EngineError, IllegalMoveError
from .judge import (
    bank_allowed,
    bank_outcome,
    keep_lookup,
    prediction_choices,
    reaches_goal,
    roll_points,
)
from .log import (
    Banked,
    Bust,
    Event,
    GameEnd,
    InstantWin,
    Kept,
    Penalty,
    PenaltyKind,
    Prediction,
    PredictionResult,
    Roll,
    TakeOver,
    TurnEnd,
    TurnStart,
)
from .protocol import Policy
from .state import GameView, LastRound, PlayerState, TakeOverOffer

MIN_PLAYERS, MAX_PLAYERS = 2, 8
DEFAULT_MAX_TURNS = 100_000


@dataclass(frozen=True, slots=True)
class GameResult:
    """A finished game: its rules, starting sheets, event log, final sheets and winner (seat index)."""

    rules: Rules
    initial: tuple[PlayerState, ...]
    events: tuple[Event, ...]
    players: tuple[PlayerState, ...]
    winner: int
    turns: int

    @property
    def scores(self) -> tuple[int, ...]:
        """Final banked scores by seat."""
        return tuple(p.score for p in self.players)

    @property
    def score_sheet(self) -> tuple[tuple[int, ...], ...]:
        """Every player's banked score after each turn, in order."""
        return tuple(e.scores for e in self.events if isinstance(e, TurnEnd))


@dataclass(frozen=True, slots=True)
class TurnOutcome:
    """How a turn ended: a bank of `points` with `dice` in hand, a bust (`all_dice`: on a roll of all D), a win."""

    kind: Literal["bank", "bust", "win"]
    points: int = 0
    dice: int = 0
    all_dice: bool = False
    keep: Counts | None = None


def _show(counts: Counts | None) -> str:
    return "-".join(map(str, faces_of(counts))) if counts is not None else "-"


def _describe(view: GameView) -> str:
    roll = f", roll {_show(view.roll)}" if view.roll is not None else ""
    return (f"seat {view.seat} (score {view.score}, {'opened' if view.me.opened else 'not opened'}), "
            f"turn points {view.turn_points}, {view.dice_in_hand} dice in hand{roll}, "
            f"scores {list(view.scores)}, turn #{view.turn_number}")


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


class Game:
    """One game in progress. Seat 0 plays first; seats play in order."""

    def __init__(self, rules: Rules, policies: Sequence[Policy], *, rng: np.random.Generator | None = None,
                 dice: DiceSource | None = None, initial: Sequence[PlayerState] | None = None,
                 max_turns: int = DEFAULT_MAX_TURNS):
        if not MIN_PLAYERS <= len(policies) <= MAX_PLAYERS:
            raise EngineError(f"a game needs {MIN_PLAYERS} to {MAX_PLAYERS} players, got {len(policies)}")
        if dice is None:
            if rng is None:
                raise EngineError("pass a numpy Generator (rng=...) or a dice source (dice=...)")
            dice = RandomDice(rng)
        if initial is None:  # the ruleset's starting scores (`Rules.start`; one below the opening is not opened)
            initial = tuple(st.new_player(rules, (s,) if s else ()) for s in rules.starts(len(policies)))
        if len(initial) != len(policies):
            raise EngineError(f"{len(initial)} initial player states for {len(policies)} players")
        for seat, player in enumerate(initial):
            problem = st.check_player(rules, player)
            if problem:
                raise EngineError(f"initial state of seat {seat}: {problem}")
        self.rules = rules
        self.policies = tuple(policies)
        self.dice = dice
        self._trusted = isinstance(dice, (RandomDice, ScriptedDice))  # these check their own rolls
        self.initial = tuple(initial)
        self.max_turns = max_turns
        self._players: list[PlayerState] = list(initial)
        self._n = len(policies)
        self._keeps = keep_lookup(rules)
        self._events: list[Event] = []
        self._seat = 0
        self._turn = 0
        self._offer: TakeOverOffer | None = None
        self._last_round: LastRound | None = None
        self._reach_order: list[int] = []
        self._winner: int | None = None

    # -- public state -------------------------------------------------------------
    @property
    def players(self) -> tuple[PlayerState, ...]:
        return tuple(self._players)

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(p.score for p in self._players)

    @property
    def events(self) -> tuple[Event, ...]:
        return tuple(self._events)

    @property
    def winner(self) -> int | None:
        return self._winner

    @property
    def finished(self) -> bool:
        return self._winner is not None

    @property
    def last_round(self) -> LastRound | None:
        return self._last_round

    @property
    def seat_to_play(self) -> int:
        """The seat whose turn is next (or in progress)."""
        return self._seat

    @property
    def offer(self) -> TakeOverOffer | None:
        """The bank that the next player may take over (None when there is none)."""
        return self._offer

    def log(self, event: Event) -> None:
        """Append an event that happened outside the referee's own questions (a take-over entered on a sheet)."""
        self._events.append(event)

    def play(self) -> GameResult:
        """Play turns until somebody wins; return the frozen result."""
        while self._winner is None:
            self.play_turn()
        return self.result()

    def result(self) -> GameResult:
        if self._winner is None:
            raise EngineError("the game is not finished")
        return GameResult(self.rules, self.initial, tuple(self._events), tuple(self._players),
                          self._winner, self._turn)

    # -- one turn -----------------------------------------------------------------
    def play_turn(self) -> None:
        """Play the turn of the seat to play, apply its outcome and the end-of-game rules."""
        seat = self.begin_turn()
        self.end_turn(seat, self._run_turn(seat))

    def begin_turn(self) -> int:
        """Start the turn of the seat to play (logged); return that seat."""
        if self._winner is not None:
            raise EngineError("the game is over")
        if self._turn >= self.max_turns:
            raise EngineError(f"the game did not end within {self.max_turns} turns")
        seat = self._seat
        self._events.append(TurnStart(seat, self._turn, self._players[seat].score))
        return seat

    def end_turn(self, seat: int, outcome: TurnOutcome) -> None:
        """Apply the outcome of the turn begun by `begin_turn`: the bank or bust, penalties, end of game.

        The dice games of `play_turn` and the score sheet (`engine.sheet`, turns
        entered as outcomes) both end their turns here.
        """
        emit = self._events.append
        self._offer = None
        scored = False
        if outcome.kind == "win":
            emit(InstantWin(seat, outcome.keep or (0,) * 6))
            self._finish(seat, "instant_win", seat)
            return
        if outcome.kind == "bust":
            self._scoreless(seat, outcome.all_dice)
        else:
            scored = self._bank(seat, outcome.points, outcome.dice)
        emit(TurnEnd(seat, self.scores))
        self._check_end(seat, scored)
        self._turn += 1
        self._seat = (seat + 1) % self._n

    def _view(self, seat: int, t: int, n: int, roll: Counts | None, rolled: bool, full: bool,
              taken: bool, can_bank: bool) -> GameView:
        return GameView(self.rules, seat, tuple(self._players), t, n, roll, rolled, full, taken,
                        can_bank, self._last_round, self._turn)

    def _ask_bool(self, fn: Callable[..., Any], what: str, view: GameView, *args: Any) -> bool:
        answer = fn(view, *args)
        if not _is_bool(answer):
            raise IllegalMoveError(f"{type(self.policies[view.seat]).__name__} answered {answer!r} to "
                                   f"'{what}' (expected True or False) at {_describe(view)}")
        return bool(answer)

    def _run_turn(self, seat: int) -> TurnOutcome:
        rules, policy, emit = self.rules, self.policies[seat], self._events.append
        player = self._players[seat]
        score, big = player.score, rules.dice
        t, n, taken = 0, big, False
        offer = self._offer
        if offer is not None and rules.take_over and player.opened:
            view = self._view(seat, 0, big, None, False, False, False, False)
            accepted = self._ask_bool(policy.should_take_over, "take over?", view, offer)
            emit(TakeOver(seat, offer.points, offer.dice, accepted))
            if accepted:
                t, n, taken = offer.points, offer.dice, True
        rolled = full = False
        while True:
            asked = False
            if bank_allowed(rules, score, t, rolled, full):
                view = self._view(seat, t, n, None, rolled, full, taken, True)
                if self._ask_bool(policy.should_bank, "bank?", view):
                    return TurnOutcome("bank", t, n)
                asked = True
            predicted = None
            if rules.prediction and n == 2:
                predicted = self._ask_prediction(seat, t, n, rolled, full, taken)
            faces = self.dice.roll(n)
            if not self._trusted and (len(faces) != n or not all(type(f) is int and 1 <= f <= 6 for f in faces)):
                raise EngineError(f"the dice source returned {faces!r} for a roll of {n} dice")
            counts = counts_of(faces)
            keeps = self._keeps[counts]
            emit(Roll(seat, tuple(faces), asked))
            all_dice = n == big
            if not keeps:
                emit(Bust(seat, "no_score", t, all_dice))
                return TurnOutcome("bust", all_dice=all_dice)
            if predicted is not None:
                got = roll_points(keeps)
                emit(PredictionResult(seat, predicted, got, got == predicted))
                if got != predicted:
                    emit(Bust(seat, "prediction", t, all_dice))
                    return TurnOutcome("bust")
            keep = self._ask_keep(seat, t, n, counts, rolled, full, taken, keeps)
            if keep.win:
                return TurnOutcome("win", keep=keep.dice)
            t += keep.points
            if predicted is not None:
                t *= 2
            n -= keep.size
            full = n == 0
            if full:
                n = big
            emit(Kept(seat, keep.dice, keep.points, t, n, predicted is not None))
            rolled = True
            if rules.banking.overshoots(score, t):
                emit(Bust(seat, "overshoot", t, False))
                return TurnOutcome("bust")

    def _ask_prediction(self, seat: int, t: int, n: int, rolled: bool, full: bool, taken: bool) -> int | None:
        choices = prediction_choices(self.rules)
        view = self._view(seat, t, n, None, rolled, full, taken, False)
        answer = self.policies[seat].predict(view, choices)
        if answer is not None and (_is_bool(answer) or answer not in choices):
            raise IllegalMoveError(f"{type(self.policies[seat]).__name__} predicted {answer!r} "
                                   f"(expected None or one of {list(choices)}) at {_describe(view)}")
        points = None if answer is None else int(answer)
        self._events.append(Prediction(seat, points))
        return points

    def _ask_keep(self, seat: int, t: int, n: int, counts: Counts, rolled: bool, full: bool,
                  taken: bool, keeps: tuple[Keep, ...]) -> Keep:
        view = self._view(seat, t, n, counts, rolled, full, taken, False)
        choice = self.policies[seat].choose_keep(view, keeps)
        if isinstance(choice, Keep):
            for keep in keeps:
                if keep is choice or keep == choice:
                    return keep
        elif isinstance(choice, (int, np.integer)) and not _is_bool(choice) and 0 <= choice < len(keeps):
            return keeps[int(choice)]
        legal = ", ".join(f"{_show(k.dice)} ({k.points})" for k in keeps)
        shown = f"keep {_show(choice.dice)} ({choice.points})" if isinstance(choice, Keep) else repr(choice)
        raise IllegalMoveError(f"{type(self.policies[seat]).__name__} chose {shown}, which is not a "
                               f"legal keep [{legal}] (or an index 0..{len(keeps) - 1}) at {_describe(view)}")

    # -- applying the outcome -------------------------------------------------------
    def _set(self, seat: int, player: PlayerState, kind: PenaltyKind | None = None) -> None:
        before = self._players[seat].score
        self._players[seat] = player
        if kind is not None:
            self._events.append(Penalty(seat, kind, before, player.score))

    def _bank(self, seat: int, points: int, dice: int) -> bool:
        """Apply a bank; True when it was written on the sheet."""
        rules, player = self.rules, self._players[seat]
        outcome = bank_outcome(rules, player.score, points)
        self._events.append(Banked(seat, points, outcome.kind, player.score, outcome.score))
        if outcome.kind == "void":
            return False
        if outcome.kind == "fault":
            self._scoreless(seat, False)
            return False
        new = outcome.score
        self._set(seat, st.record(rules, player, new))
        self._offer = TakeOverOffer(seat, points, dice)
        for other in range(self._n):
            if other == seat:
                continue
            opp = self._players[other]
            if rules.ties == "knock_back" and opp.score == new:
                self._set(other, st.strike_latest(rules, opp), "knock_back")
            elif rules.ties == "deadly" and new in opp.standing:
                self._set(other, st.strike_value(rules, opp, new), "deadly_tie")
        return True

    def _scoreless(self, seat: int, all_dice: bool) -> None:
        """Penalties of a scoreless turn (bust, overshoot, wrong prediction, rule-of-50 fault)."""
        rules = self.rules
        player = self._players[seat]
        if rules.bust_strikes_last_score and all_dice and player.standing:
            player = st.strike_latest(rules, player)
            self._set(seat, player, "bust_strike")
        if rules.crosses:
            if player.crosses + 1 >= 2:
                player = replace(st.strike_latest(rules, player), crosses=0)
                self._set(seat, player, "cross_strike")
            else:
                player = replace(player, crosses=player.crosses + 1)
                self._set(seat, player, "cross")
        zero = rules.zero_turns
        if zero is not None:
            if player.zero_turns + 1 >= zero.count:
                if zero.to == "zero":
                    player = st.strike_all(rules, player)
                elif zero.to == "previous":
                    player = st.strike_latest(rules, player)
                else:
                    player = st.write_penalty_total(rules, player, max(0, player.score + int(zero.to)))
                self._set(seat, replace(player, zero_turns=0), "zero_turns")
            else:
                self._set(seat, replace(player, zero_turns=player.zero_turns + 1))

    # -- end of the game --------------------------------------------------------------
    def _finish(self, winner: int, reason: Literal["instant_win", "goal", "last_round"], seat: int) -> None:
        self._events.append(TurnEnd(seat, self.scores))
        self._events.append(GameEnd(winner, reason, self.scores))
        self._winner = winner
        self._turn += 1

    def _leader(self) -> int | None:
        """Who wins if the last round ended now (`EndRules.leader` over the players in the order they reached)."""
        i = self.rules.banking.end.leader([self._players[s].score for s in self._reach_order])
        return None if i is None else self._reach_order[i]

    def _check_end(self, seat: int, scored: bool) -> None:
        end = self.rules.banking.end
        qualified = scored and reaches_goal(self.rules, self._players[seat].score)
        if not end.last_round:
            if qualified:
                self._end(seat, "goal")
            return
        if qualified and seat not in self._reach_order:
            self._reach_order.append(seat)
        if self._last_round is None and not qualified:
            return
        leader = self._leader()
        left = end.last_turns(seat, self._n)  # last turns still to play after this seat's
        if not left:
            if leader is not None:
                self._end(leader, "last_round" if self._last_round is not None else "goal")
                return
            self._last_round, self._reach_order = None, []  # nobody holds the goal any more: play on
            return
        if leader is None:
            self._last_round, self._reach_order = None, []
            return
        trigger = self._last_round.trigger if self._last_round is not None else seat
        self._last_round = LastRound(trigger, leader, end.target(self._players[leader].score), seat + left)

    def _end(self, winner: int, reason: Literal["instant_win", "goal", "last_round"]) -> None:
        self._events.append(GameEnd(winner, reason, self.scores))
        self._winner = winner


def play_game(rules: Rules, policies: Sequence[Policy], *, rng: np.random.Generator | None = None,
              dice: DiceSource | None = None, initial: Sequence[PlayerState] | None = None,
              max_turns: int = DEFAULT_MAX_TURNS) -> GameResult:
    """Play one full game and return its result (pass a seeded `rng` or a scripted `dice`)."""
    return Game(rules, policies, rng=rng, dice=dice, initial=initial, max_turns=max_turns).play()
