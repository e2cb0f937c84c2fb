"""The OpenAI Agents session accumulator: a session's events, each once, as slots and as
the SDK's stream helper keeps them.

Lesson 7's rule of delivery first: **each event once, by its id.** Every event
carries an ``event_id``; one whose id is among the last
`wires.openai_sessions.RECENT_EVENT_LIMIT` accepted is a delivery of the same
event again and is dropped (``duplicate_event``, a warning), the window the
SDK's helper keeps (``_TurnState``). An event without an id cannot be told from
a new one: it is never dropped by guessing (a delta that repeats the text of
the one before is text).

Slots are addressed by arrival (0, 1, ...): one per content part of an
assistant message (``item_id``, ``content_index``), one per reasoning summary
part (``item_id``, ``summary_index``), one per whole item (a function call, its
output, a server item, an echoed or other item). A function call arrives whole
(``arguments`` an object) at its ``item.added``, where the SDK's helper runs it.
The server's statement of a text (``output_text.done``, a part's or an item's
``done``) is the text: where it differs from the deltas it replaces them
(`SlotRestated`, a ``text_restated`` warning), never appended. A command's output
streams too (``command_execution_output.delta``); its item's ``done`` states it whole,
and that is what the slot keeps.

`final()` is what the SDK's helper knows of the turn (``AgentTurnResultCollector``
and ``_TurnState``): the root ``turn`` object as last stated, its final
``messages`` (completed, not ``commentary``, by ``output_index``), the
``required_actions`` the session waits on, whether the session ``failed``,
whether the root turn ended, and whether the helper would stop (``done``). The
helper reads on past ``requires_action`` and past a budget reached mid-turn; the
course's step ends there (`wires.openai_sessions.ends_step`).

An ``error`` event is an in-band error (the stream goes on, the turn is not
whole); ``turn.failed`` of the root turn and ``agent.session.failed`` are too.
``agent.session.in_progress`` after a step's end (the application answered)
takes the end back: the session goes on.

That is the rule. Beside this module, each in the file named for it: `entry` (what a
slot holds), `items` (whole items, a function call among them), `session` (the root
turn and the session: snapshots, where a step ends, errors) and `helper` (what the
SDK's stream helper keeps: `final()`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...diagnostics import Diagnostic
from ...wires import openai_sessions as oas
from ...wires.wire_events import WireEvent
from ..base import Fragments
from ..changes import SlotClosed, SlotOpened, SlotRestated, TextAppended
from ..sessions import SessionAccumulator
from .entry import Entry, arguments_text
from .helper import SdkHelper
from .items import Items
from .session import Session


class OpenAISessionsAccumulator(Session, Items, SessionAccumulator):
    """Builds a session turn from its stream (see the module)."""

    wire = oas.WIRE
    blocks: dict[int, Entry]

    def __init__(self, request: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        asked = (request or {}).get("session_id")
        self.session_id: str | None = asked if isinstance(asked, str) and asked else None
        self.recent = oas.RecentIds()
        self.parts: dict[tuple[str, str, int], int] = {}    # (kind, item, index) -> slot
        self.items: dict[str, int] = {}                     # a whole item's slot
        self.helper = SdkHelper(self.session_id)
        self.turn_id: str | None = None          # the root turn, as the course reads it
        self.turn_ended = False
        self.turn_status: str | None = None
        # The course's own reading.
        self.status: str | None = None

    # -- feeding -----------------------------------------------------------------------

    def feed(self, event: WireEvent) -> list:
        """Take one event of the stream (see the module); return its changes."""
        self.changes = changes = []
        payload = self.payload_of(event)
        if payload is None:
            return changes
        kind = payload.get("type")
        if not self.recent.first_time(payload.get(oas.ID_FIELD)):
            self.delivered_again(kind, payload.get(oas.ID_FIELD), event)
            return changes
        self.helper.take(payload)
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            if kind not in oas.EVENT_TYPES:
                self.unknown_event(event, kind, "the session stream")
            return changes
        handler(self, payload, event)
        return changes

    # -- slots -------------------------------------------------------------------------

    def _open(self, kind: str, data: dict, event: WireEvent, *, item_id: str | None,
              text: str | None = None, whole: bool = False) -> Entry:
        entry = self.blocks[len(self.blocks)] = Entry(
            len(self.blocks), kind, data, Fragments() if text is not None else None, item_id)
        name, call_id = entry.identity()
        self.changes.append(SlotOpened(
            event.index, entry.index, kind, entry.label(), name=name,
            call_id=call_id or entry.answers(), item_id=item_id, whole=whole,
            takes_input=entry.takes_input, data=None if text is not None else data,
            input=entry.current_input() if entry.takes_input else None,
            content=arguments_text(data) if entry.takes_input else entry.shown(),
            ended_by=oas.CALL_ENDED_BY if entry.takes_input else None))
        if text:
            self._append(entry, text, event)
        if whole:
            self._close(entry, event)
        return entry

    def _close(self, entry: Entry, event: WireEvent | None, *, data: Any = None,
               synthesised: bool = False) -> None:
        if entry.state != "open":
            return
        entry.state = "never closed" if synthesised else "closed"
        self.changes.append(SlotClosed(event.index if event is not None else None,
                                       entry.index, "done" if event is not None
                                       else "end_of_stream", synthesised=synthesised,
                                       data=data))

    def _append(self, entry: Entry, text: str, event: WireEvent) -> None:
        entry.text.append(text)  # type: ignore[union-attr]
        self.changes.append(TextAppended(event.index, entry.index,
                                         "reasoning" if entry.kind == oas.SUMMARY_TEXT_PART
                                         else "text", text))

    def _part(self, kind: str, payload: dict, event: WireEvent, index_field: str) -> Entry:
        """The slot of a message's content part or a summary part, opened when new."""
        item_id, index = payload.get("item_id"), payload.get(index_field)
        key = (kind, str(item_id), index if type(index) is int else 0)
        found = self.parts.get(key)
        if found is not None:
            return self.blocks[found]
        entry = self._open(kind, {"type": kind}, event,
                           item_id=item_id if isinstance(item_id, str) else None, text="")
        self.parts[key] = entry.index
        return entry

    def _stated(self, entry: Entry, text: Any, event: WireEvent) -> None:
        """The server states a part's whole text: it is the text (restated where the
        deltas built another)."""
        if not isinstance(text, str) or entry.text is None or entry.state != "open":
            return
        if entry.text.text != text:
            if entry.text.text:
                self.note("text_restated", f"{entry.label()}: the server's text differs from "
                          "its deltas; the server's is kept", event=event, severity="warning",
                          slot=entry.index)
            entry.text = Fragments(text)
            self.changes.append(SlotRestated(event.index, entry.index, content=text))

    # -- text and reasoning ----------------------------------------------------------------

    def _text_delta(self, payload: dict, event: WireEvent) -> None:
        entry = self._part(oas.OUTPUT_TEXT_PART, payload, event, "content_index")
        self._delta(entry, payload, event)

    def _summary_delta(self, payload: dict, event: WireEvent) -> None:
        entry = self._part(oas.SUMMARY_TEXT_PART, payload, event, "summary_index")
        self._delta(entry, payload, event)

    def _delta(self, entry: Entry, payload: dict, event: WireEvent) -> None:
        delta = payload.get("delta")
        if entry.state != "open":
            self.note("delta_after_stop", f"a delta for {entry.label()} after it was done; "
                      "not applied", event=event, raw=event.sse.data)
        elif isinstance(delta, str) and delta:
            self._append(entry, delta, event)

    def _part_added(self, payload: dict, event: WireEvent) -> None:
        kind, field = ((oas.OUTPUT_TEXT_PART, "content_index")
                       if payload.get("type") == oas.CONTENT_PART_ADDED
                       else (oas.SUMMARY_TEXT_PART, "summary_index"))
        self._part(kind, payload, event, field)

    def _text_done(self, payload: dict, event: WireEvent) -> None:
        kind, field = ((oas.OUTPUT_TEXT_PART, "content_index")
                       if payload.get("type") == oas.OUTPUT_TEXT_DONE
                       else (oas.SUMMARY_TEXT_PART, "summary_index"))
        self._stated(self._part(kind, payload, event, field), payload.get("text"), event)

    def _part_done(self, payload: dict, event: WireEvent) -> None:
        kind, field = ((oas.OUTPUT_TEXT_PART, "content_index")
                       if payload.get("type") == oas.CONTENT_PART_DONE
                       else (oas.SUMMARY_TEXT_PART, "summary_index"))
        entry = self._part(kind, payload, event, field)
        part = payload.get("part")
        self._stated(entry, part.get("text") if isinstance(part, dict) else None, event)
        self._close(entry, event)

    # -- ending ------------------------------------------------------------------------

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: close what is open, note a missing end; return what that
        changed."""
        return self.finish_session(sse_diagnostics, named=lambda entry: entry.label(),
                                   still="open", ended_by="the session went idle or "
                                   "stopped to wait")

    # -- reading -----------------------------------------------------------------------

    def final(self) -> dict:
        """What the SDK's helper knows of the turn so far (see the module)."""
        return self.helper.final()


