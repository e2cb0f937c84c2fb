"""The Anthropic Messages wire: what is true of it, as data and small pure functions.

Blocks sit in slots addressed by ``index``; ``message_delta`` carries the
stop reason; ``message_stop`` ends the stream properly; an ``error`` event
(``{"type": "error", "error": {"type": ..., "message": ...}}``) is an
in-band failure after HTTP 200.
"""

from __future__ import annotations

import json
from typing import Any

from . import sdk_clients
from .common import (
    FinishReason,
    RetryRule,
    Sheet,
    WireError,
    count,
    finish_words,
    read_error_object,
    unified,
)
from .common import retryable_status as retryable_status  # the HTTP rule, on every wire
from .entry import SSE_CONTENT_TYPE, Entry, RecordRoute, SDKRoute

WIRE = "anthropic-messages"
# Where the provider listens, under its base URL (the SDK's own path); the body's
# ``stream: true`` asks for a stream.
PATH = "/v1/messages"
PATH_STREAMS = False

# -- the event vocabulary (the pinned SDK's stream event and delta types; tests keep
#    these sets supersets of the SDK's) -----------------------------------------------
# Each event type, by name (one spelling, here), in the order a stream sends them.
MESSAGE_START = "message_start"
CONTENT_BLOCK_START = "content_block_start"
CONTENT_BLOCK_DELTA = "content_block_delta"
CONTENT_BLOCK_STOP = "content_block_stop"
MESSAGE_DELTA = "message_delta"
MESSAGE_STOP = "message_stop"
PING = "ping"
ERROR = "error"
EVENT_TYPES = frozenset({MESSAGE_START, CONTENT_BLOCK_START, CONTENT_BLOCK_DELTA,
                         CONTENT_BLOCK_STOP, MESSAGE_DELTA, MESSAGE_STOP, PING, ERROR})
DELTA_TYPES = frozenset({
    "text_delta", "input_json_delta", "citations_delta", "thinking_delta", "signature_delta",
    "compaction_delta",
})
# The three events that address a block by its ``index``.
BLOCK_EVENTS = (CONTENT_BLOCK_START, CONTENT_BLOCK_DELTA, CONTENT_BLOCK_STOP)

# -- the ending ------------------------------------------------------------------------
TERMINALS = frozenset({MESSAGE_STOP})      # the stream ended properly
FAILURES = frozenset({ERROR})              # an in-band failure after HTTP 200
# An in-band error as this wire sends it (lesson 5 injects it): an ``event: error`` record.
ERROR_EXAMPLE = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
NAMES_EVENTS = True                        # each record has an ``event:`` line
# Events that only keep an idle connection open (a watchdog reads a silence after one
# as a pause the server announced).
KEEPALIVES = frozenset({PING})
# Whether a server tool's result comes apart from its call: a server tool's result is a block of its own (``web_search_tool_result``).
SERVER_RESULTS_APART = True

# -- the blocks ------------------------------------------------------------------------
TEXT_BLOCK = "text"
THINKING_BLOCK = "thinking"
REDACTED_THINKING_BLOCK = "redacted_thinking"
TOOL_USE_BLOCK = "tool_use"            # a call of one of the request's own tools
SERVER_TOOL_USE_BLOCK = "server_tool_use"   # a call the provider runs; a result block follows
MCP_TOOL_USE_BLOCK = "mcp_tool_use"         # a call of an MCP server's tool (beta), server-run
COMPACTION_BLOCK = "compaction"             # the context the server compacted (beta)
# The seam where a fallback model took over after a refusal (beta): what came before it
# may have been cut off by the refusal, a call included.
FALLBACK_BLOCK = "fallback"
KNOWN_BLOCKS = frozenset({
    TEXT_BLOCK, THINKING_BLOCK, REDACTED_THINKING_BLOCK, TOOL_USE_BLOCK, SERVER_TOOL_USE_BLOCK,
    "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
    "tool_search_tool_result", "container_upload",
    # beta
    MCP_TOOL_USE_BLOCK, "mcp_tool_result", "mcp_tool_listing", COMPACTION_BLOCK, FALLBACK_BLOCK,
    "advisor_tool_result",
})
# The blocks that are calls, whose input streams as ``input_json_delta``; of them, the
# calls the server runs.
SERVER_CALL_BLOCKS = frozenset({SERVER_TOOL_USE_BLOCK, MCP_TOOL_USE_BLOCK})
CALL_BLOCKS = frozenset({TOOL_USE_BLOCK}) | SERVER_CALL_BLOCKS
# What makes a call final (the tool-call card's words): its block's stop, on every call block.
CALL_ENDED_BY = CONTENT_BLOCK_STOP
# What the server did on its own, whole in a start event: a file it put in the code
# container, the tools it listed from an MCP server, the seam where a fallback model took
# over, the context it compacted. Neither text nor a call.
SERVER_ACTION_BLOCKS = frozenset({"container_upload", "mcp_tool_listing", FALLBACK_BLOCK,
                                  COMPACTION_BLOCK})
