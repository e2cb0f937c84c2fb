"""The Google Gemini wire (``streamGenerateContent?alt=sse``): its facts, as data and small
pure functions.

Every record is one ``data:`` line holding a whole ``GenerateContentResponse``:
``candidates[].content.parts[]``, ``candidates[].finishReason``,
``usageMetadata``, ``modelVersion``, ``responseId``. There are no event names,
no block index, no part ids and no terminal event: the body simply ends.

- **Ended properly**: the body ended at an event boundary, right after a record
  whose candidate carries a ``finishReason``. The *last* record decides: with
  code execution a ``STOP`` arrives on a record in the middle and more records
  follow it (`ended_properly`). google-genai reads each ``data:`` line as it
  comes, without waiting for the blank line, so a body that lost only its last
  separator looks finished to the SDK; the wire route calls it cut.
- **Parts** continue one another: consecutive ``text`` parts are one text, a
  ``thought: true`` part is reasoning, ``thoughtSignature`` rides on a part.
  Function calls come whole (``functionCall: {name, args, id?}``) or streamed:
  ``{name, willContinue: true}``, then ``partialArgs`` (`ARGUMENT_VALUES`) over
  several records, then an empty ``functionCall: {}`` that closes the call.
- **Finish**: ``STOP`` also ends a turn that asks for tools; the function-call
  parts say which (`finish_from`, like Responses).
- **Usage** (``usageMetadata``) may come on every record: a running total that
  can go down (the last one wins).
- **Errors**: ``{"error": {"code": 429, "message": ..., "status":
  "RESOURCE_EXHAUSTED"}}``, as an HTTP error body or as a record mid-stream;
  the ``status`` names the error.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import sdk_clients
from .common import FinishReason, RetryRule, Sheet, WireError, count, finish_words, unified
from .common import retryable_status as retryable_status  # the HTTP rule, on every wire
from .entry import SSE_CONTENT_TYPE, Entry, RecordRoute, SDKRoute
from .wire_events import GEMINI_RECORD, WireEvent

WIRE = "google-gemini"
# Where the provider listens: the path names the API version (google-genai says
# ``v1beta`` or ``v1``) and the model, and itself asks for a stream (with ``?alt=sse``).
PATH = "/{version}/models/{model}:streamGenerateContent"
PATH_STREAMS = True

# -- the event vocabulary: one record type (named after its schema) and the error ------
RECORD = GEMINI_RECORD
EVENT_TYPES = frozenset({RECORD, "error"})
DELTA_TYPES = None     # a record's parts are named by the field they fill (`PART_FIELDS`)
# Each part field another station matches on, by name (one spelling, here).
TEXT_PART = "text"
THOUGHT = "thought"                  # a text part with ``thought: true`` is a thought
THOUGHT_SIGNATURE = "thoughtSignature"
FUNCTION_CALL, FUNCTION_RESPONSE = "functionCall", "functionResponse"
# What makes a call final (the tool-call card's words): a streamed call's last part is the
# one that does not say it continues (``willContinue``).
CALL_ENDED_BY = f"a {FUNCTION_CALL} part that does not continue"
PARTIAL_ARGS = "partialArgs"         # a function call streamed in path-addressed values
EXECUTABLE_CODE, CODE_EXECUTION_RESULT = "executableCode", "codeExecutionResult"
TOOL_CALL, TOOL_RESPONSE = "toolCall", "toolResponse"
# Parts the provider wrote running its own tools (code execution, server tools), and
# what those tools gave back.
SERVER_WORK_PARTS = frozenset({EXECUTABLE_CODE, TOOL_CALL})
SERVER_RESULT_PARTS = frozenset({CODE_EXECUTION_RESULT, TOOL_RESPONSE})
# The fields that say what a part is, in the order a part is read by.
PART_FIELDS = (TEXT_PART, FUNCTION_CALL, FUNCTION_RESPONSE, EXECUTABLE_CODE,
               CODE_EXECUTION_RESULT, TOOL_CALL, TOOL_RESPONSE, "inlineData", "fileData")
# A streamed argument's value: exactly one of these per ``partialArgs`` entry.
ARGUMENT_VALUES = ("stringValue", "numberValue", "boolValue", "nullValue")



def part_kind(part: Any) -> str | None:
    """What a part is, for the event table: ``thought`` for a thought's text,
    ``partialArgs`` for a streamed call's fragment, else the field that fills it
    (``text``, ``functionCall``, ``executableCode``...); None for no part."""
    if not isinstance(part, dict):
        return None
    kind = next((f for f in PART_FIELDS if f in part), None)
    if kind == TEXT_PART and part.get(THOUGHT) is True:
        return THOUGHT
    call = part.get(FUNCTION_CALL)
    if kind == FUNCTION_CALL and isinstance(call, dict) and "name" not in call:
        return PARTIAL_ARGS
    return kind


# -- the ending ------------------------------------------------------------------------
TERMINALS: frozenset[str] = frozenset()   # no terminal event: see `ended_properly`
FAILURES = frozenset({"error"})           # an error record, after HTTP 200
# An in-band error as this wire sends it (lesson 5 injects it): a bare ``data:`` record.
ERROR_EXAMPLE = {"error": {"code": 503, "message": "The model is overloaded. Please try again "
                                                  "later.", "status": "UNAVAILABLE"}}
NAMES_EVENTS = False                      # records are bare ``data:`` lines
KEEPALIVES: frozenset[str] = frozenset()   # no event only keeps the connection open
# Whether a server tool's result comes apart from its call: ``codeExecutionResult`` follows ``executableCode`` as a part of its own.
SERVER_RESULTS_APART = True


def candidates(payload: Any) -> list[dict]:
    """A record's candidates that are objects (none for anything else)."""
    found = payload.get("candidates") if isinstance(payload, dict) else None
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def candidate_index(candidate: dict, position: int) -> int:
    """A candidate's ``index``; some models and records leave it out: then its position."""
    index = candidate.get("index")
    return index if type(index) is int else position


