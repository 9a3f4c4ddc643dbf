"""The `cinqmille` command line: thin Click commands over the library.

Each command lives in its own module of this package and is registered here.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from typing import Any

import click

from .. import __version__, address_space
from ..work import set_reporter
from .progress import progress_bar
from .common import system_error_words

#: (module, command name) of every command; a module defines a Click command named `command`.
COMMANDS: tuple[tuple[str, str], ...] = (
    ("rules_cmd", "rules"),
    ("odds_cmd", "odds"),
    ("solve_cmd", "solve"),
    ("fair_cmd", "fair"),
    ("advise_cmd", "advise"),
    ("dist_cmd", "dist"),
    ("card_cmd", "card"),
    ("match_cmd", "match"),
    ("ablate_cmd", "ablate"),
    ("export_cmd", "export"),
    ("play_cmd", "play"),
    ("review_cmd", "review"),
    ("simulate_cmd", "simulate"),
    ("compare_cmd", "compare"),
    ("serve_cmd", "serve"),
)


class _Refused(click.ClickException):
    """A command that cannot run here (too little memory): one line, exit status 2 as bad input."""

    exit_code = 2


def _available() -> list[tuple[str, str]]:
    return [(m, n) for m, n in COMMANDS if importlib.util.find_spec(f"{__name__}.{m}") is not None]


class LazyGroup(click.Group):
    """A group whose commands are imported only when used (fast start-up), and whose usage errors are one line."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        """Run the command line; a usage error is one line on stderr (`Error: ...`) and exit status 2."""
        if kwargs.get("standalone_mode", True) is False:
            return super().main(*args, **kwargs)
        kwargs["standalone_mode"] = False
        set_reporter(progress_bar)  # the library's long work (solves, policy tables) shows a bar or a line
        try:
            return self._run(*args, **kwargs)
        finally:
            set_reporter(None)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        """`main` with its one-line errors, the reporter set."""
        try:
            code = super().main(*args, **kwargs)
        except click.ClickException as exc:
            hint = ""
            if isinstance(exc, click.UsageError) and exc.ctx is not None:
                hint = f" (see '{exc.ctx.command_path} --help')"
            click.echo(f"Error: {exc.format_message()}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("Aborted.", err=True)
            sys.exit(1)
        except BrokenPipeError:  # the reader went away (`| head`): nothing more to say
            sys.stdout = open(os.devnull, "w")
            sys.exit(1)
        except (MemoryError, OSError) as exc:  # outside a command's own handling (importing it): the same words
            if os.environ.get("CINQMILLE_DEBUG"):
                raise
            click.echo(f"Error: {system_error_words(exc)}", err=True)
            sys.exit(2)
        sys.exit(code if isinstance(code, int) else 0)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for _, name in _available()]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        for module, name in _available():
            if name == cmd_name:
                short = address_space.too_little()  # NumPy's import would abort the process
                if short is None:
                    try:
                        address_space.reserve_blas()
                        command: click.Command = importlib.import_module(f"{__name__}.{module}").command
                        return command
                    except (MemoryError, OSError, ImportError) as exc:
                        short = address_space.worded(exc)
                        if short is None:
                            raise
                raise _Refused(short)
        return None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="cinqmille")
def main() -> None:
    """Optimal play for the dice game 5000: rules, odds, solving and advice."""

