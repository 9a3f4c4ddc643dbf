"""The one exception type that the CLI turns into a one-line message and exit status 2."""


class CinqmilleError(ValueError):
    """Bad input from a user (a position, a file, an option); the message is one line."""
