"""Hostile input and damaged caches: no traceback, no silent wrong answer.

Four batteries, all through the command line:

1. random argument lists for every command (the real option names, hostile values);
2. random rules files (every documented key, values of every TOML type, `base` chains);
3. random damage to a cached table, and tables that look valid but are not the right one;
4. the examples of the issue "Hostile input and damaged caches", one test each.

Bad input must end with exit status 2 and no traceback (and, for the examples of
section 4, exactly one line on stderr starting with `Error: `); a damaged or
foreign cache file must be recomputed, with at most one `Warning: ` line and
the value of a fresh solve. Every command runs under a watchdog (wall clock,
address space, peak memory), so that a hang or a runaway allocation fails the
test in seconds instead of freezing the machine.

The default run takes well under a minute; `python -m pytest -m slow
tests/test_fuzz.py` runs the bigger batteries (more examples, with shrinking).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from cinqmille.cli import main

# --------------------------------------------------------------------------------------------------
# Limits of the watchdog
# --------------------------------------------------------------------------------------------------

GIB = 2**30
#: Wall-clock seconds one command of a tiny ruleset may take (they take well under one second).
COMMAND_SECONDS = 20.0
#: Address space a command run in this process may add (a safety net: the real check is `RSS_GROWTH`).
AS_HEADROOM = 6 * GIB
#: Growth of this process's peak resident memory that counts as a runaway allocation.
RSS_GROWTH = 1.5 * GIB
#: Address space and wall clock of a command run in its own process (section 4).
SUBPROCESS_AS = 8 * GIB
SUBPROCESS_SECONDS = 30.0
#: Peak resident memory of a command that must be refused before it allocates anything big.
REFUSED_RSS = 1 * GIB
#: Seconds within which a ruleset too big to solve must be refused (in this process).
REFUSE_SECONDS = 5.0
#: An error "line" longer than this is not one line a person can read.
MAX_LINE = 2000

NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)
FAST = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
            phases=NO_SHRINK, print_blob=True)
SLOW = dict(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
            print_blob=True)


class Hang(BaseException):
    """Raised by the watchdog in the command under test when it runs past its time."""


def _vm_bytes() -> int | None:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _max_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    """Run a block under an alarm (raising `Hang`) and an address-space limit, restored afterwards."""
    def on_alarm(signum: int, frame: Any) -> None:
        raise Hang(f"still running after {seconds:g} s")

    old_handler = signal.signal(signal.SIGALRM, on_alarm)
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    vm = _vm_bytes()
    if vm is not None:
        limit = vm + AS_HEADROOM
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old_handler)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


def show(args: Sequence[str]) -> str:
    """The command line, shell-quoted and cut to a readable length."""
    text = "cinqmille " + shlex.join(args)
    return text if len(text) <= 400 else text[:400] + f"... ({len(text):,} characters)"


def cli(args: Sequence[str], *, input: str | None = None, env: dict[str, str] | None = None,
        seconds: float = COMMAND_SECONDS) -> Result:
    """Run `cinqmille ARGS` in this process under the watchdog; a hang or a runaway allocation fails the test."""
    runner = CliRunner()
    before = _max_rss_bytes()
    start = time.monotonic()
    try:
        with watchdog(seconds):
            result = runner.invoke(main, list(args), input=input, env=env, catch_exceptions=True)
    except Hang:
        pytest.fail(f"{show(args)}: still running after {seconds:g} s (a hang, or work that should have "
                    f"been refused)", pytrace=False)
    grown = _max_rss_bytes() - before
    if grown > RSS_GROWTH:
        pytest.fail(f"{show(args)}: peak memory grew by {grown / GIB:.1f} GiB in {time.monotonic() - start:.1f} s "
                    f"(allocated instead of refusing)", pytrace=False)
    return result


def strict_json(text: str, where: str) -> Any:
    """Parse JSON as other programs would: NaN and Infinity are not JSON."""
    def reject(name: str) -> Any:
        raise AssertionError(f"{where}: printed {name} in its JSON output, which is not valid JSON")

    try:
        return json.loads(text, parse_constant=reject)
    except json.JSONDecodeError as exc:
        raise AssertionError(f"{where}: --json output is not JSON ({exc}): {text[:300]!r}") from None


def check_outcome(result: Result, args: Sequence[str]) -> None:
    """Exit status 0 or 2, no traceback, no uncaught exception, and valid JSON where JSON was asked for."""
    where = show(args)
    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        # Re-raise the command's own exception (with the command line as a note), so that Hypothesis
        # reports each distinct crash site separately.
        exc.add_note(f"while running: {where}")
        raise exc
    assert result.exit_code in (0, 2), f"{where}: exit status {result.exit_code}\n{result.output[-1000:]}"
    if result.exit_code == 2:
        assert "Traceback" not in result.output, f"{where}: a traceback on exit 2:\n{result.output[-2000:]}"
    if result.exit_code == 0 and "--json" in args:
        strict_json(result.stdout, where)


def stderr_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def assert_one_line_error(code: int, stderr: str, where: str) -> str:
    """Exit status 2 and exactly one short line on stderr, starting with `Error: `; returns that line."""
    assert "Traceback" not in stderr, f"{where}: traceback:\n{stderr[-3000:]}"
    assert code == 2, f"{where}: exit status {code}, expected 2\nstderr: {stderr[-1500:]}"
    lines = stderr_lines(stderr)
    assert len(lines) == 1, f"{where}: {len(lines)} lines on stderr, expected one:\n{stderr[-1500:]}"
    assert lines[0].startswith("Error: "), f"{where}: stderr does not start with 'Error: ': {lines[0][:300]!r}"
    assert len(lines[0]) <= MAX_LINE, f"{where}: an error line of {len(lines[0]):,} characters"
    return lines[0]


def assert_at_most_one_warning(stderr: str, where: str) -> None:
    """Nothing on stderr but, at most, one line starting with `Warning: `."""
    lines = stderr_lines(stderr)
    assert len(lines) <= 1, f"{where}: {len(lines)} lines on stderr, expected at most one warning:\n{stderr[-1500:]}"
    if lines:
        assert lines[0].startswith("Warning: "), f"{where}: unexpected stderr: {lines[0][:300]!r}"
        assert len(lines[0]) <= MAX_LINE, f"{where}: a warning line of {len(lines[0]):,} characters"


@dataclass
class Run:
    """The outcome of one command run in its own process."""

    code: int
    stdout: str
    stderr: str
    seconds: float
    peak_rss: int  # bytes
    where: str


def run_process(args: Sequence[str], *, env: dict[str, str] | None = None, input: str = "",
                seconds: float = SUBPROCESS_SECONDS, prelude: str | None = None) -> Run:
    """Run `python -m cinqmille ARGS` in a child with an address-space limit; its time and peak memory measured.

    `prelude` is Python code run in the child before the command (to simulate a crash).
    """
    full_env = {**os.environ, "PYTHONUTF8": "1", **(env or {})}
    full_env.pop("CINQMILLE_DEBUG", None)
    if prelude is None:
        cmd = [sys.executable, "-m", "cinqmille", *args]
    else:
        code = (prelude + "\nimport sys\nfrom cinqmille.cli import main\n"
                "sys.argv = ['cinqmille', *sys.argv[1:]]\nmain()\n")
        cmd = [sys.executable, "-c", code, *args]

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (SUBPROCESS_AS, SUBPROCESS_AS))

    where = show(args)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=full_env, preexec_fn=limit)
    out: list[bytes] = []
    err: list[bytes] = []
    pumps = [threading.Thread(target=lambda: out.append(proc.stdout.read())),  # type: ignore[union-attr]
             threading.Thread(target=lambda: err.append(proc.stderr.read()))]  # type: ignore[union-attr]
    for pump in pumps:
        pump.start()
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.write(input.encode())  # type: ignore[union-attr]
        proc.stdin.close()  # type: ignore[union-attr]
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        with contextlib.suppress(OSError):
            os.kill(proc.pid, signal.SIGKILL)

    timer = threading.Timer(seconds, kill)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)  # this child's own resource usage (peak memory)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for pump in pumps:
        pump.join()
    elapsed = time.monotonic() - start
    if timed_out.is_set():
        pytest.fail(f"{where}: still running after {seconds:g} s (a hang, or work that should have been refused)",
                    pytrace=False)
    return Run(proc.returncode, b"".join(out).decode("utf-8", "replace"), b"".join(err).decode("utf-8", "replace"),
               elapsed, usage.ru_maxrss * 1024, where)


def assert_refused(run: Run, *, seconds: float = 20.0) -> str:
    """A one-line error (exit 2), quickly, without allocating."""
    line = assert_one_line_error(run.code, run.stderr, run.where)
    assert run.seconds <= seconds, f"{run.where}: refused only after {run.seconds:.1f} s"
    assert run.peak_rss <= REFUSED_RSS, f"{run.where}: peak memory {run.peak_rss / GIB:.2f} GiB before refusing"
    return line


# --------------------------------------------------------------------------------------------------
# Shared files
# --------------------------------------------------------------------------------------------------

class Scratch:
    """Files the random command lines point at (a plain class: Hypothesis prints it by its short repr)."""

    def __init__(self, root: Path, tiny: Path):
        self.root, self.tiny = root, tiny
        self.blocker = root / "blocker.csv"  # a regular file, used where a directory is expected
        self.bad_toml = root / "bad.toml"
        self.huge_goal = root / "huge.toml"
        self.giant_goal = root / "giant.toml"
        self.long_name = root / ("x" * 300 + ".toml")

    def __repr__(self) -> str:
        return f"Scratch({str(self.root)!r})"


@pytest.fixture
def scratch(tmp_path: Path, tiny_rules_file: Path) -> Scratch:
    """A scratch directory with a few hostile files beside the tiny ruleset."""
    s = Scratch(tmp_path, tiny_rules_file)
    s.blocker.write_text("a regular file\n")
    s.bad_toml.write_text("goal = = 5\n[[[\n")
    s.huge_goal.write_text("goal = 1000000000000000000000\n")
    s.giant_goal.write_text("goal = 1000000000\nopening = 0\n")
    return s


# --------------------------------------------------------------------------------------------------
# 1. Random command lines
# --------------------------------------------------------------------------------------------------

NASTY = (
    "", " ", "-", "-1", "-0", "0", "+5", "1_000", "_1", "1__0", "³", "٣", "٣٠٠", "１２", "½", "Ⅻ", "1,5,³", "1e3",
    "1.5", "nan", "inf", "-inf", "0x10", "9" * 18, "9" * 19, "9" * 30, "1" * 5000, "-" + "9" * 25, ",", ",,,",
    "1,5", "15332", "1,5,3,3,2,2", "7", "/", "..", "a" * 300, "\t", "\n", "💥", "'", '"', "None", "true",
    "150:300", ":", "300:150", "1/2", "/", "-50/2", "10**12", "1000000000000", "%s", "{}", "\\",
)
#: Numbers that a command must refuse (or handle) without trying to do that much work.
HUGE = (10**12, 10**15, 2**62, 2**63 - 1, 2**63, 2**64, 10**21, 10**100)
#: A bounded amount of work: what the valid part of a draw may ask for.
SMALL_GAMES = st.integers(1, 40)


@st.composite
def pick(draw: st.DrawFn, *weighted: tuple[int, st.SearchStrategy[Any]]) -> Any:
    """Draw from one of `weighted` (weight, strategy) pairs, chosen in proportion to the weights.

    (`st.one_of` with a strategy repeated does not weight it: repeated branches collapse.)
    """
    index = draw(st.sampled_from([i for i, (weight, _) in enumerate(weighted) for _ in range(weight)]))
    return draw(weighted[index][1])


def chance(draw: st.DrawFn, tenths: int) -> bool:
    """True with probability about `tenths`/10."""
    return draw(st.sampled_from([True] * tenths + [False] * (10 - tenths)))


def junk() -> st.SearchStrategy[str]:
    """Any text without NUL (Click and the OS cannot carry it), short or long."""
    chars = st.characters(exclude_characters="\x00", exclude_categories=("Cs",))
    return st.one_of(st.text(chars, max_size=30), st.text(chars, min_size=200, max_size=2000))


def nasty() -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(NASTY), junk(), st.integers(-10**30, 10**30).map(str),
                     st.sampled_from(HUGE).map(str), st.sampled_from(HUGE).map(lambda n: str(-n)))


def hostile(valid: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Mostly `valid`, else something hostile."""
    return pick((2, valid), (1, nasty()))


