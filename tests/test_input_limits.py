"""Hostile input: the typed-number parser, rules-file bounds, size budgets, table identity, stale temporary files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.errors import CinqmilleError
from cinqmille.files import atomic_write, clean_stale_tmp
from cinqmille.parsing import MAX_DIGITS, faces, whole
from cinqmille.rules import RulesError, load_rules, rules_from_dict
from cinqmille.solver import api, cache, compute, solve
from cinqmille.solver.budget import Limits, TooLarge, check_budget, estimate

TINY = {"goal": 500, "opening": 150}


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private cache directory for one test."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


# -- numbers typed by people ----------------------------------------------------------------
@pytest.mark.parametrize("text, value", [("0", 0), ("5000", 5000), (" 5_000 ", 5000), ("18", 18)])
def test_whole_reads_ascii_numbers(text: str, value: int) -> None:
    """ASCII digits, surrounding spaces and _ separators read as the number they write."""
    assert whole(text, "x") == value


@pytest.mark.parametrize("text", ["³", "٣", "1²", "", " ", "-1", "+5", "1.5", "1e3", "5__0", "_5", "0x10",
                                  "9" * (MAX_DIGITS + 1), "9" * 5000, "١٢"])
def test_whole_refuses_everything_else_in_one_line(text: str) -> None:
    """Unicode digits, signs, decimals and overlong numbers are one-line errors that quote a short excerpt."""
    with pytest.raises(CinqmilleError) as info:
        whole(text, "--me")
    message = str(info.value)
    assert message.startswith("--me: ") and "\n" not in message and len(message) < 200


def test_whole_bounds_and_signs() -> None:
    """Bounds are checked and a sign is read only where the caller allows it."""
    assert whole("-3", "x", signed=True) == -3
    with pytest.raises(CinqmilleError, match="at most 10"):
        whole("11", "x", high=10)
    with pytest.raises(CinqmilleError, match="at least 1"):
        whole("0", "x", low=1)


def test_faces_reads_rolls_as_people_type_them() -> None:
    """Commas, spaces and dashes separate faces; anything but 1-6 or too many dice is refused."""
    assert faces("1,5 3-3 2", dice=5) == (1, 5, 3, 3, 2)
    for bad in ("1,5,³", "0", "7", "", "1,,x", "111111"):
        with pytest.raises(CinqmilleError):
            faces(bad, dice=5)


# -- rules files ----------------------------------------------------------------------------
@pytest.mark.parametrize("text, fragment", [
    ("goal = 1000000000\n", "at most 1,000,000"),
    ("straights = 100000000000000000000\n", "at most 1,000,000"),
    ("goal = " + "9" * 5000 + "\n", "not a usable TOML"),
    ("[zero_turns]\ncount = 1000000\n", "from 1 to 100"),
    ('name = "' + "x" * 500 + '"\n', "at most 200"),
    ('name = "a\\nb"\n', "printable"),
])
def test_rules_files_are_bounded(tmp_path: Path, text: str, fragment: str) -> None:
    """Every number and string a rules file carries is bounded at load time, in one line."""
    path = tmp_path / "r.toml"
    path.write_text(text)
    with pytest.raises(RulesError, match=fragment) as info:
        load_rules(str(path))
    assert "\n" not in str(info.value)


def test_rules_file_paths_are_checked(tmp_path: Path) -> None:
    """Empty names, non-regular files, oversized files, `..` loops and deep chains are refused."""
    with pytest.raises(RulesError, match="empty"):
        load_rules("")
    with pytest.raises(RulesError, match="regular file"):
        load_rules("/dev/zero")
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * 70_000 + "\n")
    with pytest.raises(RulesError, match="KiB"):
        load_rules(str(big))
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "loop.toml").write_text('base = "../sub/loop.toml"\n')
    with pytest.raises(RulesError, match="loops back"):
        load_rules(str(sub / "loop.toml"))
    (tmp_path / "c0.toml").write_text('goal = 1000\n')
    for i in range(1, 40):
        (tmp_path / f"c{i}.toml").write_text(f'base = "c{i - 1}.toml"\n')
    assert load_rules(str(tmp_path / "c10.toml")).goal == 1000
    with pytest.raises(RulesError, match="deeper than"):
        load_rules(str(tmp_path / "c39.toml"))


# -- size budget ------------------------------------------------------------------------------
def test_estimate_matches_the_states_a_solve_reports() -> None:
    """The estimate of a ruleset without a last round is the solver's own count of states."""
    rules = rules_from_dict({"goal": 1500, "opening": 300}, "small")
    assert estimate(rules).states == compute(rules).states


def test_budget_refuses_before_allocating(cache_dir: Path) -> None:
    """A ruleset beyond the limits is refused at once, naming the estimate and the limit."""
    rules = rules_from_dict({"goal": 1_000_000}, "huge")
    with pytest.raises(TooLarge, match="above the limit"):
        solve(rules)
    small = rules_from_dict(TINY, "tiny")
    with pytest.raises(TooLarge, match="limit of 10;"):
        check_budget(small, "win", Limits(states=10))
    assert not cache_dir.exists() or not list(cache_dir.iterdir())


