"""`compare`: per-ruleset figures agree with the solver, figures are written, the page is regenerated."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.research.compare import CompareConfig, compare_ruleset
from cinqmille.rules import rules_from_dict
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


def test_compare_command_writes_figures_and_page(tmp_path, tiny_rules_file) -> None:
    """`compare --plots --markdown --json` writes three PNGs and a page naming its own command and the figures."""
    pytest.importorskip("matplotlib")
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


def test_compare_rejects_bad_input(tiny_rules_file) -> None:
    """A bad threshold grid or an unknown ruleset is one line and exit status 2."""
    runner = CliRunner()
    bad = runner.invoke(main, ["compare", "--rules", str(tiny_rules_file), "--thresholds", "275"])
    assert bad.exit_code == 2 and "multiple of 50" in bad.output
    bad = runner.invoke(main, ["compare", "--rules", "nope-not-a-preset"])
    assert bad.exit_code == 2
