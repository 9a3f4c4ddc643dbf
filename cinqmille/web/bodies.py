"""Reading what a client sends: a JSON body of bounded size, a ruleset, a sheet, a position to advise on.

Every failure is an `ApiError` with an HTTP status and one line, which the app
turns into ``{"error": "..."}``; nothing here trusts the client's types.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from typing import Any

from starlette.requests import Request

from ..errors import CinqmilleError
from ..parsing import faces
from ..position import Position, PositionError
from ..rules import Rules, load_rules
from ..rules.loading import PRESET_NAMES, rules_from_text

#: Largest request body (a rules file of 64 KiB, written inside JSON, fits).
MAX_BODY = 256 * 1024
#: Largest number accepted in a field (scores and points are far below).
MAX_NUMBER = 10**9


class ApiError(Exception):
    """A request the server refuses: HTTP `status` and one line saying why."""

    def __init__(self, status: int, message: str, **extra: Any):
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra


async def read_json(request: Request) -> dict[str, Any]:
    """The JSON object of the request body, at most `MAX_BODY` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
        raise ApiError(413, f"the request body is larger than {MAX_BODY // 1024} KiB")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise ApiError(413, f"the request body is larger than {MAX_BODY // 1024} KiB")
    try:
        data = json.loads(bytes(body).decode("utf-8"))
    except UnicodeDecodeError:
        raise ApiError(400, "the request body is not UTF-8 text") from None
    except (ValueError, RecursionError):
        raise ApiError(400, "the request body is not valid JSON") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return data


def number(data: dict[str, Any], key: str, default: int | None = None) -> int | None:
    """A whole number field (absent or null: `default`)."""
    value = data.get(key)
    if value is None:
        return default
    if type(value) is not int:
        raise ApiError(400, f"'{key}' must be a whole number, got {_short(value)}")
    if abs(value) > MAX_NUMBER:
        raise ApiError(400, f"'{key}' is out of range: {value}")
    return value


def _short(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (str, int, float, bool, type(None))) else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


@lru_cache(maxsize=32)
def _uploaded(text: str) -> Rules:
    return rules_from_text(text)


def rules_of(data: dict[str, Any], default: str = "standard") -> Rules:
    """The ruleset of a request: a preset name, or ``{"toml": "..."}``, the text of a rules file."""
    spec = data.get("rules", default)
    if isinstance(spec, str):
        if spec not in PRESET_NAMES:
            raise ApiError(400, f"unknown ruleset {_short(spec)} (presets: {', '.join(PRESET_NAMES)}; "
                                "or send {\"toml\": \"...\"}, the text of a rules file)")
        return load_rules(spec)
    if isinstance(spec, dict) and set(spec) == {"toml"} and isinstance(spec["toml"], str):
        return _uploaded(spec["toml"])
    raise ApiError(400, "'rules' must be a preset name or {\"toml\": \"...\"}, the text of a rules file")


def roll_of(data: dict[str, Any], rules: Rules) -> tuple[int, ...] | None:
    """The faces of `roll`: a string such as "15332" or "1,5,3,3,2", or a list of faces; None when absent."""
    value = data.get("roll")
    if value is None:
        return None
    if isinstance(value, list) and all(type(v) is int for v in value) and len(value) <= 6:
        value = ",".join(str(v) for v in value) if value else "0"
    if not isinstance(value, str) or len(value) > 40:
        raise ApiError(400, "'roll' must be faces 1 to 6 such as \"15332\" or a list such as [1, 5, 3, 3, 2]")
    return faces(value, rules.dice, "roll")


def position_of(data: dict[str, Any], rules: Rules, scores: tuple[int, ...] | None = None,
                seat: int = 0, target: int | None = None, offer: tuple[int, int] | None = None,
                scoreless: tuple[int, int] | None = None) -> tuple[Position, tuple[int, ...] | None]:
    """The position asked about and its roll, validated as `cinqmille advise` validates it.

    `scores` (the mover's first, then the opponents in playing order) come from a
    sheet; without them the request gives ``me`` and ``opp`` (a number or a list).
    """
    if scores is None:
        me = number(data, "me", 0) or 0
        opp = data.get("opp", 0)
        opps = tuple(opp) if isinstance(opp, list) else (opp,)
        if not opps or not all(type(x) is int and abs(x) <= MAX_NUMBER for x in opps):
            raise ApiError(400, "'opp' must be a score or a list of the opponents' scores in playing order")
        scores = (me,) + opps
        seat = 0 if data.get("seat") in (None, 0, "first") else 1
        target = number(data, "target")
        raw = data.get("offer")
        if raw is not None:
            if not (isinstance(raw, dict) and type(raw.get("points")) is int and type(raw.get("dice")) is int):
                raise ApiError(400, "'offer' must be {\"points\": P, \"dice\": N}")
            offer = (raw["points"], raw["dice"])
    if scoreless is None:
        raw = data.get("scoreless", [0, 0])
        if not (isinstance(raw, list) and len(raw) == 2 and all(type(z) is int and 0 <= z <= 100 for z in raw)):
            raise ApiError(400, "'scoreless' must be [mine, next player's]: scoreless turns in a row (zero_turns)")
        scoreless = (raw[0], raw[1])
    turn = number(data, "turn", 0) or 0
    dice = number(data, "dice")
    rolled = roll_of(data, rules)
    opps = scores[1:]
    if rolled is not None or dice is not None or turn:
        offer = None  # the turn has begun: taking over is no longer the question
    pos = Position(scores[0], opps[0], turn, dice, seat=seat, offer=offer, target=target,
                   others=opps if len(opps) > 1 else None, scoreless=scoreless)
    if rolled is None and dice is None and turn > 0:
        raise PositionError("give 'dice' (dice in hand: bank or roll?) or 'roll' (which dice to keep?)")
    if rolled is not None and dice is not None and dice != len(rolled):
        raise PositionError(f"the roll has {len(rolled)} dice but 'dice' says {dice} are in hand")
    in_hand = len(rolled) if rolled is not None else pos.dice
    try:
        replace(pos, dice=in_hand).validate(rules)
    except CinqmilleError as exc:
        raise ApiError(400, str(exc).splitlines()[0]) from None
    return pos, rolled
