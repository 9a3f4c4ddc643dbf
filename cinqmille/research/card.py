"""A strategy card: a rule of thumb a person can apply at the table, and its exact cost against the optimal player.

A card (`Card`) is a few numbers, and its statement (`Card.statement`) is
written from them, so that the rule a reader follows is the rule evaluated:

- *bank lines*: bank as soon as the turn holds at least ``lines[m - 1]``
  points with `m` dice in hand (after setting aside);
- *the score gap*: behind by more than `gap` points, every line goes up by
  `behind`; ahead by more than `gap`, down by `ahead`;
- *what to set aside* (`keep`): ``"most"``, the most points (the keep of
  `threshold:T`); ``"few"``, a full hand first (every die scores: it is
  the most points and every die back in hand), then the keeps after which the
  card banks, the most points first, then the others, each worth its points
  plus `die` points per die left in hand;
- always: take an instant win, bank a turn that wins, never bank a turn the
  rules forbid (the opening, `min_bank`, a full hand that must be rolled) or
  that scores nothing (`policies.heuristics.guarded_bank`, the guards of the
  heuristics); never announce (`prediction`).

`threshold:T` is the card with every line at T, no gap and ``keep = "most"``
(`Card.threshold`).

How a card is evaluated (`evaluate`): its decisions are a block of rows
(`CardRows`, a `table.turn_eval.TurnPlay`), one row per score of the mover and
gap bucket, so that the forward pass of the turn (`policy.turn_distributions`)
gives the outcome of each distinct turn once; the optimal player's turns come
from the solved policy table (`distribution.optimal_turns`); the game between
the two is the chain over score pairs of `distribution.GameChain`, solved
exactly level by level. Nothing is simulated.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..table.policy import policy_of
from ..policies.card import START, Card, CardRows, fitted
from ..rules import Rules
from ..rules.bank import UNIT
from ..work import Progress
from .distribution import PairTurns, check_chain, duel, optimal_turns, pair_turns
from ..solver import solve
from ..solver.budget import estimate
from ..work import working
import time

if TYPE_CHECKING:
    from ..solver import SolveResult

#: Bank lines the search tries (points) and the steps of the other parameters.
LINE_RANGE = range(0, 2050, 50)
STEPS = (-4 * UNIT, -2 * UNIT, -UNIT, UNIT, 2 * UNIT, 4 * UNIT)


def card_turns(result: "SolveResult", card: Card) -> PairTurns:
    """The card's turns from every score pair (one forward pass over its distinct rows)."""
    check_chain(result)
    rules = result.rules
    policy = policy_of(result)
    scores = policy.scores
    s = len(scores)
    block = CardRows(rules, card, scores, policy.mover_caps[:s])
    i = np.repeat(np.arange(s), s).reshape(s, s)
    rows = block.row(i, scores[:, None], scores[None, :])
    return pair_turns(block, rows, scores, rules.goal // UNIT)


@dataclass(frozen=True)
class Evaluation:
    """The exact chances of a policy against the optimal player (two players, both seats)."""

    name: str
    first: float  # its chance to win when it moves first
    second: float  # when the optimal player moves first

    @property
    def chance(self) -> float:
        """Its chance to win, half of the games in each seat."""
        return (self.first + self.second) / 2

    @property
    def cost(self) -> float:
        """What it loses against optimal: the optimal player's chance, both seats, minus one half."""
        return 0.5 - self.chance

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "first": self.first, "second": self.second, "chance": self.chance,
                "cost_points": 100 * self.cost}


def evaluate_turns(result: "SolveResult", turns: PairTurns, name: str) -> Evaluation:
    """The exact chance that a player whose turns are `turns` wins against the optimal player, in each seat."""
    return Evaluation(name, *duel(result, turns, optimal_turns(result)))


def evaluate(result: "SolveResult", card: Card) -> Evaluation:
    """The exact chance that `card` wins against the optimal player (module docstring)."""
    return evaluate_turns(result, card_turns(result, card), card.name)


