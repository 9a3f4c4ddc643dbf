"""`cinqmille review`: the chance each decision of a recorded game cost, against the advice for the same question."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.app.advice import advise
from cinqmille.cli import main
from cinqmille.engine import play_game
from cinqmille.engine.sheet import play_sheet, sheet_log
from cinqmille.policies import parse_policy
from cinqmille.table.position import Position
from cinqmille.app.review import Decision, ReviewError, game_log, review_log
from cinqmille.rules import load_rules
from cinqmille.rules.loading import rules_from_dict
from cinqmille.solver import solve


@pytest.fixture
def tiny(tiny_rules_file: Path, session_cache: Path):  # type: ignore[no-untyped-def]
    """The tiny ruleset (goal 500, opening 150) with the session's cache."""
    return load_rules(str(tiny_rules_file))


def _log(rules, seats: list[str], seed: int) -> dict:  # type: ignore[no-untyped-def]
    """The game log (through JSON) of a seeded engine game between the policies `seats`."""
    result = play_game(rules, [parse_policy(s, rules) for s in seats], rng=np.random.default_rng(seed))
    return json.loads(json.dumps(game_log(rules, seats, result.initial, result.events)))


def test_optimal_play_loses_nothing(tiny) -> None:  # type: ignore[no-untyped-def]
    """Every decision of two optimal bots, over several seeded games, loses 0 within 1e-12."""
    reviewed = 0
    for seed in range(6):
        review = review_log(_log(tiny, ["optimal", "optimal"], seed))
        reviewed += len(review.decisions)
        assert all(abs(d.loss) <= 1e-12 and abs(d.after - d.before) <= 1e-12 for d in review.decisions)
        assert review.lost == (0.0, 0.0) and review.costliest() == () and review.kinds == ("exact",)
    assert reviewed > 10


def test_an_early_bank_loses_what_advise_says(tiny) -> None:  # type: ignore[no-untyped-def]
    """Banking 350 with five dice in hand at 0-0 (threshold:150, seed 3) loses what `advise` gives for that question."""
    review = review_log(_log(tiny, ["threshold:150", "optimal"], 3))
    worst = review.costliest()[0]
    assert (worst.seat, worst.turn, worst.kind, worst.turn_points, worst.dice) == (0, 0, "bank_or_roll", 350, 5)
    assert (worst.taken, worst.best) == ("bank", "roll")
    advice = advise(solve(tiny, "win"), Position(0, 0, 350, 5))
    bank = next(o for o in advice.options if o.action == "bank")
    assert worst.loss == pytest.approx(bank.loss, abs=1e-12) and worst.loss > 0.25
    assert worst.before == pytest.approx(advice.win, abs=1e-12) and worst.after == pytest.approx(bank.win, abs=1e-12)
    assert review.lost[1] == 0.0  # the optimal bot's seat


@pytest.mark.parametrize("rules", [{"goal": 400, "opening": 0, "prediction": True},
                                   {"goal": 500, "opening": 150, "last_round": True},
                                   {"goal": 500, "opening": 150, "end": "exact"}], ids=["prediction", "last_round",
                                                                                         "exact"])
def test_optimal_play_loses_nothing_under_other_rules(rules: dict, session_cache: Path) -> None:
    """Announcements, a last round and an exact end replay and review; the optimal seats lose 0."""
    ruleset = rules_from_dict({**rules, "name": "small"})
    taken = set()
    for seed in range(3):
        review = review_log(_log(ruleset, ["threshold:200", "optimal"], seed))
        assert review.lost[1] == 0.0 and review.unreviewed == 0 and review.decisions
        taken |= {d.taken for d in review.decisions if d.seat == 1}
    if ruleset.prediction:  # the bot's announcement is judged as the announcement it is, not as a plain roll
        assert "announce 100" in taken


def test_a_declined_take_over_loses_what_advise_says(session_cache: Path) -> None:
    """Under take-overs (goal 1000, seed 9) threshold:200 starts afresh where taking over was best, and loses what
    `advise` gives for that offer; the optimal seat's offers lose nothing."""
    rules = rules_from_dict({"goal": 1000, "opening": 150, "take_over": True, "name": "take"})
    review = review_log(_log(rules, ["threshold:200", "optimal"], 9))
    offers = [d for d in review.decisions if d.kind == "take_over"]
    assert all(d.loss == 0.0 for d in offers if d.seat == 1)
    costly = next(d for d in offers if d.loss > 0)
    assert (costly.seat, costly.taken, costly.best) == (0, "start afresh", "take over")
    position = Position(costly.scores[0], costly.scores[1], offer=(costly.turn_points, costly.dice))
    advice = advise(solve(rules, "win"), position)
    start = next(o for o in advice.options if o.action == "start")
    assert costly.loss == pytest.approx(start.loss, abs=1e-12) and costly.loss > 0.01


