"""The output items of a Responses stream, found by ``output_index`` or by ``item_id``.

Every handler of the accumulator reaches items through one `Items` object:
the hot path (`open_item`, a dict lookup and two checks) and the slow path
(`item_for`), which checks the item id against the output index, finds an
item by id when the index is wrong, or assumes an item never announced
(``event_before_start``). It also remembers which items an event changed in
a way the hot path does not report itself (`touched`), so that the
accumulator can say what changed (`lesson_lib.accumulate.responses.shown`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...wires.wire_events import WireEvent
from .objects import Item
from .vocabulary import is_index


class Items:
    """The items by output_index and by id, their lookups, and the once-only notes."""

    def __init__(self, note: Callable[..., Any]) -> None:
        self.note = note
        self.by_index: dict[int, Item] = {}
        self.by_id: dict[str, Item] = {}
        self.touched: set[int] = set()     # output indexes the current event touched
        self._once: set[tuple] = set()     # diagnostics said once per place

    def __iter__(self):
        """The items in output order."""
        return (self.by_index[i] for i in sorted(self.by_index))

    def once_note(self, key: tuple, code: str, message: str, **kw: Any) -> None:
        """A diagnostic said once per `key` (a place), however often the event repeats."""
        if key not in self._once:
            self._once.add(key)
            self.note(code, message, **kw)

    def touch(self, item: Item) -> None:
        """Mark `item` as changed by this event beyond what the hot path reports."""
        self.touched.add(item.index)

    def register(self, item: Item) -> None:
        """Put `item` at its output_index (and under its id)."""
        self.by_index[item.index] = item
        if item.id is not None:
            self.by_id[item.id] = item
        self.touched.add(item.index)

    def elsewhere(self, ev: WireEvent, oi: int, item: Item, iid: str, said: str) -> Item:
        """An event names item `iid`, but `item` is at its output_index: the item named
        wins when known (``unknown_slot``, `said` and where it was applied)."""
        other = self.by_id.get(iid)
        self.note("unknown_slot", said + (f"applied to {iid} (output_index {other.index})"
                                          if other else "applied by output_index"),
                  event=ev, slot=(oi,))
        return other or item

    def open_item(self, ev: WireEvent, p: dict, kind: str) -> Item:
        """The item a delta addresses: the hot path is one dict lookup and two checks."""
        oi = p.get("output_index")
        item = self.by_index.get(oi) if type(oi) is int else None
        iid = p.get("item_id")
        if item is None or (iid is not None and iid != item.id) or item.state != "open":
            item = self.item_for(ev, p, kind)
        return item

    def item_for(self, ev: WireEvent, p: dict, kind: str) -> Item:
        """The item an event addresses (slow path): checked, found by id, or assumed."""
        oi, iid = p.get("output_index"), p.get("item_id")
        item = self.by_index.get(oi) if is_index(oi) else None   # type: ignore[arg-type]
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
            self.register(item)
            self.note("event_before_start",
                      f"{ev.type} for an item never announced (output_index {index}, "
                      f"item {iid}): assumed a {kind} item", severity="warning", event=ev,
                      slot=(index,))
        elif item.state != "open":
            self.once_note(("late", item.index), "delta_after_stop",
                           f"{ev.type} after {item.label()} was done: kept in our slot, but the "
                           "server's finished item stands", severity="warning", event=ev,
                           slot=(item.index,))
        if item.type != kind and not item.assumed:
            self.once_note(("kind", item.index, kind), "delta_mismatch",
                           f"{ev.type} addresses {item.label()}, which is not a {kind}; "
                           "accumulated anyway", event=ev, slot=(item.index,))
        self.touched.add(item.index)
        return item
