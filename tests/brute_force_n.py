"""An independent brute force for N players (N = 2 or 3), written plainly from RULES.md sections 1-5 and 8.

It shares nothing with `cinqmille.solver`: only the dice scoring (`legal_keeps`,
through `roll_outcomes` of tests/brute_force.py) comes from the package. It is
meant to check a future three-player solver on tiny rulesets.

API: `brute_force_n(rules, players=3)` returns {scores: chances}, the scores
tuple in points in playing order from the mover, the chances in the same
order; `brute_force_n_states` returns every turn state's vector as
{scores: {(t, m): chances}}; `first_player_chances(rules, players)` is the
vector at (0, ..., 0).

The model:

- A turn start is the banked scores in playing order from the player to move,
  `(a, b, c)` for three players (`(a, b)` for two). Its value is the vector of
  each seat's chance to win, in that order (the mover first).
- A turn state is `(scores..., t, m)`: `t` turn points, `m` dice in hand
  (`m = D` with `t > 0` is a full hand). The turn start is `(scores..., 0, D)`.
- A bank of `t` by the mover is allowed when `t > 0`, `t >= opening` while he
  has not opened (score 0 and `opening > 0`), else `t >= min_bank`, and with a
  full hand only if `rules.can_bank_after_full_hand`. It moves to
  `(b, c, a + t)`: the next player moves first. A bank that reaches the goal
  wins at once for the mover: there is no last round.
- A bust moves to `(b, c, a)`. A keep with `win` True (five 1s) wins at once.
- `end = "exact"`: a keep that takes `a + t` past the goal is a bust (an
  overshoot; a winning keep still wins), so `a + t` never exceeds the goal and
  a bank wins only by landing on it exactly.
- `final_stretch`: a mover at or above `start` who banks short of the goal
  makes the turn void (it counts as a bust); with `cap`, a bank from below
  `start` to above it, short of the goal, leaves exactly `start`.
- `rule_of_50`: a bank (after the cap) that leaves a score ending in 50 is a
  fault: it counts as a bust.
- The mover maximises his own chance at every decision. Options whose chance
  for him is within 1e-12 of the best one are ties, settled in a fixed order so
  that the other seats' values are well defined: bank before roll; among the
  keeps of a roll, more points first, then more dice in hand after the keep
  (after a full hand, all D dice). A winning keep counts the points that
  `legal_keeps` gives it (the goal). Precisely: the option taken is the first,
  in that order, whose chance is at least the best chance minus 1e-12.
- Under `reach`, turn points far past the goal are folded back onto a few
  states (by steps of 100 under the rule of 50, to keep the parity), where every
  allowed bank wins; this loses nothing.
- Every turn state of every score tuple holds a value vector. Gauss-Seidel
  value iteration (score tuples by decreasing sum, turn points decreasing)
  sweeps them all until the largest change of any component is below `tol`.

Refused with ValueError: `last_round`, `take_over`, `prediction`, `zero_turns`
and the rules that need a score history (crosses, ties, struck scores).

With three players, "each mover maximises his own chance" can fail to have a
stationary solution (RULES.md section 8): the iteration then does not settle
and `brute_force_n` raises RuntimeError after `max_sweeps` sweeps. It also
settles too slowly where a score can leave the game only by a rare roll (under
`exact` with `min_bank` 100, a player 50 short of the goal can win only by five
1s): pick such rulesets with `five_ones = "multiples"`. Then a score tuple from
which nobody can ever win (every player so stuck) keeps its starting value,
1/N for every seat.
"""

from __future__ import annotations

import itertools

from brute_force import roll_outcomes
from cinqmille.rules import Rules

#: Options whose chance for the mover is this close to the best are ties.
TIE = 1e-12

Vector = tuple[float, ...]
Scores = tuple[int, ...]


def check_supported(rules: Rules, players: int) -> None:
    """Raise ValueError for a player count or a rule this brute force does not model."""
    if not isinstance(players, int) or players < 2:
        raise ValueError(f"players must be an integer >= 2, not {players!r}")
    refused = [name for name, on in (("last_round", rules.last_round), ("take_over", rules.take_over),
                                     ("prediction", rules.prediction),
                                     ("zero_turns", rules.zero_turns is not None)) if on]
    refused += list(rules.history_rules)
    if refused:
        raise ValueError(f"brute_force_n does not model {', '.join(dict.fromkeys(refused))}: "
                         "only reach/exact end, opening, min_bank, final_stretch and rule_of_50")
    if rules.goal % 50 or rules.opening % 50 or rules.min_bank % 50:
        raise ValueError("goal, opening and min_bank must be multiples of 50")


def compact_rows(rules: Rules, m: int) -> tuple[float, list[tuple[float, tuple[tuple[int, int, bool], ...]]]]:
    """(bust probability, [(probability, keeps)]) of a roll of m dice.

    The keeps of a row are the distinct (points, dice in hand after, win),
    sorted by the tie order: more points first, then more dice in hand. Rows
    with the same keeps are merged, their probabilities added.
    """
    bust = 0.0
    merged: dict[tuple[tuple[int, int, bool], ...], float] = {}
    for prob, keeps in roll_outcomes(rules, m):
        if not keeps:
            bust += prob
            continue
        key = tuple(sorted(set(keeps), key=lambda k: (-k[0], -k[1], not k[2])))
        merged[key] = merged.get(key, 0.0) + prob
    return bust, [(prob, keeps) for keeps, prob in merged.items()]


