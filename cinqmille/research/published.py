"""The page `docs/published.md`: every figure another solver or paper published, set against ours.

Each `Figure` names its source (a page, a paper, a repository file), the
figure as published, the ruleset that states that game (a preset, or a file of
`docs/published/`), and how our figure is measured (`MEASURES`). Every number
of ours on the page, every status and every verdict of a note is computed by
`measure`: a measure returns our number, its words and what it says of the
published figure (`Measured.says`); a figure the rules cannot state names the
ruleset that would state it (`Figure.would_be`), and the rules' own refusal is
its note. Only the context of a note (where the figure comes from, how the
rules file reads the source) is written by hand. Regenerate with::

    python -m cinqmille.research.published docs/published.md

(from the repository's root: the rules files are read from `docs/published/`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from pathlib import Path

from ..dice import odds
from ..files import atomic_write
from ..rules import Rules, load_rules
from ..solver.api import solve
from ..fair import fair_start as fairest
from ..table.position import Position
from .distribution import expected_points
from .distribution import race_length
from .match import match
from ..errors import CinqmilleError
from ..rules import rules_from_dict
import numpy as np

COMMAND = "python -m cinqmille.research.published docs/published.md"
#: Where the rules files of games that are not presets live (the repository's docs/published/).
FILES = Path(__file__).resolve().parents[2] / "docs" / "published"


@dataclass(frozen=True, slots=True)
class Measured:
    """Our figure: the number compared (in the published unit), its words, and what it says (computed)."""

    value: float
    words: str
    says: str = ""


def fair_start(rules: Rules) -> tuple[int, float]:
    """The head start of the second player (`fair.fair_start`: the start that brings the chances closest to
    even) and the first player's chance then."""
    found = fairest(rules)
    return found.start[1], found.win_after[0]


def _first_player(rules: Rules) -> Measured:
    result = solve(rules)
    p = result.first_player_win
    return Measured(100 * p, f"{100 * p:.3f}%", f"Our solve: {result.states:,} turn states in {result.seconds:,.1f} s "
                    f"(the solve's own time, stored with the table, on the project's two-core machine).")


def _fair_start(rules: Rules) -> Measured:
    c, w = fair_start(rules)
    return Measured(float(c), f"{c} points (the first player's chance at (0, {c}): {100 * w:.3f}%)",
                    f"The first player's chance is closest to one half at a head start of {c} "
                    f"(`cinqmille fair`).")


def _expected(rules: Rules) -> Measured:
    e = solve(rules, "expected").expected_turn()
    return Measured(e, f"{e:.3f} points")


def _expected_capped(rules: Rules) -> Measured:
    e = _expected(rules)
    turn = expected_points(rules, Position(0, 0))
    capped = sum(min(x, rules.goal) * p for x, p in turn.points.items()) + rules.goal * turn.win
    return Measured(e.value, e.words,
                    f"Counting every bank above the goal as the goal ({rules.goal}, as a model that values a turn at "
                    f"most the points still needed does), the same turns average {capped:.3f}: such a cap explains "
                    f"at most {e.value - capped:.2f} points of the difference (a policy that knows the cap does at "
                    f"least as well as this one).")


def _race(rules: Rules) -> Measured:
    points = race_length(rules, policy="expected")
    fewest = solve(rules, "race").race_turns()
    cum = np.cumsum(points.chances)
    half = int(np.searchsorted(cum, 0.5))  # the turns before the distribution passes one half
    return Measured(points.mean, f"{points.mean:.3f} turns (points policy; median {points.median})",
                    f"Playing for the most points each turn (`expected`), the turns to {rules.goal} from 0 have mean "
                    f"{points.mean:.3f} and median {points.median}; the distribution passes one half between {half} "
                    f"and {half + 1} turns ({100 * cum[half - 1]:.1f}% and {100 * cum[half]:.1f}%); the fewest on "
                    f"average, playing the race (`solve --objective race`), is {fewest:.3f}.")


def _average(rules: Rules) -> Measured:
    g = solve(rules, "average").average_turn()
    return Measured(g, f"{g:.4f} points")


