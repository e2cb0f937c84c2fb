"""What an OpenAI Agents session slot holds: a text part (of a message or a reasoning
summary) or a whole item, and how a call's arguments are shown."""

from __future__ import annotations

import json
from typing import Any

from ...wires import openai_sessions as oas
from ..base import Fragments
from ..indexed import IndexedBlock


class Entry(IndexedBlock):
    """One slot: a text part (of a message or a reasoning summary), or a whole item."""

    __slots__ = ("data", "text", "item_id")

    def __init__(self, index: int, kind: str, data: dict, text: Fragments | None,
                 item_id: str | None) -> None:
        super().__init__(index, kind)
        self.data = data
        self.text = text
        self.item_id = item_id

    @property
    def takes_input(self) -> bool:
        return self.kind == oas.FUNCTION_CALL_ITEM

    def identity(self) -> tuple[Any, Any]:
        name, call_id = self.data.get("name"), self.data.get("call_id")
        return (name if isinstance(name, str) else None,
                call_id if isinstance(call_id, str) else None)

    def answers(self) -> str | None:
        if self.kind != oas.FUNCTION_CALL_OUTPUT_ITEM:
            return None
        found = self.data.get("call_id")
        return found if isinstance(found, str) else None

    def from_server(self) -> bool:
        return self.kind in oas.SERVER_ITEMS

    def shown(self) -> str:
        if self.text is not None:
            return self.text.text
        output = self.data.get("output")
        return output if isinstance(output, str) else json.dumps(output) if output else ""

    def current_input(self) -> Any:
        if self.call is not None and self.call.ended:
            return self.call.input
        found = self.data.get("arguments")
        return found if isinstance(found, dict) else {}


def arguments_text(data: dict) -> str:
    """A call's arguments as the text the slot shows: JSON text as sent, an object dumped."""
    found = data.get("arguments")
    return found if isinstance(found, str) else json.dumps(
        found if isinstance(found, dict) else {}, ensure_ascii=False)

