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
    """A ruleset with history rules solved with `--relaxed` is a stated relaxation, marked not exact."""
    rules_file = tmp_path / "crosses.toml"
    rules_file.write_text('goal = 500\nopening = 150\ncrosses = true\n')
    out = CliRunner().invoke(main, ["solve", "--rules", str(rules_file), "--json", "--relaxed"])
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


# -- forged tables: a valid checksum, plausible values, the wrong table -----------------------------
THREE = {"goal": 300, "opening": 100}
ZERO3 = {"goal": 350, "opening": 150, "zero_turns": {"count": 3, "to": "zero"}}


def _reforge(path: Path, spec: cache.TableSpec, arrays: dict | None = None, meta: dict | None = None) -> None:
    """Rewrite a cache file with other arrays or metadata, its identity kept and its checksum made valid."""
    with np.load(path, allow_pickle=False) as npz:
        found = {k: npz[k] for k in npz.files if k != "meta"}
        base = json.loads(str(npz["meta"]))
    base = {k: v for k, v in base.items() if k not in ("checksum", "arrays", "table")}
    cache.save_npz(path, {**found, **(arrays or {})}, {**base, **(meta or {})}, spec)


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files if k != "meta"}


def _swap(a: np.ndarray) -> np.ndarray:
    return np.where(a == 0, 1, np.where(a == 1, 0, a)).astype(a.dtype)


SOLVE_FORGERIES = {
    "chances reversed (1 - W)": lambda a: {"values": np.where(np.isfinite(a["values"]), 1 - a["values"], a["values"])},
    "chances transposed": lambda a: {"values": np.swapaxes(a["values"], -1, -2).copy()},
    "one mover's row halved": lambda a: {"values": _halve_first_row(a["values"])},
}


def _halve_first_row(w: np.ndarray) -> np.ndarray:
    out = w.copy()
    out[..., 0, :] = np.where(np.isfinite(out[..., 0, :]), out[..., 0, :] / 2, out[..., 0, :])
    return out


@pytest.mark.parametrize("what", sorted(SOLVE_FORGERIES))
@pytest.mark.parametrize("players", [2, 3])
def test_forged_solve_with_a_valid_checksum_is_recomputed(what: str, players: int, cache_dir: Path) -> None:
    """A cached solve whose chances are plausible but not the game's solution is reported and recomputed."""
    rules = rules_from_dict(THREE if players == 3 else TINY, "forge")
    good = solve(rules, players=players)
    path = cache.cache_path(rules, "win", players)
    forged = SOLVE_FORGERIES[what](_arrays(path))
    if players == 3 and what == "chances transposed":
        forged = {"values": np.swapaxes(good.values, 0, 1).copy()}
    _reforge(path, api.result_spec(rules, "win", players), forged)
    with pytest.warns(UserWarning, match="recomputing"):
        again = solve(rules, players=players)
    assert np.allclose(again.values, good.values, rtol=1e-12, atol=1e-12, equal_nan=True)


def _policy_forgeries(rules_spec: dict) -> dict:
    return {
        "scores reversed": lambda a: {"scores": a["scores"][::-1].copy()},
        "caps shifted": lambda a: {"caps": a["caps"] + 1},
        "bank and roll swapped": lambda a: {"bank": np.where(np.isfinite(a["bank"]), a["roll"], a["bank"]),
                                            "roll": np.where(np.isfinite(a["bank"]), a["bank"], a["roll"])},
        "roll values of a late row nudged": lambda a: {"roll": _nudge_last(a["roll"])},
        "bust values reversed": lambda a: {"bust": a["bust"][::-1].copy()},
        "a move of 7": lambda a: {"move": np.full_like(a["move"], 7)},
        "moves flipped": lambda a: {"move": np.where(a["move"] == 0, 1, np.where(a["move"] == 1, 0, a["move"])
                                                     ).astype(np.int8)},
    }


