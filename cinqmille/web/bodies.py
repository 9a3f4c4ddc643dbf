"""What a client may send, as one typed schema: every request body (and query) of the API, checked and documented.

Each field is a `Node` that checks a JSON value (`check`) and describes itself
as JSON Schema (`json_schema`); `REQUESTS` gives each endpoint its `Record`.
The same nodes refuse a request (an `ApiError` whose message and `field` name
the field) and write the OpenAPI document (`openapi.py`), so what is checked and
what is documented cannot drift apart. Nothing here trusts the client's types;
what the rules allow (a score the ruleset reaches, an entry the referee takes)
is checked afterwards by the engine.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import anyio
from starlette.requests import ClientDisconnect, Request

from ..engine.referee import MAX_PLAYERS, MIN_PLAYERS
from ..engine.sheet import LOG_FORMAT, LOG_VERSION, MAX_ENTRIES, MAX_NAME
from ..errors import CinqmilleError
from ..parsing import faces
from ..table.position import Position, PositionError
from ..rules import Rules, load_rules
from ..rules.loading import MAX_FILE_BYTES, PRESET_NAMES, rules_from_text

#: Largest request body (a rules file of 64 KiB, written inside JSON, fits).
MAX_BODY = 256 * 1024
#: Largest number accepted in a field (scores and points are far below).
MAX_NUMBER = 10**9
#: The most dice a ruleset plays with.
MAX_DICE = 6
#: Seconds a request body has to arrive, once its headers have (a 408 beyond).
BODY_TIMEOUT = 30.0
#: The content type every request body must declare.
JSON_TYPE = "application/json"

log = logging.getLogger("uvicorn.error")


class ApiError(Exception):
    """A request the server refuses: HTTP `status`, one line saying why, and the `field` it is about."""

    def __init__(self, status: int, message: str, field: str | None = None, headers: Mapping[str, str] | None = None,
                 **extra: Any):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, dict(headers or {})
        self.extra = {**({"field": field} if field is not None else {}), **extra}


def _short(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def _quote(value: str | int) -> str:
    return json.dumps(value)


# -- the schema -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """One field's type: `check` returns the value or raises an `ApiError` naming `name`; `json_schema` says it."""

    what: str = ""  # the message's "must be ..." (else one made from the type)
    doc: str = ""

    def check(self, value: Any, name: str) -> Any:
        raise NotImplementedError

    def shape(self) -> dict[str, Any]:
        raise NotImplementedError

    def describe(self) -> str:
        return self.what

    def json_schema(self) -> dict[str, Any]:
        out = self.shape()
        if self.doc:
            out["description"] = self.doc
        return out

    def refuse(self, value: Any, name: str) -> ApiError:
        return ApiError(400, f"'{name}' must be {self.describe()}, got {_short(value)}", field=name)


@dataclass(frozen=True)
class Whole(Node):
    """A whole number from `low` to `high` (JSON true and false are not numbers)."""

    low: int = 0
    high: int = MAX_NUMBER

    def check(self, value: Any, name: str) -> Any:
        if type(value) is not int:
            raise self.refuse(value, name)
        if not self.low <= value <= self.high:
            raise ApiError(400, f"'{name}' is out of range ({self.low} to {self.high}): {_short(value)}", field=name)
        return value

    def describe(self) -> str:
        return self.what or f"a whole number from {self.low} to {self.high}"

    def shape(self) -> dict[str, Any]:
        return {"type": "integer", "minimum": self.low, "maximum": self.high}


@dataclass(frozen=True)
class Text(Node):
    """A string of `shortest` to `longest` characters."""

    shortest: int = 0
    longest: int = 1000

    def check(self, value: Any, name: str) -> Any:
        if not isinstance(value, str) or not self.shortest <= len(value) <= self.longest:
            raise self.refuse(value, name)
        return value

    def describe(self) -> str:
        return self.what or f"a string of {self.shortest} to {self.longest} characters"

    def shape(self) -> dict[str, Any]:
        return {"type": "string", "minLength": self.shortest, "maxLength": self.longest}


