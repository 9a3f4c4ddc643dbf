"""The results page `docs/variants.md`: findings in sentences, the comparison tables and the figures.

Every number on the page, those in the sentences included, is computed by the
page's one command (`COMMAND`): from the comparison (`compare.compare`), the
three-player figures (`rebuild.three_players`: each preset solved for three
players, three optimal players against the solve, the reduced player at six
players in play; kept beside the figures in `docs/figures/three-players.json`)
and the other sections (`rebuild.extra_sections`); nothing is typed in by hand.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..files import atomic_write
from ..rules import Rules, load_rules, to_dict
from ..solver.budget import MAX_STATES
from ..solver.cache import solver_version
from .markdown import table as _table
from .compare import PLUS_MINUS, CompareConfig, RulesetComparison, agreement, table_rows
from ..solver.api import solve
from ..fair import fair_start
from ..rules import PRESET_NAMES
import datetime

COMMAND = "cinqmille compare --markdown docs/variants.md --plots docs/figures --jobs 2"
RECORD = "three-players.json"


def read_record(directory: Path | None) -> dict[str, Any]:
    """The three-player record in `directory` (empty when there is none)."""
    if directory is None:
        return {}
    path = Path(directory) / RECORD
    return json.loads(path.read_text()) if path.exists() else {}


def write_record(directory: Path | None, record: dict[str, Any]) -> None:
    """Keep the three-player figures in `directory` (atomically; nothing when there is no directory)."""
    if directory is None:
        return
    Path(directory).mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=1, sort_keys=True) + "\n"

    def write(tmp: Path) -> None:
        tmp.write_text(text)

    atomic_write(Path(directory) / RECORD, write)


def _pct(x: float, digits: int = 2) -> str:
    return f"{100 * x:.{digits}f}%"


def _pts(x: float, digits: int = 1) -> str:
    return f"{100 * x:+.{digits}f}"


def _wilson_text(rate: float, games: int, ci: Sequence[float]) -> str:
    return f"{_pct(rate)} ± {100 * (ci[1] - ci[0]) / 2:.2f}"


def rule_differences(name: str, base: str = "standard") -> list[str]:
    """The ruleset keys in which `name` differs from `base` (top-level keys of the TOML form)."""
    try:
        a, b = to_dict(load_rules(name)), to_dict(load_rules(base))
    except Exception:  # noqa: BLE001 - a ruleset given as a file that is gone: no list
        return []
    return [k for k in a if k not in ("name", "description") and a.get(k) != b.get(k)]


def findings(rows: Sequence[RulesetComparison], three: dict[str, Any]) -> list[str]:
    """The page's findings, as sentences computed from the figures."""
    out: list[str] = []
    if not rows:
        return out
    by = {r.rules: r for r in rows}
    base = by.get("standard", rows[0])
    edge = {r.rules: r.solved_first_player_win - 0.5 for r in rows}
    others = [r for r in rows if r.rules != base.rules and r.exact]
    relaxed = [r for r in rows if r.rules != base.rules and not r.exact]

    def differs(r: RulesetComparison) -> str:
        diff = rule_differences(r.rules, base.rules)
        return f"{len(diff)} rule{'s' if len(diff) != 1 else ''}: {', '.join(f'`{k}`' for k in diff)}" if diff else ""

    text = (f"**First-player edge.** With two optimal players the first player wins "
            f"{_pct(base.solved_first_player_win)} under `{base.rules}`, {_pts(edge[base.rules])} points over an "
            f"even game")
    if others:
        moved = sorted(others, key=lambda r: -abs(edge[r.rules] - edge[base.rules]))
        top, least = moved[0], moved[-1]
        text += (f". Of the other rulesets solved exactly, `{top.rules}` moves this edge most: "
                 f"{_pct(top.solved_first_player_win)}, {_pts(edge[top.rules] - edge[base.rules])} points against "
                 f"`{base.rules}` (it differs in {differs(top)})")
        if len(moved) > 1:
            text += (f"; `{least.rules}` moves it least, {_pts(edge[least.rules] - edge[base.rules])} points "
                     f"(it differs in {differs(least)})")
    for r in relaxed:
        text += (f". `{r.rules}`, solved only as a relaxation, gives the first player "
                 f"{_pct(r.solved_first_player_win)} ({_pts(edge[r.rules] - edge[base.rules])} points; "
                 f"simulated under its full rules {_pct(r.simulated_first_player_win.rate)})")
    out.append(text + ".")
    loss = {r.rules: 0.5 - (1 - r.optimal_vs_best_threshold.rate) for r in rows}
    worst = max(rows, key=lambda r: loss[r.rules])
    best = min(rows, key=lambda r: loss[r.rules])
    out.append(
        f"**A rule of thumb.** The best fixed threshold (bank as soon as the turn holds T points or more, "
        f"`threshold:T`) wins {_pct(1 - base.optimal_vs_best_threshold.rate)} of its games against the optimal "
        f"player under `{base.rules}` (T = {base.best_threshold}, both seats), "
        f"{100 * loss[base.rules]:.1f} points short of an even game; it loses most under `{worst.rules}` "
        f"({100 * loss[worst.rules]:.1f} points, T = {worst.best_threshold}) and least under `{best.rules}` "
        f"({100 * loss[best.rules]:.1f} points, T = {best.best_threshold}). The expected-points player, which "
        f"maximises each turn's points, loses only {100 * (base.optimal_vs_expected.rate - 0.5):.1f} points under "
        f"`{base.rules}`. Evaluated exactly rather than simulated, with a strategy card of a few lines that does "
        f"better: see \"A strategy card\" below (`cinqmille card`).")
    how = "exact, from the game's chain" if base.turns_exact else "simulated"
    short = min(rows, key=lambda r: r.mean_turns)
    long_ = max(rows, key=lambda r: r.mean_turns)
    out.append(
        f"**Game length.** A game between two optimal players lasts {base.mean_turns:.1f} turns on average under "
        f"`{base.rules}` (median {base.median_turns:.0f}, turns of both players; "
        f"{how}); the shortest games are "
        f"`{short.rules}`'s ({short.mean_turns:.1f}) and the longest `{long_.rules}`'s ({long_.mean_turns:.1f}). "
        f"A turn ends in a bust {_pct(base.bust_rate, 0)} of the time under `{base.rules}`.")
    seats = {k: v for k, v in three.get("seats", {}).items() if v.get("solved")}
    if seats:
        name = base.rules if base.rules in seats else sorted(seats)[0]
        w = seats[name]["win"]
        two = by[name].solved_first_player_win if name in by else None
        text = (f"**Three players.** With three optimal players under `{name}` the seats win "
                f"{', '.join(_pct(x) for x in w)} in playing order: the first seat is {_pts(w[0] - 1 / 3)} points "
                f"over a fair third and the last {_pts(w[-1] - 1 / 3)}")
        if two is not None:
            text += f" (with two players the first player's edge is {_pts(two - 0.5)} points)"
        if len(seats) > 1:
            edges = {k: v["win"][0] - 1 / 3 for k, v in seats.items()}
            hi, lo = max(edges, key=lambda k: edges[k]), min(edges, key=lambda k: edges[k])
            text += (f"; of the presets solved for three players, the first seat's edge is largest under `{hi}` "
                     f"({_pts(edges[hi])}) and smallest under `{lo}` ({_pts(edges[lo])})")
        out.append(text + ".")
    check = three.get("check", {}).get(base.rules) or next(iter(three.get("check", {}).values()), None)
    if check:
        zs = [s["z"] for s in check["seats"]]
        out.append(
            f"**Simulation against the solve.** {check['games']:,} games of three optimal players under "
            f"`{check['rules']}` give each seat's win rate within {max(abs(z) for z in zs):.1f} standard errors of "
            f"the solved chance (z = {', '.join(f'{z:+.2f}' for z in zs)}).")
    red = three.get("reduction", {})
    if red:
        parts = []
        for n, rec in sorted(red.items(), key=lambda kv: int(kv[0])):
            k = int(n)
            rates = [x["rate"] for x in rec["against_heuristic"]]
            above = sum(x["ci95"][0] > 1 / k for x in rec["against_heuristic"])
            first = rec["all_optimal"][0]["rate"]
            parts.append(f"at {k} players it wins {_pct(min(rates))} to {_pct(max(rates))} (by seat) against "
                         f"{k - 1} copies of `{rec['heuristic']}`, where a fair share is {_pct(1 / k)} (above it, "
                         f"beyond the 95% interval, in {above} of {k} seats); with every seat reduced-optimal the "
                         f"first seat wins {_pct(first)} ({_pts(first - 1 / k)} points over a fair share)")
        out.append("**Four to eight players.** The optimal player reduced to the three-player table (the two "
                   "opponents who threaten most): " + "; ".join(parts) + ".")
    return out




