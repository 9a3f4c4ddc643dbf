"""Numbers and tables of players in words, written once for every reader (advice, play, the policies, the web).

>>> number_word(3), players_words(1), table_words(4)
('three', 'one player', 'the four-player table')
>>> reduction_words(5, 3)
'with 5 players: read from the 3-player table against the 2 opponents who threaten most (the highest scores); its error is not measured at this size (no larger exact game is solved)'
"""

from __future__ import annotations

import re

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
    it (the advice's assumptions, matched by `plain_assumption`), with what it was measured to cost where
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


# -- percentages, dice and keeps, the solver's assumptions in a player's words ------------------------------
def pct(p: float, decimals: int = 1) -> str:
    """A probability as a percentage: 0.5412 -> '54.1 %'."""
    return f"{100 * p:.{decimals}f} %"


def pct_pair(a: float, b: float) -> tuple[str, str]:
    """Two probabilities with enough decimals to tell them apart (1 to 4)."""
    for decimals in range(1, 5):
        x, y = pct(a, decimals), pct(b, decimals)
        if x != y:
            return x, y
    return x, y


def dice_words(n: int, full: bool = False) -> str:
    """'3 dice', '1 die', or 'all 5 dice' after a full hand."""
    if full:
        return f"all {n} dice"
    return f"{n} {'die' if n == 1 else 'dice'}"


def keep_words(keep: tuple[int, ...], rolled: int) -> str:
    """'the 1 and the 5', 'the three 3s', or 'all 5 dice' (a straight)."""
    if len(keep) == rolled and rolled > 1 and len(set(keep)) > 1:
        return f"all {rolled} dice"
    parts = []
    for face in sorted(set(keep)):
        n = keep.count(face)
        parts.append(f"the {face}" if n == 1 else f"the {number_word(n)} {face}s")
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def faces_words(faces: tuple[int, ...]) -> str:
    return "-".join(map(str, faces))


_CHASE = re.compile(r"^\d+ players: on (\d+) bust cycles? of scores")
BOUND = re.compile(r"(?:at most|residual) (\d(?:\.\d+)?e[-+]\d+)")
_READ_FROM = re.compile(r"^with (\d+) players: read from the (\d+)-player table")
_MEASURED = re.compile(r"cost a seat at most (\d+\.\d+) points")
RULE_OFF = re.compile(r"^(\w+)(?: = \w+)?: .*solved as if (?:the rule were|it were) off")


def plain_assumption(text: str) -> str:
    """An assumption of the solver in a player's words (the technical text is `advise --verbose` and --json's).

    >>> plain_assumption("last_round: not yet solved for 3 players; solved as if the rule were off")
    "the rule 'last_round' is left out (the figures are as if it were off)"
    """
    chase = _CHASE.match(text)
    if chase:
        cycles = int(chase.group(1))
        bound = max((float(x) for x in BOUND.findall(text)), default=0.0)
        within = f"{max(bound * 100, 1e-4):.1g}".replace("e-0", "e-")
        where = "one rare position" if cycles == 1 else f"{cycles} rare positions"
        return (f"exact except in {where} (scores where two players' choices chase each other), where the figures "
                f"are within {within} %")
    read = _READ_FROM.match(text)
    if read:
        seats, table = int(read.group(1)), int(read.group(2))
        measured = _MEASURED.search(text)
        cost = (f"; measured in the exact four-player game, playing it costs a seat at most {measured.group(1)} "
                f"points of chance" if measured else "; what playing it costs at this size is not measured")
        return (f"the move is the decision of the {table}-player game against {threat_words(table - 1)}, not of "
                f"this game of {seats}{cost}")
    rule = RULE_OFF.match(text)
    if rule:
        return f"the rule '{rule.group(1)}' is left out (the figures are as if it were off)"
    return text