@dataclass(frozen=True)
class Flag(Node):
    """true or false."""

    def check(self, value: Any, name: str) -> Any:
        if type(value) is not bool:
            raise self.refuse(value, name)
        return value

    def describe(self) -> str:
        return self.what or "true or false"

    def shape(self) -> dict[str, Any]:
        return {"type": "boolean"}


@dataclass(frozen=True)
class Choice(Node):
    """One of `values`, of the same JSON type (1 is not true, "1" is not 1)."""

    values: tuple[str | int, ...] = ()

    def check(self, value: Any, name: str) -> Any:
        if not any(type(value) is type(v) and value == v for v in self.values):
            raise self.refuse(value, name)
        return value

    def describe(self) -> str:
        if self.what:
            return self.what
        shown = [_quote(v) for v in self.values]
        return "one of " + ", ".join(shown)

    def shape(self) -> dict[str, Any]:
        return {"enum": list(self.values)}


@dataclass(frozen=True)
class Free(Node):
    """Any JSON value of `kind` ("object" or "array"), read further by the engine (a ruleset, an event log)."""

    kind: str = "object"

    def check(self, value: Any, name: str) -> Any:
        if not isinstance(value, dict if self.kind == "object" else list):
            raise self.refuse(value, name)
        return value

    def describe(self) -> str:
        return self.what or ("a JSON object" if self.kind == "object" else "a JSON list")

    def shape(self) -> dict[str, Any]:
        return {"type": self.kind}


@dataclass(frozen=True)
class ListOf(Node):
    """A list of `fewest` to `most` items, each an `item`."""

    item: Node = Node()
    fewest: int = 0
    most: int = 1000

    def check(self, value: Any, name: str) -> Any:
        if not isinstance(value, list) or not self.fewest <= len(value) <= self.most:
            raise self.refuse(value, name)
        return [self.item.check(v, f"{name}[{i}]") for i, v in enumerate(value)]

    def describe(self) -> str:
        return self.what or f"a list of {self.fewest} to {self.most} items"

    def shape(self) -> dict[str, Any]:
        return {"type": "array", "items": self.item.json_schema(), "minItems": self.fewest, "maxItems": self.most}


@dataclass(frozen=True)
class Record(Node):
    """A JSON object of the named `fields` (`required` ones must be there); any other key is refused."""

    fields: tuple[tuple[str, Node], ...] = ()
    required: tuple[str, ...] = ()

    def check(self, value: Any, name: str) -> Any:
        if not isinstance(value, dict):
            raise self.refuse(value, name)
        known = dict(self.fields)
        prefix = f"{name}." if name else ""
        for key in value:
            if key not in known:
                raise ApiError(400, f"unknown field {_short(key)}{' in ' + repr(name) if name else ''} "
                                    f"(expected: {', '.join(known) or 'none'})", field=f"{prefix}{key}"[:80])
        for key in self.required:
            if key not in value:
                raise ApiError(400, f"'{prefix}{key}' is missing", field=f"{prefix}{key}")
        return {key: known[key].check(v, f"{prefix}{key}") for key, v in value.items()}

    def describe(self) -> str:
        return self.what or "a JSON object"

    def shape(self) -> dict[str, Any]:
        return {"type": "object", "properties": {k: n.json_schema() for k, n in self.fields},
                "required": list(self.required), "additionalProperties": False}


@dataclass(frozen=True)
class Either(Node):
    """One of `options` (the first that fits); when none does, the message is this node's `what`."""

    options: tuple[Node, ...] = ()

    def check(self, value: Any, name: str) -> Any:
        for option in self.options:
            try:
                return option.check(value, name)
            except ApiError:
                continue
        raise self.refuse(value, name)

    def shape(self) -> dict[str, Any]:
        return {"anyOf": [o.json_schema() for o in self.options]}


@dataclass(frozen=True)
class Nullable(Node):
    """`node`, or null (the field's default)."""

    node: Node = Node()

    def check(self, value: Any, name: str) -> Any:
        return None if value is None else self.node.check(value, name)

    def describe(self) -> str:
        return self.what or f"{self.node.describe()} or null"

    def json_schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"anyOf": [self.node.json_schema(), {"type": "null"}]}
        if self.doc or self.node.doc:
            out["description"] = self.doc or self.node.doc
        return out


