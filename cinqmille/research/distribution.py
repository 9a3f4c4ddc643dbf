"""Distributions under the solved policies: the points one turn banks, the turns a race or a game lasts.

- `turn_points`: the exact distribution of the points that the rest of the
  current turn banks, played by the solved `win` policy from a position (the
  forward pass of `table.turn_dist.turn_distribution`, which reads the decisions
  that the `expected` figure of `advise` reads, so its mean is that figure).
- `expected_points`: the same under the `expected` policy (the most points of
  one turn alone); its mean is ``E`` of `solve --objective expected`.
- `race_length`: the number of turns one player alone needs to reach the goal
  from a score, playing the `race` policy (`solver.objectives.race_rows`): a
  Markov chain over his scores, each turn's outcome the distribution of the
  points it banks; its mean is computed exactly from the chain (scores only go
  up: a backward recursion), which is ``R(s)`` of `solve --objective race`.
- `game_length`: the number of turns a game of two to four players lasts when
  all play the `win` policy, from a position: the exact Markov chain over the
  score tuples (the mover's, then the others' in playing order), each turn's
  outcome from one forward pass over every tuple's turn at once
  (`policy.turn_distributions`); a turn banking 0 keeps the scores and passes
  the dice, a bank that reaches the goal or an instant win ends the game. Its
  seats' chances to win are the solved ones (to the tail).

The chains are followed turn by turn until the chance that the count is still
running is below `TAIL`; `tail` reports it. A turn's own distribution leaves
out at most `policy.TRUNCATION` (turns past its horizon), dropped from the
chains.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, replace
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..table.locate import spot
from ..table.policy import policy_of
from ..errors import CinqmilleError
from ..table.position import Position, PositionError
from ..rules import Rules
from ..rules.bank import UNIT
from ..solver.n_player import MAX_PLAYERS
from ..table.locate import locate_rows
from ..table.rows import TurnRows
from ..table.turn_dist import TurnPoints, turn_distribution, turn_distributions
from ..table.turn_eval import TurnPlay
from ..words import number_word
from ..work import Progress
from ..solver import solve
from ..table.objectives import expected_rows
from ..table.position import check_score
from ..rules.bank import BankRules
from ..solver.grid import ScoreGrid
from ..table.objectives import expected_rows, race_rows
from ..solver.objectives import race_turns
from ..solver.turns import counted
from ..solver.budget import estimate
from ..work import working
from ..rules import BankRules

if TYPE_CHECKING:
    from ..solver import SolveResult

#: The chains stop once the chance that the count goes on is below this (reported as `tail`).
TAIL = 1e-9
#: Turns a chain follows at most (a game of optimal players that lasts longer is a sign of a bug).
MAX_TURNS = 100_000


def turn_points(result: "SolveResult", position: Position) -> TurnPoints:
    """The distribution of the points banked by the rest of the turn from `position` under the `win` policy."""
    rules = result.rules
    if position.offer is not None:
        raise PositionError("`offer`: give the position after the choice (a take-over is not a turn start)")
    position = replace(position, dice=position.hand(rules)).validate(rules)
    position = position.as_last_turn()
    block, r = spot(result, position)
    t = position.turn // UNIT
    return turn_distribution(block, r, position.me // UNIT, t, position.hand(rules))


def expected_points(rules: Rules, position: Position) -> TurnPoints:
    """The same distribution under the `expected` policy (the most points of one turn alone, `expected_rows`)."""
    position = replace(position, dice=position.hand(rules)).validate(rules)
    opened = int(position.me > 0 or not rules.opening)
    block = expected_rows(rules, solve(rules, "expected").values)
    t = position.turn // UNIT
    return turn_distribution(block, opened, opened, t, position.hand(rules),
                             gain=lambda a, ts: np.asarray(ts) * UNIT)


@dataclass(frozen=True)
class TurnCount:
    """The distribution of a number of turns: ``chances[n - 1]`` is the chance that it is exactly `n`."""

    what: str  # what is counted, in words
    method: str  # how it was computed, in words
    chances: tuple[float, ...]
    tail: float  # chance that the count is larger than len(chances) (below `TAIL`)
    mean: float
    seat_wins: tuple[float, ...] | None = None  # a game: each player's chance to win, the one to move first

    @property
    def first_player_win(self) -> float | None:
        """A game: the chance that the player to move at the start wins."""
        return None if self.seat_wins is None else self.seat_wins[0]

    @property
    def median(self) -> int:
        """The smallest count whose cumulative chance reaches one half."""
        return int(np.searchsorted(np.cumsum(self.chances), 0.5) + 1)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form: `chances` keyed by the count."""
        out: dict[str, Any] = {"what": self.what, "method": self.method, "mean": self.mean, "median": self.median,
                               "tail": self.tail, "chances": {str(n + 1): p for n, p in enumerate(self.chances)}}
        if self.seat_wins is not None:
            out["first_player_win"] = self.first_player_win
            out["seat_wins"] = list(self.seat_wins)
        return out


