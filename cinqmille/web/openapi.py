"""The OpenAPI 3.1 document of the API (`GET /api/openapi.json`), written from the request schema of `bodies`.

Every request body and query comes from `bodies.REQUESTS` (the nodes that also
check it), so the document says exactly what the server accepts. Answers are
described by their status: a JSON object, or an error ``{"error", "field"?}``.
"""

from __future__ import annotations

from typing import Any

from .bodies import JSON_TYPE, MAX_BODY, REQUESTS

#: What each endpoint does, and the statuses it may answer besides the errors every endpoint shares.
ENDPOINT_DOCS: dict[tuple[str, str], tuple[str, tuple[int, ...]]] = {
    ("GET", "/api/rules"): ("The presets and the server's default ruleset.", (200,)),
    ("POST", "/api/rules"): ("The resolved ruleset of a preset or a rules file.", (200,)),
    ("POST", "/api/sheet"): ("The sheet after its entries.", (200, 422)),
    ("POST", "/api/log"): ("The game log of a sheet, to download.", (200, 422)),
    ("POST", "/api/replay"): ("A game log played again.", (200, 422)),
    ("POST", "/api/advice"): ("The advice of the solved table (202 while it is solved in the background).",
                              (200, 202, 422, 429)),
    ("GET", "/api/progress"): ("The progress of a table being solved.", (200, 404)),
    ("POST", "/api/prepare"): ("Start solving the table a game of `count` players reads, ahead of its first "
                               "question (while the names are typed); its status.", (200, 429)),
    ("GET", "/api/prepared"): ("The tables the server was told to prepare (`serve --prepare 4`): each one's status "
                               "and progress, and in words (\"four-player table of 'standard': solving, 42 %\").",
                               (200,)),
    ("POST", "/api/review"): ("The review of a sheet's game from the questions asked of the advice during it "
                              "(202 while the table is solved).", (200, 202, 422, 429)),
    ("GET", "/api/openapi.json"): ("This document.", (200,)),
    ("GET", "/api/join"): ("The address other devices of the network open (serve --lan) and its QR code as SVG; "
                           "both null otherwise.", (200,)),
}

_REASONS = {200: "the answer", 202: "the table is being solved: poll /api/progress", 400: "bad input (naming the field)",
            403: "a foreign Host or Origin", 404: "no such job", 413: f"a body over {MAX_BODY // 1024} KiB",
            415: f"a body that is not {JSON_TYPE}", 422: "an entry the rules refuse",
            429: "too many solves queued (Retry-After)"}

ERROR = {"type": "object", "required": ["error"],
         "properties": {"error": {"type": "string"}, "field": {"type": "string"}, "entry": {"type": "integer"}}}


def _response(status: int) -> dict[str, Any]:
    schema: dict[str, Any] = ERROR if status >= 400 else {"type": "object"}
    return {"description": _REASONS[status], "content": {JSON_TYPE: {"schema": schema}}}


def _operation(method: str, path: str) -> dict[str, Any]:
    summary, statuses = ENDPOINT_DOCS[method, path]
    shared = (400, 403) if method == "GET" else (400, 403, 413, 415)
    op: dict[str, Any] = {"summary": summary,
                          "responses": {str(s): _response(s) for s in sorted({*statuses, *shared})}}
    schema = REQUESTS.get((method, path))
    if schema is not None and method == "GET":
        op["parameters"] = [{"name": name, "in": "query", "required": name in schema.required,
                             "schema": node.json_schema()} for name, node in schema.fields]
    elif schema is not None:
        op["requestBody"] = {"required": True, "content": {JSON_TYPE: {"schema": schema.json_schema()}}}
    return op


def openapi(title: str = "cinqmille serve") -> dict[str, Any]:
    """The OpenAPI 3.1 document of every endpoint."""
    paths: dict[str, dict[str, Any]] = {}
    for method, path in ENDPOINT_DOCS:
        paths.setdefault(path, {})[method.lower()] = _operation(method, path)
    return {"openapi": "3.1.0", "info": {"title": title, "version": "1",
                                         "description": "The JSON API of the score sheet (docs/web.md)."},
            "paths": paths}
