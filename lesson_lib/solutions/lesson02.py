"""Solutions to lesson 2's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

import json

from lesson_lib.accumulate.naive_handler import Executed, StreamEvent


def accumulate_content(payloads: list[dict]) -> list[dict]:
    """Anthropic stream payloads -> the message's ``content`` list (text and tool_use blocks).

    Each block lives in the slot its ``index`` names: the start event gives
    the block, deltas append to it, the stop ends it. Text and argument
    fragments are collected in lists and joined once (linear time); a tool's
    arguments are parsed at its stop, and empty arguments mean ``{}``.
    """
    blocks: dict[int, dict] = {}
    fragments: dict[int, list[str]] = {}
    for payload in payloads:
        kind = payload.get("type")
        if kind == "content_block_start":
            index = payload["index"]
            blocks[index] = dict(payload["content_block"])
            fragments[index] = []
        elif kind == "content_block_delta":
            delta = payload["delta"]
            if delta["type"] == "text_delta":
                fragments[payload["index"]].append(delta["text"])
            elif delta["type"] == "input_json_delta":
                fragments[payload["index"]].append(delta["partial_json"])
        elif kind == "content_block_stop":
            index = payload["index"]
            block, text = blocks[index], "".join(fragments[index])
            if block["type"] == "text":
                block["text"] += text
            elif block["type"] == "tool_use":
                block["input"] = json.loads(text) if text else {}
    return [blocks[i] for i in sorted(blocks)]


def keyed_loop(events: list[StreamEvent]) -> list[Executed]:
    """The pending-tools loop, fixed: every event goes to the call its `key` names.

    A ``tool_start`` opens a call under its key; a ``tool_delta`` appends to
    the call at its key; a ``tool_done`` ends the call at its key, if there
    is one (a text block's stop names no call). Empty arguments mean ``{}``.
    """
    pending: dict[object, dict] = {}
    executed = []
    for event in events:
        if event.type == "tool_start":
            pending[event.key] = {"name": event.tool_name, "id": event.tool_id, "args": []}
        elif event.type == "tool_delta" and event.key in pending:
            pending[event.key]["args"].append(event.tool_args)
        elif event.type == "tool_done" and event.key in pending:
            call = pending.pop(event.key)
            arguments = "".join(call["args"])
            value = json.loads(arguments) if arguments.strip() else {}
            executed.append(Executed(call["name"], call["id"], arguments, value, None,
                                     event.event))
    return executed


def trusted_at(payloads: list) -> int | None:
    """The index of the Chat chunk from which the tool calls can be trusted, or None.

    Chat has no per-call stop: a call is complete only when its choice's
    ``finish_reason`` arrives, and it is a finished tool call only when that
    reason is ``"tool_calls"``. A stream cut, failed, or ended for another
    reason (``length``, ``content_filter``...) never gets there.
    """
    for i, payload in enumerate(payloads):
        if not isinstance(payload, dict):
            continue                                   # the "[DONE]" sentinel
        for choice in payload.get("choices") or []:
            if choice.get("finish_reason") == "tool_calls":
                return i
    return None
