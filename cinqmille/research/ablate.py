"""One rule changed at a time: `cinqmille ablate --rules BASE`.

Each change (`changes`) sets one key of the base ruleset to another value
(the opening, the straights, the multiples, hot dice, the end, the last round,
the least bank, five 1s) and leaves every other key as the base has it, so
that a row measures that rule alone. Every figure of a row is exact:

- *first player*: the solved chance of the first of two optimal players
  (`solve(rules, "win")`), and its change from the base in points;
- *expected turn*: the most points of one turn alone (`solve(rules,
  "expected")`, an opened player);
- *race*: the fewest expected turns for one player alone to reach the goal
  (`solve(rules, "race")`);
- *game length*: the turns of a game between two optimal players from 0 to 0,
  from the game's exact Markov chain (`distribution.game_length`, what
  `dist --turns` computes): mean, median and quantiles; not computed under a
  last round (the chain has no seat of the round), said in the row's note;
- *fair start*: the second player's head start that brings the chances
  closest to even, and the first player's chance then (`fair.fair_start`).

A change the rules refuse for this base (an opening at or above the goal)
is left out and said in `skipped`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import CinqmilleError
from ..rules import Rules, load_rules, rules_from_dict, to_dict
from ..work import Progress
from .distribution import TurnCount, game_length
from ..fair import fair_start
from ..solver import solve

#: The quantiles of a game's length that a row gives (with the median).
QUANTILES = (0.1, 0.25, 0.75, 0.9)
#: The most score pairs whose game length is computed (`dist --turns`'s own limit is the solve's budget).
GAME_PAIRS = 250_000


def quantile(count: TurnCount, q: float) -> int:
    """The smallest number of turns whose cumulative chance reaches `q`."""
    return int(np.searchsorted(np.cumsum(count.chances), q) + 1)


def _toggle(a: Any, b: Any) -> Callable[[Rules, str], Any]:
    return lambda rules, key: b if getattr(rules, key) == a else a


#: The keys changed, each with the value it takes for a base (the other of two values, or a rule switched on
#: or off). `multiples` drops fixed kinds, whose points only `fixed` reads.
KEYS: dict[str, Callable[[Rules, str], Any]] = {
    "opening": lambda rules, key: 0 if rules.opening else min(750, rules.goal // 2 // 50 * 50),
    "straights": lambda rules, key: 0 if rules.straights else 1500,
    "multiples": _toggle("additive", "doubling"),
    "hot_dice": _toggle("optional", "mandatory"),
    "end": _toggle("reach", "exact"),
    "last_round": _toggle(False, True),
    "min_bank": lambda rules, key: 0 if rules.min_bank else min(300, rules.goal // 4 // 50 * 50),
    "five_ones": _toggle("win", "multiples"),
}


@dataclass(frozen=True)
class Change:
    """One key of the base set to another value (`key` None: the base itself)."""

    key: str | None
    value: Any
    rules: Rules

    @property
    def label(self) -> str:
        return "base" if self.key is None else f"{self.key} = {_word(self.value)}"


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else str(value)


def changes(base: Rules, keys: Sequence[str] = tuple(KEYS)) -> tuple[list[Change], list[str]]:
    """The base and one change per key (in `keys` order), and the changes the rules refuse, in words."""
    out = [Change(None, None, base)]
    skipped = []
    data = to_dict(base)
    for key in keys:
        if key not in KEYS:
            raise CinqmilleError(f"ablate: unknown key {key!r}; known: {', '.join(KEYS)}")
        value = KEYS[key](base, key)
        new = {**data, key: value, "name": f"{base.name}, {key} = {_word(value)}"}
        if key == "multiples":
            new["kinds"] = False
        try:
            out.append(Change(key, value, rules_from_dict(new, f"{base.name} with {key} changed")))
        except CinqmilleError as exc:
            skipped.append(f"{key} = {_word(value)}: {exc}")
    return out, skipped


@dataclass(frozen=True)
class Row:
    """The exact figures of one ruleset of the ablation (module docstring)."""

    label: str
    rules: str
    first: float
    exact: bool
    expected: float
    race: float
    length: TurnCount | None
    fair_start: int
    fair_first: float
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        length = None if self.length is None else {
            "mean": self.length.mean, "median": self.length.median,
            "quantiles": {str(q): quantile(self.length, q) for q in QUANTILES}, "tail": self.length.tail}
        return {"change": self.label, "rules": self.rules, "first_player_win": self.first, "exact": self.exact,
                "expected_turn": self.expected, "race_turns": self.race, "game_length": length,
                "fair_start": self.fair_start, "first_player_win_at_fair_start": self.fair_first, "note": self.note}


def measure(change: Change) -> Row:
    """Every figure of one ruleset (solving what is not cached)."""
    rules = change.rules
    result = solve(rules, "win")
    note = "" if result.exact else "not exact: " + "; ".join(result.assumptions)
    length, why = None, ""
    if rules.last_round:
        why = "the game's chain over score pairs has no last round (as `dist --turns`)"
    elif len(result.grid.scores) ** 2 > GAME_PAIRS:
        why = f"more than {GAME_PAIRS:,} score pairs"
    else:
        try:
            length = game_length(result)
        except CinqmilleError as exc:
            why = str(exc)
    if why:
        note = "; ".join(x for x in (note, f"game length not computed: {why}") if x)
    fair = fair_start(rules)
    return Row(change.label, rules.name, result.first_player_win, result.exact,
               solve(rules, "expected").expected_turn(), solve(rules, "race").race_turns(), length,
               fair.start[1], fair.win_after[0], note)


@dataclass(frozen=True)
class Ablation:
    """The base and each change's row, and the changes left out."""

    base: str
    rows: tuple[Row, ...]
    skipped: tuple[str, ...]
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        """The JSON of `cinqmille ablate --json`."""
        return {"base": self.base, "rows": [r.as_dict() for r in self.rows], "skipped": list(self.skipped),
                "method": METHOD}


