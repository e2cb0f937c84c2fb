"""Lesson 5: an in-band error written into a body, framing by framing.

The fault lab's `inject_error` (`lesson_lib.breaks.faults`) splices an error
into a good body after one of its events. What the error says is the wire's
(its module's ``ERROR_EXAMPLE``, fitted to the stream by its entry's
`error_after` where the wire numbers its events); how it is written is the
framing's. A writer is ``write(payload, module, newline) -> bytes``:
`payload` the error in the wire's own shape, `module` the wire's module (its
``NAMES_EVENTS``: whether a record names its event), `newline` the line end
the body already uses. `entry.FRAMING_ERROR_WRITERS` names the writer of
each framing the course has; a wire with a framing of its own names its
writer in its entry (`Entry.write_error`).

>>> sse_error({"type": "error"}, None, b"\\n")
b'event: error\\ndata: {"type":"error"}\\n\\n'
"""

from __future__ import annotations

import json
from typing import Any

from .bedrock import exception_frame
from .bedrock_converse import SERVICE_UNAVAILABLE_EXCEPTION

ERROR = "error"      # the SSE event name of an in-band error, where records name theirs


def sse_error(payload: dict[str, Any], module: Any, newline: bytes = b"\n") -> bytes:
    """An SSE record: ``event: error`` where the wire names its records (compact JSON),
    else a bare ``data:`` line (JSON spaced as those wires' servers write it)."""
    named = getattr(module, "NAMES_EVENTS", True)
    data = json.dumps(payload, ensure_ascii=False,
                      separators=(",", ":") if named else (", ", ": "))
    lines = [f"event: {ERROR}".encode()] if named else []
    lines.append(b"data: " + data.encode("utf-8"))
    return newline.join(lines) + newline + newline


def exception_frame_error(payload: dict[str, Any], module: Any, newline: bytes = b"\n") -> bytes:
    """A Bedrock exception frame (the service unavailable mid-stream); binary frames have
    no line end."""
    return exception_frame(SERVICE_UNAVAILABLE_EXCEPTION, payload)
