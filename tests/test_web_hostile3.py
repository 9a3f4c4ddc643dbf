"""`cinqmille serve` against the third hostile battery (issue 29): tables, head starts, cache files, idle sockets,
the machine's own address, error fields and frame protection."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'cinqmille[web]'")
pytest.importorskip("uvicorn", reason="the web extra is not installed: pip install 'cinqmille[web]'")
pytest.importorskip("httpx2", reason="the test client needs httpx2: pip install 'cinqmille[test]'")

from starlette.testclient import TestClient  # noqa: E402

from cinqmille.rules import to_toml  # noqa: E402
from cinqmille.rules.loading import rules_from_text  # noqa: E402
from cinqmille.solver import api, cache  # noqa: E402
from cinqmille.web.app import create_app  # noqa: E402

AA = 'name = "aa"\ngoal = 1000\nopening = 300\n'
BB = 'name = "bb"\ngoal = 1500\nopening = 300\n'
QUESTION = {"me": 0, "opp": 0, "turn": 200, "dice": 3}


@pytest.fixture
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A solver cache of this test's own (its files are copied over and forged)."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("CINQMILLE_CACHE", str(folder))
    return folder


@pytest.fixture
def client(own_cache: Path) -> Iterator[TestClient]:
    """A test client of a fresh app on http://localhost."""
    app = create_app()
    yield TestClient(app, base_url="http://localhost")
    app.state.tables.close()


def advice(client: TestClient, toml: str, body: dict[str, Any] = QUESTION) -> dict[str, Any]:
    """The advice of `/api/advice` for the ruleset `toml`, once its table is ready."""
    for _ in range(1200):
        r = client.post("/api/advice", json={"rules": {"toml": toml}, **body})
        if r.status_code != 202:
            break
        time.sleep(0.05)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


# -- 1: a table is the ruleset's own, read by the CLI's loader ------------------------------------------------------


def test_another_rulesets_table_copied_over_is_not_served(client: TestClient) -> None:
    """aa's cached table copied over bb's is refused (deleted, solved again): bb's own figure, never aa's."""
    aa, bb = rules_from_text(AA), rules_from_text(BB)
    want_aa, want_bb = advice(client, AA)["win"], float(api.solve(bb).tables[0, 0, 0])
    assert want_aa != want_bb
    fresh = TestClient(create_app(), base_url="http://localhost")  # a new server: nothing in memory
    target = cache.cache_path(bb, "win")
    target.write_bytes(cache.cache_path(aa, "win").read_bytes())
    with pytest.warns(UserWarning, match="another"):
        got = advice(fresh, BB)
    truth = advice(fresh, BB, {"me": 0, "opp": 0})
    assert got["win"] != want_aa and got["rules"] == "bb"
    assert truth["win"] == pytest.approx(want_bb, abs=1e-12)


def test_a_two_player_table_copied_over_a_three_player_one_is_not_served(client: TestClient) -> None:
    """A two-player table copied over the three-player table's file is refused by its player count, solved again."""
    aa = rules_from_text(AA)
    want = api.solve(aa, players=3)
    two = cache.cache_path(aa, "win")
    api.save(api.compute(aa), two)
    three = cache.cache_path(aa, "win", 3)
    three.write_bytes(two.read_bytes())
    body = {"me": 0, "opp": [0, 0]}
    with pytest.warns(UserWarning, match="players"):
        got = advice(client, AA, body)
    assert got["win"] == pytest.approx(float(want.values[0, 0, 0, 0]), abs=1e-12)


def _forge(rules_text: str) -> tuple[Path, float, float]:
    """bb's table with every chance complemented (1 - W), written with a valid checksum and identity; returns the
    path and the true and forged chances at the start."""
    rules = rules_from_text(rules_text)
    true = api.solve(rules)
    forged = dataclasses.replace(true, values=1.0 - true.values)
    path = cache.cache_path(rules, "win")
    api.save(forged, path)
    return path, float(true.tables[0, 0, 0]), float(forged.tables[0, 0, 0])


def test_a_forged_table_is_not_served(client: TestClient) -> None:
    """A complemented table with a valid checksum, never vouched for, is sampled, refused and solved again."""
    path, true, forged = _forge(BB)
    assert abs(true - forged) > 0.1
    with pytest.warns(UserWarning):
        answer = advice(client, BB, {"me": 0, "opp": 0})
    assert answer["win"] == pytest.approx(true, abs=1e-12) and answer["exact"] is True