def _bust(rules: Rules) -> Measured:
    p = float(odds(rules)[rules.dice - 1].bust)
    return Measured(100 * p, f"{100 * p:.3f}%")


def _first_edge_points(rules: Rules) -> Measured:
    m = match(rules, "expected", "expected")
    edge = 100 * (m.first - (1 - m.first))
    return Measured(edge, f"{edge:.2f} points ({100 * m.first:.2f}% against {100 * (1 - m.first):.2f}%)",
                    "Both players playing for the most points each turn (`expected`, kcddice's points policy), "
                    "exactly by the game's chain (`cinqmille match expected expected`); read as the first player's "
                    f"chance minus one half it is {100 * m.first - 50:.2f} points; with both playing to win the first "
                    f"player has {100 * solve(rules).first_player_win:.2f}%.")


def _gap_expected(rules: Rules) -> Measured:
    m = match(rules, "optimal", "expected")
    gap = 100 * m.edge
    return Measured(gap, f"{gap:.4f} points over the expected-score policy",
                    f"Their augmented mental-arithmetic policy is not described in the abstract (the stored copy of "
                    f"the paper), so it cannot be written here. The policy it augments, the one that maximises each "
                    f"turn's expected score (`expected`), is: optimal play wins {100 * m.chance:.4f}% against it over "
                    f"both seats, an advantage of {gap:.4f} points (exact, `cinqmille match optimal expected`), "
                    f"{gap - 1.7754:+.4f} points from their augmented policy's 1.7754 (read as the optimal player's "
                    f"chance minus one half, as `card` reports a cost; as the difference of the two players' "
                    f"chances it would be {2 * gap:.4f}).")


def _states(rules: Rules) -> Measured:
    result = solve(rules)
    return Measured(float(result.states), f"{result.states:,} turn states in {result.seconds:,.1f} s",
                    f"Ours for the nearest game it states ('{rules.name}', scores up to the goal {rules.goal}): the "
                    f"turn states of our model (a turn's points and dice in hand at each score pair) and the solve's "
                    f"own time, stored with the table; a count of another model's states, not the same quantity.")


#: How each kind of figure is measured (see `Measured`).
MEASURES: dict[str, Callable[[Rules], Measured]] = {
    "first_player_win": _first_player, "fair_start": _fair_start, "expected": _expected,
    "expected_capped": _expected_capped, "race": _race,
    "average": _average, "bust_all_dice": _bust, "first_edge_points": _first_edge_points,
    "gap_expected": _gap_expected, "states": _states,
}


@dataclass(frozen=True, slots=True)
class Figure:
    """One published figure: where, what, the ruleset of that game, and how ours is measured (None: it is not)."""

    source: str  # who and where, with the address
    claim: str  # the figure as published, in its words
    rules: str | None  # a preset name or a file of docs/published/; None: the rules cannot state that game
    measure: str | None  # a key of MEASURES
    published: float | None  # the number compared (in the unit of the measure)
    tolerance: float | None  # the half-unit of the published rounding
    note: str  # the context (where the figure comes from, how the rules read the source); no verdict
    would_be: dict[str, Any] | None = None  # the rules that would state a game the rules refuse (`refusal`)

    def ruleset(self) -> Rules | None:
        """The ruleset of the game (None when the rules cannot state it)."""
        if self.rules is None:
            return None
        return load_rules(str(FILES / self.rules) if self.rules.endswith(".toml") else self.rules)


KCD = ("phlip9/kcddice, README.md, section \"Cool stats\" (commit f6670e6, 2022-04-09), "
       "https://github.com/phlip9/kcddice")
BN = ("M. Busche and T. W. Neller, \"Optimal Play of the Farkle Dice Game\", ACG 2017, LNCS 10664 (abstract; "
      "the paper's own copy is linked from http://www.mattbusche.org/blog/)")

