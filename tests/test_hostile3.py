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
