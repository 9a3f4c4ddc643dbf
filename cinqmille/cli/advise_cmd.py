"""`cinqmille advise`: bank or roll, or which dice to keep, in one position."""

from __future__ import annotations

import click

from ..parsing import faces, maybe_whole, quoted
from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option


def load_win_table(rules):  # type: ignore[no-untyped-def]
    """The solved `win` table of `rules`: from the cache, or solved now behind a progress bar."""
    from ..advice import is_cached
    from ..solver import solve

    if is_cached(rules):
        return solve(rules, "win")
    from .progress import progress_bar

    with progress_bar(f"Solving '{rules.name}' (first use, cached afterwards)") as update:
        return solve(rules, "win", progress=update)


@click.command("advise")
@click.argument("roll_faces", nargs=-1, metavar="[FACES]...")
@rules_option
@click.option("--me", "me", metavar="POINTS", help="Your banked score (0 = not opened). Default 0.")
@click.option("--opp", "opp", metavar="POINTS", help="The opponent's banked score. Default 0.")
@click.option("--turn", "turn", metavar="POINTS", help="Turn points set aside (before --roll). Default 0.")
@click.option("--dice", "dice", metavar="N", help="Dice in hand (bank or roll?).")
@click.option("--roll", "roll", metavar="FACES", help="The dice just rolled, e.g. 1,5,3,3,2 or 15332 (which to keep?).")
@click.option("--seat", "seat", type=click.Choice(["first", "second"]), default="first", show_default=True,
              help="Last round rules: do you open each round (first) or play second?")
@click.option("--offer", "offer", metavar="POINTS/DICE",
              help="Take-over rules: the opponent just banked POINTS with DICE in hand; take it over?")
@click.option("--target", "target", metavar="POINTS",
              help="Last round: the opponent finished on POINTS (at or past the goal); this is your last turn.")
@json_option
@friendly_errors
def command(roll_faces: tuple[str, ...], rules_spec: str, me: str | None, opp: str | None, turn: str | None, dice: str | None,
            roll: str | None, seat: str, offer: str | None, target: str | None, as_json: bool) -> None:
    """Bank or roll with --turn/--dice, or which dice to keep from a roll, with each option's chance to win.

    The roll is given as arguments (`cinqmille advise 1 1 5 2 3 --me 1000`) or
    with --roll 11523.
    """
    from ..advice import advise, render_text
    from ..position import Position, PositionError

    rules = resolve_rules(rules_spec)
    offered = None
    if offer is not None:
        points, sep, hand = offer.partition("/")
        if not sep:
            raise PositionError(f"--offer: expected POINTS/DICE such as 350/2, got {quoted(offer)}")
        offered = (maybe_whole(points, "--offer points") or 0, maybe_whole(hand, "--offer dice") or 0)
    pos = Position(maybe_whole(me, "--me") or 0, maybe_whole(opp, "--opp") or 0,
                   maybe_whole(turn, "--turn") or 0, maybe_whole(dice, "--dice", None),
                   seat=0 if seat == "first" else 1, offer=offered, target=maybe_whole(target, "--target", None))
    if roll_faces and roll is not None:
        raise PositionError("give the roll once: as arguments (1 1 5 2 3) or with --roll 11523, not both")
    if roll_faces:
        roll = " ".join(roll_faces)
    rolled = None if roll is None else faces(roll, rules.dice, "--roll" if not roll_faces else "roll")
    if offered is not None and (rolled is not None or pos.dice is not None):
        raise PositionError("--offer is a choice at the start of a turn: give no --roll or --dice with it")
    if rolled is None and pos.dice is None and pos.turn > 0:
        raise PositionError("give --dice N (dice in hand: bank or roll?) or --roll FACES (which dice to keep?)")
    pos.validate(rules)
    result = load_win_table(rules)
    advice = advise(result, pos, rolled)
    if as_json:
        emit_json(advice.as_dict())
        return
    for line in render_text(advice):
        click.echo(line)
