"""`cinqmille simulate`: play many seeded games between named policies and report the statistics."""

from __future__ import annotations

import click

from ..parsing import SEED, WholeNumber
from ..app.players import parse_players
from ..simulation import SimConfig, SimResult, simulate
from ..simulation.runner import Backend, Engine
from .common import Command, emit_json, friendly_errors, json_option, resolve_rules, rules_option
from .progress import progress_bar


#: Largest number of games one command plays, and of worker processes.
MAX_GAMES = 1_000_000_000
MAX_JOBS = 256


def backend_options(func: Command) -> Command:
    """Add `--jobs`, `--backend` and `--scheduler` (shared with `compare`)."""
    func = click.option("--scheduler", metavar="ADDRESS", default=None,
                        help="Address of a running Dask scheduler (with --backend dask), e.g. tcp://10.0.0.5:8786.")(func)
    func = click.option("--backend", type=click.Choice(["loky", "dask"]), default="loky", show_default=True,
                        help="Where batches run: local worker processes (loky) or an existing Dask cluster.")(func)
    func = click.option("--jobs", type=WholeNumber(1, MAX_JOBS), default=1, show_default=True,
                        help="Worker processes (the result does not depend on it).")(func)
    return func


def format_result(res: SimResult) -> list[str]:
    """The text report of a simulation."""
    lines = [f"{res.games:,} games of '{res.rules}' ({res.engine} engine, seed {res.seed}, "
             f"{res.jobs} job{'s' if res.jobs > 1 else ''}, {res.seconds:.1f} s, "
             f"{res.games / max(res.seconds, 1e-9):,.0f} games/s)"]
    width = max(len(p) for p in res.players)
    lines.append(f"{'seat':>4}  {'player':<{width}}  {'wins':>9}  {'win rate':>8}  {'95% interval':>17}  {'bust rate':>9}")
    for i, p in enumerate(res.players):
        lo, hi = res.ci95[i]
        lines.append(f"{i:>4}  {p:<{width}}  {res.wins[i]:>9,}  {res.win_rate[i]:>8.2%}  "
                     f"{lo:>8.2%}-{hi:<8.2%}  {res.bust_rate_by_seat[i]:>9.2%}")
    lines.append(f"Game length: mean {res.mean_turns:.1f} turns, median {res.median_turns:.0f} "
                 f"(turns of all players). Bust rate {res.bust_rate:.2%} of turns; "
                 f"mean banked turn {res.mean_banked_turn:.0f} points.")
    return lines


@click.command("simulate")
@rules_option
@click.option("--players", "players_text", default="optimal,optimal", show_default=True, metavar="P1,P2[,...]",
              help="Policies by seat (seat 0 starts): optimal (or bot), expected, threshold:T, threshold:T/K, card, "
                   "card:L1/L2/.../LD[:few:DIE] (a strategy card, `cinqmille match --help`), "
                   "cautious, random.")
@click.option("--games", type=WholeNumber(1, MAX_GAMES), default=10_000, show_default=True,
              help=f"Number of games (at most {MAX_GAMES:,}).")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed: the same seed gives the same result.")
@backend_options
@click.option("--engine", type=click.Choice(["auto", "vectorised", "referee"]), default="auto", show_default=True,
              help="auto: the vectorised simulator when it applies (a ruleset solved exactly; with three players or "
                   "more and an optimal seat, a three-player solve within the budget), else the referee.")
@click.option("--batch-size", type=WholeNumber(1, MAX_GAMES), default=None,
              help="Games per seeded batch (default 25000 vectorised, 200 referee); part of what the seed fixes.")
@json_option
@friendly_errors
def command(rules_spec: str, players_text: str, games: int, seed: int, jobs: int, backend: Backend,
            scheduler: str | None, engine: Engine, batch_size: int | None, as_json: bool) -> None:
    """Play many games between policies: wins per seat with 95% intervals, game length, busts."""
    rules = resolve_rules(rules_spec)
    config = SimConfig(rules, parse_players(players_text, rules), games, seed=seed, jobs=jobs, engine=engine,
                       batch_size=batch_size, backend=backend, scheduler=scheduler)
    with progress_bar(f"Simulating {games:,} games") as update:
        result = simulate(config, progress=update)
    if as_json:
        emit_json(result.as_dict())
        return
    for line in format_result(result):
        click.echo(line)