def record_finished(payload: Any) -> bool:
    """Whether a record carries a ``finishReason`` on one of its candidates."""
    return any(isinstance(c.get("finishReason"), str) for c in candidates(payload))


def ended_properly(payloads: Iterable[Any]) -> bool:
    """Whether a stream's records end it properly: the last record that has candidates
    carries a ``finishReason``, every candidate seen got one, and no error record came.

    (That the body ended at an event boundary is the framing's to say: undispatched
    bytes make a stream cut, whatever its records said.)
    """
    last_finished = False
    unfinished: set[int] = set()
    for payload in payloads:
        if isinstance(payload, dict) and "error" in payload and "candidates" not in payload:
            return False
        found = candidates(payload)
        if not found:
            continue
        last_finished = False
        for position, candidate in enumerate(found):
            index = candidate_index(candidate, position)
            if isinstance(candidate.get("finishReason"), str):
                unfinished.discard(index)
                last_finished = True
            else:
                unfinished.add(index)
    return last_finished and not unfinished


def terminal_reached(events: list[WireEvent]) -> bool:
    """`ended_properly`, read from a stream's parsed events."""
    return ended_properly(ev.payload for ev in events if ev.type in EVENT_TYPES)


# -- finish reasons --------------------------------------------------------------------
FINISH_REASONS: dict[str, FinishReason] = {
    "STOP": "stop",
    "MAX_TOKENS": "length",
    "SAFETY": "content_filter", "RECITATION": "content_filter", "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter", "SPII": "content_filter",
    "IMAGE_SAFETY": "content_filter", "IMAGE_PROHIBITED_CONTENT": "content_filter",
    "IMAGE_RECITATION": "content_filter",
    "MALFORMED_FUNCTION_CALL": "error", "UNEXPECTED_TOOL_CALL": "error",
    "TOO_MANY_TOOL_CALLS": "error", "MISSING_THOUGHT_SIGNATURE": "error",
    "LANGUAGE": "other", "OTHER": "other", "NO_IMAGE": "other", "IMAGE_OTHER": "other",
    "FINISH_REASON_UNSPECIFIED": "other",
}


def finish_reason(raw: Any) -> FinishReason | None:
    """A candidate's ``finishReason`` in the unified vocabulary (None while there is none).

    ``STOP`` reads ``stop``: only the parts can tell a turn that asks for tools
    (`finish_from`)."""
    return unified(FINISH_REASONS, raw)


def finish_from(raw: Any, *, called_tools: bool) -> FinishReason | None:
    """The unified finish of a candidate that ended with `raw` and, `called_tools`, holds
    a ``functionCall`` part: ``STOP`` with a call is ``tool_calls``."""
    found = finish_reason(raw)
    return "tool_calls" if found == "stop" and called_tools else found


def usage_counts(usage: Any) -> dict[str, int]:
    """A ``usageMetadata`` object's counts in the unified names (`USAGE_COUNTS`).

    Input is the prompt plus what server tools fed the model
    (``toolUsePromptTokenCount``); output is the answer plus the thoughts
    (``candidatesTokenCount`` leaves them out, unlike the other wires' output).
    """
    thoughts = count(usage, "thoughtsTokenCount")
    return {"input": count(usage, "promptTokenCount") + count(usage, "toolUsePromptTokenCount"),
            "output": count(usage, "candidatesTokenCount") + thoughts,
            "cache_read": count(usage, "cachedContentTokenCount"), "cache_write": 0,
            "reasoning": thoughts}


