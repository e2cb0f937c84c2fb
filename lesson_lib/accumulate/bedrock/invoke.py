"""Bedrock's InvokeModelWithResponseStream: Anthropic's own events in Bedrock's frames.

Its accumulator is `AnthropicAccumulator` as it is; it only learns Bedrock's
exception frames, which it reads as Anthropic ``error`` events.
"""

from __future__ import annotations

from ...wires import bedrock
from ...wires.wire_events import WireEvent
from ..anthropic import AnthropicAccumulator


class InvokeAccumulator(AnthropicAccumulator):
    """InvokeModelWithResponseStream: the Anthropic accumulator, plus Bedrock's exception
    frames read as Anthropic ``error`` events (an in-band error that ends the stream)."""

    wire = bedrock.INVOKE

    def feed(self, event: WireEvent) -> list:
        """An exception frame is an ``error`` event; every other event is Anthropic's."""
        if event.type not in bedrock.EXCEPTIONS:
            return super().feed(event)
        self.changes = []
        payload = event.payload if isinstance(event.payload, dict) else {}
        message = payload.get("message")
        self._error({"error": {"type": event.type, "message": message
                               if isinstance(message, str) else None}}, event)
        return self.changes
