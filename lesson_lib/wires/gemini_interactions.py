"""The Google Gemini Interactions wire (``POST /v1beta/interactions`` with ``"stream":
true``): its facts, as data and small pure functions.

Every event names itself in ``event_type`` (and, on the SSE framing, in its
``event:`` line). A stream opens with ``interaction.created`` (the interaction:
``id``, ``status: in_progress``, ``model``) and ``interaction.status_update``;
then each step of the interaction, in slots addressed by ``index``:

- ``step.start`` opens slot ``index`` with the step (``step.type``: `STEP_TYPES`);
  a ``function_call`` step comes with its ``id`` and ``name`` and empty
  ``arguments``, a server tool's step (`SERVER_CALL_STEPS`, `SERVER_RESULT_STEPS`)
  may come whole;
- ``step.delta`` adds to it (``delta.type``: `DELTA_TYPES`): ``text`` (and
  image, audio, video, document) content for a ``model_output`` step,
  ``thought_signature`` and ``thought_summary`` for a ``thought`` step (a thought
  may hold only its signature), ``arguments_delta`` (JSON text) for a
  ``function_call``, ``text_annotation_delta`` (citations) for the text before
  it, and a server tool's own delta (typed like its step) for a server step;
- ``step.stop`` closes it (with the step's usage, sometimes).

``interaction.completed`` ends the stream properly: it carries the interaction
with its ``status`` (`STATUSES`: ``completed``; ``requires_action`` when a
function call waits for the client; ``failed``, ``cancelled``, ``incomplete``,
``budget_exceeded``, ``requires_continuation``...) and its ``usage``, but not
the steps the stream said (a client builds them). An ``error`` event
(``{"error": {"code", "message"}, "event_type": "error"}``) is an in-band
failure after HTTP 200. Every event may carry an ``event_id`` with which a
client resumes the stream (``last_event_id``).

The Live API (over a WebSocket) adds ``interaction.connected`` and
``interaction.cancelled``; they are no part of this SSE stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import sdk_clients
from .common import FinishReason, RetryRule, Sheet, WireError, count, finish_words, unified
from .common import retryable_status as retryable_status  # the HTTP rule, on every wire
from .entry import SSE_CONTENT_TYPE, Entry, RecordRoute, SDKRoute
from .gemini import RETRY as _GEMINI_RETRY
from .gemini import error_body as _gemini_error_body
from .resume import Resume
from .row_text import as_dict, as_int, error_text, preview_text
from .wire_events import DONE
from .wire_events import EVENT_TYPE_FIELD as EVENT_TYPE_FIELD

WIRE = "google-gemini-interactions"
# Where the provider listens: the path names the API version (the course asks ``v1beta``;
# google-genai 3.6.1 posts to ``v1``); the body's ``stream: true`` asks for a stream.
PATH = "/{version}/interactions"
PATH_STREAMS = False

# -- the event vocabulary (google-genai's ``InteractionSSEEvent`` union; tests keep these
#    sets supersets of the SDK's) ---------------------------------------------------------
INTERACTION_CREATED = "interaction.created"
INTERACTION_STATUS_UPDATE = "interaction.status_update"
STEP_START = "step.start"
STEP_DELTA = "step.delta"
STEP_STOP = "step.stop"
# What makes a call final (the tool-call card's words): its step's stop.
CALL_ENDED_BY = STEP_STOP
INTERACTION_COMPLETED = "interaction.completed"
ERROR = "error"
EVENT_TYPES = frozenset({INTERACTION_CREATED, INTERACTION_STATUS_UPDATE, STEP_START,
                         STEP_DELTA, STEP_STOP, INTERACTION_COMPLETED, ERROR})
# The field every payload names its event in (the ``event:`` line repeats it):
# `EVENT_TYPE_FIELD`, named in `wire_events`, which reads it for every wire.
# The three events that address a step by its ``index``.
STEP_EVENTS = (STEP_START, STEP_DELTA, STEP_STOP)

# -- the steps ----------------------------------------------------------------------------
THOUGHT_STEP = "thought"
MODEL_OUTPUT_STEP = "model_output"
FUNCTION_CALL_STEP = "function_call"      # a call of one of the request's own functions
FUNCTION_RESULT_STEP = "function_result"  # its answer (the client's, in the next request)
USER_INPUT_STEP = "user_input"            # the request's input, as a step of the history
# Calls the provider runs itself, and what they gave back: each named ``<tool>_call`` /
# ``<tool>_result``, and whole in its start (or in one delta typed like the step).
SERVER_TOOLS = ("code_execution", "file_search", "google_maps", "google_search",
                "mcp_server_tool", "processing", "retrieval", "tool_search", "url_context")
SERVER_CALL_STEPS = frozenset(f"{tool}_call" for tool in SERVER_TOOLS)
SERVER_RESULT_STEPS = frozenset(f"{tool}_result" for tool in SERVER_TOOLS)
STEP_TYPES = (frozenset({THOUGHT_STEP, MODEL_OUTPUT_STEP, FUNCTION_CALL_STEP,
                         FUNCTION_RESULT_STEP, USER_INPUT_STEP})
              | SERVER_CALL_STEPS | SERVER_RESULT_STEPS)
# The steps whose arguments stream as ``arguments_delta`` JSON text.
CALL_STEPS = frozenset({FUNCTION_CALL_STEP})
# The steps that arrive whole: a delta typed like the step states (more of) its fields.
WHOLE_STEPS = SERVER_CALL_STEPS | SERVER_RESULT_STEPS | {FUNCTION_RESULT_STEP}

# -- the deltas ---------------------------------------------------------------------------
TEXT_DELTA = "text"                        # ``delta.text``: a model_output's text
THOUGHT_SIGNATURE_DELTA = "thought_signature"   # ``delta.signature``: a step's signature
THOUGHT_SUMMARY_DELTA = "thought_summary"  # ``delta.content``: one item of a thought's summary
ARGUMENTS_DELTA = "arguments_delta"        # ``delta.arguments``: a function call's JSON text
TEXT_ANNOTATION_DELTA = "text_annotation_delta"  # ``delta.annotations``: for the text before
# Content other than text a model_output streams, each delta one whole content item.
MEDIA_DELTAS = frozenset({"image", "audio", "video", "document"})
CONTENT_DELTAS = MEDIA_DELTAS | {TEXT_DELTA}
DELTA_TYPES = (CONTENT_DELTAS | WHOLE_STEPS
               | {THOUGHT_SIGNATURE_DELTA, THOUGHT_SUMMARY_DELTA, ARGUMENTS_DELTA,
                  TEXT_ANNOTATION_DELTA})
# Where a delta's payload goes: the delta's key for its text, and the step field.
ARGUMENTS_KEY = "arguments"
SIGNATURE_KEY = "signature"
CONTENT_FIELD = "content"      # a model_output's list of content items
SUMMARY_FIELD = "summary"      # a thought's list of summary items
ANNOTATIONS_KEY = "annotations"

# -- the ending ---------------------------------------------------------------------------
TERMINALS = frozenset({INTERACTION_COMPLETED})   # the stream ended properly
FAILURES = frozenset({ERROR})                    # an in-band failure after HTTP 200
# google-genai's decoder stops quietly at a ``data: [DONE]`` line on this stream too; it
# ends nothing properly (the recordings have none) and is no event of the wire.
SENTINEL = DONE
# An in-band error as this wire sends it (lesson 5 injects it): an ``event: error`` record.
ERROR_EXAMPLE = {"error": {"code": "UNAVAILABLE", "message": "The model is overloaded. "
                                                           "Please try again later."},
                 "event_type": ERROR}
NAMES_EVENTS = True                        # each record has an ``event:`` line
KEEPALIVES: frozenset[str] = frozenset()   # no event only keeps the connection open
# Whether a server tool's result comes apart from its call: a ``*_result`` step of its own.
SERVER_RESULTS_APART = True

# -- statuses and finish reasons ----------------------------------------------------------
# Every status an interaction may have (google-genai's ``InteractionStatus``).
IN_PROGRESS, COMPLETED, REQUIRES_ACTION, FAILED = ("in_progress", "completed",
                                                   "requires_action", "failed")
# The statuses of an interaction still running: no finish yet.
RUNNING_STATUSES = frozenset({IN_PROGRESS, "queued", "idle"})
FINISH_REASONS: dict[str, FinishReason] = {
    COMPLETED: "stop",
    REQUIRES_ACTION: "tool_calls",          # a function call waits for the client
    "incomplete": "length",                 # cut short; ``continuation_token`` resumes it
    "budget_exceeded": "length",
    "requires_continuation": "pause",       # send ``continuation_token`` back to go on
    FAILED: "error",
    "cancelled": "other",
}
STATUSES = RUNNING_STATUSES | frozenset(FINISH_REASONS)
# Statuses that end the turn other than as their finish says (`lesson_lib.turn.ends`): a
# budget the vendor keeps; the vendor's cancel. ``requires_action`` is not one: it is this
# wire's way of asking for the application's tools, read as every wire's tool_calls (a turn
# that stops there has tools to run, as on Anthropic's ``tool_use``).
TURN_ENDS: dict[str, tuple[str, str]] = {
    "budget_exceeded": ("budget_reached", "vendor_budget"),
    "cancelled": ("cancelled", "vendor"),
}
# The statuses of a stream that ended because the model ran out of room.
LENGTH_STATUSES = frozenset(s for s, reason in FINISH_REASONS.items() if reason == "length")


def server_call(step: Any) -> tuple[str | None, str | None, Any] | None:
    """``(tool, id, input)`` of a server tool's ``<tool>_call`` step as it stands (its
    ``arguments``, which a delta typed like the step states after the start), else None.
    An MCP server's call names its own tool."""
    kind = step.get("type") if isinstance(step, dict) else None
    if kind not in SERVER_CALL_STEPS:
        return None
    name = step.get("name")
    tool = name if isinstance(name, str) else kind[:-len("_call")]
    call_id = step.get("id")
    given = step.get(ARGUMENTS_KEY)
    return tool, call_id if isinstance(call_id, str) else None, given if given is not None else {}


