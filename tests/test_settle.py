"""Cycles that chase (RULES.md, the note after section 9), settled by the mixed choice that leaves each chasing
player indifferent: indifference at every pivot, the mixed policy's residual, independence from the iterations and
the guess, the same bits twice; rulesets without chasing cycles never reach the settlement."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cinqmille.rules import rules_from_dict
from cinqmille.solver import level as level_mod
from cinqmille.solver import settle as settle_mod
from cinqmille.solver.grid import ScoreGrid
from cinqmille.solver.kernel import BankTable, TurnKernel
from cinqmille.solver.cycle import LevelTurns
from cinqmille.solver.level import solve_level
from cinqmille.solver.n_player import _name, chase_note, levels, solve_players
from cinqmille.solver.seats import pass_dice
from test_brute_force_n import rules_of

#: Four players at goal 1000, opening 300: one chasing cycle (0/0/0/350), two of its movers mix (8 s to solve).
CHASE_RULES = {"goal": 1000, "opening": 300}
PLAYERS = 4


@pytest.fixture(scope="module")
def solved() -> dict[str, Any]:
    rules = rules_from_dict(CHASE_RULES)
    w, stats, chasing = solve_players(rules, PLAYERS)
    grid = ScoreGrid.of(rules)
    total = int(chasing.rows[0].sum())
    lv = next(lv for s, lv in levels(grid, PLAYERS) if s == total)
    a, others = lv.rows[:, 0], lv.rows[:, 1:]
    turns = LevelTurns(a, lv.caps, grid.seat_bank_table(a, others, int(lv.caps.max()), w), lv.succ,
                       np.zeros((len(a), PLAYERS - 1)), w[tuple(lv.at.T)].copy())
    return {"rules": rules, "w": w, "stats": stats, "chasing": chasing, "level": lv, "turns": turns,
            "kernel": TurnKernel(rules)}


def settled_rows(solved: dict[str, Any]) -> list[tuple[np.ndarray, settle_mod.Settled]]:
    cycles = [(r, s) for r, s in solved["chasing"].cycles if s.rule == "mixed"]
    assert cycles and all(len(s.mixing) for _, s in cycles)
    return cycles


def turn_tables(solved: dict[str, Any], i: int, l0: float) -> tuple[np.ndarray, np.ndarray]:
    """The kernel's full (A, B) tables of level row `i` at the mover's bust value `l0`."""
    t: LevelTurns = solved["turns"]
    rows = np.array([i])
    _, _, ta, tb = solved["kernel"].run(t.a[rows], t.caps[rows], BankTable(t.bank.a[rows], t.bank.b[rows]),
                                        np.array([l0]), keep_table=True)
    return ta[0], tb[0]


def bust_vector(solved: dict[str, Any], i: int) -> np.ndarray:
    lv = solved["level"]
    return pass_dice(solved["w"][tuple(lv.at[lv.succ[i]])])


def test_the_chasing_cycle_is_settled_by_a_mixed_choice(solved: dict[str, Any]) -> None:
    """The cycle is found, settled by the mixed rule with interior bank probabilities, and stated so."""
    cycles = settled_rows(solved)
    for _, s in cycles:
        assert ((s.q > 0) & (s.q < 1)).all() and all(len(p) == 1 for p in s.pivots)
    assert solved["stats"].residual <= 1e-12
    note = chase_note(solved["chasing"], solved["stats"].residual)[0]
    assert "chase each other" in note and "0/0/0/350" in note and "indifferent" in note and "averaged" not in note
    assert "banks with probability" in note


def test_each_chasing_player_is_indifferent_at_his_pivot(solved: dict[str, Any]) -> None:
    """At the settled values the mover's bank and roll values at each pivot agree to 1e-12 (the roll value from
    the kernel's table at his bust value, `TurnKernel.rolling`)."""
    kernel, turns = solved["kernel"], solved["turns"]
    for _, s in settled_rows(solved):
        for i, pivots in zip(s.mixing, s.pivots):
            l_vec = bust_vector(solved, int(i))
            ta, tb = turn_tables(solved, int(i), float(l_vec[0]))
            value = ta[..., 0] + tb * l_vec[0]
            roll = kernel.rolling(value, l_vec[0])
            for t, m in pivots:
                bank = turns.bank.a[i, t, m - 1, 0] + turns.bank.b[i, t, m - 1] * l_vec[0]
                assert abs(bank - roll[t, m - 1]) <= 1e-12


