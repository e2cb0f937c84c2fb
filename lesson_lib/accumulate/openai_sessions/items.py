"""The session's items: a function call arrives whole at its ``item.added`` (its
arguments are its input); a server item or an echoed one is a slot of its own, stated
again at its ``item.done``; a message's or a reasoning item's ``done`` states its parts
(mixed into `OpenAISessionsAccumulator`)."""

from __future__ import annotations

import copy
from typing import Any

from ...tool_calls import ToolCall
from ...wires import openai_sessions as oas
from ...wires.wire_events import WireEvent
from ..changes import UnknownEvent
from .entry import Entry


class Items:
    """Whole items and the calls among them."""

    blocks: dict[int, Entry]
    changes: list
    items: dict[str, int]
    parts: dict[tuple[str, str, int], int]

    def _item_added(self, payload: dict, event: WireEvent) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            self.note("malformed_event", f"{oas.ITEM_ADDED} without an item", event=event,
                      raw=event.sse.data)
            return
        kind, item_id = item.get("type"), item.get("id")
        if kind in (oas.MESSAGE_ITEM, oas.REASONING_ITEM) or str(item_id) in self.items:
            if kind == oas.MESSAGE_ITEM and item.get("role") != oas.ASSISTANT:
                self.changes.append(UnknownEvent(event.index, payload["type"],
                                                 copy.deepcopy(payload)))
            return            # their parts open slots of their own
        data = copy.deepcopy(item)
        whole = kind != oas.FUNCTION_CALL_ITEM and kind not in oas.SERVER_ITEMS
        entry = self._open(kind if isinstance(kind, str) else "item", data, event,
                           item_id=item_id if isinstance(item_id, str) else None,
                           whole=whole)
        self.items[str(item_id)] = entry.index
        if kind == oas.FUNCTION_CALL_ITEM:
            self._call(entry, event)

    def _call(self, entry: Entry, event: WireEvent) -> None:
        """A function call, whole: its arguments (an object, or JSON text) are its input."""
        arguments = entry.data.get("arguments")
        name, call_id = entry.identity()
        call = entry.call = ToolCall(name, call_id, kind=entry.kind, address=entry.index,
                                     given=arguments if isinstance(arguments, dict) else {},
                                     t=event.t, event=event.index, ended_by=oas.CALL_ENDED_BY)
        if isinstance(arguments, str):
            call.feed(arguments, t=event.t, event=event.index)
        elif not isinstance(arguments, dict):
            self.note("invalid_tool_input", f"{entry.label()} without an arguments object; "
                      "its input is {}", event=event, raw=event.sse.data)
        entry.state = "closed"
        self.close_call_slot(call, entry.index, cut=False, event=event, what=entry.label(),
                             how="done")

    def _item_done(self, payload: dict, event: WireEvent) -> None:
        item = payload.get("item")
        if not isinstance(item, dict):
            self.note("malformed_event", f"{oas.ITEM_DONE} without an item", event=event,
                      raw=event.sse.data)
            return
        kind, item_id = item.get("type"), item.get("id")
        if kind == oas.MESSAGE_ITEM:
            self._parts_done(item, oas.OUTPUT_TEXT_PART, item.get("content"), event)
        elif kind == oas.REASONING_ITEM:
            self._parts_done(item, oas.SUMMARY_TEXT_PART, item.get("summary"), event)
        elif str(item_id) in self.items:
            entry = self.blocks[self.items[str(item_id)]]
            if entry.state == "open":
                entry.data = copy.deepcopy(item)
                self._close(entry, event, data=entry.data)
        else:
            self._item_added(payload, event)
            found = self.items.get(str(item_id))
            if found is not None:
                self._close(self.blocks[found], event, data=copy.deepcopy(item))

    def _parts_done(self, item: dict, kind: str, parts: Any, event: WireEvent) -> None:
        item_id = str(item.get("id"))
        for index, part in enumerate(parts if isinstance(parts, list) else []):
            text = part.get("text") if isinstance(part, dict) else None
            if not isinstance(text, str):
                continue
            found = self.parts.get((kind, item_id, index))
            if found is None:
                entry = self._open(kind, {"type": kind}, event, item_id=item_id, text=text)
                self.parts[(kind, item_id, index)] = entry.index
            else:
                entry = self.blocks[found]
                self._stated(entry, text, event)
            self._close(entry, event)
        for (k, i, _), address in self.parts.items():
            if k == kind and i == item_id:
                self._close(self.blocks[address], event)
