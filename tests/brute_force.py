"""An independent brute-force solver for tiny rulesets, written plainly from RULES.md.

It shares nothing with `cinqmille.solver` but the dice scoring (`legal_keeps`),
which has its own tests. Value iteration on the turn-start values W(a, b):
each sweep evaluates every turn by plain memoised recursion over (t, m), until
W stops changing.
"""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

from cinqmille.dice import legal_keeps
from cinqmille.rules import Rules


def roll_outcomes(rules: Rules, n: int) -> list[tuple[float, list[tuple[int, int, bool]]]]:
    """(probability, keeps as (points, dice in hand after, win)) of every ordered-roll multiset of n dice."""
    out = []
    for combo in itertools.combinations_with_replacement(range(1, 7), n):
        counts = tuple(combo.count(f) for f in range(1, 7))
        ways = math.factorial(n)
        for c in counts:
            ways //= math.factorial(c)
        keeps = [(k.points, (n - k.size) or rules.dice, k.win) for k in legal_keeps(rules, counts)]
        out.append((ways / 6**n, keeps))
    return out


def roll_expectation(rows, bust: float, after) -> float:
    """Expected value of a roll: a bust is worth `bust`; else the best keep, `after(points, dice)` or 1 for a win."""
    total = 0.0
    for prob, keeps in rows:
        if not keeps:
            total += prob * bust
            continue
        total += prob * max(1.0 if win else after(points, nxt) for points, nxt, win in keeps)
    return total


def brute_force_win(rules: Rules, tol: float = 1e-13, max_sweeps: int = 20000,
                    pending: tuple[int, ...] = ()) -> dict[tuple[int, int], float]:
    """W[(a, b)] in points for every pair of possible scores, by Gauss-Seidel value iteration.

    `pending`: starting scores below the opening (RULES.md section 8, `start`), held by a player who has not
    opened: his first bank must still reach the opening, and adds to them.
    """
    every = brute_force_counters(rules, tol, max_sweeps, pending)
    return {(a, b): value for (a, b, za, zb), value in every.items() if za == zb == 0}


