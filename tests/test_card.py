"""`cinqmille card`: the exact evaluation of a policy against the optimal player, the card family, the page."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.table.policy import policy_of
from cinqmille.cli import main
from cinqmille.errors import CinqmilleError
from cinqmille.research.card import Card, CardRows, card_report, card_turns, evaluate, evaluate_turns
from cinqmille.research.distribution import GameChain, optimal_turns, pair_turns
from cinqmille.rules import rules_from_dict
from cinqmille.simulation.runner import SimConfig, simulate
from cinqmille.solver import solve
from cinqmille.table.turn_dist import turn_distribution
from cinqmille.table.turn_eval import turn_expectation
from cinqmille.table.locate import locate_rows

from small_rulesets import TURN_RULESETS

pytestmark = pytest.mark.usefixtures("session_cache")

RULESETS = {
    **TURN_RULESETS,
    "stretch": {"goal": 600, "opening": 150, "min_bank": 100, "final_stretch": {"from": 400, "cap": True}},
}
#: A chance computed two exact ways agrees to this.
EXACT_TOL = 1e-9
SOME_CARD = Card((200, 150, 200, 250, 300), gap=100, behind=50, ahead=50, keep="few", die=50, near=150, chase=100)


def _rules(name: str):  # type: ignore[no-untyped-def]
    return rules_from_dict(RULESETS[name], name)


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_optimal_against_itself_is_the_solved_chance(name: str) -> None:
    """The optimal policy evaluated against the optimal player wins the solved first-player chance moving first
    and its complement moving second, to 1e-9; with one kind of player the chain's chances are the solved table."""
    rules = _rules(name)
    result = solve(rules, "win")
    turns = optimal_turns(result)
    ev = evaluate_turns(result, turns, "optimal")
    assert abs(ev.first - result.first_player_win) < EXACT_TOL
    assert abs(ev.second - (1 - result.first_player_win)) < EXACT_TOL
    scores = policy_of(result).scores
    v = GameChain.of(rules, scores, (turns,)).win_chances()[0]
    assert np.abs(v - result.tables[0][np.ix_(scores, scores)]).max() < EXACT_TOL


