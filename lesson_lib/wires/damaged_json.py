"""Lesson 5: one event's JSON payload damaged, then framed again, framing by framing.

The fault lab's `corrupt_json` (`lesson_lib.breaks.faults`) removes the last
closing brace of one event's JSON payload. Where the payload sits is the
framing's: in an SSE record it is the record's own text, so the byte goes
and nothing else changes; in a Bedrock binary frame the payload is covered
by the frame's length and CRCs (and an Invoke ``chunk`` holds its event as
base64), so the frame is decoded, its JSON damaged and the frame encoded
again, so that the damage is the payload's and never the frame's. A writer
is ``damage(raw) -> bytes | None``: `raw` the event's bytes as its framing
reported them; the same event with its JSON's last ``}`` gone, framed again;
None where it holds no JSON object. `entry.FRAMING_JSON_DAMAGERS` names the
writer of each framing the course has; a wire with a framing of its own
names its writer in its entry (`Entry.damage_json`), or has no such fault.

>>> text_payload(b'data: {"a":{"b":1}}\\n\\n')
b'data: {"a":{"b":1}\\n\\n'
"""

from __future__ import annotations

import base64
import binascii
import json

from ..sse.bedrock_frames import CHUNK
from ..sse.eventstream import decode, encode_frame


def text_payload(raw: bytes) -> bytes | None:
    """A record whose payload is its own text (SSE, a JSON line): its last ``}`` removed."""
    close = raw.rfind(b"}")
    return None if close < 0 else raw[:close] + raw[close + 1:]


def frame_payload(raw: bytes) -> bytes | None:
    """A Bedrock frame whose JSON lost its last ``}``, encoded again (lengths and CRCs
    that hold); an Invoke ``chunk`` has its inner event damaged and put back as base64."""
    frames, problems = decode(raw)
    if problems or len(frames) != 1:
        return None
    frame = frames[0]
    payload = frame.payload
    if frame.header(":message-type") == "event" and frame.header(":event-type") == CHUNK:
        payload = _chunk_payload(payload)
    else:
        payload = text_payload(payload)
    return None if payload is None else encode_frame(frame.headers, payload)


def _chunk_payload(payload: bytes) -> bytes | None:
    """An Invoke chunk's ``{"bytes": "<base64>"}`` with its inner event damaged (the rest
    of the payload's text as it was)."""
    try:
        encoded = json.loads(payload).get("bytes")
        inner = binascii.a2b_base64(encoded, strict_mode=True)
    except (ValueError, AttributeError, TypeError, binascii.Error):
        return None
    damaged = text_payload(inner)
    if damaged is None:
        return None
    again = base64.b64encode(damaged).decode("ascii")
    return payload.replace(encoded.encode("ascii"), again.encode("ascii"), 1)