def test_a_table_in_memory_is_read_again_when_its_file_is_replaced(client: TestClient) -> None:
    """A table served from memory is not kept once the CLI has replaced its file: the new file is read, checked."""
    path, true, forged = _forge(BB)
    cache.vouch(path)  # a forged vouch too (the CLI's own check of it is another item): the server reads it
    assert advice(client, BB, {"me": 0, "opp": 0})["win"] != pytest.approx(true, abs=0.01)
    rules = rules_from_text(BB)
    result = api.compute(rules)  # the CLI repairs the file (solves and writes it)
    api.save(result, path)
    cache.vouch(path)
    assert advice(client, BB, {"me": 0, "opp": 0})["win"] == pytest.approx(true, abs=1e-12)


def test_an_answer_carries_the_name_asked_for(client: TestClient) -> None:
    """Two rulesets of the same content share a table, and each answer names the ruleset that was asked."""
    first = advice(client, AA)
    second = advice(client, AA.replace('"aa"', '"aa2"'))
    assert (first["rules"], second["rules"]) == ("aa", "aa2") and first["win"] == second["win"]
    again = advice(client, AA)
    assert again["rules"] == "aa"


def test_a_solving_answer_carries_the_name_asked_for(own_cache: Path) -> None:
    """While a table is solved for one name, a ruleset of the same content under another name is told its own name."""
    from cinqmille.web.tables import Tables

    release = threading.Event()

    def waiting(rules: Any, objective: str, progress: Any = None, players: int = 2) -> Any:
        release.wait(timeout=20)
        raise RuntimeError("not solved in this test")

    app = create_app(tables=Tables(solver=waiting))
    client = TestClient(app, base_url="http://localhost")
    try:
        first = client.post("/api/advice", json={"rules": {"toml": AA}, **QUESTION})
        second = client.post("/api/advice", json={"rules": {"toml": AA.replace('"aa"', '"aa2"')}, **QUESTION})
    finally:
        release.set()
        app.state.tables.close()
    assert (first.status_code, second.status_code) == (202, 202)
    assert first.json()["job"] == second.json()["job"] and second.json()["rules"] == "aa2"


# -- 2: a head start is kept ---------------------------------------------------------------------------------------


FAMILY = 'name = "family"\nbase = "standard"\nstart = [0, 150]\n'


def test_the_solved_table_does_not_depend_on_the_start() -> None:
    """The table of a ruleset with a head start is the table without it (so sharing it by content is right)."""
    plain = rules_from_text('name = "s"\ngoal = 500\nopening = 150\n')
    started = rules_from_text('name = "s"\ngoal = 500\nopening = 150\nstart = [0, 100]\n')
    a, b = api.compute(plain), api.compute(started)
    assert np.array_equal(a.values, b.values, equal_nan=True)


def test_serve_keeps_the_head_start_of_its_ruleset(own_cache: Path) -> None:
    """`serve --rules family.toml` (standard with start = [0, 150]) offers that ruleset, start included."""
    app = create_app(rules_from_text(FAMILY))
    listing = TestClient(app, base_url="http://localhost").get("/api/rules").json()
    assert listing["default_name"] == "family"
    assert listing["default"] != "standard" and "start = [0, 150]" in listing["default"]["toml"]


def test_a_replayed_game_keeps_its_head_start(client: TestClient) -> None:
    """/api/replay of a saved game with a head start gives back its ruleset with that start: B is at 150."""
    sheet = {"rules": {"toml": FAMILY}, "players": ["A", "B"], "entries": [{"kind": "bust"}]}
    log = client.post("/api/log", json=sheet).json()
    replayed = client.post("/api/replay", json=log).json()
    assert replayed["rules"] != "standard" and "start = [0, 150]" in replayed["rules"]["toml"]
    again = client.post("/api/sheet", json={"rules": replayed["rules"], "players": replayed["players"],
                                            "entries": replayed["entries"]})
    assert again.status_code == 200 and again.json()["scores"] == [0, 150], again.text


# -- 3: the cache bound deletes the cache's own files only -----------------------------------------------------------