def finish_reason(raw: Any) -> FinishReason | None:
    """An interaction's ``status`` in the unified vocabulary: None while it still runs
    (or says nothing), ``other`` for a status this module does not know."""
    if raw in RUNNING_STATUSES:
        return None
    return unified(FINISH_REASONS, raw)


def usage_counts(usage: Any) -> dict[str, int]:
    """An interaction's ``usage`` in the unified names (`USAGE_COUNTS`).

    Input is the prompt plus what tools fed the model (``total_tool_use_tokens``);
    output is the answer plus the thoughts (``total_output_tokens`` leaves them
    out: ``total_tokens`` is input + output + thought tokens).
    """
    thoughts = count(usage, "total_thought_tokens")
    return {"input": count(usage, "total_input_tokens") + count(usage, "total_tool_use_tokens"),
            "output": count(usage, "total_output_tokens") + thoughts,
            "cache_read": count(usage, "total_cached_tokens"), "cache_write": 0,
            "reasoning": thoughts}


# -- errors -------------------------------------------------------------------------------
# Named like every Google error: by its canonical status. An ``error`` event's ``code`` is
# "a URI that identifies the error type"; its last segment is read as the name.
RETRY = RetryRule(retryable=_GEMINI_RETRY.retryable, final=_GEMINI_RETRY.final, by="type")
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def error_name(code: Any) -> str | None:
    """The name of an ``error`` event's ``code``: the URI's last segment (the code itself
    when it is no URI), None for no code."""
    if not isinstance(code, str) or not code.strip():
        return None
    name = code.strip().rstrip("/").rsplit("/", 1)[-1].rsplit("#", 1)[-1]
    return name or None


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error an ``error`` event reports (``{"error": {"code", "message"}}``), else None:
    the code's last segment is its type, the code its code."""
    if event_type not in FAILURES or not isinstance(payload, dict):
        return None
    error = payload.get("error")
    if not isinstance(error, dict):
        return WireError(None, None, None, "error")
    code, message = error.get("code"), error.get("message")
    return WireError(error_name(code), code if isinstance(code, str) and code else None,
                     message if isinstance(message, str) and message else None, "error")


