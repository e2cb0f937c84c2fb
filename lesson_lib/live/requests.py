"""Where a live step's request goes and what it sends: read from the wire's registry entry.

A wire whose path names the model (Gemini, both Bedrock APIs) takes it from
the request, as the SDKs do: the course keeps a step's request as the
capture records it (``model`` or ``modelId`` beside the body, an Invoke body
under ``body``), and the entry (`lesson_lib.wires.entry.Entry`) says which
field goes where. No wire is named here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from ..wires import ENTRIES, PerWire, entry_for

# The wires whose path is the same for every request (it names no field of the request),
# by their path: lesson 6's own loop posts a request to ``url + PATHS[wire]``.
PATHS = PerWire(lambda entry: entry.path, lambda entry: not entry.path_fields)


def live_wires() -> tuple[str, ...]:
    """The wires a live turn can drive: every registered one."""
    return tuple(ENTRIES)


def request_url(base_url: str, wire: str, request: dict[str, Any],
                params: Mapping[str, Any] | None = None) -> str:
    """The URL of `request` on `wire` under `base_url`, its query the path's own
    (Gemini's ``alt=sse``) with `params` added (``ValueError`` for a wire this course
    lacks, or a request without a field its path takes)."""
    url = httpx.URL(base_url.rstrip("/") + entry_for(wire).request_path(request))
    return str(url.copy_merge_params(dict(params)) if params else url)


def request_body(wire: str, request: dict[str, Any]) -> dict[str, Any]:
    """The body sent for `request` on `wire`: what the provider takes, asking for the
    stream where the body does (a live turn always streams)."""
    return entry_for(wire).request_body(request)
