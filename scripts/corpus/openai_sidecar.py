"""Sidecars for the OpenAI corpora: response headers, provenance, and writing the pair.

Every constructed capture says what produced it (`request`), what the
server answered around the body (`response`: status and headers, never
secrets), where its shape comes from (`provenance`), how its bytes arrived
(`chunks`), and what the official SDK does with it (`sdk`, checked by the
tests).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from lesson_lib.capture.capture_writer import write_capture

from .openai_ids import request_id
from .writer import StreamBuilder


def openai_headers(rng: random.Random, *, processing_ms: float, request: str | None = None,
                   content_type: str = "text/event-stream; charset=utf-8") -> dict[str, str]:
    """Headers as api.openai.com sends them on a streamed answer (ids fake, no secrets)."""
    remaining = rng.randint(9_990, 9_999)
    return {
        "content-type": content_type,
        "x-request-id": request or request_id(rng),
        "openai-processing-ms": str(int(processing_ms)),
        "openai-version": "2020-10-01",
        "x-ratelimit-limit-requests": "10000",
        "x-ratelimit-remaining-requests": str(remaining),
        "x-ratelimit-limit-tokens": "30000000",
        "x-ratelimit-remaining-tokens": str(rng.randint(29_990_000, 29_999_000)),
        "x-ratelimit-reset-requests": "6ms",
        "x-ratelimit-reset-tokens": "0s",
    }


def provenance(based_on: str) -> dict[str, str]:
    """The provenance of a constructed capture."""
    return {"kind": "constructed", "based_on": based_on, "timing": "synthetic"}


def sdk_expectation(helper: str, note: str, *, raises: str | None = None,
                    error_contains: str | None = None, text: str | None = None,
                    final: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the official streaming helper does with the capture (the tests replay and check)."""
    out: dict[str, Any] = {"helper": helper, "raises": raises}
    if error_contains is not None:
        out["error_contains"] = error_contains
    if text is not None:
        out["text"] = text
    if final is not None:
        out["final"] = final
    out["note"] = note
    return out


def write(root: Path, wire: str, name: str, builder: StreamBuilder, *, demonstrates: str,
          request: dict[str, Any], response: dict[str, Any], based_on: str,
          sdk: dict[str, Any], turn: dict[str, Any] | None = None) -> Path:
    """Finish the builder's body and write ``NAME.sse`` with its sidecar under `root/wire`."""
    body, ends, times = builder.finish()
    sidecar: dict[str, Any] = {
        "wire": wire,
        "demonstrates": demonstrates,
        "request": request,
        "response": response,
        "provenance": provenance(based_on),
        "chunks": {"ends": ends, "t_ms": times},
        "sdk": sdk,
    }
    if turn is not None:
        sidecar["turn"] = turn
    return write_capture(root / wire, name, body, sidecar)