def test_the_mixed_policy_residual_of_every_seat_is_below_1e_12(solved: dict[str, Any]) -> None:
    """Every row of the cycle: the pure rows' kernel pass, the mixing rows' mixture (with q) of the two pure
    policies just below and above the kink, give back every seat's settled value to 1e-12."""
    lv, w = solved["level"], solved["w"]
    start = solved["rules"].dice - 1
    worst = 0.0
    for _, s in settled_rows(solved):
        q_of = dict(zip(s.mixing.tolist(), s.q))
        for i in s.rows.tolist():
            l_vec = bust_vector(solved, i)
            if i in q_of:
                below, above = turn_tables(solved, i, l_vec[0] - 1e-8), turn_tables(solved, i, l_vec[0] + 1e-8)
                a = q_of[i] * below[0][0, start] + (1 - q_of[i]) * above[0][0, start]
                b = q_of[i] * below[1][0, start] + (1 - q_of[i]) * above[1][0, start]
                assert not np.array_equal(below[0][0, start], above[0][0, start])  # two policies do mix there
            else:
                ta, tb = turn_tables(solved, i, l_vec[0])
                a, b = ta[0, start], tb[0, start]
            worst = max(worst, float(np.abs(a + b * l_vec - w[tuple(lv.at[i])]).max()))
    assert worst <= 1e-12


