"""The OpenAI Chat Completions wire: what is true of it, as data and small pure functions.

Every event is a ``chat.completion.chunk`` (no SSE event names); choices are
addressed by ``choices[].index``, tool calls inside a choice by
``tool_calls[].index``. A call never says it ended: a choice ends at its
``finish_reason``, and ``[DONE]`` after every choice has one ends the stream
properly (a body without ``[DONE]``: see `ended_without_done`). Chunks carry no number: the order shows only where a marker can
arrive once (a choice's ``finish_reason``, a call's opening fragment, the
only one with its ``id``, and ``[DONE]``). A payload with a top-level ``error`` (and no ``choices``) is an
in-band failure.
"""

from __future__ import annotations

from typing import Any

from . import sdk_clients
from .common import (
    OPENAI_FINAL_ERRORS,
    OPENAI_RETRYABLE_ERRORS,
    FinishReason,
    RetryRule,
    Sheet,
    WireError,
    count,
    finish_words,
    flat_error,
    openai_error_body,
    read_error_object,
    unified,
)
from .common import retryable_status as retryable_status  # the HTTP rule, on every wire
from .entry import SSE_CONTENT_TYPE, Entry, RecordRoute, SDKRoute
from .wire_events import DONE

WIRE = "openai-chat"
# Where the provider listens, under its base URL (the SDK's own path); the body's
# ``stream: true`` asks for a stream.
PATH = "/v1/chat/completions"
PATH_STREAMS = False

# -- the event vocabulary --------------------------------------------------------------
# Each event type, by name (one spelling, here): a chunk's ``object``, the end marker, and
# what `wire_events` calls an error payload.
CHUNK = "chat.completion.chunk"
ERROR = "error"
EVENT_TYPES = frozenset({CHUNK, DONE, ERROR})
DELTA_TYPES = None    # a chunk's delta is named by the field it fills
# The delta fields the event table names as its ``delta_type``.
DELTA_FIELDS = ("content", "refusal", "reasoning_content")
# Text-carrying delta fields a label shows (``reasoning``: some compatible servers).
TEXT_FIELDS = (*DELTA_FIELDS, "reasoning")
# The legacy functions API's one call per choice (no id): the delta field, the message's
# field, and that call's slot kind.
FUNCTION_CALL = "function_call"
# What makes a call final (the tool-call card's words): Chat has no end event for a call;
# its choice's finish_reason ends every call (and a structured-output content) at once.
CALL_ENDED_BY = "finish_reason"
ADDRESS_FIELDS = ("choices[].index", "tool_calls[].index")

# Chunk fields that only pad the stream (their value means nothing): OpenAI's
# ``obfuscation`` and compatible servers' ``p`` (Mistral, Bedrock) vary a chunk's size.
STREAM_ONLY_FIELDS = frozenset({"obfuscation", "p"})

# The fields that name the completion. Azure OpenAI's first chunk (its prompt's filter
# results, ``"choices": []``) names nothing: ``"id": ""``, ``"model": ""``,
# ``"created": 0``; every later chunk carries the real ones.
IDENTITY_FIELDS = ("id", "created", "model")


def filter_results_chunk(payload: Any) -> bool:
    """Whether a payload is Azure's chunk of filter results (``"object": ""``, the prompt's
    ``prompt_filter_results``): a chunk, though its object does not say so, which the SDK's
    helper skips."""
    return (isinstance(payload, dict) and payload.get("object") == ""
            and "prompt_filter_results" in payload)


def names_nothing(value: Any) -> bool:
    """Whether an identity field's value is a placeholder (absent, ``""`` or ``0``) that a
    later chunk's real value replaces."""
    return value is None or value == "" or (type(value) is int and value == 0)


# -- content as typed parts (Mistral) ---------------------------------------------------
# Some compatible servers send ``delta.content`` as an array of typed parts instead of a
# string: ``{"type": "text", "text": ...}`` is the answer, ``{"type": "thinking",
# "thinking": [{"type": "text", "text": ...}], ...}`` is reasoning.
CONTENT_PART_TEXT = {"text": "text", "thinking": "reasoning"}   # part type -> channel


def content_part_text(part: Any) -> tuple[str, str]:
    """A typed content part's type and the text it carries (``""`` for none): a ``text``
    part's ``text``; a ``thinking`` part's ``thinking`` (a string, or text parts joined)."""
    if not isinstance(part, dict):
        return "?", ""
    kind = part.get("type") if isinstance(part.get("type"), str) else "?"
    value = part.get(kind) if kind in CONTENT_PART_TEXT else None
    if isinstance(value, str):
        return kind, value
    if isinstance(value, list):
        return kind, "".join(p["text"] for p in value if isinstance(p, dict)
                             and isinstance(p.get("text"), str))
    return kind, ""


