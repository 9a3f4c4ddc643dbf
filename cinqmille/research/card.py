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
(`CardRows`, a `solver.policy.TurnPlay`), one row per score of the mover and
gap bucket, so that the forward pass of the turn (`policy.turn_distributions`)
gives the outcome of each distinct turn once; the optimal player's turns come
from the solved policy table (`distribution.optimal_turns`); the game between
the two is the chain over score pairs of `distribution.GameChain`, solved
exactly level by level. Nothing is simulated.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import CinqmilleError
from ..policies.heuristics import guarded_bank
from ..rules import Rules
from ..rules.bank import UNIT, BankRules
from ..solver.choice import block_graph
from ..solver.kernel import best_keeps
from ..work import Progress
from .distribution import PairTurns, check_chain, duel, optimal_turns, pair_turns

if TYPE_CHECKING:
    from ..solver import SolveResult

KEEPS = ("most", "few")
#: What a keep after which the card banks is worth more than any other (in points): it is taken first.
_BANKS = 1e9
#: Bank lines the search tries (points) and the steps of the other parameters.
LINE_RANGE = range(0, 2050, 50)
STEPS = (-4 * UNIT, -2 * UNIT, -UNIT, UNIT, 2 * UNIT, 4 * UNIT)


@dataclass(frozen=True)
class Card:
    """The parameters of a strategy card (points; see the module docstring). `statement` is written from them."""

    lines: tuple[int, ...]  # bank line with 1 .. D dice in hand
    gap: int = 0  # the lines move when the scores differ by more than this (0 with behind = ahead = 0: never)
    behind: int = 0  # added to every line when behind by more than `gap`
    ahead: int = 0  # taken from every line when ahead by more than `gap`
    keep: str = "most"  # "most": the most points; "few": points + `die` per die left in hand
    die: int = 0  # what a die left in hand is worth when choosing what to set aside ("few")
    near: int = 0  # the end game: when the opponent needs this many points or fewer to win ...
    chase: int = 0  # ... every line goes up by this much (0: no end-game rule)
    name: str = field(default="card", compare=False)

    @classmethod
    def threshold(cls, rules: Rules, points: int) -> "Card":
        """`threshold:T`: bank at T points whatever the dice and the scores; set aside the most points."""
        return cls((points,) * rules.dice, name=f"threshold:{points}")

    def check(self, rules: Rules) -> "Card":
        """The card, or a `CinqmilleError` saying which parameter does not fit `rules`."""
        if len(self.lines) != rules.dice:
            raise CinqmilleError(f"a card needs one bank line per number of dice in hand ({rules.dice}), "
                                 f"got {len(self.lines)}")
        for what, x in [("line", v) for v in self.lines] + [("gap", self.gap), ("behind", self.behind),
                                                            ("ahead", self.ahead), ("die", self.die),
                                                            ("near", self.near), ("chase", self.chase)]:
            if x < 0 or x % UNIT:
                raise CinqmilleError(f"a card's {what} must be a non-negative multiple of {UNIT}, got {x}")
        if self.keep not in KEEPS:
            raise CinqmilleError(f"a card's keep is one of {', '.join(KEEPS)}, got {self.keep!r}")
        return self

    @property
    def shifts(self) -> tuple[int, ...]:
        """How much the lines move (points), by bucket: level, behind by more than `gap`, ahead by more than
        `gap`; the same three again with the end-game rise `chase` (the opponent within `near` of the goal)."""
        return tuple(g + end * self.chase for end in (0, 1) for g in (0, self.behind, -self.ahead))

    def bucket(self, a: Any, b: Any, goal: int) -> np.ndarray:
        """Index into `shifts` of the mover at `a` against `b`, the goal `goal` (units of 50)."""
        diff = np.asarray(a) - np.asarray(b)
        gap = np.where(diff < -self.gap_units, 1, np.where(diff > self.gap_units, 2, 0))
        end = (self.chase > 0) & (goal - np.asarray(b) <= self.near // UNIT)
        return np.asarray(gap + 3 * end)

    @property
    def gap_units(self) -> int:
        return self.gap // UNIT

    def statement(self, rules: Rules) -> list[str]:
        """The card in words, one sentence a line, written from its parameters."""
        d = rules.dice
        words = ", ".join(f"{v} with {m}" for m, v in enumerate(self.lines, 1))
        same = len(set(self.lines)) == 1
        out = [f"Bank as soon as the turn holds {self.lines[0]} points or more." if same else
               f"Bank as soon as the turn holds at least this many points, by dice left in hand: {words}."]
        if self.behind or self.ahead:
            moves = []
            if self.behind:
                moves.append(f"add {self.behind} when behind by more than {self.gap}")
            if self.ahead:
                moves.append(f"take off {self.ahead} when ahead by more than {self.gap}")
            out.append("Move every line: " + "; ".join(moves) + ".")
        if self.chase >= rules.goal:
            out.append(f"When the opponent needs {self.near} or less to win, bank only a turn that wins.")
        elif self.chase:
            out.append(f"When the opponent needs {self.near} or less to win, add {self.chase} to every line.")
        if self.keep == "most":
            out.append("Set aside the most points each roll.")
        else:
            out.append(f"Set aside every die when they all score (a full hand: roll all {d} again, or bank); else, "
                       f"if a way of setting aside lets you bank, the most points that do, and bank; else what gives "
                       f"the most points plus {self.die} per die left to roll.")
        rest = ["Always take an instant win and bank a turn that wins"]
        if rules.opening:
            rest.append(f"before opening, roll on until the turn holds {rules.opening}")
        if rules.min_bank:
            rest.append(f"never bank less than {rules.min_bank}")
        out.append("; ".join(rest) + ".")
        return out

    def as_dict(self) -> dict[str, Any]:
        """The parameters as JSON."""
        return {"name": self.name, "lines": {str(m): v for m, v in enumerate(self.lines, 1)}, "gap": self.gap,
                "behind": self.behind, "ahead": self.ahead, "keep": self.keep, "die": self.die, "near": self.near,
                "chase": self.chase}


#: Where the search starts (the card found for `standard`, its last line repeated for more dice).
START = Card((150, 250, 550, 850, 2250), gap=1500, behind=150, ahead=50, keep="few", die=100, near=300, chase=5000)


#: The policy name of a card (`parse_card`): `simulate`, `play` and `match` seat it.
CARD = "card"


def fitted(card: Card, rules: Rules) -> Card:
    """`card` for `rules`: its last line repeated (or lines cut) to one per die, the end-game rise at most the
    goal (the search's start, `search`)."""
    d = rules.dice
    return replace(card, lines=(card.lines + card.lines[-1:] * d)[:d], chase=min(card.chase, rules.goal))


def parse_card(arg: str | None, rules: Rules) -> Card:
    """The card of the policy name ``card[:ARG]``: no ARG, the card found for `standard` (`START`, fitted to
    `rules`); ``L1/L2/.../LD``, bank lines by dice in hand, the most points set aside; ``L1/.../LD:few:DIE``,
    the most points plus DIE per die left in hand. A `CinqmilleError` in one line otherwise."""
    from ..parsing import whole

    if arg is None:
        return fitted(START, rules).check(rules)
    head, *rest = arg.split(":")
    usage = f"policy 'card:{arg[:40]}': expected card, card:L1/L2/.../L{rules.dice} or card:L1/.../L{rules.dice}:few:DIE"
    if len(rest) not in (0, 2) or (rest and rest[0] != "few"):
        raise CinqmilleError(usage)
    try:
        lines = tuple(whole(x, "line") for x in head.split("/"))
        die = whole(rest[1], "die") if rest else 0
    except CinqmilleError:
        raise CinqmilleError(usage) from None
    return Card(lines, keep="few" if rest else "most", die=die, name=f"card:{arg}").check(rules)


class CardRows:
    """A card's decisions as a block of rows (a `TurnPlay`): row ``B i + k`` is the mover at ``scores[i]`` in
    bucket `k` of the B buckets of `Card.shifts`."""

    def __init__(self, rules: Rules, card: Card, scores: np.ndarray, caps: np.ndarray):
        self.rules, self.card = rules, card.check(rules)
        self.dice = rules.dice
        self.exact = rules.banking.exact
        self.tie = 0.0  # the card's own ranking of keeps: exact ties, the first in keep order
        self.banking = BankRules.of(rules)
        self.buckets = len(card.shifts)
        self.a = np.repeat(np.asarray(scores, dtype=np.int64), self.buckets)
        self.shift = np.tile(np.array(card.shifts, dtype=np.int64) // UNIT, len(scores))
        self.cap = np.repeat(np.asarray(caps, dtype=np.int64), self.buckets)
        self.lines = np.array(card.lines, dtype=np.int64) // UNIT

    def row(self, i: Any, a: Any, b: Any) -> np.ndarray:
        """The row of the mover at position `i` of the scores, with banked `a` against `b` (units)."""
        return np.asarray(self.buckets * np.asarray(i) + self.card.bucket(a, b, self.rules.goal // UNIT))

    def move(self, r: Any, t: Any, m: Any) -> np.ndarray:
        """0 bank, 1 roll: bank at the line of the dice in hand (moved by the gap), within the guards."""
        r, t, m = np.broadcast_arrays(np.asarray(r), np.asarray(t), np.asarray(m))
        wants = t >= self.lines[m - 1] + self.shift[r]
        return np.asarray(np.where(guarded_bank(self.banking, self.a[r], t, m, wants), 0, 1))

    def taken(self, r: Any, t: Any, doubled: bool = False) -> np.ndarray:
        """The card's keep in every roll class from turn units `t` of rows `r` (the `TurnPlay` question): the
        best of its ranking (`keep_values`), on a tie the kernel's (`kernel.best_keeps`: the most points, then
        the most dice in hand after). The card never announces (`doubled`)."""
        graph = block_graph(self)
        rows = np.broadcast_to(np.asarray(r), np.shape(t))
        return best_keeps(graph, self.keep_values(rows, t, graph.keep_units, graph.keep_next, graph.keep_win,
                                                  doubled))

    def keep_values(self, r: Any, t: Any, units: Any, left: Any, win: Any, doubled: Any = False) -> np.ndarray:
        """How the card ranks the keeps of a roll (`taken` takes the best)."""
        r, t = np.asarray(r)[..., None], np.asarray(t)[..., None]
        units, left = np.asarray(units), np.asarray(left)
        t2 = t + units
        if np.any(doubled):
            t2 = np.where(np.asarray(doubled)[..., None], 2 * t2, t2)
        t2, left2 = np.broadcast_arrays(t2, left)
        if self.card.keep == "most":
            value = units + np.zeros(t2.shape)
        else:
            banks = self.move(np.broadcast_to(r, t2.shape), t2, left2) == 0
            value = np.where(banks, _BANKS + units, units + (self.card.die // UNIT) * left2)
            value = np.where(left2 == self.dice, 2 * _BANKS + units, value)  # a full hand: every die scored
        over = self.banking.overshoots(np.broadcast_to(self.a[r], t2.shape), t2)
        value = np.where(over, -_BANKS, value)
        return np.asarray(np.where(win, 2 * _BANKS, value))


def card_turns(result: "SolveResult", card: Card) -> PairTurns:
    """The card's turns from every score pair (one forward pass over its distinct rows)."""
    check_chain(result)
    rules = result.rules
    policy = result.policy
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
    import time

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
    import time

    from ..solver import solve
    from ..solver.budget import estimate
    from ..work import working

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