def test_the_cache_bound_deletes_only_the_caches_own_files(tmp_path: Path) -> None:
    """evict_oldest leaves the user's own .npz files, symbolic links and their targets: only table files it wrote go."""
    from cinqmille.solver.cache import evict_oldest

    folder, outside = tmp_path / "cache", tmp_path / "mine"
    folder.mkdir()
    outside.mkdir()
    ours = []
    for i in range(3):
        path = folder / f"t{i}-win-{'a' * 20}-{'b' * 16}.npz"
        path.write_bytes(b"x" * 1000)
        os.utime(path, (2_000_000 + i, 2_000_000 + i))
        ours.append(path)
    user = folder / "results.npz"
    user.write_bytes(b"u" * 50_000)
    target = outside / "precious.npz"
    target.write_bytes(b"p" * 50_000)
    link = folder / f"linked-win-{'c' * 20}-{'d' * 16}.npz"
    link.symlink_to(target)
    (folder / "data.npz").symlink_to(target)
    for path in (user, link):
        os.utime(path, (1_000_000, 1_000_000), follow_symlinks=False)
    assert evict_oldest(folder, 1500) == 2
    assert [p.exists() for p in ours] == [False, False, True]
    assert user.exists() and link.is_symlink() and (folder / "data.npz").is_symlink() and target.exists()
    assert evict_oldest(folder, 0) == 1 and user.exists() and target.read_bytes() == b"p" * 50_000


# -- 7: frames, the busy status, bodies parsed off the event loop ----------------------------------------------------


def test_no_page_may_frame_the_sheet(client: TestClient) -> None:
    """The page, the API and a refusal all carry X-Frame-Options: DENY and CSP frame-ancestors 'none'."""
    answers = [client.get("/"), client.get("/api/rules"), client.get("/api/rules", headers={"host": "evil.example"}),
               client.post("/api/sheet", json={"players": ["A"]})]
    assert [a.status_code for a in answers] == [200, 200, 403, 400]
    for answer in answers:
        assert answer.headers["x-frame-options"] == "DENY"
        assert answer.headers["content-security-policy"] == "frame-ancestors 'none'"


def test_a_sheet_says_plainly_that_its_table_waits_for_a_place(own_cache: Path) -> None:
    """With the solve queue full, a sheet's table is {"status": "busy", "retry_after": N}, a documented status."""
    from cinqmille.web.tables import Tables

    release = threading.Event()

    def waiting(rules: Any, objective: str, progress: Any = None, players: int = 2) -> Any:
        release.wait(timeout=20)
        raise RuntimeError("not solved in this test")

    app = create_app(tables=Tables(max_queued=1, solver=waiting))
    client = TestClient(app, base_url="http://localhost")
    try:
        tables = [client.post("/api/sheet", json={"rules": {"toml": f'goal = {goal}\nopening = 150\n'},
                                                  "players": ["A", "B"], "entries": []}).json()["table"]
                  for goal in (500, 550)]
    finally:
        release.set()
        app.state.tables.close()
    assert tables[0]["status"] == "solving"
    assert tables[1] == {"status": "busy", "retry_after": 10}
    assert '{"status": "busy", "retry_after": 10}' in (Path(__file__).parent.parent / "docs" / "web.md").read_text()


