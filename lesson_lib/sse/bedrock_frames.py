"""Bedrock's framing, the first station for its two APIs: binary frames read as events.

`lesson_lib.sse.eventstream` cuts the body into frames. Here each frame becomes
the same kind of event the SSE decoder dispatches (a `FrameEvent` has every
field of `lesson_lib.sse.decoder.ServerSentEvent`, plus the frame's headers), so
every station after the framing reads Bedrock unchanged:

- ``:message-type`` ``event``: the event is named by ``:event-type`` and its
  data is the payload's JSON text; for an InvokeModelWithResponseStream
  ``chunk`` (payload ``{"bytes": "<base64>"}``) it is the inner Anthropic
  event, named by its ``type``: naming it means reading it, so the event
  carries what that read gave (`FrameEvent.read`) and the next station does
  not read it again;
- ``:message-type`` ``exception``: named by ``:exception-type``;
- ``:message-type`` ``error``: named by ``:error-code``.

`FrameEventDecoder` is the station (`lesson_lib.sse.framing` hands it out for the
two Bedrock wires); `wire_of_frame` tells which API a frame belongs to.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, NamedTuple

from ..diagnostics import Diagnostic
from .eventstream import EventStreamDecoder, Frame
from .strict_json import read_object

CONVERSE = "aws-bedrock-converse"
INVOKE = "aws-bedrock-invoke"
# ConverseStream's own events (its wire module adds the exceptions to its vocabulary).
CONVERSE_EVENTS = frozenset({"messageStart", "contentBlockStart", "contentBlockDelta",
                             "contentBlockStop", "messageStop", "metadata"})
CHUNK = "chunk"    # an Invoke frame's event type: its payload holds one Anthropic event


# -- frames as events --------------------------------------------------------------------


class FrameEvent(NamedTuple):
    """A frame read as an event: the fields of `ServerSentEvent` (`id` is always empty and
    `retry` None: frames have neither), then the frame's `headers` (`eventstream.Header`s)
    and, for an Invoke chunk whose inner event had to be read to be named, what the
    strict read of `data` gave (`strict_json.read_object`: the object and why not; else
    None)."""

    event: str | None
    data: str
    id: str = ""
    retry: int | None = None
    start: int = 0
    end: int = 0
    t: float | None = None
    headers: tuple = ()
    read: tuple | None = None

    def as_dict(self) -> dict:
        """The fields printed by ``lesson-lib events --json``, headers included."""
        return {"event": self.event, "data": self.data, "start": self.start,
                "end": self.end, "t": self.t,
                "headers": {h.name: header_text(h.value) for h in self.headers}}


def header_text(value: Any) -> Any:
    """A header value as JSON can print it (bytes as base64, a UUID as its text)."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, (bool, int, str)):
        return value
    return str(value)


# The kinds of frame there are (``:message-type``); any other is reported, never guessed at.
MESSAGE_TYPES = frozenset({"event", "exception", "error"})


def message_type_problems(frames: list[Frame]) -> list[Diagnostic]:
    """An ``unknown_message_type`` error for each frame whose ``:message-type`` is missing
    or not one of `MESSAGE_TYPES` (its event is passed on, typed as its headers say)."""
    return [problem for frame in frames
            if (problem := message_type_problem(frame, frame.header_values())) is not None]


def message_type_problem(frame: Frame, headers: dict[str, Any]) -> Diagnostic | None:
    """The ``unknown_message_type`` error of one frame (None: its type is one of
    `MESSAGE_TYPES`); `headers` are its header values by name."""
    if known_message_type(headers):
        return None
    kind = headers.get(":message-type")
    return Diagnostic("unknown_message_type", f"a frame whose :message-type is {kind!r}, "
                      "not event, exception or error: what it carries cannot be trusted as "
                      "the stream's own", offset=frame.start,
                      raw=frame.payload.decode("utf-8", "replace"))


def known_message_type(headers: dict[str, Any]) -> bool:
    """Whether a frame's ``:message-type`` (in its header values by name) is one of
    `MESSAGE_TYPES`."""
    return headers.get(":message-type") in MESSAGE_TYPES


