"""Long work says what it is doing: a bar on a terminal, one line otherwise; nested work shows one report."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from cinqmille import work
from cinqmille.cli import main
from cinqmille.cli import progress as cli_progress


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A reporter that records the labels it is given."""
    labels: list[str] = []

    @contextmanager
    def record(label: str, size: int) -> Iterator[work.Progress]:
        labels.append(label)
        yield lambda fraction: None

    work.set_reporter(record)
    yield labels
    work.set_reporter(None)


def test_nested_work_is_reported_once(said: list[str]) -> None:
    """Work inside reported work is silent, and work with its own callback reports through that callback."""
    seen: list[float] = []
    with work.working("outer") as update:
        update(0.5)
        with work.working("inner"):
            pass
    with work.working("watched", seen.append) as update:
        update(1.0)
    assert said == ["outer"] and seen == [1.0]


def test_a_first_solve_reports_itself(said: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A solve that is not in the cache says which ruleset and table size it solves."""
    from cinqmille.rules import rules_from_dict
    from cinqmille.solver import solve

    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path))
    rules = rules_from_dict({"name": "tiny3", "goal": 300, "opening": 100, "end": "exact"})
    solve(rules, "win", players=3)
    solve(rules, "win", players=3)  # from the cache: nothing to say
    assert said == ["Solving 'tiny3' for 3 players (first use, cached afterwards)"]


def test_four_optimal_players_say_what_they_wait_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`simulate` of four optimal players on a cold cache writes a line for the four-player solve (the table the
    bots read where it fits) and for the policy table (off a terminal, for work of `QUIET_STATES` turn states or
    more: here every piece of work)."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path))
    monkeypatch.setattr(cli_progress, "QUIET_STATES", 0)
    rules = tmp_path / "small.toml"
    rules.write_text('name = "small"\ngoal = 600\nopening = 150\n')
    out = CliRunner().invoke(main, ["simulate", "--rules", str(rules), "--players", "optimal,optimal,optimal,optimal",
                                    "--games", "200"])
    assert out.exit_code == 0, out.output
    lines = out.stderr.splitlines()
    assert f"{cli_progress.LINE_PREFIX}Solving 'small' for 4 players (first use, cached afterwards)" in lines
    assert any(line.startswith(f"{cli_progress.LINE_PREFIX}Building the policy table of 'small'") for line in lines)
    assert work._REPORTER == []  # the command line's reporter does not outlive the command
