"""`cinqmille compare`: compare rulesets by simulation and solving; optional figures and results page."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ..errors import CinqmilleError
from ..files import WriteError
from ..parsing import SEED, WholeNumber, whole
from .common import emit_json, friendly_errors, json_option, resolve_rules
from .progress import progress_bar
from ..research.compare import DEFAULT_THRESHOLDS
from ..simulation.runner import Backend
from ..solver.n_player import MAX_PLAYERS
from .simulate_cmd import MAX_GAMES, backend_options


@click.command("compare")
@click.option("--rules", "rules_text", default=None, metavar="R1,R2,...",
              help="Rulesets to compare (preset names or TOML files), comma-separated. Default: every preset file.")
@click.option("--games", type=WholeNumber(2, MAX_GAMES), default=40_000, show_default=True,
              help="Games per matchup with the vectorised simulator.")
@click.option("--referee-games", type=WholeNumber(2, MAX_GAMES), default=None,
              help="Games per matchup through the referee (rulesets whose game is not an exact chain: a last round, "
                   "rules outside the solved state). Default: as many as --margin asks.")
@click.option("--margin", type=click.FloatRange(0.05, 50.0), default=0.5, show_default=True, metavar="POINTS",
              help="The referee plays enough games that a rate's 95% interval is at most this many points either "
                   "side (0.5: 38,416 games per matchup).")
@click.option("--thresholds", default=",".join(map(str, DEFAULT_THRESHOLDS)), show_default=True, metavar="T1,T2,...",
              help="The threshold:T grid searched for the best threshold player.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed: the same seed gives the same result.")
@click.option("--players", type=click.IntRange(2, MAX_PLAYERS), default=2, show_default=True,
              help="Seats at the table: 3 solves each ruleset exactly for three players and plays three seats.")
@backend_options
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write PNG figures of every ruleset, and one of the rulesets side by side, into this directory "
                   "(needs matplotlib).")
@click.option("--markdown", "markdown_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the results page (e.g. docs/variants.md), every section of it: the tables, the fair "
                   "starts, the strategy card and the ablation of the first ruleset, the presets for two to four "
                   "players, the cost of the reduction (with standard), the figures.")
@json_option
@friendly_errors
def command(rules_text: str, games: int, referee_games: int | None, margin: float, thresholds: str, seed: int,
            players: int, jobs: int,
            backend: Backend, scheduler: str | None, plots_dir: Path | None, markdown_path: Path | None,
            as_json: bool) -> None:
    """Compare rulesets: first-player chance (solved, simulated), game length, busts, optimal vs heuristics."""
    from ..research.compare import CompareConfig, compare, terminal_table  # lazy: start-up time (not for --help)

    from ..research.compare import preset_names_found  # lazy: start-up time (not for --help)

    if rules_text is None:
        rules_text = ",".join(preset_names_found())
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
    if players != 2 and (plots_dir is not None or markdown_path is not None):
        raise CinqmilleError("--plots and --markdown are the two-player page (its three-player sections are "
                             "computed with it); leave out --players")
    if plots_dir is not None:  # matplotlib missing, a figure's target in the way: one line before the work
        from ..research.plots import check_plot_target, figure_paths  # lazy: start-up time (not for --help)

        targets = [f for r in rules_list for f in figure_paths(r, plots_dir)]
        targets += [plots_dir / "presets-compared.png"] if len(rules_list) > 1 else []
        for target in targets:
            check_plot_target(target)
    if markdown_path is not None:
        from ..files import check_folder, check_target  # lazy: start-up time (not for --help)

        check_target(markdown_path)
        check_folder(markdown_path)
    config = CompareConfig(tuple(rules_list), games=games, referee_games=referee_games, margin=margin,
                           thresholds=grid,
                           seed=seed, jobs=jobs, backend=backend, scheduler=scheduler,
                           players=players)
    with progress_bar(f"Comparing {len(specs)} ruleset{'s' if len(specs) > 1 else ''}") as update:
        rows = compare(config, update)
    figures: list[Path] = []
    skipped: list[str] = []
    three: dict[str, Any] = {}
    where = plots_dir if plots_dir is not None else markdown_path.parent / "figures" if markdown_path is not None \
        else None
    if markdown_path is not None:  # the page's three-player sections, computed now and kept beside the figures
        from ..research.page import write_record  # lazy: start-up time (not for --help)
        from ..research.rebuild import three_players  # lazy: start-up time (not for --help)

        three = three_players(rules_list, jobs)
        write_record(where, three)
    elif where is not None:
        from ..research.page import read_record  # lazy: start-up time (not for --help)

        three = read_record(where)
    if plots_dir is not None:
        from ..research.plots import plot_presets, write_figures  # lazy: start-up time (not for --help)

        if len(rows) > 1:
            plots_dir.mkdir(parents=True, exist_ok=True)
            figures.append(plot_presets(rows, plots_dir / "presets-compared.png", three.get("seats")))
        for ruleset in rules_list:  # every ruleset's figures (of the solver's relaxation where it has one)
            try:
                figures += write_figures(ruleset, plots_dir)
            except WriteError:
                raise
            except (CinqmilleError, ValueError, IndexError) as exc:
                skipped.append(f"{ruleset.name}: {exc}")
    if markdown_path is not None:
        from ..fair import fair_start  # lazy: start-up time (not for --help)
        from ..research.page import write_page  # lazy: start-up time (not for --help)
        from ..research.rebuild import extra_sections  # lazy: start-up time (not for --help)

        write_page(markdown_path, rows, config, figures, three, [fair_start(r) for r in rules_list],
                   extra_sections(rules_list))
    if as_json:
        emit_json({"games": games, "referee_games": config.referee, "margin": margin, "seed": seed,
                   "players": players,
                   "thresholds": list(grid), "rulesets": [r.as_dict() for r in rows],
                   "figures": [str(f) for f in figures],
                   "markdown": str(markdown_path) if markdown_path else None})
        return
    for line in terminal_table(rows):
        click.echo(line)
    for row in rows:
        if not row.exact:
            click.echo(f"{row.rules}: solved value is of the relaxation; simulated under the full rules (referee).")
    for f in figures:
        click.echo(f"wrote {f}")
    for note in skipped:
        click.echo(f"no figures for {note}")
    if markdown_path is not None:
        click.echo(f"wrote {markdown_path}")