def rules_specs(s: Scratch, presets: bool) -> st.SearchStrategy[str]:
    """Values of --rules: the tiny file mostly, else a preset (`presets`) or something hostile."""
    bad = st.sampled_from([
        "", " ", "/dev/zero", "/dev/null/x.toml", str(s.root), str(s.root / "missing.toml"), "no-such-preset",
        str(s.blocker / "x.toml"), "a" * 5000, str(s.long_name), "a" * 300, "standard,house", "³",
        "../" * 60 + "x.toml",
        str(s.bad_toml), str(s.huge_goal), str(s.giant_goal), str(s.blocker),
    ])
    valid = st.just(str(s.tiny))
    if presets:
        presets_list = ["standard", "wikipedia", "house", "sheet", "six-dice", "ten-thousand"]
        valid = st.one_of(valid, st.sampled_from(presets_list))
    return pick((6, valid), (1, bad), (1, junk()))


def multiples(lo: int, hi: int) -> st.SearchStrategy[str]:
    return st.integers(lo // 50, hi // 50).map(lambda k: str(50 * k))


POLICIES = ("optimal", "expected", "cautious", "random", "threshold:300", "threshold:350/2", "threshold:0",
            "threshold:50/1", "threshold:900000000000000000")
BAD_POLICIES = ("threshold:³", "threshold:-50", "threshold:" + "9" * 30, "threshold:10/0", "threshold:10/99",
                "optimal," * 20, "threshold:1e3", "threshold:٣٠٠", "threshold:", "threshold:/", "threshold:25",
                "optimal,nobody", "optimal", "", ",", "optimal,,expected", "OPTIMAL,expected")


def players_lists() -> st.SearchStrategy[str]:
    valid = st.lists(st.sampled_from(POLICIES), min_size=2, max_size=4).map(",".join)
    return pick((4, valid), (1, st.sampled_from(BAD_POLICIES)), (1, nasty()))


def faces_text() -> st.SearchStrategy[str]:
    return st.tuples(st.lists(st.integers(1, 6), min_size=1, max_size=5), st.sampled_from([",", "", " ", "-"])) \
        .map(lambda t: t[1].join(map(str, t[0])))


@st.composite
def command_lines(draw: st.DrawFn, s: Scratch) -> tuple[list[str], str | None]:
    """A random command line of one command (and the text typed at `play`'s prompts)."""
    command = draw(st.sampled_from(["rules", "odds", "solve", "advise", "export", "play", "simulate", "compare"]))
    args: list[str] = []
    typed: str | None = None

    def opt(name: str, values: st.SearchStrategy[str], p_absent: float = 0.4) -> None:
        if chance(draw, round(10 * (1 - p_absent))):
            args.extend([name, draw(values)])

    def flag(name: str) -> None:
        if chance(draw, 5):
            args.append(name)

    if command == "rules":
        sub = draw(st.sampled_from(["list", "show", "show", "bogus"]))
        args.append(sub)
        if sub == "show":
            args.append(draw(rules_specs(s, presets=True)))
        flag("--json")
    else:
        args.extend(["--rules", draw(rules_specs(s, presets=command == "odds"))])  # never the slow default
    if command == "odds":
        flag("--json")
    elif command == "solve":
        opt("--objective", hostile(st.sampled_from(["win", "expected", "race"])))
        flag("--no-cache")
        opt("--max-states", st.one_of(st.integers(1, 10**6).map(str), st.sampled_from(NASTY)), 0.7)
        opt("--max-memory", st.one_of(st.integers(1, 64).map(str), st.sampled_from(NASTY)), 0.7)
        flag("--json")
    elif command == "advise":
        scores = hostile(st.sampled_from(["0", "150", "200", "300", "450"]))
        opt("--me", scores)
        opt("--opp", scores)
        opt("--turn", hostile(multiples(0, 500)))
        opt("--dice", hostile(st.integers(1, 5).map(str)))
        opt("--roll", hostile(faces_text()))
        opt("--seat", hostile(st.sampled_from(["first", "second"])), 0.7)
        opt("--offer", hostile(st.tuples(multiples(0, 500), st.integers(0, 6)).map(lambda t: f"{t[0]}/{t[1]}")), 0.7)
        opt("--target", hostile(multiples(450, 700)), 0.7)
        flag("--json")
        if chance(draw, 3):  # the roll as arguments: advise [OPTIONS] 1 5 3 3 2
            args.extend(draw(st.lists(hostile(st.sampled_from(["1", "2", "3", "4", "5", "6", "15", "1,5"])),
                                      min_size=1, max_size=6)))
    elif command == "export":
        outputs = [s.root / "out.csv", s.root / "out.npz", s.root / "out.parquet", s.root / "out",
                   s.root / "out.xyz", s.root / "sub" / "deep" / "out.csv", s.root, s.root / ("x" * 300 + ".csv"),
                   s.blocker / "out.csv", s.blocker, s.root / ".hidden.csv"]
        args.extend(["-o", draw(st.sampled_from([*map(str, outputs), ""]))])
        opt("--format", hostile(st.sampled_from(["csv", "npz", "parquet"])), 0.6)
        ranges = st.one_of(st.sampled_from(["150", "0", "150:300", ":", "all", "", "0:450"]), multiples(0, 500))
        opt("--me", hostile(ranges))
        opt("--opp", hostile(ranges))
    elif command == "play":
        opt("--players", hostile(st.sampled_from(["human,bot", "bot,human", "human,human", "bot,bot", "human,bot,bot",
                                                  ",".join(["human"] * 8), ",".join(["bot"] * 9)])))
        opt("--seed", hostile(st.integers(0, 2**63 - 1).map(str)))
        answers = st.one_of(st.sampled_from(["", "?", "b", "r", "bank", "roll", "y", "n", "yes", "³", "٣", "1", "5",
                                             "15", "１", "11111", "7", "0", "-1", "9" * 30, "q", "150", "50"]),
                            junk().map(lambda t: t.replace("\n", " ").replace("\r", " ")))
        typed = "\n".join(draw(st.lists(answers, max_size=25))) + draw(st.sampled_from(["", "\n", "\nq\n"]))
    elif command == "simulate":
        opt("--players", players_lists(), 0.1)
        games = pick((4, SMALL_GAMES.map(str)), (1, st.sampled_from(NASTY)), (1, st.sampled_from(HUGE).map(str)))
        opt("--games", games, 0.2)
        opt("--seed", hostile(st.integers(0, 2**63 - 1).map(str)))
        opt("--jobs", st.sampled_from(["1", "0", "-1", "³", "", "x", "1.5", "9" * 30]), 0.7)
        backend = draw(pick((3, st.sampled_from(["loky", "dask", None])), (1, nasty())))
        if backend is not None:
            args.extend(["--backend", backend])
        if backend != "dask":
            opt("--scheduler", nasty(), 0.8)
        opt("--engine", hostile(st.sampled_from(["auto", "vectorised", "referee"])))
        opt("--batch-size", hostile(st.one_of(st.integers(1, 50).map(str), st.sampled_from(HUGE).map(str))), 0.6)
        flag("--json")
    elif command == "compare":
        games = pick((4, st.integers(2, 20).map(str)), (1, st.sampled_from(NASTY)), (1, st.sampled_from(HUGE).map(str)))
        args.extend(["--games", draw(games), "--referee-games", draw(games)])
        opt("--thresholds", hostile(st.lists(multiples(0, 600), min_size=1, max_size=3).map(",".join)), 0.2)
        opt("--seed", hostile(st.integers(0, 2**63 - 1).map(str)), 0.6)
        opt("--jobs", st.sampled_from(["1", "0", "-1", "³", ""]), 0.8)
        opt("--markdown", st.sampled_from([str(s.root / "page.md"), str(s.root), str(s.blocker / "page.md"), ""]), 0.7)
        opt("--plots", st.sampled_from([str(s.blocker)]), 0.9)
        flag("--json")
    if chance(draw, 1) and chance(draw, 5):  # now and then: an unknown option, or an option without its value
        args.append(draw(st.sampled_from(["--bogus", "--rules", "--seed", "extra", "--json=1", "-x"])))
    return [command, *args], typed


def _cli_example(s: Scratch, line: tuple[list[str], str | None]) -> None:
    args, typed = line
    if args[0] == "play" and typed is None:
        typed = ""
    result = cli(args, input=typed)
    check_outcome(result, args)


@settings(max_examples=150, **FAST)
@given(data=st.data())
def test_random_command_lines_end_in_exit_0_or_2_without_traceback(data: st.DataObject, scratch: Scratch,
                                                                   session_cache: Path) -> None:
    """Random command lines of every command end with exit status 0 or 2, never a traceback or invalid JSON."""
    _cli_example(scratch, data.draw(command_lines(scratch), label="command line"))


@pytest.mark.slow
@settings(max_examples=1500, **SLOW)
@given(data=st.data())
def test_random_command_lines_battery(data: st.DataObject, scratch: Scratch, session_cache: Path) -> None:
    """The same property as the quick command-line fuzz, over many more examples, with shrinking."""
    _cli_example(scratch, data.draw(command_lines(scratch), label="command line"))


# --------------------------------------------------------------------------------------------------
# 2. Random rules files
# --------------------------------------------------------------------------------------------------

#: Every key a rules file may hold (docs/rules.md), and the keys of its tables.
KEYS = ("name", "description", "base", "dice", "goal", "end", "opening", "min_bank", "single", "triple",
        "multiples", "straights", "full_house", "five_ones", "five_fives", "split_combinations",
        "must_keep_triples", "all_scoring_roll", "hot_dice", "rule_of_50", "take_over", "last_round", "crosses",
        "bust_strikes_last_score", "ties", "prediction", "final_stretch", "zero_turns")
SUB_KEYS = ("1", "2", "3", "4", "5", "6", "from", "cap", "count", "to", "0", "7", "x", "")
WORDS = ("reach", "exact", "additive", "linear", "doubling", "win", "multiples", "free", "keep_all_and_roll",
         "optional", "mandatory", "off", "knock_back", "deadly", "zero", "previous", "standard", "house", "")


class Raw(str):
    """A TOML literal written as is (numbers Python cannot print, dates, special floats)."""


RAW = ("inf", "-inf", "nan", "+nan", "1e400", "-0.0", "0.5", "1979-05-27T07:32:00Z", "1979-05-27", "07:32:00",
       "0x7fffffffffffffff", "0xffffffffffffffffffff", "0o777", "0b1010", "2_00", "+50", "9223372036854775808",
       "-9223372036854775809", "9" * 5000, "-" + "9" * 5000, "1" + "0" * 4400)
BIG_INTS = (10**6, 10**7, 10**9, 2**31, 2**63 - 1, 2**63, 2**64, 10**20, 10**21, -10**21)


def toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)


