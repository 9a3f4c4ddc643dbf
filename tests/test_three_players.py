"""The exact three-player solve: checked against the independent N-player brute force, and through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from brute_force_n import brute_force_n
from cinqmille.table.locate import spot
from cinqmille.cli import main
from cinqmille.table.position import Position
from cinqmille.rules import rules_from_dict
from cinqmille.solver import compute
from cinqmille.solver.grid import ScoreGrid
from cinqmille.solver.n_player import solve_players
from cinqmille.solver.seats import every_seat
from test_brute_force_n import RECORDED, rules_of

#: Rulesets whose whole table the brute force computes in a few seconds (exact end, opening, min_bank, hot dice).
LIVE = ("exact-350-open-200", "exact-400-open-250-mandatory", "dummy-250")


#: Four players: the brute force takes 15 s to several minutes (pure Python over every score quadruple).
LIVE_FOUR = ("exact-350-open-200",)
SLOW_FOUR = ("exact-300-open-100", "reach-350-min-bank", "rule-of-50-300")


@pytest.mark.parametrize(("name", "players"), [(n, 3) for n in LIVE] + [(n, 4) for n in LIVE_FOUR]
                         + [pytest.param(n, 4, marks=pytest.mark.slow) for n in SLOW_FOUR])
def test_every_turn_start_agrees_with_the_brute_force(name: str, players: int) -> None:
    """Every seat's chance at every score tuple equals the independent brute force's to 1e-10 (3 and 4 players)."""
    rules = rules_of(name)
    w, stats, chasing = solve_players(rules, players)
    reference = brute_force_n(rules, players)
    grid = ScoreGrid.of(rules)
    worst = max(float(np.abs(every_seat(grid.seat_values(w, [x // 50 for x in scores])) - np.array(v)).max())
                for scores, v in reference.items())
    assert worst < 1e-10
    assert stats.residual < 1e-12 and not len(chasing)


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_first_seat_vectors_agree_with_the_recorded_brute_force(name: str) -> None:
    """The start-of-game vector equals the brute force's (recomputed by `-m slow` in test_brute_force_n)."""
    result = compute(rules_of(name), players=3)
    assert np.abs(np.array(result.win) - np.array(RECORDED[name])).max() < 1e-10
    assert abs(sum(result.win) - 1.0) < 1e-12


@pytest.mark.parametrize("rules_dict", [{"goal": 1000, "opening": 300},
                                        {"goal": 1000, "opening": 300, "rule_of_50": True},
                                        {"goal": 800, "opening": 200, "end": "exact", "prediction": True},
                                        {"goal": 1000, "opening": 300, "final_stretch": {"from": 700}}])
def test_two_players_are_the_case_n_2_of_the_same_equations(rules_dict: dict) -> None:
    """With n = 2 the seat-vector equations give the two-player solver's table to 1e-12."""
    rules = rules_from_dict(rules_dict)
    w, _, _ = solve_players(rules, 2)
    s = ScoreGrid.of(rules).scores
    assert np.nanmax(np.abs(w[..., 0] - compute(rules).tables[0][np.ix_(s, s)])) < 1e-12


