"""A block its start event states as data: what an Anthropic content block and a Gemini
Interactions step share.

Both wires open a slot with an object (``content_block``, ``step``) whose ``type`` is the
slot's kind and whose ``name`` and ``id`` say which tool it calls; a block that takes input
gets a `ToolCall` made from that start, given the input the start already holds, and
closing its slot checks what the deltas fed it. Each wire's block class says where the
input sits in its start (`input_key`) and which event ends a call (`ended_by`);
`close_started` is the close both accumulators share.
"""

from __future__ import annotations

from typing import Any

from ..partial_json import NOTHING
from ..tool_calls import ToolCall
from ..wires.wire_events import WireEvent
from .base import Accumulator, SlotState
from .changes import SlotClosed
from .indexed import IndexedBlock


class StartedBlock(IndexedBlock):
    """One slot: the start event's object (`data`), and the input its call ended with."""

    __slots__ = ("data", "input", "input_ended")

    input_key = "input"      # where the start holds a call's input
    ended_by = ""            # the event that ends a call (the wire's ``CALL_ENDED_BY``)

    def __init__(self, index: int, data: dict, state: SlotState = "open") -> None:
        kind = data.get("type")
        super().__init__(index, kind if isinstance(kind, str) else "unknown", state)
        self.data = data                       # the object as its start event gave it
        self.input: Any = None                 # parsed (or partial) at the end
        self.input_ended = False

    def identity(self) -> tuple[Any, Any]:
        return self.data.get("name"), self.data.get("id")

    def described(self) -> str:
        """``kind name (slot n)``: how a diagnostic names the block's call."""
        return f"{self.kind} {self.data.get('name', '')}".rstrip() + f" (slot {self.index})"

    def current_input(self) -> Any:
        if self.input_ended:
            return self.input
        call = self.call
        if call is not None and call.raw_length:
            # The parser's live value, its open containers copied (settled parts shared).
            value = call.view().value
            return value if value is not NOTHING else {}
        start = self.data.get(self.input_key)
        return start if start is not None else {}

    def open_call(self, event: WireEvent | None) -> ToolCall:
        """The block's tool call, made from its start: name and id first."""
        if self.call is None:
            name, call_id = self.identity()
            start = self.data.get(self.input_key)
            self.call = ToolCall(name if isinstance(name, str) else None,
                                 call_id if isinstance(call_id, str) else None,
                                 kind=self.kind, address=self.index,
                                 given=start if start is not None else NOTHING,
                                 ended_by=self.ended_by,
                                 t=event.t if event is not None else None,
                                 event=event.index if event is not None else None)
        return self.call


def close_started(acc: Accumulator, block: StartedBlock, *, cut: bool,
                  event: WireEvent | None, data: Any = None) -> None:
    """Close `block`'s slot (`SlotClosed`), checking its call's input if it takes one;
    `cut` when the stream ended before the block's stop. `data` is the block's finished
    object, where its deltas stated more of it than its start did."""
    how = "end_of_stream" if cut else "stop"
    if not block.takes_input or block.input_ended:
        acc.changes.append(SlotClosed(event.index if event is not None else None,
                                      block.index, how, synthesised=cut,  # type: ignore[arg-type]
                                      data=data))
        return
    block.input = acc.close_call_slot(block.open_call(event), block.index, cut=cut,
                                      event=event, what=block.described(), how=how)
    block.input_ended = True
