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

from .openai_ids import request_id
from .writer import StreamBuilder, write_capture


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


def lookup(value: Any, dotted: str) -> Any:
    """Follow a dotted path (``choices.0.message.content``) through dicts and lists."""
    for step in dotted.split("."):
        if isinstance(value, list):
            value = value[int(step)]
        elif isinstance(value, dict):
            value = value[step]
        else:
            raise KeyError(f"{dotted}: cannot step into {type(value).__name__} at {step!r}")
    return value


def sdk_mismatches(expected: dict[str, Any], *, raised: str | None, error: str,
                   text: str, final: Any) -> list[str]:
    """Where an SDK replay differs from the sidecar's ``sdk`` expectations (empty: it agrees).

    `raised` is the exception class name (or None), `error` its text, `text`
    what the helper's text events printed, `final` the final object dumped
    to plain data (or None when the helper raised).
    """
    problems: list[str] = []
    if expected.get("raises") != raised:
        problems.append(f"raises: expected {expected.get('raises')}, got {raised} ({error})")
    needle = expected.get("error_contains")
    if needle is not None and needle not in error:
        problems.append(f"error text lacks {needle!r}: {error!r}")
    if "text" in expected and expected["text"] != text:
        problems.append(f"text: expected {expected['text']!r}, got {text!r}")
    for path, want in (expected.get("final") or {}).items():
        try:
            got = lookup(final, path)
        except (KeyError, IndexError, ValueError) as exc:
            problems.append(f"final.{path}: missing ({exc})")
            continue
        if got != want:
            problems.append(f"final.{path}: expected {want!r}, got {got!r}")
    return problems
