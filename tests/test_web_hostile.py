"""`cinqmille serve` against hostile clients: foreign hosts and pages, junk fields, floods, heavy and dropped requests."""

from __future__ import annotations

import http.client
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'cinqmille[web]'")
pytest.importorskip("uvicorn", reason="the web extra is not installed: pip install 'cinqmille[web]'")
pytest.importorskip("httpx2", reason="the test client needs httpx2: pip install 'cinqmille[test]'")

import uvicorn  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from cinqmille.errors import CinqmilleError  # noqa: E402
from cinqmille.rules.loading import rules_from_text  # noqa: E402
from cinqmille.solver.cache import evict_oldest  # noqa: E402
from cinqmille.web.access import Access  # noqa: E402
from cinqmille.web.app import create_app  # noqa: E402
from cinqmille.web.bodies import REQUESTS  # noqa: E402
from cinqmille.web.tables import Tables, table_key  # noqa: E402

from conftest import TINY_TOML  # noqa: E402

TINY = {"toml": TINY_TOML}
SHEET = {"rules": TINY, "players": ["Ann", "Bob"], "entries": [{"kind": "bank", "points": 300}]}


@pytest.fixture
def client(session_cache: Path) -> Iterator[TestClient]:
    """A test client of a fresh app on http://localhost, its tables in the session's solver cache."""
    app = create_app()
    yield TestClient(app, base_url="http://localhost")
    app.state.tables.close()


class Waiting:
    """A stand-in for the solver: it notes the ruleset, waits until `release` is set, then fails."""

    def __init__(self) -> None:
        self.asked: list[str] = []
        self.release = threading.Event()

    def __call__(self, rules: Any, objective: str, progress: Any = None, players: int = 2) -> Any:
        self.asked.append(rules.name)
        self.release.wait(timeout=20)
        raise CinqmilleError("not solved in this test")


