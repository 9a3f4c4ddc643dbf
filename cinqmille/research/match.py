"""Two policies against each other, exactly: `cinqmille match A B`.

Each policy's whole turns from every score pair are one `distribution.PairTurns`
(the forward pass of the turn, `table.turn_dist.turn_distributions`, over a block
of its decisions): the optimal player's from the solved policy table
(`distribution.optimal_turns`), a strategy card's from its rows
(`card.card_turns`; ``threshold:T`` is the simulator's policy), and every
policy the simulator plays in vector form (``threshold:T``, ``threshold:T/K``,
``cautious``, ``expected``, `simulation.vecpolicies`) through `VecPlay`, which
asks that vector form its decisions state by state. The game between the two
is the chain over score pairs (`distribution.GameChain`, `distribution.duel`),
solved exactly level by level: the chance of A in each seat. Nothing is
simulated; the same evaluation gives a card's cost against optimal
(`card.evaluate`).

The chain needs two players and a game without a last round, take-overs or
counted scoreless turns (`distribution.check_chain`); a policy that draws at
random (``random``) has no exact form here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..table.policy import policy_of
from ..errors import CinqmilleError
from ..app import players
from ..app.players import SYNONYMS
from ..rules import Rules
from ..rules.bank import UNIT
from ..simulation.model import roll_model
from ..simulation.vecpolicies import VecPolicy, has_vector_form, vector_policy
from ..policies.card import CARD, parse_card
from .card import card_turns
from .distribution import PairTurns, check_chain, check_chain_rules, duel, optimal_turns, pair_turns
from ..solver import solve

if TYPE_CHECKING:
    from ..solver import SolveResult

METHOD = ("exact: each policy's turns from every score pair by a forward pass over the turn's states under its "
          "decisions, the game by the chain over score pairs solved level by level (no simulation)")


class VecPlay:
    """A vectorised policy (`simulation.vecpolicies`) as a block of rows (a `table.turn_eval.TurnPlay`): row `i`
    is the mover at ``scores[i]``; its move and its keep in each roll class are the vector form's answers.

    For policies that read the mover's score only (every heuristic and `expected`): the opponent's score is
    passed as 0 and the pair row as the row.
    """

    def __init__(self, rules: Rules, vec: VecPolicy, scores: np.ndarray, caps: np.ndarray):
        self.rules, self.vec = rules, vec
        self.dice = rules.dice
        self.exact = rules.banking.exact
        self.tie = 0.0  # no values: the vector form's own decisions
        self.a = np.asarray(scores, dtype=np.int64)
        self.cap = np.asarray(caps, dtype=np.int64)
        self.graph = roll_model(rules).graph

    def move(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """0 bank, 1 roll: the vector form's bank question at each state."""
        r, t, m = np.broadcast_arrays(np.asarray(r), np.asarray(t), np.asarray(m))
        rr, tt, mm = (np.ascontiguousarray(x).reshape(-1).astype(np.int64) for x in (r, t, m))
        banks = self.vec.bank(rr, self.a[rr], np.zeros_like(rr), tt, mm)
        return np.asarray(np.where(np.asarray(banks), 0, 1)).reshape(r.shape)

    def taken(self, r: Any, t: Any, doubled: bool = False) -> np.ndarray:
        """The keep the vector form takes in every roll class of the keep graph from turn units `t` of rows `r`
        (ids into the graph's keeps, shape ``S + (C,)``: the `TurnPlay` question)."""
        if np.any(doubled):
            raise CinqmilleError(f"policy '{self.vec.name}' never announces")
        g = self.graph
        r, t = np.broadcast_arrays(np.asarray(r), np.asarray(t))
        rr, tt = r.reshape(-1).astype(np.int64), t.reshape(-1).astype(np.int64)
        n, c = len(rr), len(g.class_start)
        pid = np.repeat(rr, c)
        kept = self.vec.keep(pid, self.a[pid], np.repeat(tt, c), np.tile(np.arange(c), n)).reshape(n, c)
        return np.asarray(kept, dtype=np.int64).reshape(r.shape + (c,))