#: A turn played forward over its states costs about as much as this many of a solve's turn states (measured on
#: 'standard': the game's chain 9.3 s, the solve 1.5 s), so that the work is reported as a solve of that time is.
FORWARD_COST = 6
#: The rows of one forward pass of `_moves` (the progress of a game's chain is told after each).
MOVES_CHUNK = 4096


def _moves(block: TurnRows, rows: np.ndarray, scores: np.ndarray, rules: Rules,
           progress: Progress | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every outcome of each row's turn from its start, the rows in passes of `MOVES_CHUNK`
    (`turn_distributions`; `progress` told the fraction done after each): (the row's index, the mover's new
    score, its chance), grouped by row; a new score at or past the goal (reach) or an instant win is the goal,
    `rules.goal // UNIT` (the end)."""
    if len(rows) > MOVES_CHUNK:
        parts = []
        for lo in range(0, len(rows), MOVES_CHUNK):
            src, new, prob = _moves(block, rows[lo:lo + MOVES_CHUNK], scores[lo:lo + MOVES_CHUNK], rules)
            parts.append((src + lo, new, prob))
            if progress is not None:
                progress(min(1.0, (lo + MOVES_CHUNK) / len(rows)))
        src, new, prob = (np.concatenate([p[i] for p in parts]) for i in range(3))
        return src, new, prob
    goal = rules.goal // UNIT
    dist = turn_distributions(block, rows, scores)
    k, g = np.nonzero(dist.banked > 0)
    won = dist.wins.sum(axis=1)
    w = np.flatnonzero(won > 0)
    src = np.concatenate([k, w])
    order = np.argsort(src, kind="stable")
    new = np.concatenate([np.minimum(scores[k] + g, goal), np.full(len(w), goal)])
    prob = np.concatenate([dist.banked[k, g], won[w]])
    return src[order], new[order].astype(np.int64), prob[order]


def race_length(rules: Rules, score: int = 0, tail: float = TAIL, policy: str = "race") -> TurnCount:
    """Turns one player alone needs from `score` (points) to the goal with the `race` policy (module docstring),
    or with the `expected` one (`policy`: the most points of each turn, `expected_rows`; kcddice's model)."""
    check_score(rules, score, "me")
    grid = ScoreGrid.of(rules)
    scores = grid.scores.astype(np.int64)
    goal = grid.goal
    if policy == "race":
        remaining, _ = race_turns(rules)
        block: TurnRows = race_rows(rules, remaining)
        rows = np.arange(len(scores))
    elif policy == "expected":
        block = expected_rows(rules, solve(rules, "expected").values)
        rows = np.asarray(BankRules.of(rules).opened(scores), dtype=np.int64)  # row 1: opened, 0: not yet
    else:
        raise CinqmilleError(f"race_length: policy race or expected, got {policy!r}")
    src, new, prob = _moves(block, rows, scores, rules)
    index = np.full(goal + 1, -1, dtype=np.int64)
    index[scores] = np.arange(len(scores))
    index[goal] = len(scores)  # the end
    dst = index[new]
    bounds = np.searchsorted(src, np.arange(len(scores) + 1))
    # the mean, exactly: scores only go up, R(s) = (1 + sum_{s' > s} P(s -> s') R(s')) / (1 - P(s -> s))
    chain_r = np.zeros(len(scores) + 1)
    for i in range(len(scores) - 1, -1, -1):
        j, p = dst[bounds[i]:bounds[i + 1]], prob[bounds[i]:bounds[i + 1]]
        stay = p[j == i].sum()
        chain_r[i] = (1.0 + float(p[j != i] @ chain_r[j[j != i]])) / (1.0 - stay)
    start = int(index[score // UNIT])
    chances, left, _ = _follow(src, dst, prob, len(scores), start, 1, tail)
    return TurnCount(f"turns to reach {rules.goal} alone from {score}, playing the {policy} policy",
                     "exact Markov chain over the player's scores, each turn's points from the pass over the "
                     f"turn under the {policy} policy; the mean from the chain's equations",
                     tuple(chances), left, float(chain_r[start]))


def _follow(src: np.ndarray, dst: np.ndarray, prob: np.ndarray, end: int, start: int, players: int,
            tail: float, progress: Progress | None = None) -> tuple[list[float], float, tuple[float, ...]]:
    """A chain from state `start` turn by turn, transitions `src -> dst` with `prob` (`end`: the game is over),
    until the chance that it goes on is below `tail`: (the chance that it ends at each turn, that chance left,
    each seat's chance to end it, the one who moves at the start first, `players` seats in turn). `progress`
    is told how far the chance left has come down to `tail` (on a log scale)."""
    mass = np.zeros(end + 1)
    mass[start] = 1.0
    out: list[float] = []
    seats = np.zeros(players)
    for n in range(MAX_TURNS):
        new = np.asarray(np.bincount(dst, weights=mass[src] * prob, minlength=end + 1), dtype=float)
        out.append(float(new[end]))
        seats[n % players] += new[end]
        new[end] = 0.0
        mass = new
        left = mass.sum()
        if left < tail:
            break
        if progress is not None and n % 16 == 0:
            progress(min(1.0, float(np.log(max(left, tail)) / np.log(tail))))
    return out, float(mass.sum()), tuple(float(x) for x in seats)


#: The most players whose game length is computed (`n_player.MAX_PLAYERS`: the tables solved exactly).
GAME_PLAYERS = MAX_PLAYERS


def game_length(result: "SolveResult", me: int = 0, opp: int | Sequence[int] = 0, tail: float = TAIL,
                progress: Progress | None = None) -> TurnCount:
    """Turns a game lasts from `me` (the player to move) against `opp` (one score, or the opponents' scores in
    playing order: a game of `result.players`), every player playing the `win` policy of `result`.

    The exact chain over the score tuples in playing order from the mover: a
    turn from ``(a, b, ..., z)`` banking ``g`` leads to ``(b, ..., z, a + g)``
    (the next player moves), a bank that reaches the goal or an instant win
    ends the game. Each tuple's turn outcome comes from one forward pass over
    every tuple at once (`turn_distributions`; two players: the `PolicyTable`,
    more too). `progress` is told the fraction done: the passes, then the chain.
    """
    update = progress or (lambda fraction: None)
    rules = result.rules
    n = result.players
    opps = (opp,) if isinstance(opp, int) else tuple(opp)
    if rules.last_round or counted(rules) or rules.take_over or n > GAME_PLAYERS:
        raise CinqmilleError(f"the game's length is computed for two to {GAME_PLAYERS} players without "
                             f"last_round, take_over or a counted zero_turns; '{rules.name}' has one of them")
    if len(opps) != n - 1:
        raise CinqmilleError(f"a game of {n} players needs {n - 1} opponent score{'s' if n > 2 else ''}, "
                             f"got {len(opps)}")
    for x in opps:
        Position(me, x).validate(rules)
    scores = result.grid.scores.astype(np.int64)
    s, goal = len(scores), rules.goal // UNIT
    states = np.arange(s ** n)
    ind = np.unravel_index(states, (s,) * n)  # the mover's, then the opponents' in playing order
    block: TurnRows = policy_of(result)
    rows = locate_rows(policy_of(result), *(scores[i] for i in ind))
    index = np.full(goal + 1, -1, dtype=np.int64)
    index[scores] = np.arange(s)
    k, new, prob = _moves(block, rows, scores[ind[0]], rules, lambda f: update(0.9 * f))
    rest = states[k] % (s ** (n - 1))
    dst = np.where(new >= goal, s ** n, rest * s + index[np.minimum(new, goal - 1)])
    start = int(np.ravel_multi_index(tuple(int(index[x // UNIT]) for x in (me,) + opps), (s,) * n))
    chances, left, seats = _follow(k, dst, prob, s ** n, start, n, tail, lambda f: update(0.9 + 0.1 * f))
    mean = float(np.arange(1, len(chances) + 1) @ np.array(chances))
    against = ", ".join(str(x) for x in opps)
    return TurnCount(f"turns of a {number_word(n)}-player game from {me} against {against} (a round is {number_word(n)} turns), "
                     f"{'both' if n == 2 else 'all'} playing the win policy",
                     "exact Markov chain over the score " + ("pairs" if n == 2 else "tuples") + ", each turn's "
                     "points from one forward pass over the turns of every " + ("pair" if n == 2 else "tuple")
                     + " under the win policy; the mean over the turns shown",
                     tuple(chances), left, mean, seats)


@dataclass(frozen=True)
class DistReport:
    """What `cinqmille dist` answers: the turn's points from a position, and (with turns) the turn counts."""

    rules: Rules
    position: Position
    objective: str  # the policy that plays the turn: "win" or "expected"
    points: TurnPoints
    method: str
    counts: tuple[TurnCount, ...] = ()
    notes: tuple[str, ...] = ()  # what was not computed, and why; the solver's assumptions

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of `cinqmille dist --json` (points as strings of points, as JSON keys must be; `opp`
        every opponent's score in playing order at three players or more, as `advise --json` gives it)."""
        pos = self.position
        out: dict[str, Any] = {
            "rules": self.rules.name, "objective": self.objective,
            "position": {"me": pos.me, "opp": pos.opp if pos.others is None else list(pos.others),
                         "players": 2 if pos.others is None else len(pos.others) + 1, "turn": pos.turn,
                         "dice": pos.hand(self.rules)},
            "points": {str(x): p for x, p in sorted(self.points.points.items())},
            "instant_wins": {str(t): p for t, p in sorted(self.points.wins.items())},
            "mean": self.points.mean, "bust": self.points.bust, "instant_win": self.points.win,
            "truncated": self.points.truncated, "method": self.method}
        if self.counts:
            out["turns"] = [c.as_dict() for c in self.counts]
        out["notes"] = list(self.notes)
        return out


POINTS_METHOD = ("exact forward pass over the turn's states under the solved policy, carrying the chance of "
                 "reaching each state (its mean is advise's expected)")


def dist_report(rules: Rules, position: Position, objective: str = "win", turns: bool = False,
                game_pairs: int | None = None) -> DistReport:
    """The distribution of the turn's points from `position` under the `objective`'s policy; with `turns`, the
    turns of a race alone from `position.me` and of a game from (me, opp), or from me against `position.others`
    (a game of their number plus one; `game_pairs`: the most score tuples for which the game is computed;
    None: always)."""
    notes: list[str] = []
    players = 2 if position.others is None else len(position.others) + 1
    if players > GAME_PLAYERS:
        raise PositionError(f"`opp`: the turn is solved exactly for two to {GAME_PLAYERS} players, "
                            f"got {players}")
    if objective == "win":
        result = solve(rules, "win", players=players)
        points = turn_points(result, position)
        if not result.exact:
            notes.append("Note: not exact for this ruleset; the solver assumes: " + "; ".join(result.assumptions))
    elif objective == "expected":
        points = expected_points(rules, position)
    else:
        raise CinqmilleError(f"objective: expected win or expected, got {objective!r}")
    if points.truncated > 0:
        notes.append(f"Turns that pass the horizon are left out: {points.truncated:.1e} of the chance.")
    counts: list[TurnCount] = []
    if turns:
        result = solve(rules, "win", players=players)
        counts.append(race_length(rules, position.me))
        tuples = len(result.grid.scores) ** players
        what = "pairs" if players == 2 else "tuples"
        if game_pairs is not None and tuples > game_pairs:
            notes.append(f"The game's length is not computed for {tuples:,} score {what} (at most {game_pairs:,}).")
        else:
            # every tuple's turn played forward: about the solve's turn states
            with working(f"Following the turns of a game of '{rules.name}' over {tuples:,} score {what}",
                         size=FORWARD_COST * estimate(rules, "win", players).states) as update:
                update(0.0)
                try:
                    counts.append(game_length(result, position.me,
                                              position.opp if position.others is None else position.others,
                                              progress=update))
                except CinqmilleError as exc:
                    notes.append(f"The game's length is not computed: {exc}.")
                update(1.0)
    return DistReport(rules, position, objective, points, POINTS_METHOD, tuple(counts), tuple(notes))


# -- a policy against another: the exact chances of the two-player game -----------------------------------
def check_chain_rules(rules: Rules) -> None:
    """Raise unless the game of `rules` is a chain over score pairs for two players: no last round, take-over
    or counted scoreless turns (before any solve)."""
    if rules.last_round or counted(rules) or rules.take_over:
        raise CinqmilleError(f"the game as a chain over score pairs needs two players without last_round, take_over "
                             f"or a counted zero_turns; '{rules.name}' has one of them")


def check_chain(result: "SolveResult") -> None:
    """Raise unless the game is a chain over score pairs: two players, no last round, take-over or counted
    scoreless turns (the exact evaluation of a policy needs it)."""
    check_chain_rules(result.rules)
    if result.players != 2 or result.seats != 1:
        raise CinqmilleError(f"the game as a chain over score pairs needs two players without last_round, take_over "
                             f"or a counted zero_turns; '{result.rules.name}' has one of them")


@dataclass(frozen=True, eq=False)
class PairTurns:
    """One player's whole turns from every score pair: ``gains[i, j, g]`` is the chance that the mover with
    score ``scores[i]`` against ``scores[j]`` adds `g` units (0: a bust or nothing scored; the last slot: the
    goal or more), ``win[i, j]`` the chance of an instant win."""

    gains: np.ndarray  # (S, S, top + 1)
    win: np.ndarray  # (S, S)
    lost: float  # the largest chance left out past a turn's horizon


def pair_turns(block: TurnPlay, rows: np.ndarray, scores: np.ndarray, top: int) -> PairTurns:
    """The turns of `block` from every score pair: `rows[i, j]` is its row for the mover at ``scores[i]``
    against ``scores[j]`` (one forward pass over the distinct rows, `policy.turn_distributions`)."""
    s = len(scores)
    ia = np.repeat(np.arange(s), s)
    uniq, inverse = np.unique(np.stack([np.asarray(rows).reshape(-1), scores[ia]]), axis=1, return_inverse=True)
    dist = turn_distributions(block, uniq[0], uniq[1])
    banked = dist.banked
    gains = np.zeros((len(uniq[0]), top + 1))
    width = min(banked.shape[1], top)
    gains[:, :width] = banked[:, :width]
    gains[:, top] += banked[:, top:].sum(axis=1)  # the goal or more
    inverse = inverse.reshape(-1)
    return PairTurns(gains[inverse].reshape(s, s, top + 1), dist.wins.sum(axis=1)[inverse].reshape(s, s),
                     float(dist.lost.max(initial=0.0)))


_PAIR_TURNS: "weakref.WeakKeyDictionary[Any, PairTurns]" = weakref.WeakKeyDictionary()


def optimal_turns(result: "SolveResult") -> PairTurns:
    """The solved policy's turns from every score pair (cached on the result's policy table)."""
    policy = policy_of(result)
    found = _PAIR_TURNS.get(policy)
    if found is None:
        scores = policy.scores
        s = len(scores)
        ia, ib = np.divmod(np.arange(s * s), s)
        rows = locate_rows(policy, scores[ia], scores[ib]).reshape(s, s)
        found = pair_turns(policy.complete(), rows, scores, result.rules.goal // UNIT)
        _PAIR_TURNS[policy] = found
    return found


@dataclass(frozen=True, eq=False)
class GameChain:
    """The two-player game as a chain over score pairs: a state is (who moves, his score, the other's).

    `turns[k]` are the turns of the `k`-th kind of player; after a turn of
    kind ``k`` the other player, of kind ``(k + 1) % K``, moves. With one kind
    both play the same policy (the solved game); with two, a policy against
    another. A turn that adds ``g > 0`` raises the mover's score, a turn that
    adds nothing passes the dice at the same scores, a bank that reaches the
    goal or an instant win ends the game (`BankRules.reaches`).
    """

    rules: Rules
    scores: np.ndarray  # (S,) units
    index: np.ndarray  # score units -> position in `scores` (-1: no such score)
    turns: tuple[PairTurns, ...]
    after: np.ndarray  # (S, top + 1) position of the mover's new score after adding g units; S: the game ends

    @classmethod
    def of(cls, rules: Rules, scores: np.ndarray, turns: tuple[PairTurns, ...]) -> "GameChain":
        goal = rules.goal // UNIT
        index = np.full(goal + 1, -1, dtype=np.int64)
        index[scores] = np.arange(len(scores))
        new = scores[:, None] + np.arange(goal + 1)[None, :]
        ends = BankRules.of(rules).reaches(new) | (new > goal)
        after = np.where(ends, len(scores), index[np.minimum(new, goal)])
        for turn in turns:
            bad = (turn.gains > 0) & (after[:, None, :] < 0)
            if bad.any():
                i, _, g = (int(x[0]) for x in np.nonzero(bad))
                raise CinqmilleError(f"a turn from {scores[i] * UNIT} adds {g * UNIT} points to a score that "
                                     f"cannot occur")
        return cls(rules, scores, index, turns, after)

    def win_chances(self) -> np.ndarray:
        """``V[k, i, j]``: the chance that the mover of kind `k`, at ``scores[i]`` against ``scores[j]``, wins.

        Exact, level by level in decreasing sum of the scores (a turn that
        scores moves to a later level): ``V[k, i, j] = win + sum_{g > 0}
        gains[g] (1 - V[k', j, i + g]) + gains[0] (1 - V[k', j, i])``, with ``1
        - V = 1`` where the mover reaches the goal. The last term links the
        state with its partner ``(k', j, i)`` in the same level, a 2-cycle
        solved in closed form: ``x = c + p (1 - y)``, ``y = c' + q (1 - x)``
        give ``x = (c + p (1 - c' - q)) / (1 - p q)``.
        """
        scores, after = self.scores, self.after
        s, kinds = len(scores), len(self.turns)
        v = np.zeros((kinds, s, s + 1))  # column s: the other has reached the goal, the mover has lost
        c = np.zeros((kinds, s, s))
        total = scores[:, None] + scores[None, :]
        order = np.argsort(-total, axis=None, kind="stable")
        levels = np.unique(total.reshape(-1)[order], return_index=True)[1]
        bounds = np.sort(np.append(levels, s * s))
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            i, j = np.divmod(order[lo:hi], s)
            for k, turn in enumerate(self.turns):
                other = v[(k + 1) % kinds, j[:, None], after[i, 1:]]  # (n, top): the other to move after g > 0
                c[k, i, j] = turn.win[i, j] + (turn.gains[i, j, 1:] * (1.0 - other)).sum(axis=1)
            for k, turn in enumerate(self.turns):
                k2 = (k + 1) % kinds
                p, q = turn.gains[i, j, 0], self.turns[k2].gains[j, i, 0]
                v[k, i, j] = (c[k, i, j] + p * (1.0 - c[k2, j, i] - q)) / (1.0 - p * q)
        return v[:, :, :s]


def duel(result: "SolveResult", first: PairTurns, second: PairTurns) -> tuple[float, float]:
    """The exact chances of the player whose turns are `first` against the one whose turns are `second`, from
    0 to 0: (when he moves first, when the other does), by the chain over score pairs (`GameChain`)."""
    check_chain(result)
    rules = result.rules
    if any(rules.starts(2)):
        raise CinqmilleError("the evaluation starts the game at 0 to 0; this ruleset gives starting scores")
    policy = policy_of(result)
    v = GameChain.of(rules, policy.scores, (first, second)).win_chances()
    zero = int(policy.index[0])
    return float(v[0, zero, zero]), float(1.0 - v[1, zero, zero])