# -- the ending ------------------------------------------------------------------------
TERMINALS = frozenset({DONE})      # counts only once every choice has a finish_reason
FAILURES = frozenset({ERROR})      # an error payload (wire_events types it ``error``)
# An in-band error as this wire sends it (lesson 5 injects it): a bare ``data:`` record.
ERROR_EXAMPLE = {"error": {"message": "The server had an error while processing your request. "
                                      "Sorry about that!",
                           "type": "server_error", "param": None, "code": None}}
NAMES_EVENTS = False                       # records are bare ``data:`` lines
KEEPALIVES: frozenset[str] = frozenset()   # no event only keeps the connection open
# Whether a server tool's result comes apart from its call: no server tools.
SERVER_RESULTS_APART = False


# -- a body without [DONE] --------------------------------------------------------------
# Some servers (and proxies) end a Chat body without ``data: [DONE]``; the official SDK
# takes a body that ends cleanly as the end. The course's rule: such a stream ended
# properly, with a ``no_done_marker`` warning, when every choice has its finish_reason,
# the usage chunk came if the request asked for it, and the body ends at an event
# boundary (nothing undispatched, every payload JSON). Otherwise it was cut (a body
# that stops with a choice still unfinished is cut, however finished its text looks).


def usage_promised(payload: Any, request: Any = None) -> bool:
    """Whether a usage chunk is owed: the request asked for it
    (``stream_options.include_usage``), or a chunk says ``"usage": null`` (OpenAI puts
    that on every chunk of such a stream until the usage chunk)."""
    if isinstance(request, dict):
        options = request.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            return True
    return isinstance(payload, dict) and "usage" in payload and payload["usage"] is None


def has_usage(payload: Any) -> bool:
    """Whether a chunk carries the stream's usage."""
    return isinstance(payload, dict) and isinstance(payload.get("usage"), dict)


def ended_without_done(*, every_choice_finished: bool, usage_owed: bool, usage_came: bool,
                       whole: bool) -> bool:
    """The rule above: whether a body without ``[DONE]`` ended properly (`whole`: it ends
    at an event boundary and every payload parsed)."""
    return every_choice_finished and (usage_came or not usage_owed) and whole


def is_error_payload(payload: Any) -> bool:
    """Whether a chunk's payload is an in-band error: a top-level ``error`` and no
    ``choices``, or a non-null ``error`` beside them (OpenRouter sends its error inside
    a chunk with choices and usage)."""
    return isinstance(payload, dict) and "error" in payload and (
        "choices" not in payload or payload["error"] is not None)


# -- a tool call's fragments ----------------------------------------------------------


def opening_id(fragment: Any) -> str | None:
    """The id a tool-call fragment opens its call with; None for a later fragment
    (only a call's first fragment carries its ``id``)."""
    call_id = fragment.get("id") if isinstance(fragment, dict) else None
    return call_id if isinstance(call_id, str) and call_id else None


def fragment_arguments(fragment: Any) -> str | None:
    """The argument text a tool-call fragment carries (None when it carries none)."""
    function = fragment.get("function") if isinstance(fragment, dict) else None
    text = function.get("arguments") if isinstance(function, dict) else None
    return text if isinstance(text, str) else None


# -- finish reasons --------------------------------------------------------------------
FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop", "length": "length", "tool_calls": "tool_calls",
    "content_filter": "content_filter", "function_call": "tool_calls",
}


def finish_reason(raw: Any) -> FinishReason | None:
    """A choice's ``finish_reason`` in the unified vocabulary (None while there is none)."""
    return unified(FINISH_REASONS, raw)


def usage_counts(usage: Any) -> dict[str, int]:
    """A ``usage`` object's counts in the unified names (`USAGE_COUNTS`)."""
    return {"input": count(usage, "prompt_tokens"), "output": count(usage, "completion_tokens"),
            "cache_read": count(usage, "prompt_tokens_details", "cached_tokens"),
            "cache_write": 0,
            "reasoning": count(usage, "completion_tokens_details", "reasoning_tokens")}


# -- errors ----------------------------------------------------------------------------
# OpenAI's codes, read by ``code`` (else ``type``): `retryable_error` (a name)
# and `retryable` (a `WireError`) are this rule's.
RETRY = RetryRule(OPENAI_RETRYABLE_ERRORS, OPENAI_FINAL_ERRORS, by="code")
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