def test_a_stuck_player_leaves_the_two_player_game() -> None:
    """A third player who can never bank (needs exactly 50, min_bank 100) changes nothing for the other two."""
    rules = rules_of("dummy-250")
    w3, _, _ = solve_players(rules, 3)
    two = compute(rules).tables[0]
    stuck = 200 // 50
    for a in (0, 50, 100, 150):
        for b in (0, 50, 100, 150):
            mover, other, third = every_seat(w3[a // 50, b // 50, stuck])
            assert abs(mover - two[a // 50, b // 50]) < 1e-10 and abs(other - (1 - two[a // 50, b // 50])) < 1e-10
            assert third < 1e-12


def test_solve_players_3_in_the_cli(tmp_path: Path, session_cache: Path) -> None:
    """`solve --players 3 --json` gives the seats' chances, cached; four players too; six and race are refused."""
    path = tmp_path / "r.toml"
    path.write_text('goal = 300\nopening = 100\nend = "exact"\n')
    runner = CliRunner()
    first = runner.invoke(main, ["solve", "--rules", str(path), "--players", "3", "--json"])
    assert first.exit_code == 0, first.output
    data = json.loads(first.output)
    assert data["players"] == 3 and len(data["win"]) == 3 and data["exact"]
    assert abs(data["first_player_win"] - RECORDED["exact-300-open-100"][0]) < 1e-10
    again = json.loads(runner.invoke(main, ["solve", "--rules", str(path), "--players", "3", "--json"]).output)
    assert again == data  # from the cache: the same figures, the time of the original solve
    four = json.loads(runner.invoke(main, ["solve", "--rules", str(path), "--players", "4", "--json"]).output)
    assert four["players"] == 4 and len(four["win"]) == 4 and abs(sum(four["win"]) - 1) < 1e-12
    reference = compute(rules_from_dict({"goal": 300, "opening": 100, "end": "exact"}), players=4).win
    assert max(abs(x - y) for x, y in zip(four["win"], reference)) < 1e-12
    for bad in (["--players", "6"], ["--players", "3", "--objective", "race"]):
        result = runner.invoke(main, ["solve", "--rules", str(path), *bad])
        assert result.exit_code == 2 and result.output.startswith("Error: ")


def test_rules_not_yet_solved_for_three_are_stated() -> None:
    """The scoreless-turn counters with three players are solved as if off, and the result says so; a last round
    is solved (tests/test_brute_force_end_n.py)."""
    result = compute(rules_from_dict({"goal": 300, "opening": 100, "zero_turns": {"count": 3, "to": "zero"}}),
                     players=3)
    assert not result.exact and any(a.startswith("zero_turns") for a in result.assumptions)
    solved = compute(rules_from_dict({"goal": 300, "opening": 100, "end": "exact", "last_round": True}), players=3)
    assert solved.exact and not any("last_round" in a for a in solved.assumptions)


def test_every_turn_state_of_the_policy_agrees_with_the_brute_force() -> None:
    """The mover's value of every turn state read from the three-player policy rows equals the brute force's."""
    from brute_force_n import brute_force_n_states

    rules = rules_of("exact-400-open-250-mandatory")
    result = compute(rules, players=3)
    worst, count = 0.0, 0
    for (a, b, c), states in brute_force_n_states(rules, 3).items():
        block, row = spot(result, _at(a, (b, c)))
        for (t, m), vector in states.items():
            worst = max(worst, abs(float(block.value(row, t // 50, m)) - vector[0]))
            count += 1
    assert count > 1000 and worst < 1e-10


@pytest.mark.slow
def test_chasing_choices_are_found_and_stated() -> None:
    """RULES.md section 8's example (goal 3000, opening 500): the chasing cycle 1100/2300/1900 is named, not hidden."""
    result = compute(rules_from_dict({"goal": 3000, "opening": 500}), players=3)
    assert not result.exact
    note = " ".join(result.assumptions)
    assert "chase each other" in note and "1100/2300/1900" in note
    assert result.residual < 1e-3  # the averaged values are close to the mixed choice


def test_advise_at_a_table_of_three_and_more(tmp_path: Path, session_cache: Path) -> None:
    """`advise --opp B,C` reads the three-player policy, `--opp B,C,D` the four-player one; with more opponents than
    the largest table it takes the reduction's decision, says which, and estimates the chance in the game of six."""
    path = tmp_path / "r.toml"
    path.write_text('goal = 300\nopening = 100\nend = "exact"\n')
    runner = CliRunner()
    args = ["advise", "--rules", str(path), "--me", "100", "--turn", "100", "--dice", "3", "--json"]
    data = json.loads(runner.invoke(main, [*args, "--opp", "150,200"]).output)
    block, row = spot(compute(rules_from_dict({"goal": 300, "opening": 100, "end": "exact"}), players=3),
                      _at(100, (150, 200)))
    assert data["position"]["opp"] == [150, 200] and data["exact"]
    assert abs(data["win"] - float(block.value(row, 2, 3))) < 1e-12
    rules = rules_from_dict({"goal": 300, "opening": 100, "end": "exact"})
    four = json.loads(runner.invoke(main, [*args, "--opp", "150,0,200"]).output)
    block, row = spot(compute(rules, players=4), _at(100, (150, 0, 200)))
    assert four["exact"] and abs(four["win"] - float(block.value(row, 2, 3))) < 1e-12  # the exact four-player table
    six = json.loads(runner.invoke(main, [*args, "--opp", "150,0,250,200,100"]).output)
    block, row = spot(compute(rules, players=5), _at(100, (150, 0, 250, 200)))  # the four leading, in their order
    assert six["best"]["action"] == ("roll" if int(block.move(row, 2, 3)) else "bank")  # the table's decision
    assert six["figure"]["kind"] == "estimated" and not six["exact"]  # ... and the six-player game's chance
    assert abs(six["win"] - six["figure"]["seats"][0]) < 1e-12 and six["figure"]["margin"] <= 0.01
    assert any("threaten most" in a for a in six["assumptions"])
    bad = runner.invoke(main, [*args, "--opp", "150,200", "--target", "300"])
    assert bad.exit_code == 2 and bad.output.startswith("Error: ")


def _at(me: int, others: tuple[int, ...]) -> Position:
    """The turn start of `me` against `others` (points, playing order)."""
    return Position(me, others[0], others=others)


ZERO_TURNS_SMALL = {"goal": 1000, "opening": 300, "zero_turns": {"count": 2, "to": "zero"}}


def test_three_players_state_the_zero_turns_they_do_not_solve() -> None:
    """Three players under zero_turns are solved as if the rule were off and say so: exact false, an assumption."""
    result = compute(rules_from_dict(ZERO_TURNS_SMALL), players=3)
    assert not result.exact
    assert any(a.startswith("zero_turns:") and "3 players" in a for a in result.assumptions)
    plain = compute(rules_from_dict({k: v for k, v in ZERO_TURNS_SMALL.items() if k != "zero_turns"}), players=3)
    assert plain.exact and np.allclose(result.win, plain.win, rtol=1e-12)


def test_three_player_advice_refuses_scoreless_counters(tmp_path: Path) -> None:
    """`advise --opp B,C --scoreless` is refused: the three-player table has no counters to read."""
    rules = tmp_path / "z.toml"
    rules.write_text('goal = 1000\nopening = 300\n[zero_turns]\ncount = 2\nto = "zero"\n')
    out = CliRunner().invoke(main, ["advise", "--rules", str(rules), "--me", "300", "--opp", "300,0",
                                    "--scoreless", "1,0"])
    assert out.exit_code == 2 and "two players only" in out.stderr


def test_five_players_are_solved_where_they_fit(tmp_path: Path, session_cache: Path) -> None:
    """`solve --players 5` solves a small goal exactly and names all five seats; `advise` with four opponents then
    reads that exact table, not an estimate."""
    path = tmp_path / "five.toml"
    path.write_text('goal = 250\nopening = 100\n')
    runner = CliRunner()
    text = runner.invoke(main, ["solve", "--rules", str(path), "--players", "5"])
    assert text.exit_code == 0, text.output
    assert "With 5 players the first wins" in text.output and "fifth" in text.output
    data = json.loads(runner.invoke(main, ["solve", "--rules", str(path), "--players", "5", "--json"]).output)
    assert data["players"] == 5 and len(data["win"]) == 5 and abs(sum(data["win"]) - 1) < 1e-12
    advice = json.loads(runner.invoke(main, ["advise", "--rules", str(path), "--me", "100", "--opp", "150,0,200,100",
                                             "--turn", "100", "--dice", "3", "--json"]).output)
    assert advice["figure"]["kind"] == "exact" and advice["figure"]["table"] == 5 and advice["exact"]
