"""The OpenAI Agents session event stream (``GET /v1/agents/sessions/{session_id}/events``,
beta ``agents=v1``): its facts, as data and small pure functions.

Lesson 7: when the vendor runs the agent loop. The stream is a session's life as
it happens, each event naming itself in ``type`` (and in its ``event:`` line)
and carrying its own ``event_id``: ``agent.session.*`` the session's status (a
snapshot of the whole session rides on each), ``agent.session.environment.*``
and ``agent.session.subagent.*`` what runs beside it, and
``agent.session.turn.*`` one turn of the agent: its items (``item.added`` /
``item.done``: messages, reasoning, function calls and their outputs, the
server's own tools), and inside a message or a reasoning item the deltas the
Responses wire has (``output_text.delta``, ``reasoning_summary_text.delta``),
addressed by ``item_id`` and ``content_index`` / ``summary_index``.

Delivery is **at least once**: the same event (same ``event_id``) may come
again, and the SDK's stream helper drops any whose id is among the last
`RECENT_EVENT_LIMIT` ids it accepted. An event without an id cannot be told
from a new one, so it is never dropped by guessing.

The root turn (the first ``turn.created`` of no subagent) ends with
``turn.completed``, ``turn.failed`` or ``turn.cancelled``; the session then goes
``agent.session.idle``. It may stop before that: ``requires_action`` (calls of
the application's own functions to run, approvals to give: the session waits),
``budget_reached`` (its spending limit), ``failed``. The SDK's helper stops at
``failed``, and at an idle (or a budget) after the root turn ended (`helper_ends`);
the course's reader also ends a step where the session waits on the application
or on its budget (`ends_step`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
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
    openai_error_body,
    read_error_object,
    unified,
)
from .common import retryable_status as retryable_status  # the HTTP rule, on every wire
from .entry import SSE_CONTENT_TYPE, Entry, SDKRoute

WIRE = "openai-agent-sessions"
# Where the provider listens (the SDK's ``beta.agents.sessions.events.stream``): a GET whose
# path names the session; the path itself asks for the stream.
PATH = "/v1/agents/sessions/{session_id}/events"
PATH_STREAMS = True
BETA = "agents=v1"                        # the ``OpenAI-Beta`` header the SDK sends

# -- the event vocabulary (openai 3.63's ``AgentSessionEvent``; a test keeps this set
#    equal to the SDK's union) ------------------------------------------------------------
SESSION_CREATED = "agent.session.created"
SESSION_IN_PROGRESS = "agent.session.in_progress"
SESSION_IDLE = "agent.session.idle"
SESSION_REQUIRES_ACTION = "agent.session.requires_action"
SESSION_BUDGET_REACHED = "agent.session.budget_reached"   # in 3.63's union, not 3.57's
SESSION_FAILED = "agent.session.failed"
ERROR = "error"                           # an error event, yielded as a value
ENVIRONMENT_EVENTS = frozenset({
    "agent.session.environment.pending", "agent.session.environment.ready",
    "agent.session.environment.connected", "agent.session.environment.disconnected",
    "agent.session.environment.suspended", "agent.session.environment.expired",
    "agent.session.environment.reset"})
ENVIRONMENT_FAILED = "agent.session.environment.failed"
SUBAGENT_EVENTS = frozenset({"agent.session.subagent.created",
                             "agent.session.subagent.active",
                             "agent.session.subagent.closed"})
TURN_CREATED = "agent.session.turn.created"
TURN_IN_PROGRESS = "agent.session.turn.in_progress"
TURN_COMPLETED = "agent.session.turn.completed"
TURN_FAILED = "agent.session.turn.failed"
TURN_CANCELLED = "agent.session.turn.cancelled"
ITEM_ADDED = "agent.session.turn.item.added"
ITEM_DONE = "agent.session.turn.item.done"
CONTENT_PART_ADDED = "agent.session.turn.content_part.added"
CONTENT_PART_DONE = "agent.session.turn.content_part.done"
OUTPUT_TEXT_DELTA = "agent.session.turn.output_text.delta"
OUTPUT_TEXT_DONE = "agent.session.turn.output_text.done"
SUMMARY_PART_ADDED = "agent.session.turn.reasoning_summary_part.added"
SUMMARY_PART_DONE = "agent.session.turn.reasoning_summary_part.done"
SUMMARY_TEXT_DELTA = "agent.session.turn.reasoning_summary_text.delta"
SUMMARY_TEXT_DONE = "agent.session.turn.reasoning_summary_text.done"
COMMAND_OUTPUT_DELTA = "agent.output.command_execution_output.delta"
SESSION_EVENTS = frozenset({SESSION_CREATED, SESSION_IN_PROGRESS, SESSION_IDLE,
                            SESSION_REQUIRES_ACTION, SESSION_BUDGET_REACHED, SESSION_FAILED})
TURN_ENDED = frozenset({TURN_COMPLETED, TURN_FAILED, TURN_CANCELLED})
TURN_EVENTS = frozenset({TURN_CREATED, TURN_IN_PROGRESS}) | TURN_ENDED
DELTA_TYPES = frozenset({OUTPUT_TEXT_DELTA, SUMMARY_TEXT_DELTA, COMMAND_OUTPUT_DELTA})
EVENT_TYPES = (SESSION_EVENTS | ENVIRONMENT_EVENTS | SUBAGENT_EVENTS | TURN_EVENTS
               | DELTA_TYPES | frozenset({
                   ERROR, ENVIRONMENT_FAILED, ITEM_ADDED, ITEM_DONE, CONTENT_PART_ADDED,
                   CONTENT_PART_DONE, OUTPUT_TEXT_DONE, SUMMARY_PART_ADDED,
                   SUMMARY_PART_DONE, SUMMARY_TEXT_DONE}))

# -- items (``item.type``) ----------------------------------------------------------------
MESSAGE_ITEM = "message"                  # role ``assistant`` (the agent), ``user`` (echoed)
REASONING_ITEM = "reasoning"
FUNCTION_CALL_ITEM = "function_call"      # a function the application runs
FUNCTION_CALL_OUTPUT_ITEM = "function_call_output"   # its output, as posted back
OUTPUT_TEXT_PART = "output_text"
SUMMARY_TEXT_PART = "summary_text"
ASSISTANT = "assistant"
COMMENTARY = "commentary"                 # a message's ``phase``: not the final answer
COMPLETED = "completed"                   # an item's (and a turn's) status
# Items the agent's server runs itself (each item holds its call and its outcome).
SERVER_ITEMS = frozenset({"mcp_call", "web_search_call", "command_execution",
                          "computer_use_call", "create_subagent_call",
                          "send_subagent_input_call", "resume_subagent_call",
                          "wait_for_subagents_call", "interrupt_subagent_call",
                          "close_subagent_call"})
# Items that are neither: messages between agents, a browser's approval request and answer.
OTHER_ITEMS = frozenset({"agent_message", "computer_use_approval_request",
                         "computer_use_approval_request_result"})
ITEM_TYPES = (frozenset({MESSAGE_ITEM, REASONING_ITEM, FUNCTION_CALL_ITEM,
                         FUNCTION_CALL_OUTPUT_ITEM}) | SERVER_ITEMS | OTHER_ITEMS)
# What ends a function call (the tool card says it): the item arrives whole.
CALL_ENDED_BY = "its item.added (a session sends each function call whole)"
# What the application posts back (``sessions.events.create``), one event per call.
INPUT_TOOL_RESULT = "agent.session.input.tool_result"
# A required action (``session.required_actions[].type``) the application's loop answers
# by running its function; the others (an MCP or computer-use approval, an environment to
# connect) wait on a person or on the environment.
FUNCTION_CALL_ACTION = "function_call"

# -- delivery --------------------------------------------------------------------------
ID_FIELD = "event_id"
# The SDK's window of recent ids (``_RECENT_EVENT_LIMIT`` in ``lib/streaming/agents``): an
# event whose id is among the last this many accepted is dropped; an older id is new again.
RECENT_EVENT_LIMIT = 1024

# -- the ending ------------------------------------------------------------------------
# The session statuses (``session.status``) and what a root turn ends as (``turn.status``).
IDLE, IN_PROGRESS, REQUIRES_ACTION, FAILED, BUDGET_REACHED = (
    "idle", "in_progress", "requires_action", "failed", "budget_reached")
CANCELLED = "cancelled"
TURN_DONE_STATUSES = frozenset({COMPLETED, FAILED, CANCELLED})    # a turn that ended
# Events that may end a step (`ends_step` says when they do).
TERMINALS = frozenset({SESSION_IDLE, SESSION_REQUIRES_ACTION, SESSION_BUDGET_REACHED,
                       SESSION_FAILED})
FAILURES = frozenset({ERROR, SESSION_FAILED, TURN_FAILED})     # in-band failures after 200
RUNNING = frozenset({SESSION_IN_PROGRESS})
ERROR_EXAMPLE = {"type": "error", "event_id": "evt_injected", "session_id": "sess_injected",
                 "error": {"type": "server_error", "code": "server_error",
                           "message": "The server had an error while processing your "
                                      "request.", "param": None}}
NAMES_EVENTS = True                       # each record has an ``event:`` line
KEEPALIVES: frozenset[str] = frozenset()  # no event only keeps the connection open
SERVER_RESULTS_APART = False              # a server item holds its call and its outcome

# The step's raw finish: the root turn's status when the session went idle after it, else
# the session's status where the stream stopped.
FINISH_REASONS: dict[str, FinishReason] = {
    COMPLETED: "stop",
    REQUIRES_ACTION: "pause",        # waits on the application (its function, an approval)
    BUDGET_REACHED: "length",        # the session's spending limit, not the model's room
    FAILED: "error",
    CANCELLED: "other",              # the vendor cancelled the turn (`TURN_ENDS`)
}
FINISHES = frozenset(FINISH_REASONS)
# Raw finishes that end the turn other than as their finish says (`lesson_lib.turn.ends`).
TURN_ENDS: dict[str, tuple[str, str]] = {
    REQUIRES_ACTION: ("paused", "requires_action"),
    BUDGET_REACHED: ("budget_reached", "vendor_budget"),
    CANCELLED: ("cancelled", "vendor"),
}


def finish_reason(raw: Any) -> FinishReason | None:
    """A step's raw finish (see `FINISH_REASONS`) in the unified vocabulary: None for none
    yet, ``other`` for a status this module does not know."""
    return unified(FINISH_REASONS, raw)


def is_root_turn(turn: Any) -> bool:
    """Whether a turn object belongs to the session's own agent (no ``subagent_id``)."""
    return isinstance(turn, dict) and turn.get("subagent_id") is None