def three_player_section(rows: Sequence[RulesetComparison], three: dict[str, Any]) -> list[str]:
    """The three-player tables: seat chances per preset (beside two players), the simulation check, the
    reduction's cost."""
    out: list[str] = []
    seats = three.get("seats", {})
    by = {r.rules: r for r in rows}
    if seats:
        out += ["## Three players", "",
                "Solved with `solve(rules, players=3)` (`cinqmille solve --players 3`), one preset at a time, by "
                "this page's command (`research/three.py`, `seat_record`); the time is the solve's own (or the "
                "cached solve's when it was read from the cache), on the project's shared two-core machine "
                "(with the load average when the figure was recorded). A preset whose solve is beyond the page's "
                "limit (`three.PAGE_LIMITS`, 250 million turn states and the default memory) is listed with the "
                "budget's estimate (`cinqmille solve --players 3 --rules NAME` solves it). *not exact*: the solve states an "
                "assumption (below): rules outside the three-player model, solved as if off, or bust cycles of "
                "scores on which the players' bank-or-roll choices chase each other as the values are iterated. "
                "Today's solver settles each such cycle exactly: by a stationary pure policy where the iteration "
                "jumped over one, else by the mixed choice that leaves each chasing player indifferent (his bank "
                "probability at the pivot, mixed-policy Bellman "
                "residual at most 1e-12 for every seat; docs/solver.md, \"Cycles that chase\"), and falls back to "
                "averaging only where no settlement exists, which the solve says (`n_player.chase_note`).", ""]
        cells = [["ruleset", "2 players: first", "3 players: first", "second", "third", "first seat − 1/3",
                  "solve time", "turn states"]]
        notes = []
        names = [r.rules for r in rows] + sorted(set(seats) - set(by))
        for name in names:
            rec = seats.get(name)
            two = f"{_pct(by[name].solved_first_player_win)}" if name in by else ""
            if rec is None:
                cells.append([name, two, "not measured", "", "", "", "", ""])
                continue
            if not rec.get("solved"):
                cells.append([name, two, "not solved", "", "", "",
                              "", f"about {rec['estimate_states']:,}, {rec['estimate_gib']:g} GiB (limit "
                                  f"{rec['budget_states']:,})"])
                continue
            mark = "" if rec["exact"] else " (not exact)"
            w = rec["win"]
            raised = rec.get("budget_states", MAX_STATES) > MAX_STATES
            cells.append([name, two, _pct(w[0]) + mark, _pct(w[1]), _pct(w[2]), _pts(w[0] - 1 / 3, 2),
                          f"{rec['seconds']:,.0f} s (load {rec['load_average']})",
                          f"{rec['states']:,}" + (f" (budget raised to {rec['budget_states']:,})" if raised else "")])
            if not rec["exact"]:
                notes.append((name, rec["assumptions"]))
        out += _table(cells)
        dates = sorted({v["date"] for v in seats.values()})
        out += ["", f"Measured {dates[0]} to {dates[-1]}, solver version "
                    f"{', '.join(sorted({v['solver_version'] for v in seats.values()}))}."]
        current = solver_version()
        for name, assumptions in notes:
            rec = seats[name]
            old = rec.get("solver_version") != current and any("averaged" in a for a in assumptions)
            out += ["", f"`{name}` (not exact) assumes" + (
                f" (recorded by solver version {rec.get('solver_version')}, before the chasing cycles were "
                f"settled; the page's command records today's solve)" if old else "") + ":"]
            out += [f"- {a}" for a in assumptions]
        out.append("")
    for rec in three.get("check", {}).values():
        out += ["### Three optimal players, simulated", "",
                f"{rec['games']:,} games of `{rec['rules']}` ({rec['engine']} engine, seed {rec['seed']}, "
                f"{rec['simulate_seconds']:,.0f} s to play, the policy table built included; "
                f"{rec['date']}, load average {rec['load_average']}); {PLUS_MINUS}; *SE* is the binomial standard "
                "error and *z* = (simulated − solved) / SE.", ""]
        cells = [["seat", "simulated", "95% interval", "SE", "solved", "z"]]
        for i, s in enumerate(rec["seats"]):
            cells.append([str(i), _pct(s["rate"]), f"{_pct(s['ci95'][0])} to {_pct(s['ci95'][1])}",
                          f"{100 * s['se']:.2f}", _pct(s["solved"]), f"{s['z']:+.2f}"])
        out += _table(cells) + ["", f"Mean game length {rec['mean_turns']:.1f} turns of all three players "
                                    f"(median {rec['median_turns']:.0f}).", ""]
    red = three.get("reduction", {})
    if red:
        out += ["### Six players: the reduced player in play", "",
                "Beyond the largest exact table the optimal player reads the largest exact table that fits "
                "against the opponents who threaten most (the highest scores, on a tie the one who plays sooner; "
                "`n_player.threatening`), as `advise --opp` does. At four players its cost is measured exactly "
                "(\"The cost of the reduction, measured exactly\", below); at six no exact game exists to measure "
                "it against, so it is estimated in play: the reduced optimal player in each seat against copies "
                "of the best fixed threshold (the `threshold:T` that does best against it on a smaller scan, then "
                "played with a fresh seed), and every seat played by reduced optimal players. " + PLUS_MINUS
                + ".", ""]
        for n, rec in sorted(red.items(), key=lambda kv: int(kv[0])):
            cells = [["seat", f"optimal vs {int(n) - 1} × {rec['heuristic']}", "all seats optimal"]]
            for i in range(int(n)):
                h, a = rec["against_heuristic"][i], rec["all_optimal"][i]
                cells.append([str(i), _wilson_text(h["rate"], rec["games"], h["ci95"]),
                              _wilson_text(a["rate"], rec["games"], a["ci95"])])
            scan = ", ".join(f"{k.split(':')[1]}: {_pct(v, 1)}" for k, v in rec["scan"].items())
            out += [f"{n} players under `{rec['rules']}`: {rec['games']:,} games per line (seed {rec['seed']}; "
                    f"a fair share is {_pct(1 / int(n))}; {rec['engine']} engine; {rec['date']}). Scan (optimal's "
                    f"win rate in seat 0 against T, {rec['scan_games']:,} games, seed {rec['scan_seed']}): {scan}.",
                    ""] + _table(cells) + [""]
    return out


