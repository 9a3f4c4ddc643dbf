"""`optimal`: the solved two-player policy behind the engine's `Policy` protocol.

Every decision is the policy table's (`cinqmille.solver.policy.PolicyTable`,
built from ``solve(rules, "win")``): this module only says where the referee's
question is read in the table, and asks the table's one function for it.

- where: the row ``(seat, me, opp)`` of the player to move (seat 0 opens each
  round under `last_round`), or, in a last round, his last turn against the
  score to beat (`PolicyTable.last_turn`);
- which keep: `keep` over the legal keeps in `keep_order` (after a right
  announcement the keeps double the turn points);
- bank or roll: `banks`; which announcement before rolling two dice:
  `announcement`; take over an offer or start afresh: `takes_over`.

Rules outside the solved state (crosses, ties, struck scores, ``zero_turns``)
are played by reading the table at the current banked scores: the solver's
stated relaxation.

More than two players (`seats_table`): with three the row ``(me, next, after)``
of the exact three-player policy table (the opponents in playing order from
the player to move); with four to eight the same table against the two
opponents who threaten most (`n_player.leading`: the highest scores, on a tie
the one who plays sooner, kept in their playing order), the reduction that
`advise --opp` uses. What the three-player solve does not have is read as it
solves it: take-over offers are declined (the rule solved as if off), and in a
last round (solved as if off for three players) each remaining player plays
his last turn from the two-player table (`PolicyTable.last_turn`: the best
chance to pass the score to beat, exact for the last player to move). Where
the three-player solve is beyond the solver's budget (`TooLarge`), the
two-player table is played against the leading opponent, and a warning says
so once.

The table of a ruleset is kept in memory and in the solver's cache directory
(``.npz``, no pickle), complete, so that the engine policy and the vectorised
simulator read the same arrays; `SolveResult.policy` computes the same rows on
demand.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ..dice.scoring import Keep
from ..engine.state import GameView, TakeOverOffer
from ..errors import CinqmilleError
from ..rules import Rules, content_key, load_rules
from ..solver import cache
from ..solver.api import solve
from ..solver.budget import TooLarge
from ..solver.kernel import UNIT
from ..solver.n_player import leading
from ..solver.policy import PolicyTable, TurnRows, keep_order
from ..solver.result import SolveResult
from ..solver.turns import counted
from .seats_table import SeatsTable, seats_table

TABLE_FORMAT = 3

#: Called after each decision with the question ("keep", "bank", "take_over", "predict"), the view, the
#: answer and a detail: (the kept `Keep`, whether it follows a right announcement) for a keep, the offer for
#: a take-over, None otherwise.
Narrator = Callable[[str, GameView, Any, Any], None]


def build_table(result: SolveResult) -> PolicyTable:
    """The complete policy table of a solved `win` result."""
    return PolicyTable.of(result).complete()


def _table_path(rules: Rules) -> Path:
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)[:40]
    return cache.cache_dir() / f"{safe}-optimal-policy-t{TABLE_FORMAT}-{content_key(rules)}-{cache.solver_version()}.npz"


def _spec(rules: Rules) -> cache.TableSpec:
    """What a cached policy table must hold (shapes are checked against each other on loading)."""
    arrays: dict[str, tuple[tuple[int, ...] | None, str]] = {
        "scores": (None, "int64"), "caps": (None, "int64"), "bust": (None, "float64"),
        "bank": (None, "float64"), "roll": (None, "float64"), "choices": (None, "int64")}
    if rules.prediction:
        arrays.update(plain=(None, "float64"), predict=(None, "float64"))

    def check(found: Mapping[str, np.ndarray]) -> str | None:
        s, d = len(found["scores"]), rules.dice
        rows = int(((found["caps"] + 2) * s).sum())
        if found["bank"].shape != (rows, d) or found["roll"].shape != (rows, d) or len(found["bust"]) != len(found["caps"]) * s:
            return "arrays of inconsistent shapes"
        for name in ("bust", "roll") + (("plain", "predict") if "plain" in found else ()):
            x = found[name]
            if not np.isfinite(x).all() or (x < 0).any() or (x > 1).any():
                return f"array '{name}' holds values outside [0, 1]"
        bank = found["bank"]
        if np.isnan(bank).any() or (bank > 1).any() or ((bank < 0) & (bank != -np.inf)).any():
            return "array 'bank' holds values outside [0, 1]"
        return None

    return cache.TableSpec.of(rules, "policy", "win", 2, arrays, check)


_MEMO: dict[tuple[str, str], PolicyTable] = {}
_LOCK = threading.Lock()


def optimal_table(rules: Rules | str, use_cache: bool = True) -> PolicyTable:
    """The complete policy table of a ruleset: from memory, from the cache directory, or built (and cached)."""
    rules = load_rules(rules)
    key = (content_key(rules), str(cache.cache_dir()))
    with _LOCK:
        if key in _MEMO and _MEMO[key].rules == rules:
            return _MEMO[key]
    path = _table_path(rules)
    table = None
    spec = _spec(rules)
    writable = use_cache
    if use_cache:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            try:
                found = cache.try_load(path, spec)
            except cache.UnreadableTable:  # the solve below says it once if the directory is the trouble
                found, writable, said = None, False, []
        for warning in said:
            warnings.warn(warning.message, stacklevel=2)
        if found is not None:
            table = _checked(rules, path, *found)
    if table is None:
        table = build_table(solve(rules, "win", use_cache=use_cache))
        if writable:
            try:
                cache.save_npz(path, table.arrays(),
                               {"format": TABLE_FORMAT, "period": table.period, "exact": table.exact_solve,
                                "assumptions": list(table.assumptions), "rules": cache.rules_meta(rules)}, spec)
                cache.prune_stale(path)
            except (OSError, CinqmilleError):
                pass  # the solve has said so already if the cache directory cannot be written
    with _LOCK:
        if len(_MEMO) >= 4:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = table
    return table


#: The metadata of a cached policy table and the type of each field (checked on loading).
TABLE_META = {"format": int, "period": int, "exact": bool, "assumptions": list}


def _checked(rules: Rules, path: Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> PolicyTable | None:
    """The cached table, checked against the solved result it comes from (`PolicyTable.from_arrays` with
    `check`); None, with one warning and the file deleted, when it is damaged or forged."""
    try:
        cache.check_meta(meta, TABLE_META)
        if meta["format"] != TABLE_FORMAT:
            raise cache.CorruptTable(f"a table of format {meta['format']}, expected {TABLE_FORMAT}")
        result = solve(rules, "win")
        return PolicyTable.from_arrays(rules, arrays, meta["period"], meta["exact"], tuple(meta["assumptions"]),
                                       check=result)
    except cache.CorruptTable as exc:
        cache.discard(path, exc, stacklevel=4)
        return None


# -- the engine policy -------------------------------------------------------------------
def opponent_score(view: GameView) -> int:
    """The opponent's banked score (with more than two players: the leading opponent)."""
    return max(s for i, s in enumerate(view.scores) if i != view.seat)


