"""What a Responses stream's changes have said so far, and the changes that say the rest.

The Responses accumulator keeps items and parts, not slots: a slot is what
`Item.slots()` shows of an item at a given moment. A part's slot replaces
its item's own slot when the first part arrives; ``*.done`` events and
``output_item.done`` restate text (the server's value wins); a call ends at
its ``*_arguments.done`` while its item stays open until the item is done.
`ShownSlots` turns those moments into the typed changes of
`lesson_lib.accumulate.changes`.

Two paths, so that the changes stay linear in the stream:

- the hot path: a delta into an open part or field whose slot the changes
  already showed is reported as it is applied (`part_grew`, `field_grew`:
  the fragment, never the text so far);
- the slow path: an event that did anything else touches its item
  (`Items.touched`), and `refresh` compares what the item shows now with
  what the changes said, slot by slot, and says the difference: a slot
  opened, renamed, grown, restated, removed, closed, a call ended. An item
  is refreshed a bounded number of times (its start, its parts' starts and
  ends, its done, the terminal, the end of the stream), each in the item's
  size.

Every item has an entry here, also when its own slot is not shown (a
message holding parts): the turn adapters read an item's start and end from
it, and the end carries the server's finished item (``data``).
"""

from __future__ import annotations

from typing import Any

from ..base import Slot
from ..changes import (
    SlotClosed,
    SlotOpened,
    SlotRemoved,
    SlotRenamed,
    SlotRestated,
    TextAppended,
    ToolInputGrew,
)
from ..fragments import Fragments
from .objects import MAIN_FIELD, Item
from .registry import Items

# The cheapest way to make a named tuple (one per delta): no keyword handling.
_new = tuple.__new__

# What kind of text each part type streams (the turn's channel).
CHANNELS = {"output_text": "text", "refusal": "refusal", "reasoning_text": "reasoning",
            "summary_text": "reasoning"}


class _Told:
    """One address, as the changes have described it so far."""

    __slots__ = ("item", "address", "kind", "label", "name", "call_id", "state", "text",
                 "shown", "call", "call_ended", "structured", "channel")

    def __init__(self, item: Item, slot: Slot, call: Any, shown: bool) -> None:
        self.item = item
        self.address = slot.address
        self.channel = CHANNELS.get(slot.kind, "other")
        self.kind, self.label, self.name = slot.kind, slot.label, slot.name
        self.call_id = slot.call_id
        self.state = "open"               # a slot that opens closed is closed by `_close`
        self.text = Fragments()
        self.shown = shown
        self.call = call
        self.call_ended = False
        self.structured = bool(call is not None and call.structured)