def _nudge_last(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[-5:] = np.clip(out[-5:] * 0.9, 0, 1)
    return out


META_FORGERIES = {"period 'x'": {"period": "x"}, "period 7": {"period": 7}, "period true": {"period": True},
                  "exact 'yes'": {"exact": "yes"}, "assumptions 3": {"assumptions": 3}, "no format": {"format": None}}


@pytest.mark.parametrize("ruleset", ["tiny", "zero_turns"])
@pytest.mark.parametrize("what", sorted(_policy_forgeries({})) + sorted(META_FORGERIES))
def test_forged_policy_table_is_recomputed(what: str, ruleset: str, cache_dir: Path) -> None:
    """A cached two-player policy table (counter tables too) with forged arrays or metadata and a valid
    checksum gives one warning, is rebuilt equal to a fresh table, and the next run reads it silently."""
    import warnings

    from cinqmille.policies import optimal
    from cinqmille.table import load as tables

    rules = rules_from_dict(TINY if ruleset == "tiny" else ZERO3, "forge")
    tables.forget()
    good = tables.policy_table(rules, 2).arrays()
    path = tables.table_path(rules, 2)
    if what in META_FORGERIES:
        _reforge(path, tables.table_spec(rules, 2), meta=META_FORGERIES[what])
    else:
        _reforge(path, tables.table_spec(rules, 2), _policy_forgeries({})[what](_arrays(path)))
    tables.forget()
    with pytest.warns(UserWarning, match="recomputing"):
        table = tables.policy_table(rules, 2)
    for name, array in good.items():
        assert np.allclose(table.arrays()[name], array, rtol=0, atol=1e-12, equal_nan=True), name
    tables.forget()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tables.policy_table(rules, 2)


SEATS_FORGERIES = {
    "a move of 7": lambda a: {"move": np.where(np.arange(a["move"].size).reshape(a["move"].shape) == 11, 7,
                                               a["move"]).astype(np.int8)},
    "moves flipped": lambda a: {"move": _swap(a["move"])},
    "a negative move": lambda a: {"move": np.minimum(a["move"], 0) - 1},
    "scores reversed": lambda a: {"scores": a["scores"][::-1].copy()},
    "values reversed": lambda a: {"value": 1 - a["value"]},
    "values of the last rows nudged": lambda a: {"value": _nudge_last(a["value"])},
}


@pytest.mark.parametrize("what", sorted(SEATS_FORGERIES) + sorted(META_FORGERIES))
def test_forged_three_player_table_is_recomputed(what: str, cache_dir: Path) -> None:
    """A cached three-player policy table with a move of 7, flipped moves, reversed scores or values, or bad
    metadata, and a valid checksum, gives one warning and is rebuilt equal to a fresh table."""
    from cinqmille.table import load as tables

    rules = rules_from_dict(THREE, "forge3")
    tables.forget()
    good = tables.policy_table(rules, 3, complete=True).arrays()
    path = tables.table_path(rules, 3)
    if what in META_FORGERIES:
        _reforge(path, tables.table_spec(rules, 3), meta=META_FORGERIES[what])
    else:
        _reforge(path, tables.table_spec(rules, 3), SEATS_FORGERIES[what](_arrays(path)))
    tables.forget()
    with pytest.warns(UserWarning, match="recomputing"):
        table = tables.policy_table(rules, 3, complete=True)
    again = table.arrays()
    for name, array in good.items():
        assert again[name].shape == array.shape and np.allclose(again[name], array, rtol=0, atol=1e-12), name


def test_a_fifo_in_the_cache_is_not_opened(cache_dir: Path) -> None:
    """A FIFO where a cached table should be is reported and solved around, never opened (it would block)."""
    import os

    rules = rules_from_dict(TINY, "fifo")
    path = cache.cache_path(rules, "win")
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    with pytest.warns(UserWarning, match="not a regular file"):
        result = solve(rules)
    assert 0.5 < result.first_player_win < 1
    assert path.is_fifo()


def _count_samples(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the calls of the cached table's sample check (kernel passes) from now on."""
    from cinqmille.solver import api

    calls: list[int] = []
    original = api.sample_problem

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(api, "sample_problem", counted)
    return calls


def test_a_table_this_solver_wrote_is_not_sampled_again(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table solved and written here is vouched for: reading it back skips the kernel's sample of rows."""
    rules = rules_from_dict(TINY, "tiny")
    solve(rules)
    calls = _count_samples(monkeypatch)
    solve(rules)
    solve(rules)
    assert calls == []
    assert cache.vouched(cache.cache_path(rules, "win"), cache.load_npz(cache.cache_path(rules, "win"))[1])


def test_a_copied_or_rewritten_table_is_sampled_once(cache_dir: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A table file put in place by someone else (here: the same bytes copied over it) is sampled on its first
    load, vouched for if it passes, and not sampled again until it changes."""
    rules = rules_from_dict(TINY, "tiny")
    solve(rules)
    path = cache.cache_path(rules, "win")
    copy = tmp_path / "elsewhere.npz"
    copy.write_bytes(path.read_bytes())
    copy.replace(path)
    calls = _count_samples(monkeypatch)
    solve(rules)
    assert calls == [1]
    solve(rules)
    assert calls == [1]
    before = path.stat().st_ctime_ns
    path.write_bytes(path.read_bytes())  # rewritten in place: the same inode, a new change time
    if path.stat().st_ctime_ns == before:
        pytest.skip("this file system's change times are too coarse to tell the rewrite")
    solve(rules)
    assert calls == [1, 1]


def test_a_forged_table_with_a_stale_vouch_is_refused(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vouch names one file as it was: a forgery written over a vouched table (valid checksum, plausible
    values) is sampled, refused with one warning and solved again."""
    rules = rules_from_dict(TINY, "tiny")
    good = solve(rules)
    path = cache.cache_path(rules, "win")
    _reforge(path, api.result_spec(rules, "win", 2), {"values": np.swapaxes(good.values, 0, 1).copy()})
    with pytest.warns(UserWarning, match="not the game's solution"):
        again = solve(rules)
    assert again.first_player_win == pytest.approx(good.first_player_win, abs=1e-12)


def test_a_vouch_that_is_not_a_regular_file_is_ignored(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A FIFO (or a directory) where a table's vouch should be is no vouch: the table is sampled, nothing blocks."""
    import os

    rules = rules_from_dict(TINY, "tiny")
    solve(rules)
    path = cache.cache_path(rules, "win")
    record = cache._vouch_path(path)
    record.unlink()
    os.mkfifo(record)
    calls = _count_samples(monkeypatch)
    solve(rules)
    assert calls == [1]


def test_a_forged_move_that_is_not_the_best_is_refused(cache_dir: Path) -> None:
    """One move of a cached two-player table changed to another legal move that is worse for the table's own
    values (outside the sampled rows) is refused: every move must be a best option of its state."""
    from cinqmille.table import load as tables

    rules = rules_from_dict({"goal": 1000, "opening": 150}, "forge-move")
    tables.forget()
    good = tables.policy_table(rules, 2)
    path = tables.table_path(rules, 2)
    arrays = _arrays(path)
    move, bank, roll = arrays["move"], arrays["bank"], arrays["roll"]
    clear = np.flatnonzero(((move == 0) & (bank > roll + 1e-6)).reshape(-1))
    cell = clear[len(clear) // 2]  # a bank clearly better than rolling, turned into a roll
    forged = move.copy()
    forged.reshape(-1)[cell] = 1
    _reforge(path, tables.table_spec(rules, 2), {"move": forged})
    tables.forget()
    with pytest.warns(UserWarning, match="not the best for the table's values"):
        again = tables.policy_table(rules, 2)
    assert np.array_equal(again.move_v, good.move_v)
