"""Figures of the solved policy (PNG, matplotlib from the optional extra `plot`).

- `plot_bank_regions`: for a few score situations, bank or roll by turn points and dice in hand;
- `plot_bank_heatmap`: the smallest turn total the optimal player banks, with each number of dice
  in hand, over (my score, opponent's score);
- `plot_win_chance`: the chance to win at the start of a turn against the score difference, one
  curve per opponent score;
- `plot_presets`: the presets side by side (the first player's edge with two and three players, game
  length, what the best fixed threshold loses), from the comparison's figures.

The heat map tells apart, by colour and in its legend, the cells where the
player never banks with that many dice (grey) and those where he banks only
with the capped total or more (red).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import CinqmilleError
from ..table.load import policy_table
from ..rules import Rules
from ..rules.bank import UNIT, BankRules
from ..solver import solve
from ..table.locate import locate_rows
from ..table.policy import PolicyTable
from ..files import atomic_write
from ..solver.grid import ScoreGrid
from ..files import check_folder, check_target
from ..table.turn_eval import bust_odds
from .card import card_moves
from .ablate import quantile
import textwrap

if TYPE_CHECKING:
    from .ablate import Ablation
    from matplotlib.figure import Figure

    from .card import CardSearch
    from .compare import RulesetComparison
    from .distribution import DistReport

DEFAULT_SITUATIONS: tuple[tuple[int, int], ...] = ((0, 0), (2000, 2000), (1000, 4000), (4000, 1000))
#: The heat map's cells outside the colour scale: never banks (light grey) and banks only at the cap or above (red).
NEVER_COLOUR = "#d9d9d9"
CAPPED_COLOUR = "#c0392b"


def _pyplot() -> ModuleType:
    """`matplotlib.pyplot` on the Agg backend, or a one-line error when matplotlib (the `plot` extra) is missing."""
    try:
        import matplotlib  # lazy: optional dependency (extra 'plot')

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # lazy: optional dependency (extra 'plot')
    except ImportError:
        raise CinqmilleError("plots need matplotlib: pip install 'cinqmille[plot]'") from None
    return plt


FORMATS = (".png", ".svg", ".pdf")


def save_figure(fig: Figure, path: Path, **options: Any) -> Path:
    """Write `fig` to `path` atomically (`files.atomic_write`, the format from the suffix), then close it.

    A target that is a symbolic link or not a regular file is refused before
    anything is written; a full disk is one line (`CinqmilleError`) and leaves
    nothing behind.
    """
    plt = _pyplot()
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".") or "png"
    try:
        atomic_write(path, lambda tmp: fig.savefig(tmp, format=fmt, **options), links=False)
    finally:
        plt.close(fig)
    return path


def _situations(rules: Rules, situations: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    out = []
    for me, opp in situations:
        me = min(me, rules.goal - 2 * UNIT) if me else 0
        opp = min(opp, rules.goal - 2 * UNIT) if opp else 0
        if rules.opening:
            me = me if me == 0 else max(me, rules.opening)
            opp = opp if opp == 0 else max(opp, rules.opening)
        out.append((me, opp))
    return out


def bank_grid(table: PolicyTable, me: int, opp: int, max_points: int) -> np.ndarray:
    """(dice, turn points / 50 + 1) codes: 0 bank not allowed, 1 roll, 2 bank (the table's decision)."""
    t = np.arange(max_points // UNIT + 1)[:, None]
    m = np.arange(1, table.dice + 1)[None, :]
    r = locate_rows(table, me // UNIT, opp // UNIT)
    allowed = table.bank(r, t, m) > -np.inf
    codes = np.where(table.banks(r, t, m), 2, np.where(allowed, 1, 0))
    return codes.T


def plot_bank_regions(rules: Rules, path: Path, situations: Sequence[tuple[int, int]] = DEFAULT_SITUATIONS,
                      max_points: int = 2000) -> Path:
    """Bank or roll by turn points (x) and dice in hand (y), for a few (my score, opponent's score)."""
    plt = _pyplot()
    from matplotlib.colors import ListedColormap  # lazy: optional dependency (extra 'plot')
    from matplotlib.patches import Patch  # lazy: optional dependency (extra 'plot')

    table = policy_table(rules, 2)
    sits = _situations(rules, situations)
    cols = 2
    rows_n = (len(sits) + 1) // 2
    fig, axes = plt.subplots(rows_n, cols, figsize=(11, 3.0 * rows_n + 0.8), squeeze=False, sharex=True)
    cmap = ListedColormap(["#d9d9d9", "#f4a259", "#5b8e7d"])
    d = rules.dice
    for ax, (me, opp) in zip(axes.flat, sits):
        codes = bank_grid(table, me, opp, max_points)
        ax.imshow(codes, aspect="auto", origin="lower", cmap=cmap, vmin=0, vmax=2, interpolation="nearest",
                  extent=(-UNIT / 2, max_points + UNIT / 2, 0.5, d + 0.5))
        me_s = "not opened" if me == 0 and rules.opening else str(me)
        opp_s = "not opened" if opp == 0 and rules.opening else str(opp)
        ax.set_title(f"me {me_s}, opponent {opp_s}", fontsize=11)
        ax.set_yticks(range(1, d + 1))
        ax.set_ylabel("dice in hand")
        ax.grid(False)
    for ax in axes[-1]:
        ax.set_xlabel("turn points set aside")
    for ax in list(axes.flat)[len(sits):]:
        ax.axis("off")
    fig.legend(handles=[Patch(color="#5b8e7d", label="bank"), Patch(color="#f4a259", label="roll"),
                        Patch(color="#d9d9d9", label="cannot bank (must roll)")],
               loc="lower center", ncol=3, frameon=False)
    fig.suptitle(f"Optimal bank-or-roll decision ({rules.name})", fontsize=13)
    fig.tight_layout(rect=(0, 0.06, 1, 0.96))
    return save_figure(fig, path, dpi=110)


def smallest_bank(table: PolicyTable, m: int) -> tuple[np.ndarray, np.ndarray]:
    """(scores in points, S x S array): the smallest turn total (points) banked with m dice, NaN if never."""
    s = len(table.scores)
    out = np.full((s, s), np.nan)
    for ia in range(s):
        cap = int(table.mover_caps[ia])
        r = locate_rows(table, table.scores[ia], table.scores)[:, None]  # every opponent score
        flags = table.banks(r, np.arange(1, cap + 1)[None, :], m)  # (S, cap): turn points 50 .. cap
        out[ia] = np.where(flags.any(axis=1), (flags.argmax(axis=1) + 1) * UNIT, np.nan)
    return table.scores * UNIT, out


def plot_bank_heatmap(rules: Rules, path: Path) -> Path:
    """Heat maps of the smallest turn total the optimal player banks, per number of dice in hand."""
    plt = _pyplot()
    table = policy_table(rules, 2)
    d = rules.dice
    cols = 3
    rows_n = (d + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(14, 4.6 * rows_n + 0.6), squeeze=False, layout="constrained")
    opened = BankRules.of(rules).opened(table.scores)  # scores in units
    sc = table.scores[opened] * UNIT
    ext = (sc.min() - UNIT / 2, sc.max() + UNIT / 2, sc.min() - UNIT / 2, sc.max() + UNIT / 2)
    vmax = 2000
    image = None
    from matplotlib.colors import ListedColormap  # lazy: optional dependency (extra 'plot')
    from matplotlib.patches import Patch  # lazy: optional dependency (extra 'plot')

    cmap = plt.get_cmap("viridis").copy()
    cmap.set_bad(NEVER_COLOUR)  # never banks (NaN)
    capped_map = ListedColormap([CAPPED_COLOUR])
    for m in range(1, d + 1):
        ax = axes.flat[m - 1]
        _, grid = smallest_bank(table, m)
        sub = grid[np.ix_(opened, opened)]
        shown = np.ma.masked_invalid(np.where(sub >= vmax, np.nan, sub))
        never = np.isnan(sub)
        image = ax.imshow(np.ma.masked_where(never, shown.filled(np.nan)), origin="lower", extent=ext, cmap=cmap,
                          vmin=0, vmax=vmax, aspect="equal", interpolation="nearest")
        capped = np.ma.masked_where(~(sub >= vmax), np.ones_like(sub))
        ax.imshow(capped, origin="lower", extent=ext, cmap=capped_map, vmin=0, vmax=1, aspect="equal",
                  interpolation="nearest")
        ax.set_title(f"{m} {'die' if m == 1 else 'dice'} in hand", fontsize=11)
        ax.set_xlabel("opponent's score")
        ax.set_ylabel("my score")
    for ax in list(axes.flat)[d:]:
        ax.axis("off")
    cbar = fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.85, pad=0.02)
    cbar.set_label("smallest turn total banked (points)")
    fig.legend(handles=[Patch(color=CAPPED_COLOUR, label=f"banks only with {vmax} or more (capped)"),
                        Patch(color=NEVER_COLOUR, label="never banks with this many dice")],
               loc="outside lower center", ncol=2, frameon=False)
    fig.suptitle(f"When the optimal player banks ({rules.name}, both players opened)", fontsize=13)
    return save_figure(fig, path, dpi=100)


def plot_win_chance(rules: Rules, path: Path, opponents: Sequence[int] | None = None) -> Path:
    """Chance to win at the start of my turn against (my score - opponent's score), per opponent score."""
    plt = _pyplot()
    result = solve(rules, "win")
    w = result.tables[0]  # seat 0 (who opens each round) under last_round
    grid = ScoreGrid.of(rules)
    scores = grid.scores
    g = rules.goal
    if opponents is None:
        opponents = [0, g // 5, 2 * g // 5, 3 * g // 5, 4 * g // 5]
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for opp in opponents:
        b = opp // UNIT
        if not grid.valid(b):
            b = int(scores[np.searchsorted(scores, b)])
        vals = w[scores, b]
        label = "opponent not opened" if b == 0 and rules.opening else f"opponent at {b * UNIT}"
        line, = ax.plot((scores[1:] - b) * UNIT, vals[1:], linewidth=1.6, label=label)
        if rules.opening:  # me not opened: one point, apart from the opened scores
            ax.plot([(0 - b) * UNIT], [vals[0]], marker="o", markerfacecolor="none", color=line.get_color())
        else:
            ax.plot([(0 - b) * UNIT], [vals[0]], marker=".", color=line.get_color())
    ax.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    ax.axvline(0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_xlabel("my score − opponent's score (points)")
    ax.set_ylabel("chance to win (start of my turn)")
    ax.set_ylim(0, 1)
    ax.set_title(f"Winning chance against the score difference ({rules.name}, optimal play)")
    if rules.opening:
        ax.plot([], [], marker="o", markerfacecolor="none", color="black", linestyle="none",
                label="me not opened (score 0)")
    ax.legend(loc="lower right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path, dpi=110)


def figure_paths(rules: Rules, directory: Path) -> list[Path]:
    """The three figures `write_figures` writes for `rules` into `directory`."""
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in rules.name)
    return [Path(directory) / f"{safe}-{kind}.png" for kind in ("bank-regions", "bank-heatmap", "win-chance")]


def write_figures(rules: Rules, directory: Path) -> list[Path]:
    """Write the three figures of `rules` into `directory` (created); return their paths."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    _pyplot()
    regions, heatmap, chance = figure_paths(rules, directory)
    return [plot_bank_regions(rules, regions), plot_bank_heatmap(rules, heatmap), plot_win_chance(rules, chance)]


def plot_presets(rows: Sequence[RulesetComparison], path: Path, three: dict[str, Any] | None = None) -> Path:
    """The rulesets side by side: first player's edge (two players solved; three players' first seat, when
    solved), mean game length, and the best fixed threshold's win rate against optimal."""
    plt = _pyplot()
    names = [r.rules for r in rows]
    x = np.arange(len(names))
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.8))
    edge2 = [100 * (r.solved_first_player_win - 0.5) for r in rows]
    ax = axes[0]
    width = 0.38
    ax.bar(x - width / 2, edge2, width, color="#5b8e7d", label="2 players: first − 50%")
    if three:
        edge3 = [100 * (three[n]["win"][0] - 1 / 3) if n in three and three[n].get("solved") else np.nan
                 for n in names]
        ax.bar(x + width / 2, edge3, width, color="#f4a259", label="3 players: first seat − 33.3%")
        for i, v in enumerate(edge3):
            if np.isnan(v):
                ax.text(x[i] + width / 2, 0.1, "not solved", rotation=90, ha="center", va="bottom", fontsize=8)
    ax.axhline(0, color="grey", linewidth=0.8)
    ax.set_ylabel("first player's edge (points of win chance)")
    ax.set_title("First-player advantage (solved)")
    ax.legend(fontsize=8, loc="upper left")
    ax = axes[1]
    ax.bar(x, [r.mean_turns for r in rows], color="#6c8ebf")
    ax.set_ylabel("turns of both players (mean)")
    ax.set_title("Game length (optimal vs optimal)")
    ax = axes[2]
    rates = [100 * (1 - r.optimal_vs_best_threshold.rate) for r in rows]
    errs = [100 * r.optimal_vs_best_threshold.half_width for r in rows]
    ax.bar(x, rates, yerr=errs, capsize=3, color="#b07aa1")
    ax.axhline(50, color="grey", linewidth=0.8, linestyle="--")
    ax.set_ylabel("win rate against optimal (%)")
    ax.set_title("Best fixed threshold vs optimal\n(bars: 95% interval)")
    for ax in axes:
        ax.set_xticks(x)
        ax.set_xticklabels(names, rotation=30, ha="right")
        ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return save_figure(fig, path, dpi=100)


def check_plot_target(path: Path) -> None:
    """Refuse a figure file before any work: matplotlib missing, a format it does not write, a target in the way."""
    _pyplot()
    if Path(path).suffix.lower() not in FORMATS:
        raise CinqmilleError(f"{path}: a figure is written as .png, .svg or .pdf")
    check_target(Path(path), links=False)
    check_folder(Path(path))


def plot_distribution(report: DistReport, path: Path) -> None:
    """Draw a `research.distribution.DistReport`: the turn's points, and each turn count beside it (atomically)."""
    plt = _pyplot()
    panels = 1 + len(report.counts)
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4), squeeze=False)
    ax = axes[0, 0]
    points = sorted(report.points.points.items())
    ax.bar([x for x, _ in points], [p for _, p in points], width=40, color="#2e86c1", label="banked")
    wins = sorted(report.points.wins.items())
    if wins:
        ax.bar([t + report.rules.goal for t, _ in wins], [p for _, p in wins], width=40, color="#c0392b",
               label="instant win (turn + goal)")
    ax.axvline(report.points.mean, color="black", linestyle="--", linewidth=1, label=f"mean {report.points.mean:.1f}")
    pos = report.position
    against = pos.opp if pos.others is None else ", ".join(str(x) for x in pos.others)
    ax.set_title(f"'{report.rules.name}': {pos.me} v {against}, turn {pos.turn}, {report.objective} policy")
    ax.set_xlabel("points banked by the turn")
    ax.set_ylabel("chance")
    ax.legend()
    for k, count in enumerate(report.counts, 1):
        ax = axes[0, k]
        ax.bar(np.arange(1, len(count.chances) + 1), count.chances, color="#27ae60")
        ax.set_title(count.what[:70], fontsize=9)
        ax.set_xlabel(f"turns (mean {count.mean:.2f})")
        ax.set_ylabel("chance")
    fig.tight_layout()
    save_figure(fig, path)


