"""`cinqmille advise` and `cinqmille.advice`: ranking, values checked against independent facts, bad input."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cinqmille.app.advice import advise
from cinqmille.cli import main
from cinqmille.dice import dice_tables, faces_of, reachable
from cinqmille.table.position import Position, PositionError
from cinqmille.rules import rules_from_dict
from cinqmille.solver import solve
from turn_table import turn_table

pytestmark = pytest.mark.usefixtures("session_cache")

TINY = {"name": "tiny", "goal": 500, "opening": 150}


@pytest.fixture
def tiny():  # type: ignore[no-untyped-def]
    """The solved tiny ruleset (goal 500, opening 150)."""
    return solve(rules_from_dict(TINY), "win")


def scores(result) -> list[int]:  # type: ignore[no-untyped-def]
    return [int(s) * 50 for s in result.grid.scores]


def run(*args: str) -> tuple[int, str, str]:
    out = CliRunner().invoke(main, ["advise", *args])
    return out.exit_code, out.stdout, out.stderr


# -- the library --------------------------------------------------------------------------
def test_best_is_the_max_and_values_are_probabilities(tiny) -> None:  # type: ignore[no-untyped-def]
    """In every bank-or-roll position of a few pairs, best is the largest option and all values lie in [0, 1]."""
    reach = reachable(tiny.rules, tiny.rules.goal // 50)
    for me in scores(tiny)[::3]:
        for opp in scores(tiny)[::4]:
            for turn in range(50, tiny.rules.goal - me + 1, 50):
                for dice in range(1, 6):
                    if not reach[turn // 50, dice - 1]:
                        continue
                    adv = advise(tiny, Position(me, opp, turn, dice))
                    wins = [o.win for o in adv.options]
                    assert adv.best is not None and adv.best.win == max(wins) == adv.win
                    assert all(0.0 <= w <= 1.0 for w in wins)
                    assert all(math.isclose(o.loss, adv.win - o.win, abs_tol=1e-15) for o in adv.options)


def test_bank_value_is_the_opponent_turn_start(tiny) -> None:  # type: ignore[no-untyped-def]
    """An ordinary bank is worth 1 - W(opp, me + turn): the opponent then starts a turn."""
    me, opp, turn = 200, 300, 100
    adv = advise(tiny, Position(me, opp, turn, 3))
    bank = next(o for o in adv.options if o.action == "bank")
    assert bank.win == pytest.approx(1.0 - float(tiny.tables[0, opp // 50, (me + turn) // 50]), abs=1e-12)


def test_not_opened_cannot_bank_below_the_opening(tiny) -> None:  # type: ignore[no-untyped-def]
    """A player at 0 with fewer turn points than the opening is only offered to roll, with the reason."""
    adv = advise(tiny, Position(0, 200, 100, 3))
    assert [o.action for o in adv.options] == ["roll"]
    assert "opening" in (adv.refusal or "")


def test_turn_start_is_roll_only_and_equals_the_table(tiny) -> None:  # type: ignore[no-untyped-def]
    """With nothing set aside and all dice the only move is to roll, worth W(me, opp)."""
    adv = advise(tiny, Position(200, 350, 0, None))
    assert [o.action for o in adv.options] == ["roll"]
    assert adv.win == pytest.approx(float(tiny.tables[0, 4, 7]), abs=1e-12)


def test_bank_that_reaches_the_goal_wins(tiny) -> None:
    """Banking turn points that take the score to the goal or past it wins (chance 1), also past the table's cap."""
    for turn in (100, 150, 400):
        adv = advise(tiny, Position(400, 0, turn, 3))
        assert adv.best is not None and adv.best.action == "bank" and adv.best.win == 1.0


def test_keep_then_bank_when_the_keep_reaches_the_goal(tiny) -> None:  # type: ignore[no-untyped-def]
    """From 450 a kept pair of 1s reaches the goal: keep and bank, chance 1."""
    adv = advise(tiny, Position(450, 0, 0), roll="11236")
    assert adv.best is not None and adv.best.then == "bank" and adv.best.win == 1.0