RULES = Either(
    options=(Choice(values=tuple(PRESET_NAMES)), Record(fields=(("toml", Text(longest=MAX_FILE_BYTES)),),
                                                        required=("toml",))),
    what=f"a preset name ({', '.join(PRESET_NAMES)}) or {{\"toml\": \"...\"}}, the text of a rules file",
    doc="A preset's name, or {\"toml\": TEXT}, the text of a rules file (default: standard).")
PLAYERS = ListOf(item=Text(shortest=1, longest=MAX_NAME), fewest=MIN_PLAYERS, most=MAX_PLAYERS,
                 what=f"{MIN_PLAYERS} to {MAX_PLAYERS} players' names of 1 to {MAX_NAME} characters",
                 doc="The players' names in playing order.")
ENTRY = Record(fields=(("kind", Choice(values=("bank", "bust", "win"))), ("points", Whole()),
                       ("dice", Nullable(node=Whole(high=MAX_DICE))), ("taken", Flag()), ("all_dice", Flag())),
               required=("kind",), what="an entry such as {\"kind\": \"bank\", \"points\": 350}",
               doc="One turn: a bank (points, dice in hand, taken over), a bust (all_dice) or an instant win.")
ENTRIES = ListOf(item=ENTRY, most=MAX_ENTRIES, doc="The turns written on the sheet, in playing order.")
SCORE = Whole(doc="A score.")
#: Most questions a sheet keeps (a long game asks a few hundred).
MAX_QUESTIONS = 4000
QUESTION = Record(fields=(
    ("entry", Whole(high=MAX_ENTRIES, doc="The entries written when the question was asked.")),
    ("turn", Nullable(node=Whole(), doc="Points set aside.")),
    ("dice", Nullable(node=Whole(high=MAX_DICE), doc="Dice in hand (bank or roll?).")),
    ("roll", Nullable(node=Text(longest=40), doc="The faces rolled (which keep?)."))),
    required=("entry",), what="a question such as {\"entry\": 3, \"turn\": 0, \"roll\": \"15332\"}",
    doc="A question asked of the advice during the game, for its review.")
QUESTIONS = ListOf(item=QUESTION, most=MAX_QUESTIONS, doc="The questions asked of the advice, in order (the review's).")
SHEET = Record(fields=(("rules", RULES), ("players", PLAYERS), ("entries", ENTRIES), ("questions", QUESTIONS)),
               required=("players", "entries"),
               doc="A score sheet: its ruleset, players and entries (and the questions asked of the advice).")
PREPARE = Record(fields=(("rules", RULES), ("count", Whole(low=MIN_PLAYERS, high=MAX_PLAYERS,
                                                            doc="The number of players."))),
                 required=("count",), doc="A ruleset and a number of players whose table to solve ahead.")
ADVICE = Record(fields=(
    ("rules", RULES), ("players", PLAYERS), ("entries", ENTRIES),
    ("me", Nullable(node=SCORE, doc="The mover's score (without a sheet).")),
    ("opp", Either(options=(SCORE, ListOf(item=SCORE, fewest=1, most=MAX_PLAYERS - 1)),
                   what="a score or a list of the opponents' scores in playing order",
                   doc="The opponent's score, or the opponents' scores in playing order.")),
    ("seat", Choice(values=("first", "second", 0, 1), doc="Two players: the mover's seat (as advise --seat).")),
    ("target", Nullable(node=Whole(), doc="The last turn's target (the other player has reached the goal).")),
    ("offer", Nullable(node=Record(fields=(("points", Whole()), ("dice", Whole(high=MAX_DICE))),
                                   required=("points", "dice"), what="{\"points\": P, \"dice\": N}"),
                       doc="A take-over offer: the previous bank's points and dice in hand.")),
    ("scoreless", ListOf(item=Whole(high=100), fewest=2, most=2,
                         what="[mine, next player's]: scoreless turns in a row (zero_turns)")),
    ("turn", Nullable(node=Whole(), doc="Points set aside this turn (default 0).")),
    ("dice", Nullable(node=Whole(high=MAX_DICE), doc="Dice in hand: bank or roll?")),
    ("roll", Nullable(node=Either(options=(Text(longest=40), ListOf(item=Whole(low=1, high=6), fewest=1,
                                                                     most=MAX_DICE)),
                                  what="faces 1 to 6 such as \"15332\" or a list such as [1, 5, 3, 3, 2]"),
                      doc="The faces rolled: which dice to keep?")),
), doc="A sheet (advice for the player to move) or a position (me, opp, ...).")
LOG = Record(fields=(
    ("format", Choice(values=(LOG_FORMAT,))), ("version", Choice(values=(LOG_VERSION,))),
    ("rules", Free(doc="The whole ruleset (as `cinqmille rules show --json`).")), ("players", PLAYERS),
    ("entries", ENTRIES), ("questions", QUESTIONS),
    ("scores", Nullable(node=ListOf(item=Whole(low=-MAX_NUMBER), most=MAX_PLAYERS))),
    ("winner", Nullable(node=Whole(high=MAX_PLAYERS - 1))), ("events", Nullable(node=ListOf(item=Free(),
                                                                                           most=100 * MAX_ENTRIES))),
), required=("format", "version", "rules", "players", "entries"), doc="A game log, as POST /api/log gives it.")
RULES_BODY = Record(fields=(("rules", RULES),), required=("rules",), doc="A ruleset to check.")
PROGRESS = Record(fields=(("job", Text(shortest=1, longest=64, doc="The key of a 202 answer.")),), required=("job",))