@dataclass(frozen=True)
class CardSearch:
    """What the search found: the best card of the family, the best fixed threshold, how many were tried."""

    rules: Rules
    card: Card
    card_eval: Evaluation
    threshold: Card
    threshold_eval: Evaluation
    optimal_first: float  # the solved chance of the first player (both optimal)
    tried: int
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `cinqmille card --json`."""
        return {"rules": self.rules.name, "card": self.card.as_dict(), "statement": self.card.statement(self.rules),
                "evaluation": self.card_eval.as_dict(),
                "threshold": {**self.threshold.as_dict(), "evaluation": self.threshold_eval.as_dict()},
                "optimal_first_player": self.optimal_first,
                "method": METHOD, "candidates": self.tried}


METHOD = ("exact: the card's turns by a forward pass over the turn's states, the optimal player's from the solved "
          "policy table, the game by the chain over score pairs solved level by level (no simulation)")


#: About how many cards a search evaluates (133 for a goal of 1000, about as many for 5000): its work, reported.
SEARCH_EVALUATIONS = 130
#: The share of a search's progress that the best fixed threshold takes (about 15 of its evaluations).
THRESHOLD_SHARE = 0.12


def best_threshold(result: "SolveResult", tried: dict[Card, Evaluation],
                   progress: Progress | None = None) -> Card:
    """The fixed threshold that does best against optimal (lines of `LINE_RANGE`, a walk up from 100)."""
    rules = result.rules
    best: Card | None = None
    for k, points in enumerate(LINE_RANGE):
        if points < 100:
            continue
        if progress is not None:
            progress(THRESHOLD_SHARE * min(1.0, k / 20))
        card = Card.threshold(rules, points)
        tried[card] = evaluate(result, card)
        if best is not None and tried[card].chance < tried[best].chance - 0.02:
            break  # far past the best: the chance falls from here on
        if best is None or tried[card].chance > tried[best].chance:
            best = card
    assert best is not None
    return best


def search(result: "SolveResult", start: Card | None = None, rounds: int = 3,
           progress: Progress | None = None) -> CardSearch:
    """The best card of the family (coordinate descent from `start`, steps of 50 points), scored by its exact
    chance against the optimal player (both seats), and the best fixed threshold by the same evaluation
    (`progress`: told the fraction done, each parameter of each round a step)."""
    t0 = time.perf_counter()
    rules = result.rules
    d = rules.dice
    tried: dict[Card, Evaluation] = {}
    thr = best_threshold(result, tried, progress)

    def score(card: Card) -> float:
        key = replace(card, name="card")
        if key not in tried:
            tried[key] = evaluate(result, key)
        return tried[key].chance

    card = fitted(replace(start or START, name="card"), rules)
    steps = STEPS
    params = [f"line{m}" for m in range(d)] + ["die", "gap", "behind", "ahead", "near", "chase"]
    for round_ in range(rounds):
        moved = False
        for k, what in enumerate(params):
            if progress is not None:
                progress(THRESHOLD_SHARE + (1 - THRESHOLD_SHARE) * (round_ + k / len(params)) / rounds)
            while True:
                here = score(card)
                best_next = None
                for step in steps:
                    cand = _step(card, what, step, rules.goal)
                    if cand is not None and score(cand) > here + 1e-12:
                        if best_next is None or score(cand) > score(best_next):
                            best_next = cand
                if best_next is None:
                    break
                card, moved = best_next, True
        if not moved:
            break
    card = _simplify(card, score)
    return CardSearch(rules, card, tried[card], thr, tried[thr], float(result.first_player_win), len(tried),
                      time.perf_counter() - t0)


def _simplify(card: Card, score: Any) -> Card:
    """`card` without the rules that change nothing (a gap never reached, an end game that never starts): each
    is dropped when the exact chance stays the same to 1e-12, so that the statement says only what matters."""
    drops: list[dict[str, Any]] = [{"behind": 0, "ahead": 0, "gap": 0}, {"behind": 0}, {"ahead": 0},
                                   {"near": 0, "chase": 0}]
    for drop in drops:
        cand = replace(card, **drop)
        if cand != card and score(cand) >= score(card) - 1e-12:
            card = cand
    return card


def _step(card: Card, what: str, step: int, goal: int) -> Card | None:
    """`card` with one parameter moved by `step` points, or None when that leaves the family (a chase past
    the goal is a chase of the goal: bank only a turn that wins)."""
    if what.startswith("line"):
        m = int(what[4:])
        lines = list(card.lines)
        lines[m] += step
        if lines[m] < 0:
            return None
        return replace(card, lines=tuple(lines))
    value = getattr(card, what) + step
    if value < 0 or (what == "chase" and value > goal):
        return None
    return replace(card, **{what: value})


def card_report(rules: Rules, card: Card | None = None) -> CardSearch:
    """What `cinqmille card` answers: the best card of the family for `rules` (or `card`, evaluated as given),
    its exact cost against the optimal player, and the best fixed threshold's by the same evaluation."""
    result = solve(rules, "win")
    check_chain(result)
    states = estimate(rules, "win").states  # one evaluation plays about the solve's turn states
    if card is None:
        with working(f"Searching the strategy card of '{rules.name}' (exact games against the optimal player)",
                     size=states * SEARCH_EVALUATIONS) as update:
            update(0.0)
            found = search(result, progress=update)
            update(1.0)
        return found
    t0 = time.perf_counter()
    card = replace(card.check(rules), name="card")
    tried: dict[Card, Evaluation] = {}
    with working(f"Evaluating the card and the fixed thresholds of '{rules.name}'",
                 size=states * len(LINE_RANGE) // 2) as update:
        update(0.0)
        thr = best_threshold(result, tried, lambda f: update(f / THRESHOLD_SHARE))
        mine = evaluate(result, card)
        update(1.0)
    return CardSearch(rules, card, mine, thr, tried[thr], float(result.first_player_win), len(tried) + 1,
                      time.perf_counter() - t0)


def card_moves(rules: Rules, card: Card, me: int, opp: int, top: int) -> np.ndarray:
    """The card's move (True: bank) with ``0 .. top`` turn points (rows, units) and 1 .. D dice in hand
    (columns), for the mover at `me` against `opp` (points): the bank-or-roll picture of the card."""
    block = CardRows(rules, card, np.array([me // UNIT]), np.array([rules.goal // UNIT]))
    r = block.row(0, me // UNIT, opp // UNIT)
    t = np.arange(top + 1)[:, None]
    return np.asarray(block.move(np.full((top + 1, rules.dice), r), t, np.arange(1, rules.dice + 1)[None, :]) == 0)