def test_rolling_is_the_average_of_the_best_keeps(tiny) -> None:  # type: ignore[no-untyped-def]
    """The value of rolling m dice equals the probability-weighted best keep of each roll (bust: the bust value)."""
    rules = tiny.rules
    for me, opp, turn, m in [(0, 0, 100, 4), (150, 300, 50, 4), (300, 250, 150, 2), (200, 0, 300, 5)]:
        roll_value = next(o.win for o in advise(tiny, Position(me, opp, turn, m)).options if o.action == "roll")
        table = dice_tables(rules)[m]
        total = 0.0
        for r in range(len(table.prob)):
            faces = faces_of(tuple(int(x) for x in table.counts[r]))
            total += float(table.prob[r]) * advise(tiny, Position(me, opp, turn), roll=faces).win
        assert total == pytest.approx(roll_value, abs=1e-12)


def test_bust_roll_has_no_options(tiny) -> None:  # type: ignore[no-untyped-def]
    """A roll with no scoring die has no keep; its value is that of the opponent's turn start, 1 - W(opp, me)."""
    adv = advise(tiny, Position(200, 300, 300), roll="23466")
    assert adv.bust and adv.options == () and adv.best is None
    assert adv.win == pytest.approx(1.0 - float(tiny.tables[0, 6, 4]), abs=1e-12)


def test_roll_against_dice_in_hand_is_an_error(tiny) -> None:  # type: ignore[no-untyped-def]
    """A roll of 2 dice with 3 dice in hand raises PositionError."""
    with pytest.raises(PositionError):
        advise(tiny, Position(0, 0, 100, 3), roll="15")


# -- the command --------------------------------------------------------------------------
def test_json_shape_bank_or_roll(tiny_rules_file: Path) -> None:
    """--json for --turn/--dice: options sorted best first, best = options[0], actions bank/roll."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--me", "200", "--opp", "300", "--turn", "100",
                       "--dice", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["rules"] == "tiny" and data["position"] == {"me": 200, "opp": 300, "turn": 100, "dice": 3}
    wins = [o["win"] for o in data["options"]]
    assert wins == sorted(wins, reverse=True) and data["best"] == data["options"][0]
    assert data["win"] == data["best"]["win"]
    assert {o["action"] for o in data["options"]} == {"bank", "roll"}
    assert data["exact"] is True and data["assumptions"] == []


def test_json_shape_keep(tiny_rules_file: Path) -> None:
    """--json for --roll: each option has sorted kept faces, points and then; the kept faces come from the roll."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--roll", "1,5,3,3,2", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["bust"] is False and data["best"] == data["options"][0]
    assert data["win"] == max(o["win"] for o in data["options"])
    for o in data["options"]:
        assert o["keep"] == sorted(o["keep"]) and o["then"] in ("bank", "roll", "win", "bust")
        assert all(o["keep"].count(f) <= [1, 5, 3, 3, 2].count(f) for f in o["keep"])
        assert 0.0 <= o["win"] <= 1.0


def test_json_bust(tiny_rules_file: Path) -> None:
    """A bust roll exits 0 with no options, best null and the bust value as win."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--me", "200", "--opp", "300", "--roll", "23466", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["bust"] is True and data["options"] == [] and data["best"] is None
    expected = 1.0 - float(solve(rules_from_dict(TINY), "win").tables[0, 6, 4])
    assert data["win"] == pytest.approx(expected, abs=1e-12)


def test_text_output_has_the_sentence(tiny_rules_file: Path) -> None:
    """The text answer lists the options and ends with one sentence naming the best move."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--me", "200", "--turn", "100", "--dice", "3")
    assert code == 0
    last = out.strip().splitlines()[-1]
    assert last.startswith(("Bank", "Roll")) and "%" in last


def test_not_exact_ruleset_says_so(tmp_path: Path) -> None:
    """A ruleset the solver relaxes (crosses) prints the assumptions, and JSON has exact false."""
    path = tmp_path / "crosses.toml"
    path.write_text('name = "tiny-crosses"\ngoal = 500\nopening = 150\ncrosses = true\n')
    code, out, _ = run("--rules", str(path), "--json")
    data = json.loads(out)
    assert code == 0 and data["exact"] is False and any("crosses" in a for a in data["assumptions"])
    code, out, _ = run("--rules", str(path))
    assert code == 0 and "Note" in out and "crosses" in out


