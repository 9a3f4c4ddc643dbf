"""SHA-256 fingerprints of every array of every table the solver produces, to check a refactoring bit for bit.

Usage: ``PYTHONPATH=$PWD python benchmarks/table_fingerprints.py [--quick] > fingerprints.txt``, then compare
two outputs with ``diff`` (about 6 minutes on a busy two-core machine, 2026-12-02; `--quick` about 1). Every
table is solved afresh (`compute`, no cache):

- the two-player presets of ``data/presets`` (those that solve in about 30 s or less on one core; `--quick`
  leaves out the slowest): the turn-start values, the take-over offers and every array of the complete policy
  table;
- three and four players on the small rulesets of ``tests/test_brute_force_n.py`` (and two of
  ``tests/small_rulesets.py``): the turn-start values and every array of the complete policy table.

Each line is ``table  array  dtype  shape  sha256``. An array that a new version adds shows as a new line (a
``diff`` shows it as added, not changed).
"""

from __future__ import annotations

import hashlib
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from cinqmille.table.policy import policy_of
from cinqmille.rules import load_rules, rules_from_dict  # noqa: E402
from cinqmille.solver import compute  # noqa: E402

#: Two-player presets solved (a few seconds to ~30 s each on this machine).
PRESETS = ("standard", "house", "kcd", "sheet", "wikipedia", "six-dice", "farkle-cardgames", "ten-thousand")
QUICK_PRESETS = ("standard", "house", "kcd", "sheet")
#: Small rulesets of three and four players (tests/test_brute_force_n.py's THREE, and two turn rulesets).
SMALL = {
    "reach-300": {"goal": 300, "opening": 0},
    "reach-350-min-bank": {"goal": 350, "opening": 100, "min_bank": 100},
    "exact-300-open-100": {"goal": 300, "opening": 100, "end": "exact"},
    "exact-400-open-250-mandatory": {"goal": 400, "opening": 250, "min_bank": 50, "end": "exact",
                                     "hot_dice": "mandatory"},
    "rule-of-50-300": {"goal": 300, "opening": 0, "rule_of_50": True, "hot_dice": "mandatory"},
    "dummy-250": {"goal": 250, "opening": 0, "min_bank": 100, "end": "exact", "five_ones": "multiples"},
    "prediction-400": {"goal": 400, "opening": 0, "prediction": True},
    "tiny-500": {"goal": 500, "opening": 150},
}
FOUR = ("reach-300", "exact-300-open-100", "dummy-250", "rule-of-50-300")


def digest(x: Any) -> str:
    """SHA-256 of an array's bytes (C order)."""
    a = np.ascontiguousarray(np.asarray(x))
    return hashlib.sha256(a.tobytes()).hexdigest()


def line(table: str, name: str, x: Any) -> str:
    a = np.asarray(x)
    return f"{table}  {name}  {a.dtype}  {a.shape}  {digest(a)}"


def table_arrays(result: Any) -> dict[str, np.ndarray]:
    """Every array of the complete policy table of `result` (what its cache file holds; two players also the
    states' values, derived from them)."""
    table = policy_of(result).complete()
    arrays = dict(table.arrays())
    if result.players == 2:
        arrays["value(derived)"] = table.value_v
    return arrays


def fingerprint(label: str, rules: Any, players: int, out: list[str]) -> None:
    start = time.perf_counter()
    result = compute(rules, players=players)
    out.append(line(label, "values", result.values))
    if result.offers is not None:
        out.append(line(label, "offers", result.offers))
    for name, x in sorted(table_arrays(result).items()):
        out.append(line(label, "table." + name, x))
    print(f"{label}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    out: list[str] = []
    for name in QUICK_PRESETS if quick else PRESETS:
        fingerprint(f"2p:{name}", load_rules(name), 2, out)
        print("\n".join(out), flush=True)
        out.clear()
    for name, spec in SMALL.items():
        rules = rules_from_dict(spec, name)
        fingerprint(f"2p:{name}", rules, 2, out)
        fingerprint(f"3p:{name}", rules, 3, out)
        if name in FOUR:
            fingerprint(f"4p:{name}", rules, 4, out)
        print("\n".join(out), flush=True)
        out.clear()


if __name__ == "__main__":
    main(sys.argv[1:])
