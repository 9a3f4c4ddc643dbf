"""Vectorised forms of the policies, for many games at once (exactly the engine policies' choices).

Each takes arrays of the games it plays (pair id `pid`, banked `a`, `b`, turn
points `t` in units of 50, dice in hand `m`) and answers two questions:

``keep(pid, a, t, c)``
    the keep (index into the roll model's keep arrays) after a roll of class `c`;
``bank(pid, a, b, t, m)``
    bank (True) or roll, asked after every keep that neither won nor overshot.
    The answer must be False where banking is not allowed.

`card` asks a strategy card's rows (`policies.card.CardRows`, two players);
`optimal` asks the policy table (`PolicyTable`; with three players or more the
n-player table, at the row the loop gives as `pid`); `threshold`, `cautious` and `expected`
apply the rules of `cinqmille.policies` (the same guards: never bank a turn
that scores nothing, always bank a turn that wins). `vector_policy(spec, rules)`
parses a policy name; `random` has no vectorised form (the referee plays it).
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..errors import CinqmilleError
from ..policies import parse_policy
from ..policies.heuristics import CautiousPolicy, ThresholdPolicy, guarded_bank
from ..table.load import policy_table
from ..solver.api import table_players
from ..rules import Rules
from ..rules.bank import UNIT, BankRules
from ..table.policy import PolicyTable
from ..table.rows import TurnRows
from .model import RollModel, roll_model
from ..policies.expected import expected_table
from ..policies.card import CardRows, parse_card
from ..solver.grid import ScoreGrid


class VecPolicy(Protocol):
    """A policy for arrays of games (see the module docstring)."""

    name: str

    def keep(self, pid: np.ndarray, a: np.ndarray, t: np.ndarray, c: np.ndarray) -> np.ndarray: ...

    def bank(self, pid: np.ndarray, a: np.ndarray, b: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray: ...


class OptimalVec:
    """`optimal`: the policy table's decisions (`cinqmille.table.policy`) for arrays of games.

    The keep of a roll class is the one the solve took there (`TurnRows.keep`),
    as the engine policy and the advice read it. Besides the two questions of
    the protocol it answers the take-over and announcement questions; with
    `target` (units, one per game) the games are in their last turn of a last round.
    """

    name = "optimal"

    def __init__(self, rules: Rules, table: PolicyTable | None = None):
        self.rules = rules
        self.table: PolicyTable = (table if table is not None else policy_table(rules, 2)).complete()
        self.model = roll_model(rules)

    def _where(self, pid: np.ndarray, a: np.ndarray, target: np.ndarray | None) -> tuple[TurnRows, np.ndarray]:
        if target is None:
            return self.table, pid
        if self.table.players != 2:
            raise CinqmilleError("the n-player table has no last turns")
        return self.table.last_turns(a, target)

    def keep(self, pid: np.ndarray, a: np.ndarray, t: np.ndarray, c: np.ndarray,
             target: np.ndarray | None = None, doubled: np.ndarray | bool = False) -> np.ndarray:
        block, r = self._where(pid, a, target)
        return block.keep(r, t, c, doubled)  # the roll model's keeps are the graph's

    def bank(self, pid: np.ndarray, a: np.ndarray, b: np.ndarray, t: np.ndarray, m: np.ndarray,
             target: np.ndarray | None = None) -> np.ndarray:
        block, r = self._where(pid, a, target)
        return block.banks(r, t, m)

    def take_over(self, pid: np.ndarray, a: np.ndarray, t: np.ndarray, m: np.ndarray,
                  target: np.ndarray | None = None) -> np.ndarray:
        """Take over the offered `t` units with `m` dice (True) or start afresh."""
        block, r = self._where(pid, a, target)
        return block.takes_over(r, t, m)

    def announce(self, pid: np.ndarray, a: np.ndarray, t: np.ndarray,
                 target: np.ndarray | None = None) -> np.ndarray:
        """Points announced before rolling the last two dice (0: roll them plainly)."""
        block, r = self._where(pid, a, target)
        return block.announcement(r, t)


class _GuardedVec:
    """Shared parts of the heuristics: `best_keep` and the bank guards of `bank_is_worth_it`."""

    name = "heuristic"

    def __init__(self, rules: Rules):
        self.rules = rules
        self.model: RollModel = roll_model(rules)
        self.br = BankRules.of(rules)
        self.p_units = self.model.units[self.model.pref]

    def keep(self, pid: np.ndarray, a: np.ndarray, t: np.ndarray, c: np.ndarray) -> np.ndarray:
        mod = self.model
        if not self.br.exact:
            heuristic: np.ndarray = mod.heuristic_keep[c]
            return heuristic
        pref = mod.pref[c]
        ok = mod.win[pref] | ~self.br.overshoots(a[:, None], t[:, None] + self.p_units[c])
        ok &= pref < len(mod.units) - 1
        j = np.where(ok.any(axis=1), ok.argmax(axis=1), 0)
        kept: np.ndarray = pref[np.arange(len(c)), j]
        return kept

    def bank(self, pid: np.ndarray, a: np.ndarray, b: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray:
        return np.asarray(guarded_bank(self.br, a, t, m, self.wants(a, t, m)))

    def wants(self, a: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class ThresholdVec(_GuardedVec):
    """`threshold:T[/K]`: bank with at least T points or (with K) K dice or fewer in hand."""

    def __init__(self, rules: Rules, threshold: int, max_dice: int | None):
        super().__init__(rules)
        self.threshold, self.max_dice = threshold, max_dice
        self.name = f"threshold:{threshold}" + (f"/{max_dice}" if max_dice is not None else "")

    def wants(self, a: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray:
        out = t * UNIT >= self.threshold
        if self.max_dice is not None:
            out |= m <= self.max_dice
        return out


class CautiousVec(_GuardedVec):
    """`cautious`: bank the opening as soon as it is reached; then a good turn with few dice left."""

    name = "cautious"

    def __init__(self, rules: Rules, good: int = 300, max_dice: int = 2):
        super().__init__(rules)
        self.good, self.max_dice = good, max_dice

    def wants(self, a: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray:
        wanted: np.ndarray = ~self.br.opened(a) | ((t * UNIT >= self.good) & (m <= self.max_dice))
        return wanted


class ExpectedVec(_GuardedVec):
    """`expected`: the keep and bank that maximise the expected points of the turn (`ExpectedPolicy`)."""

    name = "expected"

    def __init__(self, rules: Rules):
        super().__init__(rules)
        self.e = expected_table(rules)  # (2, top+1, D) points
        self.top = self.e.shape[1] - 1
        self.flat = self.e.reshape(-1)
        mod = self.model
        self.c_units = mod.units[mod.cand]
        self.c_col = mod.next[mod.cand] - 1
        self.c_fixed = np.where(mod.win[mod.cand], np.inf, np.where(mod.cand_ok, np.nan, -2.0))
        self.c_free = np.isnan(self.c_fixed)

    def _values(self, opened: np.ndarray, t: np.ndarray, col: np.ndarray) -> np.ndarray:
        d = self.rules.dice
        inside = t <= self.top
        idx = (opened.astype(np.int64) * (self.top + 1) + np.minimum(t, self.top)) * d + col
        return np.where(inside, self.flat[idx], t * float(UNIT))

    def keep(self, pid: np.ndarray, a: np.ndarray, t: np.ndarray, c: np.ndarray) -> np.ndarray:
        t2 = t[:, None] + self.c_units[c]
        vals = self._values(self.br.opened(a)[:, None], t2, self.c_col[c])
        vals = np.where(self.br.overshoots(a[:, None], t2), -1.0, vals)
        vals = np.where(self.c_free[c], vals, self.c_fixed[c])
        j = vals.argmax(axis=1)
        kept: np.ndarray = self.model.cand[c, j]
        return kept

    def wants(self, a: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray:
        return t * float(UNIT) >= self._values(self.br.opened(a), t, m - 1)


class CardVec:
    """`card[:ARG]`: a strategy card's decisions (`policies.card.CardRows`, the block its exact evaluation reads)
    for arrays of games of two players; the opponent's score is read from the pair row `pid` (`pair_rows`)."""

    def __init__(self, rules: Rules, spec: str):
        self.rules = rules
        card = parse_card(spec.strip().partition(":")[2] or None, rules)
        self.name = card.name
        goal = rules.goal // UNIT
        self.block = CardRows(rules, card, np.arange(goal), np.full(goal, goal))
        self.scores = ScoreGrid.of(rules).scores.astype(np.int64)
        self.model = roll_model(rules)

    def _rows(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.asarray(self.block.row(a, a, b))

    def keep(self, pid: np.ndarray, a: np.ndarray, t: np.ndarray, c: np.ndarray) -> np.ndarray:
        b = self.scores[np.asarray(pid) % len(self.scores)]
        taken = self.block.taken(self._rows(a, b), t)  # the card's keep of every class (the graph's ids)
        return np.asarray(np.take_along_axis(taken, np.asarray(c)[..., None], axis=-1)[..., 0])

    def bank(self, pid: np.ndarray, a: np.ndarray, b: np.ndarray, t: np.ndarray, m: np.ndarray) -> np.ndarray:
        return np.asarray(self.block.move(self._rows(a, b), t, m) == 0)


def has_vector_form(spec: str, players: int = 2) -> bool:
    """Whether the simulator has a vectorised form of the policy named `spec` at a table of `players`."""
    name = spec.strip().partition(":")[0]
    return name in ("optimal", "threshold", "cautious", "expected") or (name == "card" and players == 2)


def vector_policy(spec: str, rules: Rules, players: int = 2, table: int | None = None) -> VecPolicy:
    """The vectorised policy named `spec` under `rules` for a table of `players` (checked by `parse_policy` first).

    With three players or more `optimal` reads the n-player policy table the engine reads (`table_players`), or
    the table of `table` players.
    """
    if not has_vector_form(spec, players):
        raise CinqmilleError(f"policy '{spec}' has no vectorised form; use the referee")
    name = spec.strip().partition(":")[0]
    if name == "card":
        return CardVec(rules, spec)
    if name in ("optimal", "expected"):
        if ":" in spec:
            parse_policy(spec, rules)  # the argument error, one line
        if name == "optimal":
            seats = (table_players(rules, players) if table is None else min(table, players)) if players > 2 else 2
            return OptimalVec(rules, policy_table(rules, seats, complete=True) if seats > 2 else None)
        return ExpectedVec(rules)
    policy = parse_policy(spec, rules)
    if isinstance(policy, ThresholdPolicy):
        return ThresholdVec(rules, policy.threshold, policy.max_dice)
    if isinstance(policy, CautiousPolicy):
        return CautiousVec(rules, policy.good, policy.max_dice)
    raise CinqmilleError(f"policy '{spec}' has no vectorised form; use the referee")
