"""`cinqmille play`: a game in the terminal against bots of any policy, or between people at one keyboard."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..files import check_target
from ..parsing import SEED
from .common import friendly_errors, resolve_rules, rules_option

if TYPE_CHECKING:
    from ..engine.referee import Game
    from ..rules import Rules


class TerminalConsole:
    """Prompts on stdout, answers from stdin; piped answers are echoed so a transcript reads well."""

    def ask(self, prompt: str) -> str:
        click.echo(prompt, nl=False)
        line = sys.stdin.readline()
        if not line:
            click.echo()
            raise EOFError
        if not sys.stdin.isatty():
            click.echo(line.rstrip("\n"))
        return line.rstrip("\n")

    def say(self, text: str = "") -> None:
        click.echo(text)


@click.command("play")
@rules_option
@click.option("--players", default="human,bot", show_default=True, metavar="P1,P2[,...]",
              help="Seats in playing order: human, or a policy as for simulate (bot = optimal, expected, "
                   "threshold:T, threshold:T/K, cautious, random): human,bot / bot,human / human,threshold:300 / ...")
@click.option("--seed", type=SEED, default=None, help="Seed of the dice (the same seed and answers replay a game).")
@click.option("--verbose", is_flag=True, help="Say the solver's assumptions technically.")
@click.option("--log", "log_file", metavar="FILE", help="Write the finished game's log (JSON) to FILE, for `review`.")
@friendly_errors
def command(rules_spec: str, players: str, seed: int | None, verbose: bool, log_file: str | None) -> None:
    """Play 5000 in the terminal: ? asks for advice at any decision, Enter takes the advised move, q quits."""
    import numpy as np  # lazy: start-up time (not for --help)

    from ..app.play import play_text  # lazy: start-up time (not for --help)
    from ..app.players import parse_players  # lazy: start-up time (not for --help)
    from .advise_cmd import load_win_table  # lazy: start-up time (not for --help)

    rules = resolve_rules(rules_spec)
    seats = parse_players(players, rules, humans=True)
    if log_file is not None:
        check_target(Path(log_file), links=False)  # refused before the game, not after it
    console = TerminalConsole()

    def finish(game: "Game") -> None:
        if log_file is not None:
            write_game(log_file, game, seats)
        if "human" in seats:
            offer_review(console, game, seats)

    winner = play_text(rules, seats, console, rng=np.random.default_rng(seed),
              result_provider=lambda: load_win_table(rules, solved_players(len(seats), rules)), verbose=verbose,
              on_end=finish)
    if log_file is not None and winner is None:
        click.echo(f"No game log written to {log_file}: the game did not finish.")


def offer_review(console: TerminalConsole, game: "Game", seats: Sequence[str]) -> None:
    """After a game with a human player: offer its review (`cinqmille review`'s), shown on 'y'."""
    from ..app.play import seat_names  # lazy: start-up time (not for --help)
    from ..app.review import game_log, review_log  # lazy: start-up time (not for --help)
    from .review_cmd import review_text  # lazy: start-up time (not for --help)

    try:
        answer = console.ask("Review the game (the chance each decision cost)? [y/N] ")
    except EOFError:
        return
    if answer.strip().lower() in ("y", "yes"):
        review = review_log(game_log(game.rules, seat_names(seats), game.initial, game.events))
        for line in review_text(review):
            click.echo(line)


def write_game(path: str, game: "Game", seats: Sequence[str]) -> None:
    """Write the log of a finished game (`review.game_log`) and say how to review it."""
    from ..app.play import seat_names  # lazy: start-up time (not for --help)
    from ..app.review import game_log, write_log_file  # lazy: start-up time (not for --help)

    write_log_file(path, game_log(game.rules, seat_names(seats), game.initial, game.events))
    click.echo(f"Game log written to {path}: `cinqmille review {path}` shows what each decision cost.")


def solved_players(seats: int, rules: Rules) -> int:
    """The table the bots read: the most players up to `seats` whose table is cached or fits the budget
    (`api.table_players`; reduced to the opponents who threaten most beyond it)."""
    from ..solver.api import table_players  # lazy: start-up time (not for --help)

    return table_players(rules, seats)
