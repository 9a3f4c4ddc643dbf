"""`cinqmille ablate`: one rule of a ruleset changed at a time, each ruleset's exact figures side by side."""

from __future__ import annotations

from pathlib import Path

import click

from .common import emit_json, friendly_errors, json_option, resolve_rules, rules_option
from .progress import progress_bar


@click.command("ablate")
@rules_option
@click.option("--keys", "keys", default=None, metavar="K1,K2,...",
              help="The keys changed (default: opening, straights, multiples, hot_dice, end, last_round, min_bank, "
                   "five_ones).")
@click.option("--plot", "plot", type=click.Path(dir_okay=False, path_type=Path), default=None, metavar="FILE",
              help="Draw the table into FILE (PNG, SVG or PDF; needs matplotlib, the 'plot' extra).")
@json_option
@friendly_errors
def command(rules_spec: str, keys: str | None, plot: Path | None, as_json: bool) -> None:
    """One key of the ruleset changed at a time: the first player's chance, the expected turn, the race, the
    game's exact length (mean, median, quantiles) and the fair start of each ruleset, exactly."""
    from ..research.ablate import KEYS, ablate, changes, text_lines  # lazy: start-up time (not for --help)

    base = resolve_rules(rules_spec)
    chosen = tuple(KEYS) if keys is None else tuple(k.strip() for k in keys.split(",") if k.strip())
    found, _ = changes(base, chosen)  # an unknown key: one line before any solve
    if plot is not None:
        from ..research.plots import check_plot_target  # lazy: start-up time (not for --help)

        check_plot_target(plot)
    with progress_bar(f"Solving {len(found)} rulesets") as update:
        result = ablate(base, chosen, update)
    if plot is not None:
        from ..research.plots import plot_ablation  # lazy: start-up time (not for --help)

        plot_ablation(result, plot)
    if as_json:
        emit_json(result.as_dict())
        return
    for line in text_lines(result):
        click.echo(line)
    if plot is not None:
        click.echo(f"Wrote {plot}.")
