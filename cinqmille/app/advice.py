"""Advice at the table: the ranked options of one decision, a plain sentence, and JSON shapes.

Two decisions are answered from a solved `win` table (`SolveResult`):

- bank or roll with `turn` points set aside and `dice` in hand
  (`advise(result, Position(me, opp, turn, dice))`);
- which dice to keep from a roll, and then bank or roll
  (`advise(result, Position(me, opp, turn), roll="15332")`).

>>> from cinqmille.rules import rules_from_dict
>>> from cinqmille.solver import compute
>>> result = compute(rules_from_dict({"goal": 500, "opening": 150}))
>>> advice = advise(result, Position(150, 300), roll="15332")
>>> [(o.keep, o.then, round(o.win, 4)) for o in advice.options[:2]]
[((1,), 'roll', 0.4868), ((1, 5), 'roll', 0.3924)]
>>> [(o.action, round(o.win, 4)) for o in advise(result, Position(150, 300, turn=200, dice=2)).options]
[('roll', 0.3325), ('bank', 0.1706)]

Every option carries its chance to win and its loss against the best, the
mean points the turn banks if the player takes it and then plays as advised
(`expected`), and for an option that rolls the exact chance that the next roll
fails at once (`bust`). The values, the ranking and its tie-break (bank before
roll; among keeps an instant win, then more points, then more dice in hand;
start afresh before taking over; roll plainly before announcing) and the
expected points are the policy table's (`cinqmille.table.policy`), so the
best option is the move that every player of the project makes.

The sentence says when the choice barely matters (the best two options within
`CLOSE`, half a percentage point of the chance to win) and when it matters a
lot (`DECISIVE`, five points or more).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from ..table.locate import offer_options, spot
from ..table.position import Position, PositionError
from ..rules import Rules
from ..rules.bank import UNIT, BankRules
from ..words import (
    BOUND,
    RULE_OFF,
    dice_words,
    faces_words,
    keep_words,
    number_word,
    pct,
    pct_pair,
    players_words,
    reduction_words,
)
from ..solver import parse_faces
from ..table.rows import keep_choices
from ..solver.choice import ranking
from ..solver.choice import best

if TYPE_CHECKING:  # keep start-up light: the solver is imported by the caller
    from ..solver import SolveResult

#: Best two options closer than this (0.5 percentage points of the chance to win): the choice barely matters.
CLOSE = 0.005
#: Best two options this far apart or more (5 percentage points): the choice matters a lot.
DECISIVE = 0.05


# -- why banking is not an option ------------------------------------------------------
def bank_refusal(rules: Rules, position: Position) -> str:
    """Why banking is not allowed in a bank-or-roll position (assumes it is not)."""
    me, turn, dice = position.me, position.turn, position.hand(rules)
    if turn <= 0:
        return "nothing to bank yet"
    if dice == rules.dice and not rules.can_bank_after_full_hand:
        return f"after a full hand you must roll all {rules.dice} dice"
    if me == 0 and rules.opening and turn < rules.opening:
        return f"not opened, the opening is {rules.opening}"
    if rules.min_bank and turn < rules.min_bank:
        return f"the minimum bank is {rules.min_bank}"
    return "the rules do not allow it here"


# -- the answer -------------------------------------------------------------------------
@dataclass(frozen=True)
class Choice:
    """One ranked option: bank/roll (`action`), or a keep then bank/roll/win/bust."""

    win: float
    loss: float  # best win minus this win (>= 0)
    action: str | None = None  # "bank" or "roll" (bank-or-roll decision); "take_over" or "start" (an offer)
    keep: tuple[int, ...] | None = None  # kept faces, sorted (keep decision)
    points: int | None = None  # points of the keep
    then: str | None = None  # "bank", "roll", "win" (instant win) or "bust" (overshoot)
    turn: int | None = None  # turn points after the keep
    dice: int | None = None  # dice in hand after the keep
    bank: float | None = None  # after the keep: value of banking (None when not allowed)
    roll: float | None = None  # after the keep: value of rolling on
    expected: float = 0.0  # mean points the turn banks with this option and the advised play after it
    bust: float | None = None  # chance that the next roll fails at once (None when the option does not roll)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: `win`, `loss`, `expected`, `bust` and the fields of its kind."""
        out: dict[str, Any] = {"win": self.win, "loss": self.loss, "expected": self.expected, "bust": self.bust}
        if self.action is not None:
            out["action"] = self.action
            if self.action == "predict":
                out["points"] = self.points
            return out
        out.update(keep=list(self.keep or ()), points=self.points, then=self.then)
        if self.then in ("bank", "roll"):
            out.update(turn=self.turn, dice=self.dice, bank=self.bank, roll=self.roll)
        return out


