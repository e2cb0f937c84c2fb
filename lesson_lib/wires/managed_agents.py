"""The Anthropic Managed Agents session stream (``GET /v1/sessions/{session_id}/events/stream``,
beta ``managed-agents-2026-04-01``): its facts, as data and small pure functions.

Lesson 7: when the vendor runs the agent loop. The stream is the session's
event log as it happens: every event has its own ``id`` and names itself in
``type`` (and in its ``event:`` line); ``user.*`` events are what the
application sent (echoed), ``agent.*`` what the agent did (messages,
thinking, tool calls and their results), ``session.*`` its status, ``span.*``
each model request, ``workflow_run.*`` the runs of a workflow.

Its rule about deltas is the opposite of the Messages wire's. A connection
that opts in (``event_deltas``) also gets ``event_start`` (the previewed
event's type and id) and ``event_delta`` (``event_id``, and a fragment of the
previewed event's ``content`` at ``delta.index``): a *best-effort preview*. The
buffered event with the same ``id`` is canonical and replaces the preview;
a model request that ends early (an error, an interrupt) leaves only the
preview, closed by its ``span.model_request_end``.

A session goes idle (``session.status_idle``) with a ``stop_reason``
(`STOP_REASONS`); idle with ``requires_action`` names the events it waits on
(``stop_reason.event_ids``: a custom tool call to run, a tool call to
confirm), and the session runs again once they are answered, on the same
stream. The last idle ends the turn. Delivery may repeat an event: the
event's ``id`` says it is one already seen.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from . import sdk_clients
from .anthropic import error_body as _messages_error_body
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
from .entry import SSE_CONTENT_TYPE, Entry, SDKRoute

WIRE = "anthropic-managed-agents"
# Where the provider listens, under its base URL (the SDK's ``beta.sessions.events.stream``):
# a GET whose path names the session; the path itself asks for a stream.
PATH = "/v1/sessions/{session_id}/events/stream"
PATH_STREAMS = True
BETA = "managed-agents-2026-04-01"        # the ``anthropic-beta`` header the SDK sends

# -- the event vocabulary (anthropic 2.16's ``BetaManagedAgentsStreamSessionEvents``;
#    a test keeps this set a superset of the SDK's union) ------------------------------
USER_MESSAGE = "user.message"
USER_INTERRUPT = "user.interrupt"
USER_TOOL_CONFIRMATION = "user.tool_confirmation"
USER_CUSTOM_TOOL_RESULT = "user.custom_tool_result"
USER_TOOL_RESULT = "user.tool_result"
USER_DEFINE_OUTCOME = "user.define_outcome"
AGENT_MESSAGE = "agent.message"
AGENT_THINKING = "agent.thinking"
AGENT_TOOL_USE = "agent.tool_use"
AGENT_TOOL_RESULT = "agent.tool_result"
AGENT_MCP_TOOL_USE = "agent.mcp_tool_use"
AGENT_MCP_TOOL_RESULT = "agent.mcp_tool_result"
AGENT_CUSTOM_TOOL_USE = "agent.custom_tool_use"
AGENT_THREAD_EVENTS = frozenset({"agent.thread_message_received", "agent.thread_message_sent",
                                 "agent.thread_context_compacted"})
SESSION_ERROR = "session.error"
SESSION_RUNNING = "session.status_running"
SESSION_RESCHEDULED = "session.status_rescheduled"
SESSION_IDLE = "session.status_idle"
SESSION_TERMINATED = "session.status_terminated"
SESSION_DELETED = "session.deleted"
SESSION_UPDATED = "session.updated"
SESSION_USAGE = "session.usage"
SESSION_THREAD_EVENTS = frozenset({"session.thread_created", "session.thread_status_running",
                                   "session.thread_status_idle",
                                   "session.thread_status_terminated",
                                   "session.thread_status_rescheduled"})
SPAN_MODEL_REQUEST_START = "span.model_request_start"
SPAN_MODEL_REQUEST_END = "span.model_request_end"
SPAN_OUTCOME_EVENTS = frozenset({"span.outcome_evaluation_start",
                                 "span.outcome_evaluation_ongoing",
                                 "span.outcome_evaluation_end"})
WORKFLOW_RUN_EVENTS = frozenset({"workflow_run.created", "workflow_run.status_running",
                                 "workflow_run.status_idle", "workflow_run.status_ended",
                                 "workflow_run.phase_started", "workflow_run.phase_ended",
                                 "workflow_run.error"})
EVENT_START = "event_start"               # a preview opens: ``event: {type, id}``
EVENT_DELTA = "event_delta"               # a preview's fragment: ``event_id``, ``delta``
SYSTEM_MESSAGE = "system.message"
PING = "ping"
ERROR = "error"                           # an SSE ``error`` event (the SDK raises on it)
EVENT_TYPES = (frozenset({
    USER_MESSAGE, USER_INTERRUPT, USER_TOOL_CONFIRMATION, USER_CUSTOM_TOOL_RESULT,
    USER_TOOL_RESULT, USER_DEFINE_OUTCOME, AGENT_MESSAGE, AGENT_THINKING, AGENT_TOOL_USE,
    AGENT_TOOL_RESULT, AGENT_MCP_TOOL_USE, AGENT_MCP_TOOL_RESULT, AGENT_CUSTOM_TOOL_USE,
    SESSION_ERROR, SESSION_RUNNING, SESSION_RESCHEDULED, SESSION_IDLE, SESSION_TERMINATED,
    SESSION_DELETED, SESSION_UPDATED, SESSION_USAGE, SPAN_MODEL_REQUEST_START,
    SPAN_MODEL_REQUEST_END, EVENT_START, EVENT_DELTA, SYSTEM_MESSAGE, PING, ERROR})
    | AGENT_THREAD_EVENTS | SESSION_THREAD_EVENTS | SPAN_OUTCOME_EVENTS | WORKFLOW_RUN_EVENTS)
# The events a preview may stand for (``event_start.event.type``), and the one delta type.
PREVIEWED = frozenset({AGENT_MESSAGE, AGENT_THINKING})
CONTENT_DELTA = "content_delta"           # ``delta.content`` lands in ``content[delta.index]``
DELTA_TYPES = frozenset({CONTENT_DELTA})
# An agent message's content entries: text, or a block withheld from the client.
TEXT_BLOCK = "text"
REDACTED_BLOCK = "redacted"

# -- who made each event, for the turn ----------------------------------------------
# Calls the agent runs itself (its toolset, an MCP server) and what they gave back.
AGENT_CALLS = frozenset({AGENT_TOOL_USE, AGENT_MCP_TOOL_USE})
AGENT_RESULTS = frozenset({AGENT_TOOL_RESULT, AGENT_MCP_TOOL_RESULT})
# A call of one of the application's own tools: the session waits for its result.
APPLICATION_CALLS = frozenset({AGENT_CUSTOM_TOOL_USE})
# What the application posted back: a custom tool's result, a (subagent) tool's result.
APPLICATION_RESULTS = frozenset({USER_CUSTOM_TOOL_RESULT, USER_TOOL_RESULT})
CALLS = AGENT_CALLS | APPLICATION_CALLS
RESULTS = AGENT_RESULTS | APPLICATION_RESULTS
# Each result's field naming the call it answers.
ANSWERS_FIELD = {AGENT_TOOL_RESULT: "tool_use_id", AGENT_MCP_TOOL_RESULT: "mcp_tool_use_id",
                 USER_CUSTOM_TOOL_RESULT: "custom_tool_use_id", USER_TOOL_RESULT: "tool_use_id"}
# What else the application sent, echoed on the stream (kept whole).
USER_EVENTS = frozenset({USER_MESSAGE, USER_INTERRUPT, USER_TOOL_CONFIRMATION,
                         USER_DEFINE_OUTCOME, SYSTEM_MESSAGE})
# A call's permission as the server evaluated it: ``ask`` holds the call for a confirmation.
PERMISSION_FIELD = "evaluated_permission"
ASK = "ask"
# A ``user.tool_confirmation``'s ``result`` (a ``deny_message`` may say why it was denied).
ALLOW, DENY = "allow", "deny"

# -- the ending ----------------------------------------------------------------------
# A session idle (or terminated) ends the turn; an idle that asks for action may be
# followed by the application's answer and more of the session, on the same stream.
TERMINALS = frozenset({SESSION_IDLE, SESSION_TERMINATED})
FAILURES = frozenset({SESSION_ERROR, ERROR})     # in-band failures after HTTP 200
RUNNING = frozenset({SESSION_RUNNING, SESSION_RESCHEDULED})
# An in-band error as the SSE layer sends it (lesson 5 injects it): ``event: error``.
ERROR_EXAMPLE = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
NAMES_EVENTS = True                       # each record has an ``event:`` line
# The SDK's reader skips ``ping`` on every Anthropic stream.
KEEPALIVES = frozenset({PING})
SERVER_RESULTS_APART = True               # a tool's result is an event of its own
# A ``session.error``'s ``retry_status.type``: ``retrying`` (the server retries on its
# own, the session goes on), ``exhausted`` or ``terminal`` (it gives up).
RETRYING = "retrying"

# -- the idle stop reasons -------------------------------------------------------------
END_TURN, REQUIRES_ACTION, RETRIES_EXHAUSTED, BUDGET_REACHED, REFUSAL = (
    "end_turn", "requires_action", "retries_exhausted", "budget_reached", "refusal")
FINISH_REASONS: dict[str, FinishReason] = {
    END_TURN: "stop",
    REQUIRES_ACTION: "pause",        # waits on the application (a confirmation, a result)
    RETRIES_EXHAUSTED: "error",
    BUDGET_REACHED: "length",        # the session's budget, not the model's room
    REFUSAL: "refusal",
}
STOP_REASONS = frozenset(FINISH_REASONS)
# Stop reasons that end the turn other than as their finish says (`lesson_lib.turn.ends`):
# a session waiting on the application is paused (the loop answers a custom tool call, but
# a turn that stops there is not done); a budget the vendor keeps.
# What ends a tool call (the tool card says it): a session sends each call whole, in one
# buffered event (``agent.tool_use``, ``agent.custom_tool_use``...), never in fragments.
CALL_ENDED_BY = "its own tool-use event (a session sends each call whole)"
TURN_ENDS: dict[str, tuple[str, str]] = {
    REQUIRES_ACTION: ("paused", "requires_action"),
    BUDGET_REACHED: ("budget_reached", "vendor_budget"),
}


def stop_reason_type(stop_reason: Any) -> str | None:
    """The type of an idle event's ``stop_reason`` object (None when it has none)."""
    kind = stop_reason.get("type") if isinstance(stop_reason, dict) else None
    return kind if isinstance(kind, str) else None