def session_id_of(payload: Any) -> str | None:
    """The id of the session a session event's snapshot describes."""
    session = payload.get("session") if isinstance(payload, dict) else None
    found = session.get("id") if isinstance(session, dict) else None
    return found if isinstance(found, str) and found else None


def helper_ends(event_type: str | None, *, turn_ended: bool, turn_started: bool,
                same_session: bool = True) -> bool:
    """Whether the SDK's stream helper stops at this event (``_TurnState.terminal``):
    ``failed`` always; ``idle`` once the root turn ended (an idle before it is the session
    at rest); ``budget_reached`` of this session before any root turn began or after it
    ended. It reads on past ``requires_action`` (running the functions it has handlers
    for) and past a budget reached mid-turn (the session waits for a higher budget)."""
    if event_type == SESSION_FAILED:
        return True
    if event_type == SESSION_IDLE:
        return turn_ended
    if event_type == SESSION_BUDGET_REACHED:
        return same_session and (not turn_started or turn_ended)
    return False


def ends_step(event_type: str | None, *, turn_ended: bool, same_session: bool = True) -> bool:
    """Whether an event ends the course's step: where the helper stops, and also where the
    session waits on someone (``requires_action``: the application's functions, an
    approval) or on its budget (``budget_reached`` at any point: nothing comes until it is
    raised)."""
    if event_type == SESSION_REQUIRES_ACTION:
        return True
    if event_type == SESSION_BUDGET_REACHED:
        return same_session
    return helper_ends(event_type, turn_ended=turn_ended, turn_started=True)