def toml_value(value: Any) -> str:
    """A TOML literal of `value` (inline tables and arrays for nested values)."""
    if isinstance(value, Raw):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def toml_document(data: dict[str, Any]) -> str:
    return "".join(f"{toml_key(k)} = {toml_value(v)}\n" for k, v in data.items())


def scalars() -> st.SearchStrategy[Any]:
    text = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=20)
    return st.one_of(
        st.integers(0, 40).map(lambda k: 50 * k), st.integers(-10**6, 10**6), st.sampled_from(BIG_INTS),
        st.booleans(), st.sampled_from(WORDS), text, st.sampled_from(RAW).map(Raw),
        st.floats(allow_nan=False, allow_infinity=False),
    )


def any_value() -> st.SearchStrategy[Any]:
    return st.recursive(scalars(), lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(SUB_KEYS), inner, max_size=3)), max_leaves=6)


def plausible(key: str) -> st.SearchStrategy[Any]:
    """Values of `key` that are often valid (small enough to solve in a second or two)."""
    pts = lambda lo, hi: st.integers(lo // 50, hi // 50).map(lambda k: 50 * k)  # noqa: E731
    return {
        "dice": st.sampled_from([5, 6]),
        "end": st.sampled_from(["reach", "exact"]),
        "opening": pts(0, 150), "min_bank": pts(0, 150),
        "single": st.fixed_dictionaries({}, optional={"1": pts(0, 200), "5": pts(0, 100)}),
        "triple": st.dictionaries(st.sampled_from("123456"), pts(50, 1500), max_size=3),
        "multiples": st.sampled_from(["additive", "linear", "doubling"]),
        "straights": st.one_of(pts(0, 2000), st.just(False)), "full_house": st.one_of(pts(0, 1000), st.just(False)),
        "five_ones": st.one_of(st.sampled_from(["win", "multiples"]), pts(50, 3000)),
        "five_fives": st.one_of(st.sampled_from(["win", "multiples"]), pts(50, 3000)),
        "all_scoring_roll": st.sampled_from(["free", "keep_all_and_roll"]),
        "hot_dice": st.sampled_from(["optional", "mandatory"]),
        "ties": st.sampled_from(["off", "knock_back", "deadly"]),
        "final_stretch": st.one_of(st.just(False), st.fixed_dictionaries({}, optional={"from": pts(100, 250),
                                                                                        "cap": st.booleans()})),
        "zero_turns": st.one_of(st.just(False), st.fixed_dictionaries({}, optional={
            "count": st.integers(1, 4),
            "to": st.one_of(st.sampled_from(["zero", "previous"]), pts(50, 200).map(lambda v: -v))})),
        "name": st.text(st.characters(categories=("L", "N", "P", "Zs")), max_size=30),
        "description": st.text(st.characters(categories=("L", "N", "P", "Zs")), max_size=60),
    }.get(key, st.booleans())


#: The goal of the top file: small (fast to solve), or hostile (must be refused, whatever the limits).
GOALS = pick((8, st.integers(3, 6).map(lambda k: 50 * k)),
             (1, st.sampled_from((10**6, 10**7, 10**9, 10**18, 10**21, Raw("9" * 5000), Raw("0x7fffffffffffffff")))),
             (1, scalars()))
#: Where the last file of a chain points: nowhere (mostly), a preset, a loop, nonsense.
LAST_BASE = pick(
    (6, st.none()), (1, st.sampled_from(["standard", "house", "six-dice", "wikipedia"])),
    (1, st.sampled_from(["missing.toml", "..", ".", "", "/dev/zero", "f0.toml", "../chain/f0.toml", "./f0.toml",
                         "ABS/f0.toml", "ABS", "../chain/../chain/f0.toml", "f1.toml"])),
    (1, any_value()))


@st.composite
def rules_documents(draw: st.DrawFn, top: bool = False) -> dict[str, Any]:
    """One rules file: a few of the real keys (and, in the top file, now and then an unknown one)."""
    keys = [k for k in KEYS if k not in ("base", "goal", "opening")]
    if top:
        keys += ["junk_key", "Goal", "single.1"]
    doc: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(keys), max_size=5, unique=True)):
        doc[key] = draw(pick((12, plausible(key)), (1, any_value())))
    return doc


