"""The whole optimal policy of a ruleset as two tables, and the CSV / npz / parquet writers.

The bank/roll table has one row per bank-or-roll decision state that can
occur: banked scores `me`, `opp`, the mover's `seat` (under `last_round`, 0
for the player who opens each round and 1 for the other; always 0 otherwise)
or, under a counted `zero_turns` (`solver.turns.counted`), the scoreless-turn
counters `scoreless_me`, `scoreless_opp` instead of `seat`: every pair, each
0 .. count - 1, as `advise --scoreless MINE,HIS` reads it (`kind_labels`;
the files' metadata records the count as `scoreless`),
turn points `turn` (0 up to the pair's cap: the goal under `reach`, where a
bank wins; exactly the goal under `exact`), dice in hand `dice`. A state
(turn, dice) is listed when some sequence of keeps from the turn start reaches
it (`reachable`); the turn start itself (turn 0, all dice) is listed, with the
only action `roll` and no bank value. Columns: `action` (bank or roll, ties to
bank), `win` (the chance to win with best play), `bank` (chance to win by
banking now, NaN / empty / null where banking is not allowed) and `roll`.

The keep table (`keep_rows`) has one row per state of the bank/roll table
whose action is `roll` and per roll of its dice that does not bust (the
rolls in the order of `dice_tables`: sorted faces ascending): the faces
`rolled` and the best `keep` (both as decimal digits, 12335 for 1-2-3-3-5),
its `points`, the dice `left` in hand after it and what to do `then`
(`THEN`: bank, roll, win for an instant win, bust for an overshoot under
`end = exact`). Under `prediction` these are the keeps of a plain roll, as
`advise --roll` gives them. With `every` (`--all-keeps`) each roll lists every
legal keep, ranked as `advise --roll` ranks them, with `rank` (0: the best
keep's row), `win` and `expected` (`EVERY`); the same row builder
(`_fill_keeps`) writes both, and the files' metadata records `every_keep`.
With `chances` (`--roll-chances`) each keep row carries its roll's chance
(`CHANCE`: the probability of rolling those faces with the dice in hand, its
ordered rolls among the 6 ** dice) and each state one row more, after its
rolls, for every roll that scores nothing (`rolled` `BUST_ROLL`, no keep,
`then` bust, their chance together): a state's chances sum to 1. The files'
metadata records `roll_chances`.

Three players or more (`seat_tables`, `cinqmille export --players 3` or `4`): the same
two tables for the n-player solve, whose rows name every opponent in playing
order, `opp` (the next player), `opp2` (the one after him), `opp3`, instead of
`opp` and `seat` (the n-player solve has no last round); `win`, `bank` and
`roll` are the chances of the player to move. The rows of one (me, opp, ...) are one
kernel pass against every score of the last opponent (`table.policy.seat_rows`, the
computation of the advice's rows); the decisions are the same `TurnRows`
functions. The whole three-player table is as many times the two-player one
as there are scores (86 under `standard`), so a slice is the practical export
and a keep table beyond `max_keep_rows` is refused. Files record `players`
in their metadata; `read_policy` reads either.

Every number and every decision is read from the solved result's policy table
(`cinqmille.table.policy`: `banks`, `keep`, `move`), the one
that `advise` and the players read.

Layout: npz holds both tables in one archive (the keep columns as
``keeps/<column>``); CSV and parquet write the keep table to a second file
beside the first (`keeps_path`: ``policy.csv`` -> ``policy.keeps.csv``). Every
file documents its columns (`COLUMN_DOCS`, `KEEP_DOCS`): the npz `meta` JSON,
the parquet schema (field metadata and the ``cinqmille`` key), a JSON sidecar
``<file>.json`` beside each CSV file.

Files are written atomically (`files.atomic_write_all`), the keep table and
the sidecars too: a temporary file in the target's directory, renamed over the
target only once complete; the temporary files of a killed export are removed
by the next one. A target (the policy file or a file beside it) that exists
and is not a regular file (a device, a FIFO, a socket, a directory, or a
symbolic link to one) refuses the export before any file is written
(`check_targets`).
"""

from __future__ import annotations

from .columns import (
    BUST_ROLL,
    CHANCE,
    CHANCE_DOCS,
    COLUMN_DOCS,
    COLUMNS,
    COLUMNS_Z,
    EVERY,
    EVERY_DOCS,
    EXPORT_COST,
    EXPORT_COST_NO_KEEPS,
    FORMATS,
    KEEP_COLUMNS,
    KEEP_COLUMNS_Z,
    KEEP_DOCS,
    KEEPS,
    MAX_EVERY_ROWS,
    SCORELESS,
    THEN,
    Columns,
    Docs,
    Meta,
    columns_of,
    kind_labels,
    kinds_of,
    opponent_columns,
    seat_columns,
)
from .files import (
    check_targets,
    format_of,
    keeps_path,
    meta_of,
    need_pyarrow,
    policy_files,
    read_meta,
    read_policy,
    sidecar_path,
    write_policy,
)
from .keeps import check_every_rows, every_rows_at_least, faces_code, keep_rows, points_dtype
from .states import pair_rows, parse_scores, policy_rows, reachable, seat_tables

__all__ = ["BUST_ROLL", "CHANCE", "CHANCE_DOCS", "COLUMN_DOCS", "COLUMNS", "COLUMNS_Z", "EVERY", "EVERY_DOCS", "EXPORT_COST", "EXPORT_COST_NO_KEEPS",
           "FORMATS", "KEEP_COLUMNS", "KEEP_COLUMNS_Z", "KEEP_DOCS", "KEEPS", "MAX_EVERY_ROWS", "SCORELESS", "THEN",
           "Columns", "Docs", "Meta", "columns_of", "kind_labels", "kinds_of", "opponent_columns", "seat_columns",
           "check_targets", "format_of", "keeps_path", "meta_of", "need_pyarrow", "policy_files", "read_meta",
           "read_policy", "sidecar_path", "write_policy", "check_every_rows", "every_rows_at_least", "faces_code",
           "keep_rows", "points_dtype", "pair_rows", "parse_scores", "policy_rows", "reachable", "seat_tables"]
