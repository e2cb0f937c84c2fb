"""The changes a Responses event makes to its slots, said by the handler that makes them.

The accumulator keeps items and parts; a slot is how the slot view shows
one (`Item.slots()`): one slot per part and summary part, and an item's own
slot while it has neither (a function call, a web search, a message before
its first part). Each handler says what it did to those slots as it does
it, through one `SlotChanges` per accumulator:

- an item or a part begins: `open_item`, `open_part` (the item's own slot
  gives way to its first part's: a ``SlotRemoved`` naming it);
- text grows: the fragment only (`TextAppended`, `call_grew`); a ``*.done`` or an
  ``output_item.done`` states the text whole: the new tail when it extends
  what was shown, else a ``SlotRestated`` (`stated`);
- a call ends at its ``*_arguments.done`` (`call_ended`), a slot at its done
  (`done`: its call may end with it) or at the end of the stream (`close`);
- a slot whose identity changes is renamed (`renamed`); one that turns out to
  take input (a call made late) is said again from its start (`reopen_item`,
  `reopen_part`).

One event's changes come out in a stated order: every opening, then every
growth, then every closing (a part's before its item's), so a reader of the
changes never meets text for a slot not yet opened, nor a slot closed before
its last text.
"""

from __future__ import annotations

from typing import Any

from ..changes import (
    SlotClosed,
    SlotOpened,
    SlotRemoved,
    SlotRenamed,
    SlotRestated,
    TextAppended,
    ToolInputGrew,
)
from .objects import Item, Part
from .vocabulary import CHANNELS, MAIN_FIELD

# The cheapest way to make a named tuple (one per delta): no keyword handling.
_new = tuple.__new__


def _call_facts(call: Any, ended_now: bool) -> dict:
    """What a close says of the slot's call: how it ended (when it ended with this close),
    or that it is still forming."""
    if call is None:
        return {}
    if ended_now:
        return {"call_state": call.state, "input": call.input,
                "final_text": call.raw if call.restated else None}
    return {} if call.ended else {"call_state": "forming"}


