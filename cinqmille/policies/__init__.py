"""Players behind the engine's `Policy` protocol, and `parse_policy` for their text names.

Known names: `threshold:T`, `threshold:T/K`, `cautious`, `random` (`heuristics.py`),
`optimal` (`optimal.py`: the solved policy table's decisions, the same as `advise`'s)
`expected` (`expected.py`) and `card[:ARG]` (`card.py`: a strategy card of `research.card`); `names.py` reads them (`parse_policy`, `register_policy`).

The package imports its modules when a name is first read (a module-level
`__getattr__`): reading a policy table (`tables.py`, `groups.py`, as the
`advise` command does) imports neither the engine nor the heuristics.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .heuristics import CautiousPolicy, RandomPolicy, ThresholdPolicy, best_keep
    from .names import LATER, Policy, PolicyFactory, parse_policy, policy_names, register_policy

#: The module of each name the package exports.
_HOME = {"LATER": "names", "Policy": "names", "PolicyFactory": "names", "parse_policy": "names",
         "policy_names": "names", "register_policy": "names", "CautiousPolicy": "heuristics",
         "RandomPolicy": "heuristics", "ThresholdPolicy": "heuristics", "best_keep": "heuristics"}


def __getattr__(name: str) -> Any:
    """An exported name, from its module, imported on first use."""
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "LATER", "CautiousPolicy", "Policy", "PolicyFactory", "RandomPolicy", "ThresholdPolicy",
    "best_keep", "parse_policy", "policy_names", "register_policy",
]
