"""The command-line findings of the third hostile battery (issue 29): figures, `dist`'s opponents, a full disk,
long silences, forged vouches and worded system errors."""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from cinqmille.cli import main
from cinqmille.cli import progress as cli_progress

ROOT = Path(__file__).resolve().parent.parent
AA = 'name = "aa"\ngoal = 1000\nopening = 300\n'
#: A ruleset whose three- and four-player tables solve in well under a second.
SMALL = 'name = "small4"\ngoal = 400\nopening = 100\n'

pytestmark = pytest.mark.usefixtures("session_cache")


@pytest.fixture(scope="module")
def aa_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reporter's `aa.toml`: goal 1000, opening 300."""
    path = tmp_path_factory.mktemp("rules") / "aa.toml"
    path.write_text(AA)
    return path


@pytest.fixture(autouse=True)
def private_secret(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The vouches' secret in a folder of the test session (never the user's data folder)."""
    data = tmp_path_factory.getbasetemp() / "data-home"
    data.mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_DATA_HOME", str(data))
    yield data


def one_error_line(result) -> str:  # type: ignore[no-untyped-def]
    """The single `Error: ` line of a refused command (exit status 2, no traceback)."""
    assert result.exit_code == 2, (result.exit_code, result.output[-2000:])
    assert "Traceback" not in result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr[-2000:]
    return lines[0]


def folder_state(folder: Path) -> dict[str, tuple[str, str]]:
    """Each name in `folder`: its kind and (regular files) content, (links) target."""
    out = {}
    for entry in sorted(folder.iterdir()):
        if entry.is_symlink():
            out[entry.name] = ("link", os.readlink(entry))
        elif entry.is_file():
            out[entry.name] = ("file", entry.read_bytes().hex())
        else:
            out[entry.name] = ("other", "")
    return out


# -- 1. figures: atomic, through the one helper, never through a link or into a device ---------------------
def test_every_savefig_of_the_package_goes_through_the_atomic_helper() -> None:
    """`fig.savefig` is called in one place of the package, `research.plots.save_figure` (an atomic write)."""
    calls = []
    for path in (ROOT / "cinqmille").rglob("*.py"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "savefig(" in line and not line.lstrip().startswith("#"):
                calls.append(f"{path.relative_to(ROOT)}:{number}")
    assert len(calls) == 1 and calls[0].startswith("cinqmille/research/plots.py"), calls
    source = (ROOT / "cinqmille/research/plots.py").read_text()
    assert "atomic_write(path, lambda tmp: fig.savefig(tmp" in source


@pytest.mark.parametrize("kind", ["link to /dev/null", "link to a regular file", "fifo"])
def test_compare_plots_refuses_a_figure_target_that_is_a_link_or_a_device(kind: str, aa_file: Path,
                                                                          tmp_path: Path) -> None:
    """`compare --plots DIR` where a figure's name is a link (to a device or a file) or a FIFO: one line, exit 2,
    before any work, and the folder as it was (the linked file unchanged)."""
    figures = tmp_path / "figs"
    figures.mkdir()
    target = figures / "aa-win-chance.png"
    if kind == "link to /dev/null":
        target.symlink_to("/dev/null")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        (tmp_path / "mine.png").write_text("my own picture\n")
        target.symlink_to(tmp_path / "mine.png")
    before = folder_state(figures)
    result = CliRunner().invoke(main, ["compare", "--rules", str(aa_file), "--games", "2", "--referee-games", "2",
                                       "--thresholds", "300", "--plots", str(figures)])
    line = one_error_line(result)
    assert "aa-win-chance.png" in line and "wrote" not in result.output
    assert folder_state(figures) == before
    if kind == "link to a regular file":
        assert (tmp_path / "mine.png").read_text() == "my own picture\n"


def test_a_figure_is_written_atomically_and_a_link_in_its_place_is_refused(tmp_path: Path) -> None:
    """`save_figure` writes a regular file by rename (no temporary file left) and refuses a symbolic link."""
    from cinqmille.files import WriteError
    from cinqmille.research.plots import _pyplot, save_figure

    plt = _pyplot()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    out = save_figure(fig, tmp_path / "f.svg")
    assert out.is_file() and out.read_text().lstrip().startswith("<?xml")
    assert [p.name for p in tmp_path.iterdir()] == ["f.svg"]
    (tmp_path / "g.svg").symlink_to(tmp_path / "f.svg")
    fig, _ = plt.subplots()
    with pytest.raises(WriteError, match="symbolic link"):
        save_figure(fig, tmp_path / "g.svg")


# -- 2. dist names every opponent ---------------------------------------------------------------------------
def test_dist_of_a_three_player_turn_shows_every_opponent(aa_file: Path) -> None:
    """`dist --me 300 --opp 350,900 --json` gives both opponents (and three players), the text names both."""
    args = ["dist", "--rules", str(aa_file), "--me", "300", "--opp", "350,900"]
    out = CliRunner().invoke(main, args + ["--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert data["position"]["opp"] == [350, 900] and data["position"]["players"] == 3
    assert abs(data["mean"] - 244) < 1
    two = json.loads(CliRunner().invoke(main, ["dist", "--rules", str(aa_file), "--me", "300", "--opp", "350",
                                               "--json"]).stdout)
    assert two["position"]["opp"] == 350 and two["position"]["players"] == 2
    text = CliRunner().invoke(main, args)
    assert text.exit_code == 0 and "opponents 350, 900" in text.stdout.splitlines()[0]


# -- 3. a full disk ---------------------------------------------------------------------------------------
def _limited(max_bytes: int):  # type: ignore[no-untyped-def]
    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the write fails with EFBIG instead of killing us
        resource.setrlimit(resource.RLIMIT_FSIZE, (max_bytes, max_bytes))
    return limit


@pytest.mark.parametrize("command", [["dist", "--me", "300", "--opp", "350", "--turns", "--plot"], ["card", "-o"]])
def test_a_pdf_on_a_full_disk_is_one_line_and_leaves_nothing(command: list[str], aa_file: Path, tmp_path: Path,
                                                             session_cache: Path) -> None:
    """A PDF past the file size limit (`ulimit -f 10`): one `Error:` line naming the file, exit 2, and no file
    (nor temporary file) left; matplotlib's PDF backend turns the EFBIG into an AttributeError."""
    import matplotlib.font_manager  # noqa: F401  (its font cache exists before the limit)

    from cinqmille.solver import solve
    from cinqmille.rules import load_rules

    solve(load_rules(str(aa_file)), "win")  # the table is cached (and vouched) before the limit
    out = tmp_path / "out"
    out.mkdir()
    pdf = out / "f.pdf"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CINQMILLE_CACHE": str(session_cache)}
    proc = subprocess.run([sys.executable, "-m", "cinqmille", command[0], "--rules", str(aa_file), *command[1:],
                           str(pdf)], capture_output=True, text=True, env=env, preexec_fn=_limited(10 * 1024),
                          timeout=300)
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith(f"Error: {pdf}: cannot write"), proc.stderr[-2000:]
    assert list(out.iterdir()) == []


