"""`cinqmille play` and `cinqmille.play`: the bot follows the solver, piped games run to the end, EOF and q quit."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.app.advice import advise
from cinqmille.cli import main
from cinqmille.engine import Banked, Kept, Roll, TurnEnd, TurnStart, play_game
from cinqmille.dice import faces_of
from cinqmille.app.play import bot_policy, play_text
from cinqmille.table.position import Position
from cinqmille.rules import load_rules, rules_from_dict
from cinqmille.solver import solve

pytestmark = pytest.mark.usefixtures("session_cache")


def run(*args: str, text: str = "") -> tuple[int, str, str]:
    out = CliRunner().invoke(main, ["play", *args], input=text)
    return out.exit_code, out.stdout, out.stderr


class NoInput:
    """A console for games without people: any question is a test failure."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def ask(self, prompt: str) -> str:
        raise AssertionError(f"a bot-only game asked: {prompt}")

    def say(self, text: str = "") -> None:
        self.lines.append(text)


def test_bot_keeps_and_banks_as_the_solver_says(tiny_rules_file: Path) -> None:
    """In bot-against-bot games every keep is worth the solver's best keep, and every bank or roll is the advised one."""
    rules = load_rules(str(tiny_rules_file))
    result = solve(rules, "win")
    checked = 0
    for seed in range(12):
        game = play_game(rules, [bot_policy(result), bot_policy(result)],
                         rng=np.random.default_rng(seed))
        scores = [0, 0]
        for event in game.events:
            if isinstance(event, TurnStart):
                seat, t = event.seat, 0
                me, opp = scores[seat], scores[1 - seat]
            elif isinstance(event, Roll):
                if event.asked:  # the bot chose to roll although it could bank
                    assert advise(result, Position(me, opp, t, len(event.faces))).best.action == "roll"
                faces = event.faces
            elif isinstance(event, Kept):
                options = advise(result, Position(me, opp, t), roll=faces).options
                kept = next(o for o in options if o.keep == faces_of(event.dice))
                assert kept.win == pytest.approx(options[0].win, abs=1e-12)
                t = event.turn_points
                checked += 1
            elif isinstance(event, Banked):
                best = advise(result, Position(me, opp, event.points, dice)).best
                assert best.action == "bank" and 0.0 <= best.win <= 1.0
            elif isinstance(event, TurnEnd):
                scores = list(event.scores)
            if isinstance(event, Kept):
                dice = event.dice_in_hand
        assert game.winner in (0, 1)
    assert checked > 20


def test_piped_game_runs_to_the_end(tiny_rules_file: Path) -> None:
    """A human taking every advised move (Enter) against the bot finishes the game; a sheet follows every turn."""
    code, out, err = run("--rules", str(tiny_rules_file), "--seed", "1", text="\n" * 3000)
    assert code == 0, err
    assert re.search(r"^(You|Bot) won, \d+ to \d+\.$", out, re.M)
    turns = len(re.findall(r"^--- Turn \d+:", out, re.M))
    assert turns > 1 and len(re.findall(r"^Score sheet: You \d+ \| Bot \d+$", out, re.M)) == turns
    assert "Bot thinks: " in out and "Traceback" not in out + err


def test_same_seed_same_game(tiny_rules_file: Path) -> None:
    """The same seed and the same answers give the same transcript."""
    first = run("--rules", str(tiny_rules_file), "--seed", "11", text="\n" * 3000)
    second = run("--rules", str(tiny_rules_file), "--seed", "11", text="\n" * 3000)
    assert first == second


def test_bot_explains_with_the_advise_sentence(tiny_rules_file: Path) -> None:
    """The bot's first explanation is the sentence `advise` gives for its first roll."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--players", "bot,human", "--seed", "2", text="\n" * 3000)
    assert code == 0
    roll = re.search(r"^Bot: roll ([1-6-]+)$", out, re.M)
    said = re.search(r"^Bot thinks: (.*)$", out, re.M)
    assert roll and said
    result = solve(load_rules(str(tiny_rules_file)), "win")
    assert said.group(1) == advise(result, Position(0, 0, 0), roll=roll.group(1)).sentence


def test_question_mark_shows_advice(tiny_rules_file: Path) -> None:
    """`?` at the first keep prints the advise sentence of that roll."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--seed", "4", text="?\n" + "\n" * 3000)
    assert code == 0
    roll = re.search(r"^You: roll ([1-6-]+)$", out, re.M)
    assert roll
    result = solve(load_rules(str(tiny_rules_file)), "win")
    assert advise(result, Position(0, 0, 0), roll=roll.group(1)).sentence in out