def test_totals_add_up(tiny) -> None:  # type: ignore[no-untyped-def]
    """Each player's total is the sum of his decisions' losses, and each loss is before minus after."""
    for seed in (1, 6):
        review = review_log(_log(tiny, ["threshold:150", "optimal"], seed))
        for seat in (0, 1):
            mine = [d.loss for d in review.decisions if d.seat == seat]
            assert review.lost[seat] == pytest.approx(sum(mine), abs=1e-12)
        assert all(d.loss == pytest.approx(d.before - d.after, abs=1e-12) for d in review.decisions)
        assert review.lost[0] > 0 and review.as_dict()["lost"] == list(review.lost)


def test_a_loss_within_the_estimates_margin_is_not_counted() -> None:
    """An estimated figure's loss within its margin counts 0; beyond it, the whole loss counts."""
    base = dict(seat=0, turn=0, kind="bank_or_roll", scores=(0, 0, 0), turn_points=300, dice=2, roll=None,
                taken="bank", best="roll", before=0.5, figure="estimated", margin=0.009)
    assert Decision(after=0.495, loss=0.005, **base).counted == 0.0  # type: ignore[arg-type]
    assert Decision(after=0.48, loss=0.02, **base).counted == 0.02  # type: ignore[arg-type]


def test_a_table_larger_than_the_solved_one_is_estimated(tiny) -> None:  # type: ignore[no-untyped-def]
    """A four-player game reviewed with the three-player table: estimated chances, said in the text, losses beyond
    the margin only, the optimal seats losing nothing."""
    from cinqmille.cli.review_cmd import review_text

    seats = ["threshold:150", "optimal", "threshold:300", "optimal"]
    review = review_log(_log(tiny, seats, 1), result_for=lambda n: solve(tiny, "win", players=3))
    assert review.kinds == ("estimated",) and 0.005 < review.margin < 0.02 and review.table == 3
    assert review.lost[1] == review.lost[3] == 0.0 and review.lost[0] > 0.1
    assert all(d.counted == 0.0 or d.counted > d.margin for d in review.decisions)
    text = "\n".join(review_text(review))
    assert "estimated by playing the game out" in text and "not counted as a loss" in text