def test_the_settlement_does_not_depend_on_the_guess_or_the_iterations(solved: dict[str, Any],
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The chasing level solved again from another guess, and with more Newton steps before the hand-over, gives
    the same values to 1e-12; the same solve twice gives the same bits."""
    turns: LevelTurns = solved["turns"]
    lv, w = solved["level"], solved["w"]
    want = w[tuple(lv.at.T)]
    rng = np.random.default_rng(7)
    share = rng.dirichlet(np.ones(PLAYERS), len(lv.rows))[:, : PLAYERS - 1]
    other = LevelTurns(turns.a, turns.caps, turns.bank, turns.succ, turns.outside, share)
    first = solve_level(solved["kernel"], other, 1e-12)
    assert first.settled and all(s.rule == "mixed" for s in first.settled)
    assert np.abs(first.values - want).max() <= 1e-12
    again = solve_level(solved["kernel"], other, 1e-12)
    assert again.values.tobytes() == first.values.tobytes()
    monkeypatch.setattr(level_mod, "NEWTON_STEPS", level_mod.NEWTON_STEPS + 13)
    longer = solve_level(solved["kernel"], other, 1e-12)
    assert np.abs(longer.values - want).max() <= 1e-12


def test_a_cycle_the_model_cannot_settle_is_averaged_and_said_so(solved: dict[str, Any],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """With no Newton steps to see the chase's range, no kink is found: the cycle falls back to the averaging,
    with a residual above 1e-12, and the note says it was averaged and why."""
    monkeypatch.setattr(settle_mod, "WINDOW_STEPS", 0)
    turns: LevelTurns = solved["turns"]
    lv = solved["level"]
    fallback = solve_level(solved["kernel"], turns, 1e-12)
    assert [s.rule for s in fallback.settled] == ["averaged"] and fallback.residual > 1e-12
    from cinqmille.solver.n_player import Chasing

    rows = lv.rows[fallback.unsettled]
    note = chase_note(Chasing(rows, tuple((lv.rows[s.rows], s) for s in fallback.settled)), fallback.residual)[0]
    assert "averaged" in note and "no row's choice flips" in note


@pytest.mark.parametrize(("name", "players"), [("exact-350-open-200", 3), ("dummy-250", 3),
                                               ("exact-400-open-250-mandatory", 3), ("exact-350-open-200", 4)])
def test_rulesets_without_chasing_cycles_never_reach_the_settlement(name: str, players: int,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The brute-force rulesets settle by Newton steps alone: the settlement is never called, so their values are
    those of the solver before it (bit for bit)."""
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("settle_cycle called")

    monkeypatch.setattr(level_mod, "settle_cycle", refuse)
    _, stats, chasing = solve_players(rules_of(name), players)
    assert not len(chasing) and stats.residual < 1e-12


def test_a_row_with_two_kinks_in_the_chase_is_settled() -> None:
    """A cycle where one row's value has two kinks in the chase's range (four players, goal 1250, opening 150:
    0/150/150/200, the goal-2000 cycle 900/900/950/1350 shifted) is settled by a mixed choice, not averaged."""
    from pathlib import Path

    data = np.load(Path(__file__).parent / "data" / "two_kinks_cycle.npz", allow_pickle=False)
    rules = rules_from_dict({"goal": 1250, "opening": 150})
    rows = data["rows"]
    turns = LevelTurns(rows[:, 0], data["caps"], BankTable(data["bank_a"], data["bank_b"]), data["succ"],
                       np.zeros((len(rows), PLAYERS - 1)), data["guess"].copy())
    solved = solve_level(TurnKernel(rules), turns, 1e-12)
    assert [s.rule for s in solved.settled] == ["mixed"], [s.why for s in solved.settled]
    record = solved.settled[0]
    assert record.kinks == 2 and len(record.mixing) == 2 and record.solutions == 1
    assert record.residual <= 1e-12 and solved.residual <= 1e-12
    # each mixing mover's bust value sits at a kink of his value: both of his pure policies give him the same
    for i, q, pivots in zip(record.mixing, record.q, record.pivots):
        assert 0.0 < q < 1.0 and pivots
        bust = pass_dice(solved.values[data["succ"][i]])[0]
        kernel = TurnKernel(rules)
        one = np.array([i])
        table = BankTable(turns.bank.a[one], turns.bank.b[one])
        below = kernel.run(turns.a[one], turns.caps[one], table, np.array([bust - 1e-7]))
        above = kernel.run(turns.a[one], turns.caps[one], table, np.array([bust + 1e-7]))
        assert not np.array_equal(below[1], above[1])  # the policy flips there
        mover = solved.values[i, 0]
        for a_, b_, _, _ in (below, above):
            assert abs(a_[0, 0] + b_[0] * bust - mover) <= 1e-11


#: Goals up to 2000, openings 500 and 750 (`standard` otherwise), (players, goal, opening) solved by default: seconds
#: each; four players at goal 2000, opening 750 (18 cycles, one with three settlements) 8 s of CPU.
SWEEP = [(n, g, o) for n, g in ((3, 1000), (3, 1500), (3, 2000), (4, 1000), (4, 1500)) for o in (500, 750)] + [
    (4, 2000, 750)]
#: Four players at goal 2000, opening 500 (29 cycles, three with three settlements): 75 s at load 13 (2026-12-02).
SWEEP_SLOW = [(4, 2000, 500)]


@pytest.mark.parametrize(("players", "goal", "opening"),
                         SWEEP + [pytest.param(*case, marks=pytest.mark.slow) for case in SWEEP_SLOW])
def test_nothing_is_left_to_averaging_at_goals_up_to_2000(players: int, goal: int, opening: int) -> None:
    """Three and four players at goals 1000 to 2000 (openings 500 and 750): every chasing cycle is settled by a
    mixed choice, none averaged, every seat's residual below 1e-12; the solve's note states the count of cycles
    with several settlements and the one taken (the fewest mixing players, then the smallest bank
    probabilities), and says nothing of averaging."""
    _, stats, chasing = solve_players(rules_from_dict({"goal": goal, "opening": opening}), players)
    rules = [s.rule for _, s in chasing.cycles]
    assert rules.count("averaged") == 0 and stats.residual <= 1e-12, [s.why for _, s in chasing.cycles]
    assert len({_name(r[None]) for r in chasing.rows}) == len(rules)  # every cycle found has its record
    several = [s.solutions for _, s in chasing.cycles if s.solutions > 1]
    note = " ".join(chase_note(chasing, stats.residual))
    assert "averaged" not in note
    if several:
        assert (f"{len(several)} cycle{'s' if len(several) > 1 else ''} had several such settlements (up to "
                f"{max(several)}): the one with the fewest mixing players, then the smallest bank probabilities, "
                f"is taken") in note
    else:
        assert "several" not in note


def test_a_kink_at_the_end_of_the_searched_range_is_found() -> None:
    """The cycle averaged at four-player `standard` (2950/4500/3400/4100, residual 1.2e-5), found again at goal 2800,
    opening 750, shifted by 2200 points (750/2300/1200/1900; its level's four rows, banks and guess stored in
    tests/data/kink_at_range_end.npz): one row's kinks meet, the next split of the search falls a rounding below the
    last one, and the search used to give up; it is settled by a mixed choice."""
    from pathlib import Path

    data = np.load(Path(__file__).parent / "data" / "kink_at_range_end.npz", allow_pickle=False)
    rules = rules_from_dict({"goal": 2800, "opening": 750})
    turns = LevelTurns(data["rows"], data["caps"], BankTable(data["bank_a"], data["bank_b"]), data["succ"],
                       np.zeros((len(data["rows"]), PLAYERS - 1)), data["guess"].copy())
    solved = solve_level(TurnKernel(rules), turns, 1e-12)
    assert [s.rule for s in solved.settled] == ["mixed"], [s.why for s in solved.settled]
    record = solved.settled[0]
    assert record.kinks == 3 and record.solutions == 1 and ((record.q > 0) & (record.q < 1)).all()
    assert record.residual <= 1e-12 and solved.residual <= 1e-12
    assert np.abs(solved.values - data["values"]).max() > 1e-7  # the averaged values were that far off


def test_a_stationary_pure_policy_the_iteration_jumps_over_is_the_settlement() -> None:
    """`house`, three players, the cycle 2700/4400/3100 (its level's three rows, banks and guess stored in
    tests/data/pure_stationary_cycle.npz): the Newton steps chase, yet no row's value has a kink in the chase's
    range, because every row's pure policy is already a best reply to the others'; that pure policy is the
    settlement (no player mixes, residual below 1e-12), not the averaging, and the note says so."""
    from pathlib import Path

    from cinqmille.rules import load_rules
    from cinqmille.solver.n_player import Chasing

    data = np.load(Path(__file__).parent / "data" / "pure_stationary_cycle.npz", allow_pickle=False)
    rules = load_rules("house")
    turns = LevelTurns(data["rows"], data["caps"], BankTable(data["bank_a"], data["bank_b"]), data["succ"],
                       np.zeros((len(data["rows"]), 2)), data["guess"].copy())
    solved = solve_level(TurnKernel(rules), turns, 1e-12)
    assert [s.rule for s in solved.settled] == ["mixed"], [s.why for s in solved.settled]
    record = solved.settled[0]
    assert not len(record.mixing) and record.kinks == 0 and record.residual <= 1e-12
    # independently: each mover's best reply at his settled bust value gives back every seat's settled value
    bust = pass_dice(solved.values[data["succ"]])
    a, b, _, _ = TurnKernel(rules).run(turns.a, turns.caps, turns.bank, bust[:, 0].copy())
    assert np.abs(a.reshape(len(bust), -1) + b[:, None] * bust - solved.values).max() <= 1e-12
    scores = np.array([[54, 88, 62], [62, 54, 88], [88, 62, 54]])
    note = chase_note(Chasing(scores, ((scores, record),)), solved.residual)[0]
    assert "1 cycle is settled by a stationary pure policy" in note and "2700/4400/3100" in note
    assert "averaged" not in note and ": ;" not in note