def test_end_of_input_quits_cleanly(tiny_rules_file: Path) -> None:
    """With no input at all the game stops at the first question with a message and exit 0."""
    code, out, err = run("--rules", str(tiny_rules_file), "--seed", "1", text="")
    assert code == 0 and "End of input" in out and "Traceback" not in out + err


def test_q_quits(tiny_rules_file: Path) -> None:
    """q at a question abandons the game with exit 0."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--seed", "1", text="q\n")
    assert code == 0 and "Game abandoned." in out


def test_illegal_keep_asks_again(tiny_rules_file: Path) -> None:
    """An answer that is not a legal keep is refused and the question is asked again."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--seed", "1", text="9\n" + "\n" * 3000)
    assert code == 0 and "'9' is not a legal keep" in out and " won, " in out


def test_two_people_at_one_keyboard(tiny_rules_file: Path) -> None:
    """human,human plays to a winner with both players answering from the same input."""
    code, out, _ = run("--rules", str(tiny_rules_file), "--players", "human,human", "--seed", "3",
                       text="\n" * 3000)
    assert code == 0 and re.search(r"^Player [12] won", out, re.M) and "Bot" not in out


@pytest.mark.parametrize("players", ["human,cat", "human", ",".join(["bot"] * 9)])
def test_bad_players_is_one_line(players: str, tiny_rules_file: Path) -> None:
    """--players with an unknown kind or a wrong number of seats: exit 2, one line."""
    code, _, err = run("--rules", str(tiny_rules_file), "--players", players)
    assert code == 2 and len(err.strip().splitlines()) == 1


def test_bot_notes_a_relaxed_ruleset() -> None:
    """Under last_round and crosses (crosses are outside the solver's model) bot games end with a winner, and the
    game says in plain words that the bot leaves crosses out."""
    rules = rules_from_dict({"name": "tiny-lr", "goal": 500, "opening": 150, "last_round": True, "crosses": True})
    for seed in range(3):
        console = NoInput()
        winner = play_text(rules, ["bot", "bot"], console, rng=np.random.default_rng(seed),
                           result_provider=lambda: solve(rules, "win"))
        assert winner in (0, 1) and any("the rule 'crosses' is left out" in line for line in console.lines)


def test_bot_plays_last_rounds_and_take_overs_from_the_solver() -> None:
    """Under a solved last round with take-overs the bot explains its last turns and offers from the solver."""
    rules = rules_from_dict({"name": "tiny-lr-take", "goal": 500, "opening": 150, "last_round": True,
                             "take_over": True})
    said: list[str] = []
    for seed in range(6):
        console = NoInput()
        winner = play_text(rules, ["bot", "bot"], console, rng=np.random.default_rng(seed),
                           result_provider=lambda: solve(rules, "win"))
        assert winner in (0, 1)
        said.extend(console.lines)
    text = "\n".join(said)
    assert "relaxes" not in text and "rule of thumb" not in text
    assert "take over" in text or "afresh" in text


# -- any policy at any seat; numbers typed at the prompts ------------------------------------------
LONG_TOML = 'name = "tiny-long"\ngoal = 1500\nopening = 150\n'


@pytest.fixture
def long_file(tmp_path: Path, session_cache: Path) -> Path:
    """A small ruleset whose games last several turns (goal 1500, opening 150)."""
    path = tmp_path / "long.toml"
    path.write_text(LONG_TOML)
    return path


def test_a_threshold_seat_plays_its_policy_and_is_narrated_by_the_referee(long_file: Path) -> None:
    """With `--players human,threshold:300` the bot seat banks only with 300 points or a winning bank, its moves are
    shown as the referee logs them (no 'thinks'), and the game ends with a winner."""
    code, out, err = run("--rules", str(long_file), "--players", "human,threshold:300", "--seed", "6",
                         text="\n" * 3000)
    assert code == 0, err
    assert "You, Bot (threshold:300)" in out and re.search(r"^(You|Bot \(threshold:300\)) won", out, re.M)
    assert "thinks" not in out
    banks = re.findall(r"^Bot \(threshold:300\): bank (\d+): (\d+) -> (\d+)$", out, re.M)
    assert banks and re.search(r"^Bot \(threshold:300\): roll ", out, re.M)
    for points, _, after in banks:
        assert int(points) >= 300 or int(after) >= 1500


