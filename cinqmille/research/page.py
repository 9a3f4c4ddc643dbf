"""The results page `docs/variants.md`: the comparison table and the figures, written by one command."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from .compare import CompareConfig, RulesetComparison, agreement, table_rows

COMMAND = "cinqmille compare --markdown docs/variants.md --plots docs/figures --jobs 2"


def markdown(rows: Sequence[RulesetComparison], config: CompareConfig, figures: Sequence[Path] = (),
             page: Path | None = None) -> str:
    """The Markdown text of the results page."""
    out = [
        "# The variants of 5000 compared",
        "",
        f"Regenerate this page (and its figures) with `{COMMAND}`; it is written",
        "by `cinqmille.research.page` and should not be edited by hand.",
        "",
        f"Seed {config.seed}; {config.games:,} games per matchup with the vectorised simulator, "
        f"{config.referee_games:,} through the referee (rulesets the solver does not treat exactly); "
        "± is one binomial standard error.",
        "",
        "- *first player*: the chance that the first player wins when both play optimally: solved (exact,",
        "  or of the solver's relaxation when marked) and simulated (optimal against optimal).",
        "- *turns*: game length in turns of both players; *bust rate*: share of turns that end in a bust;",
        "  *banked turn*: mean points of a banked turn (optimal against optimal).",
        "- *optimal vs X*: the optimal player's win rate against X, half of the games in each seat.",
        f"  *best T*: the `threshold:T` of {{{', '.join(map(str, config.thresholds))}}} that does best against",
        "  optimal (found on a smaller run, then played again with a fresh seed).",
        "",
    ]
    cells = table_rows(rows)
    out.append("| " + " | ".join(cells[0]) + " |")
    out.append("|" + "|".join("---" for _ in cells[0]) + "|")
    for row in cells[1:]:
        out.append("| " + " | ".join(row) + " |")
    out.append("")
    out.append("Simulated against solved first-player chance, in standard errors: " + ", ".join(
        f"{r.rules} {agreement(r):.1f}" + ("" if r.exact else " (relaxed solve, full rules played)") for r in rows) + ".")
    relaxed = [r for r in rows if not r.exact]
    for r in relaxed:
        out.append("")
        out.append(f"`{r.rules}` has rules outside the solved state. The optimal player plays the solver's "
                   "relaxation under the full rules through the referee (see `cinqmille.policies.optimal`); "
                   "the relaxation assumes:")
        out.extend(f"- {a}" for a in r.assumptions)
    out.append("")
    out.append("Threshold scan (optimal's win rate against `threshold:T`, smaller run):")
    out.append("")
    ts = sorted({t for r in rows for t, _ in r.threshold_scan})
    out.append("| ruleset | " + " | ".join(f"T={t}" for t in ts) + " |")
    out.append("|---|" + "|".join("---" for _ in ts) + "|")
    for r in rows:
        scan = dict(r.threshold_scan)
        out.append(f"| {r.rules} | " + " | ".join(f"{scan[t]:.1%}" if t in scan else "" for t in ts) + " |")
    if figures:
        out += ["", "## Figures", ""]
        base = page.parent if page is not None else Path(".")
        for f in figures:
            rel = os.path.relpath(f, base)
            title = Path(f).stem.replace("-", " ")
            out += [f"![{title}]({rel})", ""]
    return "\n".join(out).rstrip() + "\n"


def write_page(path: Path, rows: Sequence[RulesetComparison], config: CompareConfig,
               figures: Sequence[Path] = ()) -> Path:
    """Write the page to `path` (directories created)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(markdown(rows, config, figures, path))
    return path
