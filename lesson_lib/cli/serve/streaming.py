"""How a capture goes out: its chunks on a schedule, its status and its headers.

Pure: `schedule` turns a capture and a speed into (seconds after the
request, bytes) pairs; the app does the waiting and the writing.
"""

from __future__ import annotations

import math
from typing import Any

from ...capture.captures import Capture
from ...wires import ENTRIES
from ...wires.entry import SSE_CONTENT_TYPE

INSTANT = math.inf
MIN_SPEED, MAX_SPEED = 0.01, 1000.0     # 100 times slower to 1,000 times faster

# Hop-by-hop or length headers: the server's own HTTP layer sets these.
_NOT_REPLAYED = {"content-length", "transfer-encoding", "content-encoding", "connection",
                 "keep-alive"}


class SpeedError(ValueError):
    """A speed that is not a positive number or ``instant``."""


def parse_speed(text: str | float) -> float:
    """``instant`` (no waiting) or a positive factor: 1 recorded speed, 2 twice as fast."""
    if isinstance(text, str) and text.strip().lower() == "instant":
        return INSTANT
    try:
        speed = float(text)
    except ValueError:
        raise SpeedError(f"speed must be a positive number or 'instant', not {text!r}") from None
    if not speed > 0 or math.isnan(speed):
        raise SpeedError(f"speed must be a positive number or 'instant', not {text!r}")
    if not MIN_SPEED <= speed <= MAX_SPEED and speed != INSTANT:
        raise SpeedError(f"speed must be from {MIN_SPEED:g} to {MAX_SPEED:g} (or 'instant'), "
                         f"not {text!r}")
    return speed


def schedule(capture: Capture, speed: float = 1.0) -> list[tuple[float, bytes]]:
    """Each recorded chunk with the time (s after the request) it is due, scaled by `speed`.

    A chunk without a recorded time is due with the one before it; times
    never go backwards. At ``instant`` speed nothing waits, except a
    ``stall`` fault's silence: that pause is what the fault is for.
    """
    out: list[tuple[float, bytes]] = []
    due = 0.0
    fault = capture.sidecar.get("fault") or {}
    stall_after = fault.get("at") if fault.get("kind") == "stall" else None
    for i, (chunk, t_ms) in enumerate(capture.chunks()):
        if t_ms is not None and speed != INSTANT:
            due = max(due, t_ms / 1000.0 / speed)
        elif speed == INSTANT and stall_after is not None and i == stall_after + 1:
            due += float(fault.get("ms", 0)) / 1000.0
        if chunk:
            out.append((due, chunk))
    return out


def response_headers(capture: Capture) -> dict[str, str]:
    """The recorded headers to send again, with a content type and the capture's name."""
    recorded = capture.sidecar.get("response", {}).get("headers", {}) or {}
    headers = {str(k).lower(): str(v) for k, v in recorded.items()
               if str(k).lower() not in _NOT_REPLAYED}
    if "content-type" not in headers:
        entry = ENTRIES.get(capture.wire or "")
        framed = entry.content_type if entry is not None else SSE_CONTENT_TYPE
        text = framed.startswith("text/")
        headers["content-type"] = ((f"{framed}; charset=utf-8" if text else framed)
                                   if capture.status < 300 else "application/json")
    headers["x-capture"] = capture.key
    headers.setdefault("cache-control", "no-cache")
    return headers


def is_streaming(request: dict[str, Any]) -> bool:
    """Whether the request asked for a stream (``stream: true``, top level or in parameters)."""
    params = request.get("parameters")
    nested = params.get("stream") if isinstance(params, dict) else None
    return request.get("stream", nested) is True