@pytest.fixture
def waiting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Waiting]:
    """An empty solver cache and a solver that waits (released at the end of the test)."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "cache"))
    solver = Waiting()
    yield solver
    solver.release.set()


class Server:
    """The app served by a real uvicorn on 127.0.0.1 (a free port) in a thread, stopped on exit."""

    def __init__(self, app: Any, **config: Any):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **config))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self) -> "Server":
        self.thread.start()
        for _ in range(200):
            if self.server.started:
                break
            time.sleep(0.05)
        assert self.server.started
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)
        self.sock.close()

    def request(self, method: str, path: str, body: Any = None, timeout: float = 60) -> tuple[int, Any]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = None if body is None else json.dumps(body).encode()
            conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            return response.status, json.loads(response.read())
        finally:
            conn.close()


# -- 4: one schema for every field ---------------------------------------------------------------------------


@pytest.mark.parametrize("seat", ["FIRST", "banana", [0], 2, True, None, "1"])
def test_an_unknown_seat_is_refused_naming_the_field(client: TestClient, seat: Any) -> None:
    """A seat other than "first", "second", 0 or 1 is a 400 naming 'seat', not the second seat."""
    r = client.post("/api/advice", json={"rules": TINY, "me": 150, "opp": 300, "roll": "15332", "seat": seat})
    assert r.status_code == 400, r.text
    assert r.json()["field"] == "seat" and "'seat' must be one of" in r.json()["error"]


def test_the_known_seats_are_read_as_the_cli_reads_them(client: TestClient) -> None:
    """"first" and 0 are the first seat, "second" and 1 the second (the seat of the position answered)."""
    toml = TINY_TOML + 'last_round = true\n'
    seats = {}
    for seat in ("first", 0, "second", 1):
        body = {"rules": {"toml": toml}, "me": 150, "opp": 300, "turn": 100, "dice": 3, "seat": seat}
        for _ in range(400):
            r = client.post("/api/advice", json=body)
            if r.status_code != 202:
                break
            time.sleep(0.05)
        assert r.status_code == 200, r.text
        seats[seat] = r.json()["position"]["seat"]
    assert seats == {"first": 0, 0: 0, "second": 1, 1: 1}


@pytest.mark.parametrize("path, body, field", [
    ("/api/advice", {"rules": TINY, "me": 0, "opp": 0, "roll": "15", "colour": "red"}, "colour"),
    ("/api/sheet", {**SHEET, "entries": [{"kind": "bank", "points": 300, "extra": 1}]}, "entries[0].extra"),
    ("/api/sheet", {**SHEET, "entries": [{"kind": "bank", "points": "300"}]}, "entries[0].points"),
    ("/api/sheet", {**SHEET, "entries": [{"kind": "bank", "points": 300, "taken": 1}]}, "entries[0].taken"),
    ("/api/sheet", {**SHEET, "players": ["Ann", 7]}, "players[1]"),
    ("/api/sheet", {"rules": TINY, "entries": []}, "players"),
    ("/api/rules", {"rules": {"toml": "goal = 500\n", "base": "x"}}, "rules"),
    ("/api/advice", {"rules": TINY, "me": 0, "opp": 0, "turn": True, "dice": 3}, "turn"),
    ("/api/advice", {"rules": TINY, "me": 0, "opp": 0, "offer": {"points": 300, "dice": 2, "x": 1}}, "offer.x"),
    ("/api/advice", {"rules": TINY, "me": 0, "opp": 0, "target": 1.5}, "target"),
    ("/api/replay", {"format": "cinqmille-sheet", "version": "1", "rules": {}, "players": ["A", "B"],
                     "entries": []}, "version"),
])
def test_every_field_is_checked_by_the_schema(client: TestClient, path: str, body: dict, field: str) -> None:
    """A field of the wrong type, or one the endpoint does not know, is a 400 whose `field` names it."""
    r = client.post(path, json=body)
    assert r.status_code == 400, r.text
    assert r.json()["field"] == field and "Traceback" not in r.text


def _valid(node: Any) -> Any:
    """A value that the schema node `node` accepts (the smallest one)."""
    shape = node.json_schema()
    if "enum" in shape:
        return shape["enum"][0]
    if "anyOf" in shape:
        return _valid(node.options[0] if hasattr(node, "options") else node.node)
    kind = shape.get("type")
    if kind == "object" and hasattr(node, "fields"):
        return {k: _valid(dict(node.fields)[k]) for k in node.required}
    return {"integer": shape.get("minimum", 0), "string": "x" * shape.get("minLength", 0), "boolean": False,
            "array": [_valid(node.item)] * shape.get("minItems", 0) if hasattr(node, "item") else [],
            "object": {}}[kind]


WRONG = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5),
                  st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                  st.integers(min_value=-10**12, max_value=10**12))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_wrong_value_in_any_field_is_a_400_naming_it(client: TestClient, data: st.DataObject) -> None:
    """Any endpoint, any field, any value its schema refuses: a JSON 400 whose `field` is that field, never a 5xx."""
    (method, path), schema = data.draw(st.sampled_from(sorted(REQUESTS.items())))
    name, node = data.draw(st.sampled_from(schema.fields))
    value = data.draw(WRONG if method == "POST" else st.sampled_from(["", "k" * 65]))  # a query is text
    try:
        node.check(value, name)
        return  # the schema takes it: not a wrong value
    except Exception:  # noqa: BLE001 - ApiError: what the server must refuse
        pass
    body = {k: _valid(n) for k, n in schema.fields if k in schema.required}
    body[name] = value
    r = client.get(path, params=body) if method == "GET" else client.post(path, json=body)
    assert r.status_code == 400, (path, body, r.text)
    assert r.json()["field"].split("[")[0].split(".")[0] == name, r.json()


# -- 5: the event loop stays free --------------------------------------------------------------------------------


def test_heavy_requests_do_not_hold_up_a_light_one(session_cache: Path) -> None:
    """With ten heavy sheets in flight (about 0.2 s of CPU each), GET /api/rules still answers within 100 ms."""
    app = create_app()
    with Server(app) as server:
        done: list[int] = []

        def heavy(i: int) -> None:
            body = {"rules": {"toml": f'name = "big{i}"\ngoal = {200_000 + 50 * i}\n'}, "players": ["A", "B"],
                    "entries": [{"kind": "bank", "points": 1000}]}
            done.append(server.request("POST", "/api/sheet", body)[0])

        threads = [threading.Thread(target=heavy, args=(i,), daemon=True) for i in range(10)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        waits = []
        for _ in range(3):
            start = time.perf_counter()
            status, data = server.request("GET", "/api/rules")
            waits.append(time.perf_counter() - start)
            assert status == 200 and data["default"] == "standard"
        in_flight = 10 - len(done)
        for t in threads:
            t.join(timeout=120)
    assert in_flight >= 5, "the heavy requests were over before the light ones were timed"
    assert done == [200] * 10
    print("light request waits", [round(w, 4) for w in waits], "in flight", in_flight)
    assert max(waits) < 0.1, waits


# -- 6: hosts, origins, content types, queue and cache bounds ------------------------------------------------------


def test_a_foreign_host_is_refused() -> None:
    """A Host header that is not the server's own (DNS rebinding) is a 403 naming Host; its own names are served."""
    app = create_app(access=Access.bound("127.0.0.1", 8000))
    for host in ("localhost:8000", "127.0.0.1:8000", "[::1]:8000", "LOCALHOST:8000"):
        assert TestClient(app, base_url=f"http://{host}").get("/api/rules").status_code == 200, host
    for host in ("evil.example:8000", "localhost:8001", "127.0.0.1", "localhost.evil.example:8000", "x"):
        r = TestClient(app, base_url="http://localhost:8000").get("/api/rules", headers={"host": host})
        assert r.status_code == 403 and r.json()["field"] == "Host", host


