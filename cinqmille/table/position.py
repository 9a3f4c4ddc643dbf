"""A position at the table, validated against a ruleset in one place.

`Position(me, opp, turn, dice)`: banked scores of the player to move and of the
opponent (0 = not opened when the ruleset has an opening), the turn points set
aside so far, and the dice in hand (None = not given: all the dice at the start
of a turn; with turn points set aside, the dice of the roll that follows).

`Position.validate` is the one check of every caller (the `advise` command,
`cinqmille.advice`, the `SolveResult` questions): it refuses, in one line that
says why, every position that no game under the ruleset can reach. Scores:
`check_score`; turn points and dice in hand: `cinqmille.dice.reach` (the states
that some keeps reach from the start of a turn).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..errors import PositionError as PositionError  # the error of a position, below the solver
from ..rules import Rules
from ..rules.end import LAST_TURN_SEAT
from ..dice.reach import reachable, why_unreachable


@dataclass(frozen=True)
class Position:
    """Banked scores, turn points, dice in hand (and seat, under last_round) of the player to move."""

    me: int
    opp: int
    turn: int = 0
    dice: int | None = None
    seat: int = 0  # under last_round: 0 if this player opens each round, 1 if he plays second
    offer: tuple[int, int] | None = None  # take_over: (points, dice) of the opponent's bank, at a turn start
    target: int | None = None  # last round: the score the opponent finished on; this is my last turn
    others: tuple[int, ...] | None = None  # three players or more: every opponent's score in playing order (opp first)
    scoreless: tuple[int, int] = (0, 0)  # zero_turns: scoreless turns in a row of the mover and of the next player

    @classmethod
    def at_table(cls, rules: Rules, scores: Sequence[int], mover: int, zero_turns: Sequence[int] = (),
                 target: int | None = None, offer: tuple[int, int] | None = None, turn: int = 0,
                 dice: int | None = None) -> "Position":
        """The position of the player to move at a table: the one reading of a game's state (the engine's view,
        the score sheet) as the solver's question.

        `scores` and `zero_turns` are per seat (seat 0 opens each round), `mover`
        the seat to move. The opponents are listed in playing order from the
        mover; with two players `seat` says whether the mover opens each round
        and `scoreless` holds the scoreless-turn counters (the mover's, the next
        player's) under `zero_turns`; in a last round `target` is the score to
        beat (the mover's last turn is read against it alone). Not validated.

        >>> from cinqmille.rules import load_rules
        >>> Position.at_table(load_rules("standard"), (1000, 2000, 3000), mover=1).others
        (3000, 1000)
        """
        n = len(scores)
        others = tuple(int(scores[(mover + i) % n]) for i in range(1, n))
        me = int(scores[mover])
        target = None if target is None else int(target)
        if n > 2:
            return cls(me, others[0], turn, dice, seat=mover if rules.last_round else 0, offer=offer, target=target,
                       others=others)
        scoreless = (0, 0)
        if rules.zero_turns is not None and zero_turns:
            scoreless = (int(zero_turns[mover]), int(zero_turns[(mover + 1) % n]))
        return cls(me, others[0], turn, dice, seat=0 if mover == 0 else 1, offer=offer, target=target,
                   scoreless=scoreless)

    def as_last_turn(self) -> "Position":
        """The position as a table reads it: with a `target`, my last turn is read against the opponent at the
        target, in the seat of a last turn (`rules.end.LAST_TURN_SEAT`); without one, the position itself."""
        return self if self.target is None else replace(self, opp=self.target, seat=LAST_TURN_SEAT)

    def hand(self, rules: Rules) -> int:
        """Dice in hand (all the dice when not given)."""
        return rules.dice if self.dice is None else self.dice

    def validate(self, rules: Rules) -> "Position":
        """Return the position if it can occur under `rules`, else raise `PositionError` saying why."""
        check_score(rules, self.me, "me")
        if self.others is not None:
            if not 2 <= len(self.others) <= 7 or self.others[0] != self.opp:
                raise PositionError(f"`opp`: a table of 3 to 8 players has 2 to 7 opponents, got {len(self.others)}")
            if not 0 <= self.seat <= len(self.others):
                raise PositionError(f"seat must be 0 (first in each round) to {len(self.others)}, got {self.seat}",
                                    field="seat")
            if self.target is not None and self.seat == 0:
                raise PositionError("`target`: the player who opens each round plays no last turn (the round ends "
                                    "with the last seat)")
            # in a last turn the seats after the mover still play (their scores count); the others have played
            playing = self.others if self.target is None else self.others[: len(self.others) - self.seat]
            for score in playing:
                check_score(rules, score, "opp")
        if self.target is None:
            if self.others is None:
                check_score(rules, self.opp, "opp")
        else:
            bank = rules.banking
            if not bank.end.last_round:
                raise PositionError(f"`target` is for a last round; '{rules.name}' has none (last_round = false)")
            if self.target % 50 or not bank.end.reaches(self.target):
                need = f"exactly {rules.goal}" if bank.exact else f"a multiple of 50 from {rules.goal} up"
                raise PositionError(f"`target`: the opponent's final score must be {need}, got {self.target}")
            if bank.fault(self.target):
                raise PositionError(f"`target`: under the rule of 50 a bank that leaves a score ending in 50 is a "
                                    f"fault, so no final score ends in 50; got {self.target}")
        if self.offer is not None:
            points, dice = self.offer
            if not rules.take_over:
                raise PositionError(f"`offer` is for take-overs; '{rules.name}' has none (take_over = false)")
            if points <= 0 or points % 50:
                raise PositionError(f"`offer`: the offered points must be a positive multiple of 50, got {points}")
            if not 1 <= dice <= rules.dice:
                raise PositionError(f"`offer`: the offered dice must be between 1 and {rules.dice}, got {dice}")
            if self.turn or self.dice is not None:
                raise PositionError("`offer` is a choice at the start of a turn: give no `turn` or `dice` with it")
            if rules.opening and self.me == 0:
                raise PositionError("`offer`: only an opened player may take over")
            self._check_offer(rules, points, dice)
        if self.turn < 0 or self.turn % 50:
            raise PositionError(f"turn points must be a non-negative multiple of 50, got {self.turn}", field="turn")
        if self.dice is not None and not 1 <= self.dice <= rules.dice:
            raise PositionError(f"dice in hand must be between 1 and {rules.dice} under '{rules.name}', got {self.dice}",
                                field="dice")
        if self.seat not in (0, 1) and self.others is None:
            raise PositionError(f"seat must be 0 (first in each round) or 1 (second), got {self.seat}", field="seat")
        if any(self.scoreless):
            zero = rules.zero_turns
            if zero is None:
                raise PositionError(f"`scoreless` is for the zero_turns rule; '{rules.name}' has none")
            if self.others is not None:
                raise PositionError(f"`scoreless`: the scoreless-turn counters are solved for two players only; with "
                                    f"{len(self.others) + 1} players the advice is solved as if zero_turns were off")
            if not all(0 <= z < zero.count for z in self.scoreless):
                raise PositionError(f"`scoreless`: at most {zero.count - 1} scoreless turns in a row can stand "
                                    f"(scoreless turn number {zero.count} is punished and clears the count), got "
                                    f"{','.join(map(str, self.scoreless))}")
        if rules.banking.overshoots(self.me, self.turn):
            raise PositionError(
                f"under an exact end a turn cannot take {self.me} past the goal ({rules.goal}); got {self.turn} turn points",
                field="turn")
        self._check_turn(rules)
        return self

    def _check_offer(self, rules: Rules, points: int, dice: int) -> None:
        """Refuse an offer that no bank makes: a turn that cannot hold `points` with `dice` in hand, a full hand
        that must be rolled, or less than the smallest bank. (Whose bank it was, and his score before it, the
        position does not say: at a larger table the offer comes from the previous player.)"""
        why = why_unreachable(rules, points, dice)
        if why is not None:
            raise PositionError(f"`offer`: no bank leaves that: {why}")
        bank = rules.banking
        if not bank.hand_ok(dice):
            raise PositionError(f"`offer`: no bank leaves all {dice} dice in hand: a full hand must be rolled "
                                f"under '{rules.name}'")
        if points < bank.min_bank:
            raise PositionError(f"`offer`: no bank is smaller than {bank.min_bank} under '{rules.name}', got {points}")

    def _check_turn(self, rules: Rules) -> None:
        """Refuse turn points and dice in hand that no sequence of keeps reaches from the start of a turn (about
        `dice` when nothing is set aside, else about `turn`)."""
        if self.dice is not None:
            why = why_unreachable(rules, self.turn, self.dice)
            if why is not None:
                raise PositionError(why, field="turn" if self.turn else "dice")
        elif self.turn and not reachable(rules, self.turn // 50)[-1].any():
            raise PositionError(f"no turn holds {self.turn} points set aside under '{rules.name}'", field="turn")


def check_score(rules: Rules, score: int, label: str = "score") -> int:
    """Validate a banked score under `rules`; return it. `label` names the score: a field of the position (`me`,
    `opp`: worded by each application) or any other text, as it is. A score below the opening is a head start of
    the ruleset's `start`, not yet opened (RULES.md section 8), or no score."""
    label = f"`{label}`" if label.isidentifier() and label != "score" else label
    if score < 0 or score % 50:
        raise PositionError(f"{label}: a score must be a non-negative multiple of 50, got {score}")
    if score >= rules.goal:
        raise PositionError(f"{label}: a score of {score} has already reached the goal ({rules.goal}); the game is over")
    if rules.opening and 0 < score < rules.opening and not _falls_by_points(rules) and score not in rules.start:
        raise PositionError(
            f"{label}: {score} is below the opening ({rules.opening}): a player is either not opened (0) or has at least {rules.opening}")
    stretch = rules.final_stretch
    if stretch is not None and stretch.cap and stretch.start < score:
        raise PositionError(
            f"{label}: no score lies between {stretch.start} and the goal under the final stretch with the cap "
            f"(a bank that passes {stretch.start} short of the goal leaves {stretch.start}, and from there a bank "
            f"short of the goal counts for nothing); got {score}")
    if rules.rule_of_50 and score % 100 == 50 and not _penalty_ends_in_50(rules):
        raise PositionError(f"{label}: under the rule of 50 a bank that leaves a score ending in 50 is a fault, "
                            f"so no score ends in 50; got {score}")
    return score


def _falls_by_points(rules: Rules) -> bool:
    """Whether `zero_turns` takes points away, so that an opened player may hold less than the opening."""
    return rules.zero_turns is not None and isinstance(rules.zero_turns.to, int)


def _penalty_ends_in_50(rules: Rules) -> bool:
    """Whether a penalty can move a score by an odd multiple of 50 (`zero_turns.to` = -150, say)."""
    zero = rules.zero_turns
    return zero is not None and isinstance(zero.to, int) and zero.to % 100 == 50
