"""The Managed Agents slots: opened by arrival, closed once; the events that are a slot of
their own whole (a result, an echoed user event), the application's events passed on, and a
tool call, which arrives whole (mixed into `ManagedAgentsAccumulator`)."""

from __future__ import annotations

import copy
import json

from ...tool_calls import ToolCall
from ...wires import managed_agents as ma
from ...wires.wire_events import WireEvent
from ..base import Fragments
from ..changes import SlotClosed, SlotOpened, TextAppended, UnknownEvent
from .entry import Entry, event_id_of


class Slots:
    """Opening and closing slots, and the events that are whole slots."""

    blocks: dict[int, Entry]
    changes: list
    events: list

    def _open(self, kind: str, data: dict, event: WireEvent, *, event_id: str | None,
              text: Fragments | None = None, whole: bool = False) -> Entry:
        entry = self.blocks[len(self.blocks)] = Entry(len(self.blocks), kind, data, text,
                                                       event_id)
        name, call_id = entry.identity()
        self.changes.append(SlotOpened(
            event.index, entry.index, kind, entry.label(), name=name,
            call_id=call_id or entry.answers(), item_id=event_id, whole=whole,
            takes_input=entry.takes_input, data=data if whole or entry.takes_input else None,
            input=entry.input if entry.takes_input else None,
            content=json.dumps(entry.input, ensure_ascii=False) if entry.takes_input
            else entry.shown(),
            ended_by=ma.CALL_ENDED_BY if entry.takes_input else None))
        if whole:
            self._close(entry, event)
        return entry

    def _close(self, entry: Entry, event: WireEvent | None, *, reason: str | None = None,
               synthesised: bool = False) -> None:
        entry.state = "never closed" if synthesised else "closed"
        self.changes.append(SlotClosed(event.index if event is not None else None,
                                       entry.index, "done" if event is not None
                                       else "end_of_stream", synthesised=synthesised,
                                       reason=reason))

    def _whole(self, payload: dict, event: WireEvent) -> None:
        """A whole event that is a slot of its own: a result, an echoed user event."""
        data = copy.deepcopy(payload)
        self.events.append(data)
        self._open(payload["type"], data, event, event_id=event_id_of(payload), whole=True)

    def _passed(self, payload: dict, event: WireEvent) -> None:
        """What the application sent, echoed (its message, an interrupt): the turn's input,
        not its output; passed on as it is."""
        self.events.append(copy.deepcopy(payload))
        self.changes.append(UnknownEvent(event.index, payload["type"], copy.deepcopy(payload)))

    def _call(self, payload: dict, event: WireEvent) -> None:
        data = copy.deepcopy(payload)
        self.events.append(data)
        if not isinstance(data.get("input"), dict):
            self.note("invalid_tool_input", f"{payload['type']} without an input object; "
                      "its input is {}", event=event, raw=event.sse.data)
            data["input"] = {}
        entry = self._open(payload["type"], data, event, event_id=event_id_of(payload))
        if data.get(ma.PERMISSION_FIELD) == ma.ASK:
            self.note("held_for_confirmation", f"{entry.label()} is held until the "
                      f"application confirms it ({ma.USER_TOOL_CONFIRMATION})", event=event,
                      severity="info", slot=entry.index)
        call = entry.call = ToolCall(entry.identity()[0], entry.identity()[1],
                                     kind=entry.kind, address=entry.index, given=entry.input,
                                     t=event.t, event=event.index, ended_by=ma.CALL_ENDED_BY)
        entry.state = "closed"
        entry.input = self.close_call_slot(call, entry.index, cut=False, event=event,
                                           what=entry.label(), how="done")


    def _append(self, entry: Entry, text: str, event: WireEvent) -> None:
        entry.text.append(text)  # type: ignore[union-attr]
        self.changes.append(TextAppended(event.index, entry.index, "text", text))

