"""Writing a constructed session capture: what the two session corpora (Managed Agents,
OpenAI Agents sessions) share.

A session capture is one connection's stream: its request names the session (and what the
application posted before this connection), its response is an SSE stream with the
allowlisted headers, and its sidecar says what the stream was built after and what the
SDK's helper makes of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lesson_lib.capture.capture_writer import write_capture

from .openai_sidecar import provenance

# The response's headers as a sidecar keeps them (the allowlist: a header the SDK sends,
# such as Managed Agents' `anthropic-beta`, is the request's, never the response's).
HEADERS = {"content-type": "text/event-stream; charset=utf-8"}


def write_session(root: Path, wire: str, name: str, builder: Any, request: dict[str, Any],
                  *, based_on: Any, helper: str, demonstrates: str, sdk_note: str,
                  raises: str | None = None, turn: dict[str, Any] | None = None,
                  sent: list | None = None) -> Path:
    """Write the stream `builder` holds as capture `name` of `wire` under `root`, its sidecar
    saying what it `demonstrates` and what the SDK's `helper` does with it (`sdk_note`,
    what it `raises`); `sent` is what the application posted before this connection,
    `turn` which step of a named turn it is. Returns the capture's path."""
    body, ends, times = builder.finish()
    request = dict(request)
    if sent is not None:
        request["events"] = sent
    sidecar = {
        "wire": wire,
        "demonstrates": demonstrates,
        "request": request,
        "response": {"status": 200, "headers": dict(HEADERS)},
        "provenance": provenance(based_on),
        "chunks": {"ends": ends, "t_ms": times},
        "sdk": {"helper": helper, "raises": raises, "note": sdk_note},
    }
    if turn is not None:
        sidecar["turn"] = turn
    return write_capture(root / wire, name, body, sidecar)
