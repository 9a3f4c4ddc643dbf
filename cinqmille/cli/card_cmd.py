"""`cinqmille card`: a strategy card (a rule of thumb for the table), its exact cost against the optimal player."""

from __future__ import annotations

from pathlib import Path

import click

from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option


@click.command("card")
@rules_option
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write the card on one printable page into FILE (PDF, PNG or SVG; needs matplotlib, the 'plot' "
                   "extra).")
@click.option("--lines", "lines", metavar="P1,P2,...",
              help="Evaluate this card instead of searching: its bank line (points) with 1, 2, ... dice in hand.")
@click.option("--keep", "keep", type=click.Choice(["most", "few"]), default="few", show_default=True,
              help="With --lines: set aside the most points, or the most points plus --die per die left in hand.")
@click.option("--die", "die", default=0, show_default=True, metavar="POINTS", help="With --lines and --keep few.")
@click.option("--gap", "gap", default=0, show_default=True, metavar="POINTS",
              help="With --lines: the lines move when the scores differ by more than this.")
@click.option("--behind", "behind", default=0, show_default=True, metavar="POINTS",
              help="With --lines: added to every line when behind by more than --gap.")
@click.option("--ahead", "ahead", default=0, show_default=True, metavar="POINTS",
              help="With --lines: taken from every line when ahead by more than --gap.")
@click.option("--near", "near", default=0, show_default=True, metavar="POINTS",
              help="With --lines: the end game starts when the opponent needs this many points or fewer ...")
@click.option("--chase", "chase", default=0, show_default=True, metavar="POINTS",
              help="With --lines: ... and then every line goes up by this much.")
@json_option
@friendly_errors
def command(rules_spec: str, output: Path | None, lines: str | None, keep: str, die: int, gap: int, behind: int,
            ahead: int, near: int, chase: int, as_json: bool) -> None:
    """The best strategy card of a family of rules of thumb, found by its exact chance against the optimal
    player (two players, both seats), and what it and the best fixed threshold cost."""
    from ..parsing import whole  # lazy: start-up time (not for --help)
    from ..policies.card import Card  # lazy: start-up time (not for --help)
    from ..research.card import card_report  # lazy: start-up time (not for --help)

    rules = resolve_rules(rules_spec)
    if output is not None:
        from ..research.plots import check_plot_target  # lazy: start-up time (not for --help)

        check_plot_target(output)
    card = None
    if lines is not None:
        card = Card(tuple(whole(x.strip(), "--lines") for x in lines.split(",")), gap, behind, ahead, keep, die, near, chase)
    report = card_report(rules, card)
    if output is not None:
        from ..research.plots import plot_card  # lazy: start-up time (not for --help)

        plot_card(report, output)
    if as_json:
        emit_json(report.as_dict())
        return
    ev, thr = report.card_eval, report.threshold_eval
    click.echo(f"Strategy card for '{rules.name}':")
    for sentence in report.card.statement(rules):
        click.echo(f"  {sentence}")
    click.echo(f"Against the optimal player it wins {100 * ev.first:.2f}% moving first, {100 * ev.second:.2f}% "
               f"moving second: it costs {100 * ev.cost:.2f} points of win chance.")
    click.echo(f"The best fixed threshold, {report.threshold.name}, costs {100 * thr.cost:.2f} points "
               f"({100 * thr.first:.2f}% first, {100 * thr.second:.2f}% second).")
    click.echo(f"Method: {report.as_dict()['method']}; {report.tried} rules evaluated.")
    if output is not None:
        click.echo(f"Wrote {output}.")