#: The body (POST) or query (GET) of every endpoint that takes one.
REQUESTS: dict[tuple[str, str], Record] = {
    ("POST", "/api/rules"): RULES_BODY, ("POST", "/api/sheet"): SHEET, ("POST", "/api/log"): SHEET,
    ("POST", "/api/replay"): LOG, ("POST", "/api/advice"): ADVICE, ("GET", "/api/progress"): PROGRESS,
    ("POST", "/api/prepare"): PREPARE, ("POST", "/api/review"): SHEET,
}


# -- reading a request ----------------------------------------------------------------------------------------


def json_type(header: str | None) -> bool:
    """Whether a Content-Type header says JSON (``application/json``, in UTF-8 when a charset is given)."""
    main, _, params = (header or "").partition(";")
    charset = params.strip().lower()
    return main.strip().lower() == JSON_TYPE and charset in ("", "charset=utf-8", 'charset="utf-8"')


async def read_body(request: Request) -> bytes:
    """The request body, at most `MAX_BODY` bytes, declared as JSON (read on the event loop, parsed by `parse_json`
    in a worker thread: a body of 256 KiB takes milliseconds to parse, which the loop must not spend)."""
    if not json_type(request.headers.get("content-type")):
        raise ApiError(415, f"the request body must be JSON (Content-Type: {JSON_TYPE})", field="Content-Type")
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise ApiError(413, f"the request body is larger than {MAX_BODY // 1024} KiB", field="body")
    body = bytearray()
    try:
        with anyio.move_on_after(BODY_TIMEOUT) as deadline:
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY:
                    raise ApiError(413, f"the request body is larger than {MAX_BODY // 1024} KiB", field="body")
        if deadline.cancelled_caught:
            raise ApiError(408, f"the request body did not arrive within {BODY_TIMEOUT:g} seconds", field="body",
                           headers={"Connection": "close"})
    except ClientDisconnect:
        client = request.client
        log.warning("%s %s: the client %s left before sending its whole body", request.method, request.url.path,
                    f"{client.host}:{client.port}" if client else "")
        raise ApiError(400, "the client left before sending its whole body", field="body") from None
    return bytes(body)


def parse_json(method: str, path: str, body: bytes) -> dict[str, Any]:
    """The JSON object of a request body read by `read_body`, checked against its endpoint's schema."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise ApiError(400, "the request body is not UTF-8 text", field="body") from None
    except (ValueError, RecursionError):
        raise ApiError(400, "the request body is not valid JSON", field="body") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object", field="body")
    return checked(method, path, data)


async def read_json(request: Request) -> dict[str, Any]:
    """The JSON object of the request body, at most `MAX_BODY` bytes, checked against its endpoint's schema (parsed
    here, on the caller's thread: the app parses in a worker thread, `read_body` then `parse_json`)."""
    return parse_json(request.method, request.url.path, await read_body(request))


