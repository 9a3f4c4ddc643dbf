"""The command line as people type it: a roll as arguments, sensible defaults."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from cinqmille.cli import main


def _json(args: list[str]) -> dict:
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_roll_as_arguments_is_the_same_as_roll(tiny_rules_file: Path, session_cache: Path) -> None:
    """`advise 1 1 5 2 3` answers exactly as `advise --roll 11523`."""
    rules = ["--rules", str(tiny_rules_file), "--me", "150"]
    assert _json(["advise", "1", "1", "5", "2", "3", *rules]) == _json(["advise", *rules, "--roll", "11523"])
    assert _json(["advise", "1,1", "5", *rules, "--turn", "100"])["position"]["roll"] == [1, 1, 5]


def test_a_roll_given_twice_or_badly_is_refused(tiny_rules_file: Path, session_cache: Path) -> None:
    """A roll both as arguments and with --roll, or with a face outside 1..6, is one line and exit 2."""
    for args in (["1", "5", "--roll", "15"], ["1", "9"], ["1", "³"]):
        result = CliRunner().invoke(main, ["advise", "--rules", str(tiny_rules_file), *args])
        assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output


def test_simulate_defaults_to_best_play_on_both_seats(tiny_rules_file: Path, session_cache: Path) -> None:
    """Without --players, simulate plays the optimal policy on both seats."""
    data = _json(["simulate", "--rules", str(tiny_rules_file), "--games", "200"])
    assert data["players"] == ["optimal", "optimal"] and sum(data["wins"]) == 200