def one_player_section(rows: Sequence[RulesetComparison], rulesets: Sequence[str | Rules] = ()) -> list[str]:
    """Each ruleset side by side: the two-player first seat, the points of a turn, the turns of a race.

    `rulesets` are the compared rulesets (presets, files or values), found by name; a row whose
    ruleset is not among them is read as a preset.
    """
    out = ["## One player's turn and race, side by side", "",
           "Solved exactly for each ruleset (`cinqmille solve --objective expected|race`): the mean points a "
           "turn banks when it maximises them (a bust banks 0), for a player who has opened and for one who "
           "has not; and the mean number of turns one player alone needs to reach the goal from 0, playing to "
           "need the fewest. The first column repeats the two-player first seat.", ""]
    cells = [["ruleset", "first player (2, solved)", "points of a turn (opened)", "points of a turn (not opened)",
              "turns to the goal (alone)"]]
    known = {rules.name: rules for rules in map(load_rules, rulesets)}
    for r in rows:
        rules = known.get(r.rules) or load_rules(r.rules)
        expected, race = solve(rules, "expected"), solve(rules, "race")
        cells.append([r.rules, _pct(r.solved_first_player_win) + ("" if r.exact else " (relaxed)"),
                      f"{expected.expected_turn(opened=True):.1f}", f"{expected.expected_turn(opened=False):.1f}",
                      f"{race.race_turns():.2f}"])
    return out + _table(cells) + [""]