def test_first_query_solves_and_caches(tiny_rules_file: Path, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """On an empty cache the first query solves the ruleset and leaves a cache file."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "fresh"))
    code, _, _ = run("--rules", str(tiny_rules_file))
    assert code == 0 and list((tmp_path / "fresh").glob("tiny-win-*.npz"))


@pytest.mark.parametrize("args", [
    ["--roll", "1,7,3"],  # a face outside 1..6
    ["--roll", "123456"],  # more dice than the ruleset has
    ["--dice", "6", "--turn", "100"],
    ["--me", "120"],  # not a multiple of 50
    ["--opp", "-50"],
    ["--turn", "75", "--dice", "2"],
    ["--turn", "-50", "--dice", "2"],
    ["--me", "500"],  # at the goal
    ["--opp", "100"],  # not opened but above 0 and below the opening
    ["--rules", "no-such-preset"],
    ["--rules", "missing-file.toml"],
    ["--roll", "15", "--dice", "3"],  # roll and dice disagree
    ["--turn", "100"],  # neither dice nor roll
    ["--me", "lots"],
    ["--roll", "abc"],
])
def test_bad_input_is_one_line_and_exit_2(args: list[str], tiny_rules_file: Path) -> None:
    """Bad input: exit status 2 and exactly one line on stderr, no traceback."""
    rules = [] if "--rules" in args else ["--rules", str(tiny_rules_file)]
    code, out, err = run(*rules, *args)
    assert code == 2, (args, out, err)
    assert len(err.strip().splitlines()) == 1 and err.startswith("Error: ") and "Traceback" not in err


def test_unreadable_rules_file(tmp_path: Path) -> None:
    """A rules file that is not valid TOML is one line and exit 2."""
    bad = tmp_path / "bad.toml"
    bad.write_text("goal = = 3\n")
    code, _, err = run("--rules", str(bad))
    assert code == 2 and len(err.strip().splitlines()) == 1


# -- the extra state: seat in a last round, take-over offers, the last turn --------------------
LR_TOML = 'name = "tiny-lr-take"\ngoal = 600\nopening = 150\nlast_round = true\ntake_over = true\n'


@pytest.fixture
def lr_file(tmp_path: Path, session_cache: Path) -> Path:
    """A tiny ruleset with a last round and take-overs."""
    path = tmp_path / "lr.toml"
    path.write_text(LR_TOML)
    return path


def test_offer_compares_take_over_with_a_fresh_start(lr_file: Path) -> None:
    """--offer ranks taking over against starting afresh, with the solver's values for both."""
    from cinqmille.solver import solve

    code, out, _ = run("--rules", str(lr_file), "--me", "200", "--opp", "350", "--offer", "200/3", "--json")
    assert code == 0
    data = json.loads(out)
    result = solve(str(lr_file))
    values = {o["action"]: o["win"] for o in data["options"]}
    assert set(values) == {"take_over", "start"}
    assert values["start"] == pytest.approx(float(result.tables[0, 4, 7]))
    table = turn_table(result, Position(200, 350))
    assert values["take_over"] == pytest.approx(float(table.roll[4, 2]))
    assert data["best"]["win"] == max(values.values())


def test_seat_changes_the_answer_in_a_last_round(lr_file: Path) -> None:
    """Under a last round the first and second seats get their own tables."""
    first = json.loads(run("--rules", str(lr_file), "--me", "450", "--opp", "500", "--turn", "150",
                           "--dice", "2", "--json")[1])
    second = json.loads(run("--rules", str(lr_file), "--me", "450", "--opp", "500", "--turn", "150",
                            "--dice", "2", "--seat", "second", "--json")[1])
    assert second["position"]["seat"] == 1 and first["position"]["seat"] == 0
    assert second["options"][0]["win"] == 1.0  # the second seat ends the round: reaching the goal wins
    assert first["win"] < 1.0  # the first seat leaves the opponent a last turn


def test_last_turn_needs_to_pass_the_target(lr_file: Path) -> None:
    """On the last turn a bank wins only past the opponent's final score, else it is worth nothing."""
    data = json.loads(run("--rules", str(lr_file), "--me", "450", "--target", "650", "--turn", "150",
                          "--dice", "2", "--json")[1])
    values = {o["action"]: o["win"] for o in data["options"]}
    assert values["bank"] == 0.0 and 0.0 < values["roll"] < 1.0
    data = json.loads(run("--rules", str(lr_file), "--me", "450", "--target", "650", "--turn", "250",
                          "--dice", "2", "--json")[1])
    assert data["best"] == {"win": 1.0, "loss": 0.0, "expected": 250.0, "bust": None, "action": "bank"}


@pytest.mark.parametrize(("args", "fragment"), [
    (["--offer", "250/3"], "take_over = false"),
    (["--target", "600"], "last_round = false"),
])
def test_extra_state_needs_its_rule(tiny_rules_file: Path, session_cache: Path, args: list[str],
                                    fragment: str) -> None:
    """--offer and --target are refused, in one line, under a ruleset without the rule."""
    code, _, err = run("--rules", str(tiny_rules_file), "--me", "200", *args)
    assert code == 2 and fragment in err and "Traceback" not in err


@pytest.mark.parametrize(("args", "fragment"), [
    (["--me", "200", "--offer", "250"], "POINTS/DICE"),
    (["--me", "200", "--offer", "250/9"], "between 1 and 5"),
    (["--me", "0", "--offer", "250/2"], "opened"),
    (["--me", "200", "--offer", "250/2", "--roll", "15"], "start of a turn"),
    (["--me", "200", "--target", "550"], "from 600 up"),
])
def test_bad_extra_state(lr_file: Path, args: list[str], fragment: str) -> None:
    """Malformed offers and targets get one clear line and exit status 2."""
    code, _, err = run("--rules", str(lr_file), *args)
    assert code == 2 and fragment in err and "Traceback" not in err


def test_prediction_options_with_two_dice(tmp_path: Path, session_cache: Path) -> None:
    """With two dice in hand under `prediction`, each announcement is an option beside bank and roll."""
    path = tmp_path / "pred.toml"
    path.write_text('name = "tiny-pred"\ngoal = 1000\nopening = 300\nprediction = true\n')
    data = json.loads(run("--rules", str(path), "--me", "300", "--opp", "500", "--turn", "300",
                          "--dice", "2", "--json")[1])
    actions = [(o["action"], o.get("points")) for o in data["options"]]
    assert ("bank", None) in actions and ("roll", None) in actions
    assert {p for a, p in actions if a == "predict"} == {50, 100, 150, 200}
    assert data["best"]["win"] == max(o["win"] for o in data["options"])


# -- expected points, bust chances and how much the choice matters ----------------------------------
def test_every_option_carries_expected_points_and_bust_in_json(tiny_rules_file: Path) -> None:
    """--json: every option has `expected` (points, >= 0) and `bust` (a chance for options that roll, else null)."""
    for args in (["--me", "200", "--turn", "100", "--dice", "3"], ["--me", "200", "--roll", "15332"],
                 ["--me", "200", "--turn", "200", "--roll", "155"]):
        data = json.loads(run("--rules", str(tiny_rules_file), *args, "--json")[1])
        assert data["options"]
        for o in data["options"]:
            assert isinstance(o["expected"], float) and o["expected"] >= 0.0
            rolls = o.get("action") in ("roll", "predict") or o.get("then") == "roll"
            assert (o["bust"] is not None) == rolls and (o["bust"] is None or 0.0 < o["bust"] < 1.0)
        bank = [o for o in data["options"] if o.get("action") == "bank" or o.get("then") == "bank"]
        for o in bank:  # a bank banks the turn points it holds (tiny has no final stretch, no rule of 50)
            assert o["expected"] == data["position"]["turn"] + o.get("points", 0)


def test_text_table_has_the_new_columns_and_points_in_full(tiny_rules_file: Path) -> None:
    """The text answer shows the columns expected and bust, writes 'points' where it said 'pp', and stays within
    100 columns."""
    for args in (["--me", "200", "--turn", "100", "--dice", "3"], ["--me", "200", "--roll", "11155"]):
        code, out, _ = run("--rules", str(tiny_rules_file), *args)
        assert code == 0
        lines = out.splitlines()
        assert "expected" in lines[1] and "bust" in lines[1] and "vs best" in lines[1]
        assert not re.search(r"\bpp\b", out) and re.search(r"-\d+\.\d\d points$", out, re.M)
        assert max(len(line) for line in lines[:-1]) <= 100


def test_the_sentence_says_when_the_choice_barely_matters_or_matters_a_lot() -> None:
    """In bank-or-roll positions the sentence says 'a close call' exactly when the best two options are within 0.5
    points of winning chance, and 'this choice matters' exactly when they are 5 points or more apart."""
    result = solve(rules_from_dict({"name": "small", "goal": 1000, "opening": 300}), "win")
    reach = reachable(result.rules, result.rules.goal // 50)
    close = matters = 0
    for me in scores(result)[::2]:
        for opp in scores(result)[::2]:
            for turn in range(50, result.rules.goal - me, 50):
                for dice in range(1, 6):
                    if not reach[turn // 50, dice - 1]:
                        continue
                    adv = advise(result, Position(me, opp, turn, dice))
                    if len(adv.options) < 2 or adv.win >= 1.0:
                        continue
                    gap = adv.options[0].win - adv.options[1].win
                    assert ("a close call" in adv.sentence) == (gap < 0.005), adv.sentence
                    assert ("this choice matters" in adv.sentence) == (gap >= 0.05), adv.sentence
                    assert f"{100 * gap:.2f} points apart" in adv.sentence or 0.005 <= gap < 0.05
                    close += gap < 0.005
                    matters += gap >= 0.05
    assert close > 20 and matters > 500


def test_a_keep_sentence_names_a_close_runner_up_keep(tiny) -> None:  # type: ignore[no-untyped-def]
    """When another keep is the closest option (closer than the best keep's other move) the sentence names it."""
    found = 0
    for me in scores(tiny):
        for roll in ("15332", "1155", "15", "11555", "1523"):
            turn = {5: 0, 4: 100, 3: 100, 2: 150}[len(roll)]
            adv = advise(tiny, Position(me, 150, turn), roll=roll)
            best = adv.best
            if best is None or best.then not in ("bank", "roll") or best.win >= 1.0 or len(adv.options) < 2:
                continue
            other = best.roll if best.then == "bank" else best.bank
            second = adv.options[1]
            if other is not None and second.win > other and best.win - second.win < 0.005:
                assert "a close call: keeping " in adv.sentence and "instead is only" in adv.sentence, adv.sentence
                found += 1
    assert found > 0


def test_notes_speak_plainly_and_verbose_gives_the_solver_text(tmp_path: Path, session_cache: Path) -> None:
    """A relaxed rule is said in a player's words by default; --verbose and --json give the solver's own text."""
    path = tmp_path / "crosses.toml"
    path.write_text('goal = 600\nopening = 150\ncrosses = true\n')
    args = ["--rules", str(path), "--me", "150", "--opp", "300", "--turn", "200", "--dice", "2"]
    plain = run(*args)[1].splitlines()
    verbose = run(*args, "--verbose")[1].splitlines()
    data = json.loads(run(*args, "--json")[1])
    assert plain[-1] == "Note: the rule 'crosses' is left out (the figures are as if it were off) (--verbose says how)."
    assert verbose[-2:] == ["Note: this ruleset is not solved exactly; the solver assumes:",
                            *(f"  - {a}" for a in data["assumptions"])]


def test_a_chasing_cycle_is_said_as_a_rare_position_with_its_bound() -> None:
    """The solver's note on cycles that chase reads as rare positions, within the note's largest stated bound."""
    from cinqmille.words import plain_assumption

    text = ("3 players: on 3 bust cycles of scores (900/900/900, 2650/3550/4050, 3100/4300/3900) the players' "
            "choices chase each other; there the values are averaged, Bellman residual 5.2e-05")
    assert plain_assumption(text) == ("exact except in 3 rare positions (scores where two players' choices chase "
                                      "each other), where the figures are within 0.005 %")
