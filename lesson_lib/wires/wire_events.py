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
Gemini Interactions names each event in its payload's ``event_type`` (`EVENT_TYPE_FIELD`).

Payloads are read as strictly as the lesson-3 parser reads tool input
(`lesson_lib.sse.strict_json`, where the rules are):
``NaN``, ``Infinity``, a number too large for a float (``1e999``), a
name given twice in one object and a payload that is not a JSON object
(every wire sends one object per event) are parse errors, not values, so nothing
downstream prints a value that is not JSON or silently keeps the last of
two names. A payload nested deeper than `strict_json.MAX_DEPTH` levels is a parse
error too, never a crash.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ..sse.decoder import ServerSentEvent
from ..sse.strict_json import read_object

DONE = "[DONE]"
# A Gemini record: the wire has no event names, so the record is named after its schema.
GEMINI_RECORD = "GenerateContentResponse"
# The fields only a Gemini record has at its top (model text is never looked at).
GEMINI_FIELDS = frozenset({"candidates", "usageMetadata", "modelVersion", "promptFeedback",
                           "responseId"})
# The field a Gemini Interactions payload names its event in (no other wire has it).
EVENT_TYPE_FIELD = "event_type"



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
    """Parse one event's data as strict JSON (`lesson_lib.sse.strict_json`) and name its
    type. A framing that had to read the payload already (a Bedrock Invoke chunk is named
    by its inner event) hands over what it read as the event's `read`, so it is read
    once."""
    data = sse.data
    if DONE in data and data.strip() == DONE:
        return WireEvent(index, sse, DONE, None)
    payload, error = getattr(sse, "read", None) or read_object(data)
    if error is not None:
        return WireEvent(index, sse, sse.event, None, error)
    return WireEvent(index, sse, payload_type(payload, sse.event), payload)


def payload_type(payload: Any, sse_event: str | None = None) -> str | None:
    """The event's type as its wire names it (see the module docstring)."""
    if isinstance(payload, dict):
        kind = payload.get("type")
        if isinstance(kind, str):
            return kind
        named = payload.get(EVENT_TYPE_FIELD)
        if isinstance(named, str):
            return named
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
