"""Blocks in slots addressed by an integer index: what Anthropic's Messages stream,
Bedrock's ConverseStream and Gemini's Interactions stream share.

Each of these wires puts each content block in a slot named by its index (``index``,
``contentBlockIndex``); a block that takes input keeps its `ToolCall`. How a
block begins, what its deltas do and what its final form is differ per wire
(each wire module has its own block class); reading the blocks back does not:

- `IndexedBlock` is the part of a block every such wire has: its index, kind,
  state and tool call, its label, and what its tool call has received;
- `IndexedAccumulator` reads the blocks back in index order: the live tool
  calls and the slots of the slot view; it also says what every such wire says of
  an event it cannot read (`unreadable`, `unknown_event`), a second start
  (`already_started`), a stop it cannot apply (`block_to_stop`) and a block
  the stream never stopped (`never_stopped`).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator
from typing import Any

from ..tool_calls import ToolCall
from ..wires.wire_events import WireEvent
from .base import Accumulator, Slot, SlotState
from .changes import UnknownEvent


class IndexedBlock:
    """One slot's block: `index`, `kind`, `state` and, for a block that takes input,
    its `call`. Each wire's block adds what its deltas build and says who it is."""

    __slots__ = ("index", "kind", "state", "call")

    def __init__(self, index: int, kind: str, state: SlotState = "open") -> None:
        self.index = index
        self.kind = kind
        self.state: SlotState = state
        self.call: ToolCall | None = None

    @property
    @abstractmethod
    def takes_input(self) -> bool:
        """Whether the block is a tool call's (its input arrives as argument text)."""

    @abstractmethod
    def identity(self) -> tuple[Any, Any]:
        """The block's tool name and call id as its start gave them (None where absent)."""

    @abstractmethod
    def shown(self) -> str:
        """What the slot view shows of a block that takes no input."""

    def answers(self) -> str | None:
        """For a block a server-side tool wrote: the id of the call it answers, if any."""
        return None

    def from_server(self) -> bool:
        """Whether a server-side tool wrote the block (a search's results, a run's output)."""
        return False

    @abstractmethod
    def current_input(self) -> Any:
        """The tool input so far: the parsed value once the call ended, the partial
        value before."""

    def raw_input(self) -> str:
        """The argument text the block's tool call has received."""
        return self.call.raw if self.call is not None else ""

    def label(self) -> str:
        """``[index] kind`` and the tool's name, when the block has one."""
        name = self.identity()[0]
        return f"[{self.index}] {self.kind}" + (f" {name}" if isinstance(name, str) else "")

    def slot(self) -> Slot:
        """The block as the slot view shows it."""
        if not self.takes_input:
            return Slot(self.index, self.kind, self.label(), self.shown(), self.state,
                        from_server=self.from_server(), answers=self.answers())
        raw = self.raw_input()
        name, call_id = self.identity()
        return Slot(self.index, self.kind, self.label(), raw, self.state, name=name,
                    call_id=call_id, raw_input=raw, input=self.current_input())


class IndexedAccumulator(Accumulator):
    """An accumulator whose `blocks` are `IndexedBlock`s by index."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks: dict[int, Any] = {}

    def unreadable(self, event: WireEvent) -> bool:
        """Whether `event` carries no JSON object to read: noted (``unparseable_json``, its
        raw data kept), and skipped."""
        if event.parse_error is None and isinstance(event.payload, dict):
            return False
        why = event.parse_error or "the payload is not a JSON object"
        self.note("unparseable_json", f"event {event.type!r} skipped: {why}",
                  event=event, raw=event.sse.data)
        return True

    def unknown_event(self, event: WireEvent, kind: Any, stream: str) -> None:
        """An event whose type `kind` is not part of `stream`: handed on as an
        `UnknownEvent` (its type None where `kind` is no string) and noted
        (``unknown_event``) with its raw data."""
        self.changes.append(UnknownEvent(event.index, kind if isinstance(kind, str) else None,
                                         event.payload))
        self.note("unknown_event", f"event type {kind!r} is not part of {stream}; kept as "
                  "raw data", event=event, severity="warning", raw=event.sse.data,
                  payload=event.payload)

    def ordered_blocks(self) -> list[Any]:
        """The blocks in index order."""
        return [self.blocks[i] for i in sorted(self.blocks)]

    def already_started(self, index: int, event: WireEvent) -> bool:
        """Whether slot `index` was started before: a second start is noted
        (``duplicate_start``) and the first one kept."""
        if index not in self.blocks:
            return False
        self.note("duplicate_start", f"slot {index} was already started; the first start "
                  "is kept", event=event, slot=index, raw=event.sse.data)
        return True

    def block_to_stop(self, index: Any, event: Any) -> Any:
        """The open block a stop event names by `index`, now closed; None (noted:
        ``unknown_slot`` for a block never started, ``duplicate_stop`` for one stopped
        already) when there is none to stop."""
        block = self.blocks.get(index) if type(index) is int else None
        if block is None:
            self.note("unknown_slot", f"stop for slot {index!r}, which was never started",
                      event=event, slot=index, raw=event.sse.data)
            return None
        if block.state != "open":
            self.note("duplicate_stop", f"slot {index} stopped twice", event=event,
                      slot=index, raw=event.sse.data)
            return None
        block.state = "closed"
        return block

    def never_stopped(self, stop: str, *, length_stop: bool) -> Iterator[Any]:
        """At the end of the stream, each block still open, in index order: marked
        ``never closed`` and noted (``block_never_stopped``, naming the `stop` event it
        never got: a warning when the stream ended properly after a `length_stop`, an
        error otherwise), for the wire to close its slot."""
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.state != "open":
                continue
            block.state = "never closed"
            self.note("block_never_stopped", f"slot {index} ({block.kind}) never got its "
                      f"{stop}", slot=index, severity="warning" if length_stop else "error")
            yield block

    def live_tool_calls(self) -> list[ToolCall]:
        """The tool call of every block that takes input, in index order."""
        return [block.call for block in self.ordered_blocks() if block.call is not None]

    def slots(self) -> list[Slot]:
        """One slot per block index, in order."""
        return [block.slot() for block in self.ordered_blocks()]

    def server_outputs(self) -> list[Slot]:
        """The slots of the blocks a server-side tool wrote, in index order."""
        return [block.slot() for block in self.ordered_blocks() if block.from_server()]
