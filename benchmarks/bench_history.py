"""Time the two-player history solve (`cinqmille.solver.history_solve`) of one ruleset and print its figures as JSON.

    python benchmarks/bench_history.py '{"base": "standard", "goal": 1500, "ties": "knock_back"}'

The ruleset is a JSON object of ruleset keys (as a rules file holds them); the
relaxed two-player solve of the same ruleset without its history rules is
printed beside, and the load average at the end (the machine may be shared).
"""

from __future__ import annotations

import json
import os
import sys
import time

from cinqmille.rules.loading import rules_from_dict
from cinqmille.solver.budget import Limits
from cinqmille.solver.history_solve import HISTORY_STATES, solve_history
from cinqmille.solver.two_player import solve_game

HISTORY_KEYS = ("ties", "crosses", "bust_strikes_last_score", "zero_turns")


def main(spec: dict[str, object]) -> dict[str, object]:
    rules = rules_from_dict(spec)
    began = time.perf_counter()
    solved = solve_history(rules, limits=Limits.from_env(default_states=HISTORY_STATES))
    seconds = time.perf_counter() - began
    off = rules_from_dict({k: v for k, v in spec.items() if k not in HISTORY_KEYS})
    w = solve_game(off)[0]
    return {"rules": spec, "first_seat": solved.first_seat, "width": solved.width, "exact": solved.exact,
            "relaxed": float((w if w.ndim == 2 else w[0])[0, 0]), "sheets": solved.sheets.size,
            "turn_starts": solved.rows, "states_per_sweep": solved.states, "sweeps": solved.sweeps,
            "passes": solved.passes, "residual": solved.residual, "seconds": round(seconds, 1),
            "load": os.getloadavg()}


if __name__ == "__main__":
    print(json.dumps(main(json.loads(sys.argv[1]))))
