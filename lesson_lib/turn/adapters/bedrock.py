"""The Bedrock adapters: ConverseStream's blocks, and InvokeModel's Anthropic events.

ConverseStream slots are named by the content block they become
(``text``, ``reasoningContent``, ``toolUse``, ``toolResult``): a ``toolUse``
whose start says ``type: server_tool_use`` is a call the provider runs
itself, a ``toolResult`` is its result. The finish reason is ``messageStop``'s
``stopReason``; the usage arrives in ``metadata``, after the stop.

InvokeModelWithResponseStream streams Anthropic's own events, so its adapter
is the Anthropic one under Bedrock's wire name (its exception frames come
in as the accumulator's in-band errors, with Bedrock's retry rule).
"""

from __future__ import annotations

from typing import Any

from ... import wires
from ...accumulate import accumulator_for
from ...accumulate import changes as ch
from ...sse.eventstream import FRAMING_ERRORS
from ...wires import bedrock_converse as converse
from ...wires.bedrock import FrameEvent
from ...wires.wire_events import WireEvent
from ..events import Finish
from .anthropic import AnthropicAdapter
from .base import WireAdapter

_CUT_OR_BROKEN = FRAMING_ERRORS | {"truncated_frame"}


class ConverseAdapter(WireAdapter):
    """Turn events from the ConverseStream accumulator's changes."""

    wire = converse.WIRE

    def classify(self, opened: ch.SlotOpened):
        """By the block: a server tool's call and result are server-side."""
        kind = opened.slot_kind
        start = opened.data if isinstance(opened.data, dict) else {}
        if kind == converse.TOOL_USE_BLOCK:
            return "tool_call", start.get("type") == converse.SERVER_TOOL_USE, "text"
        if kind == converse.TOOL_RESULT_BLOCK:
            return "tool_result", True, "other"
        if kind == converse.REASONING_BLOCK:
            return "reasoning", False, "reasoning"
        return super().classify(opened)

    def is_redacted(self, opened: ch.SlotOpened) -> bool:
        """Reasoning that begins with ``redactedContent`` (it arrives whole, that field its
        data)."""
        return (opened.slot_kind == converse.REASONING_BLOCK and isinstance(opened.data, dict)
                and converse.REDACTED_CONTENT in opened.data)

    def feed(self, changes: Any, *, t: float | None = None, at: int | None = None) -> list:
        """As every adapter; a frame cut after ``messageStop`` (the metadata lost) makes
        the step a cut one, not one that ended properly. The framing's diagnostics come
        with the accumulator's `finish`, the changes that end with `StreamEnded`: only
        those are looked through."""
        changes = changes if isinstance(changes, list) else list(changes or ())
        if changes and type(changes[-1]) is ch.StreamEnded:
            for change in changes:
                if (type(change) is ch.DiagnosticNoted
                        and change.diagnostic.code in _CUT_OR_BROKEN):
                    self.terminal = None
        return super().feed(changes, t=t, at=at)

    def finish(self) -> Finish:
        """From ``messageStop``'s ``stopReason``."""
        raw = self.response.get("stopReason")
        return Finish(converse.finish_reason(raw) or "other", raw)


class InvokeAdapter(AnthropicAdapter):
    """Turn events from an InvokeModelWithResponseStream stream: the Anthropic adapter."""

    wire = wires.bedrock_invoke.WIRE


class BotoEvents:
    """boto3's events for the SDK route: plain dicts (``{"contentBlockDelta": {...}}``,
    an Invoke ``{"chunk": {"bytes": b"..."}}``), read by the wire's own accumulator, whose
    changes go to the wire's adapter. boto3 has already dropped the padding and any field
    its service model does not list, and it raises at an exception frame (`SDKAdapter.end`
    reads that error)."""

    def __init__(self, wire: str) -> None:
        self.accumulator = accumulator_for(wire)
        self.count = 0

    @property
    def terminal(self) -> bool:
        """Whether the wire's terminal event came through."""
        return bool(getattr(self.accumulator, "stopped", False))

    def changes(self, event: Any) -> list:
        """What one boto3 event changed."""
        from ...capture.bedrock_replay import as_wire_payload
        kind, payload, data = as_wire_payload(event)
        wire_event = WireEvent(self.count, FrameEvent(kind, data), kind, payload)
        self.count += 1
        return self.accumulator.feed(wire_event)

    def close_all(self) -> list:
        """The end of boto3's iteration: what the accumulator's `finish` closes (the
        step's end is the SDK adapter's)."""
        return [c for c in self.accumulator.finish() if not isinstance(c, ch.StreamEnded)]
