"""The score sheet (`cinqmille.engine.sheet`): turns entered as outcomes, refereed exactly as games with dice."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cinqmille.engine import Banked, Bust, InstantWin, Kept, TakeOver, TurnEnd, TurnStart, play_game
from cinqmille.engine.replay import replay_sheet_log
from cinqmille.engine.sheet import (
    Entry,
    SheetError,
    SheetRefusal,
    entry_from_dict,
    play_sheet,
    read_sheet_log,
    sheet_log,
)
from cinqmille.policies import parse_policy
from cinqmille.rules import load_rules, rules_from_dict
from cinqmille.rules.loading import RulesError, rules_from_text

STANDARD = load_rules("standard")
SHEET = load_rules("sheet")


def bank(points: int, dice: int | None = None, taken: bool = False) -> dict:
    out: dict = {"kind": "bank", "points": points}
    if dice is not None:
        out["dice"] = dice
    if taken:
        out["taken"] = True
    return out


BUST = {"kind": "bust"}


def refusal(rules, entries, players=("A", "B")) -> SheetRefusal:  # type: ignore[no-untyped-def]
    with pytest.raises(SheetRefusal) as info:
        play_sheet(rules, players, entries)
    return info.value


def test_first_bank_under_the_opening_is_refused_with_the_reason() -> None:
    """A first bank of 700 under an opening of 750 is refused, naming the player and the opening."""
    err = refusal(STANDARD, [bank(700)])
    assert err.index == 0 and "A has not opened" in err.reason and "750" in err.reason


def test_minimum_bank_after_opening() -> None:
    """Under `house` an opened player cannot bank less than 250."""
    house = load_rules("house")
    err = refusal(house, [bank(700), BUST, bank(200)])
    assert err.index == 2 and "minimum bank is 250" in err.reason


def test_reach_end_names_the_winner() -> None:
    """Under `standard` the first bank that reaches 5000 wins at once and nobody plays after."""
    state = play_sheet(STANDARD, ["A", "B"], [bank(800), BUST, bank(4200)])
    assert state.scores == (5000, 0) and state.winner == 0 and state.reason == "goal" and state.to_move is None
    assert refusal(STANDARD, [bank(800), BUST, bank(4200), bank(800)]).reason == "the game is over"


def test_exact_end_refuses_an_overshoot_and_the_last_round_runs() -> None:
    """Under `sheet` a bank past 5000 is refused (it is a bust); reaching 5000 gives the other a last turn."""
    entries = [bank(3000), bank(600), bank(1500)]
    err = refusal(SHEET, entries + [BUST, bank(600)])
    assert "passes the goal" in err.reason
    state = play_sheet(SHEET, ["A", "B"], entries + [BUST, bank(500)])
    assert state.scores[0] == 5000 and state.winner is None and state.last_round is not None and state.to_move == 1
    done = play_sheet(SHEET, ["A", "B"], entries + [BUST, bank(500), BUST])
    assert done.winner == 0 and done.reason == "last_round"


def test_two_crosses_strike_the_latest_score() -> None:
    """Under `sheet` two scoreless turns in a row strike out the player's latest score."""
    state = play_sheet(SHEET, ["A", "B"], [bank(500), bank(600), bank(700), BUST, BUST, BUST])
    assert state.scores == (1200, 0)
    assert state.players[1].history[0].struck


def test_deadly_tie_strikes_the_opponents_equal_score() -> None:
    """Under `sheet` a bank equal to a score on an opponent's sheet strikes that score out."""
    state = play_sheet(SHEET, ["A", "B"], [bank(500), bank(500)])
    assert state.scores == (0, 500)


def test_take_over_counts_the_taken_points_and_needs_an_opened_player() -> None:
    """A taken-over bank includes the previous bank's points; a player not opened cannot take over."""
    state = play_sheet(SHEET, ["A", "B"], [bank(500, 2), bank(600, 3), bank(750, taken=True)])
    assert state.scores == (1250, 600)
    assert any(isinstance(e, TakeOver) and e.accepted for e in state.events)
    assert "only an opened player" in refusal(SHEET, [bank(500, 2), bank(600, 3, taken=True)]).reason
    assert "must roll before banking" in refusal(SHEET, [bank(500, 2), bank(600, 3), bank(600, taken=True)]).reason
    assert "no take-over" in refusal(STANDARD, [bank(800), bank(900, taken=True)]).reason


def test_final_stretch_void_and_cap() -> None:
    """Under `house` a bank from 3800 to 4300 stops at 4000 (cap); from 4000 a bank short of 5000 counts nothing."""
    house = load_rules("house")
    state = play_sheet(house, ["A", "B"], [bank(3800), BUST, bank(500), BUST])
    assert state.scores == (4000, 0)
    state = play_sheet(house, ["A", "B"], [bank(3800), BUST, bank(500), BUST, bank(500)])
    assert state.scores == (4000, 0)


def test_full_hand_bank_refused_when_hot_dice_are_mandatory() -> None:
    """Under `sheet` (mandatory hot dice) a bank with all five dice in hand is refused."""
    assert "full hand" in refusal(SHEET, [bank(500, 5)]).reason


