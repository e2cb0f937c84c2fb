"""Folding an accumulator's changes back into its slots and tool calls.

The changes `feed` and `finish` return (`lesson_lib.accumulate.changes`)
say everything a slot view needs: folding them from the start gives back
what `Accumulator.slots()` and `tool_calls()` say at the same point. That is
the contract of the changes, and this module is how a test (or a view that
only keeps the changes) checks it::

    fold = Fold("anthropic-messages")
    for event in events:
        fold.add(acc.feed(event))
    fold.slots() == acc.slots()      # the fields that matter, at every index

A tool call's value is folded the way the accumulator builds it: its
argument fragments go to a `ToolCall` of the fold's own (lesson 3), and the
`SlotClosed` says how it ended. Linear: every change is read once. The
slots stand in the wire's order, its entry's `slot_order` (`wires.entry`):
Chat's and Responses' are below; every other wire's is the slots' addresses.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .. import wires
from ..partial_json import NOTHING
from ..tool_calls import ToolCall, ToolCallView
from .base import Slot, SlotState
from .changes import (
    CALL_ENDS,
    SlotClosed,
    SlotOpened,
    SlotRemoved,
    SlotRenamed,
    SlotReserved,
    SlotRestated,
    StreamEnded,
    TextAppended,
    ToolInputGrew,
)
from .responses.vocabulary import AUDIO


class _Folded:
    """One slot as the changes built it."""

    __slots__ = ("opened", "label", "name", "slot_kind", "call_id", "parts", "state", "call",
                 "input", "order", "shown_raw")

    def __init__(self, opened: SlotOpened, order: int) -> None:
        self.opened = opened
        self.label, self.name, self.slot_kind = opened.label, opened.name, opened.slot_kind
        self.call_id = opened.call_id
        shown = opened.content if opened.shown is None else opened.shown
        self.parts: list[str] = [shown] if shown else []
        self.state: SlotState = "open"
        self.call: ToolCall | None = None
        self.input: Any = None
        self.order = order
        self.shown_raw: str | None = None    # a call's text as restated: shown, the call
                                             # unchanged

    def slot(self) -> Slot:
        o = self.opened
        content = "".join(self.parts)
        if len(self.parts) > 1:
            self.parts[:] = [content]
        if not o.takes_input or o.structured:
            return Slot(o.address, self.slot_kind, self.label, content, self.state)
        call = self.call
        raw = call.raw if call is not None else ""
        if self.shown_raw is not None:
            raw = self.shown_raw
        if call is not None and call.ended:
            value = self.input
        elif call is not None and call.raw_length:
            value = call.view().value
            value = {} if value is NOTHING else value
        else:
            value = o.input if o.input is not None else {}
        return Slot(o.address, self.slot_kind, self.label, raw, self.state, name=self.name,
                    call_id=self.call_id, raw_input=raw, input=value)


def chat_order(opened: SlotOpened, arrival: int) -> Any:
    """Chat's order of slots (its entry's `slot_order`): per choice, its text fields (in
    arrival order), then its calls."""
    return (opened.address[0], opened.takes_input and not opened.structured, arrival)


def responses_order(opened: SlotOpened, arrival: int) -> Any:
    """Responses' order of slots (its entry's `slot_order`): per item, its own slot (shown
    only while it has no parts; its call first in `tool_calls()`), then its parts, then its
    summary parts; the spoken output, which has no item, after them all."""
    address = opened.address
    if address == AUDIO:
        return (math.inf, 0, 0)
    if len(address) == 1:
        return (address[0], 0, 0)
    return (address[0], 2, address[2]) if address[1] == "summary" else (address[0], 1,
                                                                         address[1])


def _by_address(opened: SlotOpened, arrival: int) -> Any:
    return opened.address


class Fold:
    """The slots and tool calls of one stream, from its changes alone."""

    def __init__(self, wire: str) -> None:
        self.wire = wire
        entry = wires.ENTRIES.get(wire)
        order = (entry.part("slot_order") if entry is not None else None) or _by_address
        self._key = lambda folded: order(folded.opened, folded.order)
        self._slots: dict[Any, _Folded] = {}
        self._hidden: dict[Any, _Folded] = {}   # removed from the slots (their calls kept)
        self.ended = False

    def add(self, changes: Iterable[Any]) -> None:
        """Fold in the changes of one `feed` (or of `finish`)."""
        for change in changes:
            kind = type(change)
            if kind is TextAppended:
                folded = self._slots.get(change.address)
                if folded is not None:
                    folded.parts.append(change.fragment)
                    if folded.call is not None and folded.opened.structured and change.fragment:
                        folded.call.feed(change.fragment)
            elif kind is ToolInputGrew:
                folded = self._slots.get(change.address) or self._hidden.get(change.address)
                if folded is not None:
                    call = self._call(folded)
                    if call.ended:            # the slot's text grows; the call is done
                        shown = call.raw if folded.shown_raw is None else folded.shown_raw
                        folded.shown_raw = shown + change.fragment
                    else:
                        call.feed(change.fragment)
                        if folded.shown_raw is not None:
                            folded.shown_raw += change.fragment
            elif kind is SlotOpened:
                self._open(change)
            elif kind is SlotReserved:
                self._slots[change.address] = _Folded(
                    SlotOpened(change.event, change.address, change.slot_kind, change.label,
                               choice=change.choice), len(self._slots))
            elif kind is SlotClosed:
                self._close(change)
            elif kind is SlotRenamed:
                self._rename(change)
            elif kind is SlotRestated:
                self._restate(change)
            elif kind is SlotRemoved:
                # Out of `slots()`; a call it holds stays one of `tool_calls()`.
                removed = self._slots.pop(change.address, None)
                if removed is not None:
                    self._hidden[change.address] = removed
            elif kind is StreamEnded:
                self.ended = True

    def _open(self, change: SlotOpened) -> None:
        self._hidden.pop(change.address, None)
        reserved = self._slots.get(change.address)
        folded = _Folded(change, len(self._slots) if reserved is None else reserved.order)
        if reserved is not None:
            folded.parts[:0] = reserved.parts
            folded.state = reserved.state
        self._slots[change.address] = folded
        if change.takes_input:
            self._call(folded)

    def _call(self, folded: _Folded) -> ToolCall:
        if folded.call is None:
            o = folded.opened
            folded.call = ToolCall(o.name, o.call_id, kind=o.slot_kind, address=o.address,
                                   given=o.input if o.input is not None else NOTHING,
                                   structured=o.structured, json_arguments=o.json_arguments,
                                   ended_by=o.ended_by)
        return folded.call

    def _rename(self, change: SlotRenamed) -> None:
        folded = self._slots.get(change.address)
        if folded is None:
            return
        folded.label = change.label
        if change.name is not None:
            folded.name = change.name
            if folded.call is not None:
                folded.call.name = change.name
        if change.slot_kind is not None:
            folded.slot_kind = change.slot_kind
        if change.call_id is not None:
            folded.call_id = change.call_id
            if folded.call is not None:
                folded.call.call_id = change.call_id

    def _restate(self, change: SlotRestated) -> None:
        folded = self._slots.get(change.address)
        if folded is None:
            return
        if change.content is not None:
            folded.parts[:] = [change.content] if change.content else []
            if folded.call is not None and not folded.opened.structured:
                folded.shown_raw = change.content
        if change.label is not None:
            folded.label = change.label
        if change.slot_kind is not None:
            folded.slot_kind = change.slot_kind

    def _close(self, change: SlotClosed) -> None:
        folded = self._slots.get(change.address) or self._hidden.get(change.address)
        if folded is None:
            return
        if change.how not in CALL_ENDS:       # (those end the call, not the slot)
            folded.state = "never closed" if change.synthesised else "closed"
        call = folded.call
        if call is not None and not call.ended and change.call_state != "forming":
            if change.synthesised:
                call.cut()
            else:
                call.end(change.final_text)
            folded.input = change.input if change.call_state is not None else call.input

    def _ordered(self) -> list[_Folded]:
        return sorted(self._slots.values(), key=self._key)

    def slots(self) -> list[Slot]:
        """The slots so far, in the wire's address order (as `Accumulator.slots()`)."""
        return [f.slot() for f in self._ordered()]

    def tool_calls(self) -> list[ToolCallView]:
        """Every tool call so far, as immutable views (as `Accumulator.tool_calls()`)."""
        every = sorted([*self._slots.values(), *self._hidden.values()],
                       key=self._key)
        return [f.call.view() for f in every if f.call is not None]
