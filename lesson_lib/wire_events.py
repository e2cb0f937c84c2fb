"""Wire events: each server-sent event's JSON payload, read in its wire's vocabulary.

This station only parses; it never drops anything. A payload that is not
JSON becomes a `WireEvent` with `payload=None` and a `parse_error`, so that
the event table, the accumulators and the CLI all see the same rows.

The `type` of a wire event is the payload's ``type`` field on the Anthropic
and Responses wires. Chat Completions has no event names: its chunks are
typed ``chat.completion.chunk`` (from ``object``), the end sentinel is
``[DONE]``, and an in-band error payload (a top-level ``"error"`` key, without
``choices`` or with a non-null error object beside them) is ``error``.

Payloads are read as strictly as the lesson-3 parser reads tool input:
``NaN``, ``Infinity``, a number too large for a float (``1e999``) and a
name given twice in one object are parse errors, not values, so nothing
downstream prints a value that is not JSON or silently keeps the last of
two names. A payload nested deeper than Python's JSON reader can follow
is a parse error too, never a crash.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from .sse import ServerSentEvent

DONE = "[DONE]"


@dataclass(frozen=True)
class WireEvent:
    """One SSE event with its payload parsed (or the reason it could not be)."""

    index: int
    sse: ServerSentEvent
    type: str | None
    payload: Any
    parse_error: str | None = None

    @property
    def t(self) -> float | None:
        return self.sse.t


def parse_payload(sse: ServerSentEvent, index: int = 0) -> WireEvent:
    """Parse one event's data as JSON and name its type."""
    data = sse.data
    if data.strip() == DONE:
        return WireEvent(index, sse, DONE, None)
    try:
        payload = _STRICT.decode(data)
    except ValueError as exc:
        return WireEvent(index, sse, sse.event, None, parse_error=_describe(exc, data))
    except RecursionError:
        return WireEvent(index, sse, sse.event, None,
                         parse_error="not JSON this reader can follow: nested too deeply")
    return WireEvent(index, sse, payload_type(payload, sse.event), payload)


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


_STRICT = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite_float,
                           object_pairs_hook=_unique_names)


def _describe(exc: ValueError, data: str) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON at character {exc.pos}: {exc.msg}"
    return f"not JSON: {exc}"