class RecentIds:
    """The ids of the last `RECENT_EVENT_LIMIT` events accepted: the SDK's window."""

    __slots__ = ("ids", "order")

    def __init__(self) -> None:
        self.ids: set[str] = set()
        self.order: deque[str] = deque()

    def first_time(self, event_id: Any) -> bool:
        """Whether an event is new: it has no id (never dropped by guessing), or its id is
        not in the window; a new id enters the window, pushing out the oldest."""
        if not isinstance(event_id, str):
            return True
        if event_id in self.ids:
            return False
        if len(self.order) == RECENT_EVENT_LIMIT:
            self.ids.discard(self.order.popleft())
        self.order.append(event_id)
        self.ids.add(event_id)
        return True


def terminal_reached(events: Iterable[Any]) -> bool:
    """Whether the stream ended a step (`ends_step`), each event counted once (by id, in the
    window), with no ``in_progress`` after that end (the session went on)."""
    recent = RecentIds()
    turn_id, ended, last, session = None, False, None, None
    for event in events:
        payload = event.payload if isinstance(event.payload, dict) else None
        if payload is None or not recent.first_time(payload.get(ID_FIELD)):
            continue
        kind, snapshot = payload.get("type"), session_id_of(payload)
        session = session or snapshot
        if kind in TURN_EVENTS and is_root_turn(payload.get("turn")) and turn_id is None:
            turn_id = payload.get("turn_id")     # (read on from mid-turn: the first seen)
        if kind in TURN_ENDED and turn_id is not None and payload.get("turn_id") == turn_id:
            ended = True
        if kind in RUNNING:
            last = None
        elif ends_step(kind, turn_ended=ended, same_session=snapshot == session):
            last = kind
    return last is not None


