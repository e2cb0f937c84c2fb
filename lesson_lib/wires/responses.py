"""The OpenAI Responses wire: what is true of it, as data and small pure functions.

Output items sit in ``output`` addressed by ``output_index`` (and their
``item_id``); parts inside a message by ``content_index``, summary parts
inside a reasoning item by ``summary_index``; every event has a
``sequence_number``. ``response.completed`` or ``response.incomplete`` ends
the stream properly; an ``error`` event or ``response.failed`` is an in-band
failure. There is no stop reason on this wire: `finish_reason` derives one
from the final response's ``status``, ``incomplete_details.reason`` and
output items.
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
)
from .common import retryable_status as retryable_status  # the HTTP rule, on every wire
from .entry import SSE_CONTENT_TYPE, Entry, RecordRoute, SDKRoute
from .resume import Resume
from .wire_events import DONE

WIRE = "openai-responses"
# Where the provider listens, under its base URL (the SDK's own path); the body's
# ``stream: true`` asks for a stream.
PATH = "/v1/responses"
PATH_STREAMS = False

# -- the event vocabulary (the pinned openai SDK's ``ResponseStreamEvent`` union; tests
#    keep this set a superset of it) -------------------------------------------------
EVENT_TYPES = frozenset({
    "error",
    "response.queued", "response.created", "response.in_progress",
    "response.completed", "response.incomplete", "response.failed",
    "response.output_item.added", "response.output_item.done",
    "response.content_part.added", "response.content_part.done",
    "response.output_text.delta", "response.output_text.done",
    "response.output_text.annotation.added",
    "response.refusal.delta", "response.refusal.done",
    "response.function_call_arguments.delta", "response.function_call_arguments.done",
    "response.custom_tool_call_input.delta", "response.custom_tool_call_input.done",
    "response.reasoning_summary_part.added", "response.reasoning_summary_part.done",
    "response.reasoning_summary_text.delta", "response.reasoning_summary_text.done",
    "response.reasoning_text.delta", "response.reasoning_text.done",
    "response.audio.delta", "response.audio.done",
    "response.audio.transcript.delta", "response.audio.transcript.done",
    "response.web_search_call.in_progress", "response.web_search_call.searching",
    "response.web_search_call.completed",
    "response.file_search_call.in_progress", "response.file_search_call.searching",
    "response.file_search_call.completed",
    "response.code_interpreter_call.in_progress", "response.code_interpreter_call.interpreting",
    "response.code_interpreter_call.completed",
    "response.code_interpreter_call_code.delta", "response.code_interpreter_call_code.done",
    "response.image_generation_call.in_progress", "response.image_generation_call.generating",
    "response.image_generation_call.partial_image", "response.image_generation_call.completed",
    "response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed",
    "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done",
    "response.mcp_list_tools.in_progress", "response.mcp_list_tools.completed",
    "response.mcp_list_tools.failed",
    "response.shell_call_command.added", "response.shell_call_command.delta",
    "response.shell_call_command.done",
    "response.shell_call_output_content.delta", "response.shell_call_output_content.done",
    "response.compaction.compacting",
})
DELTA_TYPES = None    # the delta's kind is the middle of the event's name
# The fields that address an event's place in the response.
ADDRESS_FIELDS = ("output_index", "content_index", "summary_index")

# -- the ending ------------------------------------------------------------------------
TERMINALS = frozenset({"response.completed", "response.incomplete"})  # ended properly
FAILURES = frozenset({"error", "response.failed"})                   # in-band failure
# An in-band error as this wire sends it (lesson 5 injects it, numbered after the stream).
ERROR_EXAMPLE = {"type": "error",
                 "error": {"type": "server_error", "code": "server_error",
                           "message": "The server had an error while processing your request. "
                                      "Sorry about that!", "param": None}}
NAMES_EVENTS = True                        # each record has an ``event:`` line
KEEPALIVES: frozenset[str] = frozenset()   # no event only keeps the connection open
# Whether a server tool's result comes apart from its call: a server tool's call item holds its results.
SERVER_RESULTS_APART = False
# What may follow the terminal event and is passed through, not a fault: some servers
# (OpenRouter) end a Responses stream with Chat's ``data: [DONE]``.
AFTER_TERMINAL = frozenset({DONE})
# Every event that ends the response, with the status it leaves it in.
TERMINAL_STATUS = {"response.completed": "completed", "response.incomplete": "incomplete",
                   "response.failed": "failed"}
# Final statuses that end the turn other than as their finish says (`lesson_lib.turn.ends`):
# a response cancelled (background mode's cancel) was stopped by the vendor, never done.
TURN_ENDS: dict[str, tuple[str, str]] = {"cancelled": ("cancelled", "vendor")}

# -- the items -------------------------------------------------------------------------
# The item types of the pinned openai SDK's ``ResponseOutputItem`` union (tests keep
# this set a superset of it).
KNOWN_ITEMS = frozenset({
    "message", "reasoning", "function_call", "custom_tool_call", "web_search_call",
    "file_search_call", "code_interpreter_call", "image_generation_call", "mcp_call",
    "mcp_list_tools", "mcp_approval_request", "mcp_approval_response", "computer_call",
    "computer_call_output", "local_shell_call", "local_shell_call_output", "shell_call",
    "shell_call_output", "apply_patch_call", "apply_patch_call_output", "compaction",
    "function_call_output", "custom_tool_call_output", "tool_search_call",
    "tool_search_output", "program", "program_output", "additional_tools",
})
FUNCTION_CALL_ITEM = "function_call"
MCP_APPROVAL_REQUEST_ITEM = "mcp_approval_request"
# The items that answer a client's call in the next request's ``input``.
FUNCTION_CALL_OUTPUT_ITEM = "function_call_output"
APPLY_PATCH_CALL_OUTPUT_ITEM = "apply_patch_call_output"
MCP_APPROVAL_RESPONSE_ITEM = "mcp_approval_response"
# Items that ask the client to act, so the turn ends for tool calls: its own tools, a patch
# to apply (answered by ``apply_patch_call_output``), a local shell command, an MCP call that
# waits for the client's ``mcp_approval_response``; and a tool search the client runs
# (``execution: "client"``, `calls_the_client`).
CLIENT_CALL_ITEMS = frozenset({"function_call", "custom_tool_call", "apply_patch_call",
                               "local_shell_call", "mcp_approval_request"})
TOOL_SEARCH_CALL_ITEM = "tool_search_call"
REASONING_ITEM = "reasoning"
WEB_SEARCH_CALL_ITEM = "web_search_call"
FILE_SEARCH_CALL_ITEM = "file_search_call"
CODE_INTERPRETER_CALL_ITEM = "code_interpreter_call"
MESSAGE_ITEM = "message"
CUSTOM_TOOL_CALL_ITEM = "custom_tool_call"
MCP_CALL_ITEM = "mcp_call"
MCP_LIST_TOOLS_ITEM = "mcp_list_tools"
IMAGE_GENERATION_CALL_ITEM = "image_generation_call"
SHELL_CALL_ITEM = "shell_call"
SHELL_CALL_OUTPUT_ITEM = "shell_call_output"
APPLY_PATCH_CALL_ITEM = "apply_patch_call"
COMPACTION_ITEM = "compaction"
# The parts of a message (``content``) and of a reasoning item (``content``, ``summary``).
OUTPUT_TEXT_PART = "output_text"
REFUSAL_PART = "refusal"
REASONING_TEXT_PART = "reasoning_text"
SUMMARY_TEXT_PART = "summary_text"
TEXT_DELTA = "response.output_text.delta"                   # a message's text: ``delta``
ARGUMENTS_DELTA = "response.function_call_arguments.delta"  # a call's arguments: ``delta``
ITEM_ADDED = "response.output_item.added"
ITEM_DONE = "response.output_item.done"
COMPLETED = "response.completed"
# ... and every other event type another station matches on.
AUDIO_DELTA = "response.audio.delta"
AUDIO_DONE = "response.audio.done"
AUDIO_TRANSCRIPT_DELTA = "response.audio.transcript.delta"
AUDIO_TRANSCRIPT_DONE = "response.audio.transcript.done"
# An apply-patch call's diff, streamed (not in the pinned SDK's union, hence not in
# `EVENT_TYPES`).
APPLY_PATCH_DIFF_DELTA = "response.apply_patch_call_operation_diff.delta"
APPLY_PATCH_DIFF_DONE = "response.apply_patch_call_operation_diff.done"
CODE_INTERPRETER_CALL_CODE_DELTA = "response.code_interpreter_call_code.delta"
CODE_INTERPRETER_CALL_CODE_DONE = "response.code_interpreter_call_code.done"
COMPACTION_COMPACTING = "response.compaction.compacting"
CONTENT_PART_ADDED = "response.content_part.added"
CONTENT_PART_DONE = "response.content_part.done"
CREATED = "response.created"
CUSTOM_TOOL_CALL_INPUT_DELTA = "response.custom_tool_call_input.delta"
CUSTOM_TOOL_CALL_INPUT_DONE = "response.custom_tool_call_input.done"
FAILED = "response.failed"
FUNCTION_CALL_ARGUMENTS_DONE = "response.function_call_arguments.done"
IMAGE_GENERATION_CALL_PARTIAL_IMAGE = "response.image_generation_call.partial_image"
IN_PROGRESS = "response.in_progress"
MCP_CALL_ARGUMENTS_DELTA = "response.mcp_call_arguments.delta"
MCP_CALL_ARGUMENTS_DONE = "response.mcp_call_arguments.done"
MCP_LIST_TOOLS_COMPLETED = "response.mcp_list_tools.completed"
MCP_LIST_TOOLS_FAILED = "response.mcp_list_tools.failed"
MCP_LIST_TOOLS_IN_PROGRESS = "response.mcp_list_tools.in_progress"
OUTPUT_TEXT_ANNOTATION_ADDED = "response.output_text.annotation.added"
OUTPUT_TEXT_DONE = "response.output_text.done"
QUEUED = "response.queued"
REASONING_SUMMARY_PART_ADDED = "response.reasoning_summary_part.added"
REASONING_SUMMARY_PART_DONE = "response.reasoning_summary_part.done"
REASONING_SUMMARY_TEXT_DELTA = "response.reasoning_summary_text.delta"
REASONING_SUMMARY_TEXT_DONE = "response.reasoning_summary_text.done"
REASONING_TEXT_DELTA = "response.reasoning_text.delta"
REASONING_TEXT_DONE = "response.reasoning_text.done"
REFUSAL_DELTA = "response.refusal.delta"
REFUSAL_DONE = "response.refusal.done"
SHELL_CALL_COMMAND_ADDED = "response.shell_call_command.added"
SHELL_CALL_COMMAND_DELTA = "response.shell_call_command.delta"
SHELL_CALL_COMMAND_DONE = "response.shell_call_command.done"
SHELL_CALL_OUTPUT_CONTENT_DELTA = "response.shell_call_output_content.delta"
SHELL_CALL_OUTPUT_CONTENT_DONE = "response.shell_call_output_content.done"

# What makes a call final (the tool-call card's words, the event's name after ``response.``):
# each call item's arguments' ``.done``; a structured-output text's ``output_text.done``.
CALL_ENDED_BY: dict[str, str] = {
    kind: done.removeprefix("response.") for kind, done in (
        (FUNCTION_CALL_ITEM, FUNCTION_CALL_ARGUMENTS_DONE),
        (CUSTOM_TOOL_CALL_ITEM, CUSTOM_TOOL_CALL_INPUT_DONE),
        (MCP_CALL_ITEM, MCP_CALL_ARGUMENTS_DONE))}
STRUCTURED_OUTPUT_ENDED_BY = OUTPUT_TEXT_DONE.removeprefix("response.")

# -- finish ----------------------------------------------------------------------------
# ``incomplete_details.reason`` in the unified vocabulary.
INCOMPLETE_REASONS: dict[str, FinishReason] = {"max_output_tokens": "length",
                                         "content_filter": "content_filter"}


def finish_reason(response: Any) -> FinishReason | None:
    """Why a Responses response stopped, in the unified vocabulary (None while it runs).

    Reads the response object's ``status``, ``incomplete_details.reason`` and
    output items, then decides as `finish_from`.
    """
    if not isinstance(response, dict):
        return None
    details = response.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    items = [i for i in response.get("output") or [] if isinstance(i, dict)]
    called = any(calls_the_client(item.get("type"), item) for item in items)
    refused = any(isinstance(part, dict) and part.get("type") == "refusal"
                  for item in items if item.get("type") == "message"
                  for part in item.get("content") or [])
    return finish_from(response.get("status"), reason, called_tools=called, refused=refused)


def calls_the_client(item_type: Any, item: Any) -> bool:
    """Whether an output item of `item_type` (its whole object `item`, where known) asks the
    client to act (`CLIENT_CALL_ITEMS`, or a tool search the client runs)."""
    if item_type in CLIENT_CALL_ITEMS:
        return True
    return (item_type == TOOL_SEARCH_CALL_ITEM and isinstance(item, dict)
            and item.get("execution") == "client")


def finish_from(status: Any, incomplete_reason: Any = None, *, called_tools: bool = False,
                refused: bool = False) -> FinishReason | None:
    """The unified finish reason of a response in `status` (None while it runs).

    ``completed`` is ``tool_calls`` when an output item calls a client tool
    (`called_tools`), ``refusal`` when a message refused, else ``stop``;
    ``incomplete`` reads the ``incomplete_details.reason``; ``failed`` is
    ``error``; anything else final (``cancelled``) is ``other``.
    """
    if status in (None, "queued", "in_progress"):
        return None
    if status == "failed":
        return "error"
    if status == "incomplete":
        return (INCOMPLETE_REASONS.get(incomplete_reason, "other")
                if isinstance(incomplete_reason, str) else "other")
    if status != "completed":
        return "other"
    if called_tools:
        return "tool_calls"
    return "refusal" if refused else "stop"


def usage_counts(usage: Any) -> dict[str, int]:
    """A ``usage`` object's counts in the unified names (`USAGE_COUNTS`)."""
    return {"input": count(usage, "input_tokens"), "output": count(usage, "output_tokens"),
            "cache_read": count(usage, "input_tokens_details", "cached_tokens"),
            "cache_write": 0,
            "reasoning": count(usage, "output_tokens_details", "reasoning_tokens")}


