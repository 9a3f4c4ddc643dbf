"""An install that survives the README (issue 29): the compiled kernel cached in the user's cache folder, never in
the package, and read with care; `.[test]` installing what the tests import; the README's Quick start as CI runs
it; a process short of memory (``ulimit -v``) told so in one line."""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement

import cinqmille
from cinqmille import address_space
from cinqmille.cli.common import friendly_errors
from cinqmille.solver import kernel_cache

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(cinqmille.__file__).resolve().parent

#: A solve in a fresh process (the compiled kernel read from the cache folder or compiled): its first player's
#: chance, the UserWarnings it gave, and the compiled functions' cache hits and misses.
SOLVE = """
import json, warnings
from cinqmille.rules import rules_from_dict
from cinqmille.solver import compiled, compute
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    win = compute(rules_from_dict({"goal": 500, "opening": 150})).first_player_win
functions = [f for f in vars(compiled).values() if hasattr(f, "stats") and hasattr(f, "py_func")]
print(json.dumps({"win": win, "warnings": [str(w.message) for w in caught if issubclass(w.category, UserWarning)],
                  "hits": sum(sum(f.stats.cache_hits.values()) for f in functions),
                  "misses": sum(sum(f.stats.cache_misses.values()) for f in functions)}))
"""


def solve_in_a_process(cache: Path, timeout: float = 300) -> dict:
    """Run `SOLVE` with `cache` as the cache folder; fail on a traceback."""
    env = {**os.environ, "CINQMILLE_CACHE": str(cache), "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run([sys.executable, "-c", SOLVE], capture_output=True, text=True, env=env, timeout=timeout)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def kernel_files(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / kernel_cache.SUBDIR).rglob("*") if p.suffix in (".nbi", ".nbc"))


@pytest.fixture(scope="module")
def compiled_cache(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, float]:
    """A cache folder holding the compiled kernel (a first run, which compiles it), its run's figures, and the
    time the run started."""
    cache = tmp_path_factory.mktemp("kernel-cache")
    start = time.time()
    return cache, solve_in_a_process(cache), start


def test_the_compiled_kernel_is_cached_in_the_cache_folder_and_read_by_the_next_process(
        compiled_cache: tuple[Path, dict, float], tmp_path: Path) -> None:
    """The first process compiles the kernel into ``numba/`` of the cache folder, writing nothing in the package;
    the next process reads it from there (cache hits, no compile)."""
    cache, first, start = compiled_cache
    assert first["misses"] > 0 and not first["warnings"]
    files = kernel_files(cache)
    assert any(p.suffix == ".nbi" for p in files) and any(p.suffix == ".nbc" for p in files)
    assert all(p.stat().st_mode & 0o077 == 0 for p in files)  # private: they are pickles
    written = [p for p in PACKAGE.rglob("*") if p.suffix in (".nbi", ".nbc") and p.stat().st_mtime >= start - 1]
    assert written == []
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy)
    again = solve_in_a_process(copy)
    assert again["win"] == first["win"] and again["hits"] > 0 and again["misses"] == 0 and not again["warnings"]


