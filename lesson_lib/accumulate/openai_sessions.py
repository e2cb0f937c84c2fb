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
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Mapping
from typing import Any

from ..diagnostics import Diagnostic
from ..tool_calls import ToolCall
from ..wires import openai_sessions as oas
from ..wires.wire_events import DONE, WireEvent
from .base import Fragments
from .changes import (
    InBandError,
    ResponseChanged,
    SlotClosed,
    SlotOpened,
    SlotRestated,
    TerminalReached,
    TextAppended,
    UnknownEvent,
)
from .indexed import IndexedAccumulator, IndexedBlock

_TEXT_KINDS = frozenset({oas.OUTPUT_TEXT_PART, oas.SUMMARY_TEXT_PART})


class _Entry(IndexedBlock):
    """One slot: a text part (of a message or a reasoning summary), or a whole item."""

    __slots__ = ("data", "text", "item_id")

    def __init__(self, index: int, kind: str, data: dict, text: Fragments | None,
                 item_id: str | None) -> None:
        super().__init__(index, kind)
        self.data = data
        self.text = text
        self.item_id = item_id

    @property
    def takes_input(self) -> bool:
        return self.kind == oas.FUNCTION_CALL_ITEM

    def identity(self) -> tuple[Any, Any]:
        name, call_id = self.data.get("name"), self.data.get("call_id")
        return (name if isinstance(name, str) else None,
                call_id if isinstance(call_id, str) else None)

    def answers(self) -> str | None:
        if self.kind != oas.FUNCTION_CALL_OUTPUT_ITEM:
            return None
        found = self.data.get("call_id")
        return found if isinstance(found, str) else None

    def from_server(self) -> bool:
        return self.kind in oas.SERVER_ITEMS

    def shown(self) -> str:
        if self.text is not None:
            return self.text.text
        output = self.data.get("output")
        return output if isinstance(output, str) else json.dumps(output) if output else ""

    def current_input(self) -> Any:
        if self.call is not None and self.call.ended:
            return self.call.input
        found = self.data.get("arguments")
        return found if isinstance(found, dict) else {}


class _Helper:
    """What the SDK's stream helper keeps, fed the payloads it accepts: ``_TurnState``
    (the root turn's id, whether it ended, whether the helper stops) and
    ``AgentTurnResultCollector`` (the turn, its final messages, the actions it waits on,
    whether the session failed), rule for rule, on the payloads as data."""

    def __init__(self, session_id: str | None) -> None:
        self.given = session_id            # the session the helper was asked to follow
        self.session_id = session_id       # the collector's
        self.turn_id: str | None = None
        self.turn_ended = False
        self.done = False
        self.turn: dict | None = None
        self.boundary = False
        self.session_failed = False
        self.required_actions: list = []
        self.messages: dict[str, tuple[int, dict]] = {}

    def take(self, payload: dict) -> None:
        """One accepted event, until the helper stops."""
        if self.done:
            return
        kind, turn = payload.get("type"), payload.get("turn")
        if self.given is None:             # no session named: the stream's own
            self.given = oas.session_id_of(payload) or payload.get("session_id")
        if kind == oas.TURN_CREATED and oas.is_root_turn(turn) and self.turn_id is None:
            self.turn_id = payload.get("turn_id")
        if kind in oas.TURN_ENDED and self.turn_id is not None \
                and payload.get("turn_id") == self.turn_id:
            self.turn_ended = True
        self._collect(kind, payload)
        self.done = self._terminal(kind, payload)

    def _terminal(self, kind: Any, payload: dict) -> bool:
        snapshot = oas.session_id_of(payload)
        return oas.helper_ends(kind, turn_ended=self.turn_ended,
                               turn_started=self.turn_id is not None,
                               same_session=snapshot is not None and snapshot == self.given)

    def _collect(self, kind: Any, payload: dict) -> None:
        if self.boundary:
            return
        turn, snapshot = payload.get("turn"), oas.session_id_of(payload)
        ended = (isinstance(self.turn, dict)
                 and self.turn.get("status") in oas.TURN_DONE_STATUSES)
        if kind == oas.SESSION_CREATED:
            self.session_id = snapshot
        elif kind == oas.TURN_CREATED:
            if self.turn is None and oas.is_root_turn(turn):
                self.turn = copy.deepcopy(turn)
                self.session_id = payload.get("session_id")
        elif kind in oas.TURN_ENDED:
            if self.turn is not None and payload.get("turn_id") == self.turn.get("id"):
                self.turn = copy.deepcopy(turn)
                self.required_actions = []
        elif kind == oas.ITEM_DONE:
            self._message(payload)
        elif kind == oas.SESSION_IN_PROGRESS:
            self.required_actions = []
        elif kind == oas.SESSION_REQUIRES_ACTION:
            self.session_id = snapshot
            session = payload.get("session")
            actions = session.get("required_actions") if isinstance(session, dict) else None
            self.required_actions = copy.deepcopy(actions) if isinstance(actions, list) else []
        elif kind == oas.SESSION_FAILED:
            self.session_id = snapshot
            self.session_failed = self.boundary = True
        elif kind == oas.SESSION_BUDGET_REACHED and snapshot is not None:
            if self.turn is None and self.session_id in (None, snapshot):
                self.session_id = snapshot
                self.boundary = True
            elif self.turn is not None and snapshot == self.session_id and ended:
                self.required_actions = []
                self.boundary = True
        elif kind == oas.SESSION_IDLE and ended:
            self.required_actions = []
            self.boundary = True

    def _message(self, payload: dict) -> None:
        """The final messages: the root turn's completed answers, by item id."""
        item = payload.get("item")
        if (isinstance(item, dict) and self.turn is not None
                and item.get("turn_id") == self.turn.get("id")
                and item.get("type") == oas.MESSAGE_ITEM
                and item.get("phase") != oas.COMMENTARY and item.get("status") == oas.COMPLETED):
            index = payload.get("output_index")
            self.messages[str(item.get("id"))] = (index if type(index) is int else 0,
                                                  copy.deepcopy(item))

    def final(self) -> dict:
        """The helper's state as data (see the module)."""
        return {"turn": copy.deepcopy(self.turn),
                "messages": [copy.deepcopy(m) for _, m in
                             sorted(self.messages.values(), key=lambda pair: pair[0])],
                "required_actions": copy.deepcopy(self.required_actions),
                "session_failed": self.session_failed, "turn_ended": self.turn_ended,
                "done": self.done}