def brute_force_counters(rules: Rules, tol: float = 1e-13, max_sweeps: int = 20000,
                         pending: tuple[int, ...] = ()) -> dict[tuple[int, int, int, int], float]:
    """W[(a, b, za, zb)]: the turn-start values with the scoreless-turn counters of `zero_turns`.

    Every state (a, b, za, zb, t, m) is a table entry: za and zb count the
    scoreless turns in a row of the mover and of the opponent under
    `zero_turns` (always 0 without it). Under `reach`, turn totals far past
    the goal are folded back onto a few states (by parity under the rule of
    50), where every allowed bank wins.
    """
    goal, opening, d = rules.goal, rules.opening, rules.dice
    step = 100 if rules.rule_of_50 else 50
    zero = rules.zero_turns
    count = zero.count if zero is not None else 1
    falls_by = zero.to if zero is not None and isinstance(zero.to, int) else None
    lowest = 50 if falls_by is not None else max(opening, 50)  # a fall by points can leave any score above 0
    scores = [0] + sorted(pending) + [s for s in range(lowest, goal, 50)]
    unopened = {0, *pending}
    outcomes = {n: roll_outcomes(rules, n) for n in range(1, d + 1)}
    top = {a: max(goal - a, rules.min_bank, opening if a in unopened else 0) + 100 for a in scores}
    zs = range(count) if zero is not None else range(1)
    v = {(a, b, za, zb, t, m): 0.5 for a in scores for b in scores for za in zs for zb in zs
         for t in range(0, top[a] + 1, 50) for m in range(1, d + 1)}

    def start(a: int, b: int, za: int = 0, zb: int = 0) -> float:
        return v[(a, b, za, zb, 0, d)]

    def scoreless(a: int, b: int, za: int, zb: int) -> float:
        """What a bust (or a fault, an overshoot, a wrong announcement) leaves the mover."""
        if zero is None:
            return 1.0 - start(b, a)
        if za + 1 < count:
            return 1.0 - start(b, a, zb, za + 1)
        fallen = 0 if falls_by is None else max(0, a + falls_by)
        return 1.0 - start(b, fallen, zb, 0)

    def fold(a: int, t: int) -> int:
        if rules.end == "exact" or t <= top[a]:
            return t
        return t - step * -(-(t - top[a]) // step)

    def bank_value(a: int, b: int, zb: int, t: int, m: int, bust: float) -> float | None:
        if t <= 0:
            return None
        if m == d and not (rules.hot_dice == "optional" and rules.all_scoring_roll == "free"):
            return None
        if a in unopened and opening > 0:
            if t < opening:
                return None
        elif t < rules.min_bank:
            return None
        new = a + t
        fs = rules.final_stretch
        if fs is not None:
            if a >= fs.start and new < goal:
                return bust
            if fs.cap and a < fs.start < new < goal:
                new = fs.start
        if rules.rule_of_50 and new % 100 == 50:
            return bust
        if rules.end == "exact" and new > goal:
            return None
        if new >= goal:
            return 1.0
        return 1.0 - start(b, new, zb, 0)

    two = outcomes.get(2, [])
    choices = sorted({max(p for p, _, _ in keeps) for _, keeps in two if keeps}) if rules.prediction else []

    def predict_value(a: int, b: int, za: int, zb: int, t: int, announced: int, bust: float) -> float:
        """Announce what the two dice will score: right, keep and double; wrong, bust."""
        total = 0.0
        for prob, keeps in two:
            if not keeps or max(p for p, _, _ in keeps) != announced:
                total += prob * bust
                continue
            best = -1.0
            for points, nxt, win in keeps:
                doubled = 2 * (t + points)
                if win:
                    value = 1.0
                elif rules.end == "exact" and a + doubled > goal:
                    value = bust
                else:
                    value = v[(a, b, za, zb, fold(a, doubled), nxt)]
                best = max(best, value)
            total += prob * best
        return total

    def state_value(a: int, b: int, za: int, zb: int, t: int, m: int) -> float:
        bust = scoreless(a, b, za, zb)

        def after(points: int, nxt: int) -> float:
            if rules.end == "exact" and a + t + points > goal:
                return bust
            return v[(a, b, za, zb, fold(a, t + points), nxt)]

        roll = roll_expectation(outcomes[m], bust, after)
        if m == 2:
            for choice in choices:
                roll = max(roll, predict_value(a, b, za, zb, t, choice, bust))
        bank = bank_value(a, b, zb, t, m, bust)
        return roll if bank is None else max(bank, roll)

    order = sorted(v, key=lambda s: (-(s[0] + s[1]), -s[4]))
    for _ in range(max_sweeps):
        change = 0.0
        for key in order:
            new = state_value(*key)
            change = max(change, abs(new - v[key]))
            v[key] = new
        if change < tol:
            break
    return {(a, b, za, zb): start(a, b, za, zb) for a in scores for b in scores for za in zs for zb in zs}


def brute_force_game(rules: Rules, far: int = 10000, tol: float = 1e-13,
                     max_sweeps: int = 20000) -> dict[tuple[int, int, int], float]:
    """Turn-start values W[(seat, a, b)] with `last_round` (two seats) and `take_over`, by value iteration.

    Written from RULES.md 4-5: a bank of t points with m dice in hand offers the
    opened opponent to start from (t, m) and roll; when seat 0 reaches the goal
    under `last_round`, seat 1 plays one last turn and wins by passing (reach)
    or reaching the goal exactly (exact). Seat 0 may roll on past the goal;
    states more than `far` points past it are folded onto the last one kept
    (accurate when a last turn from that far behind is hopeless). Needs a
    ruleset where a full hand may be banked.
    """
    goal, opening, d = rules.goal, rules.opening, rules.dice
    assert rules.can_bank_after_full_hand and not rules.rule_of_50
    seats = (0, 1) if rules.last_round else (0,)
    scores = [0] + [s for s in range(max(opening, 50), goal, 50)]
    outcomes = {n: roll_outcomes(rules, n) for n in range(1, d + 1)}

    def can_bank(score: int, t: int) -> bool:
        if t <= 0:
            return False
        return t >= opening if (score == 0 and opening > 0) else t >= rules.min_bank

    def opened(score: int) -> bool:
        return score > 0 or opening == 0

    def top(seat: int, a: int) -> int:
        base = max(goal - a, rules.min_bank, opening if a == 0 else 0)
        if rules.end == "exact":
            return goal - a
        return base + (far if rules.last_round and seat == 0 else 100)

    @lru_cache(maxsize=None)
    def last_turn(b: int, new: int, t: int, m: int, must_roll: bool) -> float:
        """Chance that seat 1 (score b) passes `new` (reach) or reaches the goal (exact) in this turn."""
        if rules.end == "reach" and b + t > new and can_bank(b, t) and not must_roll and m < d + 1:
            return 1.0
        best = 0.0
        if not must_roll and can_bank(b, t) and rules.end == "exact" and b + t == goal:
            return 1.0
        roll = 0.0
        for prob, keeps in outcomes[m]:
            options = [0.0]
            for points, nxt, win in keeps:
                if win:
                    options.append(1.0)
                elif rules.end == "exact" and b + t + points > goal:
                    options.append(0.0)
                else:
                    t2 = t + points
                    if rules.end == "reach" and b + t2 > new + 5000:
                        t2 = new + 5000 - b
                    options.append(last_turn(b, new, t2, nxt, False))
            roll += prob * max(options)
        return max(best, roll)

    def last_chance(b: int, new: int, t: int, m: int) -> float:
        fresh = last_turn(b, new, 0, d, True)
        if rules.take_over and opened(b):
            if rules.end == "exact" and b + t > goal:
                return fresh
            return max(fresh, last_turn(b, new, t, m, True))
        return fresh

    v = {(s, a, b, t, m): 0.5 for s in seats for a in scores for b in scores
         for t in range(0, top(s, a) + 1, 50) for m in range(1, d + 1)}

    def other(seat: int) -> int:
        return 1 - seat if rules.last_round else seat

    def roll_value(s: int, a: int, b: int, t: int, m: int) -> float:
        bust = 1.0 - v[(other(s), b, a, 0, d)]

        def after(points: int, nxt: int) -> float:
            if rules.end == "exact" and a + t + points > goal:
                return bust
            return v[(s, a, b, min(t + points, top(s, a)), nxt)]

        return roll_expectation(outcomes[m], bust, after)

    def start(s: int, a: int, b: int, offer: tuple[int, int] | None) -> float:
        fresh = v[(s, a, b, 0, d)]
        if offer is None or not rules.take_over or not opened(a):
            return fresh
        t, m = offer
        if rules.end == "exact" and a + t > goal:
            return fresh
        t = min(t, top(s, a))
        return max(fresh, roll_value(s, a, b, t, m))

    def bank_value(s: int, a: int, b: int, t: int, m: int) -> float | None:
        if not can_bank(a, t):
            return None
        new = a + t
        fs = rules.final_stretch
        if fs is not None:
            if a >= fs.start and new < goal:
                return 1.0 - start(other(s), b, a, None)
            if fs.cap and a < fs.start < new < goal:
                new = fs.start
        if rules.end == "exact" and new > goal:
            return None
        if new >= goal:
            if rules.last_round and s == 0:
                return 1.0 - last_chance(b, new, t, m)
            return 1.0
        return 1.0 - start(other(s), b, new, (t, m))

    def state_value(s: int, a: int, b: int, t: int, m: int) -> float:
        roll = roll_value(s, a, b, t, m)
        bank = bank_value(s, a, b, t, m)
        return roll if bank is None else max(bank, roll)

    order = sorted(v, key=lambda k: (-(k[1] + k[2]), -k[3], k[0]))
    for _ in range(max_sweeps):
        change = 0.0
        for key in order:
            new = state_value(*key)
            change = max(change, abs(new - v[key]))
            v[key] = new
        if change < tol:
            break
    return {(s, a, b): v[(s, a, b, 0, d)] for s in seats for a in scores for b in scores}


def brute_force_average(rules: Rules, span: int = 4, tol: float = 1e-11, max_sweeps: int = 2000
                        ) -> tuple[float, list[float]]:
    """(gain, h): the most points per turn over a long game, and each scoreless-count's relative value (h[0] = 0).

    Relative value iteration, written from RULES.md section 9 ("The long-run objective"):
    a bank of t points is worth t and sends the count to 0; a scoreless turn from
    count z sends it to z + 1, or, when that makes `zero_turns.count`, costs the
    penalty and sends it to 0. Each turn is plain memoised recursion over (t, m).
    The player has opened (`min_bank`); as the solver's `expected` turn, totals past
    `span` times the goal are banked at once and an instant win counts its points
    (the goal) on top of the turn.
    """
    d = rules.dice
    zero = rules.zero_turns
    count = zero.count if zero is not None else 1
    penalty = -int(zero.to) if zero is not None else 0
    outcomes = {n: roll_outcomes(rules, n) for n in range(1, d + 1)}
    full_bank = rules.hot_dice == "optional" and rules.all_scoring_roll == "free"
    least = max(rules.min_bank, 50)
    top = span * rules.goal

    def turn(bust: float) -> float:
        @lru_cache(maxsize=None)
        def value(t: int, m: int) -> float:
            may_bank = t >= least and (m != d or full_bank)
            if t > top:
                if may_bank:
                    return float(t)
                return (1.0 - outcomes_bust[m]) * t + outcomes_bust[m] * bust
            roll = 0.0
            for prob, keeps in outcomes[m]:
                if not keeps:
                    roll += prob * bust
                    continue
                roll += prob * max(t + points if win else value(t + points, nxt) for points, nxt, win in keeps)
            return max(float(t), roll) if may_bank else roll

        return value(0, d)

    outcomes_bust = {n: sum(p for p, keeps in outcomes[n] if not keeps) for n in outcomes}
    h = [0.0] * count
    gain = 0.0
    for _ in range(max_sweeps):
        busts = [h[z + 1] if z + 1 < count else h[0] - penalty for z in range(count)]
        starts = [turn(b) for b in busts]
        gain = starts[0] - h[0]
        new = [s - starts[0] for s in starts]
        change = max(abs(x - y) for x, y in zip(new, h))
        h = new
        if change < tol:
            break
    return gain, h