SHEET = Sheet(
    wire=WIRE,
    events=(
        (INTERACTION_CREATED, "the interaction: id, status in_progress, model"),
        (INTERACTION_STATUS_UPDATE, "interaction_id and its status (usage, sometimes)"),
        (STEP_START, "opens slot `index` with the step: thought, model_output, function_call "
                     "{id, name}, or a server tool's *_call / *_result"),
        (STEP_DELTA, "a fragment for slot `index`: text, thought_signature, arguments_delta, "
                     "text_annotation_delta, ..."),
        (STEP_STOP, "closes slot `index`"),
        (INTERACTION_COMPLETED, "the end: the interaction with its status and usage "
                                "(not its steps)"),
    ),
    addressing=(("index", "the step's slot in `steps`"),
                ("event_id", "where a client resumes the stream (last_event_id)")),
    tool_arguments="arguments_delta deltas' `arguments` (JSON text), into a function_call "
                   "step's slot; its start holds arguments {}",
    terminal=INTERACTION_COMPLETED,
    in_band_error='an `error` event: {"error": {"code", "message"}, "event_type": "error"}',
    also=(("thought", "reasoning: a step with a thought_signature delta (sent back with the "
                      "next request) and thought_summary items, or only the signature"),
          ("text_annotation_delta", "citations for the text before it"),
          ("*_call, *_result", "the provider's own tools (google_search, code_execution, "
                               "url_context, ...): whole steps"),
          ("previous_interaction_id", "a stateful follow-up names the interaction it "
                                      "continues; id is empty when store is false")),
    finish="`status` of the completed interaction: " + finish_words(FINISH_REASONS),
    error_body='HTTP 4xx/5xx with {"error": {"code", "message", "status"}}; 429 '
               "RESOURCE_EXHAUSTED, 503 UNAVAILABLE",
)