def plot_card(report: CardSearch, path: Path) -> None:
    """Draw a strategy card (`research.card.CardSearch`) on one printable page (A4), atomically: the rule in
    words, its cost against the optimal player, the bust odds, and the card's bank-or-roll picture."""
    from matplotlib.colors import ListedColormap  # lazy: optional dependency (extra 'plot')

    plt = _pyplot()
    rules, card = report.rules, report.card
    fig = plt.figure(figsize=(8.27, 11.69))
    lines = [f"Strategy card: 5000, rules '{rules.name}' (goal {rules.goal}, {rules.dice} dice)", ""]
    for sentence in card.statement(rules):
        lines += textwrap.wrap(sentence, 92) + [""]
    cost, thr = report.card_eval, report.threshold_eval
    lines += [f"Against the optimal player this card wins {100 * cost.chance:.1f}% of its games (half in each seat):",
              f"it costs {100 * cost.cost:.1f} points of win chance; the best fixed threshold "
              f"({report.threshold.lines[0]}) costs {100 * thr.cost:.1f}.",
              "Exact evaluation (no simulation): the game's chain over score pairs."]
    fig.text(0.07, 0.96, "\n".join(lines), va="top", ha="left", family="DejaVu Sans", fontsize=9.5)
    odds = bust_odds(rules)[0]
    ax = fig.add_axes((0.2, 0.50, 0.73, 0.12))
    ax.axis("off")
    ax.set_title("Chance that a roll scores nothing (bust)", fontsize=10)
    table = ax.table(cellText=[[f"{m}" for m in sorted(odds)], [f"{100 * float(odds[m]):.1f}%" for m in sorted(odds)]],
                     rowLabels=["dice rolled", "bust"], loc="center", cellLoc="center")
    table.scale(1, 1.6)
    top = max(max(card.lines) + card.behind, 1000) // 50 + 4
    unit = 50
    me = max(rules.opening, rules.goal * 2 // 5 // unit * unit)
    diff = card.gap + max(unit, rules.goal // 10 // unit * unit)
    gaps = [(f"level scores ({me} each)", me, me)]
    if (card.behind or card.ahead) and me + diff < rules.goal:
        gaps = [(f"behind by {diff} ({me} v {me + diff})", me, me + diff), gaps[0],
                (f"ahead by {diff} ({me + diff} v {me})", me + diff, me)]
    cmap = ListedColormap(["#f5b041", "#5dade2"])
    for k, (label, me, opp) in enumerate(gaps):
        ax = fig.add_axes((0.07 + k * 0.30, 0.08, 0.25, 0.36))
        moves = card_moves(rules, card, me, opp, top)
        ax.imshow(moves.astype(int), origin="lower", aspect="auto", cmap=cmap, vmin=0, vmax=1,
                  extent=(0.5, rules.dice + 0.5, -25, top * 50 + 25))
        ax.set_xticks(range(1, rules.dice + 1))
        ax.set_xlabel("dice in hand", fontsize=8)
        ax.set_ylabel("turn points" if k == 0 else "", fontsize=8)
        ax.set_title(label, fontsize=8)
        ax.tick_params(labelsize=7)
    fig.text(0.07, 0.46, "Bank (blue) or roll (orange), by the card, with the turn points set aside and the dice "
             "in hand", fontsize=9)
    save_figure(fig, path)


def plot_ablation(ablation: "Ablation", path: Path) -> None:
    """Draw an ablation (`research.ablate.Ablation`), atomically: the first player's edge change of each change
    from the base, and the game's length (mean, the 10% to 90% quantiles) of each ruleset."""
    plt = _pyplot()
    rows = ablation.rows
    labels = [r.label for r in rows]
    y = np.arange(len(rows))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 0.45 * len(rows) + 1.8), sharey=True)
    base = rows[0].first
    left.barh(y, [100 * (r.first - base) for r in rows], color="#2e86c1")
    left.axvline(0, color="black", linewidth=0.8)
    left.set_yticks(y, labels)
    left.invert_yaxis()
    left.set_xlabel("first player's chance minus the base's (points)")
    left.set_title(f"One rule changed at a time from '{ablation.base}'", fontsize=10)
    for i, r in enumerate(rows):
        n = r.length
        if n is None:
            right.text(0.5, i, "not computed", va="center", fontsize=8, color="#7f8c8d")
            continue
        lo, hi = quantile(n, 0.1), quantile(n, 0.9)
        right.errorbar(n.mean, i, xerr=[[n.mean - lo], [hi - n.mean]], fmt="o", color="#27ae60", capsize=3)
    right.set_xlabel("turns of a game, both players optimal (mean, 10% to 90%)")
    right.set_xlim(left=0)
    fig.tight_layout()
    save_figure(fig, path)
