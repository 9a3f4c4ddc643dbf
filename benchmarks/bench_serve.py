"""Speed of `cinqmille serve`: advice through the HTTP API with a warm table, and the page's requests during a solve.

    python benchmarks/bench_serve.py [--rules standard] [--requests 200]

A real uvicorn server runs in this process (a thread) on a free local port.
1. Warm: the table of `--rules` is loaded (solved first if it is not cached),
   then `--requests` advice requests (bank-or-roll and keep questions at random
   scores, from sheets of two players) go over one HTTP connection; the median,
   90th percentile and maximum wall time per request are printed.
2. During a solve: a ruleset that is in no cache (`--rules` with the opening
   moved, in a fresh temporary cache) is asked for advice (a 202 and a job);
   while the background thread solves it, the page's requests (progress polls
   and sheet replays) are timed until the table is ready.
Figures are medians of a noisy shared machine: compare them, don't trust one run.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import tempfile
import threading
import time

import uvicorn

from cinqmille.rules import load_rules, to_toml
from cinqmille.web.app import create_app


def serve() -> tuple[uvicorn.Server, int]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(create_app(), host="127.0.0.1", port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return server, port


def call(conn: http.client.HTTPConnection, method: str, path: str, body: dict | None = None) -> tuple[int, dict, float]:
    start = time.perf_counter()
    data = None if body is None else json.dumps(body)
    conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    answer = json.loads(response.read())
    return response.status, answer, (time.perf_counter() - start) * 1000


def figures(label: str, ms: list[float]) -> None:
    ms = sorted(ms)
    p90 = ms[int(0.9 * (len(ms) - 1))]
    print(f"{label}: {len(ms)} requests, median {statistics.median(ms):.1f} ms, p90 {p90:.1f} ms, "
          f"max {ms[-1]:.1f} ms")


def questions(rng: random.Random, n: int, rules_spec: object) -> list[dict]:
    """Advice requests from two-player sheets: the opponent at 0 to 4000, a keep or a bank-or-roll question."""
    rolls = ["15332", "11523", "2346", "155", "1", "12346", "555", "44", "1156"]
    out = []
    for _ in range(n):
        a, b = rng.choice(range(750, 4001, 50)), rng.choice(range(750, 4001, 50))
        entries = [{"kind": "bank", "points": a}, {"kind": "bank", "points": b}]
        body: dict = {"rules": rules_spec, "players": ["A", "B"], "entries": entries}
        if rng.random() < 0.5:
            body["roll"] = rng.choice(rolls)
            body["turn"] = {5: 0, 4: 100, 3: 200, 2: 300, 1: 400}[len(body["roll"])]
        else:
            body["turn"], body["dice"] = rng.choice([(300, 2), (200, 3), (400, 2), (100, 4), (250, 2)])
        out.append(body)
    return out


def wait_ready(conn: http.client.HTTPConnection, body: dict) -> float:
    start = time.perf_counter()
    while True:
        status, answer, _ = call(conn, "POST", "/api/advice", body)
        if status == 200:
            return time.perf_counter() - start
        if status != 202:
            raise SystemExit(f"advice failed: {answer}")
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    server, port = serve()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    asks = questions(random.Random(1), args.requests, args.rules)
    took = wait_ready(conn, asks[0])
    print(f"ruleset {args.rules}: table ready after {took:.1f} s (load or first solve)")
    for body in asks[:20]:  # the first reads of the policy rows
        call(conn, "POST", "/api/advice", body)
    times = []
    for body in asks:
        status, answer, ms = call(conn, "POST", "/api/advice", body)
        assert status == 200, answer
        times.append(ms)
    figures("advice, warm table", times)

    # 2. the page's requests while a ruleset is solved in the background
    base = load_rules(args.rules)
    variant = {"toml": to_toml(base).replace(f"opening = {base.opening}", f"opening = {base.opening - 50 or 50}")}
    with tempfile.TemporaryDirectory() as cache:
        os.environ["CINQMILLE_CACHE"] = cache
        sheet = {"rules": variant, "players": ["A", "B"],
                 "entries": [{"kind": "bank", "points": 1000}] + [{"kind": "bust"}, {"kind": "bank", "points": 200}] * 9
                 + [{"kind": "bust"}]}
        status, answer, _ = call(conn, "POST", "/api/advice", {**sheet, "roll": "15332"})
        assert status == 202, answer
        job, start = answer["job"], time.perf_counter()
        polls, sheets = [], []
        while True:
            status, answer, ms = call(conn, "GET", f"/api/progress?job={job}")
            polls.append(ms)
            if answer["status"] != "solving":
                break
            sheets.append(call(conn, "POST", "/api/sheet", sheet)[2])
            time.sleep(0.1)
        print(f"solve of a variant in the background: {time.perf_counter() - start:.1f} s, status {answer['status']}")
        figures("  progress polls during the solve", polls)
        figures("  sheet replays (20 turns) during the solve", sheets)
    server.should_exit = True


if __name__ == "__main__":
    main()
