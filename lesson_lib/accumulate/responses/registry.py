"""The output items of a Responses stream, found by ``output_index`` or by ``item_id``.

Every handler of the accumulator reaches items through one `Items` object
(`item_for`): it checks the item id against the output index, finds an item
by id when the index is wrong, or assumes an item never announced
(``event_before_start``), whose slot opens there and then (`add`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...wires.wire_events import WireEvent
from ..changes import SlotRemoved
from .objects import Item
from .slots import SlotChanges
from .vocabulary import is_index


class Items:
    """The items by output_index and by id, their lookups, and the once-only notes."""

    def __init__(self, note: Callable[..., Any], say: SlotChanges) -> None:
        self.note = note
        self.say = say
        self.by_index: dict[int, Item] = {}
        self.by_id: dict[str, Item] = {}
        self._once: set[tuple] = set()     # diagnostics said once per place
        # Makes a tool call item's `ToolCall` (`ToolCallEvents.call_of`): set by the
        # accumulator, since the tools find their items here.
        self.call_of: Callable[..., Any] = lambda item, ev: None

    def __iter__(self):
        """The items in output order."""
        return (self.by_index[i] for i in sorted(self.by_index))

    def once_note(self, key: tuple, code: str, message: str, **kw: Any) -> None:
        """A diagnostic said once per `key` (a place), however often the event repeats."""
        if key not in self._once:
            self._once.add(key)
            self.note(code, message, **kw)

    def register(self, item: Item) -> None:
        """Put `item` at its output_index (and under its id)."""
        self.by_index[item.index] = item
        if item.id is not None:
            self.by_id[item.id] = item

    def add(self, item: Item, ev: WireEvent | None, *, call: bool = True) -> None:
        """A new item at its output_index: registered, its call made (a tool call item,
        unless not `call`), and its slots opened. An item it replaces there gives up its
        slots first."""
        event = ev.index if ev is not None else None
        old = self.by_index.get(item.index)
        if old is not None:
            for address in [(old.index,), *(a for a, _, _ in old.part_slots())]:
                if address != (old.index,) or not old.hidden:
                    self.say.opening.append(SlotRemoved(event, address))
        self.register(item)
        if call:
            self.call_of(item, ev)
        self.say.open_item(item, event)

    def elsewhere(self, ev: WireEvent, oi: int, item: Item, iid: str, said: str) -> Item:
        """An event names item `iid`, but `item` is at its output_index: the item named
        wins when known (``unknown_slot``, `said` and where it was applied)."""
        other = self.by_id.get(iid)
        self.note("unknown_slot", said + (f"applied to {iid} (output_index {other.index})"
                                          if other else "applied by output_index"),
                  event=ev, slot=(oi,))
        return other or item

    def item_for(self, ev: WireEvent, p: dict, kind: str, *, call: bool = False) -> Item:
        """The item an event addresses: checked, found by id, or assumed (with its call
        made at once when the event feeds it: `call`)."""
        oi, iid = p.get("output_index"), p.get("item_id")
        item = self.by_index.get(oi) if type(oi) is int else None
        if item is not None and item.state == "open" and item.type == kind and (
                iid is None or iid == item.id):
            return item                               # the usual case: nothing to check
        if not is_index(oi):
            item = None
        if item is not None and isinstance(iid, str):
            if item.id is None:
                item.id = iid
                self.by_id[iid] = item
            elif iid != item.id:
                item = self.elsewhere(ev, oi, item, iid, f"{ev.type} names item {iid}, but "   # type: ignore[arg-type]
                                      f"output_index {oi} holds item {item.id}; ")
        elif item is None and isinstance(iid, str):
            item = self.by_id.get(iid)
            if item is not None and oi is not None:
                self.note("unknown_slot", f"{ev.type} for item {iid} says output_index {oi}, but "
                          f"the item was announced at {item.index}; applied to the item",
                          event=ev, slot=(item.index,))
        if item is None:
            index = oi if is_index(oi) else max(self.by_index, default=-1) + 1
            data: dict[str, Any] = {"id": iid if isinstance(iid, str) else None, "type": kind,
                                    "status": "in_progress"}
            if kind == "message":
                data.update(role="assistant", content=[])
            item = Item(index, data, assumed=True)   # type: ignore[arg-type]
            self.note("event_before_start",
                      f"{ev.type} for an item never announced (output_index {index}, "
                      f"item {iid}): assumed a {kind} item", severity="warning", event=ev,
                      slot=(index,))
            self.add(item, ev, call=call)
        elif item.state != "open":
            self.once_note(("late", item.index), "delta_after_stop",
                           f"{ev.type} after {item.label()} was done: kept in our slot, but the "
                           "server's finished item stands", severity="warning", event=ev,
                           slot=(item.index,))
        if item.type != kind and not item.assumed:
            self.once_note(("kind", item.index, kind), "delta_mismatch",
                           f"{ev.type} addresses {item.label()}, which is not a {kind}; "
                           "accumulated anyway", event=ev, slot=(item.index,))
        return item