# -- errors ----------------------------------------------------------------------------
# OpenAI's codes, read by ``code`` (else ``type``), and one of this wire's own: the
# response error code ``invalid_prompt``, which only the Responses schema lists.
# `retryable_error` (a name) and `retryable` (a `WireError`) are this rule's.
RETRY = RetryRule(OPENAI_RETRYABLE_ERRORS, OPENAI_FINAL_ERRORS | {"invalid_prompt"}, by="code")
RETRYABLE_ERRORS, FINAL_ERRORS = RETRY.retryable, RETRY.final
retryable_error, retryable = RETRY.error, RETRY.reported


def read_error(event_type: str | None, payload: Any) -> WireError | None:
    """The error an ``error`` event or ``response.failed`` reports, else None.

    Real streams nest it (``{"type": "error", "error": {...}}``), the
    schema has it flat (``{"type": "error", "code", "message"}``);
    ``response.failed`` carries it in ``response.error``.
    """
    if event_type not in FAILURES or not isinstance(payload, dict):
        return None
    if event_type == "response.failed":
        response = payload.get("response")
        found = read_error_object(response.get("error") if isinstance(response, dict) else None,
                                  "response.error")
        if found is not None:
            return found
    return (read_error_object(payload.get("error"), "error")
            or flat_error(payload))


