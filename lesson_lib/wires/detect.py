"""Which wire a bare body speaks, told from its events (a body with no sidecar to say).

`detect_wire` reads the body's events as the framing cuts them: an
event-stream body's wire is its first event frame's (``chunk`` frames are
Invoke's, Converse's event names are Converse's); in an SSE body the first
event whose structure belongs to one wire decides: an ``event:`` name or
payload ``type`` of Anthropic's (``message_start``, ``content_block_*``, ...),
one starting ``response.``, a payload ``object`` ``chat.completion.chunk`` or
the ``[DONE]`` sentinel, a payload shaped like Gemini's
``GenerateContentResponse`` (``candidates``, ``usageMetadata``,
``modelVersion``... and no ``type`` or ``object``), a payload naming its event
type where Gemini Interactions does. What is inside strings (model output) is
never looked at. The capture station asks it (`capture.captures.load`), so
that only the wire station reads a payload's names.
"""

from __future__ import annotations

import json

from ..sse import eventstream
from ..sse.bedrock_frames import wire_of_frame
from ..sse.decoder import ServerSentEvent, SSEDecoder
from . import anthropic, chat, gemini, gemini_interactions, responses
from .wire_events import DONE, EVENT_TYPE_FIELD, GEMINI_RECORD, payload_type

# The names only Anthropic's stream gives its events (a ping or an error could be anyone's).
_ANTHROPIC_TYPES = frozenset({anthropic.MESSAGE_START, anthropic.MESSAGE_DELTA,
                              anthropic.MESSAGE_STOP, *anthropic.BLOCK_EVENTS})


def detect_wire(body: bytes) -> str | None:
    """The wire `body` speaks, told from its events (see the module), or None."""
    if eventstream.is_eventstream(body):
        frames = eventstream.EventStreamDecoder().feed(body)
        return next((w for w in map(wire_of_frame, frames) if w is not None), None)
    decoder = SSEDecoder()
    for event in decoder.feed(body) + decoder.finish():
        wire = _wire_of(event)
        if wire is not None:
            return wire
    return None


def _wire_of(event: ServerSentEvent) -> str | None:
    names = [event.event]
    if event.data.strip() == DONE:
        return chat.WIRE
    try:
        payload = json.loads(event.data)
    except (ValueError, RecursionError):
        payload = None
    if isinstance(payload, dict):
        if payload.get("object") == chat.CHUNK:
            return chat.WIRE
        if "prompt_filter_results" in payload and isinstance(payload.get("choices"), list):
            return chat.WIRE    # Azure's first chunk: filter results, no object yet
        if payload_type(payload) == GEMINI_RECORD:
            return gemini.WIRE
        if isinstance(payload.get(EVENT_TYPE_FIELD), str):
            return gemini_interactions.WIRE    # the only wire that names events there
        names.append(payload.get("type"))
    for name in names:
        if not isinstance(name, str):
            continue
        if name in _ANTHROPIC_TYPES:
            return anthropic.WIRE
        if name.startswith("response."):
            return responses.WIRE
    return None
