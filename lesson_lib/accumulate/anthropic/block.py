"""What one Anthropic block holds: the start event's block, plus what its deltas added.

A `Block` is one slot, addressed by its ``index`` (a `StartedBlock`: its name, id and
tool call come from its start, as an Interactions step's do); `TEXT_DELTAS` say which field
each text delta appends to, `CHANNEL` what kind of text it is in the turn's words,
and `STREAMED` which known blocks stream (every other known block arrives whole in
its start). `slot_text` is what the slot view shows of a block; `delta_text` the
text a delta carries (kept in a diagnostic when the delta cannot be applied).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ...wires import anthropic
from ..base import Fragments, SlotState
from ..started import StartedBlock

# The delta type, and the block field its text goes to.
TEXT_DELTAS = {"text_delta": ("text", "text"), "thinking_delta": ("thinking", "thinking"),
               "compaction_delta": ("content", "content")}
TEXT_DELTA_KIND = {"text_delta": "text", "thinking_delta": "thinking",
                   "compaction_delta": "compaction"}
# What kind of text each delta carries, in the turn's words (`changes.Channel`).
CHANNEL = {"text_delta": "text", "thinking_delta": "reasoning", "compaction_delta": "other"}
# Known blocks that stream: every other known block arrives whole in its start.
STREAMED = frozenset({"text", "thinking", "compaction"})
KNOWN_DELTAS = frozenset(TEXT_DELTAS) | {"input_json_delta", "signature_delta",
                                         "citations_delta"}


class Block(StartedBlock):
    """One slot: the start event's block, plus what the deltas added."""

    __slots__ = ("streams", "citations")

    ended_by = anthropic.CALL_ENDED_BY

    def __init__(self, index: int, data: dict, state: SlotState = "open") -> None:
        super().__init__(index, data, state)
        self.streams: dict[str, Fragments] = {}  # field name -> text appended by deltas
        self.citations: list | None = None      # citations appended by deltas

    @property
    def takes_input(self) -> bool:
        return "input" in self.data or self.kind in anthropic.CALL_BLOCKS

    def from_server(self) -> bool:
        return self.kind in anthropic.SERVER_OUTPUT_BLOCKS

    def answers(self) -> str | None:
        call_id = self.data.get("tool_use_id")
        return call_id if isinstance(call_id, str) else None

    def shown(self) -> str:
        return slot_text(self)

    def text_of(self, name: str) -> str:
        start = self.data.get(name)
        start = start if isinstance(start, str) else ""
        stream = self.streams.get(name)
        return start + stream.text if stream else start

    def as_dict(self) -> dict:
        out = copy.deepcopy(self.data)
        for name in self.streams:
            out[name] = self.text_of(name)
        if self.citations is not None:
            before = out.get("citations")
            out["citations"] = (list(before) if isinstance(before, list) else []) + self.citations
        if self.takes_input:
            out["input"] = self.current_input()
        return out


def slot_text(block: Block) -> str:
    """What the slot view shows of a block: its streamed text, else its data."""
    for name in ("text", "thinking", "content"):
        if name in block.streams or isinstance(block.data.get(name), str):
            return block.text_of(name)
    if block.kind == anthropic.REDACTED_THINKING_BLOCK:
        return str(block.data.get("data", ""))
    content = block.data.get("content")
    if content is None and block.kind in anthropic.SERVER_OUTPUT_BLOCKS:
        # A container upload or a tool listing says what it is in fields of its own.
        content = {k: v for k, v in block.data.items() if k != "type"}
    return json.dumps(content, ensure_ascii=False) if content is not None else ""


def delta_text(delta: Any) -> str | None:
    """The text a delta carries (its text, thinking, content or argument fragment)."""
    if not isinstance(delta, dict):
        return None
    key = {"input_json_delta": "partial_json", "signature_delta": "signature"}.get(
        delta.get("type"), TEXT_DELTAS.get(delta.get("type"), (None, None))[1])
    value = delta.get(key) if key is not None else None
    return value if isinstance(value, str) else None
