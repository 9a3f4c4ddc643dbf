"""Solved tables on disk: atomic .npz files, the cache, corruption, and the `solve` command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.rules import rules_from_dict
from cinqmille.solver import CorruptTable, api, cache, compute, load, save, solve

TINY = {"goal": 500, "opening": 150}


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache directory for one test."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_save_and_load_round_trip(tmp_path: Path) -> None:
    """A saved result loads back with the same values, ruleset and metadata."""
    result = compute(rules_from_dict(TINY, "tiny"))
    path = tmp_path / "tiny.npz"
    save(result, path)
    again = load(path)
    assert np.array_equal(again.values, result.values, equal_nan=True)
    assert again.rules == result.rules
    assert (again.residual, again.exact, again.assumptions) == (result.residual, result.exact, result.assumptions)
    assert not list(tmp_path.glob("*.tmp"))


def test_second_query_does_not_solve_again(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first solve writes the cache; the second reads it instead of computing."""
    rules = rules_from_dict(TINY, "tiny")
    first = solve(rules)
    assert len(list(cache_dir.glob("*.npz"))) == 1

    def refuse(*args, **kwargs):
        raise AssertionError("solved again")

    monkeypatch.setattr(api, "compute", refuse)
    second = solve(rules)
    assert second.first_player_win == first.first_player_win


def test_cache_key_follows_rules_and_solver_version(cache_dir: Path) -> None:
    """Different rulesets get different files, and the file name carries the solver version."""
    a = cache.cache_path(rules_from_dict(TINY, "tiny"), "win")
    b = cache.cache_path(rules_from_dict({**TINY, "min_bank": 100}, "tiny"), "win")
    assert a != b
    assert cache.solver_version() in a.name


@pytest.mark.parametrize("damage", ["truncate", "garbage", "tamper"])
def test_corrupt_cache_is_recomputed_with_a_warning(cache_dir: Path, damage: str) -> None:
    """A truncated, garbled or altered cache file is detected, reported and recomputed."""
    rules = rules_from_dict(TINY, "tiny")
    good = solve(rules)
    path = next(cache_dir.glob("*.npz"))
    data = path.read_bytes()
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        path.write_bytes(b"not a zip file at all")
    else:
        values = good.values.copy()
        values[np.isfinite(values)] *= 0.5
        with np.load(path, allow_pickle=False) as npz:
            meta = str(npz["meta"])
        np.savez_compressed(path, values=values, meta=np.array(meta))
    with pytest.warns(UserWarning, match="recomputing"):
        again = solve(rules)
    assert again.first_player_win == good.first_player_win


def test_pickled_arrays_are_refused(tmp_path: Path) -> None:
    """A table file holding pickled objects is rejected, never unpickled."""
    path = tmp_path / "evil.npz"
    np.savez(path, values=np.array([object()], dtype=object), meta=np.array("{}"))
    with pytest.raises(CorruptTable):
        load(path)


def test_solve_command_json(cache_dir: Path, tmp_path: Path) -> None:
    """`cinqmille solve --json` prints the headline keys; a second run reads the cache."""
    rules_file = tmp_path / "tiny.toml"
    rules_file.write_text('goal = 500\nopening = 150\n')
    runner = CliRunner()
    out = runner.invoke(main, ["solve", "--rules", str(rules_file), "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    for key in ("rules", "first_player_win", "states", "seconds", "residual", "exact", "assumptions"):
        assert key in data
    assert 0.5 < data["first_player_win"] < 1 and data["residual"] <= 1e-9 and data["exact"] is True
    assert len(list(cache_dir.glob("*.npz"))) == 1
    text = runner.invoke(main, ["solve", "--rules", str(rules_file)])
    assert text.exit_code == 0 and "First player wins" in text.output


def test_solve_command_reports_relaxations(cache_dir: Path, tmp_path: Path) -> None:
    """A ruleset with history rules is solved as a stated relaxation, marked not exact."""
    rules_file = tmp_path / "crosses.toml"
    rules_file.write_text('goal = 500\nopening = 150\ncrosses = true\n')
    out = CliRunner().invoke(main, ["solve", "--rules", str(rules_file), "--json"])
    data = json.loads(out.output)
    assert data["exact"] is False and any("crosses" in a for a in data["assumptions"])


def test_solve_command_bad_input(cache_dir: Path) -> None:
    """An unknown preset is one line on stderr and exit status 2."""
    out = CliRunner().invoke(main, ["solve", "--rules", "nope"])
    assert out.exit_code == 2 and "unknown preset" in out.output and "Traceback" not in out.output


def test_stale_versions_are_pruned(cache_dir: Path) -> None:
    """Writing a table removes the files of the same ruleset left by other solver versions."""
    rules = rules_from_dict(TINY, "tiny")
    path = cache.cache_path(rules, "win")
    stale = path.with_name(path.name.replace(cache.solver_version(), "0" * len(cache.solver_version())))
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"old table")
    other = cache.cache_path(rules_from_dict({**TINY, "opening": 200}, "tiny"), "win")
    other.write_bytes(b"another ruleset")
    solve(rules)
    assert path.exists() and not stale.exists() and other.exists()


def test_cli_reports_a_damaged_cache_in_one_line(cache_dir: Path, tmp_path: Path) -> None:
    """The command line says in one plain line that a damaged table is recomputed, then answers."""
    rules_file = tmp_path / "tiny.toml"
    rules_file.write_text('goal = 500\nopening = 150\n')
    runner = CliRunner()
    assert runner.invoke(main, ["solve", "--rules", str(rules_file)]).exit_code == 0
    next(cache_dir.glob("*.npz")).write_bytes(b"PK\x03\x04 damaged")
    out = runner.invoke(main, ["solve", "--rules", str(rules_file), "--json"])
    assert out.exit_code == 0
    assert "Warning:" in out.stderr and "recomputing" in out.stderr and "Traceback" not in out.stderr
    assert json.loads(out.stdout)["first_player_win"] > 0.5