# -- over HTTP (the registry's entry) -------------------------------------------------------
API_VERSION = "v1beta"


def error_body(status: int, message: str) -> dict[str, Any]:
    """The JSON error the Gemini API sends for a request that failed with `status`
    (the same on this API as on ``streamGenerateContent``)."""
    return _gemini_error_body(status, message)


# A stored interaction is streamed again after any event: ``GET /{version}/interactions/{id}
# ?stream=true&last_event_id=E`` sends the events after the one whose ``event_id`` is E
# (google-genai's ``interactions.get(id, stream=True, last_event_id=E)``). An event id is
# an opaque token: nothing in two of them says whether events lie between.
RESUME = Resume(point_field="event_id", numbered=False,
                id_paths=(("interaction", "id"), ("interaction_id",)),
                route="/{version}/interactions/{id}",
                path=f"/{API_VERSION}/interactions/{{id}}", after="last_event_id")
ENTRY = Entry(wire=WIRE, title="Google Gemini Interactions", framing="sse",
              content_type=SSE_CONTENT_TYPE, suffix=".sse", route=PATH,
              path=f"/{API_VERSION}/interactions",
              conversation=("input", "previous_interaction_id"), error_body=error_body,
              streams_by_path=PATH_STREAMS, resume=RESUME,
              accumulator="lesson_lib.accumulate.gemini_interactions:"
                          "GeminiInteractionsAccumulator",
              adapter="lesson_lib.turn.adapters.gemini_interactions:GeminiInteractionsAdapter",
              next_request="lesson_lib.turn.next_request:for_interactions",
              sdk=SDKRoute("google-genai",
                           "lesson_lib.turn.adapters.gemini_interactions_sdk:"
                           "GeminiInteractionsSDKTranslator",
                           replay="lesson_lib.capture.replay:replay_interactions",
                           request="lesson_lib.capture.replay:interactions_kwargs",
                           model="gemini-2.5-flash", **sdk_clients.GOOGLE_GENAI),
              record=RecordRoute(("GEMINI_API_KEY", "GOOGLE_API_KEY"), "gemini-2.5-flash",
                                 "lesson_lib.capture.record:interactions_request",
                                 "lesson_lib.capture.record:interactions_create",
                                 via="interactions.create(stream=True), the body read by its "
                                     "HTTP transport"),
              reference_folders=(WIRE,),
              labels="lesson_lib.accumulate.labels:interactions_label")


# -- lesson 1's table and the SDK's unions ---------------------------------------------


def read_row(p: dict, row: dict) -> None:
    """An event's cells in lesson 1's table (`event_rows`): a step's index, what a step
    starts, a delta's type and words, the interaction's status and output count."""
    kind = row["type"]
    if kind in FAILURES:
        row["preview"] = preview_text(error_text(read_error, kind, p))
        return
    if kind in STEP_EVENTS:
        row["index"] = as_int(p.get("index"))
    if kind == STEP_START:
        step = as_dict(p.get("step"))
        row["preview"] = preview_text(" ".join(
            str(x) for x in (step.get("type"), step.get("name")) if x))
    elif kind == STEP_DELTA:
        delta = as_dict(p.get("delta"))
        dtype = delta.get("type")
        row["delta_type"] = dtype if isinstance(dtype, str) else None
        said = next((delta[k] for k in ("text", ARGUMENTS_KEY, SIGNATURE_KEY)
                     if isinstance(delta.get(k), str)), None)
        if said is None and dtype == THOUGHT_SUMMARY_DELTA:
            said = as_dict(delta.get(CONTENT_FIELD)).get("text")
        row["preview"] = preview_text(said if isinstance(said, str) else dtype or "")
    else:
        interaction = as_dict(p.get("interaction"))
        status = interaction.get("status", p.get("status"))
        row["output_tokens"] = as_int(as_dict(interaction.get("usage")).get("total_output_tokens"))
        row["preview"] = preview_text(f"status={status}" if status else "")


def sdk_shows(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    """The (SDK union, member) pairs an event shows (`sdk_unions`): its event type, a step's
    or a delta's type, the interaction's status."""
    yield "interactions.events", kind
    if kind == STEP_START:
        yield "interactions.steps", as_dict(payload.get("step")).get("type")
    elif kind == STEP_DELTA:
        yield "interactions.deltas", as_dict(payload.get("delta")).get("type")
    yield "interactions.statuses", as_dict(payload.get("interaction")).get(
        "status", payload.get("status"))

