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
- an unknown event type passes through as an ``unknown_event`` warning; Chat's
  ``data: [DONE]`` after the terminal event (OpenRouter) passes through with an
  ``info`` note;
- a field the terminal `Response` restates differently from the stream (an
  item's id, a fingerprint) is a ``server_restated`` warning, and ``final``
  follows the server (`compare`);
- tool calls (lesson 3): each ``function_call``, ``custom_tool_call`` and
  ``mcp_call`` item has a `ToolCall` fed every argument delta, ended by its
  ``*_arguments.done`` (or ``output_item.done``); with ``text.format``
  ``json_schema`` each ``output_text`` part is a structured-output
  `ToolCall` too, ended by ``output_text.done``.

The per-event path is a dict lookup on the event type and a few attribute
reads; text is kept as fragments and joined on demand, so feeding is linear.

`feed` and `finish` return what changed (`lesson_lib.accumulate.changes`).
Each handler says the changes it causes as it causes them, as the Anthropic
and Chat accumulators do: a delta its fragment, an announcement the slot it
opens, a ``*.done`` the text it restates and the call or slot it ends. An
event's changes come in a stated order: its diagnostics and the response's
own changes as they happen, then the slots it opened, the text it added,
and the slots and calls it closed (`slots`).

The accumulator is composed of one object per concern, each in its own
module, in the order an event meets them: `vocabulary` (the event tables),
`sequence` (``sequence_number``), `items` (finding items, and the handlers
of an item's start and end), then the other handlers: `parts` (content and
summary parts, one handler per step of either), `tools` (string fields and
the tool calls they feed), `server_tools` (server-side tools, spoken output).
They build `objects` (items and parts), check them against the server's with
`compare`, and say what they changed through `slots`. None of them reaches
into another: each gets what it uses (`items.Handlers`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any

from ...diagnostics import Diagnostic
from ...wires import responses
from ...wires.responses import AFTER_TERMINAL, TERMINAL_STATUS
from ...wires.wire_events import WireEvent
from ..base import Accumulator, Slot
from ..changes import InBandError, ResponseChanged, TerminalReached, UnknownEvent
from .compare import ServerComparison
from .items import ItemEvents, Items
from .objects import Item, clone
from .parts import PartEvents
from .sequence import SequenceNumbers
from .server_tools import ServerToolEvents
from .slots import SlotChanges
from .tools import ToolCallEvents, structured_name
from .vocabulary import AUDIO_EVENTS, FIELD_TEXTS, LIFECYCLE, PART_TEXTS, STATUS_EVENTS, Malformed


class ResponsesAccumulator(Accumulator):
    """OpenAI Responses events -> the `Response` object, with diagnostics and changes.

    >>> from lesson_lib.wires.wire_events import WireEvent
    >>> from lesson_lib.sse.decoder import ServerSentEvent
    >>> acc = ResponsesAccumulator()
    >>> def ev(i, p): return WireEvent(i, ServerSentEvent(p["type"], ""), p["type"], p)
    >>> changes = acc.feed(ev(0, {"type": "response.output_text.delta", "output_index": 0,
    ...                           "content_index": 0, "item_id": "msg_1", "delta": "Hi"}))
    >>> acc.final()["output"][0]["content"][0]["text"], acc.diagnostics[0].code
    ('Hi', 'event_before_start')
    >>> [(c.kind, c.address) for c in changes if c.kind != "diagnostic_noted"]
    [('slot_opened', (0,)), ('slot_removed', (0,)), ('slot_opened', (0, 0)), ('text_appended', (0, 0))]
    """

    wire = responses.WIRE

    def __init__(self) -> None:
        super().__init__()
        self.slot_changes = slot_changes = SlotChanges()
        self.items = Items(self.note, slot_changes)
        self.compare = ServerComparison(self.items, self.note)
        self.tools = ToolCallEvents(self.items, self.compare, self.end_tool_call, slot_changes)
        self.items.call_of = self.tools.call_of
        self.parts = PartEvents(self.items, self.compare, self.tools, slot_changes)
        self.item_events = ItemEvents(self.items, self.compare, self.tools, slot_changes)
        self.server_tools = ServerToolEvents(self.items, self.compare, None, slot_changes)
        self._response: dict | None = None     # the latest lifecycle event's response
        self._terminal: dict | None = None     # the terminal event's response
        self.terminal: str | None = None       # "completed" | "incomplete" | "failed"
        self.error: dict | None = None         # the in-band error: code, message, type, param
        self._started = False
        self._created = False
        self._in_progress = False
        self.sequence_numbers = SequenceNumbers(self.note)
        self.passed_through: list[WireEvent] = []   # events of unknown type, kept as they came
        parts, tools, server = self.parts, self.tools, self.server_tools
        handlers: dict[str | None, Callable[[WireEvent, dict], None]] = {
            "error": self._on_error,
            responses.ITEM_ADDED: self.item_events.on_item_added,
            responses.ITEM_DONE: self.item_events.on_item_done,
            responses.CONTENT_PART_ADDED: parts.on_part_added,
            responses.CONTENT_PART_DONE: parts.on_part_done,
            responses.OUTPUT_TEXT_ANNOTATION_ADDED: parts.on_annotation,
            responses.REASONING_SUMMARY_PART_ADDED: partial(parts.on_part_added, summary=True),
            responses.REASONING_SUMMARY_PART_DONE: partial(parts.on_part_done, summary=True),
            responses.IMAGE_GENERATION_CALL_PARTIAL_IMAGE: server.on_partial_image,
            responses.SHELL_CALL_COMMAND_ADDED: server.on_shell_command,
            responses.SHELL_CALL_COMMAND_DELTA: server.on_shell_command,
            responses.SHELL_CALL_COMMAND_DONE: server.on_shell_command,
            responses.SHELL_CALL_OUTPUT_CONTENT_DELTA: server.on_shell_output,
            responses.SHELL_CALL_OUTPUT_CONTENT_DONE: server.on_shell_output,
        }
        for kinds, handler in ((LIFECYCLE, self._on_lifecycle), (TERMINAL_STATUS, self._on_terminal),
                               (PART_TEXTS, parts.on_part_text),
                               (FIELD_TEXTS, tools.on_field_text),
                               (STATUS_EVENTS, server.on_status),
                               (AUDIO_EVENTS, server.on_audio)):
            handlers.update(dict.fromkeys(kinds, handler))
        self._handlers = handlers

    # -- feeding -----------------------------------------------------------

    def feed(self, event: WireEvent) -> list:
        """Take one wire event and return what it changed. Never raises on bad input."""
        self.changes = []
        payload = event.payload
        if type(payload) is not dict:
            self._not_an_object(event)
            return self.changes
        seq = payload.get("sequence_number")
        if seq is not None and self.sequence_numbers.skip(event, seq):
            return self.changes
        handler = self._handlers.get(event.type)
        if handler is None:
            self._pass_through(event, "unknown_event", f"unknown event type {event.type!r}: "
                               "passed through, nothing accumulated from it",
                               event_type=event.type)
            return self.changes
        if not self._started or self._terminal is not None:
            self._check_position(event)
        try:
            handler(event, payload)
        except Malformed as exc:
            self.note("malformed_event", f"{event.type}: {exc}; the event is ignored",
                      event=event, raw=event.sse.data)
        slot_changes = self.slot_changes
        if slot_changes.opening or slot_changes.closing:
            slot_changes.flush(self.changes)
        elif slot_changes.growing:                          # (a delta: its growth only)
            self.changes += slot_changes.growing
            slot_changes.growing.clear()
        return self.changes

    def _not_an_object(self, event: WireEvent) -> None:
        if event.type in AFTER_TERMINAL and self._terminal is not None:
            # Chat's end marker after the terminal (OpenRouter): passed through, as data.
            self._pass_through(event, "marker_after_terminal", f"{event.type} after response."
                               f"{self.terminal}: a compatible server's end marker, passed "
                               "through", severity="info")
        elif event.parse_error is not None:
            self.note("unparseable_json", f"event {event.type or '(unnamed)'}: "
                      f"{event.parse_error}; the event is ignored",
                      event=event, raw=event.sse.data)
        else:
            self._pass_through(event, "unknown_event", f"event {event.type or '(unnamed)'}: the "
                               "payload is not a JSON object; passed through", raw=event.sse.data)

    def _pass_through(self, event: WireEvent, code: str, message: str, *,
                      severity: str = "warning", **extra: Any) -> None:
        """An event kept as it came (`passed_through`), said, and handed on as data."""
        self.passed_through.append(event)
        self.note(code, message, severity=severity, event=event, **extra)  # type: ignore[arg-type]
        self.changes.append(UnknownEvent(event.index, event.type, event.payload))

    def _check_position(self, event: WireEvent) -> None:
        """The first event, and events after the terminal one."""
        if self._terminal is not None:
            self.note("event_after_terminal", f"{event.type} after response.{self.terminal}: "
                      "the stream should have ended; accumulated anyway", severity="warning",
                      event=event)
        if not self._started:
            self._started = True
            if event.type not in (responses.CREATED, responses.QUEUED, "error"):
                self.compare.resumed = True
                self.note("event_before_start",
                          f"the stream begins with {event.type}, not response.created: the "
                          "response's id, model and settings are unknown until an event "
                          "carries them (a stream resumed mid-way?)",
                          severity="warning", event=event)

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
        if ev.type == responses.CREATED:
            if self._created:
                self.note("duplicate_start", "response.created again; the later one's settings "
                          "are kept", severity="warning", event=ev)
            self._created = True
        elif ev.type == responses.IN_PROGRESS:
            self._in_progress_order(ev)
        self._check_identity(ev, resp)
        self._response = resp
        self.tools.structured = structured_name(resp)
        self.changes.append(ResponseChanged(ev.index, _fields(resp, p, ("id", "model",
                                                                         "status"))))
        output = resp.get("output")
        if isinstance(output, list):      # a lifecycle event may carry finished items
            for i, data in enumerate(output):
                if isinstance(data, dict) and i not in self.items.by_index:
                    # Taken as if it had streamed: a call in it is checked and ready.
                    self.item_events.take_stated(ev, i, data, self.changes)

    def _in_progress_order(self, ev: WireEvent) -> None:
        """``response.in_progress`` comes once, before any output item."""
        if self._in_progress:
            self.note("duplicate_start", "response.in_progress again; the later one's "
                      "settings are kept", severity="warning", event=ev)
        elif self.items.by_index:
            first = min(self.items.by_index)
            self.note("event_before_start", f"response.in_progress after output began "
                      f"(output_index {first} already holds an item): the item came before "
                      "the response was in progress", severity="warning", event=ev,
                      slot=(first,))
        self._in_progress = True

    def _check_identity(self, ev: WireEvent, resp: dict) -> None:
        known = (self._response or {}).get("id")
        rid = resp.get("id")
        if known and rid and rid != known:     # one stream is one response, whatever its id
            self.items.rotated(ev, f"{ev.type} is for response {rid}, but the stream began "
                               f"with {known}", path="id", ours=known, theirs=rid)

    def _on_terminal(self, ev: WireEvent, p: dict) -> None:
        resp = self._response_in(p)
        self._check_identity(ev, resp)
        self.compare.compare_with_server(ev, resp, self._response)
        self._terminal = resp
        self.terminal = TERMINAL_STATUS[ev.type]
        self.changes.append(ResponseChanged(ev.index, _fields(
            resp, p, ("id", "model", "status", "usage", "incomplete_details", "error"))))
        if self.terminal == "failed":
            self.complete = False
            if self.error is None:
                err = resp.get("error")
                err = err if isinstance(err, dict) else {}
                message = f"response.failed: {err.get('message') or 'no message'}"
                self.note("in_band_error", message, event=ev, error_code=err.get("code"))
                code = err.get("code")
                self.changes.append(InBandError(ev.index, message, err or None,
                                                code if isinstance(code, str) else None))
        else:
            self.complete = self.error is None
        self.changes.append(TerminalReached(ev.index, ev.type))

    def _on_error(self, ev: WireEvent, p: dict) -> None:
        nested = isinstance(p.get("error"), dict)
        body = p["error"] if nested else p
        message = body.get("message")
        self.error = {"code": body.get("code"), "message": message,
                      "type": body.get("type") if nested else None, "param": body.get("param")}
        self.complete = False
        said = f"error event: {message or 'no message'}"
        self.note("in_band_error", said, event=ev,
                  raw=ev.sse.data, error_code=body.get("code"),
                  error_type=self.error["type"], shape="nested" if nested else "flat")
        code = self.error["code"] if isinstance(self.error["code"], str) else None
        kind = self.error["type"] if isinstance(self.error["type"], str) else None
        self.changes.append(InBandError(ev.index, said, body, code or kind))

    # -- the end -----------------------------------------------------------

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: close what is open, say what was cut; return what that changed."""
        if not self.begin_finish(sse_diagnostics):
            return self.changes
        if self._terminal is not None:
            why = f"response.{self.terminal}"
        elif self.error is not None:
            why = "the error event"
        else:
            why = "the end of the stream"
        cut = [self._cut(item, why) for item in self.items]
        if self._terminal is None and self.error is None:
            self.note("no_terminal", "the stream ended without response.completed, "
                      "response.incomplete or response.failed: the response was cut; "
                      "everything that arrived is kept")
        for item, (slots, call_before) in zip(self.items, cut, strict=True):
            if item.call is not call_before:         # a call made late says its slot again,
                self.slot_changes.reopen_item(item, None)     # closed
                del slots[0]
            for address, holder, ended_before in slots:
                call = holder.call
                self.slot_changes.close(address, "never closed", call, None,
                               ended_now=call is not None and call.ended and not ended_before)
            self.slot_changes.flush(self.changes)         # each item's closes together
        self.server_tools.cut_audio(why)
        self.slot_changes.flush(self.changes)
        return self.end_changes("in_band_error" if self.error is not None
                                or self.terminal == "failed" else "cut")

    def _cut(self, item: Item, why: str) -> tuple[list[tuple], Any]:
        """End what of `item` is still open at the end of the stream: its parts, itself and
        its calls. The slots `finish` closes (address, the item or part, and whether its
        call had ended before), and the item's call before."""
        oi, slots, call = item.index, [], item.call
        if item.state == "open":
            slots.append(((oi,), item, call is not None and call.ended))
        for address, part, _ in item.part_slots():
            if part.state == "open":         # (also one begun after its item was done)
                part.state = "never closed"
                slots.append((address, part, part.call is not None and part.call.ended))
        if item.state != "open":
            return slots, call
        item.state = "never closed"
        for part in item.parts.values():
            if part.call is not None:
                part.call.cut()
        if item.type == responses.FUNCTION_CALL_ITEM and not item.input_done:
            item.input = self.end_tool_call(self.tools.call_of(item, None), cut=True,
                                            slot=(oi,), what=f"function_call "
                                            f"{item.name or '?'} (output_index {oi})")
        else:
            if item.call is not None:
                item.call.cut()
            self.note("block_never_stopped", f"{item.label()} was never done (no "
                      f"response.output_item.done) before {why}", severity="warning",
                      slot=(oi,))
        return slots, call

    def length_stop(self) -> bool:
        """``response.incomplete``: the model ran out of output tokens (or was stopped)."""
        return self.terminal == "incomplete"

    def final(self) -> dict:
        """The `Response` so far: ours, with what only the server's objects can know."""
        output = [item.build() for item in self.items]
        src = self._terminal if self._terminal is not None else self._response
        if src is None:
            src = {"id": None, "object": "response", "created_at": None,
                   "status": "in_progress", "error": None, "incomplete_details": None,
                   "model": None, "output": None, "usage": None}
        out = {k: (output if k == "output" else clone(v)) for k, v in src.items()}
        out["output"] = output
        if self._terminal is not None:
            self.compare.fill_from(self._terminal, output)
            self.compare.follow_server(output)
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
        return {it.index: it.input for it in self.items
                if it.type == responses.FUNCTION_CALL_ITEM and (it.input_done or it.state != "open")}

    def live_tool_calls(self) -> list:
        """Tool call items and structured-output parts, in output_index order."""
        return self.tools.live_tool_calls()

    def slots(self) -> list[Slot]:
        """One slot per part, per summary part, and per item that has neither; then the
        spoken output's."""
        return [slot for item in self.items for slot in item.slots()
                ] + self.server_tools.audio_slots()


def _fields(resp: dict, p: dict, keys: tuple) -> dict:
    """The response's own fields an event states (those it carries), and the event's
    sequence number."""
    fields = {k: resp[k] for k in keys if k in resp}
    if "sequence_number" in p:
        fields["sequence_number"] = p["sequence_number"]
    return fields