FAIR_HEADING = "## Fair head starts"
#: How the fair head starts section is written alone (`python -m cinqmille.research.page fair`).
FAIR_COMMAND = "python -m cinqmille.research.page fair docs/variants.md"


def fair_section(fairs: Sequence[Any]) -> list[str]:
    """The fair head starts of each preset (`cinqmille.fair.FairStart`, two players), as a Markdown section."""
    if not fairs:
        return []
    out = [FAIR_HEADING, "",
           "The head start of the second player (multiples of 50) that brings the two seats' chances closest to",
           "even under best play (`cinqmille fair`); a head start below the opening does not count as opened: the",
           "player's first bank must still reach the opening, and the head start adds to it. Solved, exact unless",
           f"marked. Written by `{FAIR_COMMAND}` (this section alone). Three players",
           "(`cinqmille fair --players 3`) are not in the table: a three-player solve of a preset takes a minute or",
           "more (`standard`: about 60 s), and the starts below the opening add about half a solve. Only later",
           "seats get a head start: where the second seat is ahead already (a last round), the answer is 0.", ""]
    cells = [["ruleset", "opening", "first player, level start", "head start of the second", "opened",
              "first player, with it"]]
    for f in fairs:
        cells.append([f.rules.name + ("" if f.exact else " (relaxed)"), str(f.rules.opening),
                      _pct(f.win_before[0]), str(f.start[1]), "yes" if f.opened[1] else "no", _pct(f.win_after[0])])
    return out + _table(cells) + [""]


