"""AWS Bedrock ConverseStream: Bedrock's own vocabulary, over binary frames.

Blocks sit in slots addressed by ``contentBlockIndex``. Only tool blocks
announce themselves (``contentBlockStart`` with ``start.toolUse`` or
``start.toolResult``); a text or reasoning block simply begins with its first
``contentBlockDelta``. ``messageStop`` carries the stop reason and ends the
stream properly; ``metadata`` (usage, ``metrics.latencyMs``) comes *after*
it. Every payload carries a random-length ``p`` field (padding against
length side channels), which means nothing. An exception frame
(``throttlingException``...) is an in-band failure after HTTP 200.
"""

from __future__ import annotations

from typing import Any

from ..sse.eventstream import CONTENT_TYPE as EVENTSTREAM_CONTENT_TYPE
from . import sdk_clients
from .bedrock import (
    CONVERSE,
    CONVERSE_EVENTS,
    EXCEPTIONS,
    RECORD_KEYS,
    RECORD_MODEL,
    RECORD_VIA,
    RETRY,
    error_body,
    error_headers,
    read_exception,
)
from .common import FinishReason, Sheet, WireError, count, finish_words, unified
from .common import retryable_status as retryable_status  # the HTTP rule, on every wire
from .entry import Entry, RecordRoute, SDKRoute

WIRE = CONVERSE
# Where the provider listens: the path names the model and itself asks for a stream.
PATH = "/model/{modelId}/converse-stream"
PATH_STREAMS = True

# -- the event vocabulary --------------------------------------------------------------
EVENT_TYPES = CONVERSE_EVENTS | EXCEPTIONS
# The content blocks, as the non-streaming response (and the next request) names them.
TEXT_BLOCK, REASONING_BLOCK = "text", "reasoningContent"
TOOL_USE_BLOCK, TOOL_RESULT_BLOCK = "toolUse", "toolResult"
REASONING_TEXT = "reasoningText"     # inside a reasoning block: its text and signature
CITATION = "citation"                # a delta adding one citation to a text block
# A delta is named by the one field it fills (besides nothing else but padding).
DELTA_TYPES = frozenset({TEXT_BLOCK, TOOL_USE_BLOCK, TOOL_RESULT_BLOCK, REASONING_BLOCK,
                         CITATION, "image"})
# Each event type another station matches on, by name (one spelling, here).
CONTENT_BLOCK_DELTA = "contentBlockDelta"
CONTENT_BLOCK_START = "contentBlockStart"
CONTENT_BLOCK_STOP = "contentBlockStop"
MESSAGE_START = "messageStart"
MESSAGE_STOP = "messageStop"
SERVICE_UNAVAILABLE_EXCEPTION = "serviceUnavailableException"
BLOCK_EVENTS = ("contentBlockStart", "contentBlockDelta", "contentBlockStop")
PADDING = "p"     # the padding field every payload carries
# A ``toolUse`` start's ``type`` when the call is one the service runs (its result follows).
SERVER_TOOL_USE = "server_tool_use"
# What makes a call final (the tool-call card's words): its block's stop, whether the
# client or the provider runs the tool.
CALL_ENDED_BY = CONTENT_BLOCK_STOP
# A ``reasoningContent`` field: reasoning the provider sends only encrypted (base64 bytes),
# which goes back in the next request as it came.
REDACTED_CONTENT = "redactedContent"

# -- the ending ------------------------------------------------------------------------
TERMINALS = frozenset({"messageStop"})   # the stream ended properly (metadata may follow)
FAILURES = EXCEPTIONS                    # exception frames
# An exception frame's payload as this wire sends it (lesson 5 injects it, framed as
# `bedrock_converse.SERVICE_UNAVAILABLE_EXCEPTION`).
ERROR_EXAMPLE = {"message": "Bedrock is unable to process your request."}
# A failed request, on both Bedrock APIs (the cheat sheet's words).
ERROR_BODY_SHEET = ("HTTP 4xx/5xx, header `x-amzn-ErrorType` (ThrottlingException, "
                    'ValidationException, ...) and {"message"}')
