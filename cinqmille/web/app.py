"""The Starlette app of `cinqmille serve`: the score sheet page and its JSON API under /api/.

The server keeps no game: the page keeps its entries (in localStorage) and sends
them with each request; the server plays them through the engine's score sheet
(`cinqmille.engine.sheet`) and answers with the scores, the refusal of an entry
the rules do not allow, the winner, who plays next, and the advice of the solved
table. The endpoints are listed in docs/web.md and described, from the schema
that checks every request (`bodies`), at /api/openapi.json.

Who may ask is `access.Guard`'s job (Host and Origin). The work of a request
(replaying a sheet, reading a rules file or a cached table, advising) runs in a
worker thread, at most `WORKERS` at a time, never on the event loop, so that a
heavy request does not hold up the others.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections.abc import AsyncIterator, Callable
from functools import partial
from importlib import resources
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ..errors import CinqmilleError
from ..json_values import finite
from ..table.position import Position, PositionError
from ..rules import Rules, load_rules, preset_descriptions, to_dict, to_toml
from ..rules.loading import PRESET_NAMES, RulesError
from ..solver.n_player import MAX_PLAYERS
from ..words import number_word, table_words, threat_words
from .access import Access, Guard
from .bodies import ApiError, checked, parse_json, position_of, read_body, rules_of
from .card import key_rules
from .lan import qr_svg
from .openapi import openapi
from .tables import Job, QueueFull, Tables, table_key
from ..engine.replay import replay_sheet_log
from ..engine.sheet import SheetError, SheetRefusal, SheetState, play_sheet, sheet_log
from ..solver.api import table_players
from ..app.review import ReviewError, review_sheet
from ..app.advice import advise
from ..app.review import choice_words
from ..solver.n_player import leading

if TYPE_CHECKING:
    from ..engine.sheet import SheetState
    from ..solver.result import SolveResult


#: The API's endpoints (docs/web.md).
ENDPOINTS = ("/api/rules", "/api/sheet", "/api/log", "/api/replay", "/api/advice", "/api/progress",
             "/api/prepare", "/api/prepared", "/api/review", "/api/openapi.json", "/api/join")
#: Requests worked on at once in worker threads (the others wait their turn, off the event loop).
WORKERS = 2


class Json(JSONResponse):
    """A JSON response whose non-finite numbers are null (as `advise --json` writes them)."""

    def render(self, content: Any) -> bytes:
        return json.dumps(finite(content), ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode()


def _error(status: int, message: str, **extra: Any) -> Json:
    return Json({"error": message, **extra}, status_code=status)


def _static_dir() -> str:
    return str(resources.files("cinqmille.web").joinpath("static"))


def _preset_of(rules: Rules) -> str | None:
    """The preset that `rules` is, whole: name, description and starting scores too (None for a ruleset of its own,
    even one that shares a preset's solved table: `content_key` leaves the name and the start out)."""
    return next((name for name in PRESET_NAMES if load_rules(name) == rules), None)


def _rules_spec(rules: Rules) -> Any:
    """What the page sends back as `rules`: a preset's name, or the text of the ruleset."""
    return _preset_of(rules) or {"toml": to_toml(rules)}


def create_app(default_rules: Rules | str = "standard", tables: Tables | None = None,
               access: Access | None = None, share_url: str | None = None) -> Starlette:
    """The web app; `default_rules` is the ruleset a new sheet starts with, `access` who may ask (default: loopback),
    `share_url` the address other devices of the network open (`serve --lan`: the page shows its QR code)."""
    default = load_rules(default_rules)
    store = tables or Tables()
    presets = [{"name": n, "description": d} for n, d in preset_descriptions().items()]
    listing = Json({"presets": presets, "default": _rules_spec(default), "default_name": default.name}).body
    document = Json(openapi()).body
    joining = Json({"url": share_url, "svg": qr_svg(share_url) if share_url else None}).body
    limiter: list[anyio.CapacityLimiter] = []

    async def work(fn: Callable[..., Response], *args: Any) -> Response:
        """`fn(*args)` in a worker thread (at most `WORKERS` at once), its answer rendered there too."""
        if not limiter:
            limiter.append(anyio.CapacityLimiter(WORKERS))
        return await anyio.to_thread.run_sync(partial(fn, *args), limiter=limiter[0])

    def sheet_of(data: dict[str, Any], rules: Rules) -> SheetState:
        entries = data.get("entries", [])
        for i, entry in enumerate(entries):
            if entry.get("kind") == "bank" and "points" not in entry:
                raise ApiError(400, f"'entries[{i}].points' is missing: a bank gives its points",
                               field=f"entries[{i}].points")
        try:
            return play_sheet(rules, data.get("players", ()), entries)
        except SheetError as exc:
            raise ApiError(400, _line(exc), field=sheet_field(str(exc))) from None

    async def index(request: Request) -> Response:
        return FileResponse(f"{_static_dir()}/index.html", headers={"Cache-Control": "no-cache"})

    async def rules_list(request: Request) -> Response:
        return Response(listing, media_type="application/json")

    async def api_document(request: Request) -> Response:
        return Response(document, media_type="application/json")

    async def join(request: Request) -> Response:
        return Response(joining, media_type="application/json")

    def rules_answer(data: dict[str, Any]) -> Response:
        rules = rules_of(data)
        return Json({"name": rules.name, "description": rules.description, "rules": to_dict(rules),
                     "spec": _rules_spec(rules), "key_rules": key_rules(rules), "toml": to_toml(rules)})

    def table_for(rules: Rules, players: int) -> "SolveResult | Job":
        """The table a game of `players` reads (`api.table_players`): at hand, or the job that solves it."""
        if players == 2:
            return store.get(rules, 2)
        read = table_players(rules, players)
        # a larger table in memory (one the server was told to prepare, `serve --prepare`) is read before a smaller
        read = next((more for more in range(min(players, MAX_PLAYERS), read, -1) if store.ready(rules, more)), read)
        if store.job(table_key(rules, read)) is None:  # first asked: the two-player table first (a few seconds),
            with contextlib.suppress(QueueFull):  # whose move the game is shown while its own table is solved
                store.get(rules, 2)
        return store.get(rules, read)

    def sheet_answer(data: dict[str, Any]) -> Response:
        rules = rules_of(data)
        state = sheet_of(data, rules)
        out: dict[str, Any] = state.as_dict()
        if state.to_move is not None:  # start solving the game's table now, before the first question
            try:
                table = table_for(rules, len(state.names))
                out["table"] = table.as_dict() if isinstance(table, Job) else {"status": "ready"}
            except QueueFull as exc:  # not started: the advice asks again (a 429 until a place frees)
                out["table"] = {"status": "busy", "retry_after": exc.retry_after}
        return Json(out)

    def log_answer(data: dict[str, Any]) -> Response:
        log = sheet_log(sheet_of(data, rules_of(data)))
        if data.get("questions"):
            log["questions"] = data["questions"]  # the questions asked of the advice: the review reads them
        return Json(log, headers={"Content-Disposition": 'attachment; filename="cinqmille-sheet.json"'})

    def prepare_answer(data: dict[str, Any]) -> Response:
        table = table_for(rules_of(data), data["count"])
        return Json({"table": table.as_dict() if isinstance(table, Job) else {"status": "ready"}})

    def review_answer(data: dict[str, Any]) -> Response:
        rules = rules_of(data)
        state = sheet_of(data, rules)
        table = table_for(rules, len(state.names))
        if isinstance(table, Job):
            return Json({**table.as_dict(), "rules": rules.name}, status_code=202)
        try:
            review = review_sheet(rules, state.names, data["entries"], data.get("questions", []),
                                  result_for=lambda players: table)
        except ReviewError as exc:
            raise ApiError(400, _line(exc), field="questions") from None
        return Json(review.as_dict())

    def replay_answer(data: dict[str, Any]) -> Response:
        try:
            state = replay_sheet_log(data)
        except SheetError as exc:
            raise ApiError(400, _line(exc), field=sheet_field(str(exc))) from None
        except RulesError as exc:
            raise ApiError(400, _line(exc), field="rules") from None
        return Json({"rules": _rules_spec(state.rules), "players": list(state.names),
                     "entries": [e.as_dict() for e in state.entries], "sheet": state.as_dict(),
                     "questions": data.get("questions", [])})

    def advice_answer(data: dict[str, Any]) -> Response:
        rules = rules_of(data)
        if "players" in data or "entries" in data:
            state = sheet_of(data, rules)
            if state.to_move is None:
                raise ApiError(400, "the game is over: there is no move to advise")
            pos, roll = position_of(data, rules, *_seat_of(state))
        else:
            pos, roll = position_of(data, rules)
        table = table_for(rules, 2 if pos.others is None else len(pos.others) + 1)
        if isinstance(table, Job):
            waiting = {**table.as_dict(), "rules": rules.name}  # the name asked, not the first
            if pos.others is not None:
                waiting["interim"] = interim(rules, pos, roll, len(pos.others) + 1)
            return Json(waiting, status_code=202)
        return Json(advise(table, pos, roll).as_dict())

    def interim(rules: Rules, pos: Position, roll: tuple[int, ...] | None, players: int) -> dict[str, Any] | None:
        """While a game of three or more waits for its table: the two-player table's move against the opponent
        who threatens most (`n_player.leading`, the solver's reduction), when that table is at hand; no chance
        (it would be the two-player game's, not this game's)."""
        assert pos.others is not None
        try:
            small = store.get(rules, 2)
        except QueueFull:
            return None
        if isinstance(small, Job):
            return None
        answer = advise(small, dataclasses.replace(pos, opp=leading(pos.others, 1)[0], others=None), roll)
        move = None if answer.best is None else choice_words(answer.best)
        return {"move": move, "table": 2, "players": players,
                "text": ("No scoring die: the turn is lost." if move is None else
                         f"Meanwhile, the move of {table_words(2)} against {threat_words(1)}: {move}. No chance is "
                         f"shown until this game's table is solved: the two-player game's would not be this "
                         f"game's of {number_word(players)}.")}

    def endpoint(answer: Callable[[dict[str, Any]], Response]) -> Callable[[Request], Any]:
        def parse_and_answer(method: str, path: str, body: bytes) -> Response:
            return answer(parse_json(method, path, body))

        async def handle(request: Request) -> Response:
            body = await read_body(request)  # read on the loop, parsed and answered in a worker thread
            return await work(parse_and_answer, request.method, request.url.path, body)

        return handle

    async def progress(request: Request) -> Response:
        key = checked("GET", "/api/progress", dict(request.query_params))["job"]
        job = store.job(key)
        if job is None:
            raise ApiError(404, f"no table is being solved under the key {key!r}", field="job")
        return Json(job.as_dict())

    async def prepared(request: Request) -> Response:
        return Json({"tables": store.prepared()})

    async def api_missing(request: Request) -> Response:
        if request.url.path in ENDPOINTS:
            raise ApiError(405, f"{request.method[:10]} is not allowed on {request.url.path}")
        raise ApiError(404, f"no such endpoint: {request.url.path[:100]}")

    async def on_api_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, ApiError)
        return Json({"error": exc.message, **exc.extra}, status_code=exc.status, headers=exc.headers)

    async def on_queue_full(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, QueueFull)
        return Json({"error": str(exc)}, status_code=429, headers={"Retry-After": str(exc.retry_after)})

    async def on_refusal(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, SheetRefusal)
        return _error(422, exc.reason, field=f"entries[{exc.index}]", entry=exc.index)

    async def on_bad_input(request: Request, exc: Exception) -> Response:
        text = exc.worded(lambda name: f"'{name}'") if isinstance(exc, PositionError) else str(exc)
        line = text.strip().splitlines()[0] if text.strip() else "bad input"
        field = exc.field if isinstance(exc, PositionError) else None
        return _error(400, line[:1000], **({"field": field} if field else {}))

    async def on_http(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = {404: "not found", 405: "method not allowed"}.get(exc.status_code, str(exc.detail))
        return _error(exc.status_code, message)

    async def on_crash(request: Request, exc: Exception) -> Response:
        return _error(500, "internal error: the server could not answer this request")

    routes = [
        Route("/", index),
        Route("/api/rules", rules_list, methods=["GET"]),
        Route("/api/rules", endpoint(rules_answer), methods=["POST"]),
        Route("/api/sheet", endpoint(sheet_answer), methods=["POST"]),
        Route("/api/log", endpoint(log_answer), methods=["POST"]),
        Route("/api/replay", endpoint(replay_answer), methods=["POST"]),
        Route("/api/advice", endpoint(advice_answer), methods=["POST"]),
        Route("/api/progress", progress, methods=["GET"]),
        Route("/api/prepare", endpoint(prepare_answer), methods=["POST"]),
        Route("/api/prepared", prepared, methods=["GET"]),
        Route("/api/review", endpoint(review_answer), methods=["POST"]),
        Route("/api/openapi.json", api_document, methods=["GET"]),
        Route("/api/join", join, methods=["GET"]),
        Route("/api/{rest:path}", api_missing),
        Mount("/static", StaticFiles(directory=_static_dir()), name="static"),
    ]
    handlers: dict[Any, Any] = {
        ApiError: on_api_error, QueueFull: on_queue_full, SheetRefusal: on_refusal, SheetError: on_bad_input, CinqmilleError: on_bad_input,
        HTTPException: on_http, Exception: on_crash,
    }
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        store.close()

    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    app.state.tables = store
    app.add_middleware(Guard, access=access or Access.local())
    return app


def _line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:1000] if text else "bad input"


def sheet_field(message: str) -> str:
    """The request field a sheet's (or a sheet log's) error is about, read from the engine's message."""
    entry = re.match(r"entry (\d+)(?:: '(\w+)')?", message)
    if entry:
        return f"entries[{int(entry.group(1)) - 1}]" + (f".{entry.group(2)}" if entry.group(2) else "")
    for start, field in (("players", "players"), ("entries", "entries"), ("sheet log: 'entries'", "entries"),
                         ("sheet log: its entries give the scores", "scores"), ("sheet log version", "version"),
                         ("not a sheet log", "format")):
        if message.startswith(start):
            return field
    return "rules" if message.startswith("sheet log") else "entries"


def _seat_of(state: "SheetState") -> tuple[tuple[int, ...], int, int | None, tuple[int, int] | None,
                                           tuple[int, int]]:
    """The scores (the mover's first, then in playing order), seat, last-turn target, offer and scoreless-turn
    counters (the mover's and the next player's) of a sheet's mover: the fields of `Position.at_table`, the one
    reading of a table's state."""
    pos = state.position()
    return (pos.me,) + (pos.others or (pos.opp,)), pos.seat, pos.target, pos.offer, pos.scoreless