CARD_HEADING = "## A strategy card"
#: How the strategy card section is written alone (`python -m cinqmille.research.page card`).
CARD_COMMAND = "python -m cinqmille.research.page card docs/variants.md"


def card_section(reports: Sequence[Any]) -> list[str]:
    """The strategy card of each ruleset (`research.card.CardSearch`) and its exact cost, as a Markdown section."""
    if not reports:
        return []
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = [CARD_HEADING, "",
           "The best card of `cinqmille card`'s family of rules of thumb and the best fixed threshold, each",
           "evaluated exactly against the optimal player (two players, half of the games in each seat): the card's",
           "turns by a forward pass over the turn's states, the optimal player's from the solved table, the game by",
           "the chain over score pairs solved level by level; no simulation. *cost*: the optimal player's chance",
           f"against it minus 50 %, in points. Written by `{CARD_COMMAND}` (this section alone), {when}.", ""]
    cells = [["ruleset", "card's cost", "best threshold", "its cost", "search"]]
    for r in reports:
        cells.append([r.rules.name, f"{100 * r.card_eval.cost:.2f}", r.threshold.name,
                      f"{100 * r.threshold_eval.cost:.2f}", f"{r.tried} rules, {r.seconds:.0f} s"])
    out += _table(cells) + [""]
    for r in reports:
        out += [f"The card of `{r.rules.name}`:", ""] + [f"- {line}" for line in r.card.statement(r.rules)] + [""]
    return out


def write_fair_section(path: Path, fairs: Sequence[Any]) -> Path:
    """Put the fair head starts section in the page at `path` (`write_section`)."""
    return write_section(path, FAIR_HEADING, fair_section(fairs))


def write_section(path: Path, heading: str, section: list[str]) -> Path:
    """Put `section` (which starts with `heading`) in the page at `path`, in place of the old one, else
    before the figures, leaving the rest of the page as it is."""
    path = Path(path)
    lines = path.read_text().splitlines() if path.exists() else []
    if heading in lines:
        start = lines.index(heading)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    else:
        start = end = lines.index("## Figures") if "## Figures" in lines else len(lines)
    text = "\n".join(lines[:start] + section + lines[end:]).rstrip() + "\n"

    def write(tmp: Path) -> None:
        tmp.write_text(text)

    atomic_write(path, write)
    return path


PLAYERS_HEADING = "## Two, three and four players side by side"
PLAYERS_COMMAND = "python -m cinqmille.research.page players docs/variants.md"


