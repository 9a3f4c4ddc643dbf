"""`cinqmille export` and `cinqmille.export`: rows and keeps agree with advise, only reachable states, documented columns, atomic writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.app import export as ex
from cinqmille.errors import CinqmilleError
from cinqmille.app.advice import advise
from cinqmille.cli import main
from cinqmille.dice import dice_tables, faces_of, legal_keeps
from cinqmille.table.position import Position
from cinqmille.rules import load_rules, rules_from_dict
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
        assert win == pytest.approx(float(result.tables[0, int(me) // 50, int(opp) // 50]), abs=1e-12)
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


@pytest.mark.parametrize("writer", ["_write_csv", "_write_keeps_csv"])
def test_failed_write_leaves_nothing(writer: str, tiny_rules_file: Path, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A write that fails half-way (the policy file or the keep table) leaves the old file intact and nothing else."""
    target = tmp_path / "policy.csv"
    target.write_text("old content\n")

    def broken(path: Path, cols: dict, meta: dict) -> None:
        Path(path).write_text("me,opp\n1,2\n")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ex.files, writer, broken)
    code, _, err = run("--rules", str(tiny_rules_file), "-o", str(target), "--me", "200", "--opp", "200")
    assert code == 2 and "No space left" in err and len(err.strip().splitlines()) == 1
    assert target.read_text() == "old content\n"
    assert [p.name for p in tmp_path.iterdir()] == ["policy.csv"]


