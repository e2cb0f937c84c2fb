"""The Responses wire's event vocabulary: which events exist, and what each one addresses.

The accumulator dispatches on these tables; an event's payload that lacks
what its type promises raises `Malformed`, which the accumulator turns into
a ``malformed_event`` diagnostic and skips.
"""

from __future__ import annotations

from typing import Any

LIFECYCLE = ("response.created", "response.queued", "response.in_progress")

# Deltas into a part or a summary part: event type -> (the part's type, the item type that holds it).
PART_DELTAS = {
    "response.output_text.delta": ("output_text", "message"),
    "response.refusal.delta": ("refusal", "message"),
    "response.reasoning_text.delta": ("reasoning_text", "reasoning"),
    "response.reasoning_summary_text.delta": ("summary_text", "reasoning"),
}
# A part's text stated whole: event type -> (part type, item type, the event's field).
PART_DONES = {
    "response.output_text.done": ("output_text", "message", "text"),
    "response.refusal.done": ("refusal", "message", "refusal"),
    "response.reasoning_text.done": ("reasoning_text", "reasoning", "text"),
    "response.reasoning_summary_text.done": ("summary_text", "reasoning", "text"),
}
# Deltas into one string field of an item: event type -> (item type, path in the item).
FIELD_DELTAS = {
    "response.function_call_arguments.delta": ("function_call", ("arguments",)),
    "response.mcp_call_arguments.delta": ("mcp_call", ("arguments",)),
    "response.custom_tool_call_input.delta": ("custom_tool_call", ("input",)),
    "response.code_interpreter_call_code.delta": ("code_interpreter_call", ("code",)),
    "response.apply_patch_call_operation_diff.delta": ("apply_patch_call", ("operation", "diff")),
}
FIELD_DONES = {
    "response.function_call_arguments.done": ("function_call", ("arguments",), "arguments"),
    "response.mcp_call_arguments.done": ("mcp_call", ("arguments",), "arguments"),
    "response.custom_tool_call_input.done": ("custom_tool_call", ("input",), "input"),
    "response.code_interpreter_call_code.done": ("code_interpreter_call", ("code",), "code"),
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
    "response.mcp_list_tools.in_progress": ("mcp_list_tools", None),
    "response.mcp_list_tools.completed": ("mcp_list_tools", None),
    "response.mcp_list_tools.failed": ("mcp_list_tools", None),
    "response.compaction.compacting": ("compaction", None),
})
# Events that address no output item and add nothing to the `Response`.
UNADDRESSED = ("response.audio.delta", "response.audio.done",
               "response.audio.transcript.delta", "response.audio.transcript.done")


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
