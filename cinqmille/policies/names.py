"""The policies' text names: `parse_policy` and its table of factories (imported by `cinqmille.policies`).

Known names: `threshold:T`, `threshold:T/K`, `cautious`, `random` (this package),
`optimal` (`optimal.py`: the solved policy table's decisions, the same as `advise`'s)
`expected` (`expected.py`) and `card[:ARG]` (`card.py`).

Hook for new policies: a module `cinqmille/policies/<name>.py` listed in
`LATER` below that defines `make_policy(arg: str | None, rules, rng) -> Policy`
is picked up by `parse_policy("<name>[:arg]", rules)` with no other change;
or call `register_policy(name, factory)` at run time.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import numpy as np

from ..engine.protocol import Policy
from ..errors import CinqmilleError
from ..rules import Rules
from .heuristics import CautiousPolicy, RandomPolicy, ThresholdPolicy, best_keep, threshold_from_arg

PolicyFactory = Callable[[str | None, Rules, np.random.Generator | None], Policy]


def _cautious(arg: str | None, rules: Rules, rng: np.random.Generator | None) -> Policy:
    if arg:
        raise CinqmilleError(f"policy 'cautious' takes no argument, got 'cautious:{arg}'")
    return CautiousPolicy()


def _random(arg: str | None, rules: Rules, rng: np.random.Generator | None) -> Policy:
    if arg:
        raise CinqmilleError(f"policy 'random' takes no argument, got 'random:{arg}'")
    return RandomPolicy(rng if rng is not None else np.random.default_rng())


_FACTORIES: dict[str, PolicyFactory] = {
    "threshold": lambda arg, rules, rng: threshold_from_arg(arg, rules),
    "cautious": _cautious,
    "random": _random,
}

#: Policies written elsewhere: name -> module defining `make_policy(arg, rules, rng)`.
LATER: dict[str, str] = {
    "optimal": "cinqmille.policies.optimal",
    "expected": "cinqmille.policies.expected",
    "card": "cinqmille.policies.card",
}


def register_policy(name: str, factory: PolicyFactory) -> None:
    """Make `parse_policy` understand `name[:arg]` by calling `factory(arg, rules, rng)`."""
    _FACTORIES[name] = factory


def policy_names() -> tuple[str, ...]:
    """Every policy name `parse_policy` may understand."""
    return tuple(_FACTORIES) + tuple(n for n in LATER if n not in _FACTORIES)


def parse_policy(spec: str, rules: Rules, *, rng: np.random.Generator | None = None) -> Policy:
    """The policy named by `spec` ("threshold:350", "threshold:350/2", "cautious", "random", ...).

    `rng` feeds the policies that draw random numbers (a fresh unseeded one if None).
    Anything else raises `CinqmilleError` with a one-line message.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise CinqmilleError(f"empty policy name; known: {', '.join(policy_names())}")
    name, _, arg = spec.strip().partition(":")
    factory = _FACTORIES.get(name)
    if factory is None and name in LATER:
        try:
            module = importlib.import_module(LATER[name])
        except ModuleNotFoundError as exc:
            if exc.name != LATER[name]:
                raise
            raise CinqmilleError(f"policy '{name}' is not available yet in this version") from None
        factory = getattr(module, "make_policy", None)
        if factory is None:
            raise CinqmilleError(f"policy '{name}': module {LATER[name]} defines no make_policy")
    if factory is None:
        raise CinqmilleError(f"unknown policy '{spec}'; known: threshold:T, threshold:T/K, "
                             f"{', '.join(n for n in policy_names() if n != 'threshold')}[:L1/L2/...]")
    return factory(arg or None, rules, rng)


__all__ = [
    "LATER", "CautiousPolicy", "Policy", "PolicyFactory", "RandomPolicy", "ThresholdPolicy",
    "best_keep", "parse_policy", "policy_names", "register_policy",
]