def checked(method: str, path: str, data: dict[str, Any]) -> dict[str, Any]:
    """`data` checked against the schema of `method` `path` (the body, or the query of a GET)."""
    result: dict[str, Any] = REQUESTS[method, path].check(data, "")
    return result


@lru_cache(maxsize=32)
def _uploaded(text: str) -> Rules:
    return rules_from_text(text)


def rules_of(data: dict[str, Any], default: str = "standard") -> Rules:
    """The ruleset of a checked request: a preset name, or ``{"toml": "..."}``, the text of a rules file."""
    spec = data.get("rules", default)
    try:
        return load_rules(spec) if isinstance(spec, str) else _uploaded(spec["toml"])
    except CinqmilleError as exc:
        raise ApiError(400, str(exc).strip().splitlines()[0] if str(exc).strip() else "bad rules",
                       field="rules") from None


def roll_of(data: dict[str, Any], rules: Rules) -> tuple[int, ...] | None:
    """The faces of a checked `roll` (a string such as "15332" or "1,5,3,3,2", or a list); None when absent."""
    value = data.get("roll")
    if value is None:
        return None
    text = ",".join(str(v) for v in value) if isinstance(value, list) else value
    try:
        return faces(text, rules.dice, "roll")
    except CinqmilleError as exc:
        raise ApiError(400, str(exc), field="roll") from None


def position_of(data: dict[str, Any], rules: Rules, scores: tuple[int, ...] | None = None,
                seat: int = 0, target: int | None = None, offer: tuple[int, int] | None = None,
                scoreless: tuple[int, int] | None = None) -> tuple[Position, tuple[int, ...] | None]:
    """The position asked about in a checked request and its roll, validated as `cinqmille advise` validates it.

    `scores` (the mover's first, then the opponents in playing order) come from a
    sheet; without them the request gives ``me`` and ``opp`` (a number or a list).
    """
    from_sheet = scores is not None
    if scores is None:
        opp = data.get("opp", 0)
        scores = (data.get("me") or 0,) + (tuple(opp) if isinstance(opp, list) else (opp,))
        seat = 0 if data.get("seat", "first") in ("first", 0) else 1
        target = data.get("target")
        raw = data.get("offer")
        offer = None if raw is None else (raw["points"], raw["dice"])
    if scoreless is None:
        raw = data.get("scoreless", [0, 0])
        scoreless = (raw[0], raw[1])
    turn = data.get("turn") or 0
    dice = data.get("dice")
    rolled = roll_of(data, rules)
    opps = scores[1:]
    if rolled is not None or dice is not None or turn:
        offer = None  # the turn has begun: taking over is no longer the question
    pos = Position(scores[0], opps[0], turn, dice, seat=seat, offer=offer, target=target,
                   others=opps if len(opps) > 1 else None, scoreless=scoreless)
    if rolled is None and dice is None and turn > 0:
        raise ApiError(400, "give 'dice' (dice in hand: bank or roll?) or 'roll' (which dice to keep?)", field="dice")
    if rolled is not None and dice is not None and dice != len(rolled):
        raise ApiError(400, f"the roll has {len(rolled)} dice but 'dice' says {dice} are in hand", field="dice")
    in_hand = len(rolled) if rolled is not None else pos.dice
    try:
        replace(pos, dice=in_hand).validate(rules)
    except PositionError as exc:  # the position's fields, worded as this API's JSON fields
        raise ApiError(400, exc.worded(lambda name: f"'{name}'").splitlines()[0],
                       field=_sent_field(exc.field, data, from_sheet)) from None
    return pos, rolled


#: The fields of a position that a sheet gives (the client sent its entries, not these).
SHEET_FIELDS = ("me", "opp", "seat", "target", "offer", "scoreless")


def _sent_field(field: str | None, data: dict[str, Any], from_sheet: bool) -> str:
    """The field of the request that a position's error is about: the one the client sent (the dice in hand of a
    `roll` are its faces; the scores of a sheet come from its `entries`)."""
    if field == "dice" and data.get("dice") is None and data.get("roll") is not None:
        return "roll"
    if field is None or (from_sheet and field in SHEET_FIELDS):
        return "entries" if from_sheet else "body"
    return field