def test_a_body_is_parsed_in_a_worker_thread(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON of a request body is parsed off the event loop (a 256 KiB body costs milliseconds of CPU)."""
    import sniffio

    import cinqmille.web.bodies as bodies

    where: list[str] = []
    loads = json.loads

    def spy(text: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            where.append(sniffio.current_async_library())
        except sniffio.AsyncLibraryNotFoundError:
            where.append("worker thread")
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(bodies.json, "loads", spy)
    r = client.post("/api/rules", json={"rules": "standard"})
    assert r.status_code == 200 and where == ["worker thread"], where


# -- 5: the machine's own network address ----------------------------------------------------------------------------


def test_listening_on_every_interface_answers_the_machines_own_address(monkeypatch: pytest.MonkeyPatch,
                                                                         own_cache: Path) -> None:
    """Under --host 0.0.0.0, a request to the address the connection was accepted on (192.168.1.20 here, while the
    host name resolves to 127.0.1.1 as on Debian) is served, with its Origin; another address is still a 403."""
    from cinqmille.web import access

    monkeypatch.setattr(access, "_machine_names", lambda: {"myhost", "127.0.1.1"})
    app = create_app(access=access.Access.bound("0.0.0.0", 8000))
    phone = TestClient(app, base_url="http://192.168.1.20:8000")  # the scope's server: the accepting address
    assert phone.get("/api/rules").status_code == 200
    assert phone.post("/api/rules", json={"rules": "standard"},
                      headers={"origin": "http://192.168.1.20:8000"}).status_code == 200
    for host in ("10.9.9.9:8000", "192.168.1.20:8001", "evil.example:8000"):
        r = phone.get("/api/rules", headers={"host": host})
        assert r.status_code == 403 and r.json()["field"] == "Host", host
    r = phone.post("/api/rules", json={"rules": "standard"}, headers={"origin": "http://10.9.9.9:8000"})
    assert r.status_code == 403 and r.json()["field"] == "Origin"
    mapped = TestClient(app, base_url="http://[::ffff:192.168.1.20]:8000")
    assert mapped.get("/api/rules", headers={"host": "192.168.1.20:8000"}).status_code == 200
    only_here = create_app(access=access.Access.bound("127.0.0.1", 8000))
    assert TestClient(only_here, base_url="http://192.168.1.20:8000").get("/api/rules").status_code == 403


def test_the_machine_names_include_the_routed_address(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's names hold the address of the interface that routes out, not only its host name's."""
    from cinqmille.web import access, lan

    monkeypatch.setattr(lan, "_routed", lambda: "192.168.1.20")
    assert "192.168.1.20" in access._machine_names()


# -- 4: idle connections lock no one out ----------------------------------------------------------------------------


def _status(port: int, path: str = "/api/rules", timeout: float = 30) -> int:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        response.read()
        return response.status
    except OSError:
        return 0
    finally:
        conn.close()


def _burst(port: int, count: int) -> list[int]:
    """`count` real requests at once (one thread each), their statuses."""
    statuses: list[int] = []
    threads = [threading.Thread(target=lambda: statuses.append(_status(port)), daemon=True) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    return statuses


def test_idle_sockets_lock_no_one_out_of_serve(own_cache: Path) -> None:
    """`cinqmille serve` with 70 sockets that send nothing and 10 that stop mid-headers (loopback only) still
    answers a burst of 100 real requests, every one a 200 (it refused them with 503 when idle sockets counted)."""
    import signal
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-m", "cinqmille", "serve", "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=os.environ.copy())
    idle: list[socket.socket] = []
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        for i in range(80):
            sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            if i >= 70:
                sock.sendall(b"GET /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
            idle.append(sock)
        time.sleep(0.3)
        statuses = _burst(port, 100)
    finally:
        for sock in idle:
            sock.close()
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)
    assert sorted(statuses) == [200] * 100, sorted(set(statuses))


def test_idle_and_slow_connections_are_closed(own_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A connection that sends nothing, or stops mid-headers, is closed after the head timeout; one whose body does
    not come is a 408; a request still being answered after the head timeout is not cut (loopback only)."""
    import uvicorn

    from cinqmille.web import bodies, serving

    monkeypatch.setattr(serving.TimedH11Protocol, "head_timeout", 0.5)
    monkeypatch.setattr(bodies, "BODY_TIMEOUT", 0.5)
    app = create_app()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(serving.config(app, log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)
        silent = socket.create_connection(("127.0.0.1", port), timeout=5)
        partial = socket.create_connection(("127.0.0.1", port), timeout=5)
        partial.sendall(b"GET /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        slow_body = socket.create_connection(("127.0.0.1", port), timeout=5)
        slow_body.sendall(b"POST /api/rules HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                          b"Content-Length: 100\r\n\r\n{")
        start = time.monotonic()
        assert silent.recv(100) == b"" and partial.recv(100) == b""
        assert time.monotonic() - start < 3
        answer = b""
        while chunk := slow_body.recv(10_000):
            answer += chunk
        assert answer.startswith(b"HTTP/1.1 408") and b'"field":"body"' in answer, answer
        for s in (silent, partial, slow_body):
            s.close()
        assert _status(port) == 200
        import cinqmille.web.app as web_app

        monkeypatch.setattr(web_app, "_preset_of", lambda rules: time.sleep(1.5))  # an answer that takes 1.5 s
        r = _post(port, "/api/rules", {"rules": "standard"})
        assert r[0] == 200, r
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _post(port: int, path: str, body: Any) -> tuple[int, Any]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", path, body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json", "Host": f"127.0.0.1:{port}"})
        response = conn.getresponse()
        return response.status, json.loads(response.read())
    finally:
        conn.close()


# -- 6: each error names the field the client sent, truly -------------------------------------------------------------


TAKE = {"toml": 'name = "aa"\ngoal = 1000\nopening = 300\ntake_over = true\n'}


@pytest.mark.parametrize("body, field, fragment", [
    ({"me": 300, "opp": [300, 300], "offer": {"points": 300, "dice": 6}}, "offer", "between 1 and 5"),
    ({"me": 300, "opp": 300, "dice": 0}, "dice", "between 1 and 5"),
    ({"me": 300, "opp": 300, "dice": 0, "roll": "11"}, "dice", "'dice' says 0"),
    ({"me": 300, "opp": 300, "turn": 25, "dice": 2}, "turn", "multiple of 50"),
    ({"me": 300, "opp": 300, "roll": "11"}, "roll", "nothing set aside with 2 dice"),
    ({"me": 300, "opp": 300, "turn": 100}, "dice", "give 'dice'"),
    ({"me": 300, "opp": 300, "turn": 300, "dice": 3}, "turn", "no turn holds 300 points"),
    ({"me": 300, "opp": 300, "turn": 300, "roll": "111"}, "turn", "no turn holds 300 points"),
    ({"me": 150, "opp": 300}, "me", "below the opening"),
    ({"players": ["A", "B"], "entries": [{"kind": "bank"}]}, "entries[0].points", "'entries[0].points' is missing"),
])
def test_a_bad_position_names_the_field_sent(client: TestClient, body: dict[str, Any], field: str,
                                             fragment: str) -> None:
    """A refused position is a 400 whose `field` is the one the client sent that is wrong, and says why."""
    r = client.post("/api/advice", json={"rules": TAKE, **body})
    assert r.status_code == 400 and r.json()["field"] == field and fragment in r.json()["error"], r.text
    assert field.split("[")[0].split(".")[0] in body or fragment == "give 'dice'"  # sent, or the one missing


@pytest.mark.parametrize("log, field", [
    ({"rules": {"goal": -5}, "entries": []}, "rules"),
    ({"rules": {"base": "nope"}, "entries": []}, "rules"),
    ({"rules": {"goal": 1000}, "entries": [{"kind": "bank"}]}, "entries[0].points"),
    ({"rules": {"goal": 1000}, "entries": [{"kind": "bank", "points": 800}], "scores": [0, 5]}, "scores"),
])
def test_a_bad_game_log_names_its_field(client: TestClient, log: dict[str, Any], field: str) -> None:
    """A replayed log with a bad ruleset, entry or recorded scores is a 400 naming that field."""
    r = client.post("/api/replay", json={"format": "cinqmille-sheet", "version": 1, "players": ["A", "B"], **log})
    assert r.status_code == 400 and r.json()["field"] == field, r.text


def test_a_take_over_entered_short_is_refused_truly(client: TestClient) -> None:
    """Taking over a bank of 450 and entering 50 is refused saying the bank is entered whole and is more than 450."""
    entries = [{"kind": "bank", "points": 300}, {"kind": "bank", "points": 300},
               {"kind": "bank", "points": 450, "dice": 3}, {"kind": "bank", "points": 50, "taken": True}]
    r = client.post("/api/sheet", json={"rules": TAKE, "players": ["A", "B"], "entries": entries})
    assert r.status_code == 422 and r.json()["field"] == "entries[3]"
    error = r.json()["error"]
    assert "his bank is more than" not in error and "entered whole" in error and "got 50" in error, error


def test_a_game_with_a_head_start_below_the_opening_is_advised(client: TestClient) -> None:
    """A sheet whose ruleset gives B a head start of 150 (below the opening, not opened) is not refused as a bad
    'opp' the client never sent: it is advised, and the chance at A's first roll is the solver's chance of the
    first seat from that start; B's own turns are advised too."""
    sheet = {"rules": {"toml": FAMILY}, "players": ["A", "B"], "entries": []}
    for _ in range(1200):
        r = client.post("/api/advice", json=sheet)
        if r.status_code != 202:
            break
        time.sleep(0.05)
    assert r.status_code == 200, r.text
    start = api.solve(rules_from_text(FAMILY)).win
    assert r.json()["win"] == pytest.approx(start[0], abs=1e-12) and r.json()["exact"] is True
    after = client.post("/api/advice", json={**sheet, "entries": [{"kind": "bust"}], "turn": 200, "dice": 3})
    assert after.status_code == 200 and after.json()["position"]["me"] == 150, after.text
    assert 0 < after.json()["win"] < 1


def test_advise_reads_a_head_start_below_the_opening(own_cache: Path, tmp_path: Path) -> None:
    """`advise --opp 150` under a ruleset whose start gives 150 is the game from that start (exit 0); a score below
    the opening that is no start is still refused."""
    from click.testing import CliRunner

    from cinqmille.cli import main

    path = tmp_path / "family.toml"
    path.write_text(FAMILY)
    out = CliRunner().invoke(main, ["advise", "--rules", str(path), "--me", "0", "--opp", "150", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["win"] == pytest.approx(api.solve(rules_from_text(FAMILY)).win[0], abs=1e-12)
    refused = CliRunner().invoke(main, ["advise", "--rules", str(path), "--me", "0", "--opp", "100"])
    assert refused.exit_code == 2 and "below the opening" in refused.output