def view_seat(view: GameView) -> int:
    """The seat the table is read at under last_round: 0 for the player who opens each round, else 1."""
    return 0 if view.seat == 0 else 1


def view_counters(view: GameView) -> tuple[int, int]:
    """zero_turns: the scoreless turns in a row of the player to move and of the next player."""
    n = len(view.players)
    return view.players[view.seat].zero_turns, view.players[(view.seat + 1) % n].zero_turns


def view_kind(view: GameView) -> int:
    """The kind of table row a view is read at (`solver.turns`): the seat under last_round, the
    scoreless-turn counters (mine * count + his) under a counted zero_turns."""
    count = counted(view.rules)
    if count:
        mine, his = view_counters(view)
        return mine * count + his
    return view_seat(view)


def others_in_order(view: GameView) -> tuple[int, ...]:
    """The opponents' banked scores in playing order from the player to move."""
    n = len(view.players)
    return tuple(view.players[(view.seat + i) % n].score for i in range(1, n))


_TOO_LARGE_SAID: set[str] = set()


class OptimalPolicy:
    """The solved policy behind the engine's `Policy` protocol, for 2 to 8 players (see the module docstring)."""

    name = "optimal"

    def __init__(self, rules: Rules, table: PolicyTable | None = None, narrate: Narrator | None = None,
                 seats: SeatsTable | None = None):
        self.rules = rules
        self._table = table
        self._seats = seats
        self._seats_tried = seats is not None
        self.narrate = narrate
        self._announced: dict[int, tuple[int, int]] = {}  # seat -> (turn number, turn points) of an announcement

    def __repr__(self) -> str:
        return self.name

    @property
    def table(self) -> PolicyTable:
        """The two-player policy table (read when first needed)."""
        if self._table is None:
            self._table = optimal_table(self.rules)
        return self._table

    @property
    def seats(self) -> SeatsTable | None:
        """The three-player policy table (read when first needed), or None when its solve is beyond the budget."""
        if not self._seats_tried:
            self._seats_tried = True
            try:
                self._seats = seats_table(self.rules)
            except TooLarge as exc:
                if self.rules.name not in _TOO_LARGE_SAID:
                    _TOO_LARGE_SAID.add(self.rules.name)
                    warnings.warn(f"optimal: {exc}; playing the two-player table against the leading opponent",
                                  stacklevel=2)
        return self._seats

    def spot(self, view: GameView) -> tuple[TurnRows, int]:
        """(block, row) of the table where the referee's question in `view` is read."""
        if view.last_round is not None:
            return self.table.last_turn(view.score // UNIT, view.last_round.target // UNIT)
        if len(view.players) > 2 and self.seats is not None:
            b, c = leading(others_in_order(view), 2)
            return self.seats, self.seats.row(view.score // UNIT, b // UNIT, c // UNIT)
        return self.table, int(self.table.row(view.score // UNIT, opponent_score(view) // UNIT, view_kind(view)))

    def _said(self, question: str, view: GameView, answer: Any, detail: Any = None) -> Any:
        if self.narrate is not None:
            self.narrate(question, view, answer, detail)
        return answer

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> int:
        block, r = self.spot(view)
        d, n = self.rules.dice, view.dice_in_hand
        units = np.array([0 if k.win else k.points // UNIT for k in keeps])
        left = np.array([(n - k.size) or d for k in keeps])
        win = np.array([k.win for k in keeps], dtype=bool)
        doubled = self._announced.pop(view.seat, None) == (view.turn_number, view.turn_points) and n == 2
        order = keep_order(units, left, win)
        j = int(block.keep(r, view.turn_points // UNIT, units[order], left[order], win[order], doubled))
        choice = int(order[j])
        return self._said("keep", view, choice, (keeps[choice], doubled))

    def should_bank(self, view: GameView) -> bool:
        block, r = self.spot(view)
        return self._said("bank", view, bool(block.banks(r, view.turn_points // UNIT, view.dice_in_hand)))

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        block, r = self.spot(view)
        return self._said("take_over", view, bool(block.takes_over(r, offer.points // UNIT, offer.dice)), offer)

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        """Announce the points of the last two dice where the table says that beats rolling them plainly."""
        block, r = self.spot(view)
        points = int(block.announcement(r, view.turn_points // UNIT))
        answer = points if points in choices else None
        if answer is not None:
            self._announced[view.seat] = (view.turn_number, view.turn_points)
        return self._said("predict", view, answer)


def make_policy(arg: str | None, rules: Rules, rng: np.random.Generator | None = None) -> OptimalPolicy:
    """`parse_policy("optimal", rules)`: the solved policy (takes no argument)."""
    if arg:
        raise CinqmilleError(f"policy 'optimal' takes no argument, got 'optimal:{arg}'")
    return OptimalPolicy(rules)
