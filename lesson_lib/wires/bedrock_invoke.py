"""AWS Bedrock InvokeModelWithResponseStream on Anthropic models: Anthropic's own events,
each inside a binary frame.

Every ``chunk`` frame's payload ``{"bytes": "<base64>"}`` decodes to one
Anthropic Messages event (``message_start``, ``content_block_delta``...), so
everything after the framing is the Anthropic wire's: its blocks, its stop
reasons, its usage, ``message_stop`` as the terminal. What Bedrock adds is
its exception frames (``throttlingException``...), in-band failures after
HTTP 200 that end the stream.
"""

from __future__ import annotations

from typing import Any

from ..sse.eventstream import CONTENT_TYPE as EVENTSTREAM_CONTENT_TYPE
from . import anthropic, bedrock_converse, sdk_clients
from .bedrock import (
    EXCEPTIONS,
    INVOKE,
    RECORD_KEYS,
    RECORD_MODEL,
    RECORD_VIA,
    RETRY,
    error_body,
    error_headers,
    read_exception,
)
from .common import FinishReason, RetryRule, Sheet, WireError
from .common import retryable_status as retryable_status  # the HTTP rule, on every wire
from .entry import Entry, RecordRoute, SDKRoute

WIRE = INVOKE
# Where the provider listens: the path names the model and itself asks for a stream.
PATH = "/model/{modelId}/invoke-with-response-stream"
PATH_STREAMS = True

# Anthropic's events, Bedrock's exceptions, and ``chunk``: the frame's own event type, which
# a chunk keeps when its ``bytes`` cannot be read as an Anthropic event.
EVENT_TYPES = anthropic.EVENT_TYPES | EXCEPTIONS | {"chunk"}
DELTA_TYPES = anthropic.DELTA_TYPES
BLOCK_EVENTS = anthropic.BLOCK_EVENTS
KNOWN_BLOCKS = anthropic.KNOWN_BLOCKS

TERMINALS = anthropic.TERMINALS
FAILURES = anthropic.FAILURES | EXCEPTIONS
# An exception frame's payload as this wire sends it (lesson 5 injects it, framed as
# `bedrock_converse.SERVICE_UNAVAILABLE_EXCEPTION`).
ERROR_EXAMPLE = {"message": "Bedrock is unable to process your request."}
NAMES_EVENTS = True                       # each frame has an ``:event-type`` header
KEEPALIVES = anthropic.KEEPALIVES           # an Anthropic ``ping`` inside a chunk
# Whether a server tool's result comes apart from its call: as on Anthropic.
SERVER_RESULTS_APART = anthropic.SERVER_RESULTS_APART

FINISH_REASONS = anthropic.FINISH_REASONS
usage_counts = anthropic.usage_counts


def finish_reason(stop_reason: Any) -> FinishReason | None:
    """A ``stop_reason`` in the unified vocabulary, as on the Anthropic wire."""
    return anthropic.finish_reason(stop_reason)


# Bedrock's exceptions by name, and Anthropic's own error types, should one come inside a chunk.
RETRY = RetryRule(retryable=RETRY.retryable | anthropic.RETRY.retryable,
                  final=RETRY.final | anthropic.RETRY.final, by="type")
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error an exception frame (or an Anthropic ``error`` event) reports, else None."""
    return read_exception(event_type, payload) or anthropic.read_error(event_type, payload)


SHEET = Sheet(
    wire=WIRE,
    events=(
        ("chunk", 'every frame: its payload {"bytes": base64} is one Anthropic event'),
        *anthropic.SHEET.events,
    ),
    addressing=anthropic.SHEET.addressing,
    tool_arguments=anthropic.SHEET.tool_arguments,
    terminal="message_stop (inside a chunk)",
    in_band_error="an exception frame: `:message-type: exception`, "
                  '`:exception-type` (throttlingException, ...), {"message"}',
    also=anthropic.SHEET.also,
    finish=anthropic.SHEET.finish + " (inside a chunk)",
    error_body=bedrock_converse.ERROR_BODY_SHEET,
)


# -- over HTTP (the registry's entry) ----------------------------------------------------
# A recorded request holds the model's own body under ``body``; its ``modelId`` goes in
# the path.
ENTRY = Entry(wire=WIRE, title="AWS Bedrock InvokeModelWithResponseStream",
              framing="eventstream", content_type=EVENTSTREAM_CONTENT_TYPE,
              suffix=".eventstream", route=PATH,
              path="/model/{modelId}/invoke-with-response-stream",
              conversation=("system", "messages"), body_field="body",
              error_body=error_body, error_headers=error_headers,
              streams_by_path=PATH_STREAMS,
              accumulator="lesson_lib.accumulate.bedrock:InvokeAccumulator",
              adapter="lesson_lib.turn.adapters.bedrock:InvokeAdapter",
              next_request="lesson_lib.turn.next_request:for_invoke",
              sdk=SDKRoute("boto3", "lesson_lib.turn.adapters.bedrock:BotoEvents",
                             replay="lesson_lib.capture.replay:replay_boto3", **sdk_clients.BOTO3),
              record=RecordRoute(RECORD_KEYS, RECORD_MODEL,
                                 "lesson_lib.capture.record_boto3:invoke_request",
                                 "lesson_lib.capture.record_boto3:invoke_create",
                                 via="invoke_model_with_response_stream, " + RECORD_VIA),
              reference_folders=())
