"""Strict JSON: how the course reads a payload's text, whatever the station reading it.

A wire event's payload (`lesson_lib.wires.wire_events`) and the event inside a
Bedrock Invoke chunk (`lesson_lib.sse.bedrock_frames`, which must read it to
name it) are read by the same rules, here, once:

``NaN``, ``Infinity``, a number too large for a float (``1e999``), a name
given twice in one object and a text that is not a JSON object (every wire
sends one object per event) are errors, not values, so nothing downstream
prints a value that is not JSON or silently keeps the last of two names. A
text nested deeper than `MAX_DEPTH` levels is an error too, never a crash:
the limit is the course's own, so that a payload reads the same on every
Python (3.11's reader gives up near 1,000 levels, 3.12's and 3.13's do not).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

# No vendor payload comes near this; tool input nested deeper arrives as text
# in deltas, which the lesson-3 parser reads at any depth.
MAX_DEPTH = 512


def read_object(data: str) -> tuple[dict | None, str | None]:
    """`data` read strictly as one JSON object: (the object, None), or (None, why not)."""
    if nested_deeper_than(data):
        return None, _TOO_DEEP
    try:
        value = strict_loads(data)
    except ValueError as exc:
        return None, _describe(exc, data)
    except RecursionError:  # a reader called from deep in the stack gives up sooner
        return None, _TOO_DEEP
    if not isinstance(value, dict):
        # Every wire sends one JSON object per event: anything else is no payload.
        return None, f"not a JSON object but {_json_kind(value)}"
    return value, None


_TOO_DEEP = f"not JSON this reader follows: nested too deeply (over {MAX_DEPTH} levels)"
_BRACKET_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def nested_deeper_than(data: str, limit: int = MAX_DEPTH) -> bool:
    """Whether brackets nest more than `limit` levels deep in `data`, outside strings."""
    if len(data) <= limit or data.count("[") + data.count("{") <= limit:
        return False  # it cannot nest deeper than it opens: the common case, counted in C
    depth = 0
    for match in _BRACKET_OR_STRING.finditer(data):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > limit:
                return True
        elif token in ("]", "}"):
            depth -= 1
    return False


class _NotStrictJSON(ValueError):
    """A construct Python's reader accepts but JSON does not."""


def _no_constant(word: str) -> Any:
    raise _NotStrictJSON(f"{word} is not a JSON value")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotStrictJSON(f"the number {text[:40]} is too large to be read as a float")
    return value


def _unique_names(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        twice = next(name for name, _ in pairs if name in seen or seen.add(name))
        raise _NotStrictJSON(f"the name {twice!r} appears twice in one object")
    return obj


# The rules, defined once: the strict reader applies all of them; the quick reader is
# the same reader without the name check, used only where a count proves it idle.
_VALUE_RULES = {"parse_constant": _no_constant, "parse_float": _finite_float}
_STRICT = json.JSONDecoder(**_VALUE_RULES, object_pairs_hook=_unique_names)
_QUICK = json.JSONDecoder(**_VALUE_RULES).scan_once


def strict_loads(data: str) -> Any:
    """`data` read as strict JSON (see the module docstring): the value, or `ValueError`.

    Checking every object's names costs a call per object, so most payloads
    skip it: each name is followed by a colon, so an object can have lost a
    name given twice only if the objects read hold fewer names than the text
    has colons. When they hold exactly as many, the quick read is the strict
    one; otherwise (a colon in a string, a name twice, anything the quick read
    refused) the strict reader reads the text again and has the last word.
    """
    try:
        value, end = _QUICK(data, 0)
    except (ValueError, StopIteration, RecursionError):
        end = -1
    if end == len(data) and _names_in(value) == data.count(":"):
        return value
    return _STRICT.decode(data)


def _names_in(value: Any) -> int:
    """How many names the objects in `value` hold, all levels (a read value: only
    dicts, lists and scalars)."""
    count, todo = 0, [value]
    while todo:
        item = todo.pop()
        if type(item) is dict:
            count += len(item)
            item = item.values()
        elif type(item) is not list:
            continue
        for child in item:
            if type(child) is dict or type(child) is list:
                todo.append(child)
    return count


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "a boolean" if isinstance(value, bool) else "a number"


def _describe(exc: ValueError, data: str) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON at character {exc.pos}: {exc.msg}"
    return f"not JSON: {exc}"