#: The kinds of figure: the game's own chance solved exactly; solved exactly but for chasing cycles settled
#: within a stated bound; estimated by playing the game out, with a margin; the figure of the ruleset with a rule
#: left out (not this ruleset's chance); none (the game cannot be played out here: only the decision is given).
FigureKind = Literal["exact", "settled", "estimated", "relaxed", "none"]


@dataclass(frozen=True)
class Figure:
    """How the chances of an answer were obtained: their kind, their margin, and each seat's chance."""

    kind: FigureKind
    margin: float = 0.0  # settled: the bound on every figure; estimated: the largest 95 % half-width
    seats: tuple[float, ...] | None = None  # each seat's chance (playing order from the mover), where known
    games: int = 0  # estimated: the games played from each start
    players: int = 2  # the players of the game
    table: int = 2  # the players of the table whose decisions are played

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"kind": self.kind, "margin": self.margin, "seats": None if self.seats is None else list(self.seats),
                "games": self.games, "players": self.players, "table": self.table, "how": figure_words(self)}


@dataclass(frozen=True)
class Advice:
    """The answer to one decision: options best first, the position's value and a sentence."""

    rules: Rules
    position: Position
    roll: tuple[int, ...] | None  # the faces rolled, for a keep decision
    win: float  # value of the position with best play (the bust value for a bust roll)
    options: tuple[Choice, ...]
    exact: bool
    assumptions: tuple[str, ...]
    refusal: str | None = None  # why banking is not an option (bank-or-roll decision)
    figure: Figure = Figure("exact")

    @property
    def best(self) -> Choice | None:
        return self.options[0] if self.options else None

    @property
    def bust(self) -> bool:
        """A roll with no scoring die: no keep, the turn is lost."""
        return self.roll is not None and not self.options

    @property
    def sentence(self) -> str:
        return sentence(self)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of `cinqmille advise --json`."""
        pos: dict[str, Any] = {"me": self.position.me,
                               "opp": self.position.opp if self.position.others is None else list(self.position.others),
                               "turn": self.position.turn,
                               "dice": self.position.hand(self.rules)}
        if self.rules.last_round:
            pos["seat"] = self.position.seat
        if self.position.offer is not None:
            pos["offer"] = {"points": self.position.offer[0], "dice": self.position.offer[1]}
        if self.position.target is not None:
            pos["target"] = self.position.target
        if self.roll is not None:
            pos["roll"] = list(self.roll)
        options = [o.as_dict() for o in self.options]
        out: dict[str, Any] = {"rules": self.rules.name, "position": pos, "win": self.win,
                               "best": options[0] if options else None, "options": options}
        if self.roll is not None:
            out["bust"] = self.bust
        out.update(sentence=self.sentence, exact=self.exact, assumptions=list(self.assumptions),
                   figure=self.figure.as_dict())
        return out


def advise(result: "SolveResult", position: Position, roll: str | tuple[int, ...] | None = None) -> Advice:
    """Rank the options of `position` (bank or roll), or of the keeps of `roll` (raises `PositionError`).

    The ranking is the table's decision. At a table larger than the solved one,
    the decision is the smaller table's, and every chance is this game's,
    estimated by playing it out (`_this_game`).
    """
    advice = _decide(result, position, roll)
    players = 2 if position.others is None else len(position.others) + 1
    if players > result.players:
        return _this_game(advice, players, result.players)
    return replace(advice, figure=_solved_figure(advice, result))


def _decide(result: "SolveResult", position: Position, roll: str | tuple[int, ...] | None) -> Advice:
    """The options of the table read, ranked by its decision, with its figures."""
    rules = result.rules
    exact, assumptions = result.exact, tuple(result.assumptions)
    if position.others is not None and len(position.others) > result.players - 1:
        exact = False
        assumptions += (reduction_words(len(position.others) + 1, result.players),)
    if roll is None:
        if position.offer is None:  # the dice in hand are explicit: all of them when not given
            position = replace(position, dice=position.hand(rules))
        position.validate(rules)
        position = position.as_last_turn()
        if position.offer is not None:
            return _offer(result, position, exact, assumptions)
        return _bank_or_roll(result, position, exact, assumptions)
    faces = parse_faces(roll, rules)
    if position.dice is not None and position.dice != len(faces):
        raise PositionError(f"the roll has {dice_words(len(faces))} but --dice says {position.dice} "
                            f"{'is' if position.dice == 1 else 'are'} in hand")
    if position.offer is not None:
        raise PositionError("`offer` is a choice at the start of a turn: give no `roll` with it")
    position = replace(position, dice=len(faces)).validate(rules)
    position = position.as_last_turn()
    block, r = spot(result, position)
    expect = block.expectation(r, position.me // UNIT)
    choices = []
    for k in keep_choices(block, r, position.turn, faces):
        t2 = (position.turn + k.points) // UNIT
        if k.then in ("bank", "roll"):
            move = int(block.move(r, t2, k.dice))
            bust = None if move == 0 else float(block.roll_busts(k.dice)[move])
            choices.append(Choice(win=k.win, loss=0.0, keep=k.keep, points=k.points, then=k.then,
                                  turn=position.turn + k.points, dice=k.dice, bank=k.bank, roll=k.roll,
                                  expected=float(expect.state(t2, k.dice)), bust=bust))
        else:  # an instant win counts the turn points and the goal; an overshoot banks nothing
            won = float(position.turn + rules.goal) if k.then == "win" else 0.0
            choices.append(Choice(win=k.win, loss=0.0, keep=k.keep, points=k.points, then=k.then, expected=won))
    ranked = _with_losses(choices)  # keep_choices ranks them
    win = ranked[0].win if ranked else float(block.bust[r])
    return Advice(rules, position, faces, win, ranked, exact, assumptions)


def _solved_figure(advice: Advice, result: "SolveResult") -> Figure:
    """The figure of an answer read from the table of its own game: exact, settled within a bound, or relaxed."""
    pos = advice.position
    players = result.players
    seats: tuple[float, ...] | None = None
    if players == 2:
        seats = (advice.win, 1.0 - advice.win)
    elif pos.turn == 0 and advice.roll is None and pos.offer is None and pos.target is None \
            and pos.others is not None and pos.hand(advice.rules) == advice.rules.dice:
        key = [x // UNIT for x in (pos.me, *pos.others)]
        first = [float(x) for x in result.seat_values(key, pos.seat)]
        seats = (*first, 1.0 - sum(first))
    if advice.exact:
        return Figure("exact", seats=seats, players=players, table=players)
    if any(RULE_OFF.match(a) or "needs a score history" in a for a in advice.assumptions):
        return Figure("relaxed", seats=seats, players=players, table=players)
    bound = max((float(x) for a in advice.assumptions for x in BOUND.findall(a)), default=result.residual)
    return Figure("settled", margin=max(bound, result.residual), seats=seats, players=players, table=players)


def _this_game(advice: Advice, players: int, table: int) -> Advice:
    """An answer of a game of `players` read from the table of `table` players: the table's decision, and every
    chance this game's, estimated by playing the game out from each option (`simulation.estimate`); where the
    simulator cannot play the ruleset, no chance at all (kind "none")."""
    from ..simulation.estimate import Start, estimate, why_not  # lazy: start-up time (only beyond the solved table)

    rules, pos = advice.rules, advice.position
    assert pos.others is not None
    if why_not(rules, players) is not None:
        nan = float("nan")
        options = tuple(replace(o, win=nan, loss=nan, bank=None if o.bank is None else nan,
                                roll=None if o.roll is None else nan) for o in advice.options)
        return replace(advice, win=nan, options=options, figure=Figure("none", players=players, table=table))
    banking = BankRules.of(rules)
    me, others = pos.me // UNIT, tuple(o // UNIT for o in pos.others)
    passed = Start((me, *others), 1)  # a bust, an overshoot: the next player's turn

    def banked(t: int) -> Start | None:  # None: the bank wins the game
        _, new, wins = banking.outcome(me, t)
        return None if bool(wins) else Start((int(new), *others), 1)

    def start(then: str | None, turn: int, dice: int | None) -> Start | None:
        t = turn // UNIT
        if then == "bank":
            return banked(t)
        if then == "roll":
            return Start((me, *others), 0, t, dice)
        if then == "win":
            return None
        return passed  # "bust": past the goal

    wanted: list[tuple[int, str, Start | None]] = []  # (option, field, start)
    for i, o in enumerate(advice.options):
        if advice.roll is None:
            wanted.append((i, "win", start(o.action, pos.turn, pos.hand(rules))))
            continue
        wanted.append((i, "win", start(o.then, o.turn or 0, o.dice)))
        if o.then in ("bank", "roll"):
            for name in ("bank", "roll"):
                if getattr(o, name) is not None:
                    wanted.append((i, name, start(name, o.turn or 0, o.dice)))
    starts = sorted({w[2] for w in wanted if w[2] is not None} | ({passed} if not advice.options else set()),
                    key=repr)
    found = dict(zip(starts, estimate(rules, players, starts, table=table)))  # the table whose decisions are read
    won = (1.0,) + (0.0,) * (players - 1)

    def seats_of(s: Start | None) -> tuple[float, ...]:
        return won if s is None else found[s].seats

    chances = list(advice.options)
    for i, name, s in wanted:
        value = seats_of(s)[0]
        o = chances[i]
        chances[i] = replace(o, win=value) if name == "win" else \
            replace(o, bank=value) if name == "bank" else replace(o, roll=value)
    ranked = _with_losses(chances)
    best = seats_of(next((w[2] for w in wanted if w[0] == 0 and w[1] == "win"), passed))
    margin = max((e.margin for e in found.values()), default=0.0)
    return replace(advice, win=best[0], options=ranked,
                   figure=Figure("estimated", margin=margin, seats=best, games=max(
                       (e.games for e in found.values()), default=0), players=players, table=table))


def _bank_or_roll(result: "SolveResult", position: Position, exact: bool, assumptions: tuple[str, ...]) -> Advice:
    """Bank, roll plainly, or (two dice, `prediction`) announce and roll: the table's moves, ranked."""
    rules = result.rules
    block, r = spot(result, position)
    t, m = position.turn // UNIT, position.hand(rules)
    values = block.moves(r, t, m)
    expected = block.expectation(r, position.me // UNIT).moves(t, m)
    busts = block.roll_busts(m)
    labels = [("bank", None), ("roll", None)] + [("predict", c) for c in block.choices]
    choices = [Choice(win=float(values[j]), loss=0.0, action=labels[j][0], points=labels[j][1],
                      expected=float(expected[j]), bust=None if j == 0 else float(busts[j]))
               for j in ranking(values, block.tie, block.move(r, t, m)) if values[j] > float("-inf")]
    refusal = None if values[0] > float("-inf") else bank_refusal(rules, position)
    ranked = _with_losses(choices)
    return Advice(rules, position, None, ranked[0].win, ranked, exact, assumptions, refusal=refusal)


def _offer(result: "SolveResult", position: Position, exact: bool, assumptions: tuple[str, ...]) -> Advice:
    """A take-over offered at the start of the turn: take it over, or start afresh with all the dice."""
    rules = result.rules
    assert position.offer is not None
    block, r = spot(result, position)
    expect = block.expectation(r, position.me // UNIT)
    t, m = position.offer[0] // UNIT, position.offer[1]
    rolling = 1 + int(best(block.moves(r, t, m)[1:]))  # the roll the offer takes: plainly or with an announcement
    figures = {"start": (float(expect.state(0, rules.dice)), float(block.roll_busts(rules.dice)[1])),
               "take_over": (float(expect.moves(t, m)[rolling]), float(block.roll_busts(m)[rolling]))}
    choices = [Choice(win=o.win, loss=0.0, action=o.action, expected=figures[o.action or ""][0],
                      bust=figures[o.action or ""][1]) for o in offer_options(result, position)]
    ranked = _with_losses(choices)
    return Advice(result.rules, position, None, ranked[0].win, ranked, exact, assumptions)


def _with_losses(ranked: list[Choice]) -> tuple[Choice, ...]:
    """The options (ranked best first by the policy's tie-break rule) with their loss against the best."""
    if not ranked:
        return ()
    top = ranked[0].win
    return tuple(Choice(**{**c.__dict__, "loss": max(0.0, top - c.win)}) for c in ranked)


# -- words --------------------------------------------------------------------------------
def figure_words(figure: Figure) -> str:
    """How the chances of an answer were obtained, in a player's words.

    >>> figure_words(Figure("estimated", margin=0.0091, games=10_000, players=5, table=3))
    "estimated: 10,000 games of five players played out from here, everyone making the three-player game's decisions; each chance within 0.9 points either way (95 %)"
    """
    if figure.kind == "exact":
        return f"exact: the game of {players_words(figure.players)} solved"
    if figure.kind == "settled":
        within = f"{max(figure.margin * 100, 1e-10):.1g}".replace("e-0", "e-")
        return (f"exact but for a few rare positions where two players' choices chase each other, settled there "
                f"within {within} points")
    if figure.kind == "relaxed":
        return "the chances of this ruleset with a rule left out (see the note), not of this ruleset itself"
    if figure.kind == "estimated":
        return (f"estimated: {figure.games:,} games of {players_words(figure.players)} played out from here, everyone "
                f"making the {number_word(figure.table)}-player game's decisions; each chance within "
                f"{100 * figure.margin:.1f} points either way (95 %)")
    return (f"no chance given: the game of {players_words(figure.players)} cannot be played out here under this "
            f"ruleset; the move is the {number_word(figure.table)}-player game's decision")


def sentence(advice: Advice) -> str:
    """One plain sentence: what to do, its chance to win, the alternative, and whether the choice matters."""
    if advice.figure.kind == "none":
        return _sentence_decision(advice)
    base = _sentence_bank_or_roll(advice) if advice.roll is None else _sentence_keep(advice)
    verdict = _verdict(advice)
    return base[:-1] + verdict + "." if verdict else base


def _sentence_decision(advice: Advice) -> str:
    """The sentence of an answer without chances: the move alone."""
    rules, pos = advice.rules, advice.position
    best = advice.best
    if best is None:
        assert advice.roll is not None
        return f"{faces_words(advice.roll)} scores nothing: a bust, the turn is lost."
    if best.keep is not None:
        what = f"Keep {keep_words(best.keep, len(advice.roll or ()))} ({best.points})"
        then = {"win": ": it wins the game at once", "bust": f": every keep takes you past {rules.goal}",
                "bank": f" and bank {best.turn}",
                "roll": f", then roll {dice_words(best.dice or 0, best.dice == rules.dice)}"}[best.then or "bust"]
        return f"{what}{then} (no chance can be given: see the note)."
    if best.action == "bank":
        return f"Bank {pos.turn} (no chance can be given: see the note)."
    if best.action in ("take_over", "start"):
        return ("Take it over" if best.action == "take_over" else "Start afresh") + \
            " (no chance can be given: see the note)."
    return f"Roll {dice_words(pos.hand(rules))} (no chance can be given: see the note)."


def _verdict(advice: Advice) -> str:
    """'; a close call (0.30 points apart)' when the best two options are within `CLOSE` of each other,
    '; this choice matters (7.10 points apart)' when they are `DECISIVE` or more apart, else ''.

    The runner-up is the next best option; for a keep, the best keep's other move (bank or roll on)
    counts as an option beside the other keeps. Its words are added when the sentence does not name it.
    """
    opts = advice.options
    if not opts or opts[0].win >= 1.0:
        return ""
    best = opts[0]
    runner: float | None = None
    words = ""
    if advice.roll is None:
        if len(opts) > 1:
            runner = opts[1].win
    elif best.then in ("bank", "roll"):
        other = best.roll if best.then == "bank" else best.bank
        second = opts[1] if len(opts) > 1 else None
        if other is not None:
            runner = other
        if second is not None and (runner is None or second.win > runner):
            runner = second.win
            if other is not None:  # the sentence names the other move of the same keep, not this keep
                words = f"keeping {keep_words(second.keep or (), len(advice.roll))} instead"
    if runner is None:
        return ""
    gap = 100 * max(0.0, best.win - runner)
    if advice.figure.kind == "estimated":  # a gap inside the estimates' margins says nothing
        if gap < 100 * max(DECISIVE, 2 * advice.figure.margin):
            return ""
        return f"; this choice matters: {words} is about {gap:.0f} points behind" if words else \
            f"; this choice matters (about {gap:.0f} points apart)"
    if gap < 100 * CLOSE:
        return f"; a close call: {words} is only {gap:.2f} points behind" if words else \
            f"; a close call ({gap:.2f} points apart)"
    if gap >= 100 * DECISIVE:
        return f"; this choice matters: {words} is {gap:.2f} points behind" if words else \
            f"; this choice matters ({gap:.2f} points apart)"
    return ""


def _sentence_keep(advice: Advice) -> str:
    """The sentence of a keep decision, without the verdict."""
    rules = advice.rules
    assert advice.roll is not None
    if advice.bust:
        lost = f" and the {advice.position.turn} set aside are lost" if advice.position.turn else " is lost"
        return (f"{faces_words(advice.roll)} scores nothing: a bust, the turn{lost}; "
                f"{pct(advice.win)} to win with {next_player_words(advice.position)} to play.")
    best = advice.options[0]
    assert best.keep is not None
    what = f"Keep {keep_words(best.keep, len(advice.roll))} ({best.points})"
    if best.then == "win":
        return f"{what}: it wins the game at once."
    if best.then == "bust":
        return f"{what}: every keep takes you past {rules.goal}, the turn is lost; {pct(best.win)} to win."
    full = best.dice == rules.dice and len(best.keep) == len(advice.roll)
    if best.then == "bank":
        if best.win >= 1.0:
            return f"{what} and bank {best.turn}: that wins the game."
        here, other = pct_pair(best.win, best.roll or 0.0)
        return (f"{what} and bank {best.turn}: {here} to win; "
                f"rolling {dice_words(best.dice or 0, full)} on gives {other}.")
    head = f"{what}, then roll {dice_words(best.dice or 0, full)}"
    if best.bank is not None:
        here, other = pct_pair(best.win, best.bank)
        return f"{head}: {here} to win; banking {best.turn} gives {other}."
    pos = advice.position
    why = bank_refusal(rules, Position(pos.me, pos.opp, best.turn or 0, best.dice))
    runner = advice.options[1] if len(advice.options) > 1 else None
    if runner is not None and runner.keep is not None:
        here, other = pct_pair(best.win, runner.win)
        return (f"{head}: {here} to win (no bank: {why}); "
                f"keeping {keep_words(runner.keep, len(advice.roll))} instead gives {other}.")
    return f"{head}: {pct(best.win)} to win (the only keep; no bank: {why})."


def next_player_words(position: Position) -> str:
    """'the opponent', or at three players or more 'the next player (on 1200)'."""
    if position.others is None:
        return "the opponent"
    return f"the next player (on {position.others[0]})"


def _sentence_offer(advice: Advice) -> str:
    rules, pos = advice.rules, advice.position
    assert pos.offer is not None
    points, dice = pos.offer
    take = f"take over the {points} and roll {dice_words(dice, dice == rules.dice)}"
    fresh = f"start afresh with {dice_words(rules.dice)}"
    best, other = advice.options[0], advice.options[1]
    here, there = pct_pair(best.win, other.win)
    first, second = (take, fresh) if best.action == "take_over" else (fresh, take)
    return f"{first[0].upper()}{first[1:]}: {here} to win; to {second} gives {there}."


def _sentence_bank_or_roll(advice: Advice) -> str:
    rules, pos = advice.rules, advice.position
    if pos.offer is not None:
        return _sentence_offer(advice)
    dice = pos.hand(rules)
    full = pos.turn > 0 and dice == rules.dice
    roll_words = f"roll {dice_words(dice, full)}"
    best = advice.options[0]
    if len(advice.options) == 1 and pos.turn == 0:
        return f"{roll_words.capitalize()}: {pct(best.win)} to win (nothing to bank yet: the only move is to roll)."
    if len(advice.options) == 1:
        return f"{roll_words.capitalize()}: {pct(best.win)} to win (you cannot bank: {advice.refusal})."
    other = advice.options[1]
    if best.action == "bank":
        if best.win >= 1.0:
            return f"Bank {pos.turn}: that wins the game (rolling on gives {pct(other.win)})."
        here, there = pct_pair(best.win, other.win)
        if other.action == "predict":
            return f"Bank {pos.turn}: {here} to win; announcing {other.points} and rolling on gives {there}."
        return f"Bank {pos.turn}: {here} to win; rolling {dice_words(dice, full)} on gives {there}."
    if best.action == "predict":
        here, there = pct_pair(best.win, other.win)
        alt = f"banking {pos.turn}" if other.action == "bank" else (
            f"announcing {other.points}" if other.action == "predict" else "rolling without announcing")
        return (f"Announce {best.points} and roll {dice_words(dice)} (doubled if right, lost if wrong): "
                f"{here} to win; {alt} gives {there}.")
    here, there = pct_pair(best.win, other.win)
    alt = f"banking {pos.turn}" if other.action == "bank" else f"announcing {other.points} and rolling"
    return f"{roll_words.capitalize()}: {here} to win; {alt} gives {there}."
