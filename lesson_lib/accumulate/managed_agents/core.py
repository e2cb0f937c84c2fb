"""The Managed Agents session accumulator: a session's events, previews reconciled, each
event once.

Lesson 7's two rules, in this order:

1. **Each event once.** Every event but a preview's has its own ``id``; one
   whose id was seen before is a delivery of the same event again, and is
   dropped (``duplicate_event``, a warning: the stream may deliver an event
   more than once). A preview's ``event_start`` and ``event_delta`` have no
   id of their own, so they are never dropped by guessing: a delta that
   repeats the text of the one before is text.
2. **The canonical event wins.** ``event_start`` opens a preview of an
   ``agent.message`` (or ``agent.thinking``) with the id it will carry; each
   ``event_delta`` adds a fragment to ``content[delta.index]`` (a new index
   opens the entry, the SDK's rule). The buffered event with that id is
   canonical: it *replaces* the preview (`SlotRestated` where its text
   differs, never appended to it). A preview still open when its model request
   ends (``span.model_request_end``) or the session goes idle never gets its
   canonical event: it is kept, its slot closed as ``preview_only`` (and
   noted, ``preview_only``).

Slots are addressed by arrival (0, 1, ...): one per entry of an agent
message's content, one per thinking, tool call, tool result and echoed user
event. Tool calls arrive whole (``input`` an object). The final object is the
session's events in order (a preview in the place its ``event_start`` came,
replaced there by its canonical event; one never reconciled keeps
``"preview": true``), with the session's last ``status``, the last idle's
``stop_reason`` and ``stop_details``, and the model requests' usage summed.

An event whose payload does not parse leaves the turn incomplete, whatever
follows. ``session.error`` with ``retry_status`` ``retrying`` is a warning (the server
retries on its own); one that gives up, an SSE ``error`` event, or an idle
whose stop reason is ``retries_exhausted`` is an in-band error. An idle ends
the turn (`TerminalReached`); the session running again after it (the
application answered a ``requires_action``) goes on.

That is the rule. Beside this module, each in the file named for it: `entry` (what a
slot holds, and a preview), `slots` (opening and closing slots; the events that are a
slot whole, a tool call among them) and `session` (the session's status, stop reason,
usage and errors).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ...diagnostics import Diagnostic
from ...wires import managed_agents as ma
from ...wires.wire_events import WireEvent
from ..base import Fragments
from ..changes import SlotRestated
from ..sessions import SessionAccumulator
from .entry import Entry, Preview
from .session import Session
from .slots import Slots

PREVIEW_ONLY = "preview_only"


class ManagedAgentsAccumulator(Session, Slots, SessionAccumulator):
    """Builds a session's events from its stream (see the module)."""

    wire = ma.WIRE
    blocks: dict[int, Entry]

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()
        # The session's events in order: a payload, or the preview standing in its place.
        self.events: list[dict | Preview] = []
        self.previews: dict[str, Preview] = {}
        self.status: str | None = None
        self.stop_reason: Any = None
        self.stop_details: Any = None
        self.usage: dict[str, int] | None = None

    # -- feeding -----------------------------------------------------------------------

    def feed(self, event: WireEvent) -> list:
        """Take one event of the stream (see the module docstring); return its changes."""
        self.changes = changes = []
        payload = self.payload_of(event)
        if payload is None:
            return changes
        kind = payload.get("type")
        if kind == ma.PING:
            return changes
        event_id = payload.get("id")
        if isinstance(event_id, str):
            if event_id in self.seen:
                self.delivered_again(kind, event_id, event)
                return changes
            self.seen.add(event_id)
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            if kind in ma.EVENT_TYPES:
                self.events.append(copy.deepcopy(payload))
            else:
                self.unknown_event(event, kind, "the session stream")
            return changes
        handler(self, payload, event)
        return changes


    def _event_start(self, payload: dict, event: WireEvent) -> None:
        shown = payload.get("event")
        kind = shown.get("type") if isinstance(shown, dict) else None
        event_id = shown.get("id") if isinstance(shown, dict) else None
        if kind not in ma.PREVIEWED or not isinstance(event_id, str):
            self.note("unknown_preview", f"{ma.EVENT_START} of {kind!r} is no preview this "
                      "module knows; kept as raw data", event=event, severity="warning",
                      raw=event.sse.data)
            return
        if event_id in self.previews or event_id in self.seen:
            self.note("duplicate_start", f"a second preview of {event_id}; the first is kept",
                      event=event, raw=event.sse.data)
            return
        preview = self.previews[event_id] = Preview(kind, event_id, len(self.events))
        self.events.append(preview)
        if kind == ma.AGENT_THINKING:      # start-only: no deltas follow
            preview.slots.append(self._open(kind, {"type": kind, "id": event_id}, event,
                                            event_id=event_id).index)

    def _event_delta(self, payload: dict, event: WireEvent) -> None:
        event_id, delta = payload.get("event_id"), payload.get("delta")
        preview = self.previews.get(event_id) if isinstance(event_id, str) else None
        if preview is None or not preview.open:
            code = "unknown_slot" if preview is None else "delta_after_stop"
            self.note(code, f"delta for {event_id!r}, " + ("which no event_start opened"
                      if preview is None else "after its preview was closed") +
                      "; not applied", event=event, raw=event.sse.data)
            return
        dtype = delta.get("type") if isinstance(delta, dict) else None
        content = delta.get("content") if isinstance(delta, dict) else None
        if dtype not in ma.DELTA_TYPES or not isinstance(content, dict):
            self.note("unknown_delta", f"delta type {dtype!r} is not known; kept as raw data",
                      event=event, severity="warning", raw=event.sse.data)
            return
        index = delta.get("index")
        index = 0 if index is None else index
        if type(index) is not int or not 0 <= index <= len(preview.slots):
            self.note("delta_mismatch", f"delta index {index!r} is beyond the preview's "
                      f"{len(preview.slots)} entries; not applied", event=event,
                      raw=event.sse.data)
            return
        text = content.get("text") if content.get("type") == ma.TEXT_BLOCK else None
        if index == len(preview.slots):      # a new entry, typed like the fragment
            if isinstance(text, str):
                entry = self._open(ma.AGENT_MESSAGE, {"type": ma.TEXT_BLOCK}, event,
                                   event_id=event_id, text=Fragments())
                self._append(entry, text, event)
            else:
                entry = self._open(ma.AGENT_MESSAGE, copy.deepcopy(content), event,
                                   event_id=event_id)
            preview.slots.append(entry.index)
            return
        entry = self.blocks[preview.slots[index]]
        if isinstance(text, str) and entry.text is not None:
            self._append(entry, text, event)
        # (any other fragment on an existing entry passes, as in the SDK's fold: deltas are
        # best-effort and the canonical event will say what the entry is)

    def _close_previews(self, event: WireEvent, why: str) -> None:
        """Close every preview still open: it will get no canonical event."""
        for preview in self.previews.values():
            if not preview.open:
                continue
            preview.open = False
            for address in preview.slots:
                self._close(self.blocks[address], event, reason=PREVIEW_ONLY, synthesised=True)
            self.note(PREVIEW_ONLY, f"the preview of {preview.kind} {preview.id} got no "
                      f"canonical event before {why}; its text is kept, marked as a preview",
                      event=event, severity="warning", slot=preview.slots[0]
                      if preview.slots else None)

    # -- canonical events ----------------------------------------------------------------

    def _message(self, payload: dict, event: WireEvent) -> None:
        data = copy.deepcopy(payload)
        content = data.get("content")
        if not isinstance(content, list):
            self.note("delta_mismatch", f"{ma.AGENT_MESSAGE} without a content list",
                      event=event, raw=event.sse.data)
            content = data["content"] = []
        preview = self.previews.get(data["id"])
        if preview is None:
            self.events.append(data)
            addresses: list[int] = []
        else:
            self.events[preview.position] = data
            addresses = preview.slots if preview.open else []
            if not preview.open:
                self.note("canonical_after_preview", f"{ma.AGENT_MESSAGE} {data['id']} came "
                          "after its preview was closed; its text is kept apart",
                          event=event, severity="warning")
            preview.open = False
        for i, item in enumerate(content):
            text = item.get("text") if isinstance(item, dict) else None
            if i < len(addresses) and (entry := self.blocks[addresses[i]]).text is not None \
                    and isinstance(text, str):
                if entry.text.text != text:
                    entry.text = Fragments(text)
                    self.changes.append(SlotRestated(event.index, entry.index, content=text))
                self._close(entry, event)
                continue
            if i < len(addresses):       # a preview entry the canonical event retypes
                entry = self.blocks[addresses[i]]
                entry.data = copy.deepcopy(item) if isinstance(item, dict) else {}
                self.changes.append(SlotRestated(event.index, entry.index,
                                                 content=entry.shown()))
                self._close(entry, event)
                continue
            if isinstance(text, str):
                entry = self._open(ma.AGENT_MESSAGE, {"type": ma.TEXT_BLOCK}, event,
                                   event_id=data["id"], text=Fragments())
                if text:
                    self._append(entry, text, event)
                self._close(entry, event)
            else:
                self._open(ma.AGENT_MESSAGE, copy.deepcopy(item) if isinstance(item, dict)
                           else {}, event, event_id=data["id"], whole=True)
        for address in addresses[len(content):]:    # previewed, then left out: replaced
            entry = self.blocks[address]
            entry.text = Fragments()
            self.changes.append(SlotRestated(event.index, address, content=""))
            self._close(entry, event)

    def _thinking(self, payload: dict, event: WireEvent) -> None:
        data = copy.deepcopy(payload)
        preview = self.previews.get(data["id"])
        if preview is not None and preview.open:
            preview.open = False
            self.events[preview.position] = data
            for address in preview.slots:
                self.blocks[address].data = data
                self._close(self.blocks[address], event)
            return
        self.events.append(data)
        self._open(ma.AGENT_THINKING, data, event, event_id=data["id"], whole=True)

    # -- ending ------------------------------------------------------------------------

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: close what is open (a preview cut), note a missing idle; return
        what that changed."""
        for preview in self.previews.values():
            preview.open = False
        return self.finish_session(sse_diagnostics, named=lambda entry: entry.kind,
                                   still="a preview", ended_by=ma.SESSION_IDLE)

    # -- reading -----------------------------------------------------------------------

    def final(self) -> dict:
        """The session's events so far (see the module), and its status."""
        events = [self._preview_event(e) if isinstance(e, Preview) else copy.deepcopy(e)
                  for e in self.events]
        return {"status": self.status, "stop_reason": copy.deepcopy(self.stop_reason),
                "stop_details": copy.deepcopy(self.stop_details),
                "usage": dict(self.usage) if self.usage is not None else None,
                "events": events}

    def _preview_event(self, preview: Preview) -> dict:
        out: dict[str, Any] = {"id": preview.id, "type": preview.kind, "preview": True}
        if preview.kind == ma.AGENT_MESSAGE:
            out["content"] = [self._content(self.blocks[a]) for a in preview.slots]
        return out

    @staticmethod
    def _content(entry: Entry) -> dict:
        if entry.text is None:
            return copy.deepcopy(entry.data)
        return {"type": ma.TEXT_BLOCK, "text": entry.text.text}

    def messages(self) -> dict[str, dict]:
        """Each agent message by id, as `final` states it (a preview's snapshot until its
        canonical event replaces it)."""
        out = {}
        for e in self.events:
            found = self._preview_event(e) if isinstance(e, Preview) else e
            if found.get("type") == ma.AGENT_MESSAGE and isinstance(found.get("id"), str):
                out[found["id"]] = copy.deepcopy(found)
        return out


_Acc = ManagedAgentsAccumulator
_HANDLERS = {
    ma.EVENT_START: _Acc._event_start, ma.EVENT_DELTA: _Acc._event_delta,
    ma.AGENT_MESSAGE: _Acc._message, ma.AGENT_THINKING: _Acc._thinking,
    **{kind: _Acc._call for kind in ma.CALLS},
    **{kind: _Acc._whole for kind in ma.RESULTS | {ma.USER_TOOL_CONFIRMATION}},
    **{kind: _Acc._passed for kind in ma.USER_EVENTS - {ma.USER_TOOL_CONFIRMATION}},
    **{kind: _Acc._running for kind in ma.RUNNING},
    ma.SESSION_IDLE: _Acc._idle, ma.SESSION_TERMINATED: _Acc._terminated,
    ma.SPAN_MODEL_REQUEST_END: _Acc._model_request_end,
    ma.SESSION_ERROR: _Acc._error, ma.ERROR: _Acc._error,
}