class SlotChanges:
    """The slot changes of the event being fed, kept in three lists until `flush`."""

    __slots__ = ("opening", "growing", "closing")

    def __init__(self) -> None:
        self.opening: list = []
        self.growing: list = []
        self.closing: list = []

    def flush(self, out: list) -> None:
        """Hand the changes said so far to `out`: openings, growth, then closings (a
        part's before its item's, the later part first)."""
        out += self.opening
        out += self.growing
        out += reversed(self.closing)
        self.opening.clear()
        self.growing.clear()
        self.closing.clear()

    # -- beginnings -------------------------------------------------------------

    def open_item(self, item: Item, event: int | None) -> None:
        """An item began (announced, assumed, or met finished): its own slot (given way to
        its parts' at once when it has any), a close if it is done, and its parts' slots."""
        self._own(item, event)
        for address, part, summary in item.part_slots():
            self.open_part(item, address, part, event, summary=summary, first=False)

    def reopen_item(self, item: Item, event: int | None) -> None:
        """An item's own slot said again from its start, as it is now: its call was made
        late (an item that turns out to be a call, a call met only at its end)."""
        if not item.hidden:
            self.opening.append(SlotRemoved(event, (item.index,)))
        self._own(item, event)
        if item.hidden:
            self._summaries_renamed(item, event)

    def _own(self, item: Item, event: int | None) -> None:
        own, call = (item.index,), item.call
        label, name, kind, call_id = identity(item)
        self.opening.append(SlotOpened(
            event, own, kind, label, name=name, call_id=item.call_id, item_id=item.id,
            takes_input=call is not None, data=item.data,
            json_arguments=call is None or call.json_arguments,
            ended_by=call.ended_by if call is not None else None))
        raw = call.raw if call is not None else ""
        if raw:
            self.opening.append(ToolInputGrew(event, own, raw, ()))
        if item.hidden:
            self.opening.append(SlotRemoved(event, own))
        else:
            self.stated(item, own, raw, item.own_text(), event)
        if item.state != "open":
            self.close(own, item.state, call, event, data=item.done,
                       ended_now=call is not None and call.ended)

    def open_part(self, item: Item, address: tuple, part: Part, event: int | None, *,
                  summary: bool = False, first: bool = True) -> None:
        """A part (or summary part) began; when it is the item's `first`, the item's own
        slot gives way to it."""
        if first and len(item.parts) + len(item.summary) == 1:
            own = (item.index,)
            # (An item opened by this same event gives way before anything replaced it.)
            fresh = any(c.address == own for c in self.opening if type(c) is SlotOpened)
            self.opening.append(SlotRemoved(event, own, replaced_by=() if fresh else (own,)))
        call = part.call
        structured = call is not None and call.structured
        self.opening.append(SlotOpened(
            event, address, part.type, item.part_label(address), name=(call.name or None) if structured else None,
            call_id=call.call_id if structured else None, item_id=item.id,
            takes_input=call is not None, data=part.data, structured=structured,
            json_arguments=call is None or call.json_arguments,
            ended_by=call.ended_by if call is not None else None))
        text = item.part_text(address[-1], summary)
        if text:
            self.growing.append(TextAppended(event, address, CHANNELS.get(part.type, "other"),
                                             text, part.type))
        if part.state != "open":
            self.close(address, part.state, call, event,
                       ended_now=call is not None and call.ended)

    def reopen_part(self, item: Item, address: tuple, part: Part, event: int | None) -> None:
        """A part's slot began to take input (a structured-output call made late): said
        again from its start."""
        self.opening.append(SlotRemoved(event, address))
        self.open_part(item, address, part, event, first=False)

    def renamed(self, item: Item, before: tuple, event: int | None) -> None:
        """The item's identity (`identity`) was `before`; say what changed of it."""
        now = identity(item)
        if now != before:
            label, name, kind, call_id = now
            self.opening.append(SlotRenamed(
                event, (item.index,), label, name=name if name != before[1] else None,
                slot_kind=kind if kind != before[2] else None,
                call_id=call_id if call_id != before[3] else None))
            if kind != before[2]:
                self._summaries_renamed(item, event)

    def _summaries_renamed(self, item: Item, event: int | None) -> None:
        """A summary part's label names its item's type: said again when that changes."""
        for address, _, summary in item.part_slots():
            if summary:
                self.opening.append(SlotRenamed(event, address, item.part_label(address)))

    def part_renamed(self, item: Item, address: tuple, part: Part, kind: str,
                     event: int | None) -> None:
        """A part assumed as `kind` was announced as another type."""
        if part.type != kind:
            self.opening.append(SlotRenamed(event, address, item.part_label(address),
                                            slot_kind=part.type))

    # -- growth -----------------------------------------------------------------

    def grew(self, address: tuple, channel: str, fragment: str, field: str,
             event: int) -> None:
        """A slot's text grew by `fragment` (the hot path: one tuple)."""
        self.growing.append(_new(TextAppended, (event, address, channel, fragment, field)))

    def call_grew(self, address: tuple, fragment: str, json_changes: tuple, event: int) -> None:
        """A call's arguments grew by `fragment`, with the partial-JSON changes it caused."""
        self.growing.append(_new(ToolInputGrew, (event, address, fragment, json_changes)))

    def stated(self, item: Item, address: tuple, old: str, new: str, event: int | None, *,
               kind: str | None = None) -> None:
        """A slot's text went from `old` to `new` in one statement: the new tail when it
        extends the old text, else the whole text restated. An item's own slot that
        streams no field shows a description made from its data: always restated."""
        if new == old:
            return
        derived = len(address) == 1 and item.type not in MAIN_FIELD
        if new.startswith(old) and not derived:
            tail = new[len(old):]
            if len(address) == 1 and item.call is not None:
                self.growing.append(ToolInputGrew(event, address, tail, ()))
            else:
                kind = kind or item.type
                self.growing.append(TextAppended(event, address, CHANNELS.get(kind, "other"),
                                                 tail, kind))
            return
        self.growing.append(SlotRestated(event, address, content=new))

    def own_stated(self, item: Item, shown: str, event: int) -> None:
        """The item's own slot showed `shown`: say what it shows now (`stated`)."""
        self.stated(item, (item.index,), shown, own_shown(item), event)

    def part_stated(self, item: Item, n: int, summary: bool, shown: str, event: int) -> None:
        """The slot of part `n` (a summary part's, `summary`) showed `shown`: say what it
        shows now (`stated`)."""
        self.stated(item, item.part_address(n, summary), shown, item.part_text(n, summary),
                    event, kind=item.parts_of(summary)[n].type)

    # -- endings ----------------------------------------------------------------

    def call_ended(self, address: tuple, call: Any, event: int | None) -> None:
        """A call ended before its slot (its ``*_arguments.done`` or ``*.done``)."""
        self.closing.append(SlotClosed(event, address, "arguments_done",
                                       synthesised=call.state == "cut",
                                       **_call_facts(call, True)))

    def done(self, address: tuple, was_open: bool, call: Any, ended_now: bool,
             event: int | None, *, data: Any = None) -> None:
        """A slot's done event: it closes if it was open (its call ending with it when
        `ended_now`); a slot closed already says only its call's end."""
        if was_open:
            self.close(address, "closed", call, event, data=data, ended_now=ended_now)
        elif ended_now:
            self.call_ended(address, call, event)

    def close(self, address: tuple, state: str, call: Any, event: int | None, *,
              data: Any = None, ended_now: bool = False) -> None:
        """A slot closed: at its done (`state` ``closed``) or at the end of the stream;
        `ended_now` when its call ended with it."""
        cut = state != "closed"
        self.closing.append(SlotClosed(event, address, "end_of_stream" if cut else "done",
                                       synthesised=cut, data=data,
                                       **_call_facts(call, ended_now)))


def own_shown(item: Item) -> str:
    """What the item's own slot shows of its text: its field or description, or (a slot
    given way to parts) its call's text."""
    if item.hidden:
        return item.call.raw if item.call is not None else ""
    return item.own_text()


def identity(item: Item) -> tuple:
    """What names an item's own slot: its label, name, kind and call id."""
    call = item.call
    if item.hidden:
        return item.label(), item.name, item.type, item.call_id
    if call is None:
        return item.label(), None, item.type, None
    return item.label(), call.name or None, item.type, call.call_id
