"""What every command shares: the `--rules` and `--json` options, output and error handling."""

from __future__ import annotations

import functools
import json
import sys
import warnings
from typing import Any, Callable

import click

from ..errors import CinqmilleError
from ..rules import DEFAULT_RULES, Rules, load_rules


def rules_option(func: Callable) -> Callable:
    """Add `--rules NAME|FILE` (default: the standard preset)."""
    return click.option(
        "--rules", "rules_spec", default=DEFAULT_RULES, show_default=True, metavar="NAME|FILE",
        help="A preset name (see `cinqmille rules list`) or a TOML ruleset file.",
    )(func)


def json_option(func: Callable) -> Callable:
    """Add `--json` (machine-readable output on stdout)."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(func)


def resolve_rules(spec: str) -> Rules:
    """Load a ruleset; errors surface as one line through `friendly_errors`."""
    return load_rules(spec)


def emit_json(data: Any) -> None:
    """Print `data` as indented JSON on stdout."""
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def fail(message: str) -> None:
    """Print one line on stderr and exit with status 2."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(2)


def friendly_errors(func: Callable) -> Callable:
    """Turn a `CinqmilleError` (bad input) into one line on stderr and exit status 2; warnings into one line."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                return func(*args, **kwargs)
            except CinqmilleError as exc:
                fail(str(exc))
            except KeyboardInterrupt:
                click.echo("Interrupted.", err=True)
                sys.exit(130)
            finally:
                for item in caught:  # e.g. a damaged cache file that was recomputed: one plain line
                    if issubclass(item.category, UserWarning):
                        click.echo(f"Warning: {item.message}", err=True)

    return wrapper
