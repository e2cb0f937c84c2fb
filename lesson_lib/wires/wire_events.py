"""Wire events: each server-sent event's JSON payload, read in its wire's vocabulary.

This station only parses; it never drops anything. A payload that is not
JSON becomes a `WireEvent` with `payload=None` and a `parse_error`, so that
the event table, the accumulators and the CLI all see the same rows.

The `type` of a wire event is the payload's ``type`` field on the Anthropic
and Responses wires. Chat Completions has no event names: its chunks are
typed ``chat.completion.chunk`` (from ``object``), the end sentinel is
``[DONE]``, and an in-band error payload (a top-level ``"error"`` key, without
``choices`` or with a non-null error object beside them) is ``error``. Gemini names
nothing either: each of its records is a whole ``GenerateContentResponse`` (a payload
with ``candidates``, ``usageMetadata``, ``modelVersion``, ``promptFeedback`` or
``responseId``, and no ``type`` or ``object``), typed `GEMINI_RECORD` after it.

Payloads are read as strictly as the lesson-3 parser reads tool input:
``NaN``, ``Infinity``, a number too large for a float (``1e999``), a
name given twice in one object and a payload that is not a JSON object
(every wire sends one object per event) are parse errors, not values, so nothing
downstream prints a value that is not JSON or silently keeps the last of
two names. A payload nested deeper than `MAX_DEPTH` levels is a parse
error too, never a crash: the limit is the course's own, so that a payload
reads the same on every Python (3.11's reader gives up near 1,000 levels,
3.12's and 3.13's do not).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, NamedTuple

from ..sse.decoder import ServerSentEvent

DONE = "[DONE]"
# A Gemini record: the wire has no event names, so the record is named after its schema.
GEMINI_RECORD = "GenerateContentResponse"
# The fields only a Gemini record has at its top (model text is never looked at).
GEMINI_FIELDS = frozenset({"candidates", "usageMetadata", "modelVersion", "promptFeedback",
                           "responseId"})

# No vendor payload comes near this; tool input nested deeper arrives as text
# in deltas, which the lesson-3 parser reads at any depth.
MAX_DEPTH = 512


class WireEvent(NamedTuple):
    """One SSE event with its payload parsed (or the reason it could not be).

    An immutable tuple with named fields rather than a dataclass: one is made for every
    event of every stream, and a tuple is the cheapest record to make (a copy with one
    field changed is ``event._replace(index=...)``)."""

    index: int
    sse: ServerSentEvent
    type: str | None
    payload: Any
    parse_error: str | None = None

    @property
    def t(self) -> float | None:
        return self.sse.t


def parse_payload(sse: ServerSentEvent, index: int = 0) -> WireEvent:
    """Parse one event's data as JSON and name its type (`read_payload`). A framing that
    had to read the payload already (a Bedrock Invoke chunk is named by its inner event)
    hands over what `read_payload` gave it as the event's `read`, so it is read once."""
    read = getattr(sse, "read", None)
    return WireEvent(index, sse, *(read or read_payload(sse.data, sse.event)))


def read_payload(data: str, event: str | None = None) -> tuple[str | None, Any, str | None]:
    """An event's data read as strict JSON: (its type, its payload, why it is none). `event`
    is the name the framing gave it, the type of a payload that does not name one."""
    if data.strip() == DONE:
        return DONE, None, None
    if nested_deeper_than(data):
        return event, None, _TOO_DEEP
    try:
        payload = strict_loads(data)
    except ValueError as exc:
        return event, None, _describe(exc, data)
    except RecursionError:  # a reader called from deep in the stack gives up sooner
        return event, None, _TOO_DEEP
    if not isinstance(payload, dict):
        # Every wire sends one JSON object per event: anything else is no payload.
        return event, None, f"not a JSON object but {_json_kind(payload)}"
    return payload_type(payload, event), payload, None


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


def payload_type(payload: Any, sse_event: str | None = None) -> str | None:
    """The event's type as its wire names it (see the module docstring)."""
    if isinstance(payload, dict):
        kind = payload.get("type")
        if isinstance(kind, str):
            return kind
        if "error" in payload and ("choices" not in payload or payload["error"] is not None):
            return "error"      # (OpenRouter: an error object inside a chunk with choices)
        obj = payload.get("object")
        if isinstance(obj, str):
            return obj
        if "object" not in payload and not GEMINI_FIELDS.isdisjoint(payload):
            return GEMINI_RECORD
    return sse_event


def parse_all(events: list[ServerSentEvent]) -> list[WireEvent]:
    """Parse every event of a stream, in order."""
    return [parse_payload(sse, i) for i, sse in enumerate(events)]


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
