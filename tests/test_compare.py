"""`compare`: per-ruleset figures agree with the solver, figures are written, the page is regenerated."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.research.compare import CompareConfig, compare_ruleset
from cinqmille.rules import load_rules, rules_from_dict
from cinqmille.solver import solve

pytestmark = pytest.mark.usefixtures("session_cache")

TINY = rules_from_dict({"name": "tiny1000", "goal": 1000, "opening": 300})


def test_compare_ruleset_agrees_with_solver() -> None:
    """The simulated first-player chance lies within 3 SE of the solved one; optimal beats the heuristics."""
    row = compare_ruleset(TINY, CompareConfig(("tiny",), games=20_000, thresholds=(200, 300), seed=1))
    solved = solve(TINY, "win").first_player_win
    assert row.solved_first_player_win == solved and row.exact and row.engine == "vectorised"
    sim = row.simulated_first_player_win
    assert abs(sim.rate - solved) < 3 * sim.se
    assert row.best_threshold in (200, 300)
    for rate in (row.optimal_vs_expected, row.optimal_vs_cautious, row.optimal_vs_best_threshold):
        assert rate.rate > 0.5 - 2 * rate.se  # the optimal player is never worse beyond noise
    assert row.optimal_vs_cautious.rate > 0.5 + 3 * row.optimal_vs_cautious.se


def test_compare_three_players_reads_the_three_player_solve() -> None:
    """With three seats every seat's simulated rate lies within 3 SE of the exact three-player solve."""
    tiny = rules_from_dict({"name": "tiny600", "goal": 600, "opening": 0})
    row = compare_ruleset(tiny, CompareConfig(("tiny",), games=12_000, thresholds=(100, 200), seed=2, players=3))
    solved = solve(tiny, "win", players=3).win
    assert row.players == 3 and row.solved_win == solved and row.solved_first_player_win == solved[0]
    assert len(row.simulated_win) == 3 and sum(r.rate for r in row.simulated_win) == pytest.approx(1.0)
    for sim, exact in zip(row.simulated_win, solved):
        assert abs(sim.rate - exact) < 3 * sim.se
    assert row.optimal_vs_cautious.games == 3 * (12_000 // 3)  # the optimal player in each of the three seats
    assert row.optimal_vs_cautious.rate > 1 / 3 + 3 * row.optimal_vs_cautious.se


def test_compare_command_three_players(tiny_rules_file) -> None:
    """`compare --players 3` prints every seat; it refuses the two-player page in one line."""
    runner = CliRunner()
    out = runner.invoke(main, ["compare", "--rules", str(tiny_rules_file), "--players", "3", "--games", "600",
                               "--thresholds", "200"])
    assert out.exit_code == 0, out.output
    assert "tiny: every seat solved " in out.output and "copies of X" in out.output
    data = json.loads(runner.invoke(main, ["compare", "--rules", str(tiny_rules_file), "--players", "3",
                                           "--games", "600", "--thresholds", "200", "--json"]).output)
    assert data["players"] == 3 and len(data["rulesets"][0]["solved_win"]) == 3
    bad = runner.invoke(main, ["compare", "--rules", str(tiny_rules_file), "--players", "3", "--markdown", "x.md"])
    assert bad.exit_code == 2 and "two-player page" in bad.output and "Traceback" not in bad.output


def test_compare_command_writes_figures_and_page(tmp_path, tiny_rules_file, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """`compare --plots --markdown --json` writes three PNGs and a page naming its own command and the figures,
    with the sections of `rebuild.extra_sections` before the figures (stubbed here; computed in the slow test)."""
    pytest.importorskip("matplotlib")
    from cinqmille.research import rebuild

    monkeypatch.setattr(rebuild, "extra_sections", lambda rulesets: ["## Stub section", "", "every section", ""])
    page = tmp_path / "docs" / "variants.md"
    figs = tmp_path / "docs" / "figures"
    out = CliRunner().invoke(main, ["compare", "--rules", str(tiny_rules_file), "--games", "2000",
                                    "--thresholds", "200,300", "--plots", str(figs), "--markdown", str(page), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert [r["rules"] for r in data["rulesets"]] == ["tiny"]
    assert len(data["figures"]) == 3
    for f in data["figures"]:
        with open(f, "rb") as handle:
            assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    text = page.read_text()
    assert "cinqmille compare --markdown docs/variants.md" in text
    assert "| tiny |" in text and "](figures/tiny-bank-regions.png)" in text
    for heading in ("## Fair head starts", "## Stub section"):
        assert heading in text and text.index(heading) < text.index("## Figures")


@pytest.mark.slow
def test_the_page_command_writes_every_section(tmp_path, tiny_rules_file) -> None:  # type: ignore[no-untyped-def]
    """The page's one command writes the card and the ablation of the first ruleset (a tiny one: no preset, so no
    players or reduction section) before the figures."""
    page = tmp_path / "variants.md"
    out = CliRunner().invoke(main, ["compare", "--rules", str(tiny_rules_file), "--games", "500",
                                    "--thresholds", "200", "--markdown", str(page)])
    assert out.exit_code == 0, out.output
    text = page.read_text()
    for heading in ("## Fair head starts", "## A strategy card", "## One rule changed at a time"):
        assert heading in text
    assert "| end = \"exact\" |" in text


def test_compare_rejects_bad_input(tiny_rules_file) -> None:
    """A bad threshold grid or an unknown ruleset is one line and exit status 2."""
    runner = CliRunner()
    bad = runner.invoke(main, ["compare", "--rules", str(tiny_rules_file), "--thresholds", "275"])
    assert bad.exit_code == 2 and "multiple of 50" in bad.output
    bad = runner.invoke(main, ["compare", "--rules", "nope-not-a-preset"])
    assert bad.exit_code == 2


def _row(name: str, first: float, turns: float, vs_t: float, exact: bool = True):  # type: ignore[no-untyped-def]
    from cinqmille.research.compare import Rate, RulesetComparison

    rate = Rate(0.55, 0.0025, 40_000)
    return RulesetComparison(name, exact, () if exact else ("crosses: off",), "vectorised", first, rate, turns,
                             round(turns), 0.49, 577.0, rate, Rate(0.6, 0.0025, 40_000), 200,
                             Rate(vs_t, 0.0024, 40_000), ((200, vs_t), (300, 0.65)), 1.0)


def test_terminal_table_fits_100_columns() -> None:
    """`compare`'s terminal lines are at most 100 characters, with long ruleset names and relaxed marks."""
    from cinqmille.research.compare import TERMINAL_WIDTH, terminal_table

    rows = [_row("standard", 0.5258, 27.0, 0.6117), _row("farkle-cardgames", 0.5456, 18.7, 0.6956),
            _row("a-very-long-ruleset-file-name-indeed", 0.45, 51.9, 0.60, exact=False)]
    lines = terminal_table(rows)
    assert TERMINAL_WIDTH == 100 and max(len(line) for line in lines) <= 100
    assert any("±" in line for line in lines) and any("95% interval" in line for line in lines)


def test_page_states_findings_computed_from_the_figures() -> None:
    """The page's sentences name the ruleset that moves the first-player edge most, the rule of thumb's loss
    and the game lengths, from the rows given; ± is said to be half the 95% interval."""
    from cinqmille.research.compare import CompareConfig
    from cinqmille.research.page import markdown

    rows = [_row("standard", 0.5258, 27.0, 0.6117), _row("six-dice", 0.5456, 18.7, 0.6956),
            _row("house", 0.5183, 36.7, 0.5778)]
    three = {"seats": {"standard": {"solved": True, "win": [0.3611, 0.3323, 0.3066], "exact": True,
                                    "assumptions": [], "seconds": 1696.0, "states": 142040180,
                                    "load_average": 3.5, "date": "2026-12-01 07:00 UTC", "solver_version": "x"}}}
    text = markdown(rows, CompareConfig(("standard",)), three=three)
    assert "`six-dice` moves this edge most" in text and "+2.0 points against `standard`" in text
    assert "`house` moves it least" in text
    assert "wins 38.83% of its games against the optimal player" in text  # 1 - 0.6117
    assert "shortest games are `six-dice`'s (18.7)" in text and "longest `house`'s (36.7)" in text
    assert "36.11%, 33.23%, 30.66%" in text and "half the width of the 95% interval" in text
    assert "| standard | 52.58% | 36.11% |" in text


def test_heatmap_tells_never_from_capped() -> None:
    """The heat map's 'never' and 'capped' colours differ from each other and from the colour scale's ends."""
    from cinqmille.research import plots

    pytest.importorskip("matplotlib")
    import matplotlib

    ends = {matplotlib.colors.to_hex(matplotlib.colormaps["viridis"](x)) for x in (0.0, 1.0)}
    assert plots.NEVER_COLOUR != plots.CAPPED_COLOUR and not {plots.NEVER_COLOUR, plots.CAPPED_COLOUR} & ends


def test_one_player_section_reads_the_one_player_solves() -> None:
    """The side-by-side table shows each ruleset's expected turn and race from the solver, as `solve --json` does."""
    import json
    from types import SimpleNamespace

    from click.testing import CliRunner

    from cinqmille.cli import main
    from cinqmille.research.page import one_player_section

    rows = [SimpleNamespace(rules="standard", solved_first_player_win=0.5, exact=True)]
    text = "\n".join(one_player_section(rows))  # type: ignore[arg-type]
    runner = CliRunner()
    expected = json.loads(runner.invoke(main, ["solve", "--objective", "expected", "--json"]).output)
    race = json.loads(runner.invoke(main, ["solve", "--objective", "race", "--json"]).output)
    line = next(x for x in text.splitlines() if x.startswith("| standard |"))
    assert line == (f"| standard | 50.00% | {expected['expected_turn_opened']:.1f} | "
                    f"{expected['expected_turn_not_opened']:.1f} | {race['race_turns_from_zero']:.2f} |")


def test_compare_is_exact_where_the_game_is_a_chain() -> None:
    """Where the game is a chain over score pairs, the matchups, the scan and the game's length are the exact
    ones (`match`, `game_length`: no games, no ±); the best T is the best of the grid."""
    from cinqmille.research.distribution import game_length
    from cinqmille.research.match import match

    row = compare_ruleset(TINY, CompareConfig(("tiny",), games=2_000, thresholds=(200, 300), seed=1))
    assert row.turns_exact and row.optimal_vs_expected.exact and row.optimal_vs_expected.text() == \
        f"{100 * row.optimal_vs_expected.rate:.2f}%"
    assert row.optimal_vs_expected.rate == match(TINY, "optimal", "expected").chance
    assert row.optimal_vs_cautious.rate == match(TINY, "optimal", "cautious").chance
    scan = dict(row.threshold_scan)
    assert scan == {t: match(TINY, "optimal", f"threshold:{t}").chance for t in (200, 300)}
    assert row.best_threshold == min(scan, key=lambda t: scan[t])
    assert row.mean_turns == game_length(solve(TINY, "win")).mean


def test_compare_with_a_last_round_plays_as_many_games_as_the_margin_asks() -> None:
    """A last round is not a chain: the matchups go through the referee with `games_for_margin(margin)` games,
    whose 95% interval is then at most the margin either side; the game length is marked simulated."""
    from cinqmille.research.compare import games_for_margin, table_rows

    assert games_for_margin(0.5) == 38_416 and CompareConfig(("x",)).referee == 38_416
    last = rules_from_dict({"name": "last600", "goal": 600, "opening": 150, "last_round": True})
    config = CompareConfig(("last600",), thresholds=(200,), seed=3, margin=5.0)
    row = compare_ruleset(last, config)
    assert row.engine == "referee" and not row.turns_exact
    assert row.optimal_vs_expected.games == games_for_margin(5.0) // 2 * 2
    assert row.optimal_vs_expected.half_width <= 0.05
    assert "(simulated)" in table_rows([row])[1][3]


def test_three_player_section_says_todays_method_and_flags_old_records() -> None:
    """The three-player section describes today's settlement of chasing cycles (a mixed choice, averaging only
    as a fallback); a record of an older solver that averaged is marked as such, with the command that renews it."""
    from cinqmille.research.compare import CompareConfig
    from cinqmille.research.page import markdown

    old = ("three players: on 3 bust cycles of scores (900/900/900) the players' bank-or-roll choices chase each "
           "other and no stationary policy exists; there the values are averaged over the iterations")
    three = {"seats": {"standard": {"solved": True, "win": [0.3611, 0.3323, 0.3066], "exact": False,
                                    "assumptions": [old], "seconds": 60.0, "states": 142040180,
                                    "load_average": 1.0, "date": "2026-12-01 07:00 UTC", "solver_version": "old"}}}
    text = markdown([_row("standard", 0.5258, 27.0, 0.6117)], CompareConfig(("standard",)), three=three)
    assert "leaves each chasing player indifferent" in text and "falls back to averaging only" in text
    assert "recorded by solver version old, before the chasing cycles were settled" in text
    assert "the page's command records today's solve" in text


def test_the_page_lists_a_three_player_solve_beyond_its_limit_with_the_estimate() -> None:
    """A preset whose three-player solve is beyond the page's limit is recorded unsolved with the budget's
    estimate, and the page's row says the estimate and the limit."""
    from cinqmille.research.page import three_player_section
    from cinqmille.research.three import seat_record
    from cinqmille.solver.budget import Limits, estimate

    record = seat_record("standard", Limits(states=1000))
    assert record["solved"] is False and record["budget_states"] == 1000
    assert record["estimate_states"] == estimate(load_rules("standard"), "win", 3).states
    text = "\n".join(three_player_section([_row("standard", 0.5258, 27.0, 0.6117)], {"seats": {"standard": record}}))
    assert f"about {record['estimate_states']:,}" in text and "(limit 1,000)" in text and "not solved" in text
