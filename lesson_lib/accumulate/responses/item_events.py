"""The events that begin and end an output item: ``output_item.added`` and ``.done``.

An item is announced at an ``output_index`` with an ``id``: its slot opens
(`Items.add`). It is ended by the server's own finished item, which becomes
the item (the deltas' work is checked against it first): what its slots show
is said again from it (a name it adds, a text it restates), then its parts'
slots and its own close, its calls ending with them. An item announced again
with the same id is a ``duplicate_start`` (the first kept); another item at a
held index replaces it, and says what it dropped. An item ended without being
announced is taken as the server states it. A call id or name that the done
item states differently from the announcement is a ``server_restated``
warning.
"""

from __future__ import annotations

from ...wires.wire_events import WireEvent
from .compare import ServerComparison
from .objects import Item, get_path, preview
from .registry import Items
from .slots import SlotChanges, identity, own_shown
from .tools import ToolCallEvents
from .vocabulary import TOOL_ITEMS, Malformed, is_index

# The fields that name an item's call: stated at its start, expected the same at its end.
IDENTITY_FIELDS = ("call_id", "name")


def item_event(p: dict) -> tuple[int, dict]:
    """An output_item.added or .done: its output_index and item object."""
    oi, data = p.get("output_index"), p.get("item")
    if not isinstance(data, dict) or not is_index(oi):
        raise Malformed("needs an output_index and an item object")
    return oi, data     # type: ignore[return-value]


class ItemEvents:
    """The handlers of an item's start and end: the stream's `items`, the `compare`
    checks, the `tools` (an item's call ends with the item at the latest) and the `say`
    changes."""

    def __init__(self, items: Items, compare: ServerComparison, tools: ToolCallEvents,
                 say: SlotChanges) -> None:
        self.items = items
        self.note = items.note
        self.compare = compare
        self.tools = tools
        self.say = say

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
            self.say.reopen_item(item, ev.index)
            return
        self.say.renamed(item, before, ev.index)
        self.say.stated(item, (item.index,), shown, own_shown(item), ev.index)

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
        say, own = self.say, (item.index,)
        reopened = item.call is not call
        if reopened:                              # a call it turns out to be: said again,
            say.reopen_item(item, ev.index)       # closed
        else:
            say.renamed(item, before, ev.index)
            say.stated(item, own, shown, own_shown(item), ev.index)
        for address, part, _, text, summary in parts:
            part.state = "closed"
            say.stated(item, address, text, item.part_text(address[-1], summary), ev.index,
                       kind=part.type)
        if not reopened:
            say.done(own, was_open, item.call, own in ended, ev.index, data=data)
        for address, part, state, _, _ in parts:
            say.done(address, state == "open", part.call, address in ended, ev.index)

    def _end_calls(self, ev: WireEvent, item: Item, data: dict) -> set:
        """End the item's call and its parts' calls (structured output) with the server's
        item; the addresses whose call ended here."""
        ended = set()
        if item.type in TOOL_ITEMS:
            call = self.tools.call_of(item, ev)
            if not call.ended:
                ended.add((item.index,))
            raw = get_path(data, TOOL_ITEMS[item.type])
            if item.type == "function_call" and not item.input_done:
                self.tools.parse_input(ev, item, raw if isinstance(raw, str) else "")
            else:
                call.end(raw if isinstance(raw, str) else None, t=ev.t, event=ev.index)
        for ci in sorted(item.parts):
            part = item.parts[ci]
            if part.call is not None and not part.call.ended:
                part.call.end(part.text, t=ev.t, event=ev.index)
                ended.add((item.index, ci))
        return ended
