"""The JSON API of `cinqmille serve` (every endpoint, bad input included) and the `serve` command itself."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'cinqmille[web]'")
pytest.importorskip("httpx2", reason="the test client needs httpx2: pip install 'cinqmille[test]'")

from starlette.testclient import TestClient  # noqa: E402

from cinqmille.cli import main  # noqa: E402
from cinqmille.web.app import create_app  # noqa: E402
from cinqmille.web.bodies import MAX_BODY  # noqa: E402

from conftest import TINY_TOML  # noqa: E402

TINY = {"toml": TINY_TOML}


@pytest.fixture
def client(session_cache: Path) -> TestClient:
    """A test client of a fresh app, its tables in the session's solver cache."""
    return TestClient(create_app(), base_url="http://localhost")


def ask(client: TestClient, body: dict) -> dict:
    """POST /api/advice, polling /api/progress while the table is solved; the final JSON answer."""
    for _ in range(600):
        r = client.post("/api/advice", json=body)
        if r.status_code != 202:
            assert r.status_code == 200, r.json()
            return r.json()
        job = r.json()["job"]
        while (p := client.get("/api/progress", params={"job": job}).json())["status"] == "solving":
            assert 0.0 <= p["progress"] <= 1.0
            time.sleep(0.05)
        assert p["status"] == "ready", p
    raise AssertionError("no answer")


def cli_json(tmp_path: Path, *args: str) -> dict:
    """The JSON of `cinqmille advise --json` with the tiny ruleset."""
    rules = tmp_path / "tiny.toml"
    rules.write_text(TINY_TOML)
    out = CliRunner().invoke(main, ["advise", "--rules", str(rules), "--json", *args])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_rules_lists_the_presets_and_the_default(client: TestClient) -> None:
    """GET /api/rules gives every preset with its description, and the server's default ruleset."""
    data = client.get("/api/rules").json()
    assert {"standard", "sheet", "house"} <= {p["name"] for p in data["presets"]}
    assert data["default"] == "standard"


def test_rules_check_reads_presets_and_uploaded_text(client: TestClient) -> None:
    """POST /api/rules resolves a preset or the text of a rules file; a bad file is one line naming the key."""
    assert client.post("/api/rules", json={"rules": "sheet"}).json()["rules"]["end"] == "exact"
    ok = client.post("/api/rules", json={"rules": TINY}).json()
    assert ok["name"] == "tiny" and ok["rules"]["goal"] == 500 and ok["spec"] == TINY | {"toml": ok["spec"]["toml"]}
    bad = client.post("/api/rules", json={"rules": {"toml": "opening = 525\n"}})
    assert bad.status_code == 400 and "key 'opening'" in bad.json()["error"]
    unknown = client.post("/api/rules", json={"rules": "/etc/passwd"})
    assert unknown.status_code == 400 and "'rules' must be a preset name" in unknown.json()["error"]
    assert unknown.json()["field"] == "rules"


def test_sheet_scores_refusals_and_winner(client: TestClient) -> None:
    """POST /api/sheet replays the entries: scores, who plays next; a refused entry is a 422 with its reason."""
    body = {"rules": "standard", "players": ["Ann", "Bob"], "entries": [{"kind": "bank", "points": 800}]}
    data = client.post("/api/sheet", json=body).json()
    assert data["scores"] == [800, 0] and data["to_move"] == 1 and data["winner"] is None
    refused = client.post("/api/sheet", json={**body, "entries": body["entries"] + [{"kind": "bank", "points": 700}]})
    assert refused.status_code == 422
    assert refused.json() == {"error": "Bob has not opened: the first bank must be at least 750", "entry": 1,
                              "field": "entries[1]"}
    won = client.post("/api/sheet", json={**body, "entries": body["entries"] + [
        {"kind": "bust"}, {"kind": "bank", "points": 4200}]}).json()
    assert won["winner"] == 0 and won["reason"] == "goal" and won["to_move"] is None


