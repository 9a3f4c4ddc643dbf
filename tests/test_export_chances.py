"""`cinqmille export --roll-chances`: each roll's chance beside the keep the solve takes (issue 33).

The chances are checked against an independent count: every ordered roll of n dice (6 ** n of them) enumerated,
its faces sorted, counted; the rolls not listed are the ones that score nothing (`is_bust`), the bust row.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.app import export as ex
from cinqmille.app.advice import advise
from cinqmille.cli import main
from cinqmille.dice import counts_of, is_bust
from cinqmille.table.position import Position
from cinqmille.rules import load_rules, rules_from_dict
from cinqmille.solver import solve

pytestmark = pytest.mark.usefixtures("session_cache")


def _ordered(n: int) -> Counter[int]:
    """How many of the 6 ** n ordered rolls of n dice give each sorted roll (as digits: 12335)."""
    return Counter(int("".join(map(str, sorted(roll)))) for roll in itertools.product(range(1, 7), repeat=n))


def _states(keeps: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The state (me, opp, seat, turn, dice) of each keep row, as an index, and the number of states."""
    key = np.stack([keeps[c].astype(np.int64) for c in ("me", "opp", "seat", "turn", "dice")], axis=1)
    _, index = np.unique(key, axis=0, return_inverse=True)
    return index.ravel(), int(index.max()) + 1


@pytest.mark.parametrize("name", ["reach", "exact"])
def test_each_state_lists_every_roll_with_its_counted_chance(name: str) -> None:
    """Per state, the chances sum to 1; each listed roll's chance is its ordered rolls' count over 6 ** n; the
    bust row (rolled 0, no keep, then bust) is every other roll, each of which scores nothing; the other rows
    are the keep table's without chances, row for row."""
    rules = rules_from_dict({"name": f"chances-{name}", "goal": 600, "opening": 150, "end": name})
    result = solve(rules)
    cols = ex.policy_rows(result, [0, 200, 450], [150, 450])
    plain, keeps = ex.keep_rows(result, cols), ex.keep_rows(result, cols, chances=True)
    state, count = _states(keeps)
    assert np.allclose(np.bincount(state, weights=keeps["chance"]), 1.0, rtol=0, atol=1e-12)
    bust = keeps["rolled"] == ex.BUST_ROLL
    assert np.bincount(state[bust], minlength=count).max() == 1  # at most one bust row per state
    for c in ex.KEEP_COLUMNS:
        assert np.array_equal(keeps[c][~bust], plain[c]), c
    assert (keeps["keep"][bust] == 0).all() and (np.array(ex.THEN)[keeps["then"][bust]] == "bust").all()
    for n in range(1, rules.dice + 1):
        counted = _ordered(n)
        rows = np.flatnonzero(keeps["dice"] == n)
        assert len(rows)
        for i in rows[:400]:
            rolled = int(keeps["rolled"][i])
            if rolled == ex.BUST_ROLL:
                others = sum(k for roll, k in counted.items() if roll not in set(keeps["rolled"][state == state[i]]))
                assert keeps["chance"][i] == pytest.approx(others / 6 ** n, abs=1e-15)
            else:
                assert keeps["chance"][i] == pytest.approx(counted[rolled] / 6 ** n, abs=1e-15)
        listed = set(keeps["rolled"][rows].tolist()) - {ex.BUST_ROLL}
        for roll in set(counted) - listed:  # the rolls of the bust row score nothing
            assert is_bust(rules, counts_of(int(d) for d in str(roll))), roll