def finish_reason(raw: Any) -> FinishReason | None:
    """An idle ``stop_reason`` (its type, or the object) in the unified vocabulary: None
    for none yet, ``other`` for a reason this module does not know."""
    if isinstance(raw, dict):
        raw = stop_reason_type(raw) or "?"
    return unified(FINISH_REASONS, raw)


def usage_counts(usage: Any) -> dict[str, int]:
    """A model request's ``model_usage`` (or their sum) in the unified names: input counts
    cache reads and writes, which it reports apart, as on the Messages wire."""
    read, write = count(usage, "cache_read_input_tokens"), count(usage, "cache_creation_input_tokens")
    return {"input": count(usage, "input_tokens") + read + write,
            "output": count(usage, "output_tokens"), "cache_read": read, "cache_write": write,
            "reasoning": 0}


# -- errors --------------------------------------------------------------------------
RETRY = RetryRule(
    retryable=frozenset({"overloaded_error", "api_error", "rate_limit_error", "timeout_error",
                         "model_overloaded_error", "model_rate_limited_error",
                         "model_request_failed_error", "mcp_connection_failed_error",
                         "credential_host_unreachable_error", "unknown_error"}),
    final=frozenset({"invalid_request_error", "authentication_error", "billing_error",
                     "permission_error", "not_found_error", "mcp_authentication_failed_error",
                     "tool_use_limit_reached_error", "compaction_limit_reached_error",
                     "repository_authentication_error", "repository_forbidden_error",
                     "repository_not_found_error", "repository_checkout_error",
                     "repository_clone_error"}),
    by="type")
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error a ``session.error`` or ``error`` event reports (``{"error": {"type",
    "message"}}``), else None."""
    if event_type not in FAILURES or not isinstance(payload, dict):
        return None
    return read_error_object(payload.get("error"), "error") or WireError(None, None, None,
                                                                           "error")


def terminal_reached(events: Iterable[Any]) -> bool:
    """Whether the stream ended the turn: its last status (each event counted once, by id)
    is an idle or an end, which no running status followed."""
    seen: set[str] = set()
    last = None
    for event in events:
        event_id = event.payload.get("id") if isinstance(event.payload, dict) else None
        if isinstance(event_id, str):
            if event_id in seen:
                continue
            seen.add(event_id)
        if event.type in TERMINALS or event.type in RUNNING:
            last = event.type
    return last in TERMINALS


def gives_up(payload: Any) -> bool:
    """Whether a ``session.error`` says the server gave up (``retry_status`` other than
    ``retrying``); an ``error`` event always ends the stream."""
    if not isinstance(payload, dict) or payload.get("type") != SESSION_ERROR:
        return True
    error = payload.get("error")
    status = error.get("retry_status") if isinstance(error, dict) else None
    return not (isinstance(status, dict) and status.get("type") == RETRYING)


SHEET = Sheet(
    wire=WIRE,
    events=(
        (USER_MESSAGE, "what the application sent, echoed (user.* events)"),
        (SESSION_RUNNING, "the session runs"),
        (SPAN_MODEL_REQUEST_START, "a model request begins"),
        (EVENT_START, "a preview opens: event {type, id} (opt-in, event_deltas)"),
        (EVENT_DELTA, "a preview's fragment: event_id, delta {index, content}"),
        (AGENT_MESSAGE, "the canonical message, same id: replaces its preview"),
        (AGENT_TOOL_USE, "a call the agent runs (evaluated_permission ask: held for a "
                         "user.tool_confirmation); agent.custom_tool_use: the application's"),
        (SPAN_MODEL_REQUEST_END, "the request's model_usage; closes a preview that got no "
                                 "canonical event"),
        (SESSION_IDLE, "the end of the turn: stop_reason end_turn, requires_action "
                       "{event_ids}, retries_exhausted, budget_reached, refusal"),
    ),
    addressing=(("id", "every event's own id: a repeat is a duplicate delivery"),
                ("event_id", "a delta's previewed event"),
                ("tool_use_id / custom_tool_use_id", "the call a result or confirmation "
                                                     "answers")),
    tool_arguments="whole: agent.tool_use / agent.custom_tool_use carry `input` as an object",
    terminal=f"{SESSION_IDLE} (or {SESSION_TERMINATED}) that no {SESSION_RUNNING} follows",
    in_band_error='session.error {"error": {"type", "message", "retry_status"}} (retrying: '
                  "the session goes on); an SSE `error` event ends the stream",
    also=((AGENT_THINKING, "reasoning as a progress signal: no text"),
          (SESSION_USAGE, "the session's cumulative usage and its budget")),
    finish="idle `stop_reason.type`: " + finish_words(FINISH_REASONS),
    error_body='HTTP 4xx/5xx with {"type": "error", "error": {"type", "message"}}',
)


# -- over HTTP (the registry's entry) -------------------------------------------------


def error_body(status: int, message: str) -> dict[str, Any]:
    """The JSON error the API sends for a request that failed with `status` (the Messages
    API's shape)."""
    return _messages_error_body(status, message)


ENTRY = Entry(wire=WIRE, title="Anthropic Managed Agents sessions", framing="sse",
              content_type=SSE_CONTENT_TYPE, suffix=".sse", route=PATH, path=PATH,
              conversation=("session_id", "events"), error_body=error_body,
              streams_by_path=PATH_STREAMS, method="GET",
              accumulator="lesson_lib.accumulate.managed_agents:ManagedAgentsAccumulator",
              adapter="lesson_lib.turn.adapters.managed_agents:ManagedAgentsAdapter",
              next_request="lesson_lib.turn.next_request:for_session",
              sdk=SDKRoute("anthropic", "lesson_lib.turn.adapters.sdk:SessionSDK",
                           replay="lesson_lib.capture.replay:replay_session",
                           request="lesson_lib.capture.replay:session_kwargs",
                           model="claude-sonnet-4-6", **sdk_clients.ANTHROPIC))


def sdk_shows(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    """The (SDK union, member) pairs an event shows (`sdk_unions`): its event type, an idle
    session's stop reason."""
    yield "sessions.events", kind
    if kind == SESSION_IDLE:
        yield "sessions.stop_reasons", stop_reason_type(payload.get("stop_reason"))
