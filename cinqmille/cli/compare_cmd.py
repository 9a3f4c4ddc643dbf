"""`cinqmille compare`: compare rulesets by simulation and solving; optional figures and results page."""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import CinqmilleError
from ..parsing import SEED, WholeNumber, whole
from ..rules import PRESET_NAMES
from .common import emit_json, friendly_errors, json_option, resolve_rules
from .progress import progress_bar
from ..research.compare import DEFAULT_THRESHOLDS
from .simulate_cmd import MAX_GAMES, backend_options


@click.command("compare")
@click.option("--rules", "rules_text", default=",".join(PRESET_NAMES), show_default=True, metavar="R1,R2,...",
              help="Rulesets to compare (preset names or TOML files), comma-separated.")
@click.option("--games", type=WholeNumber(2, MAX_GAMES), default=40_000, show_default=True,
              help="Games per matchup with the vectorised simulator.")
@click.option("--referee-games", type=WholeNumber(2, MAX_GAMES), default=2_000, show_default=True,
              help="Games per matchup through the referee (rulesets that are not solved exactly).")
@click.option("--thresholds", default=",".join(map(str, DEFAULT_THRESHOLDS)), show_default=True, metavar="T1,T2,...",
              help="The threshold:T grid searched for the best threshold player.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed: the same seed gives the same result.")
@backend_options
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write PNG figures of the first ruleset solved exactly into this directory (needs matplotlib).")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the results page (e.g. docs/variants.md) with the table and the figures.")
@json_option
@friendly_errors
def command(rules_text: str, games: int, referee_games: int, thresholds: str, seed: int, jobs: int, backend: str,
            scheduler: str | None, plots_dir: Path | None, markdown_path: Path | None, as_json: bool) -> None:
    """Compare rulesets: first-player chance (solved, simulated), game length, busts, optimal vs heuristics."""
    from ..research.compare import CompareConfig, compare, table_rows

    specs = tuple(s.strip() for s in rules_text.split(",") if s.strip())
    if not specs:
        raise CinqmilleError("--rules needs at least one ruleset")
    rules_list = [resolve_rules(s) for s in specs]
    grid = tuple(whole(t, "--thresholds", high=1_000_000) for t in thresholds.split(",") if t.strip())
    if not grid:
        raise CinqmilleError("--thresholds: give at least one threshold, e.g. 250,300,350")
    if len(grid) > 100:
        raise CinqmilleError(f"--thresholds: at most 100 thresholds, got {len(grid)}")
    if any(t % 50 for t in grid):
        raise CinqmilleError("--thresholds: every threshold must be a non-negative multiple of 50")
    if plots_dir is not None:
        from ..research.plots import _pyplot

        _pyplot()  # fail early, with one line, when matplotlib is missing
    config = CompareConfig(tuple(rules_list), games=games, referee_games=referee_games, thresholds=grid,
                           seed=seed, jobs=jobs, backend=backend, scheduler=scheduler)  # type: ignore[arg-type]
    with progress_bar(f"Comparing {len(specs)} ruleset{'s' if len(specs) > 1 else ''}") as update:
        rows = compare(config, update)
    figures: list[Path] = []
    if plots_dir is not None:
        from ..research.plots import write_figures

        exact = [r for r in rules_list if not _relaxed(r)]
        if exact:
            figures = write_figures(exact[0], plots_dir)
    if markdown_path is not None:
        from ..research.page import write_page

        write_page(markdown_path, rows, config, figures)
    if as_json:
        emit_json({"games": games, "referee_games": referee_games, "seed": seed,
                   "thresholds": list(grid), "rulesets": [r.as_dict() for r in rows],
                   "figures": [str(f) for f in figures],
                   "markdown": str(markdown_path) if markdown_path else None})
        return
    cells = table_rows(rows)
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    for row in cells:
        click.echo("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    for r in rows:
        if not r.exact:
            click.echo(f"{r.rules}: solved value is of the relaxation; simulated under the full rules (referee).")
    for f in figures:
        click.echo(f"wrote {f}")
    if markdown_path is not None:
        click.echo(f"wrote {markdown_path}")


def _relaxed(rules) -> bool:  # noqa: ANN001
    from ..solver import relaxations

    return bool(relaxations(rules))