SHEET = Sheet(
    wire=WIRE,
    events=(
        ("response.created", "the response, status in_progress"),
        ("response.in_progress", "the same, again"),
        ("response.output_item.added", "opens item `output_index` (a message, a function_call...)"),
        ("response.content_part.added", "opens part `content_index` of a message"),
        ("response.output_text.delta", "a text fragment for (item_id, content_index)"),
        ("response.function_call_arguments.delta", "an arguments fragment for item_id"),
        ("response.*.done", "the part, text or arguments stated whole"),
        ("response.output_item.done", "the item stated whole"),
        ("response.completed", "the whole response; or response.incomplete"),
    ),
    addressing=(("output_index", "the item's place in `output`"),
                ("item_id", "the item's id"),
                ("content_index", "the part inside a message"),
                ("summary_index", "the summary part inside a reasoning item"),
                ("sequence_number", "the event's place in the stream")),
    tool_arguments="response.function_call_arguments.delta `delta`, into the function_call "
                   "item `item_id`; whole in .done and in output_item.done",
    terminal="response.completed or response.incomplete; response.failed ends it with an "
             "error. No [DONE] on this wire",
    in_band_error="an `error` event (error nested, or code/message flat), or response.failed "
                  "with `response.error`",
    also=(("response.queued", "a background response waiting to start, before in_progress"),
          ("response.reasoning_summary_text.delta", "a reasoning item's summary, by "
                                                    "summary_index"),
          ("response.refusal.delta / .done", "a refusal part's text"),
          ("response.output_text.annotation.added", "a citation (url_citation, "
                                                    "file_citation) on the text"),
          ("mcp_approval_request", "an item asking the client to approve an MCP call: "
                                   "answered like a tool call")),
    finish="no finish field: the final `status`; completed → stop (tool_calls with a "
           "function_call item, refusal with a refusal part); incomplete by "
           "`incomplete_details.reason`: " + finish_words(INCOMPLETE_REASONS)
           + "; failed → error; cancelled → other",
    error_body='HTTP 4xx/5xx with {"error": {"message", "type", "param", "code"}}; 429 with retry-after and x-ratelimit-* headers',
)