class ShownSlots:
    """The told state of every address, and the changes that bring it up to date.

    `out` is the list of the current event's changes (the accumulator hands a fresh
    one to each `feed`).
    """

    def __init__(self, items: Items, out: list) -> None:
        self.items = items
        self.out = out                          # the current event's changes (set per feed)
        self.told: dict[Any, _Told] = {}
        self._by_item: dict[int, list] = {}     # output_index -> addresses told

    def emit(self, change: Any) -> None:
        """Add one change to the current event's."""
        self.out.append(change)

    # -- the hot path ---------------------------------------------------------

    def part_grew(self, item: Item, part: Any, fragment: str, event: int) -> None:
        """A delta was appended to a part (or summary part) of `item`."""
        told = part.told
        touched = self.items.touched
        if told is None or not told.shown or item.index in touched:
            touched.add(item.index)
            return
        told.text.append(fragment)
        self.out.append(_new(TextAppended, (event, told.address, told.channel, fragment,
                                            told.kind)))

    def field_grew(self, item: Item, path: tuple, fragment: str, json_changes: tuple,
                   event: int) -> None:
        """A delta was appended to one string field of `item` (arguments, code...)."""
        told = item.told
        touched = self.items.touched
        if told is None or item.index in touched:
            touched.add(item.index)
            return
        if MAIN_FIELD.get(item.type) != path:
            return                                   # not what the item's slot shows
        if not told.shown or told.call is not item.call:
            touched.add(item.index)
            return
        told.text.append(fragment)
        if told.call is not None:
            self.out.append(_new(ToolInputGrew, (event, told.address, fragment, json_changes)))
        else:
            self.out.append(_new(TextAppended, (event, told.address, "other", fragment,
                                                path[-1])))

    # -- the slow path --------------------------------------------------------

    def refresh_touched(self, event: int | None) -> None:
        """Say what changed in every item the event touched."""
        touched = self.items.touched
        if touched:
            by_index = self.items.by_index
            for oi in sorted(touched):
                item = by_index.get(oi)
                if item is not None:
                    self.refresh(item, event)
            touched.clear()

    def refresh_all(self, event: int | None) -> None:
        """Say what changed in every item (the terminal event, the end of the stream)."""
        for item in self.items:
            self.refresh(item, event)
        self.items.touched.clear()

    def refresh(self, item: Item, event: int | None) -> None:
        """Compare what `item` shows now with what the changes said; emit the difference."""
        own = (item.index,)
        told = self.told.get(own)
        if told is not None and told.item is not item:
            self._forget(item.index, event)          # another item took its output_index
        slots = item.slots()
        opening, growing, closing = [], [], []
        mine = slots[-1] if slots and slots[-1].address == own else None
        facts = mine or Slot(own, item.type, item.label(), "", item.state, name=item.name,
                             call_id=item.call_id)
        self._compare(item, facts, item.call, mine is not None, event, opening, growing,
                      closing, data=item.done)
        for slot in slots:
            if slot is not mine:
                part = _part_of(item, slot.address)
                self._compare(item, slot, part.call if part is not None else None, True,
                              event, opening, growing, closing)
        for change in opening + growing + closing[::-1]:
            self.emit(change)

    def _forget(self, oi: int, event: int | None) -> None:
        for address in self._by_item.pop(oi, []):
            told = self.told.pop(address)
            if told.shown:
                self.emit(SlotRemoved(event, address))

    def _compare(self, item: Item, slot: Slot, call: Any, shown: bool, event: int | None,
                 opening: list, growing: list, closing: list, *, data: Any = None) -> None:
        address = slot.address
        told = self.told.get(address)
        if told is not None and told.call is not call:
            # The slot began to take input (a structured-output call made late): say it
            # again from its start, as a slot that takes input.
            self.told.pop(address)
            self._by_item[item.index].remove(address)
            if told.shown:
                opening.append(SlotRemoved(event, address))
            told = None
        if told is None:
            told = self._open(item, slot, call, shown, event, opening)
        elif told.shown and not shown:
            told.shown = False
            opening.append(SlotRemoved(event, address,
                                       replaced_by=tuple(self._by_item.get(item.index, ()))))
        if (slot.label, slot.name, slot.kind, slot.call_id) != \
                (told.label, told.name, told.kind, told.call_id):
            opening.append(SlotRenamed(
                event, address, slot.label,
                name=slot.name if slot.name != told.name else None,
                slot_kind=slot.kind if slot.kind != told.kind else None,
                call_id=slot.call_id if slot.call_id != told.call_id else None))
            told.label, told.name, told.kind, told.call_id = (slot.label, slot.name, slot.kind,
                                                               slot.call_id)
            told.channel = CHANNELS.get(slot.kind, "other")
        if told.shown:
            self._grow(told, address, slot.content, event, growing)
        elif call is not None and not told.structured:
            self._grow(told, address, call.raw, event, growing)   # a hidden slot's call
        self._close(told, address, slot.state, call, event, closing, data)

    def _open(self, item: Item, slot: Slot, call: Any, shown: bool, event: int | None,
              opening: list) -> _Told:
        told = _Told(item, slot, call, shown)
        self.told[slot.address] = told
        holder = item if slot.address == (item.index,) else _part_of(item, slot.address)
        holder.told = told
        self._by_item.setdefault(item.index, []).append(slot.address)
        own = slot.address == (item.index,)
        source = item.data if own else getattr(_part_of(item, slot.address), "data", None)
        # A structured-output part's call is named after the format, not its part.
        name = (call.name or None) if told.structured else slot.name
        call_id = call.call_id if told.structured else (item.call_id if own else None)
        opening.append(SlotOpened(
            event, slot.address, slot.kind, slot.label, name=name, call_id=call_id,
            item_id=item.id, takes_input=call is not None, data=source,
            structured=told.structured,
            json_arguments=call is None or call.json_arguments))
        if call is not None and not told.structured and call.raw:
            # The fold's call is fed what this call was fed; the slot's text may say
            # otherwise (a restatement, below).
            opening.append(ToolInputGrew(event, slot.address, call.raw, ()))
            told.text.append(call.raw)
        if not shown:
            opening.append(SlotRemoved(event, slot.address))
        return told

    def _grow(self, told: _Told, address: Any, new: str, event: int | None,
              growing: list) -> None:
        """The slot's text now against the text told: the new tail, or a restatement.
        An item that streams no field shows a description made from its data (a web
        search's query, an image's size): never text of the stream, always restated."""
        old = told.text.text
        if new == old:
            return
        derived = len(address) == 1 and told.item.type not in MAIN_FIELD
        if new.startswith(old) and not derived:
            fragment = new[len(old):]
            told.text.append(fragment)
            if told.call is not None and not told.structured:
                growing.append(ToolInputGrew(event, address, fragment, ()))
            else:
                growing.append(TextAppended(event, address, _channel(told), fragment,
                                            told.kind))
            return
        told.text = Fragments(new)
        growing.append(SlotRestated(event, address, content=new))

    def _close(self, told: _Told, address: Any, state: str, call: Any, event: int | None,
               closing: list, data: Any) -> None:
        ended_now = call is not None and call.ended and not told.call_ended
        if ended_now:
            told.call_ended = True
        call_facts: dict[str, Any] = {}
        if ended_now:
            call_facts = {"call_state": call.state, "input": call.input,
                          "final_text": call.raw if call.restated else None}
        elif call is not None and not call.ended:
            call_facts = {"call_state": "forming"}      # the slot closes, the call goes on
        if state != told.state and told.state == "open":
            told.state = state            # type: ignore[assignment]
            if state == "closed":
                closing.append(SlotClosed(event, address, "done", data=data, **call_facts))
            else:
                closing.append(SlotClosed(event, address, "end_of_stream", synthesised=True,
                                          data=data, **call_facts))
        elif ended_now:
            closing.append(SlotClosed(event, address, "arguments_done",
                                      synthesised=call.state == "cut", **call_facts))


def _part_of(item: Item, address: Any) -> Any:
    """The part (or summary part) at a part slot's address."""
    if len(address) == 3:
        return item.summary.get(address[2])
    return item.parts.get(address[1])


def _channel(told: _Told) -> str:
    return CHANNELS.get(told.kind, "other")
