"""README.md's examples are the program's real output: each `$ command` block is run and compared.

A fenced block holds one or more lines `$ COMMAND` each followed by the output
it shows. Every command runs in a temporary directory that holds the files the
README writes in fenced ```toml blocks whose first line is `# FILE`. Times and
rates (`7.2 s`, `26,419 games/s`) are compared as placeholders; a shown line
`...` ends the comparison of that command (the rest is elided). To rewrite the
README from the program's output: `CINQMILLE_UPDATE_README=1 python -m pytest tests/test_readme.py`.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cinqmille.cli.progress import LINE_PREFIX

README = Path(__file__).resolve().parent.parent / "README.md"
UPDATE = bool(os.environ.get("CINQMILLE_UPDATE_README"))
_VOLATILE = [(re.compile(r"\b\d[\d,]*(?:\.\d+)? s\b"), "<T> s"),
             (re.compile(r"\b\d[\d,]*(?:\.\d+)? games/s\b"), "<R> games/s"),
]
#: A number shown in the README matches the program's within this relative tolerance (or `ABS_TOL`): floats
#: differ in their last bits between CPUs (the order of float sums in the BLAS build).
REL_TOL, ABS_TOL = 1e-9, 1e-12
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


@dataclass(frozen=True)
class Example:
    """One `$ command` of the README and the output lines shown under it."""

    line: int  # 0-based line of the `$` in README.md
    command: str
    shown: tuple[str, ...]
    slow: bool  # the block follows a line `<!-- test: slow -->` (a long solve): run with -m slow
    before: tuple[str, ...] = ()  # the commands above it in its block (they may write the files it reads)


def _blocks(text: list[str]) -> list[tuple[int, int, str]]:
    """(first line inside, end line, info string) of every fenced block."""
    out, start, info = [], -1, ""
    for i, line in enumerate(text):
        if line.startswith("```"):
            if start < 0:
                start, info = i + 1, line[3:].strip()
            else:
                out.append((start, i, info))
                start = -1
    return out


def examples() -> list[Example]:
    """Every `$ command` with its shown output, in README order."""
    text = README.read_text(encoding="utf-8").splitlines()
    found = []
    for start, end, info in _blocks(text):
        if info:
            continue
        slow = start >= 2 and text[start - 2].strip() == "<!-- test: slow -->"
        i = start
        while i < end:
            if not text[i].startswith("$ "):
                i += 1
                continue
            j = i + 1
            while j < end and not text[j].startswith("$ "):
                j += 1
            shown = text[i + 1:j]
            while shown and not shown[-1].strip():
                shown = shown[:-1]
            earlier = tuple(e.command for e in found if e.line >= start)
            found.append(Example(i, text[i][2:], tuple(shown), slow, earlier))
            i = j
    return found


def files() -> dict[str, str]:
    """The files the README writes: ```toml or ```text blocks whose first line is `# NAME`."""
    text = README.read_text(encoding="utf-8").splitlines()
    out = {}
    for start, end, info in _blocks(text):
        if info in ("toml", "text") and text[start].startswith("# "):
            out[text[start][2:].strip()] = "\n".join(text[start + 1:end]) + "\n"
    return out


def _normal(line: str) -> str:
    for pattern, repl in _VOLATILE:
        line = pattern.sub(repl, line)
    return line.rstrip()


def same_line(shown: str, actual: str) -> bool:
    """The lines read the same, their numbers equal within `REL_TOL` (or `ABS_TOL`), never to the last digit."""
    shown, actual = _normal(shown), _normal(actual)
    if _NUMBER.sub("#", shown) != _NUMBER.sub("#", actual):
        return False
    for a, b in zip(_NUMBER.findall(shown), _NUMBER.findall(actual)):
        x, y = float(a), float(b)
        if a != b and abs(x - y) > max(REL_TOL * max(abs(x), abs(y)), ABS_TOL):
            return False
    return True


def run(command: str, where: Path) -> list[str]:
    """The lines a README command prints (stdout and stderr, as a terminal shows them)."""
    words = shlex.split(command)
    source = None
    if len(words) > 2 and words[-2] == "<":
        source, words = where / words[-1], words[:-2]
    if words[0] == "cinqmille":
        words = [sys.executable, "-m", "cinqmille", *words[1:]]
    with open(source if source is not None else os.devnull) as stdin:
        done = subprocess.run(words, cwd=where, stdin=stdin, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "COLUMNS": "100"})
    # long work says one line on stderr when it lasts (`cli/progress.py`): how long depends on the machine
    return [line for line in (done.stdout + done.stderr).splitlines() if not line.startswith(LINE_PREFIX)]


@pytest.fixture(scope="session")  # not torn down when a worker interleaves other modules between the examples
def workdir(tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path) -> Iterator[Path]:
    """A directory holding the README's files, with the session's solver cache."""
    where = tmp_path_factory.mktemp("readme")
    for name, body in files().items():
        (where / name).write_text(body)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CINQMILLE_CACHE", str(session_cache_dir))
        yield where


def _matches(shown: tuple[str, ...], actual: list[str]) -> bool:
    for k, line in enumerate(shown):
        if line.strip() == "...":
            return True
        if k >= len(actual) or not same_line(line, actual[k]):
            return False
    return len(actual) == len(shown)


_EXAMPLES = examples()


def test_the_readme_has_examples() -> None:
    """The README shows the output of every command it documents."""
    shown = {e.command.split()[1] for e in _EXAMPLES if e.command.startswith("cinqmille ")}
    assert {"rules", "odds", "solve", "advise", "dist", "export", "play", "review", "simulate", "match", "ablate"} <= shown


@pytest.mark.parametrize("example", [pytest.param(e, marks=[pytest.mark.slow] if e.slow else [], id=e.command[:60])
                                     for e in _EXAMPLES])
def test_readme_output_is_the_programs(example: Example, workdir: Path) -> None:
    """The output the README shows under a command is what the command prints."""
    for command in example.before:  # in whatever order the workers take the examples, the files are there
        run(command, workdir)
    actual = run(example.command, workdir)
    if UPDATE and not _matches(example.shown, actual):
        _rewrite(example, actual)
        return
    assert _matches(example.shown, actual), "\n".join(["README shows:", *example.shown, "program prints:", *actual])


def _rewrite(example: Example, actual: list[str]) -> None:
    """Put the program's output under the command in README.md (keeping an elision `...`)."""
    text = README.read_text(encoding="utf-8").splitlines()
    index = next(i for i, line in enumerate(text) if line == f"$ {example.command}")
    cut = next((k for k, line in enumerate(example.shown) if line.strip() == "..."), None)
    new = actual if cut is None else actual[:cut] + ["..."]
    text[index + 1:index + 1 + len(example.shown)] = new
    README.write_text("\n".join(text) + "\n", encoding="utf-8")


def test_numbers_compare_within_a_tolerance() -> None:
    """A README number matches a run's within 1e-9 relative, and no further: last bits may differ, figures may not."""
    assert same_line('"win": 0.27316613128866274', '"win": 0.27316613128866307')
    assert not same_line('"win": 0.27316613128866274', '"win": 0.27316613228866274')
    assert not same_line("1,651,630 states", "1,651,631 states")
    assert not same_line("keep 1-5", "keep 1-5-5")


def test_readme_shows_nothing_that_depends_on_the_cpu() -> None:
    """No example shows a residual at round-off level, whose digits depend on the CPU (solve says "below 1e-12")."""
    from cinqmille.solver.level import residual_words

    assert residual_words(0.0) == residual_words(3.3e-16) == "residual below 1e-12"
    assert residual_words(5.2e-5) == "residual 5.2e-05"
    for example in _EXAMPLES:
        for line in example.shown:
            assert not re.search(r"residual \d(?:\.\d+)?e-(?:1[3-9]|[2-9]\d)", line), line
