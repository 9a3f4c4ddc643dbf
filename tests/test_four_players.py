"""Four players at 5000 on one machine: tables stored for the possible scores only (the same bits as the dense
layout), finished levels kept on disk and resumed (a damaged one refused and solved again), the budget and the
time said before a long solve."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.cli import progress as cli_progress
from cinqmille.rules import load_rules, rules_from_dict
from cinqmille.solver import api, n_player
from cinqmille.solver.budget import MAX_BYTES, SOLVE_STATES, Limits, TooLarge, check_budget, estimate
from cinqmille.solver.checkpoint import Checkpoint
from cinqmille.solver.grid import ScoreGrid
from cinqmille.solver.result import extended

#: SHA-256 of tables computed with the dense layout before this one (tests/fixtures/make_n_player_tables.py).
REFERENCE: dict[str, dict[str, Any]] = json.loads((Path(__file__).parent / "fixtures" / "n_player_tables.json")
                                                  .read_text())
#: Four players at goal 1000, opening 300: 72 levels; the chasing cycle 0/0/0/350 is settled on level 70 (index 69).
CHASE = "four-chase-1000-open-300"
SOLVE_LEVEL = n_player.solve_level


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private, empty cache folder for this test."""
    path = tmp_path / "cache"
    monkeypatch.setenv("CINQMILLE_CACHE", str(path))
    return path


def digest(values: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(values, dtype=np.float64).tobytes()).hexdigest()


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_tables_are_the_bits_of_the_dense_layout(name: str) -> None:
    """Three-, four- and five-player tables (and their rows of head starts below the opening) are, bit for bit,
    the possible scores' values of the dense layout they replace, with the same start chances and states."""
    ref = REFERENCE[name]
    result = api.compute(rules_from_dict(ref["rules"], name), players=ref["players"])
    assert list(result.values.shape) == ref["shape"] and digest(result.values) == ref["sha256"]
    assert list(result.win) == ref["win"] and result.states == ref["states"]
    if "pending" in ref:
        assert digest(extended(result, tuple(ref["pending"])).values) == ref["pending_sha256"]


def test_one_accessor_reads_the_table_by_scores() -> None:
    """`seat_values` reads a turn start by its scores (NaN where a score cannot occur), and the four-player
    `standard` table of the possible scores is 86^4 x 3 seats of float64 (1.3 GB, not 38 GB)."""
    ref = REFERENCE["four-reach-500-open-200"]
    result = api.compute(rules_from_dict(ref["rules"]), players=4)
    scores = result.grid.scores
    assert result.values.shape == (len(scores),) * 4 + (3,)
    i = [1, 0, 3, 2]
    assert np.array_equal(result.seat_values(scores[i]), result.values[tuple(i)])
    assert np.isnan(result.seat_values([1, 0, 0, 0])).all()  # 50 points: not a score under an opening of 200
    standard = ScoreGrid.of(load_rules("standard"))
    assert len(standard.scores) == 86 and 86 ** 4 * 3 * 8 < 1.4e9


class Interrupted(Exception):
    """The solve stopped from outside (a ^C, a killed process: nothing after the last level written is kept)."""


