"""The output items of a Responses stream: found by ``output_index`` or ``item_id``,
begun by ``output_item.added`` and ended by ``output_item.done``.

Every handler of the accumulator reaches items through one `Items` object
(`Items.item_for`): it checks the item id against the output index, finds an
item by id when the index is wrong, or assumes an item never announced
(``event_before_start``), whose slot opens there and then (`Items.add`).

An item is announced at an ``output_index`` with an ``id``: its slot opens.
It is ended by the server's own finished item, which becomes the item (the
deltas' work is checked against it first): what its slots show is said again
from it (a name it adds, a text it restates), then its parts' slots and its
own close, its calls ending with them. An item announced again with the same
id is a ``duplicate_start`` (the first kept); another item at a held index
replaces it, and says what it dropped. An item ended without being announced
is taken as the server states it. A call id or name that the done item states
differently from the announcement is a ``server_restated`` warning.

`Handlers` is what every group of handlers (`ItemEvents` here, and the parts',
the tools' and the server tools') works with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...wires import responses as r
from ...wires.wire_events import WireEvent
from ..changes import SlotRemoved
from .compare import ServerComparison, preview
from .objects import Item, get_path
from .slots import SlotChanges, identity, own_shown
from .vocabulary import TOOL_ITEMS, Malformed, is_index


class Items:
    """The items by output_index and by id, their lookups, and the once-only notes."""

    def __init__(self, note: Callable[..., Any], slot_changes: SlotChanges) -> None:
        self.note = note
        self.slot_changes = slot_changes
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
                    self.slot_changes.opening.append(SlotRemoved(event, address))
        self.register(item)
        if call:
            self.call_of(item, ev)
        self.slot_changes.open_item(item, event)

    def elsewhere(self, ev: WireEvent, oi: int, item: Item, iid: str, said: str) -> Item:
        """An event names item `iid`, but `item` is at its output_index: the item named
        wins when known (``unknown_slot``, `said` and where it was applied). An id that
        names no item at all is an id the server gave this event alone (`rotated`)."""
        other = self.by_id.get(iid)
        if other is None:
            self.rotated(ev, said + "applied by output_index")
            return item
        self.note("unknown_slot", said + (f"applied to {iid} (output_index {other.index})"
                                          if other else "applied by output_index"),
                  event=ev, slot=(oi,))
        return other or item

    def rotated(self, ev: WireEvent, said: str, **extra: Any) -> None:
        """An id that disagrees with the one announced and names nothing else: some
        compatible servers give every event a fresh id (the response's and each item's)
        while ``output_index`` stays put. Nothing is lost: events are keyed by
        output_index, and a ``rotating_ids`` warning says so once for the stream."""
        self.once_note(("rotating_ids",), "rotating_ids",
                       f"{said}: this server's ids change from event to event, so events "
                       "are matched by output_index (said once for the stream)",
                       severity="warning", event=ev, **extra)

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
            item = self._assume(ev, oi, iid, kind, call)
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

    def _assume(self, ev: WireEvent, oi: Any, iid: Any, kind: str, call: bool) -> Item:
        """An item never announced, assumed of `kind` at `oi` (else after the last item),
        with the id the event names (``event_before_start``), and its slot opened."""
        index = oi if is_index(oi) else max(self.by_index, default=-1) + 1
        data: dict[str, Any] = {"id": iid if isinstance(iid, str) else None, "type": kind,
                                "status": "in_progress"}
        if kind == r.MESSAGE_ITEM:
            data.update(role="assistant", content=[])
        item = Item(index, data, assumed=True)
        self.note("event_before_start", f"{ev.type} for an item never announced (output_index "
                  f"{index}, item {iid}): assumed a {kind} item", severity="warning", event=ev,
                  slot=(index,))
        self.add(item, ev, call=call)
        return item


class Handlers:
    """What every group of handlers works with: the stream's `items` (and their `note`),
    the `compare` checks against the server's objects, the `tools` (the
    `tools.ToolCallEvents`, where the handlers need them) and the `slot_changes` an
    event makes (`slots.SlotChanges`)."""

    def __init__(self, items: Items, compare: ServerComparison, tools: Any,
                 slot_changes: SlotChanges) -> None:
        self.items = items
        self.note = items.note
        self.compare = compare
        self.tools = tools
        self.slot_changes = slot_changes


# The fields that name an item's call: stated at its start, expected the same at its end.
IDENTITY_FIELDS = ("call_id", "name")


def item_event(p: dict) -> tuple[int, dict]:
    """An output_item.added or .done: its output_index and item object."""
    oi, data = p.get("output_index"), p.get("item")
    if not isinstance(data, dict) or not is_index(oi):
        raise Malformed("needs an output_index and an item object")
    return oi, data     # type: ignore[return-value]


class ItemEvents(Handlers):
    """The handlers of an item's start and end (an item's call ends with the item at the
    latest)."""

    def on_item_added(self, ev: WireEvent, p: dict) -> None:
        """An item announced: its slot opens (or an assumed item learns what it is)."""
        oi, data = item_event(p)
        existing = self.items.by_index.get(oi)
        if existing is not None:
            if existing.assumed:                  # met through its deltas first
                self._announce(ev, existing, data)
                return
            if existing.id is not None and existing.id == data.get("id"):
                self.note("duplicate_start", f"item {existing.id} announced again at "
                          f"output_index {oi}; the first announcement is kept",
                          severity="warning", event=ev, slot=(oi,))
                return
            self.note("duplicate_start", f"output_index {oi} already holds {existing.label()} "
                      f"(id {existing.id}); the new item {data.get('id')} replaces it and what "
                      "the first one built is dropped", event=ev, slot=(oi,),
                      raw=repr(preview(existing.build(), 400)))
        self.items.add(Item(oi, data), ev)

    def _announce(self, ev: WireEvent, item: Item, data: dict) -> None:
        """An item met through its deltas is announced: its slot is renamed and shows what
        the announcement adds; a call it turns out to be says its slot again."""
        before, shown, call = identity(item), own_shown(item), item.call
        item.announce(data)
        self.items.register(item)
        if self.tools.call_of(item, ev) is not call:
            self.slot_changes.reopen_item(item, ev.index)
            return
        self.slot_changes.renamed(item, before, ev.index)
        self.slot_changes.own_stated(item, shown, ev.index)

    def _identity_restated(self, ev: WireEvent, item: Item, done: dict) -> None:
        """A field that names the item or its call (``call_id``, ``name``) said one thing
        at ``output_item.added`` and another at its done: a ``server_restated`` warning
        (the server's item stands; the official SDK's helper raises here)."""
        for key in IDENTITY_FIELDS:
            said, now = item.data.get(key), done.get(key)
            if isinstance(said, str) and isinstance(now, str) and said != now:
                self.note("server_restated", f"output[{item.index}].{key}: "
                          f"output_item.added said {said!r}, output_item.done says {now!r}; "
                          "the server's item stands", severity="warning", event=ev,
                          slot=(item.index,), path=f"output[{item.index}].{key}",
                          against=ev.type, ours=said, theirs=now)

    def _item_of_done(self, ev: WireEvent, oi: int, data: dict) -> tuple[Item, bool]:
        """The item an ``output_item.done`` ends, found by index or id; or (never
        announced: true as the second value) taken as the server states it, its slot
        opened."""
        iid = data.get("id")
        items = self.items
        item = items.by_index.get(oi)
        if item is not None and item.id is not None and isinstance(iid, str) and iid != item.id:
            item = items.elsewhere(ev, oi, item, iid, f"output_item.done for item {iid} at "
                                   f"output_index {oi}, where item {item.id} was announced; ")
        if item is None and isinstance(iid, str):
            item = items.by_id.get(iid)
        if item is None:
            self.note("event_before_start", f"item {iid} at output_index {oi} ends without ever "
                      "having been announced (no output_item.added): the server's item is taken "
                      "as it is", severity="warning", event=ev, slot=(oi,))
            item = Item(oi, data)
            items.add(item, ev)
            return item, True
        return item, False

    def on_item_done(self, ev: WireEvent, p: dict) -> None:
        """An item ended: the server's item becomes the item; its slots close."""
        oi, data = item_event(p)
        item, taken = self._item_of_done(ev, oi, data)
        self._end_item(ev, item, data, taken)

    def take_stated(self, ev: WireEvent, oi: int, data: dict, out: list) -> None:
        """An item a lifecycle event already holds finished (a response read from its
        start after output began), said to `out` as if it had streamed: announced, its
        call's input ended (as its ``*_arguments.done`` would), then done."""
        item = Item(oi, data)
        self.items.add(item, ev)
        if (oi,) in self._end_calls(ev, item, data):
            self.slot_changes.call_ended((oi,), item.call, ev.index)
        self.slot_changes.flush(out)          # the call's end before the item's
        self._end_item(ev, item, data, True)
        self.slot_changes.flush(out)

    def _end_item(self, ev: WireEvent, item: Item, data: dict, taken: bool) -> None:
        """`data`, the server's finished item, ends `item` (`taken`: never announced, so
        there is nothing streamed to check against it)."""
        oi = item.index
        if item.done is not None:
            self.note("duplicate_stop", f"output_item.done again for {item.label()}; the "
                      "later item is kept", severity="warning", event=ev, slot=(oi,))
        before, shown, call = identity(item), own_shown(item), item.call
        parts = [(address, part, part.state, item.part_text(address[-1], summary), summary)
                 for address, part, summary in item.part_slots()]
        if item.assumed:
            item.announce(data)
            self.items.register(item)
        elif not taken:
            self._identity_restated(ev, item, data)
        if not taken:
            self.compare.check_streamed(ev, item, data)
        was_open = item.state == "open"
        item.done = data
        item.state = "closed"
        ended = self._end_calls(ev, item, data)
        slot_changes, own = self.slot_changes, (item.index,)
        reopened = item.call is not call
        if reopened:                              # a call it turns out to be: said again,
            slot_changes.reopen_item(item, ev.index)       # closed
        else:
            slot_changes.renamed(item, before, ev.index)
            slot_changes.own_stated(item, shown, ev.index)
        for address, part, _, text, summary in parts:
            part.state = "closed"
            slot_changes.part_stated(item, address[-1], summary, text, ev.index)
        if not reopened:
            slot_changes.done(own, was_open, item.call, own in ended, ev.index, data=data)
        for address, part, state, _, _ in parts:
            slot_changes.done(address, state == "open", part.call, address in ended, ev.index)

    def _end_calls(self, ev: WireEvent, item: Item, data: dict) -> set:
        """End the item's call and its parts' calls (structured output) with the server's
        item; the addresses whose call ended here."""
        ended = set()
        if item.type in TOOL_ITEMS:
            call = self.tools.call_of(item, ev)
            if not call.ended:
                ended.add((item.index,))
            raw = get_path(data, TOOL_ITEMS[item.type])
            if item.type == r.FUNCTION_CALL_ITEM and not item.input_done:
                self.tools.parse_input(ev, item, raw if isinstance(raw, str) else "")
            else:
                call.end(raw if isinstance(raw, str) else None, t=ev.t, event=ev.index)
        for ci in sorted(item.parts):
            part = item.parts[ci]
            if part.call is not None and not part.call.ended:
                part.call.end(part.text, t=ev.t, event=ev.index)
                ended.add((item.index, ci))
        return ended