FIGURES: tuple[Figure, ...] = (
    Figure("domsleee/farkle, README.md, \"Results\" (https://github.com/domsleee/farkle), the Farkle of "
           "cardgames.io", "expected win rate against a perfect AI when you go first is 53.3%",
           "farkle-cardgames", "first_player_win", 53.3, 0.05,
           "The same game (6 dice, first to 10,000, no opening; 4, 5, 6 of a kind 1000, 2000, 3000; three "
           "pairs, a four of a kind and a pair counting, 1500; 1-2-3-4-5-6 2500), as domsleee's "
           "src/precompute.rs scores it. domsleee's README gives no count of states or solve time."),
    Figure(KCD, "with 6 standard dice, you can bust on the first roll with ~3% probability", "kcd",
           "bust_all_dice", 3.0, 0.5, "Exact: the rolls of six dice that hold no 1, 5, three of a kind or "
                                      "straight."),
    Figure(KCD, "you can expect to reach 4000 points in ~7.5 turns", "kcd", "race", 7.5, 0.05,
           "kcddice's figure is read from its turns-to-win distribution (`turns_to_win_cdf` in kcddice/src/search.rs) "
           "under its points policy (the most points of each turn); ours is compared as a mean."),
    Figure(KCD, "scoring ~530 points each turn", "kcd", "expected_capped", 530.0, 5.0,
           "kcddice values a turn by the points it adds, at most the points still needed (4000 at the start); "
           "ours counts every point of the turn (the `expected` objective)."),
    Figure(KCD, "when both players use 6 standard dice, the player who goes first is ~7% more likely to win "
                "(if they both use this strategy)", "kcd", "first_edge_points", 7.0, 0.5,
           "Read as the first player's chance minus the second's, both playing kcddice's points policy."),
    Figure(BN, "for fairest play, we recommend 200 compensation points at the beginning of the game for the "
               "second player", "busche-neller.toml", "fair_start", 200.0, 0.0,
           "Read from the solved two-player table: the first player's chance when the second starts with c "
           "points, at every c."),
    Figure(BN, "first-player win chance with optimal play (not in the abstract)", "busche-neller.toml",
           "first_player_win", None, None, "The stored copy of the paper is its abstract only, which does not give "
                                           "it."),
    Figure(BN, "the strategy that maximizes expected score (its value, not in the abstract)", "busche-neller.toml",
           "expected", None, None,
           "The `expected` objective. Reading of the rules: each face forms at most one three of a kind in a roll "
           "(the rule book's `additive`); six of a kind as two triples is not scored."),
    Figure(BN, "optimal play keeps a win advantage of only 1.7754% over their mental-arithmetic policy",
           "busche-neller.toml", "gap_expected", None, None,
           "The abstract: they compute the strategy that maximizes expected score, replicate it by mental "
           "mathematics, and augment that method for human play."),
    Figure("M. Busche, \"Maximizing Expected Scores in the Game of Zilch\" (2010), "
           "http://www.mattbusche.org/blog/article/zilch/",
           "using these three strategies you rack up an average of 620.855 points per turn",
           "zilch.toml", "average", 620.855, 0.0005,
           "The `average` objective: a policy for each count of zilches in a row (0, 1, 2), the third costing "
           "500. A roll of six dice that scores nothing is `no_score_roll = 500`, after which the player may "
           "bank or roll again; the figure settles that reading."),
    Figure("M. Busche, \"Maximizing Win Probability in the Game of Farkle\" (2016), "
           "http://www.mattbusche.org/blog/article/optimal_farkle/, Facebook Farkle",
           "if both players use this same strategy, the player going first will win 53.487% of the time",
           None, None, None, None,
           "Three farkles in a row cost 500 points with no floor: scores go negative (bounded at -2500 in his "
           "model); the stored copy does not give Facebook's whole scoring either.",
           would_be={"dice": 6, "goal": 10000, "start": [-2500]}),
    Figure("timpalpant/go-farkle, README.md, \"Solution size\" (https://github.com/timpalpant/go-farkle)",
           "2 player: 99,488,250 states, 1.5 GiB (scores capped at 12,750)", "busche-neller.toml", "states", None,
           None, "That program's own states: scores up to 12,750, three 1s worth 300, every other player a last "
                 "turn, ties split."),
    Figure("T. W. Neller and C. G. M. Presser, \"Optimal Play of the Dice Game Pig\", The UMAP Journal 25(1), "
           "2004", "the first player wins 53.06% of games of Pig to 100 with optimal play", None, None, None, None,
           "Pig is played with one die (a 1 ends the turn, every other face scores its pips).",
           would_be={"dice": 1, "goal": 100}),
)


