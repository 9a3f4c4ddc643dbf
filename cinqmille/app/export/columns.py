"""The columns of an exported policy: names, their meaning and unit, by table size (`export`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ...words import number_word
from ...solver.turns import counted

if TYPE_CHECKING:
    from ...solver import SolveResult

COLUMNS: tuple[str, ...] = ("me", "opp", "seat", "turn", "dice", "action", "win", "bank", "roll")
KEEP_COLUMNS: tuple[str, ...] = ("me", "opp", "seat", "turn", "dice", "rolled", "keep", "points", "left", "then")
THEN: tuple[str, ...] = ("bank", "roll", "win", "bust")  # the codes 0..3 of the keep table's `then`
KEEPS = "keeps"  # npz: prefix of the keep table's arrays; CSV / parquet: infix of its file name
FORMATS: tuple[str, ...] = ("csv", "npz", "parquet")
Columns = dict[str, np.ndarray]
#: Meaning and unit of each column, by column name (`COLUMN_DOCS`, `KEEP_DOCS`).
Docs = dict[str, dict[str, str]]
#: What a policy file records besides its rows (`meta_of`, `read_meta`): JSON.
Meta = dict[str, Any]

_FACES = "faces as decimal digits, sorted ascending (12335 = 1, 2, 3, 3, 5)"
#: Meaning and unit of every column of the bank/roll table (written into every file).
COLUMN_DOCS: dict[str, dict[str, str]] = {
    "me": {"meaning": "banked score of the player to move (0 = not opened when the ruleset has an opening)",
           "unit": "points"},
    "opp": {"meaning": "banked score of the opponent", "unit": "points"},
    "seat": {"meaning": "under last_round: 0 if the player to move opens each round, 1 if he plays second; "
                        "0 otherwise", "unit": "seat index (0 or 1)"},
    "turn": {"meaning": "turn points set aside", "unit": "points"},
    "dice": {"meaning": "dice in hand (all of them after a full hand)", "unit": "dice"},
    "action": {"meaning": "the best move (ties: bank)", "unit": "label: bank | roll"},
    "win": {"meaning": "chance to win with the best move (the larger of bank and roll)", "unit": "probability (0..1)"},
    "bank": {"meaning": "chance to win by banking now; missing (empty in CSV, NaN in npz, null in parquet) "
                        "where banking is not allowed", "unit": "probability (0..1)"},
    "roll": {"meaning": "chance to win by rolling the dice in hand (after the best announcement under prediction)",
             "unit": "probability (0..1)"},
}
#: Meaning and unit of every column of the keep table.
KEEP_DOCS: dict[str, dict[str, str]] = {
    "me": COLUMN_DOCS["me"], "opp": COLUMN_DOCS["opp"], "seat": COLUMN_DOCS["seat"],
    "turn": {"meaning": "turn points set aside before the roll", "unit": "points"},
    "dice": {"meaning": "dice rolled (the dice in hand; the bank/roll row of (me, opp, seat, turn, dice) "
                        "has action roll)", "unit": "dice"},
    "rolled": {"meaning": "the roll (every roll of that many dice that does not bust is listed)", "unit": _FACES},
    "keep": {"meaning": "the best keep of the roll (ties: an instant win, then more points, then more dice left)",
             "unit": _FACES},
    "points": {"meaning": "points of the keep (the goal for an instant win)", "unit": "points"},
    "left": {"meaning": "dice in hand after the keep (all of them after a full hand)", "unit": "dice"},
    "then": {"meaning": "what to do after the keep: bank, roll, win (an instant win) or bust (the keep "
                        "overshoots the goal under end = exact)",
             "unit": "label: bank | roll | win | bust (npz: code 0 bank, 1 roll, 2 win, 3 bust)"},
}


#: `--all-keeps`: the keep table lists every legal keep of each roll, best first, with these columns after `then`.
EVERY: tuple[str, ...] = ("rank", "win", "expected")
EVERY_DOCS: dict[str, dict[str, str]] = {
    "rank": {"meaning": "--all-keeps: the keep's place among the legal keeps of the roll, 0 for the best (the keep "
                        "of the best-keep table; ties: an instant win, then more points, then more dice left)",
             "unit": "rank (0 = best)"},
    "win": {"meaning": "--all-keeps: chance to win after this keep, playing the policy on (advise --roll's win of "
                       "the keep)", "unit": "probability (0..1)"},
    "expected": {"meaning": "--all-keeps: mean points the turn banks after this keep, playing the policy on (an "
                            "instant win counts the turn points plus the goal, an overshoot 0; advise --roll's "
                            "expected)", "unit": "points"},
}
#: `--roll-chances`: the keep table gives each roll's chance in this column (the last), and each state one row more
#: for the rolls that score nothing: `rolled` is `BUST_ROLL` there (no faces), `keep` 0, `then` bust.
CHANCE: tuple[str, ...] = ("chance",)
BUST_ROLL = 0
CHANCE_DOCS: dict[str, dict[str, str]] = {
    "chance": {"meaning": "--roll-chances: the chance of rolling `rolled` with the dice in hand (its ordered rolls "
                          "among the 6 ** dice); the row with rolled 0 is every roll that scores nothing (a bust: no "
                          "keep, then bust), so that a state's rows sum to 1 (with --all-keeps, its rows of rank 0)",
               "unit": "probability (0..1)"},
}
#: An exported turn state costs about as much as this many of a solve's turn states, with its keep rows and without
#: (measured on 'standard', two players: 1.5 million rows in 20.3 s and 3.2 s, its solve of 1.65 million turn
#: states 1.5 s), so that the work is reported (`cli.progress`) as a solve of that time is.
EXPORT_COST = 12
EXPORT_COST_NO_KEEPS = 2
#: An export whose every-keep table would pass this many rows is refused (export a slice).
MAX_EVERY_ROWS = 25_000_000


def opponent_columns(players: int) -> tuple[str, ...]:
    """The opponents' score columns of a table of `players` (three or more), in playing order from the mover:
    `opp` (the next player), `opp2`, `opp3`, ..."""
    return ("opp",) + tuple(f"opp{i}" for i in range(2, players))


def _opponent_doc(i: int, players: int) -> dict[str, str]:
    """The doc of the i-th opponent's column (1: the next player)."""
    last = " (who plays last of the round)" if i == players - 1 else ""
    which = "the next player (who plays right after the player to move)" if i == 1 else \
        f"the player {i} places after the player to move{last}"
    return {"meaning": f"banked score of {which}", "unit": "points"}