# -- 4. long work: checks first, then a line that says what is done ---------------------------------------
def test_card_into_a_folder_that_cannot_be_written_is_refused_before_the_search(aa_file: Path,
                                                                                monkeypatch: pytest.MonkeyPatch,
                                                                                tmp_path: Path) -> None:
    """`card -o` into a folder where no file can be made (/proc; a read-only folder for a user who is not root) is
    one line before the search starts."""
    from cinqmille.research import card

    def no_search(*args: object, **kwargs: object) -> None:
        raise AssertionError("the card was searched before the output was checked")

    monkeypatch.setattr(card, "card_report", no_search)
    targets = [Path("/proc/cinqmille-card.pdf")]
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o555)
        targets.append(locked / "card.pdf")
    for target in targets:
        result = CliRunner().invoke(main, ["card", "--rules", str(aa_file), "-o", str(target)])
        assert "cannot write here" in one_error_line(result)


def test_export_of_every_keep_past_the_row_limit_is_refused_before_the_solve(aa_file: Path,
                                                                            monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    """`export --players 4 --all-keeps` of 50,625 score tuples is refused at once (every keep of each tuple's first
    roll passes 25 million rows), without loading or solving the table."""
    from cinqmille.cli import advise_cmd

    def no_table(*args: object, **kwargs: object) -> None:
        raise AssertionError("the table was loaded before the row count was checked")

    monkeypatch.setattr(advise_cmd, "load_win_table", no_table)
    result = CliRunner().invoke(main, ["export", "--rules", str(aa_file), "--players", "4", "--all-keeps",
                                       "-o", str(tmp_path / "p.csv")])
    line = one_error_line(result)
    assert "at least" in line and "25,000,000" in line and "--opp3" in line
    assert list(tmp_path.iterdir()) == []


def test_an_n_player_keep_table_past_its_limit_is_refused_from_a_sample_before_the_work(tmp_path: Path) -> None:
    """The keep rows of an n-player export are estimated from a few score tuples: past the limit, refused before
    the first tuple's keeps are computed (no progress said)."""
    from cinqmille.errors import CinqmilleError
    from cinqmille.app.export import parse_scores, seat_tables
    from cinqmille.rules import rules_from_dict
    from cinqmille.solver import solve

    rules = rules_from_dict({"goal": 400, "opening": 100}, "small3")
    result = solve(rules, "win", players=3)
    scores = parse_scores(None, rules, "--me")
    told: list[float] = []
    with pytest.raises(CinqmilleError, match="would have about"):
        seat_tables(result, scores, [scores, scores], keeps=True, progress=told.append, max_keep_rows=10_000,
                    every=True)
    assert told == []


@pytest.mark.parametrize("args,label", [
    (["card"], "Searching the strategy card of 'aa'"),
    (["fair"], "Solving the head starts below the opening of 'aa'"),
    (["dist", "--me", "300", "--opp", "350", "--turns"], "Following the turns of a game of 'aa'"),
])
def test_long_work_says_what_it_does(args: list[str], label: str, aa_file: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`card`, `fair` and `dist --turns` say their own work (not only a solve) through the progress reporter:
    off a terminal one line, for work at the reporter's threshold (here lowered to every piece of work, the
    table being cached)."""
    from cinqmille.rules import load_rules
    from cinqmille.solver import solve

    solve(load_rules(str(aa_file)), "win")
    monkeypatch.setattr(cli_progress, "QUIET_STATES", 0)
    out = CliRunner().invoke(main, [args[0], "--rules", str(aa_file), *args[1:]])
    assert out.exit_code == 0, out.output
    said = [line for line in out.stderr.splitlines() if line.startswith(cli_progress.LINE_PREFIX)]
    assert any(line.startswith(cli_progress.LINE_PREFIX + label) for line in said), out.stderr


def test_the_size_of_a_standard_card_search_is_reported_off_a_terminal() -> None:
    """The card search of 'standard' (two minutes) is work past the reporter's threshold; 'aa''s is not."""
    from cinqmille.research.card import SEARCH_EVALUATIONS
    from cinqmille.rules import load_rules, rules_from_dict
    from cinqmille.solver.budget import estimate

    assert estimate(load_rules("standard"), "win").states * SEARCH_EVALUATIONS >= cli_progress.QUIET_STATES
    tiny = rules_from_dict({"goal": 300, "opening": 100}, "t")
    assert estimate(tiny, "win").states * SEARCH_EVALUATIONS < cli_progress.QUIET_STATES


# -- 5. a forged vouch record beside a forged table ------------------------------------------------------
def _forge(players: int, excuse: bool = False) -> tuple[object, np.ndarray, Path]:
    """Solve `SMALL` for `players`, then put in its cache file the table with its later seats rotated (the
    mover's chances right, a valid checksum; with `excuse`, metadata claiming a huge number of chasing rows, where
    the other seats may differ): (rules, the true values, the file)."""
    from cinqmille.rules import rules_from_dict
    from cinqmille.solver import cache, solve
    from cinqmille.solver.api import result_spec

    rules = rules_from_dict({"goal": 400, "opening": 100}, "small4")
    true = solve(rules, "win", players=players).values.copy()
    path = cache.cache_path(rules, "win", players)
    arrays, meta = cache.load_npz(path)
    values = arrays["values"].copy()
    if players == 3:  # seat 1 takes the last seat's chance
        values[..., 1] = 1.0 - values[..., 0] - values[..., 1]
    else:
        values[..., 1:] = np.roll(values[..., 1:], 1, axis=-1)
    assert np.nanmax(np.abs(values - true)) > 0.05
    arrays["values"] = values
    plain = {k: v for k, v in meta.items() if k not in ("checksum", "arrays", "table")}
    if excuse:
        plain.update(exact=False, extra={**plain["extra"], "chasing_rows": 10**9})
    cache.save_npz(path, arrays, plain, result_spec(rules, "win", players))
    return rules, true, path


def _forged_record(path: Path, signed: bool) -> None:
    """What a forger who can write the cache folder and stat the file writes: the identity the record holds
    (inode, times, checksum), unsigned (the old format) or with a signature of his own."""
    import hashlib
    import hmac

    from cinqmille.solver import cache

    identity = cache._identity(path, cache.load_npz(path)[1])
    record = cache._vouch_path(path)
    record.parent.mkdir(parents=True, exist_ok=True)
    body = {"identity": identity,
            "signature": hmac.new(b"guessed" * 5, json.dumps(identity, sort_keys=True).encode(),
                                  hashlib.sha256).hexdigest()} if signed else identity
    record.write_text(json.dumps(body))


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("record", ["none", "unsigned", "signed by the forger"])
def test_a_forged_table_with_a_forged_vouch_is_sampled_and_refused(players: int, record: str,
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A table whose later seats are rotated, beside no record, a record copied from `stat` or one signed with
    another secret, is sampled, refused with a warning and solved again (the CLI prints the true chances)."""
    from cinqmille.solver import cache, solve

    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "cache"))
    rules, true, path = _forge(players)
    if record != "none":
        _forged_record(path, record == "signed by the forger")
        assert not cache.vouched(path, cache.load_npz(path)[1])
    with pytest.warns(UserWarning, match="not the game's solution"):
        found = solve(rules, "win", players=players)
    assert np.allclose(found.values, true, equal_nan=True)
    assert cache.vouched(path, cache.load_npz(path)[1])  # solved again here: vouched by this user's cinqmille