def test_the_default_app_answers_loopback_names_on_any_port_only() -> None:
    """Without a bound address, the app answers localhost, 127.0.0.1 and [::1] on any port, and no other name."""
    app = create_app()
    assert TestClient(app, base_url="http://127.0.0.1:5555").get("/api/rules").status_code == 200
    assert TestClient(app, base_url="http://testserver").get("/api/rules").status_code == 403
    assert TestClient(app, base_url="http://localhost").get("/api/rules", headers={"host": "localhost:80x"}).status_code \
        == 403


def test_a_foreign_origin_may_not_start_work(client: TestClient) -> None:
    """A POST from another site's page is a 403 naming Origin; the server's own page and clients without Origin pass."""
    body = {"rules": "standard"}
    for origin in ("http://evil.example", "null", "http://localhost.evil.example", "https://localhost",
                   "http://localhost/x"):
        r = client.post("/api/rules", json=body, headers={"origin": origin})
        assert r.status_code == 403 and r.json()["field"] == "Origin", origin
    assert client.post("/api/rules", json=body, headers={"origin": "http://localhost"}).status_code == 200
    assert client.post("/api/rules", json=body).status_code == 200
    assert client.get("/api/rules", headers={"origin": "http://evil.example"}).status_code == 200


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "multipart/form-data; boundary=x", "application/json; charset=latin-1",
                                          "application/jsonx"])
def test_only_json_bodies_are_read(client: TestClient, content_type: str | None) -> None:
    """A body that is not declared as JSON (as a cross-site form or text/plain fetch sends) is a 415."""
    headers = {} if content_type is None else {"content-type": content_type}
    r = client.post("/api/sheet", content=json.dumps(SHEET).encode(), headers=headers)
    assert r.status_code == 415 and r.json()["field"] == "Content-Type"
    ok = client.post("/api/sheet", content=json.dumps(SHEET).encode(),
                     headers={"content-type": "Application/JSON; charset=UTF-8"})
    assert ok.status_code == 200


def test_solves_beyond_the_queue_cap_are_a_429(waiting: Waiting) -> None:
    """With 2 solves queued, a third ruleset is a 429 with Retry-After; the queued ones still answer 202."""
    app = create_app(tables=Tables(max_queued=2, solver=waiting))
    client = TestClient(app, base_url="http://localhost")
    answers = []
    for goal in (500, 550, 600, 650):
        body = {"rules": {"toml": f'name = "q{goal}"\ngoal = {goal}\nopening = 150\n'}, "me": 0, "opp": 0,
                "turn": 100, "dice": 3}
        answers.append(client.post("/api/advice", json=body))
    assert [a.status_code for a in answers] == [202, 202, 429, 429]
    assert int(answers[2].headers["retry-after"]) > 0 and "already being solved" in answers[2].json()["error"]
    again = client.post("/api/advice", json={"rules": {"toml": 'name = "q500"\ngoal = 500\nopening = 150\n'},
                                             "me": 0, "opp": 0, "turn": 100, "dice": 3})
    assert again.status_code == 202  # a ruleset already queued is not queued twice
    assert waiting.asked in (["q500"], ["q500", "q550"])
    app.state.tables.close()


def test_a_finished_job_stays_answerable(waiting: Waiting) -> None:
    """/api/progress of a finished job answers "ready" after ten newer tables have been loaded."""
    store = Tables(max_queued=20, solver=lambda rules, objective, progress=None, players=2: SimpleNamespace(rules=rules))
    app = create_app(tables=store)
    client = TestClient(app, base_url="http://localhost")
    keys = []
    for goal in range(500, 1050, 50):
        rules = rules_from_text(f'name = "f{goal}"\ngoal = {goal}\nopening = 150\n')
        job = store.get(rules)
        job.done.wait(timeout=20)  # type: ignore[union-attr]
        keys.append(table_key(rules, 2))
    first = client.get("/api/progress", params={"job": keys[0]})
    assert first.status_code == 200 and first.json()["status"] == "ready", first.text
    store.close()