def test_play_log_then_review_on_the_command_line(tiny_rules_file: Path, session_cache: Path,
                                                  tmp_path: Path) -> None:
    """`play --log` writes a log that `review` reads; text and --json agree with the library."""
    log = tmp_path / "game.json"
    played = CliRunner().invoke(main, ["play", "--rules", str(tiny_rules_file), "--players", "threshold:150,bot",
                                       "--seed", "3", "--log", str(log)])
    assert played.exit_code == 0, played.output
    assert "Game log written" in played.output
    data = json.loads(log.read_text())
    assert data["format"] == "cinqmille-game" and data["rules"]["goal"] == 500
    out = CliRunner().invoke(main, ["review", str(log), "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == json.loads(json.dumps(review_log(data).as_dict()))
    text = CliRunner().invoke(main, ["review", str(log)])
    assert text.exit_code == 0 and "The costliest decisions:" in text.output
    assert "350 set aside, 5 dice in hand: bank" in text.output
    quit_log = tmp_path / "quit.json"
    quit = CliRunner().invoke(main, ["play", "--rules", str(tiny_rules_file), "--seed", "3", "--log", str(quit_log)],
                              input="q\n")
    assert quit.exit_code == 0 and "No game log written" in quit.output and not quit_log.exists()


def test_a_sheet_log_has_no_decision(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A score sheet's log (banks entered as outcomes) is read, and the review says no decision is known."""
    state = play_sheet(tiny, ["Ann", "Bob"], [{"kind": "bank", "points": 300}, {"kind": "bust"}])
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(sheet_log(state)))
    review = review_log(json.loads(path.read_text()))
    assert review.decisions == () and review.note is not None and "without dice" in review.note
    out = CliRunner().invoke(main, ["review", str(path)])
    assert out.exit_code == 0 and out.output.startswith("Nothing to review: this score sheet's 2 turns")


def test_bad_files_are_one_line_and_exit_2(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A missing, garbled, foreign or tampered file is refused in one line with exit status 2."""
    good = _log(tiny, ["threshold:150", "optimal"], 3)
    tampered = json.loads(json.dumps(good))
    roll = next(e for e in tampered["events"] if e["event"] == "Roll")
    roll["faces"] = [2, 3, 4, 6, 6]  # a bust where a scoring roll was: the recorded answers no longer fit
    bad_event = json.loads(json.dumps(good))
    bad_event["events"][0] = {"event": "Explosion"}
    huge = json.loads(json.dumps(good))
    next(e for e in huge["events"] if e["event"] == "Kept")["dice"] = [10**30, 0, 0, 0, 0, 0]  # ran out of memory
    big_sheet = {**good, "initial": [{"score": 10**30, "opened": True}, good["initial"][1]]}
    files = {"huge.json": json.dumps(huge).encode(), "big_sheet.json": json.dumps(big_sheet).encode(),
             "garbled.json": b"{not json", "binary.json": b"\x80\x04\x95 pickle", "list.json": b"[1, 2]",
             "foreign.json": json.dumps({"format": "something else"}).encode(),
             "tampered.json": json.dumps(tampered).encode(), "unknown.json": json.dumps(bad_event).encode(),
             "norules.json": json.dumps({**good, "rules": None}).encode()}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    for name in [*files, "missing.json"]:
        out = CliRunner().invoke(main, ["review", str(tmp_path / name)])
        assert out.exit_code == 2, (name, out.output)
        assert len(out.output.strip().splitlines()) == 1 and out.output.startswith("Error: "), (name, out.output)
        if name in ("huge.json", "big_sheet.json"):  # refused as read, before any memory is spent on it
            assert "not well formed" in out.output, out.output
    with pytest.raises(ReviewError):
        review_log(tampered)


#: A tiny game on the sheet (goal 500, opening 150) and the questions asked of the advice during it: Ann keeps from
#: 1-5-3-3-2 and rolls 4 dice (the next question), then keeps 1-1 from 1-1-2-4 and banks 300 (the entry); Bob asks
#: bank or roll with 200 and 2 dice and rolls on (the next question is a roll of 2 dice), then busts.
SHEET_GAME = ([{"kind": "bank", "points": 300}, {"kind": "bust"}],
              [{"entry": 0, "turn": 0, "roll": "15332"}, {"entry": 0, "turn": 100, "roll": "1124"},
               {"entry": 1, "turn": 200, "dice": 2}, {"entry": 1, "turn": 200, "roll": "26"}])


def test_a_sheet_is_reviewed_from_the_questions_asked(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A sheet's questions: each move taken read from what followed in its turn, its chances those of `advise`."""
    entries, questions = SHEET_GAME
    state = play_sheet(tiny, ["Ann", "Bob"], entries)
    log = {**sheet_log(state), "questions": questions}
    review = review_log(log)
    result = solve(tiny, "win")
    by_turn = {(d.turn, d.turn_points): d for d in review.decisions}
    first = by_turn[0, 0]  # Ann's first keep: the one that leaves 100 and 4 dice
    taken = next(o for o in advise(result, Position(0, 0), "15332").options if o.turn == 100 and o.dice == 4)
    assert first.taken == "keep 1" and first.after == taken.win and first.kind == "keep"
    second = by_turn[0, 100]  # Ann's keep then bank of 300: the keep of 200 more
    options = advise(result, Position(0, 0, 100), "1124").options
    assert second.after == next(o for o in options if o.turn == 300).win and second.taken == "keep 1-1"
    third = by_turn[1, 200]  # Bob rolled on with 200 and 2 dice
    moves = advise(result, Position(0, 300, 200, 2, seat=1)).options
    assert third.kind == "bank_or_roll" and third.taken == "roll"
    assert third.after == next(o for o in moves if o.action == "roll").win
    assert third.before == moves[0].win and third.scores == (300, 0) and third.seat == 1
    assert (1, 200) in by_turn and len(review.decisions) <= 4  # the last keep (then a bust) says no move
    assert review.lost == tuple(sum(d.counted for d in review.decisions if d.seat == s) for s in (0, 1))
    assert review.as_dict()["costliest_words"] == [d.words(review.players) for d in review.costliest()]
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(log))
    out = CliRunner().invoke(main, ["review", str(path)])
    assert out.exit_code == 0 and "Chance to win lost by each player:" in out.output, out.output


@pytest.mark.parametrize("question, fragment", [
    ({"entry": 9, "turn": 0, "roll": "15332"}, "'entry' must be a whole number from 0 to 2"),
    ({"entry": 0, "turn": 0, "roll": "153321"}, "a roll has 1 to 5 dice"),
    ({"entry": 0, "turn": 100}, "gives 'dice' or 'roll'"),
    ({"entry": 0, "turn": -50, "dice": 2}, "'turn' must be a whole number"),
])
def test_bad_questions_are_one_line(tiny, tmp_path: Path, question: dict, fragment: str) -> None:  # type: ignore[no-untyped-def]
    """A sheet log whose question is not one: one line naming the field, exit status 2."""
    entries, _ = SHEET_GAME
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({**sheet_log(play_sheet(tiny, ["Ann", "Bob"], entries)), "questions": [question]}))
    out = CliRunner().invoke(main, ["review", str(path)])
    assert out.exit_code == 2 and fragment in out.output and len(out.output.strip().splitlines()) == 1, out.output
