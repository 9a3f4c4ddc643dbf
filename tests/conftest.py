"""Shared fixtures: a per-session solver cache (never the user's) and tiny rulesets that solve fast."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TINY_TOML = 'name = "tiny"\ngoal = 500\nopening = 150\n'


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache directory for the whole test session, so each ruleset is solved once.

    Under pytest-xdist the workers share it (the cache is keyed by content and written atomically), so a
    ruleset solved by one worker is read by the others.
    """
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "cinqmille-cache"
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture
def session_cache(session_cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point CINQMILLE_CACHE at the session cache for this test."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(session_cache_dir))
    return session_cache_dir


@pytest.fixture(scope="session")
def tiny_rules_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A TOML ruleset file: standard with goal 500 and opening 150 (solves in well under a second)."""
    path = tmp_path_factory.mktemp("rules") / "tiny.toml"
    path.write_text(TINY_TOML)
    return path