def players_section(rows: Sequence[Any], measured: str = "") -> list[str]:
    """The seats' chances of every preset at small goals for two, three and four players
    (`research.players.players_rows`), as a Markdown section."""
    if not rows:
        return []
    out = [PLAYERS_HEADING, "",
           "Every preset played to a small goal (its opening kept where it is below the goal, else halved; a preset "
           "whose rules need a larger goal, such as `house`'s final stretch from 4000, is left out), solved exactly "
           "for two, three and four players (`cinqmille solve --players N`). The first seat's edge is its chance "
           "above a fair share (1/N), in points; *not exact*: the solve states an assumption (rules outside the "
           "n-player model solved as if off, or chasing bust cycles settled by a mixed choice, RULES.md section 8). "
           f"Written by `{PLAYERS_COMMAND}` (this section alone){measured}.", ""]
    cells = [["ruleset", "goal", "players", "seats' chances", "first seat's edge"]]
    grows = total = 0
    for preset, goal, solves in rows:
        for sc in solves:
            if sc.win is None:
                cells.append([preset, str(goal), str(sc.players), "beyond the default budget", ""])
                continue
            chances = ", ".join(_pct(w) for w in sc.win) + ("" if sc.exact else " (not exact)")
            cells.append([preset, str(goal), str(sc.players), chances, f"{sc.edge:+.2f}"])
        edges = [sc.edge for sc in solves if sc.edge is not None]
        if len(edges) == len(solves) and solves[0].players == 2:
            total += 1
            grows += all(x < y for x, y in zip(edges, edges[1:]))
    summary = (f"The first seat's edge over a fair share grows with every player added in {grows} of the "
               f"{total} rulesets and goals solved for two to four players.")
    return out + _table(cells) + ["", summary, ""]


def fair_presets() -> list[Any]:
    """The fair head start of every preset, two players (each preset solved, from the cache when it is there)."""
    return [fair_start(name) for name in PRESET_NAMES]


def markdown(rows: Sequence[RulesetComparison], config: CompareConfig, figures: Sequence[Path] = (),
             page: Path | None = None, three: dict[str, Any] | None = None, fair: Sequence[Any] = (),
             extra: Sequence[str] = ()) -> str:
    """The Markdown text of the results page (`extra`: the lines of the sections of `rebuild.extra_sections`,
    before the figures)."""
    three = three or {}
    out = [
        "# The variants of 5000 compared",
        "",
        f"Regenerate this page (and its figures), every section of it, with `{COMMAND}`; it is",
        "written by `cinqmille.research.page` and `cinqmille.research.rebuild` and should not be edited by hand",
        f"(the three-player figures are kept beside the figures, in `docs/figures/{RECORD}`).",
        "",
        "## Findings",
        "",
    ]
    for sentence in findings(rows, three):
        out += [sentence, ""]
    out += [
        "## Two players",
        "",
        f"Seed {config.seed}; where the game is a chain over score pairs (two players, solved exactly, no last "
        f"round), the matchups, the threshold scan and the game's length are exact (`cinqmille match`, "
        f"`dist --turns`); elsewhere {config.games:,} games per matchup with the vectorised simulator, "
        f"{config.referee:,} through the referee (a 95% interval of at most ±{config.margin:g} points); the "
        f"simulated first player, bust rate and banked turn are always simulated; {PLUS_MINUS}.",
        "",
        "- *first player*: the chance that the first player wins when both play optimally: solved (exact,",
        "  or of the solver's relaxation when marked) and simulated (optimal against optimal).",
        "- *turns*: game length in turns of both players (exact unless marked simulated); *bust rate*: share of",
        "  turns that end in a bust;",
        "  *banked turn*: mean points of a banked turn (optimal against optimal).",
        "- *optimal vs X*: the optimal player's win rate against X, half of the games in each seat.",
        f"  *best T*: the `threshold:T` of {{{', '.join(map(str, config.thresholds))}}} that does best against",
        "  optimal (exactly; or, simulated, found on a smaller run, then played again with a fresh seed).",
        "",
    ]
    out += _table(table_rows(rows))
    out.append("")
    out.append("Simulated against solved first-player chance, in binomial standard errors: " + ", ".join(
        f"{r.rules} {agreement(r):.1f}" + ("" if r.exact else " (relaxed solve, full rules played)") for r in rows) + ".")
    for r in [r for r in rows if not r.exact]:
        out.append("")
        out.append(f"`{r.rules}` has rules outside the solved state. The optimal player plays the solver's "
                   "relaxation under the full rules through the referee (see `cinqmille.policies.optimal`); "
                   "the relaxation assumes:")
        out.extend(f"- {a}" for a in r.assumptions)
    out.append("")
    out.append("Threshold scan (optimal's win rate against `threshold:T`; exact, or simulated on a smaller run):")
    out.append("")
    ts = sorted({t for r in rows for t, _ in r.threshold_scan})
    out.append("| ruleset | " + " | ".join(f"T={t}" for t in ts) + " |")
    out.append("|---|" + "|".join("---" for _ in ts) + "|")
    for r in rows:
        scan = dict(r.threshold_scan)
        out.append(f"| {r.rules} | " + " | ".join(f"{scan[t]:.1%}" if t in scan else "" for t in ts) + " |")
    out.append("")
    out += one_player_section(rows, config.rulesets)
    out += three_player_section(rows, three)
    out += fair_section(fair)
    out += list(extra)
    if figures:
        out += ["## Figures", ""]
        base = page.parent if page is not None else Path(".")
        for f in figures:
            rel = os.path.relpath(f, base)
            title = Path(f).stem.replace("-", " ")
            out += [f"![{title}]({rel})", ""]
    return "\n".join(out).rstrip() + "\n"


