"""Gemini Interactions' SDK events, read back as the events they were parsed from.

google-genai's ``interactions.create(..., stream=True)`` yields one typed
object per SSE event (``InteractionCreatedEvent``, ``StepStart``,
``StepDelta``, ``StepStop``, ``InteractionCompletedEvent``, ``ErrorEvent``...)
and assembles nothing. Each object's dump *is* the event's payload, so the
SDK route feeds it (`sdk_payload`) to the same accumulator as the wire route;
what differs between the routes is only what the SDK let through.

What the SDK does not let it see:

- where and when anything arrived (byte offsets, arrival times);
- the ``event:`` line (the payload's ``event_type`` names the event on both routes);
- an event cut in the middle: the SDK's reader hands over the partial block at
  the end of the body as a string (its data, which is no JSON). Last in the
  iteration it is the cut tail, noted as the wire route notes bytes that made
  no whole event (``undispatched_bytes``): the step is truncated on both
  routes. A string with events after it is an event whose data did not parse
  (``unparseable_json``), as on the wire route;
- a ``data: [DONE]`` line: its reader stops there, as the wire route does.

An ``error`` event is yielded as an object (the SDK does not raise): an in-band
failure on both routes.
"""

from __future__ import annotations

import json
from typing import Any

from ...accumulate.changes import StreamEnded
from ...accumulate.gemini_interactions import GeminiInteractionsAccumulator
from ...diagnostics import Diagnostic
from ...sse.decoder import ServerSentEvent
from ...wires import gemini_interactions as gi
from ...wires.wire_events import WireEvent


def sdk_payload(event: Any) -> Any:
    """One SDK event object as the payload it came from (its wire names; None left out);
    an object the SDK did not recognise gives back its raw payload."""
    raw = getattr(event, "raw", None)
    if getattr(event, "is_unknown", False) and raw is not None:
        return raw
    dump = getattr(event, "model_dump", None)
    if not callable(dump):
        return event
    return dump(mode="json", by_alias=True, exclude_none=True, warnings=False)


class GeminiInteractionsSDKTranslator:
    """SDK event objects -> the changes the Interactions accumulator makes of their payloads."""

    def __init__(self) -> None:
        self.accumulator = GeminiInteractionsAccumulator()
        self.count = 0
        self.terminal = False
        self._text: str | None = None     # a block the SDK handed over as text, held

    def changes(self, event: Any) -> list:
        """The changes of one SDK event object (one SSE event)."""
        out = []
        if self._text is not None:        # not the last: an event whose data did not parse
            out += self._event(self._text)
            self._text = None
        if isinstance(event, str):
            self._text = event
            return out
        return out + self._event(sdk_payload(event))

    def _event(self, payload: Any) -> list:
        if isinstance(payload, str):
            payload = None if not payload.strip() else payload
        named = payload.get(gi.EVENT_TYPE_FIELD) if isinstance(payload, dict) else None
        kind = named if isinstance(named, str) else None
        data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        wire_event = WireEvent(self.count, ServerSentEvent(kind, data), kind, payload,
                               None if isinstance(payload, dict) else
                               "the SDK handed the event over as text, not a JSON object")
        self.count += 1
        out = self.accumulator.feed(wire_event)
        self.terminal = self.accumulator.stopped
        return out

    def close_all(self) -> list:
        """The SDK's iteration is over: what the accumulator's end closes (its own
        `StreamEnded` left to the SDK adapter, which knows how the iteration ended)."""
        tail: list[Diagnostic] = []
        if self._text is not None:
            tail.append(Diagnostic("undispatched_bytes", "the SDK's last object is the text "
                                   f"of an event cut short ({len(self._text)} characters "
                                   "that make no JSON object): the stream was cut",
                                   raw=self._text))
            self._text = None
        return [c for c in self.accumulator.finish(tail) if not isinstance(c, StreamEnded)]
