"""Solves on a Dask cluster (`solve --scheduler`): the same bits as in this process, for two to four players."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.rules import rules_from_dict
from cinqmille.solver import compute
from cinqmille.solver import distributed

pytest.importorskip("distributed")

SMALL = {"goal": 600, "opening": 150}


@pytest.fixture(scope="module")
def cluster() -> Iterator[object]:
    """A local cluster of two worker processes on the loopback address (stopped after the module)."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=":0") as local, Client(local) as client:
        yield client


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_solve_on_the_cluster_equals_the_solve_here(players: int, cluster: object,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """With every pass sent to two workers the tables are bit for bit those of a solve in this process."""
    rules = rules_from_dict({**SMALL, "goal": 600 if players < 4 else 400}, f"small{players}")
    here = compute(rules, players=players)
    sent: list[int] = []
    real = distributed.run_on_cluster

    def counting(*args: object) -> object:
        done = real(*args)  # type: ignore[arg-type]
        sent.append(done is not None)
        return done

    monkeypatch.setattr(distributed, "MIN_ROWS", 1)
    monkeypatch.setattr(distributed, "run_on_cluster", counting)
    with distributed.use_cluster(cluster):
        there = compute(rules, players=players)
    assert any(sent)  # the passes went to the workers
    assert np.array_equal(here.values, there.values, equal_nan=True)
    assert here.win == there.win


def test_an_unreachable_scheduler_is_one_line() -> None:
    """`solve --scheduler` with no scheduler there: one line, exit 2, nothing solved."""
    out = CliRunner().invoke(main, ["solve", "--rules", "standard", "--no-cache", "--scheduler", "tcp://127.0.0.1:1"])
    assert out.exit_code == 2 and out.stderr.startswith("Error: --scheduler: cannot reach")
