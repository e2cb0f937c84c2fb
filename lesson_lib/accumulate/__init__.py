"""Lesson 2, station accumulate: one accumulator per wire, each building the provider's
final object.

>>> from lesson_lib.capture.captures import load
>>> result = accumulate(load("anthropic-messages/hello"))
>>> result.final["content"][0]["text"][:6], result.complete
('Hello!', True)

`accumulate` runs a whole capture; `accumulator_for` gives the bare
accumulator to feed event by event; `history.History` gives its state
after any event index (`lesson_lib.tool_calls.checkpoints` keeps those copies cheap).

`naive_handler` is the lesson's counter-example: the flat event type and
pending-tools loop many first attempts arrive at, its flaws kept on purpose.
"""

from __future__ import annotations

from ..capture.captures import Capture
from ..capture.diagnostics import Diagnostic
from ..wires.stream_end import http_error as stream_http_error
from ..wires.wire_events import parse_all
from .base import Accumulated, Accumulator, Fragments, Slot, parse_tool_input, partial_value

__all__ = ["Accumulated", "Accumulator", "Fragments", "Slot", "accumulate",
           "accumulator_for", "http_error", "parse_tool_input", "partial_value",
           "structured_output"]


def structured_output(request: dict | None) -> str | None:
    """The schema name of a Chat request's ``response_format`` json_schema (structured
    output), else None."""
    fmt = request.get("response_format") if isinstance(request, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        schema = fmt.get("json_schema")
        name = schema.get("name") if isinstance(schema, dict) else None
        return name if isinstance(name, str) and name else "structured output"
    return None


def accumulator_for(wire: str | None, request: dict | None = None) -> Accumulator:
    """A fresh accumulator for `wire` (``ValueError`` for an unknown wire).

    `request` is the request as data (a capture's sidecar ``request``): on the
    Chat wire a ``response_format`` json_schema makes each choice's content a
    structured-output tool call, and ``stream_options.include_usage`` says a usage chunk
    is owed. (Responses reads its format from the stream.)
    """
    if wire == "anthropic-messages":
        from .anthropic import AnthropicAccumulator
        return AnthropicAccumulator()
    if wire == "openai-chat":
        from ..wires.chat import usage_promised
        from .chat import ChatAccumulator
        return ChatAccumulator(structured_output(request),
                               usage_requested=usage_promised(None, request))
    if wire == "openai-responses":
        from .responses import ResponsesAccumulator
        return ResponsesAccumulator()
    if wire == "google-gemini":
        from .gemini import GeminiAccumulator
        return GeminiAccumulator()
    if wire == "google-gemini-interactions":
        from .gemini_interactions import GeminiInteractionsAccumulator
        return GeminiInteractionsAccumulator()
    if wire == "anthropic-managed-agents":
        from .managed_agents import ManagedAgentsAccumulator
        return ManagedAgentsAccumulator()
    if wire == "aws-bedrock-converse":
        from .bedrock import ConverseAccumulator
        return ConverseAccumulator()
    if wire == "aws-bedrock-invoke":
        from .bedrock import InvokeAccumulator
        return InvokeAccumulator()
    raise ValueError(f"no accumulator for wire {wire!r}")


def http_error(capture: Capture) -> Diagnostic:
    """The ``http_error`` diagnostic of a capture whose request failed (non-2xx): the one
    `stream_end.http_error` builds."""
    return stream_http_error(capture.status, capture.text)


def accumulate(capture: Capture, chunk_size: int | None = None) -> Accumulated:
    """Decode, parse and accumulate a whole capture; `chunk_size` re-chunks the body."""
    wire = capture.wire or ""
    if capture.status >= 300:
        return Accumulated(final=None, complete=False, diagnostics=[http_error(capture)],
                           wire=wire)
    if chunk_size is None:
        events, sse_diags = capture.events, capture.sse_diagnostics
    else:
        events, sse_diags = capture.decode(chunk_size)
    acc = accumulator_for(capture.wire, capture.request)
    for event in parse_all(events):
        acc.feed(event)
    acc.finish(sse_diags)
    return Accumulated(final=acc.final(), complete=acc.complete,
                       diagnostics=list(acc.diagnostics), wire=wire)