# -- errors ----------------------------------------------------------------------------
# Named by the error's ``status`` (Google's canonical codes), read as its type.
RETRY = RetryRule(
    retryable=frozenset({"RESOURCE_EXHAUSTED", "UNAVAILABLE", "INTERNAL", "DEADLINE_EXCEEDED",
                         "ABORTED"}),
    final=frozenset({"INVALID_ARGUMENT", "FAILED_PRECONDITION", "PERMISSION_DENIED",
                     "UNAUTHENTICATED", "NOT_FOUND", "OUT_OF_RANGE", "CANCELLED",
                     "UNIMPLEMENTED"}),
    by="type")
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def read_error_body(error: Any) -> WireError | None:
    """The `WireError` of a Gemini ``error`` object: ``status`` is its type, the numeric
    ``code`` (the HTTP status it stands for) its code."""
    if not isinstance(error, dict):
        return None
    status, code, message = error.get("status"), error.get("code"), error.get("message")
    return WireError(status if isinstance(status, str) and status else None,
                     str(code) if type(code) is int else code if isinstance(code, str) else None,
                     message if isinstance(message, str) and message else None, "error")


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error an error record reports (``{"error": {code, message, status}}``), else None."""
    if event_type not in FAILURES or not isinstance(payload, dict):
        return None
    return read_error_body(payload.get("error"))


SHEET = Sheet(
    wire=WIRE,
    events=(
        (RECORD, "a whole response: candidates[].content.parts[], usageMetadata so far"),
        (RECORD, "text parts: consecutive ones continue one text; thought: true is reasoning"),
        (RECORD, "a functionCall part: whole {name, args}, or {name, willContinue} then "
                 "partialArgs, closed by functionCall {}"),
        (RECORD, "finishReason on a candidate: the end, if no record follows"),
    ),
    addressing=(("candidates[].index", "the candidate (absent on some records: 0)"),
                ("(none)", "parts have no index or id: a part continues the one before it")),
    tool_arguments="a functionCall's args whole, or partialArgs [{jsonPath, stringValue | "
                   "numberValue | boolValue | nullValue, willContinue}] over several records",
    terminal="none: the body ends after a record with a finishReason",
    in_band_error='a record {"error": {"code", "message", "status"}}',
    also=(("thought: true", "reasoning: a text part of the model's thinking; a part's "
                            "thoughtSignature goes back with the next request"),
          ("executableCode, codeExecutionResult", "server-run code and its output, whole parts"),
          ("groundingMetadata", "citations: on the candidate, sources and the text spans they "
                                "support"),
          ("refusal", "no part of its own: finishReason SAFETY, PROHIBITED_CONTENT, ..., or "
                      "promptFeedback.blockReason and no candidate")),
    finish="`finishReason` on a candidate: " + finish_words(FINISH_REASONS)
           + "; STOP with a functionCall part → tool_calls",
    error_body='HTTP 4xx/5xx with {"error": {"code", "message", "status"}}; 429 '
               "RESOURCE_EXHAUSTED, 503 UNAVAILABLE",
)


# -- over HTTP (the registry's entry) ----------------------------------------------------
# The API version a request is sent to (google-genai's default; a server answers any).
API_VERSION = "v1beta"
# Google's canonical status of each HTTP status, for an error body.
_ERROR_STATUSES = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
                   404: "NOT_FOUND", 413: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED",
                   500: "INTERNAL", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}


def error_body(status: int, message: str) -> dict[str, Any]:
    """The JSON error the Gemini API sends for a request that failed with `status`."""
    return {"error": {"code": status, "message": message,
                      "status": _ERROR_STATUSES.get(status, "INTERNAL")}}


ENTRY = Entry(wire=WIRE, title="Google Gemini", framing="sse",
              content_type=SSE_CONTENT_TYPE, suffix=".sse", route=PATH,
              path=f"/{API_VERSION}/models/{{model}}:streamGenerateContent",
              query=(("alt", "sse"),), conversation=("contents",), error_body=error_body,
              streams_by_path=PATH_STREAMS,
              accumulator="lesson_lib.accumulate.gemini:GeminiAccumulator",
              adapter="lesson_lib.turn.adapters.gemini:GeminiAdapter",
              next_request="lesson_lib.turn.next_request:for_gemini",
              sdk=SDKRoute("google-genai", "lesson_lib.turn.adapters.gemini_sdk:GeminiSDKTranslator",
                             replay="lesson_lib.capture.replay:replay_gemini",
                             request="lesson_lib.capture.replay:gemini_kwargs", model="gemini-2.5-flash",
                             **sdk_clients.GOOGLE_GENAI),
              record=RecordRoute(("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash",
                                 "lesson_lib.capture.record:gemini_request",
                                 "lesson_lib.capture.record:gemini_create",
                                 via="models.generate_content_stream, the body read by its "
                                     "HTTP transport"),
              reference_folders=("google-gemini",),
              labels="lesson_lib.accumulate.labels:gemini_label")
