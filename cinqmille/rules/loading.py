"""Presets, TOML files, validation and the canonical form of a `Rules`.

A ruleset is named either by a preset (`standard`) or by a TOML file path. A
file may start from a preset with `base = "standard"` and override any key.
Every error is a `RulesError` whose message names the file and the key.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import stat
import tomllib
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal, TypeVar

from ..errors import CinqmilleError
from .model import FinalStretch, Rules, Straights, ZeroTurns

PRESET_NAMES: tuple[str, ...] = ("standard", "wikipedia", "house", "sheet", "six-dice", "ten-thousand",
                                 "farkle-cardgames", "kcd")
DEFAULT_RULES = "standard"
Choice = TypeVar("Choice", bound=str)

#: Bounds on what a rules file may say, checked when it is read (docs/rules.md, "Limits").
MAX_POINTS = 1_000_000  # any number of points, the goal included
MAX_FILE_BYTES = 64 * 1024  # a rules file
MAX_BASE_DEPTH = 16  # files chained by `base`
MAX_TEXT = 200  # characters of `name`; `description` may have five times as many
MAX_ZERO_TURNS = 100  # zero_turns.count
MAX_SEATS = 8  # entries of `start` (the engine's largest game)

#: The keys of a rules file that are a plain value, in the order of `to_dict` (the tables follow).
_FLAT_KEYS = (
    "dice", "goal", "end", "opening", "min_bank", "multiples", "kinds", "straights", "full_house",
    "three_pairs", "four_and_pair_as_three_pairs", "two_triplets", "four_and_pair", "no_score_roll", "five_ones", "five_fives", "split_combinations", "must_keep_triples", "all_scoring_roll",
    "hot_dice", "rule_of_50", "take_over", "last_round", "crosses", "bust_strikes_last_score",
    "ties", "prediction", "start",
)
_META_KEYS = {"name", "description", "base"}
_CHOICES = {
    "end": ("reach", "exact"),
    "multiples": ("additive", "linear", "doubling", "fixed"),
    "all_scoring_roll": ("free", "keep_all_and_roll"),
    "hot_dice": ("optional", "mandatory"),
    "ties": ("off", "knock_back", "deadly"),
}
_ZERO_TURNS_TO: tuple[Literal["zero", "previous"], ...] = ("zero", "previous")
_BOOLS = {
    "split_combinations", "must_keep_triples", "four_and_pair_as_three_pairs", "rule_of_50", "take_over", "last_round",
    "crosses", "bust_strikes_last_score", "prediction",
}


#: The Farkle-family keys (RULES.md section 9) with their "off" values, which the content key leaves out so that
#: a ruleset that does not use them keeps the cache identity it had before they existed.
_FAMILY_OFF: dict[str, Any] = {
    "kinds": False, "three_pairs": 0, "four_and_pair_as_three_pairs": False, "two_triplets": 0, "four_and_pair": 0,
    "no_score_roll": 0,
}
#: Every key a rules file may have at its top level (the meta keys, the plain values and the tables).
_TOP_KEYS = (*sorted(_META_KEYS), *_FLAT_KEYS, "single", "triple", "final_stretch", "zero_turns")
#: The keys of a `[straights]` table: the faces of each straight, and `from_six`.
_STRAIGHT_KEYS = {"12345": "low", "23456": "high", "123456": "full"}


class RulesError(CinqmilleError):
    """A ruleset that cannot be read or does not make sense; the message is one line."""


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Checker:
    """Collects the key path for error messages."""

    def __init__(self, source: str):
        self.source = source

    def fail(self, key: str, message: str) -> RulesError:
        return RulesError(f"{self.source}: key '{key}': {message}")

    def points(self, key: str, value: Any, *, positive: bool = False) -> int:
        if not _is_int(value):
            raise self.fail(key, f"expected a whole number of points, got {_short(value)}")
        if value < 0 or (positive and value == 0):
            raise self.fail(key, f"expected {'a positive' if positive else 'a non-negative'} number of points, got {_short(value)}")
        if value > MAX_POINTS:
            raise self.fail(key, f"at most {MAX_POINTS:,} points, got {_short(value)}")
        if value % 50:
            raise self.fail(key, f"points must be a multiple of 50, got {value}")
        return int(value)

    def boolean(self, key: str, value: Any) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"expected true or false, got {_short(value)}")
        return value

    def choice(self, key: str, value: Any, choices: tuple[Choice, ...]) -> Choice:
        if not isinstance(value, str) or value not in choices:
            raise self.fail(key, f"expected one of {', '.join(choices)}, got {_short(value)}")
        return value

    def text(self, key: str, value: Any, limit: int) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {_short(value)}")
        if len(value) > limit or any(not ch.isprintable() for ch in value):
            raise self.fail(key, f"expected one line of at most {limit} printable characters")
        return value


def unknown_key(key: str, known: "Iterable[str]") -> str:
    """'unknown key', with the closest known key when one is close ('unknown key (did you mean 'opening'?)')."""
    import difflib  # lazy: start-up time (only a misspelt key needs it)

    close = difflib.get_close_matches(key, list(known), n=1, cutoff=0.75)
    return f"unknown key (did you mean '{close[0]}'?)" if close else "unknown key"


def _short(value: Any) -> str:
    """`repr` of a value from a file, cut so that an error message stays one short line."""
    text = repr(value) if not _is_int(value) or abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
    return text if len(text) <= 60 else text[:57] + "..."


def preset_path(name: str) -> Path:
    """The installed TOML file of preset `name`."""
    data = importlib.import_module("cinqmille.data")  # its folder, not `importlib.resources`: start-up time
    return Path(str(data.__file__)).parent / "presets" / f"{name}.toml"


def _read_toml(path: Path, source: str) -> dict[str, Any]:
    """The TOML document of a regular file of at most `MAX_FILE_BYTES`."""
    try:
        with open(path, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise RulesError(f"{source}: not a regular file")
            data = handle.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise RulesError(f"{source}: no such preset or file") from None
    except OSError as exc:
        raise RulesError(f"{source}: cannot read the file ({exc.strerror or exc.__class__.__name__})") from None
    return _parse_toml(data, source)


def _parse_toml(data: bytes, source: str) -> dict[str, Any]:
    """The TOML document in `data` (at most `MAX_FILE_BYTES` of UTF-8), each failure one line naming `source`."""
    if len(data) > MAX_FILE_BYTES:
        raise RulesError(f"{source}: a rules file is at most {MAX_FILE_BYTES // 1024} KiB")
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise RulesError(f"{source}: not a UTF-8 text file") from None
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{source}: not valid TOML ({exc})") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of thousands of digits, deep nesting
        raise RulesError(f"{source}: not a usable TOML file ({str(exc).splitlines()[0][:80]})") from None


def _apply(rules: Rules, data: dict[str, Any], check: _Checker) -> Rules:
    """Return `rules` with the keys of one TOML document applied, each checked."""
    changes: dict[str, Any] = {}
    for key, value in data.items():
        if key in _META_KEYS:
            if key in ("name", "description"):
                changes[key] = check.text(key, value, MAX_TEXT * (5 if key == "description" else 1))
        elif key in _BOOLS:
            changes[key] = check.boolean(key, value)
        elif key in _CHOICES:
            changes[key] = check.choice(key, value, _CHOICES[key])
        elif key == "dice":
            if not _is_int(value) or value not in (5, 6):
                raise check.fail(key, f"the game is played with 5 or 6 dice, got {_short(value)}")
            changes[key] = value
        elif key in ("goal",):
            changes[key] = check.points(key, value, positive=True)
        elif key in ("opening", "min_bank", "full_house", "three_pairs", "two_triplets", "four_and_pair",
                     "no_score_roll"):
            if value is False and key != "opening" and key != "min_bank":
                value = 0
            changes[key] = check.points(key, value)
        elif key == "straights":
            if isinstance(value, dict):
                continue  # a table is read below, once the dice count of this document is known
            changes[key] = check.points(key, 0 if value is False else value)
        elif key == "kinds":
            changes[key] = _kinds(value, rules.kinds, check)
        elif key in ("five_ones", "five_fives"):
            if isinstance(value, str):
                changes[key] = check.choice(key, value, ("win", "multiples"))
            else:
                changes[key] = check.points(key, value, positive=True)
        elif key == "single":
            if not isinstance(value, dict):
                raise check.fail(key, "expected a table with keys 1 and 5")
            for face, points in value.items():
                if face not in ("1", "5"):
                    raise check.fail(f"single.{face}", "only 1s and 5s score as single dice")
                changes[f"single_{face}"] = check.points(f"single.{face}", points)
        elif key == "triple":
            if not isinstance(value, dict):
                raise check.fail(key, "expected a table with keys 1 to 6")
            triples = list(changes.get("triples", rules.triples))
            for face, points in value.items():
                if face not in ("1", "2", "3", "4", "5", "6"):
                    raise check.fail(f"triple.{face}", "faces are 1 to 6")
                triples[int(face) - 1] = check.points(f"triple.{face}", points, positive=True)
            changes["triples"] = tuple(triples)
        elif key == "start":
            if not isinstance(value, list) or len(value) > MAX_SEATS:
                raise check.fail(key, f"expected a list of at most {MAX_SEATS} starting scores, first seat first, "
                                      f"got {_short(value)}")
            changes[key] = tuple(check.points(f"start.{i}", v) for i, v in enumerate(value))
        elif key == "final_stretch":
            changes[key] = _final_stretch(value, rules.final_stretch, check)
        elif key == "zero_turns":
            changes[key] = _zero_turns(value, rules.zero_turns, check)
        else:
            raise check.fail(key, unknown_key(key, _TOP_KEYS))
    if isinstance(data.get("straights"), dict):
        current = replace(rules, **{k: changes[k] for k in ("dice",) if k in changes})
        changes["straights"] = _straights(data["straights"], current.straights_by_faces, check)
    if changes.get("multiples", "fixed") != "fixed" and "kinds" not in changes:
        changes["kinds"] = ()  # a formula replaces the fixed points of a base ruleset
    return replace(rules, **changes)


def _straights(value: dict[str, Any], current: Straights, check: _Checker) -> Straights:
    """A `[straights]` table applied over the current straights (faces not named keep their points)."""
    fields = {"low": current.low, "high": current.high, "full": current.full}
    from_six = current.from_six
    for key, item in value.items():
        if key in _STRAIGHT_KEYS:
            fields[_STRAIGHT_KEYS[key]] = check.points(f"straights.{key}", 0 if item is False else item)
        elif key == "from_six":
            from_six = check.boolean("straights.from_six", item)
        else:
            raise check.fail(f"straights.{key}", "expected 12345, 23456, 123456 or from_six")
    return Straights(from_six=from_six, **fields)


def _kinds(value: Any, current: tuple[int, ...], check: _Checker) -> tuple[int, ...]:
    """A `[kinds]` table (points of 4, 5 and 6 of a kind) applied over the current one, or `false`."""
    if value is False:
        return ()
    if not isinstance(value, dict):
        raise check.fail("kinds", "expected false or a table with keys 4, 5 and 6 (points of that many of a kind)")
    kinds = list(current or (0, 0, 0))
    for size, points in value.items():
        if size not in ("4", "5", "6"):
            raise check.fail(f"kinds.{size}", "sizes are 4, 5 and 6 (three of a kind is [triple])")
        kinds[int(size) - 4] = check.points(f"kinds.{size}", points)
    return tuple(kinds)


def _final_stretch(value: Any, current: FinalStretch | None, check: _Checker) -> FinalStretch | None:
    if value is False:
        return None
    if not isinstance(value, dict):
        raise check.fail("final_stretch", "expected false or a table {from = POINTS, cap = BOOL}")
    base = current or FinalStretch()
    start, cap = base.start, base.cap
    for key, item in value.items():
        if key == "from":
            start = check.points("final_stretch.from", item, positive=True)
        elif key == "cap":
            cap = check.boolean("final_stretch.cap", item)
        else:
            raise check.fail(f"final_stretch.{key}", unknown_key(key, ("from", "cap")))
    return FinalStretch(start=start, cap=cap)


def _zero_turns(value: Any, current: ZeroTurns | None, check: _Checker) -> ZeroTurns | None:
    if value is False:
        return None
    if not isinstance(value, dict):
        raise check.fail("zero_turns", "expected false or a table {count = N, to = \"zero\"|\"previous\"|-POINTS}")
    base = current or ZeroTurns()
    count, to = base.count, base.to
    for key, item in value.items():
        if key == "count":
            if not _is_int(item) or not 1 <= item <= MAX_ZERO_TURNS:
                raise check.fail("zero_turns.count", f"expected a whole number of turns from 1 to {MAX_ZERO_TURNS}, got {_short(item)}")
            count = item
        elif key == "to":
            if isinstance(item, str):
                to = check.choice("zero_turns.to", item, _ZERO_TURNS_TO)
            elif _is_int(item) and item < 0:
                check.points("zero_turns.to", -item, positive=True)
                to = item
            else:
                raise check.fail("zero_turns.to", f"expected \"zero\", \"previous\" or a negative number of points, got {_short(item)}")
        else:
            raise check.fail(f"zero_turns.{key}", unknown_key(key, ("count", "to")))
    return ZeroTurns(count=count, to=to)


def validate(rules: Rules, source: str) -> Rules:
    """Check the settings against each other; return `rules` or raise `RulesError`."""
    check = _Checker(source)
    if rules.opening >= rules.goal:
        raise check.fail("opening", f"the opening ({rules.opening}) must be below the goal ({rules.goal})")
    if rules.min_bank >= rules.goal:
        raise check.fail("min_bank", f"the minimum bank ({rules.min_bank}) must be below the goal ({rules.goal})")
    if rules.single_1 == 0 and rules.single_5 == 0 and not any(rules.triples):
        raise check.fail("single", "no die can ever score")
    if rules.final_stretch is not None:
        start = rules.final_stretch.start
        if not rules.opening < start < rules.goal:
            raise check.fail("final_stretch.from", f"must lie between the opening ({rules.opening}) and the goal ({rules.goal}), got {start}")
    if rules.rule_of_50 and rules.goal % 100:
        raise check.fail("rule_of_50", f"with the rule of 50 a goal ending in 50 ({rules.goal}) can never be banked")
    if rules.prediction and rules.dice != 5:
        raise check.fail("prediction", "the prediction of the last two dice is a 5-dice rule")
    if rules.prediction and not (rules.single_1 or rules.single_5):
        raise check.fail("prediction", "two dice never score without single 1s or 5s: there is nothing to announce")
    if rules.zero_turns is not None and rules.zero_turns.to == "previous" and rules.crosses:
        raise check.fail("zero_turns", "zero_turns and crosses are two penalty systems for the same scoreless turns; choose one")
    _validate_start(rules, check)
    return _validate_family(rules, check)


def _validate_start(rules: Rules, check: _Checker) -> None:
    """Each starting score must be one that `start_problem` accepts."""
    for i, score in enumerate(rules.start):
        problem = start_problem(rules, score)
        if problem:
            raise check.fail(f"start.{i}", problem)


def start_problem(rules: Rules, score: int) -> str | None:
    """Why `score` (points, a multiple of 50) cannot be a starting score under `rules`, or None.

    A start is a score the ruleset can write on the sheet, below the goal; one
    below the opening is not opened (docs/rules.md, "Starting scores").
    """
    fs, zero = rules.final_stretch, rules.zero_turns
    if not 0 <= score < rules.goal or score % 50:
        return f"a starting score must be a multiple of 50 from 0 to below the goal ({rules.goal}), got {score}"
    if rules.rule_of_50 and score % 100:
        return f"with the rule of 50 a score ending in 50 ({score}) cannot be written"
    if fs is not None and fs.cap and fs.start < score:
        return f"with a capped final stretch no score lies between {fs.start} and the goal, got {score}"
    if 0 < score < rules.opening and zero is not None and isinstance(zero.to, int):
        return (f"a start below the opening ({rules.opening}) is not opened, and zero_turns falls by points leave "
                f"opened players below it: the two cannot be told apart")
    return None


def _validate_family(rules: Rules, check: _Checker) -> Rules:
    """Check the combinations of RULES.md section 9; return `rules` with its straights in their simplest form."""
    d = rules.dice
    if rules.multiples == "fixed":
        missing = [size for size in range(4, d + 1) if not rules.kind(size)]
        if missing:
            raise check.fail("kinds", f'multiples = "fixed" needs the points of {", ".join(map(str, missing))} of a kind '
                                      f"in [kinds]")
    elif any(rules.kinds):
        raise check.fail("kinds", f'the points of [kinds] are those of multiples = "fixed", not "{rules.multiples}"')
    if d == 5 and rules.kind(6):
        raise check.fail("kinds.6", "six of a kind needs six dice")
    for key, name in (("three_pairs", "three pairs"), ("two_triplets", "two triplets"),
                      ("four_and_pair", "four of a kind and a pair")):
        if getattr(rules, key) and d != 6:
            raise check.fail(key, f"{name} need six dice")
    if rules.four_and_pair_as_three_pairs and not rules.three_pairs:
        raise check.fail("four_and_pair_as_three_pairs", "three pairs do not score (three_pairs = 0)")
    if not isinstance(rules.straights, Straights):
        return rules
    st = rules.straights
    if d == 5 and st.full:
        raise check.fail("straights.123456", "the straight 1-2-3-4-5-6 needs six dice")
    if st.from_six and d != 6:
        raise check.fail("straights.from_six", "a straight from five of six dice rolled needs six dice")
    if st.from_six and not (st.low or st.high):
        raise check.fail("straights.from_six", "no five-dice straight scores (12345 and 23456 are 0)")
    if d == 5 and st.low == st.high and not st.full:
        return replace(rules, straights=st.low)  # the integer form says the same
    if d == 6 and not (st.low or st.high or st.from_six):
        return replace(rules, straights=st.full)
    return rules


def _identity(spec: str) -> str:
    """What a `base` chain is checked for loops on: a preset's name, or a file's resolved path."""
    if spec in PRESET_NAMES:
        return spec
    try:
        return os.path.realpath(spec)
    except (OSError, ValueError):
        return spec


def _resolve(spec: str, seen: tuple[str, ...]) -> Rules:
    if not spec.strip():
        raise RulesError("an empty ruleset name: give a preset name or a TOML file")
    if len(spec) > 4096 or any(not ch.isprintable() for ch in spec):
        raise RulesError(f"{_short(spec)}: not a preset name nor a file path")
    if _identity(spec) in seen:
        raise RulesError(f"{spec}: 'base' chain loops back on itself")
    if len(seen) >= MAX_BASE_DEPTH:
        raise RulesError(f"{spec}: 'base' chain deeper than {MAX_BASE_DEPTH} files")
    if spec in PRESET_NAMES:
        path, source, is_preset = preset_path(spec), f"preset {spec}", True
    else:
        path, source, is_preset = Path(spec), spec, False
        if not path.suffix and not path.exists():
            raise RulesError(f"{spec}: unknown preset (known: {', '.join(PRESET_NAMES)}) and no such file")
    data = _read_toml(path, source)
    check = _Checker(source)
    base = data.get("base")
    if base is None:
        rules = Rules()
    elif not isinstance(base, str):
        raise check.fail("base", f"expected a preset name or a file path, got {_short(base)}")
    else:
        if base not in PRESET_NAMES and not Path(base).is_absolute():
            base = str((path.parent / base)) if (path.parent / base).exists() else base
        try:
            rules = _resolve(base, seen + (_identity(spec),))
        except RulesError as exc:
            raise RulesError(f"{source}: base: {exc}") from None
    if "name" not in data:
        data = {**data, "name": spec if is_preset else path.stem[:MAX_TEXT]}
    if "description" not in data and not is_preset:
        data = {**data, "description": f"{rules.name} with the changes of {path.name}"[:MAX_TEXT * 5]}
    rules = _apply(rules, data, check)
    return validate(rules, source)


def load_rules(spec: str | Rules | None = None) -> Rules:
    """The ruleset named by a preset name, a TOML path, or a `Rules` (returned as is)."""
    if isinstance(spec, Rules):
        return spec
    return _resolve(DEFAULT_RULES if spec is None else spec, ())


def rules_from_dict(data: dict[str, Any], source: str = "<dict>") -> Rules:
    """A ruleset from a dictionary shaped like a TOML file (`base` allowed)."""
    base = data.get("base")
    rules = load_rules(base) if isinstance(base, str) else Rules()
    return validate(_apply(rules, data, _Checker(source)), source)


def rules_from_text(text: str | bytes, source: str = "uploaded rules") -> Rules:
    """A ruleset from the text of a TOML rules file (an upload): the limits and checks of a file.

    Its `base`, if any, must be a preset: a text from elsewhere never names a file to read.
    """
    data = _parse_toml(text.encode("utf-8") if isinstance(text, str) else text, source)
    base = data.get("base")
    if base is not None and base not in PRESET_NAMES:
        raise _Checker(source).fail("base", f"must be a preset ({', '.join(PRESET_NAMES)}), got {_short(base)}")
    if "name" not in data:
        data = {**data, "name": "uploaded"}
    return rules_from_dict(data, source)


def preset_descriptions() -> dict[str, str]:
    """Name and one-line description of every preset."""
    return {name: load_rules(name).description for name in PRESET_NAMES}


def to_dict(rules: Rules) -> dict[str, Any]:
    """The full resolved ruleset, shaped like a TOML file (tables last)."""
    return {
        "name": rules.name,
        "description": rules.description,
        **{key: getattr(rules, key) for key in _FLAT_KEYS if key != "start"},
        "start": list(rules.start),
        "straights": rules.straights if not isinstance(rules.straights, Straights)
        else {**{faces: getattr(rules.straights, field) for faces, field in _STRAIGHT_KEYS.items()},
              "from_six": rules.straights.from_six},
        "kinds": {str(size): rules.kind(size) for size in range(4, rules.dice + 1) if rules.kind(size)} or False,
        "final_stretch": False if rules.final_stretch is None
        else {"from": rules.final_stretch.start, "cap": rules.final_stretch.cap},
        "zero_turns": False if rules.zero_turns is None
        else {"count": rules.zero_turns.count, "to": rules.zero_turns.to},
        "single": {"1": rules.single_1, "5": rules.single_5},
        "triple": {str(face): rules.triple(face) for face in range(1, 7)},
    }


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)


def to_toml(rules: Rules) -> str:
    """The full resolved ruleset as TOML text that `load_rules` reads back to the same value."""
    lines, tables = [], []
    for key, value in to_dict(rules).items():
        if isinstance(value, dict):
            tables.append((key, value))
        else:
            lines.append(f"{key} = {_toml_value(value)}")
    for key, table in tables:
        lines.append("")
        lines.append(f"[{key}]")
        lines.extend(f"{k} = {_toml_value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"


def content_key(rules: Rules) -> str:
    """A hash of everything that changes play (not the name or description)."""
    data = to_dict(rules)
    # the starting scores select the state a game starts from; they change no solved table (the chances at a start
    # below the opening are computed beside the table, `solver.result`), so rulesets that differ only there share it
    del data["name"], data["description"], data["start"]
    for key, off in _FAMILY_OFF.items():
        if data[key] == off:
            del data[key]
    text = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]
