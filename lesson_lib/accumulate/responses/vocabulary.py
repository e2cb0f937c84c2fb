"""The Responses wire's event vocabulary, as the accumulator reads it: which events exist,
what each one addresses, and the parts and item fields their text streams into.

The tables are written once per part type and per streamed field (its delta and
its done event side by side); the lookups the handlers use are derived from them.
An event's payload that lacks what its type promises raises `Malformed`, which the
accumulator turns into a ``malformed_event`` diagnostic and skips.
"""

from __future__ import annotations

from typing import Any

from ...wires import responses as r

LIFECYCLE = (r.CREATED, r.QUEUED, r.IN_PROGRESS)

# The parts of an item, by part type: (the item type that holds it, the key its text
# streams into, the turn's channel, its delta event, its done event).
PARTS = {
    r.OUTPUT_TEXT_PART: (r.MESSAGE_ITEM, "text", "text", r.TEXT_DELTA, r.OUTPUT_TEXT_DONE),
    r.REFUSAL_PART: (r.MESSAGE_ITEM, "refusal", "refusal", r.REFUSAL_DELTA, r.REFUSAL_DONE),
    r.REASONING_TEXT_PART: (r.REASONING_ITEM, "text", "reasoning", r.REASONING_TEXT_DELTA,
                            r.REASONING_TEXT_DONE),
    r.SUMMARY_TEXT_PART: (r.REASONING_ITEM, "text", "reasoning",
                          r.REASONING_SUMMARY_TEXT_DELTA, r.REASONING_SUMMARY_TEXT_DONE),
}
# The one string field an item of some types streams: (its path in the item, its delta
# event, its done event, which states it under the path's last key).
FIELDS = {
    r.FUNCTION_CALL_ITEM: (("arguments",), r.ARGUMENTS_DELTA, r.FUNCTION_CALL_ARGUMENTS_DONE),
    r.CUSTOM_TOOL_CALL_ITEM: (("input",), r.CUSTOM_TOOL_CALL_INPUT_DELTA,
                              r.CUSTOM_TOOL_CALL_INPUT_DONE),
    r.MCP_CALL_ITEM: (("arguments",), r.MCP_CALL_ARGUMENTS_DELTA, r.MCP_CALL_ARGUMENTS_DONE),
    r.CODE_INTERPRETER_CALL_ITEM: (("code",), r.CODE_INTERPRETER_CALL_CODE_DELTA,
                                   r.CODE_INTERPRETER_CALL_CODE_DONE),
    r.APPLY_PATCH_CALL_ITEM: (("operation", "diff"), r.APPLY_PATCH_DIFF_DELTA,
                              r.APPLY_PATCH_DIFF_DONE),
}

# Part type -> the key its text is in; the turn's channel; the part met through its
# deltas before its announcement starts as this.
PART_TEXT_KEY = {kind: key for kind, (_, key, *_) in PARTS.items()}
CHANNELS = {kind: channel for kind, (_, _, channel, *_) in PARTS.items()}
ASSUMED_PARTS = {kind: {"type": kind, **({"annotations": []} if kind == r.OUTPUT_TEXT_PART
                                         else {}), key: ""} for kind, key in PART_TEXT_KEY.items()}
# Event type -> (the part's type, the item type that holds it, the done event's field or
# None for a delta, whether the part is a summary part).
PART_TEXTS = {event: (kind, host, key if event == done else None, kind == r.SUMMARY_TEXT_PART)
              for kind, (host, key, _, delta, done) in PARTS.items() for event in (delta, done)}
# Item type -> the path of the string field its own deltas build; event type -> (item
# type, that path, the done event's field or None for a delta).
MAIN_FIELD = {kind: path for kind, (path, *_) in FIELDS.items()}
FIELD_TEXTS = {event: (kind, path, path[-1] if event == done else None)
               for kind, (path, delta, done) in FIELDS.items() for event in (delta, done)}
# Items that are tool calls (lesson 3), and the string field their arguments stream into.
TOOL_ITEMS = {kind: MAIN_FIELD[kind]
              for kind in (r.FUNCTION_CALL_ITEM, r.CUSTOM_TOOL_CALL_ITEM, r.MCP_CALL_ITEM)}
# Progress of server-side tools: event type -> (item type, the item's status now, or None).
STATUS_EVENTS = {
    f"response.{kind}.{step}": (kind, step)
    for kind, steps in {
        r.WEB_SEARCH_CALL_ITEM: ("in_progress", "searching", "completed"),
        r.FILE_SEARCH_CALL_ITEM: ("in_progress", "searching", "completed"),
        r.CODE_INTERPRETER_CALL_ITEM: ("in_progress", "interpreting", "completed"),
        r.IMAGE_GENERATION_CALL_ITEM: ("in_progress", "generating", "completed"),
        r.MCP_CALL_ITEM: ("in_progress", "completed", "failed"),
    }.items()
    for step in steps
}
STATUS_EVENTS.update(dict.fromkeys((r.MCP_LIST_TOOLS_IN_PROGRESS, r.MCP_LIST_TOOLS_COMPLETED,
                                    r.MCP_LIST_TOOLS_FAILED), (r.MCP_LIST_TOOLS_ITEM, None)))
STATUS_EVENTS[r.COMPACTION_COMPACTING] = (r.COMPACTION_ITEM, None)
# Spoken output: events that address no output item and add nothing to the `Response`.
# Event type -> (what it streams: the sound, base64, or its transcript; whether a delta).
AUDIO_EVENTS = {
    r.AUDIO_DELTA: ("data", True),
    r.AUDIO_DONE: ("data", False),
    r.AUDIO_TRANSCRIPT_DELTA: ("transcript", True),
    r.AUDIO_TRANSCRIPT_DONE: ("transcript", False),
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


def string_field(p: dict, key: str = "delta") -> str:
    """The payload's `key` (``delta``, ``text``, ``arguments``...), which must be a string."""
    text = p.get(key)
    if type(text) is not str:
        raise Malformed(f"{key} is not a string")
    return text