def _interrupt_after(monkeypatch: pytest.MonkeyPatch, levels: int) -> list[int]:
    """Make `solve_level` stop the solve after `levels` levels; returns the count of levels solved."""
    original = SOLVE_LEVEL
    solved = [0]

    def counted(*args: Any, **kwargs: Any) -> Any:
        if solved[0] >= levels:
            raise Interrupted
        solved[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(n_player, "solve_level", counted)
    return solved


def test_an_interrupted_solve_resumes_where_it_stopped(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solve stopped after 70 of its 72 levels (the chasing level among them) solves only the last two when
    started again, and gives the uninterrupted table bit for bit, with the same settlement stated; the finished
    levels are then removed."""
    ref = REFERENCE[CHASE]
    rules = rules_from_dict(ref["rules"], "chase")
    monkeypatch.setattr(api, "CHECKPOINT_STATES", 0)
    _interrupt_after(monkeypatch, 70)
    with pytest.raises(Interrupted):
        api.solve(rules, players=4)
    folder = Checkpoint.of(rules, 4).folder
    assert len(list(folder.glob("level-*.npz"))) == 70
    solved = _interrupt_after(monkeypatch, 10**6)
    result = api.solve(rules, players=4)
    assert solved[0] == 2 and digest(result.values) == ref["sha256"] and list(result.win) == ref["win"]
    fresh = api.compute(rules, players=4)
    assert result.assumptions == fresh.assumptions and result.extra == fresh.extra and result.states == fresh.states
    assert "mixed choice" in result.assumptions[0] and not folder.exists()


@pytest.mark.parametrize("damage", ["garbage", "another level", "values"])
def test_a_damaged_level_file_is_refused_and_solved_again(cache_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                                          damage: str) -> None:
    """A finished level whose file is cut, is another level's, or holds other values (its checksum then fails) is
    reported in one warning, deleted, and solved again with the levels below it: the table is the same bits."""
    ref = REFERENCE[CHASE]
    rules = rules_from_dict(ref["rules"], "chase")
    monkeypatch.setattr(api, "CHECKPOINT_STATES", 0)
    _interrupt_after(monkeypatch, 40)
    with pytest.raises(Interrupted):
        api.solve(rules, players=4)
    files = sorted(Checkpoint.of(rules, 4).folder.glob("level-*.npz"))[::-1]  # the highest sum first
    assert len(files) == 40
    target = files[20]
    if damage == "garbage":
        target.write_bytes(target.read_bytes()[:300])
    elif damage == "another level":
        target.write_bytes(files[21].read_bytes())
    else:
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0xFF
        target.write_bytes(bytes(data))
    solved = _interrupt_after(monkeypatch, 10**6)
    with pytest.warns(UserWarning, match="not sound and is solved again"):
        result = api.solve(rules, players=4)
    assert solved[0] == 72 - 20 and digest(result.values) == ref["sha256"]


def test_the_budget_admits_four_player_standard() -> None:
    """The refitted estimate of four-player `standard` is within the default memory limit (at most 4 GiB) and
    above its table; `cinqmille solve` admits its 12.2 billion states, a solve read on the way (advice) does not;
    the estimates are at or above the peaks measured (docs/solver.md)."""
    standard = load_rules("standard")
    four = estimate(standard, "win", 4)
    assert MAX_BYTES <= 4 * 2**30 and 86 ** 4 * 3 * 8 < four.bytes <= MAX_BYTES
    assert four.states == 12_215_455_480
    assert check_budget(standard, "win", Limits(states=SOLVE_STATES), 4) == four
    with pytest.raises(TooLarge, match="turn states"):
        check_budget(standard, "win", Limits(), 4)
    measured = [("standard", {}, 4, 2_315_304 * 1024), ("standard", {}, 3, 273_172_000),
                ("", {"goal": 2000, "opening": 500}, 4, 233_588_000), ("", {"goal": 1000, "opening": 300}, 5, 205_216_000)]
    for base, spec, players, peak in measured:
        rules = load_rules(base) if base else rules_from_dict(spec)
        assert estimate(rules, "win", players).bytes >= peak


def test_a_long_solve_says_how_long_it_will_take(tmp_path: Path, session_cache: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Before a long solve starts, `cinqmille solve` says its turn states, the kernel rate measured now and the
    time at that rate (stderr; stdout stays the JSON)."""
    monkeypatch.setattr(api, "CHECKPOINT_STATES", 0)
    monkeypatch.setattr(cli_progress, "QUIET_STATES", 0)
    path = tmp_path / "r.toml"
    path.write_text('goal = 600\nopening = 200\n')
    done = CliRunner().invoke(main, ["solve", "--rules", str(path), "--players", "4", "--json"])
    assert done.exit_code == 0, done.output
    said = done.stderr
    assert "turn states:" in said and "million states a second (a kernel pass measured now)" in said
    assert "about" in said.split("turn states:")[1]
    assert json.loads(done.stdout)["players"] == 4


def test_a_long_solve_logs_each_percent() -> None:
    """Where no bar is drawn (a log), work of a billion states or more says each whole percent with the time so
    far and the time left at that pace."""
    now = [0.0]
    lines: list[str] = []
    monkey = pytest.MonkeyPatch()
    monkey.setattr(cli_progress.click, "echo", lambda text, err=False: lines.append(str(text)))
    try:
        update = cli_progress.log_lines(lambda: now[0])
        for t, f in ((60.0, 0.004), (120.0, 0.01), (130.0, 0.012), (1200.0, 0.5)):
            now[0] = t
            update(f)
    finally:
        monkey.undo()
    assert lines == ["... 1% done, 2 min so far, about 3 h 18 min left", "... 50% done, 20 min so far, about 20 min left"]
