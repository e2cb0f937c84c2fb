"""What each ConverseStream delta does to its block.

A delta is an object with one field (besides the ``p`` padding), and the field says
which kind of block it belongs to (`DELTA_KIND`: a delta for a slot never seen opens
a text or reasoning block of that kind):

- ``text``: appends to the block's text;
- ``reasoningContent``: ``text`` appends to the reasoning text, ``signature``
  sets its signature (one delta of its own), ``redactedContent`` sets it. A
  block that begins with ``redactedContent`` is redacted reasoning: it
  arrives whole in that delta (base64 bytes only the provider can read), so
  its slot opens `whole`, with the delta's object as its `data`;
- ``citation``: appends one citation to a text block (it may come before any
  of the block's text, so it opens the block too);
- ``toolUse.input``: feeds the block's `ToolCall` (lesson 3), checked
  strictly at the block's stop;
- ``toolResult``: appends result items (a server tool's result).
"""

from __future__ import annotations

import copy
from typing import Any

from ...wires.bedrock_converse import CITATION, REASONING_TEXT, REDACTED_CONTENT
from ...wires.bedrock_converse import REASONING_BLOCK as REASONING
from ...wires.bedrock_converse import TEXT_BLOCK as TEXT
from ...wires.bedrock_converse import TOOL_RESULT_BLOCK as TOOL_RESULT
from ...wires.bedrock_converse import TOOL_USE_BLOCK as TOOL_USE
from ...wires.wire_events import WireEvent
from ..changes import CitationAdded, SlotSigned, TextAppended, ToolInputGrew
from ..indexed import IndexedAccumulator
from .block import Block, item_text

# Which kind of block a delta's field belongs to (a delta for a slot never seen opens one).
DELTA_KIND = {TEXT: TEXT, CITATION: TEXT, REASONING: REASONING,
              TOOL_USE: TOOL_USE, TOOL_RESULT: TOOL_RESULT}


def apply(acc: IndexedAccumulator, block: Block, field: str, value: Any,
          event: WireEvent) -> bool:
    """Apply one delta to its block, recording its change; False when it does not fit."""
    at, index = event.index, block.index
    if field == TEXT and isinstance(value, str):
        block.text.append(value)
        acc.changes.append(TextAppended(at, index, "text", value, TEXT))
    elif field == CITATION and isinstance(value, dict):
        block.citations.append(copy.deepcopy(value))
        acc.changes.append(CitationAdded(at, index, block.citations[-1]))
    elif field == REASONING and isinstance(value, dict):
        return apply_reasoning(acc, block, value, event)
    elif field == TOOL_USE and isinstance(value, dict) and isinstance(value.get("input"), str):
        assert block.call is not None
        grew = block.call.feed(value["input"], t=event.t, event=at)
        acc.changes.append(ToolInputGrew(at, index, value["input"], tuple(grew)))
    elif field == TOOL_RESULT and isinstance(value, list):
        block.results.extend(copy.deepcopy(value))
        for item in value:
            acc.changes.append(TextAppended(at, index, "other", item_text(item), TOOL_RESULT))
    else:
        return False
    return True


def apply_reasoning(acc: IndexedAccumulator, block: Block, value: dict,
                    event: WireEvent) -> bool:
    """Apply a ``reasoningContent`` delta: its text, its signature or its redacted bytes."""
    if isinstance(value.get("text"), str):
        block.text.append(value["text"])
        acc.changes.append(TextAppended(event.index, block.index, "reasoning", value["text"],
                                        REASONING_TEXT))
    elif isinstance(value.get("signature"), str):
        block.signature = value["signature"]
        acc.changes.append(SlotSigned(event.index, block.index, value["signature"]))
    elif REDACTED_CONTENT in value:
        block.redacted = copy.deepcopy(value[REDACTED_CONTENT])
    else:
        return False
    return True


def orphan(value: Any) -> str | None:
    """The text a delta's value carries (kept in a diagnostic when it cannot be applied)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "input", "signature"):
            if isinstance(value.get(key), str):
                return value[key]
    return None
