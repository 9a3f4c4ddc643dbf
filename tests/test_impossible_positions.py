"""Impossible positions are refused in one place (`Position.validate`), and no position of a real game is."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.dice import reachable
from cinqmille.engine import play_game
from cinqmille.engine.state import GameView, TakeOverOffer
from cinqmille.app.play import view_position
from cinqmille.policies import RandomPolicy
from cinqmille.table.position import Position, PositionError
from cinqmille.rules import Rules, load_rules, rules_from_dict

STANDARD = load_rules("standard")


def run(*args: str) -> tuple[int, str, str]:
    out = CliRunner().invoke(main, ["advise", *args])
    return out.exit_code, out.stdout, out.stderr


@pytest.mark.parametrize(("args", "fragment"), [
    (["--dice", "3"], "nothing set aside with 3 dice"),  # a turn start with fewer than all the dice
    (["--turn", "0", "--dice", "4"], "a turn starts by rolling all 5 dice"),
    (["--roll", "1"], "nothing set aside with 1 die"),  # a roll of fewer dice with nothing set aside
    (["2", "3"], "nothing set aside with 2 dice"),
    (["--turn", "50", "--dice", "5"], "no full hand (or run of them) makes exactly 50"),
    (["--turn", "200", "--roll", "1,5,3,3,2"], "makes exactly 200"),
    (["--turn", "300", "--dice", "3"], "2 dice set aside score at most 200"),
    (["--turn", "150", "--dice", "4"], "1 die set aside scores at most 100"),
    (["--turn", "50", "--dice", "3"], "2 dice set aside score at least 100"),
])
def test_impossible_turns_are_refused_in_one_line(args: list[str], tiny_rules_file: Any, session_cache: Any,
                                                  fragment: str) -> None:
    """`advise` refuses turn points and dice that no turn reaches: exit 2, one line saying why."""
    code, out, err = run("--rules", str(tiny_rules_file), "--me", "200", *args)
    assert code == 2 and out == "", (args, out)
    assert len(err.strip().splitlines()) == 1 and err.startswith("Error: ") and fragment in err, err


@pytest.mark.parametrize(("rules", "args", "fragment"), [
    ({"rule_of_50": True}, ["--me", "1050"], "no score ends in 50"),
    ({"rule_of_50": True}, ["--opp", "2950"], "no score ends in 50"),
    ({"rule_of_50": True, "last_round": True}, ["--me", "1000", "--target", "5050"], "no final score ends in 50"),
    ({"final_stretch": {"from": 4000, "cap": True}}, ["--me", "4500"], "between 4000 and the goal"),
    ({"final_stretch": {"from": 4000, "cap": True}}, ["--opp", "4050"], "between 4000 and the goal"),
])
def test_scores_the_rules_cannot_produce_are_refused(rules: dict, args: list[str], fragment: str,
                                                     tmp_path: Any, session_cache: Any) -> None:
    """Under the rule of 50 no banked score ends in 50; under a capped final stretch none lies between its start
    and the goal: `advise` says so in one line (exit 2) before any solve."""
    path = tmp_path / "r.toml"
    lines = [f"{k} = {str(v).lower()}" for k, v in rules.items() if not isinstance(v, dict)]
    if "final_stretch" in rules:
        lines += ["[final_stretch]", "from = 4000", "cap = true"]
    path.write_text("\n".join(lines) + "\n")
    code, _, err = run("--rules", str(path), *args)
    assert code == 2 and len(err.strip().splitlines()) == 1 and fragment in err, err


def test_what_the_rules_can_produce_is_accepted() -> None:
    """The same scores are accepted where the rules produce them: without the cap, without the rule of 50, at the
    start of the final stretch, and under the rule of 50 with a penalty of 150 points."""
    Position(4500, 4050, 200, 3).validate(rules_from_dict({"final_stretch": {"from": 4000, "cap": False}}))
    Position(4000, 3950, 200, 3).validate(rules_from_dict({"final_stretch": {"from": 4000, "cap": True}}))
    Position(1050, 2950, 200, 3).validate(STANDARD)
    Position(1050, 2950).validate(rules_from_dict({"rule_of_50": True, "zero_turns": {"count": 3, "to": -150}}))
    with pytest.raises(PositionError, match="ends in 50"):
        Position(1050, 2950).validate(rules_from_dict({"rule_of_50": True, "zero_turns": {"count": 3, "to": -200}}))


def test_the_library_refuses_what_the_command_refuses() -> None:
    """`Position.validate` (behind advise, the solver's questions and the CLI) refuses the turn states that the
    shared `reachable` leaves out, and accepts the others, for every turn up to 1000 and every number of dice."""
    reach = reachable(STANDARD, 20)
    refused = 0
    for t in range(21):
        for m in range(1, 6):
            position = Position(1000, 2000, 50 * t, m)
            if reach[t, m - 1]:
                position.validate(STANDARD)
            else:
                refused += 1
                with pytest.raises(PositionError):
                    position.validate(STANDARD)
    assert refused >= 20 and reach[0, 4] and reach[6, 1] and not reach[6, 2]  # 300 with 2 dice, not with 3


# -- no position of a real game is refused ---------------------------------------------------------
GAMES = {
    "tiny": {"goal": 600, "opening": 150},
    "six-dice": {"dice": 6, "goal": 800, "opening": 200},
    "prediction": {"goal": 800, "opening": 0, "prediction": True},
    "take-over-last-round": {"goal": 600, "opening": 150, "take_over": True, "last_round": True},
    "exact-take-over": {"goal": 600, "opening": 150, "end": "exact", "take_over": True},
    "fifty-stretch": {"goal": 1000, "opening": 300, "rule_of_50": True, "hot_dice": "mandatory",
                      "final_stretch": {"from": 600, "cap": True}},
    "house-like": {"goal": 1000, "opening": 300, "min_bank": 150, "must_keep_triples": True,
                   "all_scoring_roll": "keep_all_and_roll", "straights": 0},
    "fifty-penalty": {"goal": 1000, "opening": 0, "rule_of_50": True, "zero_turns": {"count": 2, "to": -150}},
    "ties-crosses": {"goal": 800, "opening": 0, "ties": "knock_back", "crosses": True},
}


class Checking(RandomPolicy):
    """A random player that validates the position of every question the referee asks it."""

    def __init__(self, rules: Rules, rng: np.random.Generator, seen: list[Position]):
        super().__init__(rng)
        self.result = SimpleNamespace(rules=rules)
        self.seen = seen

    def check(self, view: GameView, offer: TakeOverOffer | None = None) -> None:
        position = view_position(self.result, view, None if offer is None else (offer.points, offer.dice))
        if view.roll is not None:
            position = replace(position, dice=view.dice_in_hand)
        rules = view.rules
        if rules.end == "exact" and position.me + position.turn > rules.goal:
            return  # taken over past an exact goal: every keep overshoots, a turn advise leaves out (it says so)
        self.seen.append(position.validate(rules))

    def choose_keep(self, view: GameView, keeps: Any) -> int:
        self.check(view)
        return super().choose_keep(view, keeps)

    def should_bank(self, view: GameView) -> bool:
        self.check(view)
        return super().should_bank(view)

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> bool:
        self.check(view, offer)
        return super().should_take_over(view, offer)

    def predict(self, view: GameView, choices: tuple[int, ...]) -> int | None:
        self.check(view)
        return super().predict(view, choices)


@pytest.mark.parametrize("name", sorted(GAMES))
def test_no_position_of_a_real_game_is_refused(name: str) -> None:
    """In games of random players (keeps, banks, take-overs, announcements at random) under rules that move the
    turn and the scores every way, every position the referee asks about passes `Position.validate`."""
    rules = rules_from_dict(GAMES[name], name)
    rng = np.random.default_rng(5)
    seen: list[Position] = []
    for _ in range(60):
        players = [Checking(rules, rng, seen) for _ in range(2 if rules.last_round else 3)]
        play_game(rules, players, rng=rng)  # type: ignore[arg-type]
    assert len(seen) > 500
    assert len({(p.turn, p.dice) for p in seen}) > 30


@pytest.mark.parametrize(("offer", "fragment"), [
    ("50/1", "4 dice set aside score at least 200"),  # no turn holds 50 points with one die left
    ("1000/5", "a full hand must be rolled"),  # hot_dice = mandatory: a full hand is never banked
    ("100/3", "no bank is smaller than 150"),  # below the smallest bank (min_bank)
])
def test_an_offer_no_bank_can_make_is_refused(offer: str, fragment: str, tmp_path: Path) -> None:
    """A take-over offer that no bank can make is refused in one line, exit 2."""
    rules = tmp_path / "sheet-min-bank.toml"
    rules.write_text('base = "sheet"\nmin_bank = 150\n')
    code, out, err = run("--rules", str(rules), "--me", "1000", "--opp", "1500", "--offer", offer)
    assert code == 2 and "Traceback" not in err
    assert fragment in err and err.startswith("Error: --offer")


def test_an_offer_a_bank_can_make_is_answered() -> None:
    """An offer that some bank makes (300 with 2 dice left, the opponent opened before) is answered."""
    code, out, err = run("--rules", "sheet", "--me", "1000", "--opp", "1500", "--offer", "300/2")
    assert code == 0, err
    assert "take over" in out.lower()


def test_library_errors_name_fields_and_each_application_words_them() -> None:
    """A refused position names its field (`me`); the command line says --me, the web API 'me' and its field."""
    from cinqmille.web.app import create_app
    from starlette.testclient import TestClient

    with pytest.raises(PositionError) as caught:
        Position(30, 0).validate(STANDARD)
    assert caught.value.field == "me" and str(caught.value).startswith("me: a score must")
    code, _, err = run("--me", "30")
    assert code == 2 and err.startswith("Error: --me: a score must")
    with TestClient(create_app(), base_url="http://localhost") as client:
        answer = client.post("/api/advice", json={"rules": "standard", "me": 30, "opp": 0, "roll": "15332"})
    assert answer.status_code == 400 and answer.json()["field"] == "me"
    assert answer.json()["error"].startswith("'me': a score must")