@st.composite
def rules_chains(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A chain of rules files linked by `base` (file 0 is the one loaded); the last link is anything."""
    n = draw(st.sampled_from([0, 0, 1, 2, 3]))
    files = [draw(rules_documents(top=i == 0)) for i in range(n + 1)]
    opening = draw(pick((12, st.integers(0, 2).map(lambda k: 50 * k)), (1, any_value())))
    files[0] = {"goal": draw(GOALS), "opening": opening, **files[0]}
    for i in range(n):
        files[i]["base"] = draw(st.sampled_from([f"f{i + 1}.toml", f"./f{i + 1}.toml", f"../chain/f{i + 1}.toml",
                                                 f"ABS/f{i + 1}.toml"]))
    last = draw(LAST_BASE)
    if last is not None:
        files[n]["base"] = last
    return files


def _write_chain(root: Path, files: list[dict[str, Any]]) -> Path:
    folder = Path(tempfile.mkdtemp(dir=root)) / "chain"
    folder.mkdir()
    for i, doc in enumerate(files):
        doc = {k: (Raw(json.dumps(v.replace("ABS", str(folder)))) if k == "base" and isinstance(v, str) else v)
               for k, v in doc.items()}
        (folder / f"f{i}.toml").write_text(toml_document(doc), encoding="utf-8")
    return folder / "f0.toml"


def _rules_file_example(root: Path, files: list[dict[str, Any]]) -> None:
    path = _write_chain(root, files)
    show_args = ["rules", "show", str(path), "--json"]
    shown = cli(show_args, seconds=10)
    check_outcome(shown, show_args)
    if shown.exit_code == 0:
        # The TOML that `rules show` prints reads back to the same ruleset (docs/rules.md).
        toml_args = ["rules", "show", str(path)]
        as_toml = cli(toml_args, seconds=10)
        check_outcome(as_toml, toml_args)
        again = path.parent / "again.toml"
        again.write_text(as_toml.stdout, encoding="utf-8")
        back_args = ["rules", "show", str(again), "--json"]
        back = cli(back_args, seconds=10)
        check_outcome(back, back_args)
        assert back.exit_code == 0, f"{show(back_args)}: the output of `rules show` does not read back:\n{back.stderr}"
        assert strict_json(back.stdout, show(back_args)) == strict_json(shown.stdout, show(show_args)), \
            f"{show(toml_args)}: its output reads back to another ruleset"
    solve_args = ["solve", "--rules", str(path), "--json"]
    start = time.monotonic()
    solved = cli(solve_args, seconds=COMMAND_SECONDS)
    elapsed = time.monotonic() - start
    check_outcome(solved, solve_args)
    if shown.exit_code == 2:
        assert solved.exit_code == 2, f"{show(solve_args)}: solved a ruleset that `rules show` refuses"
    if solved.exit_code == 2:
        assert elapsed < REFUSE_SECONDS, f"{show(solve_args)}: refused only after {elapsed:.1f} s"
    if solved.exit_code == 0:
        win = strict_json(solved.stdout, show(solve_args))["first_player_win"]
        assert isinstance(win, float) and 0.0 <= win <= 1.0, f"{show(solve_args)}: first_player_win = {win!r}"


@settings(max_examples=60, **FAST)
@given(files=rules_chains())
def test_random_rules_files_are_shown_and_solved_or_refused(files: list[dict[str, Any]], tmp_path: Path,
                                                            session_cache: Path) -> None:
    """A random rules file (or chain of files) is shown and solved, or refused in one line, in a few seconds."""
    _rules_file_example(tmp_path, files)


@pytest.mark.slow
@settings(max_examples=400, **SLOW)
@given(files=rules_chains())
def test_random_rules_files_battery(files: list[dict[str, Any]], tmp_path: Path, session_cache: Path) -> None:
    """The same property as the quick rules-file fuzz, over many more examples, with shrinking."""
    _rules_file_example(tmp_path, files)


#: Rule switches, each valid alone on a small ruleset (goal 300, no opening).
SWITCHES = {
    "last_round": "last_round = true", "take_over": "take_over = true", "prediction": "prediction = true",
    "rule_of_50": "rule_of_50 = true", "exact": 'end = "exact"', "hot_mandatory": 'hot_dice = "mandatory"',
    "keep_all": 'all_scoring_roll = "keep_all_and_roll"', "six_dice": "dice = 6",
    "stretch": "[final_stretch]\nfrom = 200", "must_triples": "must_keep_triples = true",
    "no_split": "split_combinations = false", "linear": 'multiples = "linear"', "ones_multiples": 'five_ones = "multiples"',
    "min_bank": "min_bank = 100", "crosses": "crosses = true", "zero_turns": "[zero_turns]\ncount = 2",
    "ties": 'ties = "deadly"', "full_house": "full_house = 500",
}


def test_last_round_with_prediction_solves_or_is_refused(tmp_path: Path, session_cache: Path) -> None:
    """A valid ruleset with both `last_round` and `prediction` (found by the rules-file fuzz) solves or is refused."""
    path = tmp_path / "lr-predict.toml"
    path.write_text("goal = 300\nopening = 0\nlast_round = true\nprediction = true\n")
    args = ["solve", "--rules", str(path), "--json"]
    result = cli(args)
    check_outcome(result, args)
    if result.exit_code == 2:
        assert_one_line_error(result.exit_code, result.stderr, show(args))


@pytest.mark.slow
@pytest.mark.parametrize("pair", [f"{a}+{b}" for i, a in enumerate(SWITCHES) for b in list(SWITCHES)[i + 1:]])
def test_every_pair_of_rule_switches_solves_or_is_refused(pair: str, tmp_path: Path, session_cache: Path) -> None:
    """Any two rule switches together on a small ruleset solve to a chance in [0, 1], or are refused in one line."""
    a, b = pair.split("+")
    flat = [SWITCHES[k] for k in (a, b) if not SWITCHES[k].startswith("[")]
    tables = [SWITCHES[k] for k in (a, b) if SWITCHES[k].startswith("[")]
    path = tmp_path / "pair.toml"
    path.write_text("goal = 300\nopening = 0\n" + "\n".join(flat) + "\n" + "\n".join(tables) + "\n")
    args = ["solve", "--rules", str(path), "--json"]
    result = cli(args)
    check_outcome(result, args)
    if result.exit_code == 2:
        assert_one_line_error(result.exit_code, result.stderr, show(args))
    else:
        win = strict_json(result.stdout, show(args))["first_player_win"]
        assert 0.0 <= win <= 1.0, f"{show(args)}: first_player_win = {win!r}"


# --------------------------------------------------------------------------------------------------
# 3. Damaged and foreign cache files
# --------------------------------------------------------------------------------------------------

class Tables:
    """Valid cache files made once per module, and the answers of fresh solves (printed short by Hypothesis)."""

    def __init__(self, tiny: Path, name: str, good: bytes, fresh: dict[str, Any], foreign: bytes,
                 foreign_fresh: dict[str, Any], expected: bytes, meta: dict[str, Any], arrays: dict[str, np.ndarray],
                 advice: dict[str, Any]):
        self.tiny = tiny  # the rules file the damaged caches belong to
        self.name = name  # the file name of its cached `win` table
        self.good = good  # that file's bytes
        self.fresh = fresh  # `solve --json --no-cache`, without the time
        self.foreign = foreign  # the `win` table of another ruleset (same name "tiny" and shape, other values)
        self.foreign_fresh = foreign_fresh
        self.expected = expected  # the `expected` table of the tiny ruleset
        self.meta = meta  # metadata of the good file
        self.arrays = arrays
        self.advice = advice  # `advise ADVISE_POSITION --json` with a sound cache

    def __repr__(self) -> str:
        return f"Tables({self.name!r})"


#: A position whose advice reads cells of the table other than the first player's chance.
ADVISE_POSITION = ("--me", "150", "--opp", "300", "--turn", "100", "--dice", "3", "--json")


def headline(stdout: str, where: str) -> dict[str, Any]:
    data = strict_json(stdout, where)
    data.pop("seconds", None)
    return data


def _solve_in(cache_dir: Path, rules: Path, *extra: str) -> Result:
    return cli(["solve", "--rules", str(rules), "--json", *extra], env={"CINQMILLE_CACHE": str(cache_dir)})


def _only_table(folder: Path) -> Path:
    found = sorted(folder.glob("*.npz"))
    assert len(found) == 1, f"expected one cache file in {folder}, found {[p.name for p in found]}"
    return found[0]


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory, tiny_rules_file: Path) -> Tables:
    """Solve the tiny ruleset, another one and the tiny `expected` objective into private caches."""
    root = tmp_path_factory.mktemp("tables")
    good_dir, foreign_dir, expected_dir = root / "good", root / "foreign", root / "expected"
    fresh = _solve_in(root / "unused", tiny_rules_file, "--no-cache")
    assert fresh.exit_code == 0, fresh.output
    made = _solve_in(good_dir, tiny_rules_file)
    assert made.exit_code == 0, made.output
    good = _only_table(good_dir)
    other = root / "other" / "tiny.toml"  # the same name and shape, single 5s worth 100: another table
    other.parent.mkdir()
    other.write_text('name = "tiny"\ngoal = 500\nopening = 150\n[single]\n5 = 100\n')
    foreign_fresh = _solve_in(root / "unused", other, "--no-cache")
    assert _solve_in(foreign_dir, other).exit_code == 0
    assert cli(["solve", "--rules", str(tiny_rules_file), "--objective", "expected", "--json"],
               env={"CINQMILLE_CACHE": str(expected_dir)}).exit_code == 0
    with np.load(good, allow_pickle=False) as npz:
        arrays = {k: npz[k] for k in npz.files if k != "meta"}
        meta = json.loads(str(npz["meta"]))
    advice = cli(["advise", "--rules", str(tiny_rules_file), *ADVISE_POSITION], env={"CINQMILLE_CACHE": str(good_dir)})
    assert advice.exit_code == 0, advice.output
    tables = Tables(tiny_rules_file, good.name, good.read_bytes(), headline(fresh.stdout, "fresh solve"),
                    _only_table(foreign_dir).read_bytes(), headline(foreign_fresh.stdout, "fresh foreign solve"),
                    _only_table(expected_dir).read_bytes(), meta, arrays, strict_json(advice.stdout, "advise"))
    assert tables.foreign_fresh["first_player_win"] != tables.fresh["first_player_win"], \
        "the foreign ruleset must have another value for the test to mean anything"
    return tables


def _served_value_is_fresh(tables: Tables, folder: Path, what: str) -> None:
    """Over the damaged file, `solve --json` and `advise` answer as with a sound cache (one warning at most),
    and the file is sound afterwards."""
    damaged = folder / tables.name
    other = Path(tempfile.mkdtemp(dir=folder.parent))  # the same damage, for `advise`
    if damaged.is_file():
        shutil.copyfile(damaged, other / tables.name)
    args = ["solve", "--rules", str(tables.tiny), "--json"]
    where = f"{show(args)} [cache: {what}]"
    first = _solve_in(folder, tables.tiny)
    check_outcome(first, args)
    assert first.exit_code == 0, f"{where}: exit status {first.exit_code}:\n{first.stderr[-1500:]}"
    assert headline(first.stdout, where) == tables.fresh, \
        f"{where}: served {headline(first.stdout, where)}, a fresh solve gives {tables.fresh}"
    assert_at_most_one_warning(first.stderr, where)
    second = _solve_in(folder, tables.tiny)
    check_outcome(second, args)
    assert second.exit_code == 0 and headline(second.stdout, where) == tables.fresh, f"{where}: second run differs"
    assert not stderr_lines(second.stderr), f"{where}: the damage was not repaired: {second.stderr[-500:]}"
    if (other / tables.name).exists():
        advise = ["advise", "--rules", str(tables.tiny), *ADVISE_POSITION]
        where = f"{show(advise)} [cache: {what}]"
        result = cli(advise, env={"CINQMILLE_CACHE": str(other)})
        check_outcome(result, advise)
        assert result.exit_code == 0, f"{where}: exit status {result.exit_code}:\n{result.stderr[-1500:]}"
        assert strict_json(result.stdout, where) == tables.advice, f"{where}: the advice differs from a sound cache's"
        assert_at_most_one_warning(result.stderr, where)


def _damage(data: bytes, ops: list[tuple[str, int, bytes]]) -> bytes:
    out = bytearray(data)
    for kind, pos, blob in ops:
        at = pos % (len(out) + 1)
        if kind == "flip" and out:
            at = pos % len(out)
            out[at] ^= 1 << (blob[0] % 8) if blob else 1
        elif kind == "set":
            out[at:at + len(blob)] = blob
        elif kind == "truncate":
            del out[at:]
        elif kind == "insert":
            out[at:at] = blob
        elif kind == "delete":
            del out[at:at + max(1, len(blob))]
        elif kind == "append":
            out.extend(blob)
    return bytes(out)


DAMAGE = st.lists(st.tuples(st.sampled_from(["flip", "flip", "flip", "set", "truncate", "insert", "delete", "append"]),
                            st.integers(0, 10**6), st.binary(min_size=1, max_size=16)), min_size=1, max_size=4)


def _damage_example(tables: Tables, root: Path, ops: list[tuple[str, int, bytes]]) -> None:
    folder = Path(tempfile.mkdtemp(dir=root))
    (folder / tables.name).write_bytes(_damage(tables.good, ops))
    _served_value_is_fresh(tables, folder, f"damaged by {ops}")


@settings(max_examples=80, **FAST)
@given(ops=DAMAGE)
def test_random_damage_to_a_cached_table_never_serves_a_wrong_value(ops: list[tuple[str, int, bytes]],
                                                                    tables: Tables, tmp_path: Path) -> None:
    """A cached table with random bytes flipped, cut, inserted or overwritten gives the fresh value, and is repaired."""
    _damage_example(tables, tmp_path, ops)


@pytest.mark.slow
@settings(max_examples=600, **SLOW)
@given(ops=DAMAGE)
def test_random_damage_battery(ops: list[tuple[str, int, bytes]], tables: Tables, tmp_path: Path) -> None:
    """The same property as the quick cache-damage fuzz, over many more examples, with shrinking."""
    _damage_example(tables, tmp_path, ops)


def _resave(path: Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    """Write a table with a correct checksum (the project's own writer), keeping the original identity."""
    from cinqmille.solver import cache

    base = {k: v for k, v in meta.items() if k not in ("checksum", "arrays")}
    cache.save_npz(path, arrays, base)


def _huge_header_table(path: Path, meta: dict[str, Any]) -> None:
    """A zip whose `values.npy` header claims 10**12 float64 values but holds a few bytes."""
    header = {"descr": "<f8", "fortran_order": False, "shape": (10**12,)}
    with zipfile.ZipFile(path, "w") as archive:
        with archive.open("values.npy", "w") as handle:
            np.lib.format.write_array_header_1_0(handle, header)
            handle.write(b"\0" * 64)
        with archive.open("meta.npy", "w") as handle:
            np.lib.format.write_array(handle, np.array(json.dumps(meta)))


def _raw_npz(path: Path, arrays: dict[str, np.ndarray], meta_text: str) -> None:
    """An npz of `arrays` whose metadata entry is `meta_text`."""
    with open(path, "wb") as handle:
        np.savez_compressed(handle, **arrays, meta=np.array(meta_text))


def _values(fn: Any) -> Any:
    """A crafter that rewrites the `values` array with `fn` and saves it with a correct checksum."""
    def craft(t: Tables, path: Path) -> None:
        _resave(path, {**t.arrays, "values": fn(t.arrays["values"])}, t.meta)
    return craft


def _where_finite(new: float) -> Any:
    return _values(lambda v: np.where(np.isfinite(v), new, v))


def _shift_finite(delta: float) -> Any:
    return _values(lambda v: np.where(np.isfinite(v), v + delta, v))


CRAFTED = {
    "garbage": lambda t, p: p.write_bytes(b"not a zip file at all"),
    "empty": lambda t, p: p.write_bytes(b""),
    "directory": lambda t, p: p.mkdir(),
    "foreign ruleset's valid table": lambda t, p: p.write_bytes(t.foreign),
    "the expected objective's valid table": lambda t, p: p.write_bytes(t.expected),
    "values cut to the first row": _values(lambda v: v[:1].copy()),
    "values flattened": _values(lambda v: v.ravel().copy()),
    "values reshaped": _values(lambda v: v.reshape(v.shape[0] // 2, -1).copy() if v.shape[0] % 2 == 0
                               else v.reshape(-1, 1).copy()),
    "values as float32": _values(lambda v: v.astype(np.float32)),
    "values as int64": _values(lambda v: np.nan_to_num(v).astype(np.int64)),
    "values as object": _values(lambda v: v.astype(object)),
    "values all NaN": _values(lambda v: np.full_like(v, np.nan)),
    "finite values made NaN": _where_finite(np.nan),
    "finite values made +inf": _where_finite(np.inf),
    "values above 1": _shift_finite(1.0),
    "values below 0": _shift_finite(-1.0),
    "an extra array": lambda t, p: _resave(p, {**t.arrays, "extra": np.zeros(3)}, t.meta),
    "no values array": lambda t, p: _resave(p, {"other": np.zeros(3)}, t.meta),
    "a header claiming 10**12 values": lambda t, p: _huge_header_table(p, t.meta),
    "metadata not a record": lambda t, p: _raw_npz(p, t.arrays, json.dumps([1, 2, 3])),
    "metadata not JSON": lambda t, p: _raw_npz(p, t.arrays, "{not json"),
}


@pytest.mark.parametrize("what", sorted(CRAFTED))
def test_crafted_cache_files_are_recomputed(what: str, tables: Tables, tmp_path: Path) -> None:
    """A foreign, wrong-shaped, wrong-typed, NaN or out-of-range table (valid checksum) is never served."""
    folder = tmp_path / "cache"
    folder.mkdir()
    CRAFTED[what](tables, folder / tables.name)
    if what == "directory":
        # A directory where the table should be cannot be replaced by a file: a warning or a one-line error.
        args = ["solve", "--rules", str(tables.tiny), "--json"]
        result = _solve_in(folder, tables.tiny)
        check_outcome(result, args)
        if result.exit_code == 0:
            assert headline(result.stdout, show(args)) == tables.fresh
            assert_at_most_one_warning(result.stderr, show(args))
        else:
            assert_one_line_error(result.exit_code, result.stderr, show(args))
        return
    _served_value_is_fresh(tables, folder, what)


def test_foreign_table_is_not_served_to_advise(tables: Tables, tmp_path: Path, session_cache: Path) -> None:
    """`advise` over a foreign table copied under the tiny ruleset's name answers as with a sound cache."""
    args = ["advise", "--rules", str(tables.tiny), "--me", "150", "--opp", "300", "--turn", "100", "--dice", "3",
            "--json"]
    sound = cli(args)
    assert sound.exit_code == 0, sound.output
    (tmp_path / tables.name).write_bytes(tables.foreign)
    served = cli(args, env={"CINQMILLE_CACHE": str(tmp_path)})
    check_outcome(served, args)
    assert served.exit_code == 0, served.output
    assert strict_json(served.stdout, show(args)) == strict_json(sound.stdout, show(args)), \
        f"{show(args)}: a foreign table changed the advice"
    assert_at_most_one_warning(served.stderr, show(args))


def test_unreadable_valid_cache_is_used_around_not_deleted(tables: Tables, tmp_path: Path) -> None:
    """A valid cached table the user cannot read is reported, solved around, and left in place."""
    path = tmp_path / tables.name
    path.write_bytes(tables.good)
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):
            pytest.skip("this user (root) can read a chmod 000 file, so an unreadable cache file cannot be made")
        args = ["solve", "--rules", str(tables.tiny), "--json"]
        result = _solve_in(tmp_path, tables.tiny)
        check_outcome(result, args)
        assert result.exit_code == 0, result.output
        assert headline(result.stdout, show(args)) == tables.fresh
        assert_at_most_one_warning(result.stderr, show(args))
        assert path.exists(), f"{show(args)}: deleted a valid cache file it could not read"
    finally:
        path.chmod(0o600)
    assert path.read_bytes() == tables.good, "the unreadable cache file was replaced"


# --------------------------------------------------------------------------------------------------
# 4. The examples of the issue
# --------------------------------------------------------------------------------------------------

ONE_LINE_CASES = {
    "advise --roll with a superscript 3": ["advise", "--roll", "1,5,³"],
    "advise --roll with Arabic-Indic digits": ["advise", "--roll", "١٥"],
    "advise roll arguments with a superscript": ["advise", "1", "5", "³"],
    "advise roll arguments with full-width digits": ["advise", "１", "５"],
    "advise --me with Arabic-Indic digits": ["advise", "--me", "٣٠٠"],
    "advise --me with full-width digits": ["advise", "--me", "１５０"],
    "advise --me with 30 digits": ["advise", "--me", "9" * 30],
    "advise --offer with a superscript": ["advise", "--offer", "100/³"],
    "advise --target with a superscript": ["advise", "--target", "5²0"],
    "export --me with a superscript": ["export", "-o", "OUT/x.csv", "--me", "³"],
    "export --me range with Arabic-Indic digits": ["export", "-o", "OUT/x.csv", "--me", "١٥٠:٣٠٠"],
    "simulate --seed -1": ["simulate", "--players", "optimal,cautious", "--games", "10", "--seed", "-1"],
    "simulate --seed 2**64": ["simulate", "--players", "optimal,cautious", "--games", "10", "--seed", str(2**64)],
    "simulate threshold with a superscript": ["simulate", "--players", "threshold:³,cautious", "--games", "10"],
    "play --seed -1": ["play", "--seed", "-1"],
    "compare --thresholds with a superscript": ["compare", "--games", "2", "--referee-games", "2",
                                                "--thresholds", "³"],
}


@pytest.mark.parametrize("case", sorted(ONE_LINE_CASES))
def test_bad_typed_numbers_are_one_line_errors(case: str, scratch: Scratch, session_cache: Path) -> None:
    """A typed number that is not ASCII digits, or out of range, is exit 2 with one line on stderr."""
    args = [a.replace("OUT", str(scratch.root)) for a in ONE_LINE_CASES[case]]
    args[1:1] = ["--rules", str(scratch.tiny)]
    result = cli(args, input="q\n")
    check_outcome(result, args)
    assert_one_line_error(result.exit_code, result.stderr, show(args))


@pytest.mark.parametrize("typed", ["³", "٣", "1³", "５", "٥"])
def test_play_keep_prompt_refuses_non_ascii_digits(typed: str, scratch: Scratch, session_cache: Path) -> None:
    """At play's keep prompt, a non-ASCII digit is not a keep: the prompt says so and asks again, as for 'x'."""
    base = ["play", "--rules", str(scratch.tiny), "--seed", "7"]
    plain = cli(base, input="x\n")
    assert plain.exit_code == 0 and "'x' is not a legal keep" in plain.stdout, plain.output  # the first roll has a 5
    result = cli(base, input=f"{typed}\n")
    check_outcome(result, base)
    assert result.exit_code == plain.exit_code, f"{show(base)} < {typed!r}: exit {result.exit_code}"
    assert f"'{typed}' is not a legal keep" in result.stdout, \
        f"{show(base)} < {typed!r}: not refused like 'x':\n{result.stdout[-800:]}"


class PromptConsole:
    """A console for `play_text` that plays simply and answers the prediction prompt with given texts."""

    def __init__(self, announcements: list[str]):
        self.announcements = list(announcements)
        self.asked: list[str] = []
        self.answered: list[str] = []

    def ask(self, prompt: str) -> str:
        self.asked.append(prompt)
        if len(self.asked) > 3000:
            answer = "q"
        elif prompt.startswith("Announce"):
            answer = self.announcements.pop(0) if self.announcements else ""
        elif "[b]ank or [r]oll" in prompt:
            found = re.search(r"(\d+) dice in hand", prompt)
            answer = "r" if found and int(found.group(1)) >= 2 else "b"
        elif prompt.startswith("Take over"):
            answer = "n"
        else:
            answer = ""  # the default keep
        self.answered.append(answer)
        return answer

    def say(self, text: str = "") -> None:
        pass


@pytest.mark.parametrize("typed", ["³", "١٥٠", "１５０"])
def test_play_prediction_prompt_refuses_non_ascii_digits(typed: str, tmp_path: Path) -> None:
    """At play's prediction prompt, a non-ASCII number is not an announcement: the prompt asks again."""
    from cinqmille.app.play import play_text
    from cinqmille.rules import load_rules

    path = tmp_path / "predict.toml"
    path.write_text('name = "predict"\ngoal = 300\nopening = 0\nprediction = true\n')
    rules = load_rules(str(path))
    console = PromptConsole([typed])
    play_text(rules, ["human", "human"], console, rng=np.random.default_rng(3))
    at = [i for i, (q, a) in enumerate(zip(console.asked, console.answered)) if q.startswith("Announce") and a == typed]
    if not at:
        pytest.skip("the game never reached the prediction prompt")
    following = console.asked[at[0] + 1] if at[0] + 1 < len(console.asked) else ""
    assert following == console.asked[at[0]], \
        f"after {typed!r} at {console.asked[at[0]]!r} the game went on to {following!r} instead of asking again"


def test_empty_rules_name_is_an_error(session_cache: Path) -> None:
    """`--rules ''` is refused in one line, not silently the standard ruleset."""
    for args in (["odds", "--rules", ""], ["rules", "show", ""], ["solve", "--rules", "", "--json"],
                 ["advise", "--rules", "", "--me", "1000"], ["compare", "--rules", "", "--games", "2"]):
        result = cli(args)
        check_outcome(result, args)
        assert_one_line_error(result.exit_code, result.stderr, show(args))


def test_rules_from_dev_zero_is_refused_without_reading_it_all(session_cache: Path) -> None:
    """`--rules /dev/zero` is refused in one line, quickly, without filling memory."""
    if not Path("/dev/zero").exists():
        pytest.skip("no /dev/zero here")
    run = run_process(["odds", "--rules", "/dev/zero"], env={"CINQMILLE_CACHE": str(session_cache)})
    assert_refused(run)
    run = run_process(["rules", "show", "/dev/zero"], env={"CINQMILLE_CACHE": str(session_cache)})
    assert_refused(run)


def _chain(folder: Path, depth: int, bottom: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"r{depth}.toml").write_text(bottom)
    for i in range(depth - 1, -1, -1):
        (folder / f"r{i}.toml").write_text(f'base = "r{i + 1}.toml"\n')
    return folder / "r0.toml"


def test_deep_base_chain_is_refused_or_resolved(tmp_path: Path, session_cache: Path) -> None:
    """A chain of 1500 `base` files is refused in one line (or resolved correctly), never a RecursionError."""
    top = _chain(tmp_path / "deep", 1500, 'goal = 600\nopening = 200\n')
    args = ["rules", "show", str(top), "--json"]
    result = cli(args)
    check_outcome(result, args)
    if result.exit_code == 0:
        data = strict_json(result.stdout, show(args))
        assert (data["goal"], data["opening"]) == (600, 200), f"{show(args)}: resolved to another ruleset"
    else:
        assert_one_line_error(result.exit_code, result.stderr, show(args))


@pytest.mark.parametrize("layout", ["self through ..", "pair through ..", "self by absolute path", "through ./"])
def test_base_cycles_are_one_line_errors(layout: str, tmp_path: Path, session_cache: Path) -> None:
    """A `base` chain that comes back to a file already read (spelled differently) is refused in one line."""
    d = tmp_path / "d"
    e = tmp_path / "e"
    d.mkdir()
    e.mkdir()
    a = d / "a.toml"
    if layout == "self through ..":
        a.write_text('base = "../d/a.toml"\ngoal = 600\n')
    elif layout == "pair through ..":
        a.write_text('base = "../e/b.toml"\n')
        (e / "b.toml").write_text('base = "../d/../d/a.toml"\n')
    elif layout == "self by absolute path":
        a.write_text(f'base = {json.dumps(str(d / ".." / "d" / "a.toml"))}\n')
    else:
        a.write_text('base = "./a.toml"\n')
    for args in (["rules", "show", str(a)], ["solve", "--rules", str(a), "--json"]):
        start = time.monotonic()
        result = cli(args, seconds=15)
        check_outcome(result, args)
        assert_one_line_error(result.exit_code, result.stderr, show(args))
        assert time.monotonic() - start < 10, f"{show(args)}: took {time.monotonic() - start:.1f} s"


#: Rulesets that no limit can let through: refused in one line, quickly, before allocating.
TOO_BIG = {
    "goal = 10**6": "goal = 1000000\n",
    "goal = 10**9": "goal = 1000000000\nopening = 0\n",
    "goal = 10**21": "goal = 1000000000000000000000\n",
    "goal with 5000 digits": "goal = " + "9" * 5000 + "\n",
    "opening with 5000 digits": "opening = " + "5" * 4999 + "0\n",
    "goal = 0x7fffffffffffffff": "goal = 0x7fffffffffffffff\n",
}


@pytest.mark.parametrize("case", sorted(TOO_BIG))
def test_oversized_rulesets_are_refused_before_allocating(case: str, tmp_path: Path, session_cache: Path) -> None:
    """A ruleset far too big to solve is refused in one line by solve and advise, in seconds, without allocating."""
    path = tmp_path / "big.toml"
    path.write_text(TOO_BIG[case])
    env = {"CINQMILLE_CACHE": str(session_cache)}
    shown = run_process(["rules", "show", str(path)], env=env)
    assert "Traceback" not in shown.stderr and shown.code in (0, 2), \
        f"{shown.where}: exit {shown.code}\n{shown.stderr[-2000:]}"
    if shown.code == 2:
        assert_refused(shown)
    for args in (["solve", "--rules", str(path), "--json"], ["advise", "--rules", str(path), "--me", "0"]):
        assert_refused(run_process(args, env=env))


#: Points too big for 64-bit arithmetic, each with a ruleset that must solve to the same value (every
#: such keep is worth more than the goal of 500, and a turn past the goal is capped at it), or counters
#: the solver relaxes anyway.
BIG_POINTS = {
    "straights = 10**20": ("straights = 100000000000000000000", "straights = 1000"),
    "triple 1 = 10**20": ("[triple]\n1 = 100000000000000000000", "[triple]\n1 = 1000"),
    "five_fives = 2**63 + 50": (f"five_fives = {2**63 + 50 - 2**63 % 50}", "five_fives = 5000"),
    "single 1 = 2**64 + 50": (f"[single]\n1 = {2**64 + 50 - 2**64 % 50}", "[single]\n1 = 1000"),
    "zero_turns.count = 10**20": ("[zero_turns]\ncount = 100000000000000000000", "[zero_turns]\ncount = 3"),
    "zero_turns.to = -10**20": ("[zero_turns]\nto = -100000000000000000000", "[zero_turns]\nto = \"zero\""),
}


@pytest.mark.parametrize("case", sorted(BIG_POINTS))
def test_overflowing_points_are_refused_or_solved_exactly(case: str, tmp_path: Path, session_cache: Path) -> None:
    """Points past 64 bits are refused in one line, or solved to the value of the equivalent small ruleset."""
    big, small = BIG_POINTS[case]
    big_path, small_path = tmp_path / "big.toml", tmp_path / "small.toml"
    big_path.write_text(f'name = "big"\ngoal = 500\nopening = 150\n{big}\n')
    small_path.write_text(f'name = "small"\ngoal = 500\nopening = 150\n{small}\n')
    args = ["solve", "--rules", str(big_path), "--json"]
    run = run_process(args, env={"CINQMILLE_CACHE": str(session_cache)})
    assert "Traceback" not in run.stderr and run.code in (0, 2), f"{run.where}: exit {run.code}\n{run.stderr[-2000:]}"
    if run.code == 2:
        assert_refused(run)
        return
    reference = cli(["solve", "--rules", str(small_path), "--json"])
    assert reference.exit_code == 0, reference.output
    got = strict_json(run.stdout, run.where)["first_player_win"]
    want = strict_json(reference.stdout, "reference")["first_player_win"]
    assert got == pytest.approx(want, abs=1e-12), \
        f"{run.where}: first_player_win {got}, the same game with {small!r} gives {want}"
    for args in (["advise", "--rules", str(big_path), "--roll", "1,2,3,4,5", "--json"],
                 ["simulate", "--rules", str(big_path), "--players", "optimal,cautious", "--games", "20", "--json"],
                 ["odds", "--rules", str(big_path), "--json"]):
        result = cli(args)
        check_outcome(result, args)
        assert result.exit_code == 0, f"{show(args)}: exit {result.exit_code} although solve accepted the ruleset"


@pytest.mark.parametrize("args", [
    ["simulate", "--players", "optimal,cautious", "--games", "1000000000000"],
    ["simulate", "--players", "optimal,cautious", "--games", "1000000000000", "--batch-size", "1"],
    ["simulate", "--players", "cautious,random,expected", "--games", "1000000000000"],
    ["compare", "--games", "1000000000000", "--thresholds", "300"],
], ids=["simulate", "simulate-batch-1", "simulate-referee", "compare-games"])
def test_huge_game_counts_are_refused_before_allocating(args: list[str], tiny_rules_file: Path,
                                                        session_cache: Path) -> None:
    """`--games 10**12` is refused in one line, in seconds, without growing memory."""
    full = [args[0], "--rules", str(tiny_rules_file), *args[1:]]
    assert cli(["solve", "--rules", str(tiny_rules_file)]).exit_code == 0  # the table is in the cache
    assert_refused(run_process(full, env={"CINQMILLE_CACHE": str(session_cache)}))


def test_compare_with_empty_thresholds_prints_valid_json(tiny_rules_file: Path, session_cache: Path) -> None:
    """`compare --thresholds ''` is refused in one line, or prints valid JSON with no NaN (nor 'nan' in text)."""
    args = ["compare", "--rules", str(tiny_rules_file), "--games", "4", "--referee-games", "2", "--thresholds", ""]
    result = cli([*args, "--json"])
    check_outcome(result, [*args, "--json"])
    if result.exit_code == 2:
        assert_one_line_error(result.exit_code, result.stderr, show([*args, "--json"]))
        return
    strict_json(result.stdout, show([*args, "--json"]))
    text = cli(args)
    check_outcome(text, args)
    assert text.exit_code == 0, text.output
    assert not re.search(r"\bnan\b", text.stdout, re.IGNORECASE), f"{show(args)}: prints NaN:\n{text.stdout}"


def test_cache_directory_longer_than_path_max(tables: Tables, tmp_path: Path, session_cache: Path) -> None:
    """A cache path longer than the OS allows: the answer still comes (with one warning) or one error line."""
    long_dir = tmp_path.joinpath(*(["d" * 250] * 20))  # about 5,000 characters, past PATH_MAX (4,096)
    env = {"CINQMILLE_CACHE": str(long_dir)}
    advise = ["advise", "--rules", str(tables.tiny), "--me", "150", "--opp", "300", "--turn", "100", "--dice", "3",
              "--json"]
    sound_advice = cli(advise)
    assert sound_advice.exit_code == 0, sound_advice.output
    cases = [
        (["solve", "--rules", str(tables.tiny), "--json"], tables.fresh),
        (advise, strict_json(sound_advice.stdout, "advise")),
        (["export", "--rules", str(tables.tiny), "-o", str(tmp_path / "p.csv")], None),
        (["simulate", "--rules", str(tables.tiny), "--players", "optimal,cautious", "--games", "10"], None),
    ]
    problems = []
    for args, expected in cases:
        where = show(args) + " [cache path of 5,000 characters]"
        result = cli(args, env=env)
        try:
            check_outcome(result, args)
            if result.exit_code == 2:
                assert_one_line_error(result.exit_code, result.stderr, where)
                continue
            assert_at_most_one_warning(result.stderr, where)
            if expected is not None:
                got = headline(result.stdout, where) if args[0] == "solve" else strict_json(result.stdout, where)
                assert got == expected, f"{where}: {got} != {expected}"
        except AssertionError as exc:
            problems.append(str(exc).split("\n")[0][:600])
    assert not problems, "\n".join(problems)


_KILL_AT_RENAME = textwrap.dedent("""
    import os, signal
    _target = os.path.abspath(os.environ["FUZZ_KILL_TARGET"])
    _real_replace, _real_rename = os.replace, os.rename
    def _die_at(real):
        def move(src, dst, *args, **kwargs):
            if os.path.abspath(os.fspath(dst)) == _target:
                os.kill(os.getpid(), signal.SIGKILL)  # a crash between the write and the rename
            return real(src, dst, *args, **kwargs)
        return move
    os.replace, os.rename = _die_at(_real_replace), _die_at(_real_rename)
""")


@pytest.mark.parametrize("fmt", ["csv", "npz"])
def test_temporary_file_of_a_killed_export_is_cleaned_by_the_next_export(fmt: str, tiny_rules_file: Path,
                                                                         tmp_path: Path, session_cache: Path) -> None:
    """A temporary file left by an export killed (SIGKILL) before its rename is removed by the next export."""
    assert cli(["solve", "--rules", str(tiny_rules_file)]).exit_code == 0  # the table is in the cache
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / f"policy.{fmt}"
    args = ["export", "--rules", str(tiny_rules_file), "-o", str(target)]
    env = {"CINQMILLE_CACHE": str(session_cache), "FUZZ_KILL_TARGET": str(target)}
    killed = run_process(args, env=env, prelude=_KILL_AT_RENAME)
    assert killed.code == -signal.SIGKILL, \
        f"the export was not killed at its rename: exit {killed.code}\n{killed.stderr}"
    left = sorted(p.name for p in out_dir.iterdir())
    if not left:
        pytest.skip("the killed export left nothing behind (no temporary file to clean)")
    assert not target.exists(), "the target exists although the export was killed before its rename"
    again = run_process(args, env={"CINQMILLE_CACHE": str(session_cache)})
    assert again.code == 0, f"{again.where}: exit {again.code}\n{again.stderr[-1500:]}"
    remaining = sorted(p.name for p in out_dir.iterdir())
    clean_dir = tmp_path / "clean"
    clean_dir.mkdir()
    clean = run_process([*args[:-1], str(clean_dir / target.name)], env={"CINQMILLE_CACHE": str(session_cache)})
    assert clean.code == 0
    expected = sorted(p.name for p in clean_dir.iterdir())  # what a clean export writes (tables and sidecars)
    assert target.name in remaining and not any(n.endswith(".tmp") for n in remaining)
    assert remaining == expected, f"{again.where}: left {remaining} (before: {left}; a clean export: {expected})"
    if fmt == "csv":
        assert target.read_bytes() == (clean_dir / target.name).read_bytes(), \
            "the second export differs from a clean one"


# --------------------------------------------------------------------------------------------------
# 3b. Three-player and zero_turns counter tables: damage and forgery; export targets of every file type
# --------------------------------------------------------------------------------------------------

#: Small rulesets of the tables that the first battery does not reach: three players, scoreless-turn counters.
THREE_RULES = {"name": "fuzz3", "goal": 300, "opening": 100}
ZERO_RULES = {"name": "fuzzz", "goal": 350, "opening": 150, "zero_turns": {"count": 3, "to": "zero"}}


@dataclass
class Cached:
    """One cached table: its ruleset, file name and sound bytes, the files it needs, and how it is read."""

    kind: str  # "solve3", "policy3", "solve-zero", "policy-zero"
    rules: Any
    name: str
    good: bytes
    needs: dict[str, bytes]  # other sound cache files (the solve under a policy table)
    fresh: dict[str, np.ndarray]
    meta: dict[str, Any]
    arrays: dict[str, np.ndarray]

    def __repr__(self) -> str:
        return f"Cached({self.kind!r})"


def _read_table(kind: str, rules: Any) -> dict[str, np.ndarray]:
    """Read a table the way its users do (the memos emptied first): its arrays."""
    from cinqmille.policies import optimal
    from cinqmille.table import load as tables
    from cinqmille.solver import solve

    tables.forget()
    if kind == "solve3":
        return {"values": solve(rules, "win", players=3).values}
    if kind == "solve-zero":
        return {"values": solve(rules, "win").values}
    if kind == "policy3":
        return tables.policy_table(rules, 3, complete=True).arrays()
    return tables.policy_table(rules, 2).arrays()


def _table_spec(kind: str, rules: Any) -> Any:
    from cinqmille.table import load as tables
    from cinqmille.solver import api

    return {"solve3": lambda: api.result_spec(rules, "win", 3), "solve-zero": lambda: api.result_spec(rules, "win"),
            "policy3": lambda: tables.table_spec(rules, 3), "policy-zero": lambda: tables.table_spec(rules, 2)}[kind]()


@pytest.fixture(scope="module")
def cached(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Cached]:
    """Sound cache files of a three-player ruleset and a zero_turns ruleset: solves and policy tables."""
    from cinqmille.rules import rules_from_dict

    out = {}
    with pytest.MonkeyPatch.context() as mp:
        for kind, spec in (("solve3", THREE_RULES), ("policy3", THREE_RULES), ("solve-zero", ZERO_RULES),
                           ("policy-zero", ZERO_RULES)):
            folder = tmp_path_factory.mktemp(kind)
            mp.setenv("CINQMILLE_CACHE", str(folder))
            rules = rules_from_dict(spec)
            fresh = _read_table(kind, rules)
            files = {p.name: p.read_bytes() for p in folder.glob("*.npz")}
            policy = [n for n in files if "policy" in n]
            name = policy[0] if kind.startswith("policy") else next(n for n in files if "policy" not in n)
            with np.load(folder / name, allow_pickle=False) as npz:
                arrays = {k: npz[k] for k in npz.files if k != "meta"}
                meta = json.loads(str(npz["meta"]))
            out[kind] = Cached(kind, rules, name, files[name], {n: b for n, b in files.items() if n != name},
                               fresh, meta, arrays)
    return out


def _served_table_is_fresh(table: Cached, folder: Path, what: str) -> None:
    """Over the damaged file, the table read is the fresh one (one warning at most, no exception), and the
    file is repaired: read again, it is silent."""
    import warnings

    for name, data in table.needs.items():
        (folder / name).write_bytes(data)
    where = f"{table.kind} [{what}]"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CINQMILLE_CACHE", str(folder))
        for attempt in ("damaged", "repaired"):
            with warnings.catch_warnings(record=True) as said, watchdog(COMMAND_SECONDS):
                warnings.simplefilter("always")
                found = _read_table(table.kind, table.rules)
            lines = [str(w.message) for w in said]
            assert len(lines) <= (1 if attempt == "damaged" else 0), f"{where}, {attempt}: warnings {lines}"
            assert all("\n" not in line for line in lines), f"{where}: a warning of several lines: {lines}"
            assert sorted(found) == sorted(table.fresh), f"{where}: arrays {sorted(found)}"
            for name, want in table.fresh.items():
                assert found[name].shape == want.shape and np.allclose(found[name], want, rtol=0, atol=1e-12,
                                                                       equal_nan=True), \
                    f"{where}, {attempt}: array '{name}' served differs from a fresh table's"


TABLE_KINDS = ["solve3", "policy3", "solve-zero", "policy-zero"]


@settings(max_examples=40, **FAST)
@given(kind=st.sampled_from(TABLE_KINDS), ops=DAMAGE)
def test_random_damage_to_three_player_and_counter_tables(kind: str, ops: list[tuple[str, int, bytes]],
                                                          cached: dict[str, Cached], tmp_path: Path) -> None:
    """A three-player or zero_turns table (solve or policy) with bytes flipped, cut or inserted is never served."""
    table = cached[kind]
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    (folder / table.name).write_bytes(_damage(table.good, ops))
    _served_table_is_fresh(table, folder, f"damaged by {ops}")


def _forge(draw: st.DrawFn, table: Cached) -> tuple[dict[str, np.ndarray], dict[str, Any], str]:
    """Arrays and metadata of a forgery: one array reshaped, retyped, reversed, flipped, complemented or
    zeroed, or one cell set to a value outside its range or enumeration, or one metadata field replaced (the
    identity kept; the writer gives it a valid checksum).

    A single cell changed to another plausible value (a chance still in [0, 1], another valid move) outside
    the rows recomputed on loading is the one forgery the checks do not see (docs/solver.md, "Caches"):
    the battery does not make it."""
    arrays, meta = dict(table.arrays), {k: v for k, v in table.meta.items() if k not in ("checksum", "arrays", "table")}
    if draw(st.booleans()):
        keys = ["period", "exact", "assumptions", "format"] if table.kind.startswith("policy") else \
            ["objective", "residual", "states", "exact", "assumptions", "players", "extra"]
        key = draw(st.sampled_from(keys))
        value = draw(st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.text(max_size=3),
                               st.lists(st.integers(0, 2), max_size=2)))
        meta[key] = value
        return arrays, meta, f"meta {key} = {value!r}"
    name = draw(st.sampled_from(sorted(arrays)))
    a = arrays[name]
    how = draw(st.sampled_from(["reverse", "flip", "one cell", "reshape", "retype", "complement", "zero"]))
    if how == "reverse" and a.ndim:
        new = a[::-1].copy()
    elif how == "flip" and a.dtype.kind in "iu":
        new = np.where(a == 0, 1, np.where(a == 1, 0, a)).astype(a.dtype)
    elif how == "one cell" and a.size:  # a value outside the array's range or enumeration (see the docstring)
        new = a.copy()
        cell = draw(st.integers(0, a.size - 1))
        value = draw(st.sampled_from([7, -1, 2, 1.5, np.nan] + ([np.inf] if name != "bank" else [])))
        if a.dtype.kind != "f" and not (np.isfinite(value) and float(value).is_integer()):
            value = -1  # an integer array cannot hold it (1.5 would become the valid move 1)
        new.reshape(-1)[cell] = value
    elif how == "reshape" and a.size > 1:
        new = a.reshape(-1).copy()[: a.size - 1]
    elif how == "retype":
        with np.errstate(invalid="ignore"):
            new = np.nan_to_num(a).astype(draw(st.sampled_from([np.float32, np.int64, np.int8, np.float64])))
    elif how == "complement" and a.dtype.kind == "f":
        new = np.where(np.isfinite(a), 1 - a, a)
    else:
        new = np.zeros_like(a)
    arrays[name] = new
    return arrays, meta, f"{name}: {how}"


@settings(max_examples=60, **FAST)
@given(kind=st.sampled_from(TABLE_KINDS), data=st.data())
def test_forged_three_player_and_counter_tables_with_a_valid_checksum(kind: str, data: st.DataObject,
                                                                       cached: dict[str, Cached],
                                                                       tmp_path: Path) -> None:
    """A forged table (valid checksum, the right identity) is served only when it equals the sound one."""
    from cinqmille.solver import cache as solver_cache

    table = cached[kind]
    arrays, meta, what = _forge(data.draw, table)
    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    solver_cache.save_npz(folder / table.name, arrays, meta, _table_spec(kind, table.rules))
    _served_table_is_fresh(table, folder, f"forged: {what}")


# -- export targets of every file type ------------------------------------------------------------------
FILE_TYPES = ["missing", "regular", "missing directory", "directory", "fifo", "link to a regular file",
              "link to a fifo", "link to /dev/null", "dangling link", "read-only directory"]


def _make(kind: str, path: Path) -> None:
    """Put a file of `kind` at `path` (never writing through a link to a device)."""
    if kind == "regular":
        path.write_text("old\n")
    elif kind == "missing directory":
        shutil.rmtree(path.parent / "nowhere", ignore_errors=True)
    elif kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "link to a regular file":
        (path.parent / f"{path.name}.real").write_text("real\n")
        path.symlink_to(path.parent / f"{path.name}.real")
    elif kind == "link to a fifo":
        os.mkfifo(path.parent / f"{path.name}.pipe")
        path.symlink_to(path.parent / f"{path.name}.pipe")
    elif kind == "link to /dev/null":
        path.symlink_to("/dev/null")
    elif kind == "dangling link":
        path.symlink_to(path.parent / "no such file")


def _state(folder: Path) -> dict[str, tuple[str, bytes | str]]:
    """What a folder holds: per name, its type and (regular files) content or (links) target."""
    out: dict[str, tuple[str, bytes | str]] = {}
    for entry in sorted(folder.rglob("*")):
        rel = str(entry.relative_to(folder))
        if entry.is_symlink():
            out[rel] = ("link", os.readlink(entry))
        elif entry.is_fifo():
            out[rel] = ("fifo", "")
        elif entry.is_dir():
            out[rel] = ("dir", "")
        else:
            out[rel] = ("file", entry.read_bytes())
    return out


@settings(max_examples=60, **FAST)
@given(fmt=st.sampled_from(["csv", "npz", "parquet"]), keeps=st.booleans(),
       kinds=st.lists(st.sampled_from(FILE_TYPES), min_size=4, max_size=4))
def test_export_onto_targets_of_every_file_type(fmt: str, keeps: bool, kinds: list[str], tiny_rules_file: Path,
                                                tmp_path: Path, session_cache: Path) -> None:
    """`export -o` where the policy file and the files beside it are regular, missing (or in a missing
    directory), directories, FIFOs, links (to a file, a FIFO, /dev/null, nowhere) or in a read-only directory:
    exit 0 with regular files only, or one `Error:` line, exit 2 and the folder exactly as it was."""
    from cinqmille.app import export as ex

    folder = Path(tempfile.mkdtemp(dir=tmp_path))
    read_only = kinds[0] == "read-only directory"
    base = folder / "nowhere" / f"p.{fmt}" if kinds[0] == "missing directory" else folder / f"p.{fmt}"
    targets = ex.policy_files(base, fmt, keeps)
    if not read_only and kinds[0] != "missing directory":
        for kind, target in zip(kinds, targets):
            _make(kind, target)
    before = _state(folder)
    special = [t for t in targets if os.path.exists(t) and not os.path.isfile(t)]  # following links
    if read_only:
        folder.chmod(0o555)
    args = ["export", "--rules", str(tiny_rules_file), "-o", str(base), "--me", "200", "--opp", "150",
            "--format", fmt] + ([] if keeps else ["--no-keeps"])
    try:
        result = cli(args, env={"CINQMILLE_CACHE": str(session_cache)})
    finally:
        folder.chmod(0o755)
    check_outcome(result, args)
    if result.exit_code == 0:
        assert not special, f"{show(args)}: wrote over {special}"
        assert all(t.is_file() for t in targets), f"{show(args)}: not every target is a regular file"
        if fmt != "parquet" or importlib_found("pyarrow"):
            back = ex.read_policy(base)
            assert len(back["me"]) > 0
        assert not [p for p in folder.rglob("*.tmp")], f"{show(args)}: temporary files left"
    else:
        assert_one_line_error(result.exit_code, result.stderr, show(args))
        assert _state(folder) == before, f"{show(args)}: a refused export changed the folder"
        assert special or read_only or (fmt == "parquet" and not importlib_found("pyarrow")), \
            f"{show(args)}: refused an export onto writable targets: {result.stderr.strip()}"


def importlib_found(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None
