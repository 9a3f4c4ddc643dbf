"""`cinqmille odds`: bust, full-hand and mean best-keep figures for each number of dice."""

from __future__ import annotations

import click

from ..dice import odds
from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option


@click.command("odds")
@rules_option
@json_option
@friendly_errors
def command(rules_spec: str, as_json: bool) -> None:
    """Chance to bust, chance that every die scores, and mean points of the best keep."""
    rules = resolve_rules(rules_spec)
    rows = odds(rules)
    if as_json:
        emit_json({
            "rules": rules.name,
            "dice": {
                str(row.n): {
                    "bust": float(row.bust),
                    "bust_exact": f"{row.bust.numerator}/{row.bust.denominator}",
                    "full_hand": float(row.full_hand),
                    "mean_best": row.mean_best,
                    "combinations": {name: float(chance) for name, chance in row.combinations},
                }
                for row in rows
            },
        })
        return
    click.echo(f"Odds of one roll under '{rules.name}' (exact fractions of 6^n):")
    click.echo(f"{'dice':>4}  {'bust':>18}  {'every die scores':>16}  {'mean best keep':>14}")
    for row in rows:
        bust = f"{float(row.bust):6.2%} ({row.bust.numerator * 6**row.n // row.bust.denominator}/{6**row.n})"
        click.echo(f"{row.n:>4}  {bust:>18}  {float(row.full_hand):>16.2%}  {row.mean_best:>14.1f}")
    click.echo("A bust scores 0; an instant win counts as the goal.")
    names = list(dict.fromkeys(name for row in rows for name, _ in row.combinations))
    if names:
        width = max(len(name) for name in names)
        counted = [row for row in rows if row.combinations]
        click.echo("Chance that a roll holds each combination of several faces (- where it does not count):")
        click.echo(f"{'':<{width}}  " + "  ".join(f"{f'{row.n} dice':>8}" for row in counted))
        for name in names:
            cells = [dict(row.combinations).get(name) for row in counted]
            click.echo(f"{name:<{width}}  " + "  ".join(f"{'-' if c is None else f'{float(c):.2%}':>8}" for c in cells))