def test_a_refused_entry_leaves_the_sheet_as_it_was() -> None:
    """The entries before a refused one stand; the refused one is reported by its index."""
    err = refusal(STANDARD, [bank(800), BUST, bank(825)])
    assert err.index == 2 and "multiple of 50" in err.reason
    assert play_sheet(STANDARD, ["A", "B"], [bank(800), BUST]).scores == (800, 0)


@pytest.mark.parametrize("data, message", [
    ({"kind": "bank"}, "'points' must be a whole number"),
    ({"kind": "bank", "points": True}, "'points' must be a whole number"),
    ({"kind": "fold"}, "'kind' must be"),
    ({"kind": "bust", "extra": 1}, "unknown field"),
    ([1, 2], "expected an object"),
])
def test_malformed_entries_are_one_line_errors(data: object, message: str) -> None:
    """Entries that are not well formed are refused as `SheetError`, naming the field."""
    with pytest.raises(SheetError, match=message):
        entry_from_dict(data)


@pytest.mark.parametrize("names", [["A"], ["A"] * 9, ["A", ""], ["A", "x" * 41], ["A", 3]])
def test_bad_player_lists(names: list) -> None:
    """A sheet has 2 to 8 named players, each name 1 to 40 printable characters."""
    with pytest.raises(SheetError):
        play_sheet(STANDARD, names, [])


def entries_of(events) -> list[Entry]:  # type: ignore[no-untyped-def]
    """The sheet entries of a game played with dice: each turn's outcome, as a player would write it."""
    out: list[Entry] = []
    taken, dice = False, None
    for event in events:
        if isinstance(event, TurnStart):
            taken, dice = False, None
        elif isinstance(event, TakeOver):
            taken = event.accepted
        elif isinstance(event, Kept):
            dice = event.dice_in_hand
        elif isinstance(event, Banked):
            out.append(Entry("bank", event.points, dice, taken))
        elif isinstance(event, Bust):
            out.append(Entry("bust", all_dice=event.all_dice and event.reason == "no_score"))
        elif isinstance(event, InstantWin):
            out.append(Entry("win"))
    return out


GAME_RULES = {
    "standard": "standard", "sheet": "sheet", "house": "house",
    "penalties": {"base": "standard", "zero_turns": {"count": 3, "to": "previous"}, "bust_strikes_last_score": True,
                  "ties": "knock_back", "last_round": True, "rule_of_50": True},
    "fifty": {"base": "standard", "zero_turns": {"count": 2, "to": -500}, "take_over": True,
              "final_stretch": {"from": 4000, "cap": False}, "last_round": True},
}


@pytest.mark.parametrize("name", sorted(GAME_RULES))
@pytest.mark.parametrize("players", [2, 3])
def test_sheet_of_a_dice_game_writes_the_same_scores(name: str, players: int) -> None:
    """A game played with dice, written down turn by turn on a sheet, gives the same score sheet and winner."""
    spec = GAME_RULES[name]
    rules = load_rules(spec) if isinstance(spec, str) else rules_from_dict(spec)
    for seed in range(3):
        rng = np.random.default_rng(seed)
        policies = [parse_policy(p, rules, rng=rng) for p in ("threshold:350", "cautious", "threshold:300/2")[:players]]
        result = play_game(rules, policies, rng=rng)
        state = play_sheet(rules, [f"P{i}" for i in range(players)], entries_of(result.events))
        assert state.winner == result.winner
        assert state.scores == result.scores
        assert [e.scores for e in state.events if isinstance(e, TurnEnd)] == list(result.score_sheet)


def test_a_downloaded_log_replays_to_the_same_scores() -> None:
    """A sheet log, written as JSON and read back, replays through the engine to the same scores and winner."""
    state = play_sheet(SHEET, ["Ann", "Bob"], [bank(500, 2), bank(600, 3), bank(750, taken=True), BUST, BUST, BUST])
    log = json.loads(json.dumps(sheet_log(state)))
    again = replay_sheet_log(log)
    assert again.scores == state.scores == (1250, 0) and again.names == ("Ann", "Bob")
    assert again.events == state.events


def test_a_tampered_log_is_refused() -> None:
    """A log whose recorded scores are not what its entries give, or not a sheet log at all, is refused."""
    log = sheet_log(play_sheet(STANDARD, ["A", "B"], [bank(800)]))
    with pytest.raises(SheetError, match="not the"):
        replay_sheet_log({**log, "scores": [900, 0]})
    with pytest.raises(SheetError, match="not a sheet log"):
        replay_sheet_log({"format": "other"})
    with pytest.raises(SheetError, match="must be a preset"):
        read_sheet_log({**log, "rules": {**log["rules"], "base": "/etc/passwd"}})


def test_uploaded_rules_text_is_read_like_a_file() -> None:
    """Rules text is checked as a file is; its `base` must be a preset, never a path."""
    assert rules_from_text('base = "standard"\nopening = 500\n').opening == 500
    with pytest.raises(RulesError, match="multiple of 50"):
        rules_from_text("opening = 525\n")
    with pytest.raises(RulesError, match="must be a preset"):
        rules_from_text('base = "/etc/hostname"\n')
    with pytest.raises(RulesError, match="at most 64 KiB"):
        rules_from_text("#" * (65 * 1024))