THINKING_BLOCKS = frozenset({THINKING_BLOCK, REDACTED_THINKING_BLOCK})
# The block that answers a ``tool_use`` in the next request's ``user`` message.
TOOL_RESULT_BLOCK = "tool_result"
# The blocks the server's own tools write: each arrives whole in its start event. Those with
# a ``tool_use_id`` answer a ``server_tool_use`` or ``mcp_tool_use`` call; a container upload
# and an MCP tool listing answer none.
SERVER_OUTPUT_BLOCKS = frozenset({
    "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
    "bash_code_execution_tool_result", "text_editor_code_execution_tool_result",
    "tool_search_tool_result", "container_upload", "mcp_tool_result", "mcp_tool_listing",
    "advisor_tool_result",
})
TEXT_DELTA = "text_delta"              # a text block's fragment: ``delta.text``
ARGUMENTS_DELTA = "input_json_delta"   # a tool call's arguments: ``delta.partial_json``
# The blocks whose text streams: the field it goes to, the delta that carries it, and
# the delta's key for it.
STREAMED_TEXT = {TEXT_BLOCK: ("text", TEXT_DELTA, "text"),
                 THINKING_BLOCK: ("thinking", "thinking_delta", "thinking"),
                 COMPACTION_BLOCK: ("content", "compaction_delta", "content")}


def as_streamed(block: dict) -> tuple[dict, list[dict]]:
    """A block that a start event states whole (a resumed response's ``message_start``
    may already hold ``message.content``), as a stream would send it: the block of its
    ``content_block_start`` and the deltas that build the rest. A call's input comes as
    its JSON text, a block's text, citations and signature as their own deltas; a block
    that only ever arrives whole is its own start, with no delta."""
    start, deltas = dict(block), []
    kind = block.get("type")
    if kind in CALL_BLOCKS or "input" in block:
        value = block.get("input")
        start["input"] = {}
        # (A call without arguments streams one empty fragment.)
        text = "" if value is None or value == {} else json.dumps(value, ensure_ascii=False)
        return start, [{"type": ARGUMENTS_DELTA, "partial_json": text}]
    field, delta_type, key = STREAMED_TEXT.get(kind, (None, None, None))  # type: ignore[arg-type]
    if field is None:
        return start, deltas
    text = block.get(field)
    if isinstance(text, str) and text:
        start[field] = ""
        deltas.append({"type": delta_type, key: text})
    citations = block.get("citations")
    if isinstance(citations, list) and citations:
        start["citations"] = []
        deltas += [{"type": "citations_delta", "citation": c} for c in citations]
    signature = block.get("signature")
    if isinstance(signature, str) and signature:       # the last delta before the stop
        start["signature"] = ""
        deltas.append({"type": "signature_delta", "signature": signature})
    return start, deltas

# -- stop reasons ----------------------------------------------------------------------
# ``stop_sequence``: a plain stop (the sequence itself stays in the final Message's
# ``stop_sequence``). ``model_context_window_exceeded``: the output stopped because the
# context window was full, so, like ``max_tokens``, it is ``length``: the answer is cut
# short, and only a shorter input (not a larger max_tokens) lets it go on. ``compaction``
# (beta, with ``pause_after_compaction``): the server compacted the context and paused;
# like ``pause_turn``, sending the message back (summary included) continues the turn.
FINISH_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop", "stop_sequence": "stop",
    "max_tokens": "length", "model_context_window_exceeded": "length",
    "tool_use": "tool_calls", "pause_turn": "pause", "compaction": "pause",
    "refusal": "refusal",
}


def finish_reason(stop_reason: Any) -> FinishReason | None:
    """A ``stop_reason`` in the unified vocabulary (None while there is none)."""
    return unified(FINISH_REASONS, stop_reason)


def iterations(usage: Any) -> list[dict]:
    """The hops of one call, where it made several model calls (``usage.iterations``: a
    fallback model after a refusal, an advisor, a compaction), each with its own usage;
    ``[]`` when it made one."""
    hops = usage.get("iterations") if isinstance(usage, dict) else None
    if isinstance(hops, list) and hops and all(isinstance(h, dict) for h in hops):
        return hops
    return []


def usage_counts(usage: Any) -> dict[str, int]:
    """A ``usage`` object's counts in the unified names (`USAGE_COUNTS`): the input counts
    cache reads and writes, which Anthropic reports apart from ``input_tokens``. With
    ``iterations``, the sum over the hops: the top-level counts cover only some of them
    (the executor's own calls; not a compaction's or an advisor's, and after a fallback not
    the second model's input), while every hop was billed."""
    hops = iterations(usage)
    if hops:
        each = [usage_counts(hop) for hop in hops]
        return {key: sum(counts[key] for counts in each) for key in each[0]}
    read, write = count(usage, "cache_read_input_tokens"), count(usage, "cache_creation_input_tokens")
    return {"input": count(usage, "input_tokens") + read + write,
            "output": count(usage, "output_tokens"), "cache_read": read, "cache_write": write,
            "reasoning": 0}


