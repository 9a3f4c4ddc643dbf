"""The examples in the library's docstrings run and print what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ("cinqmille.parsing", "cinqmille.solver.seats", "cinqmille.solver.api", "cinqmille.solver.n_player", "cinqmille.app.advice",
           "cinqmille.notebook")


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, session_cache: object) -> None:
    """Every `>>>` example of the module gives the output written under it."""
    module = importlib.import_module(name)
    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failures == 0
