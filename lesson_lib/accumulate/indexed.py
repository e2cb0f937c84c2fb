"""Blocks in slots addressed by an integer index: what Anthropic's Messages stream and
Bedrock's ConverseStream share.

Both wires put each content block in a slot named by its index (``index``,
``contentBlockIndex``); a block that takes input keeps its `ToolCall`. How a
block begins, what its deltas do and what its final form is differ per wire
(each wire module has its own block class); reading the blocks back does not:

- `IndexedBlock` is the part of a block both wires have: its index, kind,
  state and tool call, its label, and what its tool call has received;
- `IndexedAccumulator` reads the blocks back in index order: the live tool
  calls and the slots of the slot view.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

from ..tool_calls import ToolCall
from .base import Accumulator, Slot, SlotState


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

    def ordered_blocks(self) -> list[Any]:
        """The blocks in index order."""
        return [self.blocks[i] for i in sorted(self.blocks)]

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

    def live_tool_calls(self) -> list[ToolCall]:
        """The tool call of every block that takes input, in index order."""
        return [block.call for block in self.ordered_blocks() if block.call is not None]

    def slots(self) -> list[Slot]:
        """One slot per block index, in order."""
        return [block.slot() for block in self.ordered_blocks()]

    def server_outputs(self) -> list[Slot]:
        """The slots of the blocks a server-side tool wrote, in index order."""
        return [block.slot() for block in self.ordered_blocks() if block.from_server()]