# Compatible servers (OpenRouter) put the HTTP status in an error's ``code``: read by the
# name OpenAI gives an error of that status.
STATUS_ERRORS = {400: "invalid_request_error", 401: "invalid_api_key",
                 402: "insufficient_quota", 408: "timeout", 429: "rate_limit_exceeded",
                 500: "server_error", 502: "server_error", 503: "server_is_overloaded"}


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error an error payload reports (``{"error": {"message", "type", "code"}}``; an
    integer ``code`` is an HTTP status, named by `STATUS_ERRORS`)."""
    if event_type not in FAILURES or not isinstance(payload, dict):
        return None
    err = payload.get("error")
    status = err.get("code") if isinstance(err, dict) else None
    if type(status) is int and not err.get("type"):
        message = err.get("message")
        return WireError(STATUS_ERRORS.get(status, "server_error" if status >= 500
                                           else "invalid_request_error"), None,
                         message if isinstance(message, str) and message else None, "error")
    return (read_error_object(err, "error")
            or flat_error(payload))


SHEET = Sheet(
    wire=WIRE,
    events=(
        ("chat.completion.chunk", "delta.role: the first chunk of a choice"),
        ("chat.completion.chunk", "delta.content: a text fragment for choice `index`"),
        ("chat.completion.chunk", "delta.tool_calls[]: a call's id and name first, then "
                                  "arguments fragments, by tool_calls[].index"),
        ("chat.completion.chunk", "finish_reason: the choice (and all its calls) ended"),
        ("chat.completion.chunk", "usage, with empty choices (when asked for)"),
        ("chat.completion.chunk", "delta.content as typed parts (compatible servers): "
                                  "thinking to reasoning, text to the answer"),
        ("[DONE]", "the end (missing: the end, with a warning, once every choice finished, "
                   "the usage came if asked for and the body is whole)"),
    ),
    addressing=(("choices[].index", "the choice"),
                ("tool_calls[].index", "the call inside the choice's message")),
    tool_arguments="delta.tool_calls[].function.arguments, by (choice, tool_calls index); "
                   "the id and name only on a call's first fragment",
    terminal="[DONE], after every choice has a finish_reason (a body without it: ended, "
             "with a warning, when every choice finished, the usage came if asked for and "
             "the body ends at an event boundary; else cut)",
    in_band_error='a chunk {"error": {"message", "type", "code"}} with no choices, or an '
                  'error object beside its choices (OpenRouter)',
    also=(("delta.refusal", "a refusal's text, in place of content"),
          ("delta.reasoning_content", "reasoning text, from some compatible servers only"),
          ("annotations", "url_citation citations of web-search models, no event of their "
                          "own"),
          ("delta.audio", "spoken output: id, transcript and base64 data pieces, then "
                          "expires_at alone"),
          ("moderation", "a chunk with empty choices judging input and output, after the "
                         "text"),
          ("delta.function_call", "the legacy functions API; finish_reason function_call")),
    finish="`finish_reason` per choice: " + finish_words(FINISH_REASONS),
    error_body='HTTP 4xx/5xx with {"error": {"message", "type", "param", "code"}}; 429 with retry-after and x-ratelimit-* headers',
)


# The SDK's name for each chunk it yields as it came (beside the events its helper builds).
SDK_CHUNK = "chunk"


# -- over HTTP (the registry's entry) ----------------------------------------------------
ENTRY = Entry(wire=WIRE, title="OpenAI Chat Completions", framing="sse",
              content_type=SSE_CONTENT_TYPE, suffix=".sse", route=PATH, path=PATH,
              conversation=("messages",), error_body=openai_error_body,
              streams_by_path=PATH_STREAMS,
              accumulator="lesson_lib.accumulate:chat_accumulator",
              adapter="lesson_lib.turn.adapters.chat:ChatAdapter",
              next_request="lesson_lib.turn.next_request:for_chat",
              sdk=SDKRoute("openai", "lesson_lib.turn.adapters.sdk:ChatSDK",
                             replay="lesson_lib.capture.replay:replay_chat",
                             request="lesson_lib.capture.replay:chat_kwargs", model="gpt-4.1",
                             raw_types=frozenset({SDK_CHUNK}), by_type=False,
                             close="lesson_lib.breaks.sdk_close:CHAT", **sdk_clients.OPENAI),
              record=RecordRoute(("OPENAI_API_KEY",), "gpt-4.1",
                                 "lesson_lib.capture.record:chat_request",
                                 "lesson_lib.capture.record:chat_create", base_path="/v1"),
              reference_folders=("openai-chat", "openai-chat-compatible"),
              labels="lesson_lib.accumulate.labels:chat_label",
              slot_order="lesson_lib.accumulate.fold:chat_order",
              shows_duplicate="lesson_lib.breaks.visibility:chat_duplicate",
              shows_swap="lesson_lib.breaks.visibility:chat_swap")