class OpenAISessionsAccumulator(IndexedAccumulator):
    """Builds a session turn from its stream (see the module)."""

    wire = oas.WIRE
    blocks: dict[int, _Entry]

    def __init__(self, request: Mapping[str, Any] | None = None) -> None:
        super().__init__()
        asked = (request or {}).get("session_id")
        self.session_id: str | None = asked if isinstance(asked, str) and asked else None
        self.recent = oas.RecentIds()
        self.parts: dict[tuple[str, str, int], int] = {}    # (kind, item, index) -> slot
        self.items: dict[str, int] = {}                     # a whole item's slot
        self.helper = _Helper(self.session_id)
        self.turn_id: str | None = None          # the root turn, as the course reads it
        self.turn_ended = False
        self.turn_status: str | None = None
        # The course's own reading.
        self.status: str | None = None
        self.stopped = False
        self.errored = False
        self.damaged = False

    # -- feeding -----------------------------------------------------------------------

    def feed(self, event: WireEvent) -> list:
        """Take one event of the stream (see the module); return its changes."""
        self.changes = changes = []
        if event.type == DONE:
            return changes
        payload = event.payload
        if event.parse_error is not None or not isinstance(payload, dict):
            self.damaged = True
            self.complete = False
            self.note("unparseable_json", f"event {event.type!r} skipped: "
                      f"{event.parse_error or 'the payload is not a JSON object'}",
                      event=event, raw=event.sse.data)
            return changes
        kind = payload.get("type")
        if not self.recent.first_time(payload.get(oas.ID_FIELD)):
            self.note("duplicate_event", f"{kind} {payload.get(oas.ID_FIELD)} delivered "
                      "again; dropped (the stream delivers at least once)", event=event,
                      severity="warning", raw=event.sse.data)
            return changes
        self.helper.take(payload)
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            if kind not in oas.EVENT_TYPES:
                changes.append(UnknownEvent(event.index, kind if isinstance(kind, str)
                                            else None, payload))
                self.note("unknown_event", f"event type {kind!r} is not part of the session "
                          "stream; kept as raw data", event=event, severity="warning",
                          raw=event.sse.data, payload=payload)
            return changes
        handler(self, payload, event)
        return changes

    # -- slots -------------------------------------------------------------------------

    def _open(self, kind: str, data: dict, event: WireEvent, *, item_id: str | None,
              text: str | None = None, whole: bool = False) -> _Entry:
        entry = self.blocks[len(self.blocks)] = _Entry(
            len(self.blocks), kind, data, Fragments() if text is not None else None, item_id)
        name, call_id = entry.identity()
        self.changes.append(SlotOpened(
            event.index, entry.index, kind, entry.label(), name=name,
            call_id=call_id or entry.answers(), item_id=item_id, whole=whole,
            takes_input=entry.takes_input, data=None if text is not None else data,
            input=entry.current_input() if entry.takes_input else None,
            content=_arguments_text(data) if entry.takes_input else entry.shown(),
            ended_by=oas.CALL_ENDED_BY if entry.takes_input else None))
        if text:
            self._append(entry, text, event)
        if whole:
            self._close(entry, event)
        return entry

    def _close(self, entry: _Entry, event: WireEvent | None, *, data: Any = None,
               synthesised: bool = False) -> None:
        if entry.state != "open":
            return
        entry.state = "never closed" if synthesised else "closed"
        self.changes.append(SlotClosed(event.index if event is not None else None,
                                       entry.index, "done" if event is not None
                                       else "end_of_stream", synthesised=synthesised,
                                       data=data))

    def _append(self, entry: _Entry, text: str, event: WireEvent) -> None:
        entry.text.append(text)  # type: ignore[union-attr]
        self.changes.append(TextAppended(event.index, entry.index,
                                         "reasoning" if entry.kind == oas.SUMMARY_TEXT_PART
                                         else "text", text))

    def _part(self, kind: str, payload: dict, event: WireEvent, index_field: str) -> _Entry:
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

    def _stated(self, entry: _Entry, text: Any, event: WireEvent) -> None:
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

    def _delta(self, entry: _Entry, payload: dict, event: WireEvent) -> None:
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

    # -- items -------------------------------------------------------------------------

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

    def _call(self, entry: _Entry, event: WireEvent) -> None:
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

    # -- the turn ------------------------------------------------------------------------

    def _turn_created(self, payload: dict, event: WireEvent) -> None:
        turn = payload.get("turn")
        if oas.is_root_turn(turn) and self.turn_id is None:
            self.turn_id = payload.get("turn_id")
            self.changes.append(ResponseChanged(event.index, {"id": self.turn_id}))

    def _turn_ended(self, payload: dict, event: WireEvent) -> None:
        turn = payload.get("turn")
        turn = turn if isinstance(turn, dict) else {}
        if self.turn_id is None and oas.is_root_turn(turn):
            # A connection opened after its turn began (the application answered and
            # reads on): the session's own agent's turn is the root turn.
            self.turn_id = payload.get("turn_id")
        if self.turn_id is None or payload.get("turn_id") != self.turn_id:
            if payload.get("type") == oas.TURN_FAILED:
                self.note("subagent_turn_failed", "a subagent's turn failed; the session "
                          "goes on", event=event, severity="warning", raw=event.sse.data)
            return
        self.turn_ended = True
        self.turn_status = turn.get("status") if isinstance(turn.get("status"), str) else None
        fields: dict[str, Any] = {"turn_status": self.turn_status}
        usage = payload.get("usage") or turn.get("usage")
        if isinstance(usage, dict):
            fields["usage"] = copy.deepcopy(usage)
        self.changes.append(ResponseChanged(event.index, fields))
        if payload.get("type") == oas.TURN_FAILED:
            error = oas.read_error(oas.TURN_FAILED, payload)
            kind = error.kind if error is not None else None
            self._failed(f"{kind or 'turn_failed'}: "
                         f"{(error and error.message) or 'the turn failed'}",
                         copy.deepcopy(turn.get("error")), kind, event)

    # -- the session ---------------------------------------------------------------------

    def _snapshot(self, payload: dict, event: WireEvent) -> dict:
        """What a session event's snapshot changes: the status, the model, the usage."""
        session = payload.get("session")
        session = session if isinstance(session, dict) else {}
        found = oas.session_id_of(payload)
        if self.session_id is None and found is not None:
            self.session_id = found
        agent = session.get("agent")
        fields: dict[str, Any] = {"status": session.get("status")}
        if isinstance(agent, dict) and isinstance(agent.get("model"), str):
            fields["model"] = agent["model"]
        self.status = session.get("status") if isinstance(session.get("status"), str) else None
        return fields

    def _same_session(self, payload: dict) -> bool:
        found = oas.session_id_of(payload)
        return found is not None and (self.session_id is None or found == self.session_id)

    def _created(self, payload: dict, event: WireEvent) -> None:
        self.changes.append(ResponseChanged(event.index, self._snapshot(payload, event)))

    def _in_progress(self, payload: dict, event: WireEvent) -> None:
        self.stopped = self.complete = False
        self.changes.append(ResponseChanged(event.index, {**self._snapshot(payload, event),
                                                          "finish": None}))

    def _requires_action(self, payload: dict, event: WireEvent) -> None:
        fields = self._snapshot(payload, event)
        session = payload.get("session")
        actions = session.get("required_actions") if isinstance(session, dict) else None
        actions = actions if isinstance(actions, list) else []
        waits = [a.get("call_id") for a in actions if isinstance(a, dict)
                 and a.get("type") == oas.FUNCTION_CALL_ACTION]
        self._end_step(oas.REQUIRES_ACTION, payload, event,
                       {**fields, "waits_on": tuple(w for w in waits if isinstance(w, str)),
                        "actions": tuple(a.get("type") for a in actions
                                         if isinstance(a, dict))})

    def _idle(self, payload: dict, event: WireEvent) -> None:
        fields = self._snapshot(payload, event)
        if not self.turn_ended:       # the session at rest before its turn: no end
            self.changes.append(ResponseChanged(event.index, fields))
            return
        self._end_step(self.turn_status or "?", payload, event, fields)

    def _budget(self, payload: dict, event: WireEvent) -> None:
        fields = self._snapshot(payload, event)
        same = self._same_session(payload)
        if not same:
            self.changes.append(ResponseChanged(event.index, fields))
            return
        self._end_step(oas.BUDGET_REACHED, payload, event, fields)

    def _session_failed(self, payload: dict, event: WireEvent) -> None:
        fields = self._snapshot(payload, event)
        error = oas.read_error(oas.SESSION_FAILED, payload)
        session = payload.get("session")
        said = session.get("error") if isinstance(session, dict) else None
        self._failed(f"session failed: {(error and error.message) or 'no reason given'}",
                     copy.deepcopy(said), error.kind if error is not None else None, event)
        self._end_step(oas.FAILED, payload, event, fields)

    def _end_step(self, raw: str, payload: dict, event: WireEvent,
                  fields: dict[str, Any]) -> None:
        session = payload.get("session")
        usage = session.get("usage") if isinstance(session, dict) else None
        if isinstance(usage, dict) and not self.turn_ended:
            fields = {**fields, "usage": copy.deepcopy(usage)}   # the turn's own is to come
        self.stopped = True
        self.complete = not self.errored and not self.damaged
        self.changes.append(ResponseChanged(event.index, {**fields, "finish": raw}))
        self.changes.append(TerminalReached(event.index, payload["type"]))

    def _error(self, payload: dict, event: WireEvent) -> None:
        error = oas.read_error(oas.ERROR, payload)
        kind = error.kind if error is not None else None
        self._failed(f"{kind or 'error'}: {(error and error.message) or event.sse.data}",
                     copy.deepcopy(payload.get("error")), kind, event)

    def _environment_failed(self, payload: dict, event: WireEvent) -> None:
        self.note("environment_failed", "the session's environment failed",
                  event=event, severity="warning", raw=event.sse.data)

    def _failed(self, message: str, error: Any, kind: str | None, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        self.changes.append(InBandError(event.index, message, error, kind))
        self.note("in_band_error", message, event=event, raw=event.sse.data, error=error)

    # -- ending ------------------------------------------------------------------------

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: close what is open, note a missing end; return what that
        changed."""
        if not self.begin_finish(sse_diagnostics):
            return []
        for entry in self.ordered_blocks():
            if entry.state == "open":
                self.note("block_never_stopped", f"slot {entry.index} ({entry.label()}) was "
                          "still open when the stream ended", slot=entry.index,
                          severity="warning" if self.complete else "error")
                self._close(entry, None, synthesised=True)
        if not self.stopped and not self.errored:
            self.note("no_terminal", "the stream ended before the session went idle or "
                      "stopped to wait: what arrived is kept, but the turn is incomplete")
        return self.end_changes("in_band_error" if self.errored else "cut")

    # -- reading -----------------------------------------------------------------------

    def final(self) -> dict:
        """What the SDK's helper knows of the turn so far (see the module)."""
        return self.helper.final()


def _arguments_text(data: dict) -> str:
    """A call's arguments as the text the slot shows: JSON text as sent, an object dumped."""
    found = data.get("arguments")
    return found if isinstance(found, str) else json.dumps(
        found if isinstance(found, dict) else {}, ensure_ascii=False)


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
