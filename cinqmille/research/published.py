"""The page `docs/published.md`: every figure another solver or paper published, set against ours.

Each `Figure` names its source (a page, a paper, a repository file), the
figure as published, the ruleset that states that game (a preset, or a file of
`docs/published/`), and how our figure is measured (`MEASURES`); figures the
rules cannot express say why. Every number of ours on the page is computed by
`measure` from the solver; nothing is typed in by hand. Regenerate with::

    python -m cinqmille.research.published docs/published.md

(from the repository's root: the rules files are read from `docs/published/`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..dice import odds
from ..files import atomic_write
from ..rules import Rules, load_rules
from ..solver.api import solve

COMMAND = "python -m cinqmille.research.published docs/published.md"
#: Where the rules files of games that are not presets live (the repository's docs/published/).
FILES = Path(__file__).resolve().parents[2] / "docs" / "published"


def fair_start(rules: Rules) -> tuple[int, float]:
    """The head start of the second player (a multiple of 50 up to 1000) that brings the first player's chance
    closest to 1/2, and that chance: ``W(0, c)`` read from the solved two-player table."""
    result = solve(rules)
    best = min(range(0, 1050, 50), key=lambda c: abs(result.win_at_start(0, c) - 0.5))
    return best, result.win_at_start(0, best)


def _first_player(rules: Rules) -> tuple[float, str]:
    p = solve(rules).first_player_win
    return 100 * p, f"{100 * p:.3f}%"


def _fair_start(rules: Rules) -> tuple[float, str]:
    c, w = fair_start(rules)
    return float(c), f"{c} points (the first player's chance at (0, {c}): {100 * w:.3f}%)"


def _expected(rules: Rules) -> tuple[float, str]:
    e = solve(rules, "expected").expected_turn()
    return e, f"{e:.3f} points"


def _race(rules: Rules) -> tuple[float, str]:
    t = solve(rules, "race").race_turns()
    return t, f"{t:.3f} turns"


def _average(rules: Rules) -> tuple[float, str]:
    g = solve(rules, "average").average_turn()
    return g, f"{g:.4f} points"


def _bust(rules: Rules) -> tuple[float, str]:
    p = float(odds(rules)[rules.dice - 1].bust)
    return 100 * p, f"{100 * p:.3f}%"


#: How each kind of figure is measured: our value (the number compared, in the published unit) and its words.
MEASURES: dict[str, Callable[[Rules], tuple[float, str]]] = {
    "first_player_win": _first_player, "fair_start": _fair_start, "expected": _expected, "race": _race,
    "average": _average, "bust_all_dice": _bust,
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
    note: str  # the difference, explained, or why there is no figure of ours

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
           "src/precompute.rs scores it."),
    Figure(KCD, "with 6 standard dice, you can bust on the first roll with ~3% probability", "kcd",
           "bust_all_dice", 3.0, 0.5, "Exact: the rolls of six dice that hold no 1, 5, three of a kind or "
                                      "straight."),
    Figure(KCD, "you can expect to reach 4000 points in ~7.5 turns", "kcd", "race", 7.5, 0.05,
           "kcddice's ~7.5 is read from its turns-to-win distribution (`turns_to_win_cdf` in kcddice/src/search.rs) "
           "under its points policy; the README does not say whether it is a mean. Ours is the least mean number "
           "of turns of any policy (the `race` objective), so a mean of 7.5 for another policy would contradict "
           "it: the 7.5 is most likely where that distribution passes one half (a median), not a mean."),
    Figure(KCD, "scoring ~530 points each turn", "kcd", "expected", 530.0, 5.0,
           "kcddice's value of a turn counts at most the points still needed (4000 at the start), ours counts "
           "every point (up to four times the goal): ours is the larger by the turns past 4000."),
    Figure(KCD, "when both players use 6 standard dice, the player who goes first is ~7% more likely to win "
                "(if they both use this strategy)", "kcd", "first_player_win", None, None,
           "kcddice's figure is for two players who each play its points policy (turns-cdf); ours is for two "
           "players who each play to win, so the two are different games of strategy and not compared."),
    Figure(BN, "for fairest play, we recommend 200 compensation points at the beginning of the game for the "
               "second player", "busche-neller.toml", "fair_start", 200.0, 0.0,
           "Read from the solved two-player table: the first player's chance to win when the second starts with "
           "c points, W(0, c), is closest to 1/2 at c = 200."),
    Figure(BN, "first-player win chance with optimal play (not in the abstract)", "busche-neller.toml",
           "first_player_win", None, None,
           "Ours, for the record: the stored copy of the paper is its abstract only, which does not give it."),
    Figure(BN, "the strategy that maximizes expected score (its value, not in the abstract)", "busche-neller.toml",
           "expected", None, None,
           "Ours, for the record (the `expected` objective). Reading of the rules: each face forms at most one "
           "three of a kind in a roll (the rule book's `additive`); six of a kind as two triples is not scored."),
    Figure(BN, "optimal play keeps a win advantage of only 1.7754% over their mental-arithmetic policy", None, None,
           None, None, "Not measured: their augmented mental-arithmetic policy is not one of ours."),
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
           "Not expressible: three farkles in a row cost 500 points with no floor (scores go negative, bounded "
           "at -2500 in his model), where the rules here never take a score below 0 (docs/rules.md, item 9); "
           "the stored copy does not give Facebook's whole scoring either."),
    Figure("timpalpant/go-farkle, README.md, \"Solution size\" (https://github.com/timpalpant/go-farkle)",
           "2 player: 99,488,250 states, 1.5 GiB (scores capped at 12,750)", None, None, None, None,
           "Not comparable: a count of that program's own states (scores up to 12,750, three 1s worth 300, "
           "every other player a last turn, ties split); our solver counts turn states of another model, and "
           "its last round gives the first player no last turn when the second reaches the goal."),
    Figure("T. W. Neller and C. G. M. Presser, \"Optimal Play of the Dice Game Pig\", The UMAP Journal 25(1), "
           "2004", "the first player wins 53.06% of games of Pig to 100 with optimal play", None, None, None, None,
           "Not expressible: Pig is played with one die (a 1 ends the turn, every other face scores its "
           "pips); the rules here have five or six dice scored by 1s, 5s and combinations."),
)


@dataclass(frozen=True, slots=True)
class Row:
    """A figure with ours: the number, its words, and whether it reproduces the published one."""

    figure: Figure
    ours: float | None
    words: str
    status: str  # "reproduced", "differs", "ours only", "not measured", "not comparable" or "not expressible"


def measure(figure: Figure) -> Row:
    """Our figure for one published figure."""
    rules = figure.ruleset()
    if rules is None or figure.measure is None:  # the note says why: not measured, comparable or expressible
        return Row(figure, None, "", " ".join(figure.note.split()[:2]).lower().rstrip(":"))
    ours, words = MEASURES[figure.measure](rules)
    if figure.published is None or figure.tolerance is None:
        return Row(figure, ours, words, "ours only")
    same = abs(ours - figure.published) <= figure.tolerance + 1e-9
    return Row(figure, ours, words, "reproduced" if same else "differs")


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
        out.append(f"{i}. *{row.figure.claim}* — {row.figure.note}")
    counts = {s: sum(r.status == s for r in rows) for s in ("reproduced", "differs", "ours only", "not measured",
                                                            "not comparable", "not expressible")}
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
