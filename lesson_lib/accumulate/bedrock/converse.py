"""Bedrock's ConverseStream accumulator: blocks in slots addressed by ``contentBlockIndex``.

Only tool blocks get a ``contentBlockStart`` (``start.toolUse`` with
``toolUseId`` and ``name``, or a server tool's ``start.toolResult``); a text
or reasoning block begins with its first delta, so a delta for a slot never
seen opens it, its kind told by the delta. Deltas name the slot;
``contentBlockStop`` closes it.

``messageStop`` carries ``stopReason`` and ends the stream properly; the
``metadata`` after it brings ``usage`` and ``metrics`` (a frame cut after
``messageStop`` still leaves the stream incomplete: the metadata was lost). Every payload's ``p``
padding field is ignored. An exception frame (``throttlingException``...) is
an in-band error. `final()` is the Converse response as the non-streaming
API returns it::

    {"output": {"message": {"role": "assistant", "content": [block, ...]}},
     "stopReason": ..., "usage": {...}, "metrics": {...}}

What does not fit is a diagnostic, never dropped: a delta for a stopped slot
(``delta_after_stop``), a second start (``duplicate_start``) or stop
(``duplicate_stop``), a tool delta for a slot no start opened
(``unknown_slot``), a block event after ``messageStop``
(``event_after_terminal``), a delta of a kind this module does not know
(``unknown_delta``), an unknown event (``unknown_event``).

That is the rule. Beside this module, each in the file named for it: `block` (what a
block holds, and its shape in the final response) and `deltas` (what each delta does
to its block).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ...diagnostics import Diagnostic
from ...sse.eventstream import FRAMING_ERRORS
from ...tool_calls import ToolCall
from ...wires import bedrock, bedrock_converse
from ...wires.bedrock_converse import PADDING, REDACTED_CONTENT
from ...wires.bedrock_converse import REASONING_BLOCK as REASONING
from ...wires.bedrock_converse import TOOL_RESULT_BLOCK as TOOL_RESULT
from ...wires.bedrock_converse import TOOL_USE_BLOCK as TOOL_USE
from ...wires.wire_events import WireEvent
from ..changes import InBandError, ResponseChanged, SlotClosed, SlotOpened, TerminalReached
from ..indexed import IndexedAccumulator
from .block import Block
from .deltas import DELTA_KIND, apply, orphan


def _unpadded(payload: dict) -> dict:
    """The payload without its ``p`` padding field."""
    return {k: copy.deepcopy(v) for k, v in payload.items() if k != PADDING}


class ConverseAccumulator(IndexedAccumulator):
    """Builds the Converse response from ConverseStream events (see the module docstring)."""

    wire = bedrock.CONVERSE
    blocks: dict[int, Block]

    def __init__(self) -> None:
        super().__init__()
        self.response: dict[str, Any] = {}     # stopReason, usage, metrics, ...
        self.role: str | None = None
        self.started = False
        self.stopped = False
        self.errored = False

    # -- feeding ---------------------------------------------------------------

    def feed(self, event: WireEvent) -> list:
        """Take one event and return what it changed (never raises on bad input)."""
        self.changes = changes = []
        if self.unreadable(event):
            return changes
        kind = event.type
        if kind in bedrock.EXCEPTIONS:
            self._exception(event)
            return changes
        handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
        if handler is None:
            self.unknown_event(event, kind, "ConverseStream")
            return changes
        if self.errored:
            self.note("event_after_error", f"{kind} after the exception that ended the "
                      "stream", event=event, raw=event.sse.data)
        elif self.stopped and kind != "metadata":
            self.note("event_after_terminal", f"{kind} after messageStop", event=event,
                      raw=event.sse.data)
        if not self.started and kind != bedrock_converse.MESSAGE_START:
            self.started = True
            self.note("event_before_start", f"{kind} arrived before messageStart; events are "
                      "accumulated anyway", event=event)
        handler(self, event.payload, event)
        return changes

    def _message_start(self, payload: dict, event: WireEvent) -> None:
        if self.started:
            self.note("duplicate_start", "a second messageStart; the first one is kept",
                      event=event, raw=event.sse.data)
            return
        self.started = True
        role = payload.get("role")
        self.role = role if isinstance(role, str) else None
        self.changes.append(ResponseChanged(event.index, {"role": self.role}))

    def _block_start(self, payload: dict, event: WireEvent) -> None:
        index, start = payload.get("contentBlockIndex"), payload.get("start")
        kinds = [k for k in (TOOL_USE, TOOL_RESULT) if isinstance(start, dict)
                 and isinstance(start.get(k), dict)]
        if not isinstance(index, int) or not kinds:
            self.note("unknown_slot", "contentBlockStart without an integer contentBlockIndex "
                      "and a toolUse or toolResult start", event=event, raw=event.sse.data)
            return
        if self.already_started(index, event):
            return
        self._open(Block(index, kinds[0], copy.deepcopy(start[kinds[0]])), event)

    def _open(self, block: Block, event: WireEvent, *, whole: Any = None) -> Block:
        """Open `block`'s slot. `whole` is the object of a block that arrives whole in
        the event that opens it (redacted reasoning)."""
        self.blocks[block.index] = block
        start = block.start
        name, call_id = start.get("name"), start.get("toolUseId")
        if block.takes_input:
            block.call = ToolCall(name if isinstance(name, str) else None,
                                  call_id if isinstance(call_id, str) else None,
                                  kind=TOOL_USE, address=block.index, t=event.t,
                                  event=event.index, ended_by=bedrock_converse.CALL_ENDED_BY)
        self.changes.append(SlotOpened(
            event.index, block.index, block.kind, block.label(),
            name=name if isinstance(name, str) else None,
            call_id=call_id if isinstance(call_id, str) else None,
            item_id=call_id if isinstance(call_id, str) else None,
            takes_input=block.takes_input, data=start or whole,
            whole=whole is not None,
            ended_by=bedrock_converse.CALL_ENDED_BY if block.takes_input else None))
        return block

    def _block_delta(self, payload: dict, event: WireEvent) -> None:
        index, delta = payload.get("contentBlockIndex"), payload.get("delta")
        fields = list(delta) if isinstance(delta, dict) else []
        if PADDING in fields:
            fields.remove(PADDING)
        field = fields[0] if len(fields) == 1 else None
        if not isinstance(index, int) or field not in DELTA_KIND:
            self.note("unknown_delta", "a delta that is not one of text, reasoningContent, "
                      "citation, toolUse, toolResult for an integer contentBlockIndex; kept as "
                      "raw data", event=event, severity="warning", slot=index,
                      raw=event.sse.data)
            return
        value = delta[field]
        block = self.blocks.get(index)
        if block is None:
            kind = DELTA_KIND[field]
            if kind in (TOOL_USE, TOOL_RESULT):   # tool blocks are announced by their start
                self.note("unknown_slot", f"{field} delta for slot {index}, which no "
                          "contentBlockStart opened; not applied, its text is kept here",
                          event=event, slot=index, raw=event.sse.data,
                          orphan_text=orphan(value))
                return
            redacted = kind == REASONING and isinstance(value, dict) and REDACTED_CONTENT in value
            block = self._open(Block(index, kind), event,
                               whole={REDACTED_CONTENT: value[REDACTED_CONTENT]} if redacted
                               else None)
        if block.state != "open":
            self.note("delta_after_stop", f"delta for slot {index} after its stop; not "
                      "applied, its text is kept here", event=event, slot=index,
                      raw=event.sse.data, orphan_text=orphan(value))
            return
        if DELTA_KIND[field] != block.kind or not apply(self, block, field, value, event):
            self.note("delta_mismatch", f"a {field} delta does not fit slot {index} "
                      f"({block.kind}); not applied", event=event, severity="warning",
                      slot=index, raw=event.sse.data)

    def _block_stop(self, payload: dict, event: WireEvent) -> None:
        block = self.block_to_stop(payload.get("contentBlockIndex"), event)
        if block is None:
            return
        self._close(block, cut=False, event=event)

    def _close(self, block: Block, *, cut: bool, event: WireEvent | None) -> None:
        how = "end_of_stream" if cut else "stop"
        if block.call is None:
            self.changes.append(SlotClosed(event.index if event is not None else None,
                                           block.index, how, synthesised=cut))  # type: ignore[arg-type]
            return
        what = f"toolUse {block.start.get('name', '')}".rstrip() + f" (slot {block.index})"
        block.input = self.close_call_slot(block.call, block.index, cut=cut, event=event,
                                           what=what, how=how)

    def _message_stop(self, payload: dict, event: WireEvent) -> None:
        fields = _unpadded(payload)
        self.response.update(fields)
        if fields:
            self.changes.append(ResponseChanged(event.index, copy.deepcopy(fields)))
        if not self.errored:
            self.complete = True
        self.stopped = True
        self.changes.append(TerminalReached(event.index, bedrock_converse.MESSAGE_STOP))

    def _metadata(self, payload: dict, event: WireEvent) -> None:
        fields = _unpadded(payload)
        self.response.update(fields)
        if fields:
            self.changes.append(ResponseChanged(event.index, copy.deepcopy(fields)))

    def _exception(self, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        error = bedrock.read_exception(event.type, event.payload)
        message = f"{event.type}: {error.message if error and error.message else event.sse.data}"
        raw = _unpadded(event.payload) if isinstance(event.payload, dict) else event.payload
        self.changes.append(InBandError(event.index, message, {"type": event.type, **raw},
                                        event.type))
        self.note("in_band_error", message, event=event, raw=event.sse.data,
                  error={"type": event.type, **raw})

    # -- ending ----------------------------------------------------------------

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: close open blocks (tool input cut), note a missing terminal."""
        if not self.begin_finish(sse_diagnostics):
            return []
        if any(d.code in FRAMING_ERRORS or d.code == "truncated_frame"
               for d in self.diagnostics):
            # A frame cut or broken after messageStop took the metadata (usage) with it:
            # the stream did not end as ConverseStream ends.
            self.complete = False
        # ConverseStream stops every block before messageStop: a block left open
        # proves a lost frame, unless the model stopped inside it (a length stop),
        # as on Anthropic's wire.
        length = bedrock_converse.finish_reason(self.response.get("stopReason")) == "length"
        for block in self.never_stopped(bedrock_converse.CONTENT_BLOCK_STOP,
                                        length_stop=self.stopped and length):
            self._close(block, cut=True, event=None)
        if not self.stopped and not self.errored:
            self.note("no_terminal", "the stream ended before messageStop: what arrived is "
                      "kept, but the message is incomplete")
        return self.end_changes("in_band_error" if self.errored else "cut")

    # -- reading ---------------------------------------------------------------

    def final(self) -> dict:
        """The Converse response so far, as the non-streaming API returns it."""
        content = [self.blocks[i].as_dict() for i in sorted(self.blocks)]
        out: dict[str, Any] = {"output": {"message": {"role": self.role or "assistant",
                                                      "content": content}},
                               "stopReason": None}
        out.update(copy.deepcopy(self.response))
        return out


_HANDLERS = {
    bedrock_converse.MESSAGE_START: ConverseAccumulator._message_start,
    bedrock_converse.CONTENT_BLOCK_START: ConverseAccumulator._block_start,
    bedrock_converse.CONTENT_BLOCK_DELTA: ConverseAccumulator._block_delta,
    bedrock_converse.CONTENT_BLOCK_STOP: ConverseAccumulator._block_stop,
    bedrock_converse.MESSAGE_STOP: ConverseAccumulator._message_stop,
    "metadata": ConverseAccumulator._metadata,
}
