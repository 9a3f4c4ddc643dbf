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


def brute_force_win(rules: Rules, tol: float = 1e-13, max_sweeps: int = 20000) -> dict[tuple[int, int], float]:
    """W[(a, b)] in points for every pair of possible scores, by Gauss-Seidel value iteration.

    Every state (a, b, t, m) is a table entry. Under `reach`, turn totals far past
    the goal are folded back onto a few states (by parity under the rule of 50),
    where every allowed bank wins.
    """
    goal, opening, d = rules.goal, rules.opening, rules.dice
    step = 100 if rules.rule_of_50 else 50
    scores = [0] + [s for s in range(max(opening, 50), goal, 50)]
    outcomes = {n: roll_outcomes(rules, n) for n in range(1, d + 1)}
    top = {a: max(goal - a, rules.min_bank, opening if a == 0 else 0) + 100 for a in scores}
    v = {(a, b, t, m): 0.5 for a in scores for b in scores
         for t in range(0, top[a] + 1, 50) for m in range(1, d + 1)}

    def start(a: int, b: int) -> float:
        return v[(a, b, 0, d)]

    def fold(a: int, t: int) -> int:
        if rules.end == "exact" or t <= top[a]:
            return t
        return t - step * -(-(t - top[a]) // step)

    def bank_value(a: int, b: int, t: int, m: int, bust: float) -> float | None:
        if t <= 0:
            return None
        if m == d and not (rules.hot_dice == "optional" and rules.all_scoring_roll == "free"):
            return None
        if a == 0 and opening > 0:
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
        return 1.0 - start(b, new)

    def state_value(a: int, b: int, t: int, m: int) -> float:
        bust = 1.0 - start(b, a)
        roll = 0.0
        for prob, keeps in outcomes[m]:
            if not keeps:
                roll += prob * bust
                continue
            best = -1.0
            for points, nxt, win in keeps:
                if win:
                    value = 1.0
                elif rules.end == "exact" and a + t + points > goal:
                    value = bust
                else:
                    value = v[(a, b, fold(a, t + points), nxt)]
                best = max(best, value)
            roll += prob * best
        bank = bank_value(a, b, t, m, bust)
        return roll if bank is None else max(bank, roll)

    order = sorted(v, key=lambda s: (-(s[0] + s[1]), -s[2]))
    for _ in range(max_sweeps):
        change = 0.0
        for key in order:
            new = state_value(*key)
            change = max(change, abs(new - v[key]))
            v[key] = new
        if change < tol:
            break
    return {(a, b): start(a, b) for a in scores for b in scores}
