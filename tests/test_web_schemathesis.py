"""The API fuzzed from its own OpenAPI document with Schemathesis: valid and invalid requests to every endpoint."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'cinqmille[web]'")
schemathesis = pytest.importorskip("schemathesis", reason="Schemathesis is not installed: pip install 'cinqmille[test]'")

from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402
from schemathesis.config._checks import NegativeDataRejectionConfig  # noqa: E402
from schemathesis.checks import (  # noqa: E402
    content_type_conformance, negative_data_rejection, not_a_server_error, response_schema_conformance,
    status_code_conformance)

from cinqmille.errors import CinqmilleError  # noqa: E402
from cinqmille.web.access import Access  # noqa: E402
from cinqmille.web.app import create_app  # noqa: E402
from cinqmille.web.tables import Tables  # noqa: E402


def _no_solve(rules: Any, objective: str, progress: Any = None, players: int = 2) -> Any:
    raise CinqmilleError("not solved in this test")


#: The app under test: its own Host (Schemathesis calls it "testserver"), solves that fail at once.
APP = create_app(tables=Tables(max_queued=100, solver=_no_solve), access=Access(names=frozenset({"testserver"})))
SCHEMA = schemathesis.openapi.from_asgi("/api/openapi.json", APP)
SCHEMA.config.generation.update(modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE], max_examples=40)
#: A refused request is one of these (413: a body that fits the schema's lengths but not the 256 KiB of the wire).
SCHEMA.config.checks.negative_data_rejection = NegativeDataRejectionConfig(
    expected_statuses=[400, 404, 405, 413, 415, 422, 429])
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          negative_data_rejection]


@pytest.fixture(autouse=True)
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables are looked up in an empty cache (never the user's)."""
    monkeypatch.setenv("CINQMILLE_CACHE", str(tmp_path))


@SCHEMA.parametrize()
@settings(deadline=None, suppress_health_check=list(HealthCheck))
def test_every_endpoint_answers_its_document(case: Any) -> None:
    """Generated requests, valid and not: no 5xx, statuses, types and bodies as documented, bad input refused."""
    response = case.call_and_validate(checks=CHECKS)
    if 400 <= response.status_code < 500:
        assert isinstance(response.json().get("error"), str)
