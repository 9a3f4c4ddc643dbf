"""What every command shares: the `--rules` and `--json` options, output and error handling."""

from __future__ import annotations

import errno
import functools
import json
import os
import sys
import warnings
from typing import Any, Callable, NoReturn, ParamSpec, TypeVar

import click

from .. import address_space
from ..json_values import finite
from ..errors import CinqmilleError
from ..files import error_chain
from ..table.position import PositionError
from ..rules import DEFAULT_RULES, Rules, load_rules

#: A command's function, as Click's decorators take and return it.
Command = TypeVar("Command", bound=Callable[..., Any])
_Params = ParamSpec("_Params")
_Result = TypeVar("_Result")


def rules_option(func: Command) -> Command:
    """Add `--rules NAME|FILE` (default: the standard preset)."""
    return click.option(
        "--rules", "rules_spec", default=DEFAULT_RULES, show_default=True, metavar="NAME|FILE",
        help="A preset name (see `cinqmille rules list`) or a TOML ruleset file.",
    )(func)


def json_option(func: Command) -> Command:
    """Add `--json` (machine-readable output on stdout)."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")(func)


def resolve_rules(spec: str) -> Rules:
    """Load a ruleset; errors surface as one line through `friendly_errors`."""
    return load_rules(spec)


def emit_json(data: Any) -> None:
    """Print `data` as indented, valid JSON on stdout (a number that is not finite is null)."""
    click.echo(json.dumps(finite(data), indent=2, ensure_ascii=False, allow_nan=False))


def one_line(message: str) -> str:
    """The first line of `message`, cut to 1,000 characters."""
    line = message.strip().splitlines()[0] if message.strip() else "failed"
    return line if len(line) <= 1000 else line[:997] + "..."


def fail(message: str) -> NoReturn:
    """Print one line on stderr and exit with status 2."""
    click.echo(f"Error: {message}", err=True)
    sys.exit(2)


#: Words of an operating-system error that mean memory ran out (a library that cannot be mapped under `ulimit -v`).
MEMORY_WORDS = ("cannot allocate memory", "failed to map segment", "out of memory", "not enough memory")


def _command() -> str:
    """The command running, in quotes ('cinqmille solve'), or 'this command' outside one."""
    ctx = click.get_current_context(silent=True)
    return f"'cinqmille {ctx.info_name}'" if ctx is not None and ctx.info_name else "this command"


def system_error_words(exc: BaseException) -> str:
    """An `OSError` or a `MemoryError` in one line that names the file or the operation and the reason (never the
    bare class name): "not enough memory for 'cinqmille solve' (loading libllvmlite.so: ...)", "FILE: REASON"."""
    short = address_space.worded(exc)  # out of memory, however it showed (a limit: `ulimit -v`)
    chain = error_chain(exc)
    texts = [one_line(str(e)) for e in chain if str(e).strip()]
    memory = short is not None or any(isinstance(e, MemoryError) or getattr(e, "errno", None) == errno.ENOMEM
                                      for e in chain) or any(word in text.lower() for text in texts for word in MEMORY_WORDS)
    names = [e.filename for e in chain if isinstance(e, OSError) and isinstance(e.filename, str)]
    if memory:
        why = next((t for t in reversed(texts) if any(w in t.lower() for w in MEMORY_WORDS)), "")
        detail = f" ({why[:300]})" if why else ""
        head = f"{short}; " if short and address_space.limit() is not None else ""  # the limit that was met
        return (f"{head}not enough memory for {_command()}{detail}; free memory or raise the limit (ulimit -v; the "
                f"solver's own: --max-memory, CINQMILLE_MAX_MEMORY, docs/rules.md)")
    if isinstance(exc, OSError):
        reason = exc.strerror or (texts[0] if texts else "")
        if not reason:
            reason = f"operating-system error {exc.errno}" if exc.errno else "an operating-system error without " \
                                                                          "a message"
        return one_line(f"{names[0]}: {reason}" if names else f"{_command()} failed: {reason}")
    return one_line(f"{_command()} failed: {texts[0] if texts else exc.__class__.__name__}")


def friendly_errors(func: Callable[_Params, _Result]) -> Callable[_Params, _Result]:
    """Turn a `CinqmilleError` (bad input) into one line on stderr and exit status 2; warnings into one line."""

    @functools.wraps(func)
    def wrapper(*args: _Params.args, **kwargs: _Params.kwargs) -> _Result:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                return func(*args, **kwargs)
            except PositionError as exc:  # the library names the position's fields; here they are flags
                fail(one_line(exc.worded(lambda name: f"--{name}")))
            except CinqmilleError as exc:
                fail(one_line(str(exc)))
            except KeyboardInterrupt:
                click.echo("Interrupted.", err=True)
                sys.exit(130)
            except (MemoryError, RuntimeError, OSError, ImportError) as exc:
                if isinstance(exc, OSError) and (exc.errno == errno.EPIPE or os.environ.get("CINQMILLE_DEBUG")):
                    raise  # a closed pipe (`| head`): the group ends quietly
                if not isinstance(exc, (OSError, MemoryError)) and address_space.worded(exc) is None:
                    raise  # a thread or a library that failed for another reason than memory: a real bug
                fail(system_error_words(exc))  # out of memory, a disk or a file that failed under us: which, why
            finally:
                for item in caught:  # e.g. a damaged cache file that was recomputed: one plain line
                    if issubclass(item.category, UserWarning):
                        click.echo(f"Warning: {item.message}", err=True)

    return wrapper
