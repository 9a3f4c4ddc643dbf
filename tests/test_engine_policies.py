"""The policy protocol: illegal answers are rejected clearly; the heuristics and `parse_policy` behave as documented."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from cinqmille.dice import Keep, counts_of
from cinqmille.engine import (
    Banked,
    Game,
    GameView,
    IllegalMoveError,
    PlayerState,
    Policy,
    ScriptedDice,
    ScriptedPolicy,
    ScriptError,
    TakeOverOffer,
    new_player,
    play_game,
)
from cinqmille.errors import CinqmilleError
from cinqmille.policies import (
    CautiousPolicy,
    RandomPolicy,
    ThresholdPolicy,
    parse_policy,
    register_policy,
)
from cinqmille.rules import PRESET_NAMES, Rules, load_rules, rules_from_dict

STANDARD = load_rules("standard")


class Answer(ScriptedPolicy):
    """A scripted player that gives one fixed (possibly illegal) answer to one kind of question."""

    def __init__(self, kind: str, answer: Any, **script: Any):
        super().__init__(**script)
        self.kind, self.answer = kind, answer

    def choose_keep(self, view: GameView, keeps: tuple[Keep, ...]) -> Any:
        return self.answer if self.kind == "keep" else super().choose_keep(view, keeps)

    def should_bank(self, view: GameView) -> Any:
        return self.answer if self.kind == "bank" else super().should_bank(view)

    def should_take_over(self, view: GameView, offer: TakeOverOffer) -> Any:
        return self.answer if self.kind == "take" else super().should_take_over(view, offer)

    def predict(self, view: GameView, choices: tuple[int, ...]) -> Any:
        return self.answer if self.kind == "predict" else super().predict(view, choices)


def one_turn(rules: Rules, rolls: list[str], policy: Policy, sheets: tuple[list[int], list[int]] = ([1000], [1000]),
             turns: int = 1) -> Game:
    """Play `turns` turns with scripted dice, seat 0 being `policy`."""
    g = Game(rules, [policy, ScriptedPolicy(keeps=["5"], banks=[True])], dice=ScriptedDice(rolls),
             initial=[new_player(rules, s) for s in sheets])
    for _ in range(turns):
        g.play_turn()
    return g


# -- illegal moves --------------------------------------------------------------------

@pytest.mark.parametrize(("answer", "shown"), [
    (7, "7"), (-1, "-1"), (True, "True"), ("5", "'5'"),
    (Keep(counts_of("11"), 200, False), "keep 1-1 (200)"),
    (Keep(counts_of("5"), 100, False), "keep 5 (100)"),
])
def test_illegal_keep_is_rejected(answer: object, shown: str) -> None:
    """A keep that is not one of the legal keeps (or an index out of range) raises IllegalMoveError naming it."""
    with pytest.raises(IllegalMoveError) as info:
        one_turn(STANDARD, ["1-5-2-3-3"], Answer("keep", answer))
    message = str(info.value)
    assert shown in message and "seat 0" in message and "roll 1-2-3-3-5" in message
    assert "legal keep" in message and "\n" not in message


def test_keep_by_index_is_accepted() -> None:
    """A policy may answer with the index of a legal keep."""
    g = one_turn(STANDARD, ["1-2-3-4-4"], Answer("keep", 0, banks=[True]))
    assert g.scores[0] == 1100


@pytest.mark.parametrize("answer", ["yes", None, 1, 0.0])
def test_non_boolean_bank_answer_is_rejected(answer: object) -> None:
    """`should_bank` must answer True or False."""
    with pytest.raises(IllegalMoveError, match=r"'bank\?'.*turn points 100"):
        one_turn(STANDARD, ["1-2-3-4-4"], Answer("bank", answer, keeps=["1"]))


def test_bad_take_over_answer_is_rejected() -> None:
    """`should_take_over` must answer True or False."""
    rules = rules_from_dict({"take_over": True})
    g = Game(rules, [ScriptedPolicy(["1"], [True]), Answer("take", "maybe")], dice=ScriptedDice(["1-2-3-4-4"]),
             initial=[new_player(rules, [1000]), new_player(rules, [1000])])
    g.play_turn()
    with pytest.raises(IllegalMoveError, match="take over"):
        g.play_turn()


@pytest.mark.parametrize("answer", [75, 0, 1000, True, "150"])
def test_impossible_prediction_is_rejected(answer: object) -> None:
    """A prediction must be None or one of the scores two dice can make."""
    rules = rules_from_dict({"prediction": True})
    with pytest.raises(IllegalMoveError, match="predicted"):
        one_turn(rules, ["1-1-1-2-3", "1-5"], Answer("predict", answer, keeps=["111"], banks=[False]))


def test_illegal_move_error_is_a_cinqmille_error() -> None:
    """IllegalMoveError and ScriptError are CinqmilleErrors (one-line messages for the CLI)."""
    assert issubclass(IllegalMoveError, CinqmilleError) and issubclass(ScriptError, CinqmilleError)


def test_scripted_dice_of_the_wrong_size_fail_clearly() -> None:
    """A scripted roll with the wrong number of dice raises ScriptError."""
    with pytest.raises(ScriptError, match="4 dice are in hand"):
        one_turn(STANDARD, ["1-2-3-4-4", "1-2-3-4-4"], ScriptedPolicy(["1"], [False]))


def test_bad_setup_is_rejected() -> None:
    """One player, nine players, no dice source, or an inconsistent sheet are refused."""
    p = ScriptedPolicy()
    with pytest.raises(CinqmilleError, match="2 to 8"):
        Game(STANDARD, [p], rng=np.random.default_rng(0))
    with pytest.raises(CinqmilleError, match="2 to 8"):
        Game(STANDARD, [p] * 9, rng=np.random.default_rng(0))
    with pytest.raises(CinqmilleError, match="rng"):
        Game(STANDARD, [p, p])
    with pytest.raises(CinqmilleError, match="seat 1"):
        Game(STANDARD, [p, p], rng=np.random.default_rng(0), initial=[PlayerState(), PlayerState(score=500)])


# -- parse_policy -------------------------------------------------------------------------

def test_parse_policy_names() -> None:
    """parse_policy understands threshold:T, threshold:T/K, cautious and random."""
    t = parse_policy("threshold:350", STANDARD)
    assert isinstance(t, ThresholdPolicy) and (t.threshold, t.max_dice) == (350, None)
    t = parse_policy("threshold:350/2", STANDARD)
    assert isinstance(t, ThresholdPolicy) and (t.threshold, t.max_dice) == (350, 2)
    assert isinstance(parse_policy("cautious", STANDARD), CautiousPolicy)
    assert isinstance(parse_policy("random", STANDARD, rng=np.random.default_rng(1)), RandomPolicy)


@pytest.mark.parametrize("spec", ["", "thresh", "threshold", "threshold:", "threshold:abc", "threshold:325",
                                  "threshold:-50", "threshold:300/0", "threshold:300/6", "threshold:300/x",
                                  "cautious:3", "random:2", "optimal:x", "expected:1"])
def test_parse_policy_errors(spec: str) -> None:
    """Anything else is a CinqmilleError with a one-line message naming the problem."""
    with pytest.raises(CinqmilleError) as info:
        parse_policy(spec, STANDARD)
    assert "\n" not in str(info.value) and str(info.value)


def test_register_policy_hook() -> None:
    """A new policy name can be registered (the hook for `optimal` and `expected`)."""
    register_policy("always-350", lambda arg, rules, rng: ThresholdPolicy(350))
    assert isinstance(parse_policy("always-350", STANDARD), ThresholdPolicy)


# -- heuristic behaviour -------------------------------------------------------------------

def test_threshold_banks_at_the_threshold() -> None:
    """threshold:350 rolls on at 200 and banks at 400."""
    g = one_turn(STANDARD, ["1-1-2-3-4", "1-1-2"], ThresholdPolicy(350))
    bank = next(e for e in g.events if isinstance(e, Banked))
    assert bank.points == 400


def test_threshold_with_dice_limit_banks_with_few_dice() -> None:
    """threshold:1000/3 banks 200 once only three dice are in hand."""
    g = one_turn(STANDARD, ["1-1-2-3-4"], ThresholdPolicy(1000, 3))
    assert g.scores[0] == 1200


def test_threshold_keeps_the_most_points() -> None:
    """The heuristics keep the keep with the most points (fewest dice on ties)."""
    g = one_turn(STANDARD, ["1-1-1-5-3"], ThresholdPolicy(350))
    assert g.scores[0] == 2050


def test_threshold_avoids_overshoot_under_exact() -> None:
    """Under exact at 4900 the threshold policy keeps one 1 (5000), not the two (overshoot), and banks."""
    rules = rules_from_dict({"end": "exact"})
    result = Game(rules, [ThresholdPolicy(350), ScriptedPolicy()], dice=ScriptedDice(["1-1-2-3-4"]),
                  initial=[new_player(rules, [4900]), new_player(rules)]).play()
    assert result.winner == 0 and result.scores[0] == 5000


def test_heuristics_never_void_a_final_stretch_turn() -> None:
    """At 4000 under house, threshold:350 does not bank 400 (it would count for nothing): it rolls on."""
    rules = load_rules("house")
    g = one_turn(rules, ["4-4-4-2-3", "2-3", "1-2", "6"], ThresholdPolicy(350), ([4000], [1000]))
    assert not any(isinstance(e, Banked) for e in g.events)


def test_cautious_banks_good_turn_with_two_dice() -> None:
    """cautious: 300 with two dice left is banked; with three dice it rolls on."""
    g = one_turn(STANDARD, ["1-1-5-2-3", "1-2"], CautiousPolicy())
    assert g.scores[0] == 1350
    g = one_turn(STANDARD, ["1-1-1-2-3"], CautiousPolicy())
    assert g.scores[0] == 2000


def test_cautious_takes_risks_before_opening() -> None:
    """cautious, not opened: 250 with two dice, then 350 with a full hand are not bankable; it banks 1350."""
    g = one_turn(STANDARD, ["1-1-5-2-3", "5-5", "1-1-1-2-3"], CautiousPolicy(), ([], [1000]))
    assert g.scores[0] == 1350


@pytest.mark.parametrize("name", PRESET_NAMES)
def test_policies_reproducible_with_their_generator(name: str) -> None:
    """The random policy draws only from the Generator it was given: same seed, same game."""
    rules = load_rules(name)

    def game(seed: int):  # type: ignore[no-untyped-def]
        rng = np.random.default_rng(seed)
        return play_game(rules, [RandomPolicy(rng), RandomPolicy(rng)], rng=rng).events

    assert game(4) == game(4)


def test_later_policy_module_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    """A module listed in LATER that defines make_policy(arg, rules, rng) is used by parse_policy."""
    import sys
    import types

    from cinqmille import policies

    module = types.ModuleType("cinqmille.policies.fake_optimal")
    module.make_policy = lambda arg, rules, rng: ThresholdPolicy(int(arg or 0))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "cinqmille.policies.fake_optimal", module)
    monkeypatch.setitem(policies.LATER, "fake", "cinqmille.policies.fake_optimal")
    policy = parse_policy("fake:400", STANDARD)
    assert isinstance(policy, ThresholdPolicy) and policy.threshold == 400


def test_broken_dice_source_is_reported() -> None:
    """A dice source that returns the wrong number of dice or a face out of 1..6 raises EngineError."""
    from cinqmille.engine import EngineError

    class Bad:
        def __init__(self, faces: tuple[int, ...]):
            self.faces = faces

        def roll(self, n: int) -> tuple[int, ...]:
            return self.faces

    for faces in [(1, 2, 3), (1, 2, 3, 4, 7), (0, 1, 1, 1, 1)]:
        with pytest.raises(EngineError, match="dice source"):
            Game(STANDARD, [ThresholdPolicy(350), ThresholdPolicy(350)], dice=Bad(faces)).play_turn()
