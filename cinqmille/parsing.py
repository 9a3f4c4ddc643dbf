"""What people type, read once: whole numbers, rolls of dice and seeds.

Every command, the `play` prompts and the engine's scripted input read numbers
through `whole`, so that the same text means the same thing everywhere: ASCII
digits only (``'³'`` and ``'٣'`` are not digits here), an optional sign where
the caller allows it, ``_`` between digits as a thousands separator, and at
most `MAX_DIGITS` digits. Anything else is a `CinqmilleError` whose message is
one line and quotes at most `QUOTE` characters of the text.

>>> whole("5_000", "--me")
5000
>>> whole("³", "--me")
Traceback (most recent call last):
...
cinqmille.errors.CinqmilleError: --me: expected a non-negative whole number, got '³'
>>> faces("1,5 3-3 2", dice=5)
(1, 5, 3, 3, 2)
"""

from __future__ import annotations

import re
from typing import Any

import click

from .errors import CinqmilleError

#: Longest number accepted (18 digits fit in a signed 64-bit integer).
MAX_DIGITS = 18
#: Characters of a bad text quoted back in an error message.
QUOTE = 40
#: Largest seed (numpy's seed sequences take non-negative integers; 2**63 - 1 keeps it portable).
MAX_SEED = 2**63 - 1

_WHOLE = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*", re.ASCII)
_FACES = re.compile(r"[1-6](?:[ ,\-]*[1-6])*", re.ASCII)


def quoted(text: str) -> str:
    """`repr` of `text`, cut to `QUOTE` characters so that an error stays one short line."""
    return repr(text if len(text) <= QUOTE else text[:QUOTE] + "...")


def whole(text: str, label: str, *, low: int | None = None, high: int | None = None,
          signed: bool = False) -> int:
    """The whole number written in `text` (ASCII digits), checked against `low` and `high`."""
    body = text.strip()
    if not _WHOLE.fullmatch(body) or (not signed and body[0] in "+-"):
        kind = "a whole number" if signed else "a non-negative whole number"
        raise CinqmilleError(f"{label}: expected {kind}, got {quoted(text)}")
    if len(body.lstrip("+-").replace("_", "")) > MAX_DIGITS:
        raise CinqmilleError(f"{label}: {quoted(text)} is too long a number (at most {MAX_DIGITS} digits)")
    value = int(body.replace("_", ""))
    if low is not None and value < low:
        raise CinqmilleError(f"{label}: must be at least {low:,}, got {value:,}")
    if high is not None and value > high:
        raise CinqmilleError(f"{label}: must be at most {high:,}, got {value:,}")
    return value


def maybe_whole(text: str | None, label: str, default: int | None = 0, **bounds: Any) -> int | None:
    """`whole(text, ...)`, or `default` when no text was given."""
    return default if text is None else whole(text, label, **bounds)


def faces(text: str, dice: int, label: str = "roll") -> tuple[int, ...]:
    """The faces of a roll typed as '1,5,3,3,2', '15332' or '1 5 3 3 2' (1 to `dice` dice of 1..6)."""
    body = text.strip()
    if not _FACES.fullmatch(body):
        raise CinqmilleError(f"{label}: a roll is a list of faces 1 to 6 such as 1,5,3,3,2 or 15332; "
                             f"got {quoted(text)}")
    out = tuple(int(c) for c in body if c in "123456")
    if len(out) > dice:
        raise CinqmilleError(f"{label}: a roll has 1 to {dice} dice; got {len(out)}")
    return out


class WholeNumber(click.ParamType):  # type: ignore[type-arg]  # older Click stubs are not generic
    """A Click option type reading `whole` numbers between `low` and `high`."""

    name = "integer"

    def __init__(self, low: int | None = None, high: int | None = None, signed: bool = False):
        self.low, self.high, self.signed = low, high, signed

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        label = param.get_error_hint(ctx) if param is not None and ctx is not None else "value"
        try:
            return whole(str(value), label, low=self.low, high=self.high, signed=self.signed)
        except CinqmilleError as exc:
            self.fail(str(exc).removeprefix(f"{label}: "), param, ctx)


#: Seeds of the dice and of simulations: 0 to 2**63 - 1 for every command.
SEED = WholeNumber(0, MAX_SEED)