def refusal(figure: Figure) -> str:
    """The rules' own refusal of the ruleset that would state `figure`'s game (`Figure.would_be`)."""
    if figure.would_be is None:
        raise ValueError(f"figure {figure.claim!r}: no measure and no ruleset that would state it")
    try:
        rules_from_dict(dict(figure.would_be), "the rules of that game")
    except CinqmilleError as exc:
        return str(exc)
    raise ValueError(f"figure {figure.claim!r}: the rules accept {figure.would_be}: measure it")


@dataclass(frozen=True, slots=True)
class Row:
    """A figure with ours: the number, its words, whether it reproduces the published one, and the note."""

    figure: Figure
    ours: float | None
    words: str
    status: str  # "reproduced", "differs", "ours only" or "not expressible"
    says: str = ""  # what our measurement says of it (computed)

    @property
    def note(self) -> str:
        """The figure's context and what our measurement says."""
        return " ".join(x for x in (self.figure.note, self.says) if x)


def measure(figure: Figure) -> Row:
    """Our figure for one published figure, its status and what it says."""
    rules = figure.ruleset()
    if rules is None or figure.measure is None:
        return Row(figure, None, "", "not expressible", f"Not expressible: {refusal(figure)}.")
    found = MEASURES[figure.measure](rules)
    if figure.published is None or figure.tolerance is None:
        return Row(figure, found.value, found.words, "ours only", found.says)
    same = abs(found.value - figure.published) <= figure.tolerance + 1e-9
    within = f"within {figure.tolerance:g} of" if figure.tolerance else "exactly"
    verdict = (f"Reproduced: ours is {within} {figure.published:g}." if same else
               f"Differs: ours is {found.value - figure.published:+.3g} from {figure.published:g} (rounding allows "
               f"{figure.tolerance:g}).")
    return Row(figure, found.value, found.words, "reproduced" if same else "differs", f"{verdict} {found.says}".strip())


def markdown(rows: Sequence[Row]) -> str:
    """The text of docs/published.md."""
    out = ["# Published figures, reproduced", "",
           f"Regenerate this page with `{COMMAND}` (from the repository's root); it is written by",
           "`cinqmille.research.published` and should not be edited by hand. Each figure gives its source, the",
           "ruleset that states that game (a preset, or a file of [published/](published/), each with its source "
           "on its first line) and our figure, solved exactly. *reproduced*: equal within the published rounding "
           "(half a unit of its last digit).", ""]
    cells = [["source", "published", "rules", "ours", "status"]]
    for row in rows:
        f = row.figure
        rules = "—" if f.rules is None else (f"`{f.rules}`" if not f.rules.endswith(".toml")
                                             else f"[`{f.rules}`](published/{f.rules})")
        cells.append([f.source, f.claim, rules, row.words or "—", row.status])
    out += ["| " + " | ".join(cells[0]) + " |", "|" + "|".join("---" for _ in cells[0]) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells[1:]]
    out += ["", "## Notes", ""]
    for i, row in enumerate(rows, 1):
        out.append(f"{i}. *{row.figure.claim}* — {row.note}")
    counts = {s: sum(r.status == s for r in rows) for s in ("reproduced", "differs", "ours only", "not expressible")}
    out += ["", "In all: " + ", ".join(f"{n} {s}" for s, n in counts.items()) + "."]
    return "\n".join(out) + "\n"


def write_page(path: Path, rows: Sequence[Row] | None = None) -> Path:
    """Measure every figure (unless `rows` are given) and write the page to `path`, atomically."""
    text = markdown([measure(f) for f in FIGURES] if rows is None else rows)

    def write(tmp: Path) -> None:
        tmp.write_text(text)

    atomic_write(Path(path), write)
    return Path(path)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m cinqmille.research.published [PAGE]`: write the page (default docs/published.md)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) > 1:
        print("Error: usage: python -m cinqmille.research.published [PAGE]", file=sys.stderr)
        return 2
    write_page(Path(args[0] if args else "docs/published.md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