# -- errors ----------------------------------------------------------------------------
# Named by ``error.type``: `retryable_error` (a name) and `retryable` (a `WireError`) are
# this rule's.
RETRY = RetryRule(
    retryable=frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}),
    final=frozenset({"invalid_request_error", "authentication_error", "billing_error",
                     "permission_error", "not_found_error", "request_too_large"}),
    by="type")
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error an ``error`` event reports, else None."""
    if event_type not in FAILURES or not isinstance(payload, dict):
        return None
    return read_error_object(payload.get("error"), "error")


SHEET = Sheet(
    wire=WIRE,
    events=(
        ("message_start", "the message: id, model, usage so far"),
        ("content_block_start", "opens slot `index` with the block's type (and a tool's name, id)"),
        ("content_block_delta", "a fragment for slot `index`: text_delta, input_json_delta, ..."),
        ("content_block_stop", "closes slot `index`"),
        ("message_delta", "stop_reason and cumulative usage"),
        ("message_stop", "the end"),
        ("ping", "keep-alive, anywhere"),
    ),
    addressing=(("index", "the block's slot in `content`"),),
    tool_arguments="input_json_delta deltas' `partial_json`, into a tool_use block's slot",
    terminal="message_stop",
    in_band_error='an `error` event: {"type": "error", "error": {"type", "message"}}',
    also=(("thinking_delta, signature_delta", "reasoning: a thinking block's text, then its "
                                              "signature (redacted_thinking arrives whole)"),
          ("citations_delta", "a citation for the text block at `index`"),
          ("refusal", "no event of its own: stop_reason `refusal` after the partial text"),
          ("fallback", "a block, start and stop only: the model in `to` serves what "
                       "follows; usage.iterations counts each hop"),
          ("unknown event types", "ignore them: the docs say new types may be added")),
    finish="`stop_reason` in message_delta: " + finish_words(FINISH_REASONS),
    error_body='HTTP 4xx/5xx with {"type": "error", "error": {"type", "message"}}; 529 '
               "overloaded_error; 429 with retry-after",
)


# -- over HTTP (the registry's entry) ----------------------------------------------------
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                403: "permission_error", 404: "not_found_error", 405: "invalid_request_error",
                413: "request_too_large", 429: "rate_limit_error", 529: "overloaded_error"}


def error_body(status: int, message: str) -> dict[str, Any]:
    """The JSON error the Messages API sends for a request that failed with `status`."""
    return {"type": "error",
            "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message}}


# The SDK's stream events that are the wire's own (its helper adds ``text``, ``input_json``
# and the like, built from them, and never yields a ping).
SDK_RAW_EVENTS = frozenset({MESSAGE_START, CONTENT_BLOCK_START, CONTENT_BLOCK_DELTA,
                            CONTENT_BLOCK_STOP, MESSAGE_DELTA, MESSAGE_STOP, ERROR})

ENTRY = Entry(wire=WIRE, title="Anthropic Messages", framing="sse",
              content_type=SSE_CONTENT_TYPE, suffix=".sse", route=PATH, path=PATH,
              conversation=("system", "messages"), error_body=error_body,
              streams_by_path=PATH_STREAMS,
              accumulator="lesson_lib.accumulate.anthropic:AnthropicAccumulator",
              adapter="lesson_lib.turn.adapters.anthropic:AnthropicAdapter",
              next_request="lesson_lib.turn.next_request:for_messages",
              sdk=SDKRoute("anthropic", "lesson_lib.turn.adapters.sdk:AnthropicSDK",
                             replay="lesson_lib.capture.replay:replay_messages",
                             request="lesson_lib.capture.replay:messages_kwargs", model="claude-sonnet-4-6",
                             raw_types=SDK_RAW_EVENTS,
                             close="lesson_lib.breaks.sdk_close:MESSAGES",
                             **sdk_clients.ANTHROPIC),
              record=RecordRoute(("ANTHROPIC_API_KEY",), "claude-sonnet-4-6",
                                 "lesson_lib.capture.record:messages_request",
                                 "lesson_lib.capture.record:anthropic_create"),
              reference_folders=("anthropic-messages",),
              labels="lesson_lib.accumulate.labels:anthropic_label",
              shows_duplicate="lesson_lib.breaks.visibility:anthropic_duplicate",
              shows_swap="lesson_lib.breaks.visibility:anthropic_swap",
              user_message="lesson_lib.breaks.recovery:messages_user_message",
              early_usage=True)