def test_a_forged_count_of_chasing_rows_does_not_excuse_rotated_seats(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A four-player table with its later seats rotated whose metadata claims a billion chasing rows (where the
    other seats may differ from a pure pass) is still refused: at most a quarter of the sampled rows are excused."""
    from cinqmille.solver import solve

    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "cache"))
    rules, true, _ = _forge(4, excuse=True)
    with pytest.warns(UserWarning, match="not the game's solution"):
        found = solve(rules, "win", players=4)
    assert np.allclose(found.values, true, equal_nan=True)


def test_the_vouch_secret_is_private_and_outside_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           private_secret: Path) -> None:
    """The secret is made once, mode 0600, in the data folder (not under CINQMILLE_CACHE); one that others may
    read is not trusted (nothing is vouched, every table is sampled)."""
    from cinqmille.rules import rules_from_dict
    from cinqmille.solver import cache, solve

    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path / "cache"))
    rules = rules_from_dict({"goal": 400, "opening": 100}, "small4")
    solve(rules, "win", players=3)
    key = cache.secret_path()
    assert key.is_file() and private_secret in key.parents and (tmp_path / "cache") not in key.parents
    assert key.stat().st_mode & 0o777 == 0o600
    path = cache.cache_path(rules, "win", 3)
    meta = cache.load_npz(path)[1]
    assert cache.vouched(path, meta)
    key.chmod(0o644)
    try:
        assert not cache.vouched(path, meta)
    finally:
        key.chmod(0o600)


# -- 6. system errors in words ----------------------------------------------------------------------------
@pytest.mark.parametrize("error,words", [
    (OSError(), "failed"),
    (OSError("/lib/x.so: failed to map segment from shared object"), "not enough memory for 'cinqmille odds'"),
    (MemoryError(), "not enough memory for 'cinqmille odds'"),
    (OSError(28, "No space left on device", "/tmp/t.npz"), "/tmp/t.npz: No space left on device"),
])
def test_a_system_error_is_worded_never_a_bare_class_name(error: BaseException, words: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """An OSError or MemoryError that reaches the command line's handler names the operation or the file and the
    reason, never `Error: OSError`."""
    from cinqmille.cli import common

    def fails(spec: str) -> None:
        raise error

    monkeypatch.setattr(common, "load_rules", fails)
    line = one_error_line(CliRunner().invoke(main, ["odds"]))
    assert words in line and not re.fullmatch(r"Error: (OSError|MemoryError)\.?", line), line