def test_seats_take_the_policy_names_of_simulate(long_file: Path) -> None:
    """`bot` is `optimal` (the same game, word for word), and three seats `bot,cautious,human` play to a winner
    with numbered bot names."""
    seat_bot = run("--rules", str(long_file), "--players", "bot,human", "--seed", "8", text="\n" * 3000)
    seat_optimal = run("--rules", str(long_file), "--players", "optimal,human", "--seed", "8", text="\n" * 3000)
    assert seat_bot == seat_optimal and seat_bot[0] == 0
    code, out, err = run("--rules", str(long_file), "--players", "bot,cautious,human", "--seed", "2",
                         text="\n" * 3000)
    assert code == 0, err
    assert "Bot 1, Bot 2 (cautious), You" in out and "Bot 1 thinks:" in out and "Bot 2 (cautious) thinks" not in out
    assert re.search(r"^(You|Bot 1|Bot 2 \(cautious\)) won", out, re.M)


@pytest.mark.parametrize(("players", "fragment"), [
    ("human,threshold:25", "multiple of 50"), ("human,cat", "unknown policy 'cat'"),
    ("human,optimal:3", "takes no argument"), ("Human,bot", "unknown policy 'Human'"),
])
def test_bad_seat_names_are_refused_like_simulate(players: str, fragment: str, tiny_rules_file: Path) -> None:
    """A seat that is neither human nor a policy of simulate: exit 2, one line naming the problem."""
    code, _, err = run("--rules", str(tiny_rules_file), "--players", players)
    assert code == 2 and len(err.strip().splitlines()) == 1 and fragment in err, err


class Scripted:
    """A console that answers from a list and records what it is asked and told."""

    def __init__(self, answers: list[str]):
        self.answers = list(answers)
        self.asked: list[str] = []
        self.said: list[str] = []

    def ask(self, prompt: str) -> str:
        self.asked.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)

    def say(self, text: str = "") -> None:
        self.said.append(text)


def human_at(answers: list[str]):  # type: ignore[no-untyped-def]
    """A person at the keyboard of a tiny game without a solved table (no advice), answering `answers`."""
    from cinqmille.app.play import HumanPolicy, Table

    rules = rules_from_dict({"name": "tiny", "goal": 500, "opening": 150, "prediction": True})
    console = Scripted(answers)
    return HumanPolicy(Table(rules, ["You", "Other"], console, None), 0), console, rules


def test_keep_answers_are_read_as_faces() -> None:
    """At the keep prompt the faces are read by `parsing.faces`: '1, 5' and '1-5' keep the 1 and the 5; '1x5',
    a seventh face and a non-ASCII digit are refused and asked again."""
    from cinqmille.engine import GameView, new_player
    from cinqmille.engine.judge import keep_lookup

    for answers in (["1, 5"], ["1x5", "1-5"], ["7", "١", "15"]):
        human, console, rules = human_at(answers)
        counts = (1, 0, 1, 0, 1, 0)  # 1-3-5
        view = GameView(rules, 0, (new_player(rules), new_player(rules)), 100, 3, counts, True, False, False,
                        False, None, 0)
        keeps = keep_lookup(rules)[counts]
        keep = human.choose_keep(view, keeps)
        assert faces_of(keep.dice) == (1, 5)
        assert len(console.asked) == len(answers)
        assert sum("is not a legal keep" in line for line in console.said) == len(answers) - 1


def test_announcements_are_read_as_whole_numbers() -> None:
    """At the announcement prompt the number is read by `parsing.whole`: '1_50' is 150, '0' is no announcement,
    and '150.0', '+150' and a non-ASCII '١٥٠' are asked again."""
    from cinqmille.engine import GameView, new_player

    for answers, want in ((["1_50"], 150), (["150.0", "+150", "١٥٠", "0"], None), (["x", "200"], 200)):
        human, console, rules = human_at(answers)
        view = GameView(rules, 0, (new_player(rules), new_player(rules)), 200, 2, None, True, False, False,
                        False, None, 0)
        assert human.predict(view, (50, 100, 150, 200)) == want
        assert len(console.asked) == len(answers)


