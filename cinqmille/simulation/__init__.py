"""Many games at once: a vectorised numpy simulator for the rulesets the solver treats exactly, the
game engine for the others, in seeded fixed-size batches run through joblib (local or Dask).

    from cinqmille.simulation import SimConfig, simulate
    result = simulate(SimConfig(load_rules("standard"), ("optimal", "threshold:350"), games=100_000, seed=1))
    result.win_rate, result.ci95, result.mean_turns

Modules: `model` (roll sampling, banking rules as arrays), `vecpolicies`
(vectorised policies), `vectorised` (the array game loop), `referee_path`
(batches through the engine), `stats` (batch results, confidence intervals),
`runner` (`simulate`, batching, joblib / Dask).
"""

from .runner import (
    REFEREE_BATCH,
    VECTOR_BATCH,
    SimConfig,
    SimResult,
    choose_engine,
    run_tasks,
    simulate,
    simulate_stats,
    vectorisable,
)
from .stats import BatchStats, std_error, wilson

__all__ = [
    "REFEREE_BATCH", "VECTOR_BATCH", "BatchStats", "SimConfig", "SimResult", "choose_engine", "run_tasks",
    "simulate", "simulate_stats", "std_error", "vectorisable", "wilson",
]