def write_page(path: Path, rows: Sequence[RulesetComparison], config: CompareConfig,
               figures: Sequence[Path] = (), three: dict[str, Any] | None = None, fair: Sequence[Any] = (),
               extra: Sequence[str] = ()) -> Path:
    """Write the page to `path` (directories created)."""
    path = Path(path)
    text = markdown(rows, config, figures, path, three, fair, extra)

    def write(tmp: Path) -> None:
        tmp.write_text(text)

    atomic_write(path, write)
    return path


#: How the ablation section is written alone.
ABLATE_COMMAND = "python -m cinqmille.research.page ablate docs/variants.md [RULESET]"

if __name__ == "__main__":  # python -m cinqmille.research.page fair|players|reduction|estimates|card|ablate PAGE
    import sys
    import time

    from . import exactness

    modes = ("fair", "players", "reduction", "estimates", "card", "ablate")
    more = ("card", "ablate", "reduction", "estimates")  # the modes that take more words: rulesets, goals
    goals = [g for g in sys.argv[3:] if g.isdigit()] if sys.argv[1:2] in (["reduction"], ["estimates"]) else []
    if len(sys.argv) < 3 or sys.argv[1] not in modes or (len(sys.argv) > 3 and sys.argv[1] not in more) \
            or (sys.argv[1] in ("reduction", "estimates") and len(goals) != len(sys.argv) - 3):
        sys.exit("usage: " + "\n       ".join((FAIR_COMMAND, PLAYERS_COMMAND, exactness.COMMAND + " [GOAL ...]",
                                                 exactness.GAPS_COMMAND + " [GOAL ...]",
                                                 CARD_COMMAND + " [RULESET ...]", ABLATE_COMMAND)))
    begun = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if sys.argv[1] == "fair":
        write_fair_section(Path(sys.argv[2]), fair_presets())
    elif sys.argv[1] == "players":
        from ..rules import PRESET_NAMES
        from .players import players_rows

        found = players_rows(PRESET_NAMES)
        write_section(Path(sys.argv[2]), PLAYERS_HEADING, players_section(
            found, f"; computed {begun}"))
    elif sys.argv[1] == "ablate":
        from . import ablate

        table = ablate.ablate(load_rules(sys.argv[3] if len(sys.argv) > 3 else "standard"))
        write_section(Path(sys.argv[2]), ablate.HEADING, ablate.section(table))
    elif sys.argv[1] == "card":
        from ..rules import load_rules
        from .card import card_report

        names = sys.argv[3:] or ["standard"]
        write_section(Path(sys.argv[2]), CARD_HEADING, card_section([card_report(load_rules(n)) for n in names]))
    elif sys.argv[1] == "estimates":
        write_section(Path(sys.argv[2]), exactness.GAPS_HEADING,
                      exactness.gaps_section(exactness.measure_gaps(  # a goal given: the played game evaluated too
                          tuple(sorted(set(exactness.ESTIMATE_GOALS) | {int(g) for g in goals})),
                          exactness.GOALS + tuple(int(g) for g in goals)), f"; computed {begun}"))
    else:
        write_section(Path(sys.argv[2]), exactness.HEADING,
                      exactness.section(exactness.measure_costs(
                          tuple(sorted(set(exactness.GOALS) | {int(g) for g in goals}))), f"; computed {begun}"))