def test_limits_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """CINQMILLE_MAX_STATES and CINQMILLE_MAX_MEMORY set the limits; bad values are one-line errors."""
    monkeypatch.setenv("CINQMILLE_MAX_STATES", "1_000")
    monkeypatch.setenv("CINQMILLE_MAX_MEMORY", "2")
    assert Limits.from_env() == Limits(1000, 2 * 2**30)
    assert Limits.from_env(5, 1) == Limits(5, 2**30)
    monkeypatch.setenv("CINQMILLE_MAX_STATES", "lots")
    with pytest.raises(CinqmilleError, match="CINQMILLE_MAX_STATES"):
        Limits.from_env()


# -- cached tables prove what they are --------------------------------------------------------
def _cached(rules_dict: dict, name: str) -> tuple[Path, float]:
    rules = rules_from_dict(rules_dict, name)
    value = solve(rules).first_player_win
    return cache.cache_path(rules, "win"), value


def test_a_foreign_table_is_never_served(cache_dir: Path) -> None:
    """Another ruleset's valid table copied over a cache file is reported and recomputed."""
    path_a, value_a = _cached({"goal": 1000, "opening": 300}, "same")
    path_b, value_b = _cached({"goal": 1000, "opening": 300, "straights": 0}, "same")
    assert value_a != value_b
    path_a.write_bytes(path_b.read_bytes())
    with pytest.warns(UserWarning, match="another rules key"):
        again = solve(rules_from_dict({"goal": 1000, "opening": 300}, "same")).first_player_win
    assert again == value_a
    assert cache.load_npz(path_a, api.result_spec(rules_from_dict({"goal": 1000, "opening": 300}), "win"))


def _rewrite(path: Path, change: dict[str, np.ndarray]) -> None:
    """Rewrite a table file with some arrays replaced, keeping its identity and a valid checksum."""
    with zipfile.ZipFile(path) as archive:
        meta = json.loads(str(np.lib.format.read_array(archive.open("meta.npy"))))
    arrays, _ = cache.load_npz(path)
    arrays.update(change)
    meta = {k: v for k, v in meta.items() if k not in ("checksum", "arrays", "table")}
    rules = rules_from_dict(TINY, "tiny")
    cache.save_npz(path, arrays, meta, api.result_spec(rules, "win"))


@pytest.mark.parametrize("damage", ["nan", "range", "shape", "dtype"])
def test_valid_checksum_but_wrong_values_is_recomputed(cache_dir: Path, damage: str) -> None:
    """A table whose checksum is right but whose values or layout are wrong is recomputed, not served."""
    path, value = _cached(TINY, "tiny")
    values = cache.load_npz(path)[0]["values"]
    bad = {"nan": np.where(np.isfinite(values), np.nan, values),
           "range": np.where(np.isfinite(values), values - 400.0, values),
           "shape": values[:-1],
           "dtype": values.astype(np.float32)}[damage]
    _rewrite(path, {"values": bad})
    with pytest.warns(UserWarning, match="recomputing"):
        assert solve(rules_from_dict(TINY, "tiny")).first_player_win == value
    assert solve(rules_from_dict(TINY, "tiny")).first_player_win == value  # repaired on disk


def test_an_unreadable_table_is_left_alone(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache file that cannot be opened is reported, solved around, and neither deleted nor replaced."""
    path, value = _cached(TINY, "tiny")
    before = path.read_bytes()

    def refuse(*args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(cache, "load_npz", refuse)
    with pytest.warns(UserWarning, match="cannot read"):
        assert solve(rules_from_dict(TINY, "tiny")).first_player_win == value
    assert path.read_bytes() == before


def test_a_cache_path_too_long_is_solved_around(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cache directory longer than the system allows gives a warning and the right answer, not a traceback."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / ("x" * 250) / ("y" * 250) / ("z" * 4000)))
    rules = rules_from_dict(TINY, "tiny")
    with pytest.warns(UserWarning):
        assert solve(rules).first_player_win == compute(rules).first_player_win


# -- files left by a crash ------------------------------------------------------------------------
def test_stale_temporary_files_are_cleaned(tmp_path: Path) -> None:
    """A temporary file of a dead writer is removed by the next write; a live writer's is kept."""
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    target = tmp_path / "out.csv"
    left = tmp_path / f".out.csv.{dead_pid}.abc123.tmp"
    left.write_text("half")
    mine = tmp_path / f".out.csv.{os.getppid()}.live99.tmp"
    mine.write_text("in progress")
    other = tmp_path / f".notes.txt.{dead_pid}.zz.tmp"
    other.write_text("not ours")
    atomic_write(target, lambda tmp: tmp.write_text("done\n"))
    assert target.read_text() == "done\n"
    assert not left.exists() and mine.exists() and other.exists()
    assert clean_stale_tmp(tmp_path) == 1 and not other.exists()


# -- the command line -------------------------------------------------------------------------
@pytest.mark.parametrize("args", [
    ["advise", "--roll", "1,5,³"], ["advise", "--me", "٣٠٠٠"], ["advise", "--me", "9" * 5000],
    ["simulate", "--players", "optimal,optimal", "--seed", "-1"], ["play", "--seed", "-1"],
    ["compare", "--seed", "-1"], ["simulate", "--players", "cautious,cautious", "--games", "1000000000000"],
    ["compare", "--thresholds", "", "--json"], ["solve", "--rules", ""], ["solve", "--rules", "/dev/zero"],
    ["advise", "--bogus"], ["nonsense"],
])
def test_bad_command_lines_end_in_one_line(args: list[str], cache_dir: Path) -> None:
    """Each bad command line exits with status 2 and one `Error:` line, no traceback."""
    result = CliRunner().invoke(main, args, input="")
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
