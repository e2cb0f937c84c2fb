"""What one ConverseStream block holds: its kind, its start (tool blocks), and what its
deltas added; `Block.as_dict` is the block as the non-streaming Converse response's
content block::

    {"text": ...} | {"citationsContent": {"content": [{"text"}], "citations"}}
    | {"toolUse": {"toolUseId", "name", "input"}}
    | {"reasoningContent": {"reasoningText": {"text", "signature"}}}
    | {"reasoningContent": {"redactedContent": ...}}
    | {"toolResult": {"toolUseId", "content", "status"}}
"""

from __future__ import annotations

import copy
import json
from typing import Any

from ...partial_json import NOTHING
from ...wires.bedrock_converse import REASONING_BLOCK as REASONING
from ...wires.bedrock_converse import REASONING_TEXT, REDACTED_CONTENT
from ...wires.bedrock_converse import TEXT_BLOCK as TEXT
from ...wires.bedrock_converse import TOOL_RESULT_BLOCK as TOOL_RESULT
from ...wires.bedrock_converse import TOOL_USE_BLOCK as TOOL_USE
from ..base import Fragments
from ..indexed import IndexedBlock


class Block(IndexedBlock):
    """One slot: its kind, its start (tool blocks), and what the deltas added."""

    __slots__ = ("start", "text", "signature", "redacted", "citations", "results", "input")

    def __init__(self, index: int, kind: str, start: dict | None = None) -> None:
        super().__init__(index, kind)
        self.start = start or {}             # ``start.toolUse`` / ``start.toolResult``
        self.text = Fragments()              # text, reasoning text
        self.signature: str | None = None
        self.redacted: Any = None
        self.citations: list = []
        self.results: list = []              # toolResult items
        self.input: Any = NOTHING            # a tool call's input once it ended

    @property
    def takes_input(self) -> bool:
        return self.kind == TOOL_USE

    def identity(self) -> tuple[Any, Any]:
        return self.start.get("name"), self.start.get("toolUseId")

    def shown(self) -> str:
        """What the slot view shows: the text, or the result items."""
        if self.kind == TOOL_RESULT:
            return "".join(item_text(item) for item in self.results)
        return self.text.text

    def current_input(self) -> Any:
        if self.input is not NOTHING:
            return self.input
        if self.call is not None and self.call.raw_length:
            value = self.call.view().value
            return value if value is not NOTHING else {}
        return {}

    def as_dict(self) -> dict:
        """The block as the non-streaming response's content block."""
        if self.kind == TOOL_USE:
            use = {k: copy.deepcopy(v) for k, v in self.start.items()}
            use["input"] = self.current_input()
            return {TOOL_USE: use}
        if self.kind == TOOL_RESULT:
            result = {k: copy.deepcopy(v) for k, v in self.start.items()}
            result["content"] = copy.deepcopy(self.results)
            return {TOOL_RESULT: result}
        if self.kind == REASONING:
            if self.redacted is not None and not self.text.text:
                return {REASONING: {REDACTED_CONTENT: self.redacted}}
            text: dict[str, Any] = {"text": self.text.text}
            if self.signature is not None:
                text["signature"] = self.signature
            return {REASONING: {REASONING_TEXT: text}}
        if self.citations:
            return {"citationsContent": {"content": [{"text": self.text.text}],
                                         "citations": copy.deepcopy(self.citations)}}
        return {TEXT: self.text.text}


def item_text(item: Any) -> str:
    """A result item as the slot view shows it: compact JSON."""
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))