def test_three_and_four_bots_read_the_three_player_table() -> None:
    """With a three-player result, three and four bots play to a winner, say which table they read, and explain
    their keeps with the three-player advice (`advise --opp B,C`)."""
    rules = rules_from_dict({"name": "tiny3", "goal": 500, "opening": 150})
    result = solve(rules, "win", players=3)
    for seats, note in ((3, "exact three-player table"), (4, "two opponents who threaten most")):
        console = NoInput()
        winner = play_text(rules, ["bot"] * seats, console, rng=np.random.default_rng(seats),
                           result_provider=lambda: result)
        assert winner in range(seats)
        text = "\n".join(console.lines)
        assert note in text and "thinks:" in text and "no advice here" not in text


def test_an_instant_win_ends_with_the_sheet_as_it_stands() -> None:
    """Scripted dice: the first player banks 300, the bot then rolls five 1s and wins at once; the last line says
    it won by an instant win and gives the sheet (300 and 0), not a score it never had. (Under `exact`: under
    `reach` keeping four 1s and banking wins as surely, and the solve keeps the most points on a tie.)"""
    from cinqmille.engine import ScriptedDice

    rules = rules_from_dict({"name": "tiny", "goal": 500, "opening": 150, "end": "exact"})
    result = solve(rules, "win")
    console = Scripted(["333", "b"])
    winner = play_text(rules, ["human", "bot"], console, dice=ScriptedDice(["33346", "11111"]),
                       result_provider=lambda: result)
    text = "\n".join(console.said)
    assert winner == 1
    assert "Bot: 1-1-1-1-1 wins the game at once!" in text
    assert "Bot won by an instant win. Score sheet: You 300 | Bot 0" in text
    assert " won, " not in text


def test_one_die_in_hand_is_one_die() -> None:
    """The bank-or-roll prompt with a single die in hand says '1 die', not '1 dice'."""
    from cinqmille.engine import ScriptedDice

    rules = rules_from_dict({"name": "tiny", "goal": 500, "opening": 150})
    result = solve(rules, "win")
    console = Scripted(["1111", "b"])
    play_text(rules, ["human", "bot"], console, dice=ScriptedDice(["11113"]), result_provider=lambda: result)
    assert any(prompt.startswith("Turn 1100, 1 die in hand:") for prompt in console.asked), console.asked


def test_play_offers_the_review_at_the_end(tiny_rules_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """After a game with a person at the table, `play` asks whether to show the review: 'y' shows `cinqmille
    review`'s text of that game, anything else nothing; piped games (Enter) end as before."""
    from types import SimpleNamespace

    import numpy as np

    from cinqmille.cli.play_cmd import offer_review
    from cinqmille.cli.review_cmd import review_text
    from cinqmille.engine import play_game
    from cinqmille.policies import parse_policy
    from cinqmille.app.review import game_log, review_log
    from cinqmille.rules import load_rules

    rules = load_rules(str(tiny_rules_file))
    seats = ["threshold:150", "optimal"]
    played = play_game(rules, [parse_policy(s, rules) for s in seats], rng=np.random.default_rng(3))
    game = SimpleNamespace(rules=rules, initial=played.initial, events=played.events)
    asked: list[str] = []

    class Console:
        def __init__(self, answer: str) -> None:
            self.answer = answer

        def ask(self, prompt: str) -> str:
            asked.append(prompt)
            return self.answer

    offer_review(Console("y"), game, seats)  # type: ignore[arg-type]
    shown = capsys.readouterr().out.splitlines()
    from cinqmille.app.play import seat_names

    want = review_text(review_log(game_log(rules, seat_names(seats), played.initial, played.events)))
    assert shown == want and "The costliest decisions:" in shown and asked[0].startswith("Review the game")
    offer_review(Console(""), game, seats)  # type: ignore[arg-type]
    assert capsys.readouterr().out == ""
    code, out, _ = run("--rules", str(tiny_rules_file), "--seed", "1", text="\n" * 3000)
    assert code == 0 and "Review the game (the chance each decision cost)? [y/N]" in out