def test_parquet_without_pyarrow_is_one_line(tiny_rules_file: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pyarrow, --format parquet is one clear line and exit 2, and writes nothing."""
    real = ex.files.importlib.util.find_spec
    monkeypatch.setattr(ex.files.importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
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


# -- the keep table ----------------------------------------------------------------------------
def faces(code: int) -> tuple[int, ...]:
    """The faces of a digits code: 1335 -> (1, 3, 3, 5)."""
    return tuple(int(c) for c in str(int(code)))


RULESETS = {
    "reach": {"name": "tiny", "goal": 500, "opening": 150},
    "exact": {"name": "tiny-exact", "goal": 600, "opening": 150, "end": "exact"},
    "last_round": {"name": "tiny-lr", "goal": 600, "opening": 150, "last_round": True},
}


@pytest.mark.parametrize("kind", sorted(RULESETS))
def test_keep_rows_agree_with_advise(kind: str) -> None:
    """A sample of keep rows (every `then` among them) gives the keep, points, dice left and next move that `advise --roll` ranks first."""
    result = solve(rules_from_dict(RULESETS[kind]))
    cols = ex.policy_rows(result, [0, 300, 450], [0, 450])
    keeps = ex.keep_rows(result, cols)
    then = np.array(ex.THEN)[keeps["then"]]
    # under reach four 1s (then a winning bank) are worth the instant win of five 1s: the solve keeps the most
    # points (`kernel.best_keeps`), so no best keep is an instant win there (in a last round it is better)
    expected = {"reach": {"bank", "roll"}, "exact": {"bank", "roll", "win", "bust"},
                "last_round": {"bank", "roll", "win"}}[kind]
    assert set(then.tolist()) == expected
    rng = np.random.default_rng(5)
    sample = set(rng.choice(len(then), size=150, replace=False).tolist())
    sample |= {int(np.flatnonzero(then == label)[k]) for label in expected for k in (0, -1)}
    for i in sorted(sample):
        me, opp, seat, turn, dice = (int(keeps[c][i]) for c in ("me", "opp", "seat", "turn", "dice"))
        best = advise(result, Position(me, opp, turn, dice, seat=seat), roll=faces(keeps["rolled"][i])).best
        assert best is not None, i
        got = (faces(keeps["keep"][i]), int(keeps["points"][i]), then[i])
        assert got == (best.keep, best.points, best.then), (me, opp, seat, turn, dice, keeps["rolled"][i])
        if best.then in ("bank", "roll"):
            assert keeps["left"][i] == best.dice


def test_keep_rows_list_every_roll_that_does_not_bust_of_every_roll_state(tiny_rules_file: Path) -> None:
    """Each state whose action is roll has one keep row per roll of its dice that does not bust, in order; bank states have none."""
    rules = load_rules(str(tiny_rules_file))
    result = solve(rules, "win")
    cols = ex.policy_rows(result, [0, 200], [150, 300])
    keeps = ex.keep_rows(result, cols)
    tables = dice_tables(rules)
    rolls = {m: [int(ex.faces_code(t.counts[r])) for r in range(len(t.counts)) if not t.bust[r]] for m, t in tables.items()}
    state = ("me", "opp", "seat", "turn", "dice")
    key = np.stack([keeps[c].astype(np.int64) for c in state], axis=1)
    starts = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]).any(axis=1)])
    listed = [tuple(int(v) for v in key[k]) for k in starts]
    roll_states = [tuple(int(cols[c][i]) for c in state) for i in np.flatnonzero(cols["action"] == "roll")]
    assert listed == roll_states and (cols["action"] == "bank").any()
    for k, end in zip(starts, np.r_[starts[1:], len(key)]):
        assert keeps["rolled"][k:end].tolist() == rolls[int(key[k, 4])]
    assert 23466 not in keeps["rolled"].tolist()  # 2-3-4-6-6 busts
    assert faces_of((1, 0, 2, 0, 1, 0)) == faces(ex.faces_code(np.array([1, 0, 2, 0, 1, 0])))


def export_slice(fmt: str, rules_file: Path, where: Path, *extra: str) -> Path:
    """Export the tiny ruleset's slice me 200, opp 150:300 in `fmt`; returns the policy file."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    target = where / f"policy.{fmt}"
    code, out, err = run("--rules", str(rules_file), "-o", str(target), "--me", "200", "--opp", "150:300", *extra)
    assert code == 0, err
    return target


@pytest.mark.parametrize("fmt", ex.FORMATS)
def test_keep_table_round_trips(fmt: str, tiny_rules_file: Path, tmp_path: Path) -> None:
    """`read_policy` gives back the keep table exactly (values and compact dtypes) next to the bank/roll rows."""
    target = export_slice(fmt, tiny_rules_file, tmp_path)
    result = solve(load_rules(str(tiny_rules_file)), "win")
    cols = ex.policy_rows(result, [200], [150, 200, 250, 300])
    keeps = ex.keep_rows(result, cols)
    back = ex.read_policy(target)
    assert set(back) == set(ex.COLUMNS) | {f"keeps/{c}" for c in ex.KEEP_COLUMNS}
    assert len(back["keeps/me"]) == len(keeps["me"]) > len(back["me"])
    for c in ex.KEEP_COLUMNS:
        assert back[f"keeps/{c}"].dtype == keeps[c].dtype and np.array_equal(back[f"keeps/{c}"], keeps[c]), c
    assert keeps["me"].dtype == np.int16 and keeps["then"].dtype == np.uint8
    for c in ("me", "opp", "turn", "dice", "action"):
        assert np.array_equal(back[c], cols[c]), c
    assert np.allclose(back["roll"], cols["roll"], rtol=0, atol=1e-11)
    assert set(ex.read_policy(target, keeps=False)) == set(ex.COLUMNS)


@pytest.mark.parametrize("fmt", ex.FORMATS)
def test_no_keeps_writes_the_bank_roll_table_only(fmt: str, tiny_rules_file: Path, tmp_path: Path) -> None:
    """`--no-keeps` writes no keep table: one data file (and its sidecar for CSV), read back without keeps."""
    target = export_slice(fmt, tiny_rules_file, tmp_path, "--no-keeps")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == {"csv": ["policy.csv", "policy.csv.json"], "npz": ["policy.npz"],
                     "parquet": ["policy.parquet"]}[fmt]
    assert set(ex.read_policy(target)) == set(ex.COLUMNS) and ex.read_meta(target)["keeps"] is None


def documented(docs: dict, names: list[str]) -> None:
    """Every name has a non-empty meaning and unit in `docs`, and nothing else is documented."""
    assert list(docs) == names
    for name in names:
        assert docs[name]["meaning"].strip() and docs[name]["unit"].strip(), name


@pytest.mark.parametrize("fmt", ex.FORMATS)
def test_every_column_is_documented_in_its_file(fmt: str, tiny_rules_file: Path, tmp_path: Path) -> None:
    """Each file of an export carries the ruleset, the solver version and every column's meaning and unit."""
    target = export_slice(fmt, tiny_rules_file, tmp_path)
    version = solve(load_rules(str(tiny_rules_file)), "win").solver_version
    main, keeps = list(ex.COLUMNS), list(ex.KEEP_COLUMNS)
    if fmt == "npz":
        with np.load(target) as data:
            meta = json.loads(str(data["meta"]))
            arrays = [name for name in data.files if name != "meta"]
        documented(meta["columns"], main + [f"keeps/{c}" for c in keeps])
        assert arrays == list(meta["columns"])
        metas = [meta]
    elif fmt == "csv":
        metas = []
        for path, names in ((target, main), (tmp_path / "policy.keeps.csv", keeps)):
            side = json.loads((tmp_path / f"{path.name}.json").read_text())
            assert path.read_text().splitlines()[0] == ",".join(names) and side["file"] == path.name
            documented(side["columns"], names)
            metas.append(side)
    else:
        import pyarrow.parquet as pq

        metas = []
        for path, names in ((target, main), (tmp_path / "policy.keeps.parquet", keeps)):
            schema = pq.read_schema(path)
            assert schema.names == names
            for field in schema:
                assert field.metadata[b"meaning"].strip() and field.metadata[b"unit"].strip(), field.name
            meta = json.loads(schema.metadata[b"cinqmille"])
            documented(meta["columns"], names)
            metas.append(meta)
    for meta in metas:
        assert meta["rules"]["name"] == "tiny" and meta["solver_version"] == version
    assert metas[0]["keeps"]["rows"] == len(ex.read_policy(target)["keeps/me"])


@pytest.mark.parametrize("fmt", ex.FORMATS)
def test_three_player_export_agrees_with_advise_and_documents_its_columns(fmt: str, tiny_rules_file: Path,
                                                                          tmp_path: Path) -> None:
    """`export --players 3`: rows name both opponents (opp, opp2), each row's action and chances equal
    `advise --opp B,C`, each keep row is the advice's best keep, and every column is documented in the file."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    target = tmp_path / f"policy3.{fmt}"
    code, out, err = run("--rules", str(tiny_rules_file), "-o", str(target), "--players", "3", "--me", "200",
                         "--opp", "150:200", "--opp2", "0:150")
    assert code == 0, err
    assert "score triples" in out
    cols = ex.read_policy(target)
    meta = ex.read_meta(target)
    assert meta["players"] == 3 and set(ex.seat_columns(3)[0]) <= set(meta["columns"])
    assert all(meta["columns"][c]["meaning"] and meta["columns"][c]["unit"] for c in ex.seat_columns(3)[0])
    assert set(cols["opp"].tolist()) == {150, 200} and set(cols["opp2"].tolist()) == {0, 150}
    result = solve(load_rules(str(tiny_rules_file)), "win", players=3)
    for i in range(0, len(cols["me"]), 3):
        me, opp, opp2, turn, dice = (int(cols[c][i]) for c in ("me", "opp", "opp2", "turn", "dice"))
        if turn == 0:
            continue
        adv = advise(result, Position(me, opp, turn, dice, others=(opp, opp2)))
        assert cols["action"][i] == adv.best.action, (me, opp, opp2, turn, dice)
        assert cols["win"][i] == pytest.approx(adv.win, abs=1e-12)
    rows = len(cols["keeps/me"])
    assert rows > 0
    for i in range(0, rows, max(1, rows // 40)):
        me, opp, opp2, turn, dice, rolled = (int(cols[f"keeps/{c}"][i])
                                             for c in ("me", "opp", "opp2", "turn", "dice", "rolled"))
        adv = advise(result, Position(me, opp, turn, others=(opp, opp2)), roll=tuple(int(x) for x in str(rolled)))
        assert int("".join(map(str, adv.best.keep))) == int(cols["keeps/keep"][i])


def test_three_player_options_are_checked(tiny_rules_file: Path, tmp_path: Path) -> None:
    """--opp2 without --players 3 or more, --opp3 below 4 players, --opp4 below 5, and --players 6 are refused in
    one line."""
    for args in (["--opp2", "0"], ["--opp3", "0", "--players", "3"], ["--opp4", "0", "--players", "4"],
                 ["--players", "6"]):
        code, out, err = run("--rules", str(tiny_rules_file), "-o", str(tmp_path / "p.csv"), *args)
        assert code == 2 and "Error" in (out + err)


def test_four_player_export_agrees_with_advise(tiny_rules_file: Path, tmp_path: Path) -> None:
    """`export --players 4`: rows name the three opponents (opp, opp2, opp3) in playing order, and each row's
    action and chance equal `advise --opp B,C,D`'s; every column is documented."""
    target = tmp_path / "policy4.npz"
    code, out, err = run("--rules", str(tiny_rules_file), "-o", str(target), "--players", "4", "--me", "200",
                         "--opp", "150", "--opp2", "0:150", "--opp3", "300")
    assert code == 0, err
    assert "score tuples" in out
    cols, meta = ex.read_policy(target), ex.read_meta(target)
    assert meta["players"] == 4 and all(meta["columns"][c]["meaning"] for c in ex.seat_columns(4)[0])
    assert set(cols["opp2"].tolist()) == {0, 150} and set(cols["opp3"].tolist()) == {300}
    result = solve(load_rules(str(tiny_rules_file)), "win", players=4)
    checked = 0
    for i in range(len(cols["me"])):
        me, opp, opp2, opp3, turn, dice = (int(cols[c][i]) for c in ("me", "opp", "opp2", "opp3", "turn", "dice"))
        if turn == 0:
            continue
        adv = advise(result, Position(me, opp, turn, dice, others=(opp, opp2, opp3)))
        assert cols["action"][i] == adv.best.action and cols["win"][i] == pytest.approx(adv.win, abs=1e-12)
        checked += 1
    assert checked > 10


# -- targets that are not regular files ---------------------------------------------------------
def _socket(path: Path) -> None:
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
    except OSError:
        pytest.skip("cannot bind a Unix socket here (path too long?)")
    finally:
        sock.close()


def _special(kind: str, path: Path) -> None:
    """Make `path` a FIFO, a directory, a socket, or a symbolic link to a device (never writing the device)."""
    import os

    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        _socket(path)
    elif kind == "link to a device":
        path.symlink_to("/dev/null")
    else:  # a link to a FIFO
        os.mkfifo(path.with_name("pipe"))
        path.symlink_to(path.with_name("pipe"))


SPECIAL = ["fifo", "directory", "socket", "link to a device", "link to a fifo"]


@pytest.mark.parametrize("kind", SPECIAL)
def test_atomic_write_refuses_a_target_that_is_not_a_regular_file(kind: str, tmp_path: Path) -> None:
    """`atomic_write` over a FIFO, a directory, a socket or a link to a device raises one line and writes nothing."""
    from cinqmille.errors import CinqmilleError
    from cinqmille.files import atomic_write

    target = tmp_path / "s"
    _special(kind, target)
    before = sorted(p.name for p in tmp_path.iterdir())
    called = []
    with pytest.raises(CinqmilleError, match="not a regular file") as info:
        atomic_write(target, called.append)
    assert "\n" not in str(info.value) and not called
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not target.is_file()


@pytest.mark.parametrize("fmt", ["csv", "npz", "parquet"])
@pytest.mark.parametrize("kind", SPECIAL)
def test_export_onto_a_special_file_is_refused_without_side_files(kind: str, fmt: str, tiny_rules_file: Path,
                                                                  tmp_path: Path) -> None:
    """`export -o` onto a FIFO, directory, socket or link to a device: one `Error:` line, exit 2, no file beside it."""
    target = tmp_path / f"s.{fmt}"
    _special(kind, target)
    before = sorted(p.name for p in tmp_path.iterdir())
    code, _, err = run("--rules", str(tiny_rules_file), "-o", str(target), "--me", "200", "--opp", "200")
    assert code == 2 and err.startswith("Error: ") and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert not target.is_file()


@pytest.mark.parametrize("side", ["keeps", "sidecar", "keeps sidecar"])
def test_a_special_file_beside_the_target_refuses_the_whole_export(side: str, tiny_rules_file: Path,
                                                                   tmp_path: Path) -> None:
    """A FIFO where the keep table or a sidecar goes refuses the export before the policy file is written."""
    import os

    target = tmp_path / "policy.csv"
    target.write_text("old content\n")
    name = {"keeps": "policy.keeps.csv", "sidecar": "policy.csv.json", "keeps sidecar": "policy.keeps.csv.json"}[side]
    os.mkfifo(tmp_path / name)
    code, _, err = run("--rules", str(tiny_rules_file), "-o", str(target), "--me", "200", "--opp", "200")
    assert code == 2 and name in err and "FIFO" in err and len(err.strip().splitlines()) == 1, err
    assert target.read_text() == "old content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["policy.csv", name])
    with pytest.raises(CinqmilleError, match="FIFO"):  # the library refuses too, before writing anything
        ex.write_policy(target, "csv", {c: np.zeros(0) for c in ex.COLUMNS}, {}, {c: np.zeros(0, np.int8) for c in
                                                                                 ex.KEEP_COLUMNS})
    assert target.read_text() == "old content\n"


# -- zero_turns: the scoreless-turn counters ------------------------------------------------------
ZERO = {"name": "z3", "goal": 350, "opening": 150, "zero_turns": {"count": 3, "to": "zero"}}


@pytest.mark.parametrize("fmt", ex.FORMATS)
def test_zero_turns_export_lists_every_counter_pair_as_advise_reads_it(fmt: str, tmp_path: Path) -> None:
    """Under a counted zero_turns every pair of counters is exported in `scoreless_me`, `scoreless_opp` (no
    `seat`), documented, and every row and sampled keep row equals `advise --scoreless MINE,HIS`."""
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    rules_file = tmp_path / "z3.toml"
    rules_file.write_text('name = "z3"\ngoal = 350\nopening = 150\n[zero_turns]\ncount = 3\nto = "zero"\n')
    target = tmp_path / f"z.{fmt}"
    code, _, err = run("--rules", str(rules_file), "-o", str(target), "--me", "200", "--opp", "150:300")
    assert code == 0, err
    cols, meta = ex.read_policy(target), ex.read_meta(target)
    assert "seat" not in cols and meta["scoreless"] == 3
    documented({c: meta["columns"][c] for c in ex.COLUMNS_Z}, list(ex.COLUMNS_Z))
    pairs = set(zip(cols["scoreless_me"].tolist(), cols["scoreless_opp"].tolist()))
    assert pairs == {(i, j) for i in range(3) for j in range(3)}
    result = solve(rules_from_dict(ZERO))
    for i in range(len(cols["me"])):
        me, opp, mine, his, turn, dice = (int(cols[c][i]) for c in ("me", "opp", *ex.SCORELESS, "turn", "dice"))
        if turn == 0:
            continue
        adv = advise(result, Position(me, opp, turn, dice, scoreless=(mine, his)))
        assert cols["action"][i] == adv.best.action, (me, opp, mine, his, turn, dice)
        assert cols["win"][i] == pytest.approx(adv.win, rel=1e-9, abs=1e-12)
    assert len({float(cols["win"][i]) for i in np.flatnonzero((cols["turn"] == 0) & (cols["opp"] == 300))}) > 1, \
        "the counters must change the chances for this test to mean anything"
    rows = len(cols["keeps/me"])
    assert set(zip(cols["keeps/scoreless_me"].tolist(), cols["keeps/scoreless_opp"].tolist())) == pairs
    for i in range(0, rows, max(1, rows // 60)):
        me, opp, mine, his, turn, rolled = (int(cols[f"keeps/{c}"][i])
                                            for c in ("me", "opp", *ex.SCORELESS, "turn", "rolled"))
        adv = advise(result, Position(me, opp, turn, scoreless=(mine, his)), roll=faces(rolled))
        assert int("".join(map(str, adv.best.keep))) == int(cols["keeps/keep"][i]), (me, opp, mine, his, turn)


def test_zero_turns_row_equals_the_advise_command(tmp_path: Path) -> None:
    """One exported row of counters (2, 1) is what `cinqmille advise --scoreless 2,1 --json` prints."""
    rules_file = tmp_path / "z3.toml"
    rules_file.write_text('name = "z3"\ngoal = 350\nopening = 150\n[zero_turns]\ncount = 3\nto = "zero"\n')
    target = tmp_path / "z.npz"
    assert run("--rules", str(rules_file), "-o", str(target), "--me", "200", "--opp", "300", "--no-keeps")[0] == 0
    cols = ex.read_policy(target)
    i = int(np.flatnonzero((cols["scoreless_me"] == 2) & (cols["scoreless_opp"] == 1) & (cols["turn"] == 100)
                           & (cols["dice"] == 3))[0])
    out = CliRunner().invoke(main, ["advise", "--rules", str(rules_file), "--me", "200", "--opp", "300",
                                    "--turn", "100", "--dice", "3", "--scoreless", "2,1", "--json"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.stdout)
    assert float(cols["win"][i]) == pytest.approx(answer["win"], rel=1e-9)


@pytest.mark.parametrize(("extra", "words"), [((), "(1 score pair)"), (("--players", "3", "--opp2", "0"), "(1 score triple)"),
                                              (("--players", "3", "--opp2", "0:150"), "(2 score triples)")])
def test_one_score_pair_is_singular(extra: tuple[str, ...], words: str, tiny_rules_file: Path, tmp_path: Path) -> None:
    """The summary line counts what it exported in words that agree with the number: 1 score pair, 2 score triples."""
    code, out, err = run("--rules", str(tiny_rules_file), "-o", str(tmp_path / "one.csv"), "--me", "200", "--opp", "150",
                         *extra)
    assert code == 0, err
    assert words in out


# -- --all-keeps: every legal keep of each roll ------------------------------------------------
#: The chances and expected points of the every-keep table agree with advise's to this (the same numbers).
EVERY_TOL = 1e-12


@pytest.mark.parametrize("kind", sorted(RULESETS))
def test_all_keeps_best_rows_are_the_keep_table(kind: str) -> None:
    """The rank-0 rows of the every-keep table are the best-keep table row for row; each roll lists as many
    keeps as `legal_keeps` gives, ranks 0, 1, ... with chances that never increase."""
    rules = rules_from_dict(RULESETS[kind])
    result = solve(rules)
    cols = ex.policy_rows(result, [0, 300, 450], [0, 450])
    best, every = ex.keep_rows(result, cols), ex.keep_rows(result, cols, every=True)
    top = every["rank"] == 0
    assert len(every["me"]) > 2 * len(best["me"]) and top.sum() == len(best["me"])
    for c in ex.KEEP_COLUMNS:
        assert np.array_equal(every[c][top], best[c]), c
    starts = np.flatnonzero(top)
    sizes = np.diff(np.r_[starts, len(top)])
    assert np.array_equal(every["rank"], np.concatenate([np.arange(k) for k in sizes]))
    tables = dice_tables(rules)
    for k in range(0, len(starts), max(1, len(starts) // 200)):
        rolled = faces(every["rolled"][starts[k]])
        assert sizes[k] == len(legal_keeps(rules, tuple(rolled.count(f) for f in range(1, 7)))), rolled
        wins = every["win"][starts[k]:starts[k] + sizes[k]]
        assert (np.diff(wins) <= 0).all()
    assert set(tables) >= set(every["dice"].tolist())


@pytest.mark.parametrize("kind", sorted(RULESETS))
def test_all_keeps_chances_are_advise_rolls(kind: str) -> None:
    """On a sample of states and rolls every keep's chance to win, expected points and next move equal the
    option of `advise --roll` for that keep, to 1e-12, in advise's order."""
    result = solve(rules_from_dict(RULESETS[kind]))
    cols = ex.policy_rows(result, [0, 450], [300, 450])
    every = ex.keep_rows(result, cols, every=True)
    then = np.array(ex.THEN)[every["then"]]
    starts = np.flatnonzero(every["rank"] == 0)
    ends = np.r_[starts[1:], len(then)]
    rng = np.random.default_rng(11)
    checked = 0
    for k in sorted(rng.choice(len(starts), size=60, replace=False).tolist()):
        i, j = int(starts[k]), int(ends[k])
        me, opp, seat, turn, dice = (int(every[c][i]) for c in ("me", "opp", "seat", "turn", "dice"))
        options = advise(result, Position(me, opp, turn, dice, seat=seat), roll=faces(every["rolled"][i])).options
        assert len(options) == j - i
        for row, option in zip(range(i, j), options):
            assert faces(every["keep"][row]) == option.keep and then[row] == option.then
            assert every["win"][row] == pytest.approx(option.win, abs=EVERY_TOL)
            assert every["expected"][row] == pytest.approx(option.expected, rel=EVERY_TOL, abs=EVERY_TOL)
            checked += 1
    assert checked > 100


def test_all_keeps_rows_are_what_advise_json_prints(tiny_rules_file: Path, tmp_path: Path) -> None:
    """`export --all-keeps` read back from CSV: the keeps of one roll are the options of `cinqmille advise
    --roll ... --json`, with the same chances (to the CSV's 12 digits)."""
    target = tmp_path / "every.csv"
    code, out, err = run("--rules", str(tiny_rules_file), "-o", str(target), "--me", "200", "--opp", "300",
                         "--all-keeps")
    assert code == 0, err
    assert "keep rows (every legal keep)" in out
    back = ex.read_policy(target)
    assert set(back) == set(ex.COLUMNS) | {f"keeps/{c}" for c in ex.KEEP_COLUMNS + ex.EVERY}
    rows = np.flatnonzero((back["keeps/turn"] == 0) & (back["keeps/rolled"] == 11235))
    done = CliRunner().invoke(main, ["advise", "--rules", str(tiny_rules_file), "--me", "200", "--opp", "300",
                                     "--roll", "1,1,2,3,5", "--json"])
    assert done.exit_code == 0, done.output
    options = json.loads(done.stdout)["options"]
    assert len(options) == len(rows) >= 3
    for i, option in zip(rows, options):
        assert faces(back["keeps/keep"][i]) == tuple(option["keep"])
        assert back["keeps/win"][i] == pytest.approx(option["win"], rel=1e-11, abs=1e-12)
        assert back["keeps/expected"][i] == pytest.approx(option["expected"], rel=1e-11)


@pytest.mark.parametrize("fmt", ex.FORMATS)
def test_all_keeps_round_trip_and_documentation(fmt: str, tiny_rules_file: Path, tmp_path: Path) -> None:
    """Every format writes the every-keep table with its extra columns documented and reads it back exactly
    (CSV: the chances to 12 digits)."""
    target = export_slice(fmt, tiny_rules_file, tmp_path, "--all-keeps")
    result = solve(load_rules(str(tiny_rules_file)), "win")
    want = ex.keep_rows(result, ex.policy_rows(result, [200], [150, 200, 250, 300]), every=True)
    back, meta = ex.read_policy(target), ex.read_meta(target)
    assert meta["every_keep"] is True and meta["keeps"]["rows"] == len(want["me"])
    docs = meta["columns"] if fmt != "npz" else {k[len("keeps/"):]: v for k, v in meta["columns"].items()
                                                  if k.startswith("keeps/")}
    if fmt != "npz":
        side = (json.loads((tmp_path / "policy.keeps.csv.json").read_text())["columns"] if fmt == "csv" else
                json.loads(__import__("pyarrow.parquet").parquet.read_schema(tmp_path / "policy.keeps.parquet")
                           .metadata[b"cinqmille"])["columns"])
        docs = side
    documented(docs, list(ex.KEEP_COLUMNS + ex.EVERY))
    for c in ex.KEEP_COLUMNS + ex.EVERY:
        got = back[f"keeps/{c}"]
        if c in ("win", "expected"):
            assert np.allclose(got, want[c], rtol=1e-11, atol=1e-12), c
        else:
            assert got.dtype == want[c].dtype and np.array_equal(got, want[c]), c


@pytest.mark.parametrize(("args", "words"), [(["--all-keeps", "--no-keeps"], "--no-keeps"),
                                             (["--all-keeps"], "export a slice")])
def test_all_keeps_refusals_are_one_line(args: list[str], words: str, tiny_rules_file: Path, tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """--all-keeps with --no-keeps, or an every-keep table past the limit (here 1,000 rows), is one `Error:`
    line, exit 2, and writes nothing."""
    for module in (ex.keeps, ex.states):  # where the limit is read
        monkeypatch.setattr(module, "MAX_EVERY_ROWS", 1000)
    code, _, err = run("--rules", str(tiny_rules_file), "-o", str(tmp_path / "x.csv"), *args)
    assert code == 2 and err.startswith("Error: ") and words in err and len(err.strip().splitlines()) == 1, err
    assert not list(tmp_path.iterdir())


def test_all_keeps_three_players(tiny_rules_file: Path, tmp_path: Path) -> None:
    """`--players 3 --all-keeps`: the rank-0 rows are the best keeps of the three-player keep table, and each
    keep's chance is the three-player advice's."""
    result = solve(load_rules(str(tiny_rules_file)), "win", players=3)
    _, best = ex.seat_tables(result, [200], [[150], [0, 300]])
    _, every = ex.seat_tables(result, [200], [[150], [0, 300]], every=True)
    assert best is not None and every is not None
    top = every["rank"] == 0
    for c in ex.seat_columns(3)[1]:
        assert np.array_equal(every[c][top], best[c]), c
    for i in np.flatnonzero(top)[::50]:
        me, opp, opp2, turn, rolled = (int(every[c][i]) for c in ("me", "opp", "opp2", "turn", "rolled"))
        options = advise(result, Position(me, opp, turn, others=(opp, opp2)), roll=faces(rolled)).options
        for k, option in enumerate(options):
            assert every["win"][i + k] == pytest.approx(option.win, abs=EVERY_TOL)
