"""Numbers and tables of players in words, written once for every reader (advice, play, the policies, the web).

>>> number_word(3), players_words(1), table_words(4)
('three', 'one player', 'the four-player table')
>>> reduction_words(5, 3)
'with 5 players: read from the 3-player table against the 2 opponents who threaten most (the highest scores); its error is not measured at this size (no larger exact game is solved)'
"""

from __future__ import annotations

_NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


#: Seats in words, first to eighth.
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth")


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


#: The largest cost of the reduction measured exactly (points of chance a seat loses by reading the table of
#: this many players inside the exact four-player game; `standard` at goals 1000 to 3000, docs/variants.md
#: "The cost of the reduction", `python -m cinqmille.research.page reduction`, 2026-12-02; the largest at goal 1000),
#: rounded up.
MEASURED_REDUCTION: dict[int, float] = {2: 0.33, 3: 0.09}


def reduction_words(seats: int, table: int) -> str:
    """The reduction of a table of `seats` players to the solved table of `table` players, as the solver states
    it (the advice's assumptions, matched by `advice.plain_assumption`), with what it was measured to cost where
    a larger exact game exists.

    >>> reduction_words(4, 3).split("; ")[1]
    'measured in the exact four-player game (standard, goals 1000 to 3000), this reduction cost a seat at most 0.09 points of its chance to win'
    """
    who = "the opponent who threatens" if table == 2 else f"the {table - 1} opponents who threaten"
    said = f"with {seats} players: read from the {table}-player table against {who} most (the highest scores)"
    cost = MEASURED_REDUCTION.get(table)
    if cost is None or seats != 4:
        return said + "; its error is not measured at this size (no larger exact game is solved)"
    return (f"{said}; measured in the exact four-player game (standard, goals 1000 to 3000), this reduction "
            f"cost a seat at most {cost:.2f} points of its chance to win")


def duration_words(seconds: float) -> str:
    """A duration said roughly: "about 40 s", "about 12 min", "about 1 h 25 min"."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    return f"about {minutes // 60} h {minutes % 60:02d} min"
