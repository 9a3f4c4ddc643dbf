"""The warm `advise` command: the policy read from the cached groups file, without Numba (issue 33)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from cinqmille.advice import advise
from cinqmille.policies import groups
from cinqmille.position import Position
from cinqmille.rules import rules_from_dict
from cinqmille.solver import solve

ROOT = Path(__file__).resolve().parent.parent
#: Runs the command line in this process, then says which heavy modules it imported.
PROBE = ("import sys, runpy\n"
         "sys.argv = ['cinqmille'] + sys.argv[1:]\n"
         "try:\n"
         "    runpy.run_module('cinqmille', run_name='__main__')\n"
         "except SystemExit as exc:\n"
         "    assert not exc.code, exc.code\n"
         "print('MODULES', ' '.join(m for m in ('numba', 'scipy', 'cinqmille.engine', 'cinqmille.solver.compiled')"
         " if m in sys.modules))\n")


def _run(cache: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CINQMILLE_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env,
                          check=True, timeout=300)


def _modules(out: str) -> set[str]:
    line = next(x for x in out.splitlines() if x.startswith("MODULES"))
    return set(line.split()[1:])


def test_a_warm_advise_imports_no_numba(tiny_rules_file: Path, tmp_path: Path) -> None:
    """The second advise of a ruleset reads its groups file: neither Numba nor SciPy is imported, same answer."""
    args = ("advise", "--rules", str(tiny_rules_file), "--me", "150", "--opp", "300", "--turn", "200",
            "--dice", "2", "--json")
    first = _run(tmp_path, *args)
    assert "numba" in _modules(first.stdout)  # the first one solves, and writes the groups file
    assert list(tmp_path.glob("tiny-groups-*.npz"))
    warm = _run(tmp_path, *args)
    assert not _modules(warm.stdout) & {"numba", "scipy", "cinqmille.solver.compiled"}
    answer = lambda out: json.loads(out[:out.index("MODULES")])  # noqa: E731
    assert answer(warm.stdout) == answer(first.stdout)
    keep = _run(tmp_path, "advise", "--rules", str(tiny_rules_file), "--me", "150", "--opp", "300", "--roll", "15332")
    assert "numba" not in _modules(keep.stdout) and "Keep" in keep.stdout


def test_groups_are_the_kernels_numbers(session_cache: Path) -> None:
    """Every state read from the groups file equals the kernel's pass, to the last bit."""
    rules = rules_from_dict({"name": "grouped", "goal": 600, "opening": 150, "prediction": True})
    result = solve(rules, "win")
    groups.write_groups(result)
    read = solve(rules, "win")
    assert groups.grouped(read)
    table, fresh = read.policy, result.policy.complete()
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
