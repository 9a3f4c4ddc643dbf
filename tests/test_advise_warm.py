"""The warm `advise` command: the policy and the dice tables read from the cached groups file, without Numba,
SciPy or anything else a question does not need (issue 33: within 0.3 s; the time is benchmarks/bench_advise.py's,
these tests check what the command does and imports)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from cinqmille.app.advice import advise
from cinqmille.dice import dice_tables, scoring, tables
from cinqmille.table import groups
from cinqmille.table.policy import policy_of
from cinqmille.table.position import Position
from cinqmille.rules import rules_from_dict
from cinqmille.solver import solve

ROOT = Path(__file__).resolve().parent.parent
#: Modules a warm advice does without: the kernel's compiler and its users, the engine, NumPy's masked arrays
#: (`np.unique` imports them), the kernel's thread pool, `importlib.resources` (a preset is read by its path).
HEAVY = ("numba", "scipy", "cinqmille.engine", "cinqmille.solver.compiled", "numpy.ma", "concurrent.futures",
         "importlib.resources")
#: Runs the command line in this process, then says which of `HEAVY` it imported, and how many readings of dice
#: the scoring computed (0: the dice tables were read, not built).
PROBE = ("import sys, runpy\n"
         "sys.argv = ['cinqmille'] + sys.argv[1:]\n"
         "from cinqmille.dice import scoring\n"
         "try:\n"
         "    runpy.run_module('cinqmille', run_name='__main__')\n"
         "except SystemExit as exc:\n"
         "    assert not exc.code, exc.code\n"
         f"print('MODULES', ' '.join(m for m in {HEAVY!r} if m in sys.modules))\n"
         "print('READINGS', scoring._readings.cache_info().currsize)\n")


def _run(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CINQMILLE_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env,
                          check=True, timeout=300)


def _modules(out: str) -> set[str]:
    line = next(x for x in out.splitlines() if x.startswith("MODULES"))
    return set(line.split()[1:])


def _readings(out: str) -> int:
    return int(next(x for x in out.splitlines() if x.startswith("READINGS")).split()[1])


def test_a_warm_advise_imports_no_numba(tiny_rules_file: Path, tmp_path: Path) -> None:
    """The second advise of a ruleset reads its groups file: neither Numba nor SciPy is imported, same answer."""
    args = ("advise", "--rules", str(tiny_rules_file), "--me", "150", "--opp", "300", "--turn", "200",
            "--dice", "2", "--json")
    first = _run(tmp_path, *args)
    assert "numba" in _modules(first.stdout)  # the first one solves, and writes the groups file
    assert list(tmp_path.glob("tiny-groups-*.npz"))
    assert _readings(first.stdout) > 0  # the first one builds the dice tables
    warm = _run(tmp_path, *args)
    assert not _modules(warm.stdout), _modules(warm.stdout)
    assert _readings(warm.stdout) == 0  # read from the groups file
    answer = lambda out: json.loads(out[:out.index("MODULES")])  # noqa: E731
    assert answer(warm.stdout) == answer(first.stdout)
    keep = _run(tmp_path, "advise", "--rules", str(tiny_rules_file), "--me", "150", "--opp", "300", "--roll", "15332")
    assert not _modules(keep.stdout) and _readings(keep.stdout) == 0 and "Keep" in keep.stdout
    bad = subprocess.run([sys.executable, "-m", "cinqmille", "advise", "--rules", str(tiny_rules_file), "--me", "150",
                          "--turn", "0", "--dice", "2"], capture_output=True, text=True, cwd=tmp_path, timeout=300,
                         env={**os.environ, "CINQMILLE_CACHE": str(tmp_path), "PYTHONPATH": str(ROOT)})
    assert bad.returncode == 2 and "nothing set aside with 2 dice in hand cannot occur" in bad.stderr  # still refused


def test_dice_tables_are_read_from_the_groups_file(session_cache: Path) -> None:
    """A vouched groups file gives the ruleset's dice tables (equal to the built ones, array by array); a dice
    table that does not match its checksum is one warning, the file deleted, the tables built."""
    rules = rules_from_dict({"name": "dicey", "goal": 500, "opening": 100, "full_house": 400})
    result = solve(rules, "win")
    path = groups.write_groups(result)
    built = dice_tables(rules)
    tables._TABLES.pop(rules)  # as in a fresh process: no tables, no scoring remembered
    for memo in (scoring.legal_keeps, scoring._value, scoring._readings):
        memo.cache_clear()
    assert groups.grouped(solve(rules, "win"))
    taken = dice_tables(rules)
    assert scoring._readings.cache_info().currsize == 0  # not built: read
    assert taken is not built and sorted(taken) == sorted(built)
    for n, table in built.items():
        for name in tables.TABLE_ARRAYS:
            mine, theirs = getattr(taken[n], name), getattr(table, name)
            assert mine.dtype == theirs.dtype and np.array_equal(mine, theirs), (n, name)
    arrays = dict(np.load(path, allow_pickle=False))
    layout = json.loads(str(arrays["meta"]))["dice_layout"]
    at = sum(int(np.prod(shape)) * np.dtype(kind).itemsize for _, kind, shape in
             layout[:[name for name, _, _ in layout].index("dice3-keep_points")])
    arrays["dice"] = arrays["dice"].copy()
    arrays["dice"][at] += 1  # the first keep of 3 dice worth one point more
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)
    assert groups.grouped(solve(rules, "win"))  # rewritten, so sampled (groups only) and vouched again
    tables._TABLES.pop(rules)
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        assert not groups.grouped(solve(rules, "win"))
    assert [w for w in said if "dice tables do not match their checksum" in str(w.message)]
    assert not path.exists()
    assert np.array_equal(dice_tables(rules)[3].keep_points, built[3].keep_points)  # built again


def test_groups_are_the_kernels_numbers(session_cache: Path) -> None:
    """Every state read from the groups file equals the kernel's pass, to the last bit."""
    rules = rules_from_dict({"name": "grouped", "goal": 600, "opening": 150, "prediction": True})
    result = solve(rules, "win")
    groups.write_groups(result)
    read = solve(rules, "win")
    assert groups.grouped(read)
    table, fresh = policy_of(read), policy_of(result).complete()
    assert isinstance(table, groups.GroupTable)
    table.complete()
    for name in ("bank_v", "roll_v", "move_v", "plain_v", "predict_v", "value_v"):
        assert np.array_equal(getattr(table, name), getattr(fresh, name)), name
    pos = Position(300, 450, 100, 3)
    assert advise(read, pos) == advise(result, pos)


