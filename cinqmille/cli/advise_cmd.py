"""`cinqmille advise`: bank or roll, or which dice to keep, in one position."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import click

from ..parsing import faces, maybe_whole, quoted, whole
from ..solver.api import is_cached, table_players
from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option

if TYPE_CHECKING:
    from ..rules import Rules
    from ..solver import SolveResult


def load_win_table(rules: Rules, players: int = 2) -> SolveResult:
    """The solved `win` table of `rules` for `players`: from the cache, or solved now (the solve reports it)."""
    from ..table.groups import grouped  # lazy: start-up time (not for --help)
    from ..solver import solve  # lazy: start-up time (not for --help)

    result = solve(rules, "win", players=players)
    grouped(result)  # two players: the policy read from the cached groups file, without the kernel
    return result


#: The seats of `--seat`, in playing order (the first opens each round).
SEATS = ("first", "second", "third", "fourth", "fifth")


@click.command("advise")
@click.argument("roll_faces", nargs=-1, metavar="[FACES]...")
@rules_option
@click.option("--me", "me", metavar="POINTS", help="Your banked score (0 = not opened). Default 0.")
@click.option("--opp", "opp", metavar="POINTS[,POINTS...]",
              help="The opponents' banked scores in playing order after you (next player first). Default 0. "
                   "Up to four players are solved exactly where the table fits the budget; at a larger table "
                   "the opponents who threaten most are kept.")
@click.option("--turn", "turn", metavar="POINTS", help="Turn points set aside (before --roll). Default 0.")
@click.option("--dice", "dice", metavar="N", help="Dice in hand (bank or roll?).")
@click.option("--roll", "roll", metavar="FACES", help="The dice just rolled, e.g. 1,5,3,3,2 or 15332 (which to keep?).")
@click.option("--seat", "seat", type=click.Choice(list(SEATS)), default="first", show_default=True,
              help="Last round rules: do you open each round (first) or play second (third, ... at a larger "
                   "table)?")
@click.option("--offer", "offer", metavar="POINTS/DICE",
              help="Take-over rules: the opponent just banked POINTS with DICE in hand; take it over?")
@click.option("--target", "target", metavar="POINTS",
              help="Last round: the best score (the opponent finished on POINTS, at or past the goal); this is "
                   "your last turn (at a larger table the players after you, in --opp, still play theirs).")
@click.option("--scoreless", "scoreless", metavar="MINE[,HIS]",
              help="zero_turns rules: your scoreless turns in a row (and the next player's). Default 0,0.")
@click.option("--verbose", is_flag=True, help="Say the solver's assumptions technically (as --json gives them).")
@json_option
@friendly_errors
def command(roll_faces: tuple[str, ...], rules_spec: str, me: str | None, opp: str | None, turn: str | None, dice: str | None,
            roll: str | None, seat: str, offer: str | None, target: str | None, scoreless: str | None,
            verbose: bool, as_json: bool) -> None:
    """Bank or roll with --turn/--dice, or which dice to keep from a roll, with each option's chance to win.

    The roll is given as arguments (`cinqmille advise 1 1 5 2 3 --me 1000`) or
    with --roll 11523.
    """
    from ..app.advice import advise  # lazy: start-up time (not for --help)
    from ..app.advice_text import render_text  # lazy: start-up time (not for --help)
    from ..table.groups import ensure_groups  # lazy: start-up time (not for --help)
    from ..table.position import Position, PositionError  # lazy: start-up time (not for --help)

    rules = resolve_rules(rules_spec)
    offered = None
    if offer is not None:
        points, sep, hand = offer.partition("/")
        if not sep:
            raise PositionError(f"--offer: expected POINTS/DICE such as 350/2, got {quoted(offer)}")
        offered = (maybe_whole(points, "--offer points") or 0, maybe_whole(hand, "--offer dice") or 0)
    opps = tuple(whole(x, "--opp") for x in (opp or "0").split(","))
    pos = Position(maybe_whole(me, "--me") or 0, opps[0],
                   maybe_whole(turn, "--turn") or 0, maybe_whole(dice, "--dice", None),
                   seat=SEATS.index(seat), offer=offered, target=maybe_whole(target, "--target", None),
                   others=opps if len(opps) > 1 else None, scoreless=_counters(scoreless))
    if roll_faces and roll is not None:
        raise PositionError("give the roll once: as arguments (1 1 5 2 3) or with --roll 11523, not both")
    if roll_faces:
        roll = " ".join(roll_faces)
    rolled = None if roll is None else faces(roll, rules.dice, "--roll" if not roll_faces else "roll")
    if offered is not None and (rolled is not None or pos.dice is not None):
        raise PositionError("--offer is a choice at the start of a turn: give no --roll or --dice with it")
    if rolled is None and pos.dice is None and pos.turn > 0:
        raise PositionError("give --dice N (dice in hand: bank or roll?) or --roll FACES (which dice to keep?)")
    if rolled is not None and pos.dice is not None and pos.dice != len(rolled):
        raise PositionError(f"the roll has {len(rolled)} {'die' if len(rolled) == 1 else 'dice'} but --dice says "
                            f"{pos.dice} {'is' if pos.dice == 1 else 'are'} in hand")
    in_hand = len(rolled) if rolled is not None else pos.dice
    players = 2 if pos.others is None else table_players(rules, len(pos.others) + 1)
    asked = replace(pos, dice=in_hand)
    if not is_cached(rules, players):
        asked.validate(rules)  # the position asked about, refused before any solve
    result = load_win_table(rules, players)
    asked.validate(rules)  # (a cached table first: its groups file holds the dice tables that this reads)
    advice = advise(result, pos, rolled)
    if as_json:
        emit_json(advice.as_dict())
    else:
        for line in render_text(advice, verbose):
            click.echo(line)
    ensure_groups(result)  # the first advice of a ruleset writes its groups file: the next ones read it


def _counters(text: str | None) -> tuple[int, int]:
    """`--scoreless MINE[,HIS]` as a pair of whole numbers."""
    from ..table.position import PositionError  # lazy: start-up time (not for --help)

    if text is None:
        return (0, 0)
    parts = [whole(x, "--scoreless") for x in text.split(",")]
    if len(parts) > 2:
        raise PositionError(f"--scoreless: expected MINE or MINE,HIS, got {quoted(text)}")
    return (parts[0], parts[1] if len(parts) > 1 else 0)
