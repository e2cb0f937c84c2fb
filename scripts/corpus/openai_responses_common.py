"""What every Responses capture builder shares: the wire, the helper, requests and headers."""

from __future__ import annotations

from typing import Any

from .openai_responses_stream import ResponsesStream
from .openai_sidecar import openai_headers

WIRE = "openai-responses"
HELPER = "responses.stream + get_final_response()"
NO_COMPLETED = "Didn't receive a `response.completed` event."
BASE = ("the event order and fields of the recorded Responses streams in the shared reference "
        "captures")


def ok(stream: ResponsesStream, request_id: str | None = None) -> dict[str, Any]:
    """A 200 response with api.openai.com's headers (`request_id` when it must match a message)."""
    first = stream.builder.pieces[0].at_ms
    return {"status": 200, "headers": openai_headers(stream.rng, processing_ms=first * 0.8,
                                                     request=request_id)}


def request(model: str, input_: Any, **extra: Any) -> dict[str, Any]:
    """The sidecar's request: model, input, parameters, ``stream: true``."""
    return {"model": model, "input": input_, **extra, "stream": True}
