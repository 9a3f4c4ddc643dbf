"""`cinqmille ablate`: one rule changed at a time, each ruleset's exact figures."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.fair import fair_start
from cinqmille.research.ablate import KEYS, ablate, changes, quantile
from cinqmille.research.distribution import game_length
from cinqmille.rules import rules_from_dict, to_dict
from cinqmille.simulation.runner import SimConfig, simulate
from cinqmille.solver import solve

pytestmark = pytest.mark.usefixtures("session_cache")

BASE = {"goal": 500, "opening": 150}


def test_each_change_is_one_key() -> None:
    """Each changed ruleset differs from the base in its key alone (and its name; `multiples` drops fixed
    kinds), and every key of `KEYS` is changed."""
    base = rules_from_dict(BASE, "tiny")
    found, skipped = changes(base)
    assert found[0].rules == base and not skipped
    assert [c.key for c in found[1:]] == list(KEYS)
    data = to_dict(base)
    for change in found[1:]:
        new = to_dict(change.rules)
        differ = {k for k in data if data[k] != new[k]} - {"name"}
        assert differ == {change.key}, (change.label, differ)


def test_rows_are_the_exact_figures() -> None:
    """A row's figures are the solve's, the race's, the expected turn's, the game chain's (median and quantiles
    read from its chances) and the fair start's; a last round leaves the length out, with a note."""
    abl = ablate(rules_from_dict(BASE, "tiny"), ("end", "last_round"))
    assert [r.label for r in abl.rows] == ["base", 'end = "exact"', "last_round = true"]
    for row, change in zip(abl.rows, changes(rules_from_dict(BASE, "tiny"), ("end", "last_round"))[0]):
        rules = change.rules
        result = solve(rules, "win")
        assert row.first == result.first_player_win
        assert row.expected == solve(rules, "expected").expected_turn()
        assert row.race == solve(rules, "race").race_turns()
        fair = fair_start(rules)
        assert (row.fair_start, row.fair_first) == (fair.start[1], fair.win_after[0])
        if rules.last_round:
            assert row.length is None and "last round" in row.note
            continue
        assert row.length is not None and row.length.mean == game_length(result).mean
        cum = np.cumsum(row.length.chances)
        for q in (0.1, 0.5, 0.9):
            n = quantile(row.length, q)
            assert cum[n - 1] >= q and (n == 1 or cum[n - 2] < q)
        assert quantile(row.length, 0.5) == row.length.median


def test_game_length_agrees_with_simulation() -> None:
    """The exact mean game length of the base lies within 4 standard errors of 40,000 simulated games."""
    rules = rules_from_dict(BASE, "tiny")
    row = ablate(rules, ()).rows[0]
    sim = simulate(SimConfig(rules, ("optimal", "optimal"), 40_000, seed=2))
    assert row.length is not None
    chances = np.array(row.length.chances)
    n = np.arange(1, len(chances) + 1)
    se = float(np.sqrt(chances @ (n - row.length.mean) ** 2 / 40_000))
    assert abs(sim.mean_turns - row.length.mean) < 4 * se


def test_ablate_command(tiny_rules_file, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`ablate --json` has a row per change with the length's quantiles; the text is a table; an unknown key
    is one line with exit status 2, before any solve; `--plot` writes the figure."""
    runner = CliRunner()
    res = runner.invoke(main, ["ablate", "--rules", str(tiny_rules_file), "--keys", "opening,end", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert [r["change"] for r in data["rows"]] == ["base", "opening = 0", 'end = "exact"']
    assert set(data["rows"][0]["game_length"]["quantiles"]) == {"0.1", "0.25", "0.75", "0.9"}
    res = runner.invoke(main, ["ablate", "--rules", str(tiny_rules_file), "--keys", "opening"])
    assert res.exit_code == 0 and "opening = 0" in res.output and "fair start" in res.output
    res = runner.invoke(main, ["ablate", "--rules", str(tiny_rules_file), "--keys", "goalz"])
    assert res.exit_code == 2 and res.output.strip().splitlines() == [
        "Error: ablate: unknown key 'goalz'; known: " + ", ".join(KEYS)]
    pytest.importorskip("matplotlib")
    target = tmp_path / "ablate.png"
    res = runner.invoke(main, ["ablate", "--rules", str(tiny_rules_file), "--keys", "end", "--plot", str(target)])
    assert res.exit_code == 0 and target.stat().st_size > 1000
