"""The exception types that the CLI turns into a one-line message and exit status 2: bad input, and a position that
cannot occur (raised by the solver, the tables and the applications alike)."""

from __future__ import annotations

import re
from collections.abc import Callable


class CinqmilleError(ValueError):
    """Bad input from a user (a position, a file, an option); the message is one line."""


class PositionError(CinqmilleError):
    """A position that cannot occur under the ruleset.

    The message names the position's fields in backquotes (`` `offer` ``, `` `dice` ``) and `field` is the one it
    is about; each application words them for its users (`worded`): the command line as flags (``--offer``), the
    web API as JSON fields (``'offer'``). Plainly (``str``) they read as bare names.
    """

    def __init__(self, message: str, field: str | None = None):
        named = re.match(r"`(\w+)`", message)  # a message that starts with a field is about that field
        self.template, self.field = message, field if field is not None or named is None else named.group(1)
        super().__init__(self.worded(lambda name: name))

    def worded(self, name: Callable[[str], str]) -> str:
        """The message with each field named by `name` (a flag, a JSON key)."""
        return re.sub(r"`(\w+)`", lambda m: name(m.group(1)), self.template)
