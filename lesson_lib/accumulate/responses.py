"""Lesson 2, the OpenAI Responses wire: events in, the final `Response` out.

A Responses stream announces every output item with
``response.output_item.added`` (at an ``output_index``, with an ``id``),
streams into it (parts by ``content_index``, summary parts by
``summary_index``, or one string field such as a function call's
``arguments``), and ends it with ``response.output_item.done``, which carries
the server's own item. The stream ends with one terminal event
(``response.completed``, ``response.incomplete`` or ``response.failed``)
carrying the server's whole `Response`, or with an ``error`` event.

`ResponsesAccumulator` follows those addresses and builds the `Response` the
non-streaming API would have returned:

- identity travels once: items are found by ``output_index`` and checked by
  ``item_id``; an event for an item (or part) never announced is accepted,
  and the assumption it needed is an ``event_before_start`` diagnostic (a
  stream resumed mid-way, or a proxy that drops events);
- ``sequence_number`` is checked when present: ``sequence_gap``,
  ``sequence_duplicate`` (an exact repeat is skipped), ``sequence_out_of_order``;
  older streams carry none, and that is fine;
- every ``*.done`` event is the server's statement of what the deltas built:
  where they disagree, a ``server_object_differs`` diagnostic, and the
  server's value is kept; at ``output_item.done`` the server's item becomes
  the item;
- the terminal event's `Response` is checked against ours, output item by
  output item (``server_object_differs``, with the path and both values);
  the fields only the terminal knows (``usage``, ``status``, ``error``,
  ``incomplete_details``, timestamps) are taken from it;
- ``error`` events come nested (``{"error": {type, code, message, param}}``,
  as recorded) or flat (as published): both are an ``in_band_error``, and a
  ``response.failed`` after one is honoured;
- an unknown event type passes through as an ``unknown_event`` warning;
- tool calls (lesson 3): each ``function_call``, ``custom_tool_call`` and
  ``mcp_call`` item has a `ToolCall` fed every argument delta, ended by its
  ``*_arguments.done`` (or ``output_item.done``); with ``text.format``
  ``json_schema`` each ``output_text`` part is a structured-output
  `ToolCall` too, ended by ``output_text.done``.

The per-event path is a dict lookup on the event type and a few attribute
reads; text is kept as fragments and joined on demand, so feeding is linear.

The accumulator is put together from one module per concern:
`responses_events` (the event vocabulary), `responses_sequence`
(``sequence_number``), `responses_items` (items and parts),
`responses_parts` (content and summary parts), `responses_tools` (string
fields and tool calls), `responses_server_tools` (server-side tools, audio)
and `responses_compare` (the server's own objects against ours).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..diagnostics import Diagnostic
from ..wire_events import WireEvent
from ..wires.responses import TERMINAL_STATUS
from .base import Accumulator, Slot
from .responses_compare import ServerComparison
from .responses_events import (
    FIELD_DELTAS,
    FIELD_DONES,
    LIFECYCLE,
    PART_DELTAS,
    PART_DONES,
    STATUS_EVENTS,
    TOOL_ITEMS,
    UNADDRESSED,
    Malformed,
    is_index,
)
from .responses_items import Item, clone, get_path, preview
from .responses_parts import PartEvents
from .responses_sequence import SequenceNumbers
from .responses_server_tools import ServerToolEvents
from .responses_tools import ToolCallEvents, structured_name


class ResponsesAccumulator(PartEvents, ToolCallEvents, ServerToolEvents, ServerComparison,
                           Accumulator):
    """OpenAI Responses events -> the `Response` object, with diagnostics.

    >>> from lesson_lib.wire_events import WireEvent
    >>> from lesson_lib.sse import ServerSentEvent
    >>> acc = ResponsesAccumulator()
    >>> def ev(i, p): return WireEvent(i, ServerSentEvent(p["type"], ""), p["type"], p)
    >>> acc.feed(ev(0, {"type": "response.output_text.delta", "output_index": 0,
    ...                 "content_index": 0, "item_id": "msg_1", "delta": "Hi"}))
    >>> acc.final()["output"][0]["content"][0]["text"], acc.diagnostics[0].code
    ('Hi', 'event_before_start')
    """

    wire = "openai-responses"

    def __init__(self) -> None:
        super().__init__()
        self._items: dict[int, Item] = {}
        self._by_id: dict[str, Item] = {}
        self._response: dict | None = None     # the latest lifecycle event's response
        self._terminal: dict | None = None     # the terminal event's response
        self.terminal: str | None = None       # "completed" | "incomplete" | "failed"
        self.error: dict | None = None         # the in-band error: code, message, type, param
        self._started = False
        self._created = False
        self._seq = SequenceNumbers(self.note)
        self._once: set[tuple] = set()         # diagnostics said once per place
        self._structured: str | None = None    # text.format json_schema: the format's name
        self.passed_through: list[WireEvent] = []   # events of unknown type, kept as they came
        handlers: dict[str | None, Callable[[WireEvent, dict], None]] = {
            "error": self._on_error,
            "response.output_item.added": self._on_item_added,
            "response.output_item.done": self._on_item_done,
            "response.content_part.added": self._on_part_added,
            "response.content_part.done": self._on_part_done,
            "response.output_text.annotation.added": self._on_annotation,
            "response.reasoning_summary_part.added": self._on_summary_part_added,
            "response.reasoning_summary_part.done": self._on_summary_part_done,
            "response.reasoning_summary_text.delta": self._on_summary_delta,
            "response.reasoning_summary_text.done": self._on_summary_text_done,
            "response.image_generation_call.partial_image": self._on_partial_image,
            "response.shell_call_command.added": self._on_shell_command,
            "response.shell_call_command.delta": self._on_shell_command,
            "response.shell_call_command.done": self._on_shell_command,
            "response.shell_call_output_content.delta": self._on_shell_output,
            "response.shell_call_output_content.done": self._on_shell_output,
        }
        for kinds, handler in ((LIFECYCLE, self._on_lifecycle), (TERMINAL_STATUS, self._on_terminal),
                               (PART_DELTAS, self._on_part_delta),
                               (PART_DONES, self._on_part_text_done),
                               (FIELD_DELTAS, self._on_field_delta),
                               (FIELD_DONES, self._on_field_done),
                               (STATUS_EVENTS, self._on_status),
                               (UNADDRESSED, self._on_unaddressed)):
            handlers.update(dict.fromkeys(kinds, handler))
        self._handlers = handlers

    # -- feeding -----------------------------------------------------------

    def feed(self, event: WireEvent) -> None:
        """Take one wire event. Never raises on bad input."""
        payload = event.payload
        if type(payload) is not dict:
            self._not_an_object(event)
            return
        seq = payload.get("sequence_number")
        if seq is not None and self._seq.skip(event, seq):
            return
        handler = self._handlers.get(event.type)
        if handler is None:
            self._unknown(event)
            return
        if not self._started or self._terminal is not None:
            self._check_position(event)
        try:
            handler(event, payload)
        except Malformed as exc:
            self.note("malformed_event", f"{event.type}: {exc}; the event is ignored",
                      event=event, raw=event.sse.data)
        except Exception as exc:  # noqa: BLE001 - never raise on bad input
            what = f"missing field {exc}" if isinstance(exc, KeyError) else repr(exc)
            self.note("malformed_event", f"{event.type}: {what}; the event is ignored",
                      event=event, raw=event.sse.data)

    def _not_an_object(self, event: WireEvent) -> None:
        if event.parse_error is not None:
            self.note("unparseable_json", f"event {event.type or '(unnamed)'}: "
                      f"{event.parse_error}; the event is ignored",
                      event=event, raw=event.sse.data)
        else:
            self.note("unknown_event", f"event {event.type or '(unnamed)'}: the payload is not "
                      "a JSON object; passed through", severity="warning",
                      event=event, raw=event.sse.data)
            self.passed_through.append(event)

    def _unknown(self, event: WireEvent) -> None:
        self.passed_through.append(event)
        self.note("unknown_event", f"unknown event type {event.type!r}: passed through, "
                  "nothing accumulated from it", severity="warning", event=event,
                  event_type=event.type)

    def _check_position(self, event: WireEvent) -> None:
        """The first event, and events after the terminal one."""
        if self._terminal is not None:
            self.note("event_after_terminal", f"{event.type} after response.{self.terminal}: "
                      "the stream should have ended; accumulated anyway", severity="warning",
                      event=event)
        if not self._started:
            self._started = True
            if event.type not in ("response.created", "response.queued", "error"):
                self.note("event_before_start",
                          f"the stream begins with {event.type}, not response.created: the "
                          "response's id, model and settings are unknown until an event "
                          "carries them (a stream resumed mid-way?)",
                          severity="warning", event=event)

    def _once_note(self, key: tuple, code: str, message: str, **kw: Any) -> None:
        if key not in self._once:
            self._once.add(key)
            self.note(code, message, **kw)

    # -- the response ------------------------------------------------------

    @staticmethod
    def _response_in(p: dict) -> dict:
        """A lifecycle or terminal event's `Response` object."""
        resp = p.get("response")
        if not isinstance(resp, dict):
            raise Malformed("no response object")
        return resp

    def _on_lifecycle(self, ev: WireEvent, p: dict) -> None:
        resp = self._response_in(p)
        if ev.type == "response.created":
            if self._created:
                self.note("duplicate_start", "response.created again; the later one's settings "
                          "are kept", severity="warning", event=ev)
            self._created = True
        self._check_identity(ev, resp)
        self._response = resp
        self._structured = structured_name(resp)
        output = resp.get("output")
        if isinstance(output, list):      # a lifecycle event may carry finished items
            for i, data in enumerate(output):
                if isinstance(data, dict) and i not in self._items:
                    item = Item(i, data)
                    item.done, item.state = data, "closed"
                    self._register(item)

    def _check_identity(self, ev: WireEvent, resp: dict) -> None:
        known = (self._response or {}).get("id")
        rid = resp.get("id")
        if known and rid and rid != known:
            self.note("server_object_differs", f"{ev.type} is for response {rid}, but the stream "
                      f"began with {known}", event=ev, path="id", ours=known, theirs=rid)

    def _on_terminal(self, ev: WireEvent, p: dict) -> None:
        resp = self._response_in(p)
        self._check_identity(ev, resp)
        self._compare_with_server(ev, resp)
        self._terminal = resp
        self.terminal = TERMINAL_STATUS[ev.type]
        if self.terminal == "failed":
            self.complete = False
            if self.error is None:
                err = resp.get("error")
                err = err if isinstance(err, dict) else {}
                self.note("in_band_error", f"response.failed: {err.get('message') or 'no message'}",
                          event=ev, error_code=err.get("code"))
        else:
            self.complete = self.error is None

    def _on_error(self, ev: WireEvent, p: dict) -> None:
        nested = isinstance(p.get("error"), dict)
        body = p["error"] if nested else p
        message = body.get("message")
        self.error = {"code": body.get("code"), "message": message,
                      "type": body.get("type") if nested else None, "param": body.get("param")}
        self.complete = False
        self.note("in_band_error", f"error event: {message or 'no message'}", event=ev,
                  raw=ev.sse.data, error_code=body.get("code"),
                  error_type=self.error["type"], shape="nested" if nested else "flat")

    # -- items -------------------------------------------------------------

    def _register(self, item: Item) -> None:
        self._items[item.index] = item
        if item.id is not None:
            self._by_id[item.id] = item

    @staticmethod
    def _item_event(p: dict) -> tuple[int, dict]:
        """An output_item.added or .done: its output_index and item object."""
        oi, data = p.get("output_index"), p.get("item")
        if not isinstance(data, dict) or not is_index(oi):
            raise Malformed("needs an output_index and an item object")
        return oi, data

    def _on_item_added(self, ev: WireEvent, p: dict) -> None:
        oi, data = self._item_event(p)
        existing = self._items.get(oi)
        if existing is not None:
            if existing.assumed:                  # met through its deltas first
                existing.announce(data)
                self._register(existing)
                self._call_of(existing, ev)
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
        item = Item(oi, data)
        self._register(item)
        self._call_of(item, ev)

    def _on_item_done(self, ev: WireEvent, p: dict) -> None:
        oi, data = self._item_event(p)
        iid = data.get("id")
        item = self._items.get(oi)
        if item is not None and item.id is not None and isinstance(iid, str) and iid != item.id:
            item = self._elsewhere(ev, oi, item, iid, f"output_item.done for item {iid} at "
                                   f"output_index {oi}, where item {item.id} was announced; ")
        if item is None and isinstance(iid, str):
            item = self._by_id.get(iid)
        if item is None:
            self.note("event_before_start", f"item {iid} at output_index {oi} ends without ever "
                      "having been announced (no output_item.added): the server's item is taken "
                      "as it is", severity="warning", event=ev, slot=(oi,))
            item = Item(oi, data)
            self._register(item)
        else:
            if item.done is not None:
                self.note("duplicate_stop", f"output_item.done again for {item.label()}; the "
                          "later item is kept", severity="warning", event=ev, slot=(oi,))
            if item.assumed:
                item.announce(data)
                self._register(item)
            self._check_streamed(ev, item, data)
        item.done = data
        item.state = "closed"
        for part in (*item.parts.values(), *item.summary.values()):
            part.state = "closed"
        if item.type == "function_call" and not item.input_done:
            raw = data.get("arguments")
            self._parse_input(ev, item, raw if isinstance(raw, str) else "")
        elif item.type in TOOL_ITEMS:
            raw = get_path(data, TOOL_ITEMS[item.type])
            self._call_of(item, ev).end(raw if isinstance(raw, str) else None, t=ev.t,
                                        event=ev.index)
        for ci in sorted(item.parts):
            part = item.parts[ci]
            if part.call is not None:
                part.call.end(part.text, t=ev.t, event=ev.index)

    def _elsewhere(self, ev: WireEvent, oi: int, item: Item, iid: str, said: str) -> Item:
        """An event names item `iid`, but `item` is at its output_index: the item named
        wins when known (``unknown_slot``, `said` and where it was applied)."""
        other = self._by_id.get(iid)
        self.note("unknown_slot", said + (f"applied to {iid} (output_index {other.index})"
                                          if other else "applied by output_index"),
                  event=ev, slot=(oi,))
        return other or item

    def _open_item(self, ev: WireEvent, p: dict, kind: str) -> Item:
        """The item a delta addresses: the hot path is one dict lookup and two checks."""
        item = self._items.get(p.get("output_index"))
        iid = p.get("item_id")
        if item is None or (iid is not None and iid != item.id) or item.state != "open":
            item = self._item_for(ev, p, kind)
        return item

    def _item_for(self, ev: WireEvent, p: dict, kind: str) -> Item:
        """The item an event addresses (slow path): checked, found by id, or assumed."""
        oi, iid = p.get("output_index"), p.get("item_id")
        item = self._items.get(oi) if is_index(oi) else None
        if item is not None and isinstance(iid, str):
            if item.id is None:
                item.id = iid
                self._by_id[iid] = item
            elif iid != item.id:
                item = self._elsewhere(ev, oi, item, iid, f"{ev.type} names item {iid}, but "
                                       f"output_index {oi} holds item {item.id}; ")
        elif item is None and isinstance(iid, str):
            item = self._by_id.get(iid)
            if item is not None and oi is not None:
                self.note("unknown_slot", f"{ev.type} for item {iid} says output_index {oi}, but "
                          f"the item was announced at {item.index}; applied to the item",
                          event=ev, slot=(item.index,))
        if item is None:
            index = oi if is_index(oi) else max(self._items, default=-1) + 1
            data: dict[str, Any] = {"id": iid if isinstance(iid, str) else None, "type": kind,
                                    "status": "in_progress"}
            if kind == "message":
                data.update(role="assistant", content=[])
            item = Item(index, data, assumed=True)
            self._register(item)
            self.note("event_before_start",
                      f"{ev.type} for an item never announced (output_index {index}, "
                      f"item {iid}): assumed a {kind} item", severity="warning", event=ev,
                      slot=(index,))
        elif item.state != "open":
            self._once_note(("late", item.index), "delta_after_stop",
                            f"{ev.type} after {item.label()} was done: kept in our slot, but the "
                            "server's finished item stands", severity="warning", event=ev,
                            slot=(item.index,))
        if item.type != kind and not item.assumed:
            self._once_note(("kind", item.index, kind), "delta_mismatch",
                            f"{ev.type} addresses {item.label()}, which is not a {kind}; "
                            "accumulated anyway", event=ev, slot=(item.index,))
        return item

    # -- the end -----------------------------------------------------------

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> None:
        """End of stream: close what is open, say what was cut."""
        if not self.begin_finish(sse_diagnostics):
            return
        if self._terminal is not None:
            why = f"response.{self.terminal}"
        elif self.error is not None:
            why = "the error event"
        else:
            why = "the end of the stream"
        for oi in sorted(self._items):
            item = self._items[oi]
            for part in (*item.parts.values(), *item.summary.values()):
                if part.state == "open":         # (also one begun after its item was done)
                    part.state = "never closed"
            if item.state != "open":
                continue
            item.state = "never closed"
            for part in item.parts.values():
                if part.call is not None:
                    part.call.cut()
            if item.type == "function_call" and not item.input_done:
                item.input = self.end_tool_call(self._call_of(item, None), cut=True,
                                                slot=(oi,), what=f"function_call "
                                                f"{item.name or '?'} (output_index {oi})")
            else:
                if item.call is not None:
                    item.call.cut()
                self.note("block_never_stopped", f"{item.label()} was never done (no "
                          f"response.output_item.done) before {why}", severity="warning",
                          slot=(oi,))
        if self._terminal is None and self.error is None:
            self.note("no_terminal", "the stream ended without response.completed, "
                      "response.incomplete or response.failed: the response was cut; "
                      "everything that arrived is kept")

    def final(self) -> dict:
        """The `Response` so far: ours, with what only the server's objects can know."""
        output = [self._items[i].build() for i in sorted(self._items)]
        src = self._terminal if self._terminal is not None else self._response
        if src is None:
            src = {"id": None, "object": "response", "created_at": None,
                   "status": "in_progress", "error": None, "incomplete_details": None,
                   "model": None, "output": None, "usage": None}
        out = {k: (output if k == "output" else clone(v)) for k, v in src.items()}
        out["output"] = output
        if self._terminal is not None:
            self._fill_from(self._terminal, output)
        elif self.error is not None:
            out["status"] = "failed"
            out["error"] = {"code": self.error["code"], "message": self.error["message"]}
        return out

    # -- views -------------------------------------------------------------

    @property
    def status(self) -> str | None:
        """The response's status as the stream last stated it (``failed`` after an error)."""
        src = self._terminal if self._terminal is not None else self._response
        if self._terminal is None and self.error is not None:
            return "failed"
        return src.get("status") if src else None

    def tool_inputs(self) -> dict[int, Any]:
        """Parsed function-call arguments by output_index (the partial value for a cut call)."""
        return {i: it.input for i, it in sorted(self._items.items())
                if it.type == "function_call" and (it.input_done or it.state != "open")}

    def slots(self) -> list[Slot]:
        """One slot per part, per summary part, and per item that has neither."""
        out: list[Slot] = []
        for oi in sorted(self._items):
            item = self._items[oi]
            built = item.build()
            content = built.get("content") if isinstance(built.get("content"), list) else []
            summary = built.get("summary") if isinstance(built.get("summary"), list) else []
            for pos, ci in enumerate(sorted(item.parts)):
                part = item.parts[ci]
                text = get_path(content, (pos, part.key or "text"))
                out.append(Slot((oi, ci), part.type, f"[{oi}.{ci}] {part.type}",
                                text if isinstance(text, str) else "", part.state))
            for pos, si in enumerate(sorted(item.summary)):
                part = item.summary[si]
                text = get_path(summary, (pos, "text"))
                out.append(Slot((oi, "summary", si), part.type,
                                f"[{oi}.s{si}] {part.type} of {item.type}",
                                text if isinstance(text, str) else "", part.state))
            if item.parts or item.summary:
                continue
            text = item.shown_text(built)
            tool = item.type in ("function_call", "custom_tool_call", "mcp_call")
            out.append(Slot((oi,), item.type, item.label(), text, item.state,
                            name=item.name, call_id=item.call_id,
                            raw_input=text if tool else None))
        return out

