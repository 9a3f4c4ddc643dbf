"""`cinqmille export` and `cinqmille.export`: rows agree with advise, only reachable states, atomic writes."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille import export as ex
from cinqmille.advice import advise
from cinqmille.cli import main
from cinqmille.dice import legal_keeps
from cinqmille.position import Position
from cinqmille.rules import load_rules
from cinqmille.solver import solve

pytestmark = pytest.mark.usefixtures("session_cache")


def run(*args: str) -> tuple[int, str, str]:
    out = CliRunner().invoke(main, ["export", *args])
    return out.exit_code, out.stdout, out.stderr


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
def test_rows_read_back_agree_with_advise(fmt: str, tiny_rules_file: Path, tmp_path: Path) -> None:
    """Every exported row of a slice gives the same action and chances to win as `advise` in that position."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    target = tmp_path / f"policy.{fmt}"
    code, out, err = run("--rules", str(tiny_rules_file), "-o", str(target), "--me", "200", "--opp", "150:300")
    assert code == 0, err
    cols = ex.read_policy(target)
    n = len(cols["me"])
    assert f"Wrote {n:,} rows" in out and n > 0
    assert set(cols["me"].tolist()) == {200} and set(cols["opp"].tolist()) == {150, 200, 250, 300}
    result = solve(load_rules(str(tiny_rules_file)), "win")
    for i in range(n):
        me, opp, turn, dice = (int(cols[c][i]) for c in ("me", "opp", "turn", "dice"))
        adv = advise(result, Position(me, opp, turn, dice))
        values = {o.action: o.win for o in adv.options}
        assert cols["action"][i] == adv.best.action, (me, opp, turn, dice)
        assert cols["win"][i] == pytest.approx(adv.win, abs=1e-9)
        assert cols["roll"][i] == pytest.approx(values["roll"], abs=1e-9)
        if "bank" in values:
            assert cols["bank"][i] == pytest.approx(values["bank"], abs=1e-9)
        else:
            assert np.isnan(cols["bank"][i])


def test_whole_table_covers_every_pair_and_turn_starts(tiny_rules_file: Path, tmp_path: Path) -> None:
    """A full export has every pair of valid scores, each with its turn start worth W(me, opp) and no bank."""
    target = tmp_path / "all.npz"
    assert run("--rules", str(tiny_rules_file), "-o", str(target))[0] == 0
    cols = ex.read_policy(target)
    rules = load_rules(str(tiny_rules_file))
    result = solve(rules, "win")
    valid = [0] + list(range(rules.opening, rules.goal, 50))
    pairs = set(zip(cols["me"].tolist(), cols["opp"].tolist()))
    assert pairs == {(a, b) for a in valid for b in valid}
    start = (cols["turn"] == 0)
    assert (cols["dice"][start] == rules.dice).all()  # turn 0 only at the turn start
    assert start.sum() == len(pairs) and (cols["action"][start] == "roll").all()
    assert np.isnan(cols["bank"][start]).all()
    for me, opp, win in zip(cols["me"][start], cols["opp"][start], cols["win"][start]):
        assert win == pytest.approx(result.win_at_start(int(me), int(opp)), abs=1e-12)
    assert ((cols["win"] >= 0) & (cols["win"] <= 1)).all()
    assert (cols["win"] == np.fmax(cols["bank"], cols["roll"])).all()  # the best of the two
    assert (cols["turn"] <= rules.goal - cols["me"]).all()  # nothing past the goal


def test_reachable_states_contain_every_random_walk(tiny_rules_file: Path) -> None:
    """Every (turn, dice) state met by random keeps from the turn start is listed as reachable, and (300, 3) is not."""
    rules = load_rules(str(tiny_rules_file))
    tmax = rules.goal // 50
    reach = ex.reachable(rules, tmax)
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(3000):
        t, m = 0, rules.dice
        while True:
            seen.add((t, m))
            faces = tuple(int(f) for f in rng.integers(1, 7, size=m))
            keeps = [k for k in legal_keeps(rules, tuple(faces.count(f) for f in range(1, 7))) if not k.win]
            if not keeps:
                break
            keep = keeps[int(rng.integers(len(keeps)))]
            t += keep.points // 50
            m = m - keep.size or rules.dice
            if t > tmax:
                break
    assert all(reach[t, m - 1] for t, m in seen)
    assert not reach[6, 2]  # 300 with 3 dice in hand: two dice never score 300 (at most 1 + 1 = 200)
    assert not reach[0, : rules.dice - 1].any()


def test_failed_write_leaves_nothing(tiny_rules_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails half-way leaves the old file intact and no temporary file behind."""
    target = tmp_path / "policy.csv"
    target.write_text("old content\n")

    def broken(path: Path, cols: dict, meta: dict) -> None:
        Path(path).write_text("me,opp\n1,2\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ex, "_write_csv", broken)
    code, _, err = run("--rules", str(tiny_rules_file), "-o", str(target), "--me", "200", "--opp", "200")
    assert code == 2 and "No space left" in err and len(err.strip().splitlines()) == 1
    assert target.read_text() == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["policy.csv"]


def test_parquet_without_pyarrow_is_one_line(tiny_rules_file: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pyarrow, --format parquet is one clear line and exit 2, and writes nothing."""
    real = ex.importlib.util.find_spec
    monkeypatch.setattr(ex.importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    code, _, err = run("--rules", str(tiny_rules_file), "-o", str(tmp_path / "p.parquet"))
    assert code == 2 and "pyarrow" in err and len(err.strip().splitlines()) == 1
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("args", [
    ["--me", "1000:900"], ["--me", "120"], ["--opp", "abc"], ["--me", "100"], ["--opp", "50:100"],
])
def test_bad_slices_are_one_line(args: list[str], tiny_rules_file: Path, tmp_path: Path) -> None:
    """Bad --me/--opp slices: exit 2 with one line on stderr."""
    code, _, err = run("--rules", str(tiny_rules_file), "-o", str(tmp_path / "x.csv"), *args)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_format_from_suffix_or_error(tiny_rules_file: Path, tmp_path: Path) -> None:
    """The format follows the suffix; an unknown suffix without --format is an error."""
    code, _, err = run("--rules", str(tiny_rules_file), "-o", str(tmp_path / "x.txt"), "--me", "200")
    assert code == 2 and "--format" in err
    code, out, _ = run("--rules", str(tiny_rules_file), "-o", str(tmp_path / "x.txt"), "--me", "200",
                       "--format", "csv")
    assert code == 0 and (tmp_path / "x.txt").read_text().startswith(",".join(ex.COLUMNS))
    assert re.search(r"Wrote [\d,]+ rows", out)


def test_last_round_export_lists_both_seats(tmp_path: Path, session_cache: Path) -> None:
    """Under a last round each state is listed for both seats, and each row agrees with advise --seat."""
    from cinqmille.rules import rules_from_dict
    from cinqmille.solver import solve

    rules = rules_from_dict({"name": "tiny-lr", "goal": 600, "opening": 150, "last_round": True})
    result = solve(rules)
    cols = ex.policy_rows(result, [450], [500])
    assert set(cols["seat"].tolist()) == {0, 1}
    for seat in (0, 1):
        rows = np.flatnonzero((cols["seat"] == seat) & (cols["turn"] == 150) & (cols["dice"] == 2))
        assert len(rows) == 1
        answer = advise(result, Position(450, 500, 150, 2, seat=seat))
        assert cols["win"][rows[0]] == pytest.approx(answer.win)
        assert cols["action"][rows[0]] == answer.best.action