def test_log_and_replay_round_trip(client: TestClient) -> None:
    """POST /api/log gives a game log that POST /api/replay (and the engine) plays back to the same sheet."""
    from cinqmille.engine.replay import replay_sheet_log

    body = {"rules": "sheet", "players": ["Ann", "Bob"],
            "entries": [{"kind": "bank", "points": 500, "dice": 2}, {"kind": "bank", "points": 600, "dice": 3},
                        {"kind": "bank", "points": 750, "taken": True}, {"kind": "bust"}]}
    log = client.post("/api/log", json=body)
    assert log.status_code == 200 and "attachment" in log.headers["content-disposition"]
    back = client.post("/api/replay", json=log.json()).json()
    assert back["rules"] == "sheet" and back["entries"] == body["entries"]
    assert back["sheet"]["scores"] == [1250, 600] == list(replay_sheet_log(log.json()).scores)
    bad = client.post("/api/replay", json={**log.json(), "scores": [0, 0]})
    assert bad.status_code == 400 and "not the [0, 0]" in bad.json()["error"]


def test_advice_is_the_cli_answer_after_a_background_solve(client: TestClient, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The first advice of an unsolved ruleset is a 202 with a job; polled to ready, the answer is advise --json's."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "fresh-cache"))
    first = client.post("/api/advice", json={"rules": TINY, "me": 150, "opp": 300, "roll": "15332"})
    assert first.status_code == 202 and first.json()["status"] == "solving"
    data = ask(client, {"rules": TINY, "me": 150, "opp": 300, "roll": "15332"})
    assert data == cli_json(tmp_path, "--me", "150", "--opp", "300", "--roll", "15332")
    bank_roll = ask(client, {"rules": TINY, "me": 150, "opp": 300, "turn": 200, "dice": 2})
    assert bank_roll == cli_json(tmp_path, "--me", "150", "--opp", "300", "--turn", "200", "--dice", "2")


def test_advice_from_the_sheet_is_in_the_movers_seat(client: TestClient) -> None:
    """Advice on a sheet is for the player to move, every opponent's score read from the sheet."""
    sheet = {"rules": TINY, "players": ["Ann", "Bob"], "entries": [{"kind": "bank", "points": 300}]}
    from_sheet = ask(client, {**sheet, "roll": [1, 5, 3, 3, 2]})
    explicit = ask(client, {"rules": TINY, "me": 0, "opp": 300, "roll": "15332"})
    assert from_sheet == explicit and from_sheet["position"]["me"] == 0 and from_sheet["position"]["opp"] == 300
    four = {"rules": TINY, "players": ["A", "B", "C", "D"], "entries": [{"kind": "bank", "points": 150}]}
    data = ask(client, {**four, "turn": 100, "dice": 3})
    assert data["position"]["opp"] == [0, 0, 150] and data["exact"]  # the exact four-player table
    five = {"rules": TINY, "players": ["A", "B", "C", "D", "E"], "entries": [{"kind": "bank", "points": 150}]}
    data = ask(client, {**five, "turn": 100, "dice": 3})
    assert data["position"]["opp"] == [0, 0, 0, 150] and data["exact"]  # the exact five-player table
    six = {"rules": TINY, "players": ["A", "B", "C", "D", "E", "F"], "entries": [{"kind": "bank", "points": 150}]}
    data = ask(client, {**six, "turn": 100, "dice": 3})
    assert data["position"]["opp"] == [0, 0, 0, 0, 150] and not data["exact"]  # the five-player table's decision
    assert data["figure"]["kind"] == "estimated" and data["figure"]["players"] == 6  # the six-player game's chance


@pytest.mark.parametrize("body, status, message", [
    ({"rules": "nope", "me": 0, "opp": 0, "roll": "15"}, 400, "'rules' must be a preset name"),
    ({"rules": TINY, "roll": "1572"}, 400, "faces 1 to 6"),
    ({"rules": TINY, "roll": [1, 7]}, 400, "faces 1 to 6"),
    ({"rules": TINY, "roll": "1111111"}, 400, "1 to 5 dice"),
    ({"rules": TINY, "me": 100, "opp": 0, "roll": "15"}, 400, "below the opening"),
    ({"rules": TINY, "me": 175, "opp": 0, "roll": "15"}, 400, "multiple of 50"),
    ({"rules": TINY, "me": 0, "opp": 600, "roll": "15"}, 400, "already reached the goal"),
    ({"rules": TINY, "me": 0, "opp": 0, "turn": 50, "dice": 5}, 400, "no turn holds 50"),
    ({"rules": TINY, "turn": 100}, 400, "give 'dice'"),
    ({"rules": TINY, "me": "lots"}, 400, "'me' must be a whole number"),
    ({"rules": TINY, "opp": [0, "x"]}, 400, "'opp' must be"),
    ({"rules": TINY, "me": 10**30}, 400, "out of range"),
    ({"rules": TINY, "players": ["A", "B"], "entries": [{"kind": "bank", "points": 500}]}, 400, "game is over"),
    ({"rules": TINY, "players": ["A", "B"], "entries": [{"kind": "bank", "points": 100}]}, 422, "has not opened"),
    ({"rules": TINY, "players": ["A"], "entries": []}, 400, "2 to 8 players"),
])
def test_advice_bad_input_is_one_json_error(client: TestClient, body: dict, status: int, message: str) -> None:
    """Every bad request to /api/advice is a 4xx with one message, refused before any solve."""
    r = client.post("/api/advice", json=body)
    assert r.status_code == status and message in r.json()["error"], r.json()
    assert "Traceback" not in r.text


def test_bodies_that_are_not_requests(client: TestClient) -> None:
    """Oversized, non-JSON, non-object bodies, unknown endpoints and wrong methods are JSON 4xx errors."""
    raw = {"content-type": "application/json"}
    big = client.post("/api/sheet", content=b"{" + b" " * MAX_BODY + b"}", headers=raw)
    assert big.status_code == 413 and "larger than" in big.json()["error"]
    assert client.post("/api/sheet", content=b"{nope", headers=raw).status_code == 400
    assert client.post("/api/sheet", content=b"\xff\xfe", headers=raw).json()["error"] == \
        "the request body is not UTF-8 text"
    assert client.post("/api/sheet", json=[1, 2]).json()["error"] == "the request body must be a JSON object"
    assert client.post("/api/sheet", content=b"[" * 100000 + b"]" * 100000, headers=raw).status_code in (400, 413)
    assert client.get("/api/sheet").status_code == 405
    assert client.get("/api/nothing").json() == {"error": "no such endpoint: /api/nothing"}
    assert client.get("/api/progress", params={"job": "x"}).status_code == 404
    assert client.post("/api/rules", json={"rules": {"toml": "#" * (65 * 1024)}}).status_code == 400


JUNK = [None, True, 0, -1, 1.5, "", "x" * 500, [], [None], {}, {"kind": None}, 10**20, [[[]]]]


def test_junk_in_every_field_never_crashes_the_server(client: TestClient) -> None:
    """Any value in any field of any endpoint gets a JSON answer below 500."""
    fields = ["rules", "players", "entries", "me", "opp", "turn", "dice", "roll", "seat", "offer", "target",
              "format", "version", "scores"]
    for path in ("/api/sheet", "/api/advice", "/api/log", "/api/replay", "/api/rules"):
        for field in fields:
            for value in JUNK:
                body = {"rules": TINY, "players": ["A", "B"], "entries": [], field: value}
                r = client.post(path, json=body)
                answer = r.json()
                assert r.status_code < 500 and ("error" in answer or r.status_code in (200, 202)), (path, field, value)
        for entry in JUNK:
            r = client.post(path, json={"rules": TINY, "players": ["A", "B"], "entries": [entry]})
            assert r.status_code < 500, (path, entry)


def test_the_page_and_its_files_are_served(client: TestClient) -> None:
    """GET / is the page; its script and style sheet are served from the package."""
    page = client.get("/")
    assert page.status_code == 200 and 'id="entry-form"' in page.text
    assert client.get("/static/app.js").status_code == 200
    assert client.get("/static/style.css").status_code == 200


def test_serve_without_the_web_extra_says_which_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Starlette or uvicorn, `serve` prints one line naming the extra and exits 2."""
    from cinqmille.cli import serve_cmd

    monkeypatch.setattr(serve_cmd, "web_available", lambda: False)
    out = CliRunner().invoke(main, ["serve"])
    assert out.exit_code == 2
    assert out.output.strip() == "Error: cinqmille serve needs the web extra: pip install 'cinqmille[web]'"


def test_serve_prints_its_address_answers_and_stops_on_ctrl_c(session_cache: Path) -> None:
    """`cinqmille serve` prints its address, answers on it, and stops cleanly on SIGINT (Ctrl-C)."""
    proc = subprocess.Popen([sys.executable, "-m", "cinqmille", "serve", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, line
        with urllib.request.urlopen(f"http://127.0.0.1:{match.group(1)}/api/rules", timeout=10) as r:
            assert json.load(r)["default"] == "standard"
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert "Traceback" not in err and out.strip() == "Stopped."


def test_serve_on_a_busy_port_is_one_line() -> None:
    """A port already taken, or a host that does not resolve, is one line and exit status 2."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = CliRunner().invoke(main, ["serve", "--port", str(port)])
    assert out.exit_code == 2
    assert out.output == f"Error: cannot listen on 127.0.0.1:{port} (Address already in use)\n"
    assert CliRunner().invoke(main, ["serve", "--host", "no-such-host.invalid"]).exit_code == 2


def test_sheet_advice_carries_the_seat_the_last_turn_and_the_offer(client: TestClient, tmp_path: Path) -> None:
    """Under last round and take-over rules, the sheet's state becomes the position that `advise` is asked."""
    toml = TINY_TOML + 'end = "exact"\nlast_round = true\ntake_over = true\n'
    rules = {"toml": toml}
    offered = {"rules": rules, "players": ["A", "B"],
               "entries": [{"kind": "bank", "points": 150}, {"kind": "bank", "points": 200, "dice": 3}]}
    data = ask(client, offered)
    assert data["position"]["offer"] == {"points": 200, "dice": 3} and data["best"]["action"] in ("take_over", "start")
    path = tmp_path / "lr.toml"
    path.write_text(toml)
    cli = CliRunner().invoke(main, ["advise", "--rules", str(path), "--json", "--me", "150", "--opp", "200",
                                    "--offer", "200/3"])
    assert json.loads(cli.output) == data
    last = {"rules": rules, "players": ["A", "B"],
            "entries": [{"kind": "bank", "points": 150}, {"kind": "bank", "points": 200}, {"kind": "bank", "points": 350}]}
    data = ask(client, {**last, "turn": 100, "dice": 4})
    assert data["position"]["target"] == 500 and data["position"]["seat"] == 1


@pytest.mark.filterwarnings("ignore:.*recomputing:UserWarning")
def test_a_damaged_cached_table_is_solved_again_in_the_background(client: TestClient, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache file that is not a table is not solved inside the request: a 202, then the right answer."""
    from cinqmille.rules.loading import rules_from_text
    from cinqmille.solver.cache import cache_path

    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "damaged"))
    path = cache_path(rules_from_text(TINY_TOML), "win", 2)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"not a table")
    body = {"rules": TINY, "me": 150, "opp": 300, "turn": 200, "dice": 2}
    assert client.post("/api/advice", json=body).status_code == 202
    data = ask(client, body)  # the solver's warning about the damaged file goes to the server's stderr
    assert data == cli_json(tmp_path, "--me", "150", "--opp", "300", "--turn", "200", "--dice", "2")


def test_advice_reads_the_scoreless_counters(client) -> None:
    """Under zero_turns the API's advice is that of `advise --scoreless`, and bad counters are a 400."""
    toml = 'name = "z"\ngoal = 1000\nopening = 0\n[zero_turns]\ncount = 3\nto = "zero"\n'
    body = {"rules": {"toml": toml}, "me": 600, "opp": 300, "turn": 200, "dice": 2}
    rolls = []
    for counters in ([0, 0], [2, 0]):
        out = client.post("/api/advice", json={**body, "scoreless": counters})
        if out.status_code == 202:  # solved in the background first
            import time

            for _ in range(200):
                time.sleep(0.1)
                out = client.post("/api/advice", json={**body, "scoreless": counters})
                if out.status_code == 200:
                    break
        assert out.status_code == 200, out.text
        rolls.append({o["action"]: o["win"] for o in out.json()["options"]}["roll"])
    assert rolls[1] < rolls[0]
    bad = client.post("/api/advice", json={**body, "scoreless": [3, 0]})
    assert bad.status_code == 400 and "at most 2" in bad.json()["error"]
    bad = client.post("/api/advice", json={**body, "scoreless": "x"})
    assert bad.status_code == 400


@pytest.mark.parametrize(("rules", "topic", "words"), [
    ("standard", "goal", "First to 5000 wins; five 1s in one roll win at once."),
    ("standard", "penalties", "No penalties: a bust loses the turn's points only."),
    ("sheet", "goal", "Exactly 5000 to win"),
    ("sheet", "penalties", "a scoreless turn is a cross"),
    ("house", "opening", "Opening: the first bank must be at least 700; after that every bank is at least 250."),
    ({"toml": 'name = "z"\n[zero_turns]\ncount = 3\nto = -500\n'}, "penalties",
     "Penalties: 3 scoreless turns in a row: 500 points lost."),
])
def test_rules_answer_their_key_rules_in_words_and_the_whole_ruleset(client: TestClient, rules: Any, topic: str,
                                                                      words: str) -> None:
    """POST /api/rules gives the goal, opening and penalties in words (web/card.py) and the TOML of `rules show`."""
    from cinqmille.rules import to_toml
    from cinqmille.web.bodies import rules_of

    data = client.post("/api/rules", json={"rules": rules}).json()
    assert [k["topic"] for k in data["key_rules"]] == ["goal", "opening", "penalties"]
    assert words in next(k["text"] for k in data["key_rules"] if k["topic"] == topic)
    assert data["toml"] == to_toml(rules_of({"rules": rules}))


def test_setting_up_a_game_of_three_starts_its_table(client: TestClient) -> None:
    """POST /api/sheet of a three-player game starts solving its table before any question; advice then answers."""
    rules = {"toml": 'name = "three-ahead"\ngoal = 450\nopening = 150\n'}
    sheet = {"rules": rules, "players": ["Ann", "Bob", "Cy"], "entries": []}
    first = client.post("/api/sheet", json=sheet)
    assert first.status_code == 200
    table = first.json()["table"]
    assert table["status"] in ("solving", "ready")
    for _ in range(600):
        if table["status"] == "ready":
            break
        time.sleep(0.05)
        table = client.get("/api/progress", params={"job": table["job"]}).json()
    assert table["status"] == "ready"
    answer = client.post("/api/advice", json={**sheet, "turn": 100, "dice": 3})
    assert answer.status_code == 200 and answer.json()["position"]["opp"] == [0, 0]


def test_prepare_starts_the_table_of_the_player_count_before_the_game(client: TestClient) -> None:
    """POST /api/prepare (the setup page, while names are typed) starts solving the table a game of that many
    players reads; the game's first advice then answers at once."""
    rules = {"toml": 'name = "prepared"\ngoal = 400\nopening = 150\n'}
    first = client.post("/api/prepare", json={"rules": rules, "count": 3})
    assert first.status_code == 200
    table = first.json()["table"]
    for _ in range(1200):
        if table["status"] == "ready":
            break
        time.sleep(0.05)
        table = client.get("/api/progress", params={"job": table["job"]}).json()
    assert table["status"] == "ready"
    sheet = {"rules": rules, "players": ["Ann", "Bob", "Cy"], "entries": []}
    assert client.post("/api/advice", json={**sheet, "roll": "15332"}).status_code == 200
    again = client.post("/api/prepare", json={"rules": rules, "count": 3})
    assert again.json()["table"] == {"status": "ready"}
    bad = client.post("/api/prepare", json={"rules": rules, "count": 9})
    assert bad.status_code == 400 and bad.json()["field"] == "count"


def test_review_of_a_sheet_is_the_review_of_its_log(client: TestClient, tmp_path: Path) -> None:
    """POST /api/review judges the questions asked during a sheet's game as `cinqmille review` judges its log (the
    download carries the questions, and a replay gives them back)."""
    from cinqmille.app.review import review_log

    sheet = {"rules": TINY, "players": ["Ann", "Bob"],
             "entries": [{"kind": "bank", "points": 300}, {"kind": "bust"}, {"kind": "bank", "points": 200}],
             "questions": [{"entry": 0, "turn": 0, "roll": "15332"}, {"entry": 0, "turn": 100, "roll": "1124"},
                           {"entry": 1, "turn": 200, "dice": 2}, {"entry": 1, "turn": 200, "roll": "26"}]}
    ask(client, {"rules": TINY, "players": sheet["players"], "entries": [], "roll": "15332"})  # the table solved
    answer = client.post("/api/review", json=sheet)
    assert answer.status_code == 200, answer.json()
    review = answer.json()
    log = client.post("/api/log", json=sheet).json()
    assert log["questions"] == sheet["questions"]
    assert review == json.loads(json.dumps(review_log(log).as_dict()))
    assert review["decisions"] and review["winner"] == 0 and len(review["costliest_words"]) <= 3
    assert client.post("/api/replay", json=log).json()["questions"] == sheet["questions"]
    bad = client.post("/api/review", json={**sheet, "questions": [{"entry": 0, "turn": 100}]})
    assert bad.status_code == 400 and bad.json()["field"] == "questions" and "'dice' or 'roll'" in bad.json()["error"]


def test_a_game_of_three_waiting_for_its_table_gets_the_two_player_move_without_a_chance(client: TestClient) -> None:
    """While the three-player table is solved, the advice's 202 carries the two-player table's move against the
    opponent who threatens most (the solver's reduction), and no chance; the answer that follows is the table's."""
    from cinqmille.app.advice import advise
    from cinqmille.table.position import Position
    from cinqmille.app.review import choice_words
    from cinqmille.rules.loading import rules_from_text
    from cinqmille.solver import solve

    toml = 'name = "interim"\ngoal = 550\nopening = 150\n'
    rules = {"toml": toml}
    ask(client, {"rules": rules, "me": 0, "opp": 0, "roll": "15332"})  # the two-player table at hand
    sheet = {"rules": rules, "players": ["Ann", "Bob", "Cy"],
             "entries": [{"kind": "bank", "points": 200}, {"kind": "bank", "points": 350}]}
    first = client.post("/api/advice", json={**sheet, "roll": "15332"})
    assert first.status_code == 202
    interim = first.json()["interim"]
    best = advise(solve(rules_from_text(toml, "interim"), "win"), Position(0, 350), "15332").best
    assert best is not None and interim["move"] == choice_words(best)  # Cy at 0 against Bob (350), who leads
    assert "No chance is shown" in interim["text"] and "%" not in interim["text"]
    assert ask(client, {**sheet, "roll": "15332"})["figure"]["table"] == 3


#: A ruleset whose four-player table solves in about a second (`serve --prepare 4` in the tests).
PREPARE_TOML = 'name = "prep-four"\ngoal = 300\nopening = 100\nend = "exact"\n'


def test_a_prepared_table_says_when_it_is_ready_and_is_read(client: TestClient) -> None:
    """`Tables.prepare` (serve --prepare 4) solves the four-player table in the background; GET /api/prepared says
    how far it is ("solving, N %") and then that it is ready, and a four-player game's advice reads it."""
    from cinqmille.rules.loading import rules_from_text

    rules = rules_from_text(PREPARE_TOML)
    assert client.get("/api/prepared").json() == {"tables": []}
    tables = client.app.state.tables  # type: ignore[attr-defined]
    job = tables.prepare(rules, 4)
    seen = []
    for _ in range(1200):
        [status] = client.get("/api/prepared").json()["tables"]
        seen.append(status)
        if status["status"] != "solving":
            break
        assert re.fullmatch(r"four-player table of 'prep-four': solving, \d+ %", status["text"]), status
        time.sleep(0.05)
    assert status["status"] == "ready", status
    assert status["text"] == "four-player table of 'prep-four': ready"
    assert status["players"] == 4 and status["job"] == job.key and status["progress"] == 1.0
    assert client.get("/api/progress", params={"job": job.key}).json()["status"] == "ready"
    assert tables.prepare(rules, 4) is job  # asked again: the same job, not a second solve
    sheet = {"rules": {"toml": PREPARE_TOML}, "players": ["A", "B", "C", "D"], "entries": [{"kind": "bank",
                                                                                             "points": 100}]}
    data = ask(client, {**sheet, "turn": 50, "dice": 4})
    assert data["exact"] and data["position"]["opp"] == [0, 0, 100]
    page = client.get("/").text
    assert 'id="prepared"' in page and "/api/prepared" in client.get("/static/app.js").text


def test_a_prepared_solve_stops_with_the_server_and_says_so() -> None:
    """A prepared solve still running when the server stops is stopped at its next progress report (between two
    levels: the finished ones stay on disk), and its status says why; a too-large table is an error, not a crash."""
    from cinqmille.rules.loading import rules_from_text
    from cinqmille.solver.budget import Limits
    from cinqmille.web.tables import Tables

    started = []

    def endless(rules: object, objective: str, progress: Any = None, players: int = 2, limits: Any = None) -> Any:
        started.append(limits)
        while True:
            progress(0.25)
            time.sleep(0.01)

    store = Tables(solver=endless)
    rules = rules_from_text(PREPARE_TOML.replace("prep-four", "prep-stop"))
    job = store.prepare(rules, 3)
    for _ in range(500):
        if job.progress == 0.25:
            break
        time.sleep(0.01)
    assert store.prepared()[0]["text"] == "three-player table of 'prep-stop': solving, 25 %"
    store.close()
    assert job.done.wait(10)
    assert store.prepared()[0]["status"] == "error" and "server stopped" in store.prepared()[0]["text"]
    assert started[0].states == Limits.from_env(default_states=20_000_000_000).states  # `cinqmille solve`'s
    small = Tables().prepare(rules_from_text(PREPARE_TOML.replace("prep-four", "prep-big")), 4, Limits(states=10))
    assert small.done.wait(10) and "turn states" in (small.error or "")


def test_serve_prepare_solves_the_table_in_the_background(session_cache: Path, tmp_path: Path) -> None:
    """`cinqmille serve --prepare 3,4` says what it prepares, the page's status says when each is ready, and a
    table beyond the budget or a count out of range is one line before anything is served."""
    path = tmp_path / "prep.toml"
    path.write_text(PREPARE_TOML.replace("prep-four", "prep-serve"))
    proc = subprocess.Popen([sys.executable, "-m", "cinqmille", "serve", "--rules", str(path), "--port", "0",
                             "--prepare", "3,4"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=os.environ.copy())
    try:
        lines = [proc.stdout.readline() if proc.stdout else "" for _ in range(3)]
        assert lines[0].startswith("Preparing the three-player table of 'prep-serve' in the background: "), lines
        assert lines[1].startswith("Preparing the four-player table of 'prep-serve'"), lines
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", lines[2])
        assert match, lines
        for _ in range(600):
            with urllib.request.urlopen(f"http://127.0.0.1:{match.group(1)}/api/prepared", timeout=10) as r:
                tables = json.load(r)["tables"]
            if all(t["status"] != "solving" for t in tables):
                break
            time.sleep(0.1)
        assert [t["text"] for t in tables] == ["three-player table of 'prep-serve': ready",
                                               "four-player table of 'prep-serve': ready"]
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and "Traceback" not in err, err
    for args, words in ((["--prepare", "5", "--rules", "standard"], "would visit about"),
                        (["--prepare", "4,1"], "--prepare: must be at least 2")):
        bad = CliRunner().invoke(main, ["serve", "--port", "0", *args])
        assert bad.exit_code == 2 and words in bad.output and len(bad.output.strip().splitlines()) == 1, bad.output


def test_a_prepared_table_stays_in_memory_beside_the_others(session_cache: Path) -> None:
    """The tables a game's questions solve push the oldest out of memory beyond `MAX_TABLES`, never a prepared one
    (read again, a large table would be read inside a request)."""
    from types import SimpleNamespace

    from cinqmille.rules import rules_from_dict
    from cinqmille.web.tables import MAX_TABLES, Tables

    store = Tables(max_queued=100, solver=lambda rules, objective, progress=None, players=2, limits=None:
                   SimpleNamespace(rules=rules))
    prepared = rules_from_dict({"goal": 300, "opening": 100}, "kept")
    assert store.prepare(prepared, 4).done.wait(10) and store.ready(prepared, 4)
    for goal in range(350, 350 + 50 * (MAX_TABLES + 2), 50):
        job = store.get(rules_from_dict({"goal": goal, "opening": 100}), 2)
        assert not hasattr(job, "done") or job.done.wait(10)
    assert store.ready(prepared, 4)
    assert not store.ready(rules_from_dict({"goal": 350, "opening": 100}), 2)  # the oldest other one went
