"""The Responses wire's event vocabulary: which events exist, and what each one addresses.

The accumulator dispatches on these tables; an event's payload that lacks
what its type promises raises `Malformed`, which the accumulator turns into
a ``malformed_event`` diagnostic and skips.
"""

from __future__ import annotations

from typing import Any

from ...wires import responses

LIFECYCLE = (responses.CREATED, responses.QUEUED, responses.IN_PROGRESS)

# The text of a part or a summary part, streamed (``*.delta``) or stated whole (``*.done``):
# event type -> (the part's type, the item type that holds it, the done event's field or
# None for a delta).
PART_TEXTS = {
    responses.TEXT_DELTA: ("output_text", "message", None),
    responses.REFUSAL_DELTA: ("refusal", "message", None),
    responses.REASONING_TEXT_DELTA: ("reasoning_text", "reasoning", None),
    responses.REASONING_SUMMARY_TEXT_DELTA: ("summary_text", "reasoning", None),
    responses.OUTPUT_TEXT_DONE: ("output_text", "message", "text"),
    responses.REFUSAL_DONE: ("refusal", "message", "refusal"),
    responses.REASONING_TEXT_DONE: ("reasoning_text", "reasoning", "text"),
    responses.REASONING_SUMMARY_TEXT_DONE: ("summary_text", "reasoning", "text"),
}
# One string field of an item, streamed or stated whole: event type -> (item type, path in
# the item, the done event's field or None for a delta).
FIELD_TEXTS = {
    responses.ARGUMENTS_DELTA: ("function_call", ("arguments",), None),
    responses.MCP_CALL_ARGUMENTS_DELTA: ("mcp_call", ("arguments",), None),
    responses.CUSTOM_TOOL_CALL_INPUT_DELTA: ("custom_tool_call", ("input",), None),
    responses.CODE_INTERPRETER_CALL_CODE_DELTA: ("code_interpreter_call", ("code",), None),
    "response.apply_patch_call_operation_diff.delta": ("apply_patch_call", ("operation", "diff"),
                                                       None),
    responses.FUNCTION_CALL_ARGUMENTS_DONE: ("function_call", ("arguments",), "arguments"),
    responses.MCP_CALL_ARGUMENTS_DONE: ("mcp_call", ("arguments",), "arguments"),
    responses.CUSTOM_TOOL_CALL_INPUT_DONE: ("custom_tool_call", ("input",), "input"),
    responses.CODE_INTERPRETER_CALL_CODE_DONE: ("code_interpreter_call", ("code",), "code"),
    "response.apply_patch_call_operation_diff.done": ("apply_patch_call", ("operation", "diff"),
                                                      "diff"),
}
# Items that are tool calls (lesson 3), and the string field their arguments stream into.
TOOL_ITEMS = {"function_call": ("arguments",), "custom_tool_call": ("input",),
              "mcp_call": ("arguments",)}
# Progress of server-side tools: event type -> (item type, the item's status now, or None).
STATUS_EVENTS = {
    f"response.{kind}.{step}": (kind, step)
    for kind, steps in {
        "web_search_call": ("in_progress", "searching", "completed"),
        "file_search_call": ("in_progress", "searching", "completed"),
        "code_interpreter_call": ("in_progress", "interpreting", "completed"),
        "image_generation_call": ("in_progress", "generating", "completed"),
        "mcp_call": ("in_progress", "completed", "failed"),
    }.items()
    for step in steps
}
STATUS_EVENTS.update({
    responses.MCP_LIST_TOOLS_IN_PROGRESS: ("mcp_list_tools", None),
    responses.MCP_LIST_TOOLS_COMPLETED: ("mcp_list_tools", None),
    responses.MCP_LIST_TOOLS_FAILED: ("mcp_list_tools", None),
    responses.COMPACTION_COMPACTING: ("compaction", None),
})
# Spoken output: events that address no output item and add nothing to the `Response`.
# Event type -> (what it streams: the sound, base64, or its transcript; whether a delta).
AUDIO_EVENTS = {
    responses.AUDIO_DELTA: ("data", True),
    responses.AUDIO_DONE: ("data", False),
    responses.AUDIO_TRANSCRIPT_DELTA: ("transcript", True),
    responses.AUDIO_TRANSCRIPT_DONE: ("transcript", False),
}
# The spoken output's slot: one per response, after every output item's.
AUDIO = ("audio",)


class Malformed(Exception):
    """A known event whose payload lacks what its type promises."""


def is_index(x: Any) -> bool:
    return type(x) is int and x >= 0


def index_of(p: dict, key: str) -> int:
    """The payload's `key` (``content_index``, ``summary_index``...), which must be an index."""
    n = p.get(key)
    if not is_index(n):
        raise Malformed(f"{key} {n!r} is not an index")
    return n


def string_delta(p: dict) -> str:
    """The payload's ``delta``, which must be a string."""
    delta = p.get("delta")
    if type(delta) is not str:
        raise Malformed("delta is not a string")
    return delta
