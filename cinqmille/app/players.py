"""The seat syntax of `simulate` and `play`: one player per seat, in playing order, separated by commas.

Each seat is a policy name of `cinqmille.policies.parse_policy` (`optimal`,
`expected`, `threshold:T`, `threshold:T/K`, `cautious`, `random`); `bot` is a
synonym of `optimal`; `play` also seats people (`human`). A game has 2 to 8
seats.

>>> parse_players("human, bot,threshold:300", humans=True)
('human', 'optimal', 'threshold:300')
"""

from __future__ import annotations

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules
from ..policies import parse_policy

HUMAN = "human"
#: Other names of policies.
SYNONYMS = {"bot": "optimal"}
MIN_SEATS, MAX_SEATS = 2, 8
#: Policies built from the solved tables (they take no argument).
SOLVED = ("optimal", "expected")


def parse_players(text: str, rules: Rules | None = None, *, humans: bool = False,
                  label: str = "--players") -> tuple[str, ...]:
    """The seats written in `text` ('optimal,threshold:350'), synonyms replaced.

    With `rules`, also checks the number of seats and every policy name (one-line
    `CinqmilleError`); `humans` lets `human` seats in.
    """
    seats = tuple(SYNONYMS.get(p.strip(), p.strip()) for p in text.split(",") if p.strip())
    if rules is None:
        return seats
    if not MIN_SEATS <= len(seats) <= MAX_SEATS:
        raise CinqmilleError(f"{label}: a game has {MIN_SEATS} to {MAX_SEATS} seats, got {len(seats)}")
    for seat in seats:
        if humans and seat == HUMAN:
            continue
        check_policy(seat, rules, label, humans)
    return seats


def check_policy(spec: str, rules: Rules, label: str = "--players", humans: bool = False) -> None:
    """Refuse a policy name that `parse_policy` does not know (without building the solved ones)."""
    name, _, arg = spec.partition(":")
    if name in SOLVED:
        if arg:
            raise CinqmilleError(f"{label}: policy '{name}' takes no argument, got '{spec}'")
        return
    if name == HUMAN:
        raise CinqmilleError(f"{label}: a 'human' seat is for `cinqmille play`; here every seat is a policy")
    try:
        parse_policy(spec, rules, rng=np.random.default_rng(0))
    except CinqmilleError as exc:
        raise CinqmilleError(f"{label}: {exc}{' (or human)' if humans else ''}") from None