def gives_up(payload: Any) -> bool:
    """Whether a failure event fails the turn: a subagent's failed turn does not (the
    session goes on); every other does."""
    if isinstance(payload, dict) and payload.get("type") == TURN_FAILED:
        return is_root_turn(payload.get("turn"))
    return True


def usage_counts(usage: Any) -> dict[str, int]:
    """A ``TokenUsage`` in the unified names (the Responses wire's shape)."""
    return {"input": count(usage, "input_tokens"), "output": count(usage, "output_tokens"),
            "cache_read": count(usage, "input_tokens_details", "cached_tokens"),
            "cache_write": 0,
            "reasoning": count(usage, "output_tokens_details", "reasoning_tokens")}


# -- errors ----------------------------------------------------------------------------
# OpenAI's codes, read by ``code``, with a failed turn's own (``turn.error.code``); a
# failed session says only why, in words: its error is named `SESSION_FAILED_ERROR`, final.
SESSION_FAILED_ERROR = "session_failed"
RETRY = RetryRule(OPENAI_RETRYABLE_ERRORS | {"server_overloaded", "internal_error",
                                             "connection_failed", "request_timeout",
                                             "flex_unavailable"},
                  OPENAI_FINAL_ERRORS | {"session_budget_exceeded", "usage_limit_exceeded",
                                         "billing_not_active", "credit_balance_exhausted",
                                         "cyber_policy", "misalignment_policy_violation",
                                         "authentication_error", "invalid_request",
                                         "resource_not_found", "max_output_tokens",
                                         SESSION_FAILED_ERROR},
                  by="code")
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error an ``error`` event (``error: {type, code, message}``), a failed turn
    (``turn.error: {code, message}``) or a failed session (``session.error``, a message)
    reports, else None."""
    if event_type not in FAILURES or not isinstance(payload, dict):
        return None
    if event_type == TURN_FAILED:
        turn = payload.get("turn")
        found = read_error_object(turn.get("error") if isinstance(turn, dict) else None,
                                  "error")
        return found or WireError(None, None, None, "error")
    if event_type == SESSION_FAILED:
        session = payload.get("session")
        said = session.get("error") if isinstance(session, dict) else None
        return WireError(SESSION_FAILED_ERROR, None,
                         said if isinstance(said, str) and said else "the session failed",
                         "error")
    return read_error_object(payload.get("error"), "error") or WireError(None, None, None,
                                                                           "error")


SHEET = Sheet(
    wire=WIRE,
    events=(
        (SESSION_IN_PROGRESS, "the session works (every agent.session.* event carries a "
                              "snapshot of the session)"),
        (TURN_CREATED, "a turn begins; the root turn has no subagent_id"),
        (ITEM_ADDED, "an item begins: message, reasoning, function_call (whole), "
                     "function_call_output, a server tool's item"),
        (OUTPUT_TEXT_DELTA, "text of a message: item_id, content_index, delta"),
        (ITEM_DONE, "the item whole: its text as the server states it"),
        (SESSION_REQUIRES_ACTION, "the session waits: session.required_actions (a "
                                  "function_call to run, an approval)"),
        (TURN_COMPLETED, "the root turn ends, with its usage (or turn.failed, "
                         "turn.cancelled)"),
        (SESSION_IDLE, "the end of the stream, once the root turn ended"),
    ),
    addressing=(("event_id", "every event's own id: one seen among the last "
                             f"{RECENT_EVENT_LIMIT} is a duplicate delivery"),
                ("item_id + content_index / summary_index", "a delta's text"),
                ("call_id", "the function call an output answers")),
    tool_arguments="whole: a function_call item carries `arguments` as an object",
    terminal=f"{SESSION_IDLE} after the root turn ended; {SESSION_REQUIRES_ACTION}, "
             f"{SESSION_BUDGET_REACHED}, {SESSION_FAILED}",
    in_band_error='error {"error": {"type", "code", "message"}} (a value: the stream goes '
                  "on); turn.failed {turn.error}; agent.session.failed",
    also=((SUMMARY_TEXT_DELTA, "a reasoning summary's text: item_id, summary_index"),
          (SESSION_BUDGET_REACHED, "the session's spending limit reached (vendor budget)"),
          (TURN_CANCELLED, "the vendor cancelled the turn")),
    finish="root turn status at idle, else session status: " + finish_words(FINISH_REASONS),
    error_body='HTTP 4xx/5xx with {"error": {"message", "type", "param", "code"}}',
)


# -- over HTTP (the registry's entry) -------------------------------------------------
ENTRY = Entry(wire=WIRE, title="OpenAI Agents sessions", framing="sse",
              content_type=SSE_CONTENT_TYPE, suffix=".sse", route=PATH, path=PATH,
              conversation=("session_id", "events"), error_body=openai_error_body,
              streams_by_path=PATH_STREAMS, method="GET",
              accumulator="lesson_lib.accumulate.openai_sessions:OpenAISessionsAccumulator",
              adapter="lesson_lib.turn.adapters.openai_sessions:OpenAISessionsAdapter",
              next_request="lesson_lib.turn.next_request:for_openai_session",
              sdk=SDKRoute("openai", "lesson_lib.turn.adapters.sdk:OpenAISessionSDK",
                           replay="lesson_lib.capture.replay:replay_openai_session",
                           request="lesson_lib.capture.replay:openai_session_kwargs",
                           model="gpt-5.5", **sdk_clients.OPENAI))


def sdk_shows(payload: dict, kind: str | None) -> Iterable[tuple[str, Any]]:
    """The (SDK union, member) pairs an event shows (`sdk_unions`): its event type."""
    yield "agent_sessions.events", kind