@pytest.mark.parametrize("name", sorted(RULESETS))
def test_pair_turns_are_the_turn_distributions_and_their_mean_the_backward_pass(name: str) -> None:
    """`pair_turns` (every score pair at once) gives, pair by pair, the chances of the one-row forward pass
    (`turn_distribution`) to 1e-12 beyond the chance either leaves past its horizon, for the solved policy and
    for a card; for the solved policy the mean points
    equal the backward pass's expected points (`turn_expectation`, advise's figure) to 1e-9."""
    rules = _rules(name)
    result = solve(rules, "win")
    policy = policy_of(result).complete()
    scores = policy.scores
    s, top = len(scores), rules.goal // 50
    card = CardRows(rules, SOME_CARD, scores, policy.mover_caps[:s])
    i = np.repeat(np.arange(s), s).reshape(s, s)
    card_rows = card.row(i, scores[:, None], scores[None, :])
    policy_rows = locate_rows(policy, scores[:, None], scores[None, :])
    for block, rows in [(policy, policy_rows), (card, card_rows)]:
        turns = pair_turns(block, rows, scores, top)
        for ia, ib in [(0, 0), (s - 1, 0), (1, s - 1), (s // 2, s // 3)]:
            dist = turn_distribution(block, int(rows[ia, ib]), int(scores[ia]))
            want = np.zeros(top + 1)
            for x, p in dist.points.items():
                want[min(x // 50, top)] += p
            within = 1e-12 + dist.truncated + turns.lost  # the two passes stop at their own horizons (reach)
            assert np.abs(turns.gains[ia, ib] - want).max() < within
            assert abs(turns.win[ia, ib] - dist.win) < within
            if block is policy:
                e = turn_expectation(policy, int(rows[ia, ib]), int(scores[ia])).state(0, rules.dice)
                assert abs(dist.mean - float(e)) < 1e-9


def test_threshold_agrees_with_simulation() -> None:
    """`threshold:200`'s exact chance against optimal, in each seat, is within 4 standard errors of a seeded
    simulation of 40,000 games per seat."""
    rules = _rules("tiny")
    result = solve(rules, "win")
    ev = evaluate(result, Card.threshold(rules, 200))
    games = 40_000
    for players, seat, want in [(("threshold:200", "optimal"), 0, ev.first), (("optimal", "threshold:200"), 1,
                                                                              ev.second)]:
        sim = simulate(SimConfig(rules, players, games, seed=11))
        se = math.sqrt(want * (1 - want) / games)
        assert abs(sim.win_rate[seat] - want) < 4 * se, (players, sim.win_rate, want)


def test_the_threshold_card_is_a_card_of_uniform_lines() -> None:
    """`Card.threshold` is the card with every line at T and the most points set aside: the same evaluation."""
    rules = _rules("tiny")
    result = solve(rules, "win")
    a = evaluate(result, Card.threshold(rules, 250))
    b = evaluate(result, Card((250,) * 5, keep="most"))
    assert (a.first, a.second) == (b.first, b.second)
    assert a.cost > 0


def test_a_card_never_banks_what_the_rules_forbid() -> None:
    """Before opening the card rolls on below the opening whatever its lines; it always banks a winning turn."""
    rules = _rules("stretch")
    block = CardRows(rules, Card((0,) * 5), np.array([0, 8]), np.array([12, 4]))
    t = np.arange(13)[:, None]
    for m in range(1, 6):
        moves = block.move(np.zeros((13, 1), dtype=int), t, m)[:, 0]  # row 0: not opened, gap bucket 0
        assert (moves[t[:, 0] * 50 < 150] == 1).all() and (moves[t[:, 0] * 50 >= 150] == 0).all()
    # row 6: banked 400 (the final stretch from 400): only a turn that reaches the goal (200) is banked
    moves = block.move(np.full((13, 1), 6), t, 2)[:, 0]
    assert (moves[:4] == 1).all() and (moves[4:] == 0).all()


def test_statement_is_written_from_the_parameters() -> None:
    """The statement names every parameter of the card, and the report's statement, card and evaluation are
    one object: evaluating the reported card again gives the reported chances."""
    rules = _rules("tiny")
    text = " ".join(SOME_CARD.statement(rules))
    for m, v in enumerate(SOME_CARD.lines, 1):
        assert f"{v} with {m}" in text
    assert "add 50 when behind by more than 100" in text and "take off 50 when ahead by more than 100" in text
    assert "plus 50 per die" in text and "needs 150 or less to win, add 100" in text
    assert SOME_CARD.statement(rules) != Card((200,) * 5).statement(rules)
    report = card_report(rules, SOME_CARD)
    assert report.as_dict()["statement"] == report.card.statement(rules)
    again = evaluate(solve(rules, "win"), report.card)
    assert (again.first, again.second) == (report.card_eval.first, report.card_eval.second)
    assert report.threshold_eval.cost > 0


def test_search_beats_the_best_threshold() -> None:
    """The searched card does at least as well as the best fixed threshold, both evaluated exactly."""
    rules = _rules("tiny")
    report = card_report(rules)
    assert report.card_eval.chance >= report.threshold_eval.chance
    assert report.card_eval.cost == pytest.approx(0.5 - report.card_eval.chance, abs=1e-15)


def test_bad_card_and_unsupported_rules() -> None:
    """A card with the wrong number of lines or lines off the 50-point grid, and a ruleset with a last round,
    are refused with a `CinqmilleError`."""
    rules = _rules("tiny")
    with pytest.raises(CinqmilleError, match="one bank line per number of dice"):
        card_report(rules, Card((200, 200)))
    with pytest.raises(CinqmilleError, match="multiple of 50"):
        card_report(rules, Card((220,) * 5))
    last = rules_from_dict({"goal": 400, "opening": 0, "last_round": True}, "last")
    with pytest.raises(CinqmilleError, match="last_round"):
        card_turns(solve(last, "win"), SOME_CARD)


def test_cli_json_and_text(tiny_rules_file) -> None:  # type: ignore[no-untyped-def]
    """`card --json` gives the parameters, the statement and both costs; the text states the rule and costs."""
    runner = CliRunner()
    args = ["card", "--rules", str(tiny_rules_file), "--lines", "200,150,200,250,300", "--die", "50"]
    done = runner.invoke(main, args + ["--json"])
    assert done.exit_code == 0, done.output
    data = json.loads(done.output)
    assert data["card"]["lines"] == {"1": 200, "2": 150, "3": 200, "4": 250, "5": 300}
    assert data["evaluation"]["cost_points"] == pytest.approx(100 * (0.5 - data["evaluation"]["chance"]))
    assert data["threshold"]["evaluation"]["cost_points"] > 0
    text = runner.invoke(main, args)
    assert text.exit_code == 0
    assert data["statement"][0] in text.output and "points of win chance" in text.output


def test_cli_bad_input_is_one_line(tiny_rules_file) -> None:  # type: ignore[no-untyped-def]
    """Bad lines and an unsupported ruleset are one line `Error:` and exit status 2."""
    runner = CliRunner()
    for extra in (["--lines", "200,x"], ["--lines", "200,200"]):
        done = runner.invoke(main, ["card", "--rules", str(tiny_rules_file)] + extra)
        assert done.exit_code == 2
        assert done.output.startswith("Error:") and done.output.count("\n") == 1


def test_cli_page(tiny_rules_file, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """`card -o card.pdf` writes one PDF page and leaves no temporary file; without matplotlib, one line, exit 2."""
    pytest.importorskip("matplotlib")
    runner = CliRunner()
    out = tmp_path / "card.pdf"
    done = runner.invoke(main, ["card", "--rules", str(tiny_rules_file), "--lines", "200,150,200,250,300",
                                "-o", str(out)])
    assert done.exit_code == 0, done.output
    data = out.read_bytes()
    assert data.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page\b", data)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["card.pdf"]


def test_cli_page_without_matplotlib(tiny_rules_file, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Without matplotlib the page is refused before any work: one line `Error:`, exit status 2, no file."""
    import cinqmille.research.plots as plots

    def missing():  # type: ignore[no-untyped-def]
        raise CinqmilleError("plots need matplotlib: pip install 'cinqmille[plot]'")

    monkeypatch.setattr(plots, "_pyplot", missing)
    done = CliRunner().invoke(main, ["card", "--rules", str(tiny_rules_file), "-o", str(tmp_path / "c.pdf")])
    assert done.exit_code == 2 and done.output.startswith("Error: plots need matplotlib")
    assert not list(tmp_path.iterdir())
