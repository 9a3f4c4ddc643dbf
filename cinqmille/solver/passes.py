"""One kernel pass over rows of a solved `win` result, and the check of a result read back from the cache.

Every value of a turn follows from the turn-start table by one backward pass
of the kernel (no iteration): two players, `pair_pass`, with the bust values
``L = 1 - W[other, b, a]`` and the model's bank values; three or more,
`seat_pass`, with the bust vector ``P V(others, a)`` and each seat's banks. The
policy table (`table.policy`) fills its rows from these passes; `sample_problem`
evaluates a sample of rows afresh to check that a cached table is the game's
solution.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .choice import differs, sample_groups
from .kernel import BankTable, Decisions
from .result import SolveResult
from .seats import pass_dice

#: Opponent scores of one two-player sample group (`sample_problem`; the policy table's groups are as large).
PAIR_GROUP = 8


class Pass(NamedTuple):
    """One kernel pass: the rows' caps and layers (``cap + 2`` of the first row), bust values (two players:
    ``L``; more: the bust vectors ``P V``), bank table, the decisions it took (σ), and the affine values ``A``,
    ``B`` of every turn state (a state is ``A + B L``)."""

    caps: np.ndarray
    layers: int
    bust: np.ndarray
    bank: BankTable
    moves: Decisions
    a: np.ndarray
    b: np.ndarray


def pair_pass(result: SolveResult, seat: int, a: int, b: np.ndarray, cap: int) -> Pass:
    """One kernel pass of a two-player mover of row kind `seat` with banked `a` against each score of `b`
    (units), every row with `cap` (the mover's)."""
    model, kernel, w = result.model, result.kernel, result.tables
    k = len(b)
    n = cap + 2
    seats = np.full(k, seat)
    mover = np.full(k, a)
    l0 = model.bust_value(seats, mover, b, w)
    bank = model.bank(seats, mover, b, n - 1, w)
    moves = kernel.move_table(k, cap)
    _, _, ta, tb = kernel.run(mover, np.full(k, cap), bank, l0, keep_table=True,
                              term_bank=model.terminal_bank(seats, mover, b), moves=moves)
    return Pass(np.full(k, cap), n, l0, bank, moves, ta, tb)


def seat_pass(result: SolveResult, a: int, others: np.ndarray, seat: int = 0) -> Pass:
    """One kernel pass with seat values for a mover of `seat` at `a` against each row of `others` (units, shape
    (k, n - 1), playing order). Under a last round or take-over offers the banks and caps are the solve's
    (`rounds.Rounds.seat_inputs`)."""
    kernel, grid = result.kernel, result.grid
    rest = np.asarray(others, dtype=np.int64).reshape(len(others), -1)
    if rest.shape[1] != result.players - 1:
        raise ValueError(f"a {result.players}-player table needs {result.players - 1} opponents per row")
    k = len(rest)
    mover = np.full(k, a, dtype=np.int64)
    term = None
    if result.rounds is not None:
        caps, bank, term, bust = result.rounds.seat_inputs(seat, mover, rest, result.tables, result.offers)
    else:
        caps = grid.cap(mover)
        bust = pass_dice(grid.seat_values(result.values, np.column_stack([rest, mover])))
        bank = grid.seat_bank_table(mover, rest, int(caps[0]) + 1, result.values)
    n = int(caps[0]) + 2
    moves = kernel.move_table(k, int(caps.max()))
    _, _, ta, tb = kernel.run(mover, caps, bank, bust[:, 0].copy(), keep_table=True, moves=moves, term_bank=term)
    return Pass(caps, n, bust, bank, moves, ta, tb)


def seat_starts(result: SolveResult, a: int, others: np.ndarray, seat: int = 0) -> np.ndarray:
    """Every stored seat's chance (k, n - 1), the mover first, at the turn start of a mover of `seat` at `a`
    against each row of `others`, computed afresh by one kernel pass from the table's values (``A + B L`` per
    seat)."""
    run = seat_pass(result, a, others, seat)
    d = result.rules.dice
    return np.asarray(run.a[:, 0, d - 1, :] + run.b[:, 0, d - 1, None] * run.bust[:, : run.a.shape[-1]])


def pair_starts(result: SolveResult, seat: int, a: int, b: np.ndarray) -> np.ndarray:
    """The two-player turn starts (a chance each) of a mover of row kind `seat` at `a` against each of `b`
    (units), computed afresh by one kernel pass."""
    cap = int(result.model.caps(np.array([seat]), np.array([a]))[0])
    run = pair_pass(result, seat, a, np.asarray(b, dtype=np.int64), cap)
    d = result.rules.dice
    return np.asarray(run.a[:, 0, d - 1] + run.b[:, 0, d - 1] * run.bust)


def sample_problem(result: SolveResult, tol: float = 1e-9) -> str | None:
    """Why this `win` table (read back from the cache) is not the ruleset's solution, on a deterministic sample
    of rows (None when the sample agrees; other objectives: None).

    The rows of `choice.SAMPLE_GROUPS` groups (two players: one mover against
    `PAIR_GROUP` opponents; more: one mover and the first opponents against
    every last opponent) are evaluated afresh by one kernel pass from the
    stored table (its bust and bank values); their turn starts must equal the
    stored chances within `tol`. A forged table whose values are plausible (in
    range, the right shape, a valid checksum) but not the fixed point of the
    game fails here.
    """
    if result.objective != "win":
        return None
    # where the solve settled chasing cycles (`exact` false) its stated residual bounds how far a pass moves
    # the values; a forged residual is shown with the table, so it cannot hide a forgery silently
    tol = max(tol, 4 * result.residual)
    scores = result.grid.scores.astype(np.int64)
    s, n = len(scores), result.players
    if n == 2:
        chunks = -(-s // PAIR_GROUP)
        for g in sample_groups(result.tables.shape[0] * s * chunks):
            mover, chunk = divmod(int(g), chunks)
            seat, ia = divmod(mover, s)
            ib = np.arange(chunk * PAIR_GROUP, min((chunk + 1) * PAIR_GROUP, s))
            start = pair_starts(result, seat, int(scores[ia]), scores[ib])
            if differs(start, result.tables[seat, scores[ia], scores[ib]], tol):
                return "its chances are not the game's solution (a sample of rows evaluated again differs)"
        return None
    # every seat is checked, not only the mover's: a table whose other seats are permuted has the right mover's
    # chances. On a chasing cycle settled by a mixed choice the pure pass gives the other seats values that
    # differ from the settled ones (by the gap the assumptions state): at most that many rows may differ there
    groups = sample_groups(s ** (n - 1))
    # (a forged count cannot excuse a permuted table: at most a quarter of the rows sampled, which cycles never are)
    chasing = min(int(result.extra.get("chasing_rows", 0)), len(groups) * s // 4) if not result.exact else 0
    for group in groups:  # the mover and every opponent but the last, against every last
        lead = [int(scores[i]) for i in np.unravel_index(int(group), (s,) * (n - 1))]
        others = np.column_stack([np.full(s, x) for x in lead[1:]] + [scores])
        start = seat_starts(result, lead[0], others)
        stored = result.seat_values(np.column_stack([np.full((s, n - 1), lead), scores]))
        if differs(start[:, 0], stored[:, 0], tol):
            return "its chances are not the game's solution (a sample of rows evaluated again differs)"
        found, want = start[:, 1:], stored[:, 1:]
        with np.errstate(invalid="ignore"):
            same = (found == want) | (np.isnan(found) & np.isnan(want)) | (np.abs(found - want) <= tol)
        chasing -= int((~same).any(axis=1).sum())
        if chasing < 0:
            return "its other seats' chances are not the game's solution (a sample of rows evaluated again differs)"
    return None