# -- over HTTP (the registry's entry) ----------------------------------------------------
# A background response (``background: true``) is kept, and streamed again from any point:
# ``GET /v1/responses/{id}?stream=true&starting_after=N`` sends the events above N (the
# openai SDK's ``responses.retrieve(id, stream=True, starting_after=N)``).
SEQUENCE = "sequence_number"     # every event's place in the stream


def error_after(payload: dict[str, Any], events: Any) -> dict[str, Any]:
    """An in-band error after `events` (the entry's `error_after`): numbered one past the
    stream's last ``sequence_number``, as the server numbers its own error event."""
    numbers = [e.payload.get(SEQUENCE) for e in events if isinstance(e.payload, dict)]
    numbers = [n for n in numbers if type(n) is int]
    return {**payload, SEQUENCE: max(numbers) + 1} if numbers else payload


RESUME = Resume(point_field=SEQUENCE, numbered=True,
                id_paths=(("response", "id"),), route=f"{PATH}/{{id}}", path=f"{PATH}/{{id}}",
                after="starting_after", needs="background")
ENTRY = Entry(wire=WIRE, title="OpenAI Responses", framing="sse",
              content_type=SSE_CONTENT_TYPE, suffix=".sse", route=PATH, path=PATH,
              conversation=("instructions", "input"), error_body=openai_error_body,
              streams_by_path=PATH_STREAMS, resume=RESUME,
              accumulator="lesson_lib.accumulate.responses:ResponsesAccumulator",
              adapter="lesson_lib.turn.adapters.responses:ResponsesAdapter",
              next_request="lesson_lib.turn.next_request:for_responses",
              sdk=SDKRoute("openai", "lesson_lib.turn.adapters.sdk:ResponsesSDK",
                             replay="lesson_lib.capture.replay:replay_responses",
                             request="lesson_lib.capture.replay:responses_kwargs", model="gpt-4.1",
                             close="lesson_lib.breaks.sdk_close:RESPONSES",
                             **sdk_clients.OPENAI),
              record=RecordRoute(("OPENAI_API_KEY",), "gpt-4.1",
                                 "lesson_lib.capture.record:responses_request",
                                 "lesson_lib.capture.record:responses_create", base_path="/v1"),
              reference_folders=("openai-responses",),
              labels="lesson_lib.accumulate.labels:responses_label",
              slot_order="lesson_lib.accumulate.fold:responses_order",
              shows_duplicate="lesson_lib.breaks.visibility:responses_duplicate",
              shows_swap="lesson_lib.breaks.visibility:responses_swap",
              error_after=error_after,
              user_message="lesson_lib.breaks.recovery:input_user_message")