def seat_columns(players: int) -> tuple[tuple[str, ...], tuple[str, ...], Docs, Docs]:
    """(bank/roll columns, keep columns, their docs) of a table of three players or more: the columns name
    every opponent in playing order instead of `opp` and `seat` (the n-player solve has no last round)."""
    opps = opponent_columns(players)
    chance = f" ({number_word(players)} players: the chance of the player to move)"
    main = ("me",) + opps + COLUMNS[3:]
    keep = ("me",) + opps + KEEP_COLUMNS[3:]
    scores = {"me": COLUMN_DOCS["me"], **{c: _opponent_doc(i + 1, players) for i, c in enumerate(opps)}}
    docs = {**scores, **{c: COLUMN_DOCS[c] for c in ("turn", "dice", "action")},
            **{c: {"meaning": COLUMN_DOCS[c]["meaning"] + chance, "unit": COLUMN_DOCS[c]["unit"]}
               for c in ("win", "bank", "roll")}}
    keep_docs = {**scores, **{c: KEEP_DOCS[c] for c in KEEP_COLUMNS[3:]}}
    return main, keep, docs, keep_docs




#: A counted `zero_turns` (`solver.turns.counted`): the scoreless-turn counters take the place of `seat`.
SCORELESS: tuple[str, str] = ("scoreless_me", "scoreless_opp")
COLUMNS_Z: tuple[str, ...] = ("me", "opp") + SCORELESS + COLUMNS[3:]
KEEP_COLUMNS_Z: tuple[str, ...] = ("me", "opp") + SCORELESS + KEEP_COLUMNS[3:]
_COUNTERS = {
    "scoreless_me": {"meaning": "zero_turns: scoreless turns in a row of the player to move, before this turn "
                                "(advise --scoreless MINE,HIS: MINE)", "unit": "turns (0 .. count - 1)"},
    "scoreless_opp": {"meaning": "zero_turns: scoreless turns in a row of the opponent (advise --scoreless "
                                 "MINE,HIS: HIS)", "unit": "turns (0 .. count - 1)"},
}
COLUMN_DOCS_Z: dict[str, dict[str, str]] = {c: COLUMN_DOCS.get(c) or _COUNTERS[c] for c in COLUMNS_Z}
KEEP_DOCS_Z: dict[str, dict[str, str]] = {c: KEEP_DOCS.get(c) or _COUNTERS[c] for c in KEEP_COLUMNS_Z}


def columns_of(players: int, scoreless: int = 0, every: bool = False,
               chances: bool = False) -> tuple[tuple[str, ...], tuple[str, ...], Docs, Docs]:
    """(bank/roll columns, keep columns, their docs) of an export for `players`; `scoreless`: the count of a
    counted `zero_turns` (its counters replace `seat`), 0 otherwise; `every`: the keep table of
    `--all-keeps` (the columns `EVERY` after `then`); `chances`: of `--roll-chances` (the column `CHANCE` last)."""
    if players > 2:
        out = seat_columns(players)
    elif scoreless:
        out = (COLUMNS_Z, KEEP_COLUMNS_Z, COLUMN_DOCS_Z, KEEP_DOCS_Z)
    else:
        out = (COLUMNS, KEEP_COLUMNS, COLUMN_DOCS, KEEP_DOCS)
    if every:
        out = (out[0], out[1] + EVERY, out[2], {**out[3], **EVERY_DOCS})
    if chances:
        out = (out[0], out[1] + CHANCE, out[2], {**out[3], **CHANCE_DOCS})
    return out


def kind_labels(result: "SolveResult") -> list[tuple[int, dict[str, int]]]:
    """Every kind of row of a two-player table (`solver.turns`) and its label columns: the seat (under
    last_round both seats, else seat 0), or the counters (scoreless_me, scoreless_opp) of a counted zero_turns."""
    c = counted(result.rules)
    if c:
        return [(k, dict(zip(SCORELESS, divmod(k, c)))) for k in range(c * c)]
    return [(k, {"seat": k}) for k in range(result.seats)]


def kinds_of(result: "SolveResult", cols: Columns) -> np.ndarray:
    """The kind of row (`kind_labels`) of each exported row, from its label columns."""
    c = counted(result.rules)
    if c:
        return cols["scoreless_me"].astype(np.int64) * c + cols["scoreless_opp"].astype(np.int64)
    return cols["seat"].astype(np.int64)