def policy_name(spec: str) -> str:
    """`spec` with its synonyms replaced (`bot` is `optimal`) and spaces trimmed."""
    spec = spec.strip()
    return SYNONYMS.get(spec, spec)


def check_policy(spec: str, rules: Rules, label: str = "policy") -> str:
    """`spec` with its synonyms replaced, or a `CinqmilleError` in one line when `match` cannot evaluate it
    (checked before any solve)."""
    spec = policy_name(spec)
    if not has_vector_form(spec):
        raise CinqmilleError(f"{label}: policy '{spec[:60]}' has no exact evaluation (known: optimal, expected, threshold:T, "
                             f"threshold:T/K, cautious, card, card:L1/L2/.../LD[:few:DIE])")
    players.check_policy(spec, rules, label)
    return spec


def policy_turns(result: "SolveResult", spec: str) -> PairTurns:
    """The whole turns from every score pair of the policy named `spec` (see the module docstring)."""
    check_chain(result)
    rules = result.rules
    spec = check_policy(spec, rules)
    name = spec.partition(":")[0]
    if name == "optimal":
        return optimal_turns(result)
    if name == CARD:
        return card_turns(result, parse_card(spec.partition(":")[2] or None, rules))
    vec = vector_policy(spec, rules)
    policy = policy_of(result)
    scores = policy.scores
    s = len(scores)
    block = VecPlay(rules, vec, scores, policy.mover_caps[:s])
    rows = np.repeat(np.arange(s), s).reshape(s, s)  # the mover's score only
    return pair_turns(block, rows, scores, rules.goal // UNIT)


@dataclass(frozen=True)
class Match:
    """The exact chances of policy `a` against policy `b` (two players), in each seat."""

    rules: str
    a: str
    b: str
    first: float  # a's chance when a moves first
    second: float  # a's chance when b moves first
    truncated: float  # the largest chance a turn's pass left out past its horizon (0 under `exact`)

    @property
    def chance(self) -> float:
        """a's chance over both seats (half of the games in each)."""
        return (self.first + self.second) / 2

    @property
    def edge(self) -> float:
        """a's chance over both seats minus one half: what b loses to a (as `card`'s cost against optimal)."""
        return self.chance - 0.5

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `cinqmille match --json`."""
        return {"rules": self.rules, "a": self.a, "b": self.b, "a_first": self.first, "a_second": self.second,
                "b_first": 1.0 - self.second, "b_second": 1.0 - self.first, "a_chance": self.chance,
                "edge_points": 100 * self.edge, "truncated": self.truncated, "method": METHOD}

    def sentences(self) -> list[str]:
        """The text of `cinqmille match`."""
        return [f"'{self.rules}', {self.a} against {self.b}, exact:",
                f"  {self.a} wins {100 * self.first:.3f}% moving first, {100 * self.second:.3f}% moving second: "
                f"{100 * self.chance:.3f}% over both seats,",
                f"  {100 * abs(self.edge):.3f} points {'above' if self.edge >= 0 else 'below'} even "
                f"({self.b}: {100 * (1 - self.second):.3f}% first, {100 * (1 - self.first):.3f}% second).",
                "Method: " + METHOD + "."]


def match_turns(result: "SolveResult", a: str, b: str) -> Match:
    """`a` against `b` on the solved `result` (its scores and, for `optimal`, its policy table)."""
    a, b = policy_name(a), policy_name(b)
    ta, tb = policy_turns(result, a), policy_turns(result, b)
    first, second = duel(result, ta, tb)
    return Match(result.rules.name, a, b, first, second, max(ta.lost, tb.lost))


def match(rules: Rules, a: str, b: str) -> Match:
    """The exact chances of policy `a` against policy `b` under `rules` (solving it first if it is not cached)."""
    check_chain_rules(rules)
    for spec, label in ((a, "A"), (b, "B")):
        check_policy(spec, rules, label)
    return match_turns(solve(rules, "win"), a, b)
