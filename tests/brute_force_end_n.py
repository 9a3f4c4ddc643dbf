"""An independent brute force for N players with a last round and take-over offers, written from RULES.md
sections 4, 5, 5b and 8.

It shares nothing with `cinqmille.solver`: only the dice outcomes (`compact_rows` of tests/brute_force_n.py,
from the package's `legal_keeps`) are reused. Where RULES.md is silent it reads the game as the project's
docs/rules.md states it (a player in his last turn banks only to take the victory; on a tie a take-over is
declined).

API: `brute_force_end_n(rules, players)` returns {(seat, scores): chances}: `seat` the mover's seat (0 opens each
round; always 0 without a last round), `scores` in points in playing order from the mover, the chances of every
player in that order (the mover first).

The model:

- The game before the last round: a turn state is (seat, scores from the mover, t, m). Its value is the vector
  of chances, the mover first. Gauss-Seidel value iteration over every state (largest score sums first, turn
  points decreasing) until the largest change is below `tol`.
- The mover maximises his own chance; ties within 1e-12: bank before roll, then the keep with more points, then
  more dice in hand.
- A bust passes the dice: the next seat moves with the scores rotated. A keep that wins (five 1s) wins at once.
- A bank of t (allowed: opening, min_bank, a full hand only if it may be banked; `exact`: never past the goal)
  that leaves the score below the goal passes the dice to the next player; under `take_over`, if he has opened
  (and, under `exact`, the taken points do not take him past the goal), he chooses between starting afresh
  (0 points, all dice) and rolling the m dice left from the t points (he must roll before he may bank); he
  takes over only when that is better for him by more than 1e-12.
- A bank that reaches the goal (exactly, under `exact`) wins at once, unless `last_round` gives the players of
  the later seats of the round one last turn each (RULES.md 5): each in turn plays against the best score
  (`reach`: he must pass it, an equal score does not; `exact`: he must reach the goal exactly, and then takes
  the victory from the earlier player). Passing it makes him the leader; the next one plays against his score
  (reach), offered his bank (take-over). A bust in the last round offers nothing. When the last seat has
  played, the leader wins.
- Under `reach` the mover may roll on past the goal (5b): turn points more than `far` points past the target
  are folded onto the last kept state (accurate when a turn from that far behind is hopeless).

Refused with ValueError: `rule_of_50`, `final_stretch`, `prediction`, `zero_turns` and the history rules.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from brute_force_n import compact_rows
from cinqmille.rules import Rules

TIE = 1e-12
Vector = tuple[float, ...]


def brute_force_end_n(rules: Rules, players: int = 3, far: int = 10000, tol: float = 1e-13,
                      max_sweeps: int = 5000) -> dict[tuple[int, tuple[int, ...]], Vector]:
    """Turn-start chances {(seat, scores from the mover): chances, mover first} (see the module docstring)."""
    refused = [name for name, on in (("rule_of_50", rules.rule_of_50), ("final_stretch", rules.final_stretch),
                                     ("prediction", rules.prediction), ("zero_turns", rules.zero_turns))
               if on] + list(rules.history_rules)
    if refused:
        raise ValueError(f"brute_force_end_n does not model {', '.join(refused)}")
    n, goal, opening, d = players, rules.goal, rules.opening, rules.dice
    exact = rules.end == "exact"
    kinds = n if rules.last_round else 1
    scores = [0] + list(range(max(opening, 50), goal, 50))
    rows = {m: compact_rows(rules, m) for m in range(1, d + 1)}

    def opened(score: int) -> bool:
        return score > 0 or opening == 0

    def may_bank(a: int, t: int, m: int) -> bool:
        if t <= 0 or (m == d and not rules.can_bank_after_full_hand) or (exact and a + t > goal):
            return False
        return t >= (opening if not opened(a) else rules.min_bank)

    def reaches(score: int) -> bool:
        return score == goal if exact else score >= goal

    def unit(i: int) -> Vector:
        return tuple(1.0 if j == i else 0.0 for j in range(n))

    # -- the last round, in absolute seats ----------------------------------------------------------
    @lru_cache(maxsize=None)
    def last_turn(j: int, leader: int, target: int, rest: tuple[int, ...]) -> dict[tuple[int, int], tuple[Vector, Vector]]:
        """Seat j's last turn (scores `rest` of seats j..n-1) against `target`: {(t, m): (value, roll)}."""
        b = rest[0]
        top = goal - b if exact else target - b + far
        bust = unit(leader) if j == n - 1 else last_start(j + 1, leader, target, rest[1:], None)
        table: dict[tuple[int, int], tuple[Vector, Vector]] = {(top, m): (bust, bust) for m in range(1, d + 1)}
        for t in [top] * (0 if exact else 200) + list(range(top, -1, -50)):  # the top layer (reach) leads to itself
            for m in range(1, d + 1):
                p_bust, outcome_rows = rows[m]
                total = [p_bust * x for x in bust]
                for prob, keeps in outcome_rows:
                    options = []
                    for points, nxt, wins in keeps:
                        if wins:
                            options.append(unit(j))
                        elif exact and b + t + points > goal:
                            options.append(bust)
                        else:
                            options.append(table[(min(t + points, top), nxt)][0])
                    best = max(o[j] for o in options)
                    chosen = next(o for o in options if o[j] >= best - TIE)
                    for i, x in enumerate(chosen):
                        total[i] += prob * x
                roll = tuple(total)
                value = roll
                new = b + t
                takes = new == goal if exact else new > target
                if may_bank(b, t, m) and takes:
                    if j == n - 1:
                        bank = unit(j)
                    else:
                        bank = last_start(j + 1, j, goal if exact else new, rest[1:], (t, m))
                    if bank[j] >= roll[j] - TIE:
                        value = bank
                table[(t, m)] = (value, roll)
        return table

    def last_start(j: int, leader: int, target: int, rest: tuple[int, ...], offer: tuple[int, int] | None) -> Vector:
        """The value of seat j's last turn from its start, offered the previous bank or not."""
        table = last_turn(j, leader, target, rest)
        b = rest[0]
        fresh = table[(0, d)][0]
        if offer is None or not rules.take_over or not opened(b):
            return fresh
        t, m = offer
        if exact and b + t > goal:
            return fresh
        top = goal - b if exact else target - b + far
        roll = table[(min(t, top), m)][1]
        return roll if roll[j] > fresh[j] + TIE else fresh

    # -- the game before it, in playing order from the mover ----------------------------------------
    def top_of(seat: int, a: int) -> int:
        if exact:
            return goal - a
        if rules.last_round and seat < n - 1:
            return goal - a + far
        return max(goal - a, rules.min_bank, opening if a == 0 else 0) + 100

    def rotate(w: Vector) -> Vector:
        """A vector of the next turn (next mover first) in this turn's order (this mover first)."""
        return (w[-1],) + w[:-1]

    def absolute(seat: int, x: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(x[(i - seat) % n] for i in range(n))

    states = sorted(((s, x) for s in range(kinds) for x in itertools.product(scores, repeat=n)),
                    key=lambda k: (-sum(k[1]), k))
    keys = {(s, x): [(t, m) for t in range(top_of(s, x[0]), -1, -50) for m in range(1, d + 1)
                     if t > 0 or m == d] for s, x in states}
    v = {k: {key: (1.0 / n,) * n for key in keys[k]} for k in states}

    def state(s: int, x: tuple[int, ...], t: int) -> int:
        return min(t, top_of(s, x[0]))

    def roll_vector(s: int, x: tuple[int, ...], t: int, m: int, bust: Vector) -> Vector:
        a, here = x[0], v[(s, x)]
        p_bust, outcome_rows = rows[m]
        total = [p_bust * y for y in bust]
        for prob, keeps in outcome_rows:
            options = []
            for points, nxt, wins in keeps:
                if wins:
                    options.append(unit(0))
                elif exact and a + t + points > goal:
                    options.append(bust)
                else:
                    options.append(here[(state(s, x, t + points), nxt)])
            best = max(o[0] for o in options)
            chosen = next(o for o in options if o[0] >= best - TIE)
            for i, y in enumerate(chosen):
                total[i] += prob * y
        return tuple(total)

    def bust_of(s: int, x: tuple[int, ...]) -> Vector:
        return rotate(v[((s + 1) % kinds, x[1:] + (x[0],))][(0, d)])

    def offered(s: int, x: tuple[int, ...], t: int, m: int) -> Vector:
        fresh = v[(s, x)][(0, d)]
        if not rules.take_over or not opened(x[0]) or (exact and x[0] + t > goal):
            return fresh
        roll = roll_vector(s, x, state(s, x, t), m, bust_of(s, x))
        return roll if roll[0] > fresh[0] + TIE else fresh

    def bank_vector(s: int, x: tuple[int, ...], t: int, m: int) -> Vector:
        new = x[0] + t
        if reaches(new):
            if not rules.last_round or s == n - 1:
                return unit(0)
            scores_abs = list(absolute(s, x))
            scores_abs[s] = new
            won = last_start(s + 1, s, goal if exact else new, tuple(scores_abs[s + 1:]), (t, m))
            return tuple(won[(s + i) % n] for i in range(n))
        nxt = ((s + 1) % kinds, x[1:] + (new,))
        return rotate(offered(nxt[0], nxt[1], t, m))

    for _ in range(max_sweeps):
        change = 0.0
        for s, x in states:
            bust = bust_of(s, x)
            here = v[(s, x)]
            for key in keys[(s, x)]:
                t, m = key
                value = roll_vector(s, x, t, m, bust)
                if may_bank(x[0], t, m):
                    bank = bank_vector(s, x, t, m)
                    if bank[0] >= value[0] - TIE:
                        value = bank
                change = max(change, max(abs(p - q) for p, q in zip(value, here[key])))
                here[key] = value
        if change < tol:
            return {k: v[k][(0, d)] for k in states}
    raise RuntimeError(f"no convergence after {max_sweeps} sweeps (largest change {change:.3e})")
