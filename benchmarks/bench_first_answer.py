"""The wait for the first advice of a three-player game on the web sheet, with and without solving ahead.

    python benchmarks/bench_first_answer.py [--rules standard] [--typing 20] [--think 5] [--kernel DIR]

Each run starts a fresh app (`web.app.create_app`, served in-process through Starlette's test client) on an
empty table cache (the compiled kernel copied from `--kernel`, a cache folder's `numba/`, so that only the
tables are new, as on a machine that has run cinqmille before), and plays the setup as the page does:

- *ahead*: the page opens (`POST /api/prepare` for two players), a third player is added at once
  (`/api/prepare` for three), the names take `--typing` seconds, the game starts (`POST /api/sheet`), the
  first roll takes `--think` seconds, then the first question (`POST /api/advice`, polled while 202);
- *at start*: the same without `/api/prepare` (the solve starts with the game, as before issue 33).

Printed: the seconds from the question to the first move shown (the two-player table's move, without a
chance, while the three-player table is solved: the 202's `interim`) and to the full answer (the game's own
chances), and from the start of the game. The machine's load (`os.getloadavg`) is printed too: the figures
scale with it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from starlette.testclient import TestClient

from cinqmille.web.app import create_app


def run(rules: str, typing: float, think: float, ahead: bool, kernel: Path | None) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory(prefix="cinqmille-first-") as folder:
        if kernel is not None and kernel.is_dir():
            shutil.copytree(kernel, Path(folder) / "numba")
        os.environ["CINQMILLE_CACHE"] = folder
        client = TestClient(create_app(rules), base_url="http://localhost")
        if ahead:
            client.post("/api/prepare", json={"rules": rules, "count": 2})
            client.post("/api/prepare", json={"rules": rules, "count": 3})
        time.sleep(typing)
        sheet = {"rules": rules, "players": ["Ann", "Bob", "Cy"], "entries": []}
        started = time.perf_counter()
        assert client.post("/api/sheet", json=sheet).status_code == 200
        time.sleep(think)
        asked = time.perf_counter()
        moved = None
        while True:
            answer = client.post("/api/advice", json={**sheet, "roll": "15332"})
            if answer.status_code == 200:
                break
            assert answer.status_code == 202, answer.json()
            if moved is None and answer.json().get("interim"):
                moved = time.perf_counter()
            time.sleep(0.2)
        done = time.perf_counter()
        client.close()
        return (done if moved is None else moved) - asked, done - asked, done - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="standard")
    parser.add_argument("--typing", type=float, default=20.0, help="seconds from the setup page to the start")
    parser.add_argument("--think", type=float, default=5.0, help="seconds from the start to the first question")
    parser.add_argument("--kernel", type=Path, default=None, help="a cache folder's numba/ (the compiled kernel)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; names typed in {args.typing:.0f} s, first question "
          f"{args.think:.0f} s after the start")
    for ahead in (True, False):
        first, wait, since = run(args.rules, args.typing, args.think, ahead, args.kernel)
        label = "solved ahead (setup)" if ahead else "solved at the start"
        print(f"  {label:<22} first move {first:6.1f} s after the question; full answer {wait:6.1f} s after it, "
              f"{since:6.1f} s after the start (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
