"""The Gemini adapter: minted part slots, ``finishReason`` read with the calls, last usage.

The accumulator already did the work a wire without a block index needs: it
gave every part a slot ``(candidate, n)``, wrote streamed ``partialArgs`` out
as JSON text for lesson 3's parser, and checked a whole ``functionCall``
strictly at once. What is left is what Gemini says its own way:

- slot kinds: ``thought`` is reasoning; ``executableCode`` and ``toolCall``
  are the provider's own tools at work, ``codeExecutionResult`` and
  ``toolResponse`` what they got back;
- the finish reason: ``STOP`` with a ``functionCall`` part is ``tool_calls``
  (like Responses, the parts decide); ``MAX_TOKENS`` a length stop, ``SAFETY``
  and ``RECITATION`` a content filter, ``MALFORMED_FUNCTION_CALL`` an error;
- the names: ``usageMetadata`` is the usage (a running total: the last wins),
  ``modelVersion`` the model, ``responseId`` the response's id.
"""

from __future__ import annotations

from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ..events import Finish, TurnEvent
from .base import WireAdapter

# The wire's names for what the turn reads under its own.
_RESPONSE_NAMES = {"usageMetadata": "usage", "modelVersion": "model", "responseId": "id"}


class GeminiAdapter(WireAdapter):
    """Turn events from the Gemini accumulator's changes."""

    wire = wires.gemini.WIRE

    def feed(self, changes: Any, *, t: float | None = None,
             at: int | None = None) -> list[TurnEvent]:
        """The turn events of one record's changes, its response fields in the turn's names."""
        return super().feed([_in_turn_names(c) if type(c) is ch.ResponseChanged else c
                             for c in changes or ()], t=t, at=at)

    def classify(self, opened: ch.SlotOpened):
        """Thoughts are reasoning; code execution and server tools are the provider's."""
        kind = opened.slot_kind
        if kind == wires.gemini.THOUGHT:
            return "reasoning", False, "reasoning"
        if kind in wires.gemini.SERVER_WORK_PARTS:
            return "other", True, "other"
        if kind in wires.gemini.SERVER_RESULT_PARTS:
            return "tool_result", True, "other"
        return super().classify(opened)

    def finish(self) -> Finish:
        """The first candidate's ``finishReason``, read with its ``functionCall`` parts."""
        raw = self.choice_finish.get(min(self.choice_finish)) if self.choice_finish else None
        called = any(b.kind == "tool_call" and not b.server_side for b in self.order)
        return Finish(wires.gemini.finish_from(raw, called_tools=called) or "other", raw)


def _in_turn_names(change: ch.ResponseChanged) -> ch.ResponseChanged:
    """A record's changed fields with ``usageMetadata``, ``modelVersion`` and
    ``responseId`` renamed as the turn reads them (``finishReason`` for a candidate)."""
    fields = {_RESPONSE_NAMES.get(k, k): v for k, v in change.fields.items()}
    if change.choice is not None and "finishReason" in fields:
        fields["finish_reason"] = fields.pop("finishReason")
    return ch.ResponseChanged(change.event, fields, change.choice)