def test_a_damaged_group_is_refused_and_computed(session_cache: Path) -> None:
    """A groups file whose group does not match its checksum: one warning, the file deleted, the kernel's answer."""
    rules = rules_from_dict({"name": "damaged", "goal": 500, "opening": 100})
    result = solve(rules, "win")
    path = groups.write_groups(result)
    arrays = dict(np.load(path, allow_pickle=False))
    arrays["g0"] = arrays["g0"].copy()
    arrays["g0"][3] ^= 1  # one bit of the group's first value of banking
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays)
    read = solve(rules, "win")
    pos = Position(0, 0, 0)  # group 0: the mover at 0 against the lowest scores
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        groups.grouped(read)  # the file is read when its groups are (sampled first: it was rewritten)
        answer = advise(read, pos, "15332")
    assert [w for w in said if "group 0 does not match its checksum" in str(w.message)]
    assert not path.exists()
    assert answer == advise(result, pos, "15332")


def test_a_forged_identity_is_refused(session_cache: Path) -> None:
    """A groups file of another ruleset under this one's name is not read."""
    one = solve(rules_from_dict({"name": "forged", "goal": 500, "opening": 150}), "win")
    other = solve(rules_from_dict({"name": "forged", "goal": 500, "opening": 100}), "win")
    written = groups.write_groups(other)
    written.rename(groups.groups_path(one.rules))
    with pytest.warns(UserWarning, match="another table"):
        assert not groups.grouped(one)