NAMES_EVENTS = True                       # each frame has an ``:event-type`` header
KEEPALIVES: frozenset[str] = frozenset()   # no event only keeps the connection open
# Whether a server tool's result comes apart from its call: a server ``toolUse`` block is followed by its ``toolResult`` block.
SERVER_RESULTS_APART = True

# -- stop reasons ----------------------------------------------------------------------
FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop", "stop_sequence": "stop",
    "max_tokens": "length", "model_context_window_exceeded": "length",
    "tool_use": "tool_calls",
    "guardrail_intervened": "content_filter", "content_filtered": "content_filter",
}


def finish_reason(stop_reason: Any) -> FinishReason | None:
    """A ``stopReason`` in the unified vocabulary (None while there is none)."""
    return unified(FINISH_REASONS, stop_reason)


def usage_counts(usage: Any) -> dict[str, int]:
    """A ``usage`` object's counts in the unified names: the input counts cache reads and
    writes, which Bedrock reports apart from ``inputTokens``."""
    read, write = count(usage, "cacheReadInputTokens"), count(usage, "cacheWriteInputTokens")
    return {"input": count(usage, "inputTokens") + read + write,
            "output": count(usage, "outputTokens"), "cache_read": read, "cache_write": write,
            "reasoning": 0}


# -- errors ----------------------------------------------------------------------------
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error an exception frame reports, else None."""
    return read_exception(event_type, payload)


SHEET = Sheet(
    wire=WIRE,
    events=(
        ("messageStart", "the message begins: its role"),
        ("contentBlockStart", "opens slot `contentBlockIndex`, for tool blocks only "
                              "(toolUse: name, toolUseId)"),
        ("contentBlockDelta", "a fragment for slot `contentBlockIndex`: text, toolUse.input, "
                              "reasoningContent (text, signature), citation; a text block "
                              "starts here"),
        ("contentBlockStop", "closes slot `contentBlockIndex`"),
        ("messageStop", "stopReason: the end"),
        ("metadata", "usage and metrics.latencyMs, after the end"),
    ),
    addressing=(("contentBlockIndex", "the block's slot in `output.message.content`"),),
    tool_arguments="contentBlockDelta `delta.toolUse.input` strings, into a toolUse slot",
    terminal="messageStop (then metadata)",
    in_band_error="an exception frame: `:message-type: exception`, "
                  '`:exception-type` (throttlingException, ...), {"message"}',
    also=(("reasoningContent", "reasoning: its text in deltas, then its signature; "
                               "redactedContent arrives whole"),
          ("citation", "a citation delta for the text block at `contentBlockIndex`"),
          ("refusal", "no event of its own: stopReason guardrail_intervened or "
                      "content_filtered")),
    finish="`stopReason` in messageStop: " + finish_words(FINISH_REASONS),
    error_body=ERROR_BODY_SHEET,
)


# -- over HTTP (the registry's entry) ----------------------------------------------------
ENTRY = Entry(wire=WIRE, title="AWS Bedrock ConverseStream", framing="eventstream",
              content_type=EVENTSTREAM_CONTENT_TYPE, suffix=".eventstream", route=PATH,
              path="/model/{modelId}/converse-stream", conversation=("system", "messages"),
              error_body=error_body, error_headers=error_headers,
              streams_by_path=PATH_STREAMS,
              accumulator="lesson_lib.accumulate.bedrock:ConverseAccumulator",
              adapter="lesson_lib.turn.adapters.bedrock:ConverseAdapter",
              next_request="lesson_lib.turn.next_request:for_converse",
              sdk=SDKRoute("boto3", "lesson_lib.turn.adapters.bedrock:BotoEvents",
                             replay="lesson_lib.capture.replay:replay_boto3", **sdk_clients.BOTO3),
              record=RecordRoute(RECORD_KEYS, RECORD_MODEL,
                                 "lesson_lib.capture.record_boto3:converse_request",
                                 "lesson_lib.capture.record_boto3:converse_create",
                                 via="converse_stream, " + RECORD_VIA),
              reference_folders=())