def test_with_all_keeps_the_best_rows_sum_to_one_and_the_bust_row_is_advises() -> None:
    """`--all-keeps --roll-chances`: every keep of a roll carries the roll's chance; the rows of rank 0 sum to 1
    per state; the bust row's chance to win is `advise` of a roll that scores nothing."""
    rules = rules_from_dict({"name": "chances-every", "goal": 500, "opening": 150})
    result = solve(rules)
    cols = ex.policy_rows(result, [0, 300], [150, 300])
    keeps = ex.keep_rows(result, cols, every=True, chances=True)
    every = ex.keep_rows(result, cols, every=True)
    bust = keeps["rolled"] == ex.BUST_ROLL
    for c in ex.KEEP_COLUMNS + ex.EVERY:
        assert np.array_equal(keeps[c][~bust], every[c]), c
    state, _ = _states(keeps)
    top = keeps["rank"] == 0
    assert np.allclose(np.bincount(state[top], weights=keeps["chance"][top]), 1.0, rtol=0, atol=1e-12)
    same_roll = (np.diff(keeps["rolled"]) == 0) & (np.diff(state) == 0)
    assert np.array_equal(keeps["chance"][1:][same_roll], keeps["chance"][:-1][same_roll])
    for i in np.flatnonzero(bust)[:20]:
        me, opp, turn, dice = (int(keeps[c][i]) for c in ("me", "opp", "turn", "dice"))
        answer = advise(result, Position(me, opp, turn), roll=(2, 3, 4, 6, 6)[:dice] if dice < 5 else (2, 2, 3, 4, 6))
        assert answer.bust and keeps["win"][i] == pytest.approx(answer.win, abs=1e-15)
        assert keeps["expected"][i] == 0.0 and keeps["rank"][i] == 0


@pytest.mark.parametrize("fmt", ex.FORMATS)
def test_roll_chances_round_trip_and_documentation(fmt: str, tiny_rules_file: Path, tmp_path: Path) -> None:
    """The command writes the column `chance` in every format, documented, and reads it back (CSV: to 12
    digits); the metadata records `roll_chances`; three players too; --no-keeps with it is one line."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    target = tmp_path / f"policy.{fmt}"
    done = CliRunner().invoke(main, ["export", "--rules", str(tiny_rules_file), "-o", str(target), "--me", "200",
                                     "--opp", "150:300", "--roll-chances"])
    assert done.exit_code == 0, done.output
    back, meta = ex.read_policy(target), ex.read_meta(target)
    assert meta["roll_chances"] is True
    if fmt == "npz":
        docs = {k[len("keeps/"):]: v for k, v in meta["columns"].items() if k.startswith("keeps/")}
    elif fmt == "csv":
        docs = json.loads(ex.sidecar_path(ex.keeps_path(target)).read_text())["columns"]
    else:
        docs = json.loads(__import__("pyarrow.parquet").parquet.read_schema(ex.keeps_path(target))
                          .metadata[b"cinqmille"])["columns"]
    assert list(docs) == list(ex.columns_of(2, chances=True)[1]) and docs["chance"] == ex.CHANCE_DOCS["chance"]
    result = solve(load_rules(str(tiny_rules_file)), "win")
    want = ex.keep_rows(result, ex.policy_rows(result, [200], [150, 200, 250, 300]), chances=True)
    assert list(ex.columns_of(2, chances=True)[1]) == [c[len("keeps/"):] for c in back if c.startswith("keeps/")]
    assert np.allclose(back["keeps/chance"], want["chance"], rtol=1e-11, atol=0)
    for c in ex.KEEP_COLUMNS:
        assert np.array_equal(back[f"keeps/{c}"], want[c]), c
    three = CliRunner().invoke(main, ["export", "--rules", str(tiny_rules_file), "-o", str(tmp_path / f"p3.{fmt}"),
                                      "--players", "3", "--me", "200", "--opp", "150", "--opp2", "0",
                                      "--roll-chances"])
    assert three.exit_code == 0, three.output
    kept = {c[len("keeps/"):]: v for c, v in ex.read_policy(tmp_path / f"p3.{fmt}").items() if c.startswith("keeps/")}
    key = np.stack([kept[c].astype(np.int64) for c in ("me", "opp", "opp2", "turn", "dice")], axis=1)
    _, index = np.unique(key, axis=0, return_inverse=True)
    assert np.allclose(np.bincount(index.ravel(), weights=kept["chance"]), 1.0, rtol=0, atol=1e-10)
    refused = CliRunner().invoke(main, ["export", "--rules", str(tiny_rules_file), "-o", str(tmp_path / "x.csv"),
                                        "--roll-chances", "--no-keeps"])
    assert refused.exit_code == 2 and "--no-keeps" in refused.stderr