_Acc = OpenAISessionsAccumulator
_HANDLERS = {
    oas.OUTPUT_TEXT_DELTA: _Acc._text_delta, oas.SUMMARY_TEXT_DELTA: _Acc._summary_delta,
    oas.CONTENT_PART_ADDED: _Acc._part_added, oas.SUMMARY_PART_ADDED: _Acc._part_added,
    oas.OUTPUT_TEXT_DONE: _Acc._text_done, oas.SUMMARY_TEXT_DONE: _Acc._text_done,
    oas.CONTENT_PART_DONE: _Acc._part_done, oas.SUMMARY_PART_DONE: _Acc._part_done,
    oas.ITEM_ADDED: _Acc._item_added, oas.ITEM_DONE: _Acc._item_done,
    oas.TURN_CREATED: _Acc._turn_created,
    **{kind: _Acc._turn_ended for kind in oas.TURN_ENDED},
    oas.SESSION_CREATED: _Acc._created, oas.SESSION_IN_PROGRESS: _Acc._in_progress,
    oas.SESSION_REQUIRES_ACTION: _Acc._requires_action, oas.SESSION_IDLE: _Acc._idle,
    oas.SESSION_BUDGET_REACHED: _Acc._budget, oas.SESSION_FAILED: _Acc._session_failed,
    oas.ERROR: _Acc._error, oas.ENVIRONMENT_FAILED: _Acc._environment_failed,
}
