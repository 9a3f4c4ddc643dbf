"""An independent brute force of the history rules (RULES.md section 5), two players, over full score sheets.

Written from RULES.md and the referee's readings (docs/engine.md items 4, 9, 10,
11), sharing nothing with `cinqmille.solver`: the dice come from `roll_outcomes`
(`tests/brute_force.py`, itself on `cinqmille.dice.legal_keeps`). A state is
both players' whole sheets (the totals not struck out, oldest first) and their
counters (crosses, or scoreless turns in a row under `zero_turns` to
``"previous"``): the truth, which the history model only bounds. Gauss-Seidel
value iteration on the turn starts, each turn by plain memoised recursion over
(t, m). Rulesets: `reach` or `exact`, an opening, `min_bank`, optional hot dice;
no last round, take-over, prediction, rule of 50 or final stretch.
"""

from __future__ import annotations

import itertools
from functools import lru_cache

from cinqmille.rules import Rules

from brute_force import roll_outcomes

Sheet = tuple[tuple[int, ...], int]  # (standing totals in points, counter)


def _classes(rules: Rules, n: int) -> list[tuple[float, tuple[tuple[int, int, bool], ...]]]:
    """The rolls of n dice merged by their set of keeps: (probability, keeps (points, dice after, win))."""
    merged: dict[tuple[tuple[int, int, bool], ...], float] = {}
    for prob, keeps in roll_outcomes(rules, n):
        if keeps:  # a roll with no keep is a bust
            key = tuple(sorted(set(keeps)))
            merged[key] = merged.get(key, 0.0) + prob
    return [(prob, key) for key, prob in merged.items()]


def _strike_latest(standing: tuple[int, ...]) -> tuple[int, ...]:
    return standing[:-1]  # a strike on an empty sheet does nothing


def scoreless(rules: Rules, sheet: Sheet, all_dice: bool) -> Sheet:
    """A player's sheet after a scoreless turn: the bust-on-all-dice strike, then crosses, then the count."""
    standing, counter = sheet
    if rules.bust_strikes_last_score and all_dice:
        standing = _strike_latest(standing)
    limit = 0
    if rules.crosses:
        limit = 2
    elif rules.zero_turns is not None and rules.zero_turns.to == "previous":
        limit = rules.zero_turns.count
    if limit:
        if counter + 1 >= limit:
            standing, counter = _strike_latest(standing), 0
        else:
            counter += 1
    return standing, counter


def tied(rules: Rules, other: Sheet, new: int) -> Sheet:
    """The other player's sheet after a bank to `new` total (knock-back or deadly ties)."""
    standing, counter = other
    if rules.ties == "knock_back" and standing and standing[-1] == new:
        return standing[:-1], counter
    if rules.ties == "deadly" and new in standing:
        return tuple(s for s in standing if s != new), counter
    return other


def every_sheet(rules: Rules) -> list[Sheet]:
    """Every sheet a player can hold: increasing totals of opened scores below the goal, and every counter."""
    low = max(rules.opening, 50)
    opened = list(range(low, rules.goal, 50))
    limit = 2 if rules.crosses else (rules.zero_turns.count if rules.zero_turns is not None else 1)
    out = []
    for size in range(len(opened) + 1):
        for standing in itertools.combinations(opened, size):
            out.extend((standing, c) for c in range(limit))
    return out


def brute_force_history(rules: Rules, tol: float = 1e-13, max_sweeps: int = 5000) -> dict[tuple[Sheet, Sheet], float]:
    """W[(mover's sheet, other's sheet)]: the mover's chance at every turn start, both playing to win."""
    goal, d = rules.goal, rules.dice
    classes = {n: _classes(rules, n) for n in range(1, d + 1)}
    bust = {n: 1.0 - sum(p for p, _ in classes[n]) for n in range(1, d + 1)}
    sheets = every_sheet(rules)
    w = {(x, y): 0.5 for x in sheets for y in sheets}

    def turn(x: Sheet, y: Sheet) -> float:
        a = x[0][-1] if x[0] else 0
        opened = a > 0 or rules.opening == 0
        lose = 1.0 - w[(y, scoreless(rules, x, False))]
        lose_all = 1.0 - w[(y, scoreless(rules, x, True))]

        def bank(t: int) -> float | None:
            if t <= 0 or t < rules.min_bank or (not opened and t < rules.opening):
                return None
            new = a + t
            if new >= goal if rules.end == "reach" else new == goal:
                return 1.0
            if new > goal:
                return None
            return 1.0 - w[(tied(rules, y, new), ((*x[0], new), 0))]

        @lru_cache(maxsize=None)
        def value(t: int, m: int) -> float:
            banked = bank(t)
            if banked == 1.0:
                return 1.0
            total = bust[m] * (lose_all if m == d else lose)
            for prob, keeps in classes[m]:
                best = -1.0
                for points, after, win in keeps:
                    if win:
                        v = 1.0
                    elif rules.end == "exact" and a + t + points > goal:
                        v = lose  # an overshoot: a scoreless turn, not a bust on all the dice
                    else:
                        v = value(t + points, after)
                    best = max(best, v)
                total += prob * best
            return total if banked is None else max(banked, total)

        return value(0, d)

    for _ in range(max_sweeps):
        change = 0.0
        for key in w:
            new_value = turn(*key)
            change = max(change, abs(new_value - w[key]))
            w[key] = new_value
        if change < tol:
            return w
    raise RuntimeError("the brute force did not settle")
