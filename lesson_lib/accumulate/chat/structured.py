"""Structured output on the Chat wire: with a ``response_format`` json_schema, each
choice's ``content`` is a pseudo `ToolCall` too (lesson 3), named after the schema.

The call is fed every content fragment (from the choice's first string, even ""),
ended at the choice's ``finish_reason`` (or ``data: [DONE]``), and cut when the
stream ends first. ``final()`` is unchanged: the content stays the JSON text.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...tool_calls import ToolCall
from ...wires import chat
from ...wires.wire_events import WireEvent

if TYPE_CHECKING:
    from .choice import Choice


class StructuredOutput:
    """The Chat accumulator's structured-output call (mixed into `ChatAccumulator`)."""

    def _feed_structured(self, choice: Choice, fragment: str, event: WireEvent) -> None:
        """Structured output: the choice's content (from its first string, even "")
        feeds a pseudo tool call named after the schema."""
        call = choice.structured
        if call is None:
            call = choice.structured = ToolCall(self._structured, self.head.get("id"),
                                                kind="structured output",
                                                address=(choice.index, "content"),
                                                structured=True, t=event.t, event=event.index,
                                                ended_by=chat.CALL_ENDED_BY)
        if fragment:
            call.feed(fragment, t=event.t, event=event.index)

    @staticmethod
    def _end_structured(choice: Choice, event: WireEvent) -> None:
        """The choice's finish_reason (or [DONE]) ends its structured-output call."""
        if choice.structured is not None:
            frags = choice.texts.get("content")
            choice.structured.end(frags.text if frags is not None else None, t=event.t,
                                  event=event.index)
