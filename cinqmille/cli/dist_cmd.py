"""`cinqmille dist`: the exact distribution of the points the current turn banks (and, with --turns, of turn counts)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..parsing import maybe_whole, whole
from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option

#: The text table shows the outcomes of at least this chance one by one (the JSON gives every one).
SHOWN = 0.005
#: --turns: the game's length is computed for tables of at most this many score tuples (pairs for two players).
GAME_PAIRS = 120_000


@click.command("dist")
@rules_option
@click.option("--me", "me", metavar="POINTS", help="Your banked score (0 = not opened). Default 0.")
@click.option("--opp", "opp", metavar="POINTS[,POINTS...]",
              help="The opponent's banked score (default 0); with several, the opponents' in playing order: a game of "
                   "three or four players.")
@click.option("--turn", "turn", metavar="POINTS", help="Turn points set aside. Default 0.")
@click.option("--dice", "dice", metavar="N", help="Dice in hand (default: all of them).")
@click.option("--objective", type=click.Choice(["win", "expected"]), default="win", show_default=True,
              help="The policy that plays the turn: the most chances to win, or the most points of the turn alone.")
@click.option("--turns", "turns", is_flag=True,
              help="Also the turns one player alone needs to reach the goal from --me (race policy) and the turns "
                   "a game lasts from --me/--opp (win policy).")
@click.option("--plot", "plot", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Draw the distributions into FILE (PNG, SVG or PDF; needs matplotlib, the 'plot' extra).")
@json_option
@friendly_errors
def command(rules_spec: str, me: str | None, opp: str | None, turn: str | None, dice: str | None, objective: str,
            turns: bool, plot: Path | None, as_json: bool) -> None:
    """The exact distribution of the points the rest of this turn banks when played by the solved policy."""
    from ..table.position import Position  # lazy: start-up time (not for --help)
    from ..research.distribution import dist_report  # lazy: start-up time (not for --help)

    rules = resolve_rules(rules_spec)
    opps = tuple(whole(x, "--opp") for x in (opp or "0").split(","))
    pos = Position(maybe_whole(me, "--me") or 0, opps[0], maybe_whole(turn, "--turn") or 0,
                   maybe_whole(dice, "--dice", None), others=opps if len(opps) > 1 else None)
    if plot is not None:
        from ..research.plots import check_plot_target  # lazy: start-up time (not for --help)

        check_plot_target(plot)
    report = dist_report(rules, pos, objective, turns, game_pairs=GAME_PAIRS)
    if plot is not None:
        from ..research.plots import plot_distribution  # lazy: start-up time (not for --help)

        plot_distribution(report, plot)
    if as_json:
        emit_json(report.as_dict())
        return
    for line in _text(report):
        click.echo(line)
    if plot is not None:
        click.echo(f"Wrote {plot}.")


def _text(report: Any) -> list[str]:
    """The report as a short table (the outcomes of `SHOWN` chance or more), its mean and bust chance."""
    from ..words import dice_words, pct  # lazy: start-up time (not for --help)

    pos, out = report.position, report.points
    setaside = f"{pos.turn} set aside" if pos.turn else "nothing set aside"
    against = f"opponent {pos.opp}" if pos.others is None else \
        f"opponents {', '.join(str(x) for x in pos.others)} (in playing order, {len(pos.others) + 1} players)"
    lines = [f"Rules '{report.rules.name}': you {pos.me}, {against}, {setaside}, "
             f"{dice_words(pos.hand(report.rules))} in hand; the turn played by the {report.objective} policy:"]
    rows = [(f"{x}", p) for x, p in sorted(out.points.items())]
    rows += [(f"win at {t}", p) for t, p in sorted(out.wins.items())]
    shown = [(x, p) for x, p in rows if p >= SHOWN]
    rest = [p for _, p in rows if p < SHOWN]
    width = max([6] + [len(x) for x, _ in shown])
    lines.append(f"  {'points':>{width}}  {'chance':>8}")
    for x, p in shown:
        lines.append(f"  {x:>{width}}  {pct(p, 2):>8}")
    if rest:
        lines.append(f"  {'other':>{width}}  {pct(sum(rest), 2):>8}  ({len(rest)} outcomes below {pct(SHOWN, 1)})")
    lines.append(f"Mean {out.mean:.1f} points banked (an instant win counts its turn points plus the goal); "
                 f"bust {pct(out.bust, 2)}; instant win {pct(out.win, 2)}.")
    lines.append(f"Method: {report.method}.")
    for count in report.counts:
        lines.append(f"{count.what[0].upper()}{count.what[1:]}: mean {count.mean:.3f}, median {count.median}.")
        lines.append(f"  {'turns':>5}  {'chance':>8}  {'cumulative':>10}")
        total = 0.0
        for n, p in enumerate(count.chances, 1):
            total += p
            lines.append(f"  {n:>5}  {pct(p, 2):>8}  {pct(total, 2):>10}")
            if total >= 0.99 and n < len(count.chances):
                lines.append(f"  {'...':>5}  ({len(count.chances) - n} more counts, {pct(1 - total, 2)})")
                break
        lines.append(f"  Method: {count.method}; tail past {len(count.chances)} turns: {count.tail:.1e}.")
        if count.seat_wins is not None and len(count.seat_wins) == 2:
            lines.append(f"  The player to move wins {pct(count.seat_wins[0], 2)} of these games.")
        elif count.seat_wins is not None:
            lines.append("  The players win " + ", ".join(pct(p, 2) for p in count.seat_wins)
                         + " of these games, in playing order from the player to move.")
    lines.extend(report.notes)
    return lines