def brute_force_n(rules: Rules, players: int = 3, tol: float = 1e-13,
                  max_sweeps: int = 5000) -> dict[Scores, Vector]:
    """Turn-start values for `players` players: {scores from the mover: chances to win, mover first}.

    Scores are in points: 0 and every multiple of 50 from max(opening, 50) to
    goal - 50. Raises ValueError for rules it does not model and RuntimeError
    if the largest change is still not below `tol` after `max_sweeps` sweeps.
    """
    table = brute_force_n_states(rules, players, tol, max_sweeps)
    return {s: turn[(0, rules.dice)] for s, turn in table.items()}


def brute_force_n_states(rules: Rules, players: int = 3, tol: float = 1e-13,
                         max_sweeps: int = 5000) -> dict[Scores, dict[tuple[int, int], Vector]]:
    """Every state's value vector: {scores from the mover: {(turn points, dice in hand): chances, mover first}}.

    Turn points under `reach` are folded as the module docstring says; the turn
    start is the key (0, D). Same errors as `brute_force_n`.
    """
    check_supported(rules, players)
    goal, opening, d, exact = rules.goal, rules.opening, rules.dice, rules.end == "exact"
    fs = rules.final_stretch
    step = 100 if rules.rule_of_50 else 50
    scores = [0] + list(range(max(opening, 50), goal, 50))
    rows = {m: compact_rows(rules, m) for m in range(1, d + 1)}
    win: Vector = (1.0,) + (0.0,) * (players - 1)

    def top(a: int) -> int:
        """The largest turn points kept for a mover at `a`: past it, every allowed bank wins."""
        if exact:
            return goal - a
        return max(goal - a, rules.min_bank, opening if a == 0 else 0) + 100

    def fold(a: int, t: int) -> int:
        """Turn points past `top(a)` folded back by whole steps (parity kept under the rule of 50)."""
        if exact or t <= top(a):
            return t
        return t - step * -(-(t - top(a)) // step)

    def may_bank(a: int, t: int, m: int) -> bool:
        if t <= 0:
            return False
        if m == d and not rules.can_bank_after_full_hand:
            return False
        if a == 0 and opening > 0:
            return t >= opening
        return t >= rules.min_bank

    def rotate(w: Vector) -> Vector:
        """A vector of the next turn (next mover first) in this turn's order (this mover first)."""
        return (w[-1],) + w[:-1]

    tuples = sorted(itertools.product(scores, repeat=players), key=lambda s: (-sum(s), s))
    turn_keys = {a: [(t, m) for t in range(top(a), -1, -50)
                     for m in range(1, d + 1) if t > 0 or m == d] for a in scores}
    even: Vector = (1.0 / players,) * players
    v: dict[Scores, dict[tuple[int, int], Vector]] = {s: {k: even for k in turn_keys[s[0]]} for s in tuples}

    def bank_vector(s: Scores, t: int, bust: Vector) -> Vector:
        a, rest = s[0], s[1:]
        new = a + t
        if fs is not None and new < goal:
            if a >= fs.start:
                return bust  # void: a final-stretch player stopped short
            if fs.cap and a < fs.start < new:
                new = fs.start
        if rules.rule_of_50 and new % 100 == 50:
            return bust  # fault
        if new >= goal:
            return win  # under exact, new > goal never happens: such turn points are overshoots
        return rotate(v[rest + (new,)][(0, d)])

    def state_vector(s: Scores, t: int, m: int, bust: Vector) -> Vector:
        a, here = s[0], v[s]
        p_bust, outcome_rows = rows[m]
        total = [p_bust * x for x in bust]
        for prob, keeps in outcome_rows:
            options = []
            for points, nxt, wins in keeps:
                if wins:
                    options.append(win)
                elif exact and a + t + points > goal:
                    options.append(bust)
                else:
                    options.append(here[(fold(a, t + points), nxt)])
            best = max(o[0] for o in options)
            chosen = next(o for o in options if o[0] >= best - TIE)
            for i, x in enumerate(chosen):
                total[i] += prob * x
        roll = tuple(total)
        if may_bank(a, t, m):
            bank = bank_vector(s, t, bust)
            if bank[0] >= roll[0] - TIE:
                return bank
        return roll

    for _ in range(max_sweeps):
        change = 0.0
        for s in tuples:
            bust = rotate(v[s[1:] + (s[0],)][(0, d)])
            here = v[s]
            for key in turn_keys[s[0]]:
                new = state_vector(s, key[0], key[1], bust)
                change = max(change, max(abs(x - y) for x, y in zip(new, here[key])))
                here[key] = new
        if change < tol:
            return v
    raise RuntimeError(f"no convergence after {max_sweeps} sweeps (largest change {change:.3e}): the movers' "
                       "choices may chase each other (RULES.md section 8), or some score can leave the game "
                       "only by a rare roll (under exact, a score that no allowed bank can take to the goal)")


def first_player_chances(rules: Rules, players: int = 3, **kwargs) -> Vector:
    """Each seat's chance to win from the start of the game, the first player first."""
    return brute_force_n(rules, players, **kwargs)[(0,) * players]