METHOD = ("exact: the solved first-player chance, expected turn and race of each ruleset; the game's length from "
          "its Markov chain over score pairs with both players optimal; the fair start from the solved table at "
          "every head start")


def ablate(base: Rules | str, keys: Sequence[str] = tuple(KEYS), progress: Progress | None = None) -> Ablation:
    """The ablation of `base`: its figures, then those of each ruleset with one key changed."""
    t0 = time.perf_counter()
    found, skipped = changes(load_rules(base), keys)
    rows = []
    for i, change in enumerate(found):
        rows.append(measure(change))
        if progress is not None:
            progress((i + 1) / len(found))
    return Ablation(found[0].rules.name, tuple(rows), tuple(skipped), time.perf_counter() - t0)


def table(ablation: Ablation) -> list[list[str]]:
    """The ablation as text cells, header first: changes from the base in points (first player) and turns."""
    head = ["change", "first player", "edge change", "expected turn", "race", "game: mean", "median",
            "10%-90%", "fair start"]
    base = ablation.rows[0]
    out = [head]
    for r in ablation.rows:
        n = r.length
        out.append([r.label, f"{100 * r.first:.2f}%" + ("" if r.exact else "*"),
                    "" if r is base else f"{100 * (r.first - base.first):+.2f}", f"{r.expected:.1f}", f"{r.race:.2f}",
                    "—" if n is None else f"{n.mean:.2f}", "—" if n is None else str(n.median),
                    "—" if n is None else f"{quantile(n, 0.1)}-{quantile(n, 0.9)}",
                    f"{r.fair_start} ({100 * r.fair_first:.2f}%)"])
    return out


def notes(ablation: Ablation) -> list[str]:
    """What the columns mean, and each row's note."""
    out = ["first player: two optimal players' first-player chance (* of the solver's relaxation); edge change: "
           "from the base, in points; expected turn: points (one turn alone, opened); race: turns alone to the "
           "goal; game: turns of both players from 0 to 0 (exact chain), mean, median and the 10% and 90% "
           "quantiles; fair start: the second player's head start and the first player's chance then."]
    out += [f"{r.label}: {r.note}" for r in ablation.rows if r.note]
    out += [f"left out: {s}" for s in ablation.skipped]
    return out


def text_lines(ablation: Ablation) -> list[str]:
    """The lines `cinqmille ablate` prints."""
    cells = table(ablation)
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    lines = [f"One rule changed at a time from '{ablation.base}' (exact):"]
    lines += ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip()
              for row in cells]
    return lines + notes(ablation)


def markdown(ablation: Ablation) -> list[str]:
    """The ablation as a Markdown table and its notes."""
    cells = table(ablation)
    out = ["| " + " | ".join(cells[0]) + " |", "|" + "|".join("---" for _ in cells[0]) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells[1:]]
    return out + [""] + [f"- {line}" for line in notes(ablation)]


HEADING = "## One rule changed at a time"


def section(ablation: Ablation) -> list[str]:
    """The ablation as a section of docs/variants.md."""
    return [HEADING, "",
            f"Each row sets one key of `{ablation.base}` to another value and keeps every other key "
            f"(`cinqmille ablate --rules {ablation.base}`); every figure is exact: the solve, the expected turn, the "
            "race, the game's Markov chain (`dist --turns`) and the fair start (`cinqmille fair`). Computed in "
            f"{ablation.seconds:,.0f} s, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, on the project's "
            "shared two-core machine (the solves from the cache where they were).", ""] + markdown(ablation) + [""]