def damage(files: list[Path], how: str) -> None:
    """Truncate every data file to half, empty every file, or put a FIFO in each data file's place."""
    for path in files:
        if how == "truncated" and path.suffix == ".nbc":
            with open(path, "r+b") as handle:
                handle.truncate(path.stat().st_size // 2)
        elif how == "emptied":
            path.write_bytes(b"")
        elif how == "fifo" and path.suffix == ".nbc":
            path.unlink()
            os.mkfifo(path)


@pytest.mark.parametrize("how", ["truncated", "emptied", "fifo"])
def test_a_damaged_kernel_cache_is_compiled_again_and_replaced(compiled_cache: tuple[Path, dict, float],
                                                               tmp_path: Path, how: str) -> None:
    """A truncated, emptied or FIFO cache file (issue 29, battery item 9: an UnpicklingError traceback, `Aborted.`,
    a silent hang) is one warning and a fresh compile, with the same answer; the next run reads the rewritten
    cache without a word."""
    cache, first, _ = compiled_cache
    copy = tmp_path / "cache"
    shutil.copytree(cache, copy)
    damage(kernel_files(copy), how)
    run = solve_in_a_process(copy, timeout=120)  # a FIFO opened for reading would block for ever
    assert run["win"] == first["win"] and run["misses"] > 0
    assert len(run["warnings"]) == 1 and "compiling it again" in run["warnings"][0], run["warnings"]
    assert all(p.is_file() and p.stat().st_size > 0 for p in kernel_files(copy))
    again = solve_in_a_process(copy)
    assert again["win"] == first["win"] and again["misses"] == 0 and not again["warnings"]


def test_a_kernel_cache_file_is_opened_only_if_it_is_a_regular_file_of_this_user(tmp_path: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """`read_payload`: a FIFO, a symbolic link (to a good file) and a foreign file are misses, without opening a
    FIFO; a file written by `write_payload` reads back; a FIFO in a file's place is replaced, not opened."""
    monkeypatch.setattr(kernel_cache, "_warned", set())
    good = tmp_path / "good.nbi"
    kernel_cache.write_payload(str(good), b"payload")
    assert kernel_cache.read_payload(str(good)) == b"payload"
    (tmp_path / "link.nbi").symlink_to(good)
    os.mkfifo(tmp_path / "fifo.nbi")
    (tmp_path / "foreign.nbi").write_bytes(b"\x80\x04not ours")
    with pytest.warns(UserWarning, match="link.nbi is not a regular file; compiling it again"):
        assert kernel_cache.read_payload(str(tmp_path / "link.nbi")) is None
    for name in ("fifo.nbi", "foreign.nbi"):  # one warning a process
        assert kernel_cache.read_payload(str(tmp_path / name)) is None
    kernel_cache.write_payload(str(tmp_path / "fifo.nbi"), b"again")
    assert kernel_cache.read_payload(str(tmp_path / "fifo.nbi")) == b"again"


def test_an_unwritable_cache_folder_still_advises_in_at_most_one_warning(tmp_path: Path) -> None:
    """A cache folder that cannot be made (below a regular file): the kernel is compiled in memory, the advice is
    given, exit 0, no traceback and one warning line at most (the table's)."""
    (tmp_path / "file").write_text("")
    env = {**os.environ, "CINQMILLE_CACHE": str(tmp_path / "file" / "cache"), "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run([sys.executable, "-m", "cinqmille", "advise", "--me", "1000", "--opp", "2000", "--roll",
                           "1,5,3,3,2"], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0 and "Keep the 1" in done.stdout, done.stderr[-3000:]
    assert len(done.stderr.strip().splitlines()) <= 1 and "Traceback" not in done.stderr


def test_numba_is_not_told_to_cache_in_the_package() -> None:
    """No compiled function uses Numba's own cache (the package's ``__pycache__``); each has a `KernelCache`."""
    from cinqmille.solver import compiled

    functions = [f for f in vars(compiled).values() if hasattr(f, "py_func") and hasattr(f, "stats")]
    assert functions and all(isinstance(f._cache, kernel_cache.KernelCache) for f in functions)
    assert "njit(cache=True" not in (PACKAGE / "solver" / "compiled.py").read_text()


# --- `.[test]` installs what the tests import -------------------------------------------------------------------

def imported_by_tests() -> set[str]:
    """The top-level modules that the test files import (statements, `importorskip`, `__import__`)."""
    names = set()
    for path in (ROOT / "tests").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
            elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
                    "importorskip", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
                names.add(str(node.args[0].value).split(".")[0])
    local = {p.stem for p in (ROOT / "tests").glob("*.py")} | {"cinqmille"}
    return {n for n in names if n not in sys.stdlib_module_names and n not in local}


def installed_by(requirements: list[str], project: dict) -> set[str]:
    """The distributions (normalised names) that installing `requirements` brings, the project's own extras
    expanded and the installed distributions' requirements followed (with their extras)."""
    def norm(name: str) -> str:
        return re.sub(r"[-_.]+", "-", name).lower()

    found: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    seen: set[tuple[str, frozenset[str]]] = set()
    while todo:
        req = todo.pop()
        key = (norm(req.name), frozenset(req.extras))
        if key in seen:
            continue
        seen.add(key)
        if key[0] == norm(project["name"]):
            todo += [Requirement(r) for r in project["dependencies"]]
            todo += [Requirement(r) for extra in req.extras for r in project["optional-dependencies"][extra]]
            continue
        found.add(key[0])
        try:
            requires = importlib.metadata.requires(req.name) or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requires:
            sub = Requirement(text)
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in req.extras or {""}):
                todo.append(sub)
    return found


def test_the_test_extra_installs_every_package_the_tests_import() -> None:
    """Every third-party module a test file imports comes with ``pip install -e '.[test]'`` (issue 29: the tests
    needed starlette, which `.[test]` did not install), so the README's test command runs them all."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    brought = installed_by([f"{project['name']}[test]"], project)
    where = importlib.metadata.packages_distributions()
    missing = {}
    for module in sorted(imported_by_tests()):
        dists = {re.sub(r"[-_.]+", "-", d).lower() for d in where.get(module, [module])}
        if not dists & brought:
            missing[module] = sorted(dists)
    assert missing == {}


# --- the README's Quick start, as CI runs it -------------------------------------------------------------------

def test_ci_runs_the_readme_quick_start_as_written() -> None:
    """`.ci/quick_start` prints the command lines of README.md's Quick start block, exactly, and `.ci/run` runs
    them (then `cinqmille --help` from another folder)."""
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    printed = subprocess.run(["bash", str(ROOT / ".ci" / "quick_start")], capture_output=True, text=True, check=True)
    assert printed.stdout == block and len(block.splitlines()) == 2
    assert block.splitlines()[0].startswith("python -m pip install . &&")
    run = (ROOT / ".ci" / "run").read_text()
    assert ".ci/quick_start" in run and "cinqmille --help" in run


# --- a process short of memory ----------------------------------------------------------------------------------

def test_too_little_address_space_is_one_line_before_numpy_aborts(tmp_path: Path) -> None:
    """Under ``ulimit -v`` of 300 MB (issue 29: `Error: OSError`, or OpenBLAS ending the process), a command says
    in one line that the address space is too small, exit 2, before NumPy is imported."""
    limit = 300 * 2**20

    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))

    env = {**os.environ, "CINQMILLE_CACHE": str(tmp_path), "PYTHONPATH": str(PACKAGE.parent)}
    done = subprocess.run([sys.executable, "-m", "cinqmille", "advise", "--me", "1000", "--opp", "2000", "--roll",
                           "1,5,3,3,2"], capture_output=True, text=True, env=env, timeout=120, preexec_fn=limited)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("Error: the address space is limited to 300 MB (ulimit -v)")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("exc, words", [
    (MemoryError(), "out of memory: the address space is limited to 600 MB (ulimit -v)"),
    (RuntimeError("can't start new thread"), "out of memory: cannot start a thread: the address space is limited"),
    (ImportError("x.so: failed to map segment from shared object"), "out of memory: cannot load a library: the"),
    (OSError("Could not find/load shared object file 'libllvmlite.so'"), "out of memory: the address space"),
])
def test_a_want_of_memory_under_a_limit_is_one_line(monkeypatch: pytest.MonkeyPatch, exc: BaseException,
                                                     words: str) -> None:
    """Each way a want of memory shows under ``ulimit -v`` (a MemoryError, a thread or a library that cannot
    start or load) is one line naming the limit, exit 2."""
    monkeypatch.setattr(address_space, "limit", lambda: 600 * 2**20)

    @click.command()
    @friendly_errors
    def failing() -> None:
        raise exc

    done = CliRunner().invoke(failing, [])
    assert done.exit_code == 2 and done.output.startswith(f"Error: {words}") and done.output.count("\n") == 1


def test_an_os_error_without_a_number_says_what_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a limit, an OSError that has no error number (a library that cannot be loaded) gives its own words,
    not `Error: OSError`; a RuntimeError that is not about memory is not hidden."""
    monkeypatch.setattr(address_space, "limit", lambda: None)

    @click.command()
    @friendly_errors
    def failing() -> None:
        raise OSError("Could not find/load shared object file 'libllvmlite.so'")

    done = CliRunner().invoke(failing, [])
    assert done.exit_code == 2 and done.output.count("\n") == 1
    assert done.output.startswith("Error: ") and "Could not find/load shared object file 'libllvmlite.so'" in done.output
    assert address_space.worded(RuntimeError("something else")) is None


def test_a_kernel_cache_file_holding_another_signatures_code_is_a_miss(tmp_path: Path) -> None:
    """Two processes compiling two signatures at once once wrote one numbered data file (Numba numbers them by
    the index's length, read before either wrote), so that one signature's code was read for the other and
    crashed: each signature now has its own file, and a file holding another signature's code is a miss."""
    first, second = kernel_cache._File(str(tmp_path), "f", "stamp"), kernel_cache._File(str(tmp_path), "f", "stamp")
    assert first.data_name(("sig", 1)) != first.data_name(("sig", 2))
    first.save(("sig", 1), "code of 1")
    second.save(("sig", 2), "code of 2")  # the other process: its own file
    assert first.load(("sig", 1)) == "code of 1" and second.load(("sig", 2)) == "code of 2"
    # the old race, written by hand: the file listed for signature 1 holds signature 2's code
    kernel_cache.write_payload(str(tmp_path / first.data_name(("sig", 1))), first._dump((("sig", 2), "code of 2")))
    assert first.load(("sig", 1)) is None and first.load(("sig", 2)) == "code of 2"