def frame_event(frame: Frame, headers: dict[str, Any] | None = None) -> FrameEvent:
    """The event a frame carries (see the module docstring); `headers` are its header
    values by name, when already read (`Frame.header_values`).

    An Invoke ``chunk`` whose ``bytes`` are not base64 keeps that text as its
    data, so the next station reports it as a payload that is not JSON.
    """
    if headers is None:
        headers = frame.header_values()
    data = frame.payload.decode("utf-8", "replace")
    read_as = None
    kind = headers.get(":message-type")
    if kind == "exception":
        name = headers.get(":exception-type")
    elif kind == "error":
        name = headers.get(":error-code") or "error"
        if not frame.payload:
            data = json.dumps({"message": headers.get(":error-message")})
    else:
        name = headers.get(":event-type")
        if name == CHUNK:
            name, data, read_as = _chunk(data) or (name, data, None)
    return FrameEvent(name if isinstance(name, str) else None, data, "", None,
                      frame.start, frame.end, frame.t, frame.headers, read_as)


def _chunk(data: str) -> tuple[str, str, tuple | None] | None:
    """An Invoke chunk's inner event: its name (its ``type``, else ``chunk``), its JSON
    text, and what the strict read of that text gave (the wire events' own read: the
    next station does not read it again); None when the payload has no ``bytes`` text at
    all."""
    try:
        payload = _loads(data)
    except ValueError:
        return None
    encoded = payload.get("bytes") if isinstance(payload, dict) else None
    if not isinstance(encoded, str):
        return None
    try:
        inner = binascii.a2b_base64(encoded, strict_mode=True).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return CHUNK, encoded, None
    read_as = read_object(inner)
    kind = read_as[0].get("type") if read_as[0] is not None else None
    return (kind if isinstance(kind, str) else CHUNK), inner, read_as


_SCAN = json.JSONDecoder().scan_once


def _loads(text: str) -> Any:
    """`json.loads(text)`, without its wrapper's cost on text with no space around the
    value (every frame's payload); anything else is left to `json.loads` itself."""
    try:
        value, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError):
        end = -1
    return value if end == len(text) else json.loads(text)


_VALUES_LIMIT = 256    # header blocks remembered per stream (as the frame decoder does)


class FrameEventDecoder:
    """Bedrock's framing as a station like `sse.SSEDecoder`: `feed` network chunks, get
    back the events their whole frames carry (`frame_event`); `finish` once. Its
    `diagnostics` are the frame decoder's, plus each frame's unknown ``:message-type``."""

    def __init__(self) -> None:
        self._frames = EventStreamDecoder()
        self.diagnostics = self._frames.diagnostics    # one list: the order they happened in
        # What is known of each header block: frames with the same header bytes share one
        # tuple of headers (the frame decoder reads each block once), so its values by name
        # and whether its ``:message-type`` is known are found by that tuple's identity
        # (the tuple is kept in the entry, so the identity stays its own).
        self._blocks: dict[int, tuple[tuple, dict[str, Any], bool]] = {}

    def feed(self, chunk: bytes, t: float | None = None) -> list[FrameEvent]:
        """The events of the frames this chunk completed."""
        events = []
        blocks = self._blocks
        for frame in self._frames.feed(chunk, t):
            entry = blocks.get(id(frame.headers))
            if entry is None or entry[0] is not frame.headers:
                entry = self._learn(frame.headers)
            _, headers, typed = entry
            if not typed:
                self.diagnostics.append(message_type_problem(frame, headers))
            events.append(frame_event(frame, headers))
        return events

    def _learn(self, block: tuple) -> tuple[tuple, dict[str, Any], bool]:
        values = {h.name: h.value for h in block}
        entry = (block, values, known_message_type(values))
        if len(self._blocks) < _VALUES_LIMIT:
            self._blocks[id(block)] = entry
        return entry

    def finish(self) -> list[FrameEvent]:
        """End of body: a frame cut short is reported; no event completes here."""
        return [frame_event(frame) for frame in self._frames.finish()]


def wire_of_frame(frame: Frame) -> str | None:
    """Which Bedrock API a frame belongs to, from its headers (None: it does not say)."""
    if frame.header(":message-type") != "event":
        return None
    name = frame.header(":event-type")
    if name == CHUNK:
        return INVOKE
    return CONVERSE if name in CONVERSE_EVENTS else None
