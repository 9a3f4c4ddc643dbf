"""`cinqmille review`: the chance to win each decision of a recorded game cost, against the best move."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .common import emit_json, friendly_errors, json_option

if TYPE_CHECKING:
    from ..app.review import Review


@click.command("review")
@click.argument("log_file", metavar="LOG")
@click.option("--all", "show_all", is_flag=True, help="List every reviewed decision, not only the three costliest.")
@json_option
@friendly_errors
def command(log_file: str, show_all: bool, as_json: bool) -> None:
    """Review a game from its log (`cinqmille play --log FILE`, or the web sheet's download): the chance to win
    before and after each move against the best move, the chance lost by each player, the costliest decisions."""
    from ..app.review import review_file  # lazy: start-up time (not for --help)

    result = review_file(log_file)
    if as_json:
        emit_json(result.as_dict())
        return
    for line in review_text(result, show_all):
        click.echo(line)


def review_text(result: Review, show_all: bool = False) -> list[str]:
    """The review for people: how the figures were obtained, the chance lost per player, the costliest decisions."""
    from ..words import pct  # lazy: start-up time (not for --help)
    from ..words import players_words  # lazy: start-up time (not for --help)

    names = result.players
    if result.note is not None:
        return [f"Nothing to review: {result.note}."]
    lines = [f"Review of a game of {players_words(len(names))} under '{result.rules.name}': "
             f"{len(result.decisions)} decisions with a choice"
             + (f" ({result.unreviewed} outside the solver's model, not reviewed)" if result.unreviewed else "")
             + "."]
    if "estimated" in result.kinds:
        lines.append(f"The chances are estimated by playing the game out (the largest solved table is "
                     f"{players_words(result.table)}): each within {100 * result.margin:.1f} points, so a loss "
                     f"smaller than that is not counted as a loss.")
    lines.append("Chance to win lost by each player:")
    width = max(len(n) for n in names)
    for seat, name in enumerate(names):
        mine = [d for d in result.decisions if d.seat == seat]
        costly = sum(1 for d in mine if d.counted > 0)
        won = "  (won)" if result.winner == seat else ""
        lines.append(f"  {name:<{width}}  {100 * result.lost[seat]:6.2f} points in {costly} of {len(mine)} "
                     f"decisions{won}")
    worst = result.costliest()
    if worst:
        lines.append("The costliest decisions:")
        lines.extend(f"  {i}. {d.words(names)[0].upper()}{d.words(names)[1:]}" for i, d in enumerate(worst, 1))
    else:
        lines.append("No decision lost any chance: every move was the best one.")
    if show_all:
        lines.append("Every decision (chance with the best move -> after the move taken):")
        for d in result.decisions:
            lines.append(f"  turn {d.turn + 1} {names[d.seat]}: {d.taken:<18} {pct(d.before):>7} -> "
                         f"{pct(d.after):>7}" + (f"  best: {d.best}" if d.counted > 0 else ""))
    return lines
