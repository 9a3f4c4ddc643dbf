"""Numbers and tables of players in words, written once for every reader (advice, play, the policies, the web).

>>> number_word(3), players_words(1), table_words(4)
('three', 'one player', 'the four-player table')
>>> reduction_words(5, 3)
'with 5 players: read from the 3-player table against the 2 opponents who threaten most (the highest scores)'
"""

from __future__ import annotations

_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


def number_word(n: int) -> str:
    """`n` in words up to ten, in digits beyond."""
    return _NUMBERS[n] if 0 <= n < len(_NUMBERS) else str(n)


def players_words(n: int) -> str:
    """'one player', 'three players'."""
    return f"{number_word(n)} player{'' if n == 1 else 's'}"


def opponents_words(n: int) -> str:
    """'the opponent', 'the two opponents'."""
    return "the opponent" if n == 1 else f"the {number_word(n)} opponents"


def threat_words(n: int) -> str:
    """'the opponent who threatens most', 'the two opponents who threaten most'."""
    return f"{opponents_words(n)} who threaten{'s' if n == 1 else ''} most"


def table_words(players: int) -> str:
    """'the three-player table'."""
    return f"the {number_word(players)}-player table"


def reduction_words(seats: int, table: int) -> str:
    """The reduction of a table of `seats` players to the solved table of `table` players, as the solver states
    it (the advice's assumptions, matched by `advice.plain_assumption`)."""
    who = "the opponent who threatens" if table == 2 else f"the {table - 1} opponents who threaten"
    return f"with {seats} players: read from the {table}-player table against {who} most (the highest scores)"