def test_the_oldest_cached_tables_are_evicted_first(tmp_path: Path) -> None:
    """evict_oldest deletes the oldest .npz files until the rest fit the bound, never one it is told to keep."""
    files = []
    for i in range(5):
        path = tmp_path / f"t{i}-win-{'0' * 20}-{'1' * 16}.npz"
        path.write_bytes(b"x" * 1000)
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
        files.append(path)
    other = tmp_path / "notes.txt"
    other.write_bytes(b"y" * 10_000)
    assert evict_oldest(tmp_path, 2500, keep=[files[0]]) == 3
    assert [p.exists() for p in files] == [True, False, False, False, True] and other.exists()
    assert evict_oldest(tmp_path, 10**6) == 0


def test_each_solve_keeps_the_cache_within_its_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """After each background solve the oldest cached tables go, so the cache stays within its bound."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path))
    store = Tables(cache_max_bytes=1)
    for goal in (500, 550):
        job = store.get(rules_from_text(f'name = "c{goal}"\ngoal = {goal}\nopening = 150\n'))
        job.done.wait(timeout=120)  # type: ignore[union-attr]
        time.sleep(0.02)
    names = [p.name for p in tmp_path.glob("*.npz")]
    assert len(names) == 1 and names[0].startswith("c550"), names
    store.close()


def test_serve_warns_off_loopback_and_answers_only_its_own_host(session_cache: Path) -> None:
    """`serve --host 0.0.0.0` warns that anyone may use it; on 127.0.0.1 no warning, and a foreign Host is a 403."""
    def served(host: str, path: str = "/api/rules", as_host: str | None = None) -> tuple[str, str, int]:
        proc = subprocess.Popen([sys.executable, "-m", "cinqmille", "serve", "--host", host, "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=os.environ.copy())
        try:
            out = proc.stdout.readline() if proc.stdout else ""
            port = int(out.rsplit(":", 1)[1].split("/")[0])
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", path, headers={"Host": (as_host or "127.0.0.1:{port}").format(port=port)})
            status = conn.getresponse().status
            conn.close()
        finally:
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=20)
        return out, err, status

    out, err, status = served("0.0.0.0")
    assert "http://0.0.0.0:" in out and err.startswith("Warning: listening on 0.0.0.0") and status == 200
    out, err, status = served("127.0.0.1")
    assert "http://127.0.0.1:" in out and "Warning" not in err and status == 200
    assert served("127.0.0.1", as_host="rebound.example:{port}")[2] == 403
    assert served("127.0.0.1", as_host="localhost:1")[2] == 403


@pytest.mark.parametrize("args, env", [(["--cache-max-mb", "0"], {}), (["--max-queued", "x"], {}),
                                       ([], {"CINQMILLE_CACHE_MAX_MB": "lots"})])
def test_serve_bounds_are_checked(args: list[str], env: dict[str, str]) -> None:
    """A bad cache bound or queue cap (option or environment variable) is one line and exit status 2."""
    from click.testing import CliRunner

    from cinqmille.cli import main

    out = CliRunner().invoke(main, ["serve", *args], env=env)
    assert out.exit_code == 2 and "Traceback" not in out.output
    lines = out.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: Invalid value for '--"), lines


# -- 9: dropped requests -----------------------------------------------------------------------------------------


def test_a_client_that_leaves_mid_body_is_one_quiet_line(session_cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A request whose client leaves before the end of its body logs one line, with no traceback."""
    caplog.set_level(logging.INFO)
    with Server(create_app(), log_config=None) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
            sock.sendall(b"POST /api/sheet HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                         b"Content-Length: 1000\r\n\r\n{\"players\": ")
            time.sleep(0.3)
        time.sleep(0.5)
    lines = [r for r in caplog.records if r.name.startswith("uvicorn")]
    assert not any(r.exc_info for r in lines), [r.getMessage() for r in lines]
    assert len([r for r in lines if "left before" in r.getMessage()]) == 1, [r.getMessage() for r in lines]


def test_a_stopped_store_solves_again_and_reports_the_dropped_jobs(waiting: Waiting) -> None:
    """After close (a server's shutdown), queued solves are reported dropped and a new request starts a new solve."""
    store = Tables(solver=waiting)
    rules = [rules_from_text(f'name = "s{g}"\ngoal = {g}\nopening = 150\n') for g in (500, 550, 600)]
    running, queued = store.get(rules[0]), store.get(rules[1])
    for _ in range(100):
        if waiting.asked:
            break
        time.sleep(0.02)
    store.close()
    dropped = store.job(table_key(rules[1], 2))
    assert dropped is not None and dropped.as_dict()["status"] == "error" and "stopped" in dropped.as_dict()["error"]
    waiting.release.set()
    again = store.get(rules[2])
    assert again.done.wait(timeout=20) and again.as_dict()["status"] == "error"  # type: ignore[union-attr]
    assert waiting.asked == ["s500", "s600"] and running is not queued
    store.close()
