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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..diagnostics import Diagnostic
from ..tool_calls import ToolCall
from ..wire_events import WireEvent
from .base import Accumulator, Fragments, Slot
from .responses_items import (
    ABSENT,
    MAIN_FIELD,
    OPAQUE_FIELDS,
    Item,
    Part,
    clone,
    differences,
    format_path,
    get_path,
    preview,
)

LIFECYCLE = ("response.created", "response.queued", "response.in_progress")
TERMINALS = {"response.completed": "completed", "response.incomplete": "incomplete",
             "response.failed": "failed"}

# Deltas into a part: event type -> (the part's type, the item type that holds it).
PART_DELTAS = {
    "response.output_text.delta": ("output_text", "message"),
    "response.refusal.delta": ("refusal", "message"),
    "response.reasoning_text.delta": ("reasoning_text", "reasoning"),
}
# A part's text stated whole: event type -> (part type, item type, the event's field).
PART_DONES = {
    "response.output_text.done": ("output_text", "message", "text"),
    "response.refusal.done": ("refusal", "message", "refusal"),
    "response.reasoning_text.done": ("reasoning_text", "reasoning", "text"),
}
# Deltas into one string field of an item: event type -> (item type, path in the item).
FIELD_DELTAS = {
    "response.function_call_arguments.delta": ("function_call", ("arguments",)),
    "response.mcp_call_arguments.delta": ("mcp_call", ("arguments",)),
    "response.custom_tool_call_input.delta": ("custom_tool_call", ("input",)),
    "response.code_interpreter_call_code.delta": ("code_interpreter_call", ("code",)),
    "response.apply_patch_call_operation_diff.delta": ("apply_patch_call", ("operation", "diff")),
}
FIELD_DONES = {
    "response.function_call_arguments.done": ("function_call", ("arguments",), "arguments"),
    "response.mcp_call_arguments.done": ("mcp_call", ("arguments",), "arguments"),
    "response.custom_tool_call_input.done": ("custom_tool_call", ("input",), "input"),
    "response.code_interpreter_call_code.done": ("code_interpreter_call", ("code",), "code"),
    "response.apply_patch_call_operation_diff.done": ("apply_patch_call", ("operation", "diff"),
                                                      "diff"),
}
# Items that are tool calls (lesson 3), and the string field their arguments stream into.
TOOL_ITEMS = {"function_call": ("arguments",), "custom_tool_call": ("input",),
              "mcp_call": ("arguments",)}
# Progress of server-side tools: event type -> (item type, the item's status now, or None).
STATUS_EVENTS = {
    f"response.{kind}.{step}": (kind, step)
    for kind, steps in {
        "web_search_call": ("in_progress", "searching", "completed"),
        "file_search_call": ("in_progress", "searching", "completed"),
        "code_interpreter_call": ("in_progress", "interpreting", "completed"),
        "image_generation_call": ("in_progress", "generating", "completed"),
        "mcp_call": ("in_progress", "completed", "failed"),
    }.items()
    for step in steps
}
STATUS_EVENTS.update({
    "response.mcp_list_tools.in_progress": ("mcp_list_tools", None),
    "response.mcp_list_tools.completed": ("mcp_list_tools", None),
    "response.mcp_list_tools.failed": ("mcp_list_tools", None),
    "response.compaction.compacting": ("compaction", None),
})
# Events that address no output item and add nothing to the `Response`.
UNADDRESSED = ("response.audio.delta", "response.audio.done",
               "response.audio.transcript.delta", "response.audio.transcript.done")

# Item types that hold parts of each type (anything else is a mismatch).
PART_HOSTS = {"output_text": ("message",), "refusal": ("message",),
              "reasoning_text": ("reasoning",), "summary_text": ("reasoning",)}
ASSUMED_PARTS: dict[str, dict] = {
    "output_text": {"type": "output_text", "annotations": [], "text": ""},
    "refusal": {"type": "refusal", "refusal": ""},
    "reasoning_text": {"type": "reasoning_text", "text": ""},
    "summary_text": {"type": "summary_text", "text": ""},
}
# At most this many server_object_differs per terminal event (then one summary).
DIFF_LIMIT = 20
# Gaps up to this size are remembered, so that a late event can say which gap it fills.
_GAP_MEMORY = 10_000


class _Malformed(Exception):
    """A known event whose payload lacks what its type promises."""


def _is_index(x: Any) -> bool:
    return type(x) is int and x >= 0


def _both(ours: Any, theirs: Any) -> dict[str, Any]:
    """The two sides of a difference for a diagnostic's extra: whole values (JSON copies).

    A side that has no such key or index is ``"<absent>"``, and ``absent`` names it.
    """
    out = {"ours": preview(ours, 0) if ours is ABSENT else clone(ours),
           "theirs": preview(theirs, 0) if theirs is ABSENT else clone(theirs)}
    if ours is ABSENT or theirs is ABSENT:
        out["absent"] = "ours" if ours is ABSENT else "theirs"
    return out


def _structured_name(resp: dict) -> str | None:
    """The name of a ``json_schema`` text format (structured output), else None."""
    text = resp.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        name = fmt.get("name")
        return name if isinstance(name, str) and name else "structured output"
    return None


def _say(value: Any) -> str:
    if value is ABSENT:
        return "nothing"
    if isinstance(value, str):
        return f"{len(value)} characters {preview(value, 40)!r}"
    return repr(preview(value, 60))


class ResponsesAccumulator(Accumulator):
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
        self._seq_last: int | None = None
        self._seq_seen: dict[int, str] = {}    # sequence_number -> the event's data
        self._seq_missing: set[int] = set()
        self._once: set[tuple] = set()         # diagnostics said once per place
        self._structured: str | None = None    # text.format json_schema: the format's name
        self.passed_through: list[WireEvent] = []   # events of unknown type, kept as they came
        handlers: dict[str | None, Callable[[WireEvent, dict], None]] = {}
        for kind in LIFECYCLE:
            handlers[kind] = self._on_lifecycle
        for kind in TERMINALS:
            handlers[kind] = self._on_terminal
        handlers["error"] = self._on_error
        handlers["response.output_item.added"] = self._on_item_added
        handlers["response.output_item.done"] = self._on_item_done
        handlers["response.content_part.added"] = self._on_part_added
        handlers["response.content_part.done"] = self._on_part_done
        for kind in PART_DELTAS:
            handlers[kind] = self._on_part_delta
        for kind in PART_DONES:
            handlers[kind] = self._on_part_text_done
        handlers["response.output_text.annotation.added"] = self._on_annotation
        handlers["response.reasoning_summary_part.added"] = self._on_summary_part_added
        handlers["response.reasoning_summary_part.done"] = self._on_summary_part_done
        handlers["response.reasoning_summary_text.delta"] = self._on_summary_delta
        handlers["response.reasoning_summary_text.done"] = self._on_summary_text_done
        for kind in FIELD_DELTAS:
            handlers[kind] = self._on_field_delta
        for kind in FIELD_DONES:
            handlers[kind] = self._on_field_done
        for kind in STATUS_EVENTS:
            handlers[kind] = self._on_status
        handlers["response.image_generation_call.partial_image"] = self._on_partial_image
        handlers["response.shell_call_command.added"] = self._on_shell_command
        handlers["response.shell_call_command.delta"] = self._on_shell_command
        handlers["response.shell_call_command.done"] = self._on_shell_command
        handlers["response.shell_call_output_content.delta"] = self._on_shell_output
        handlers["response.shell_call_output_content.done"] = self._on_shell_output
        for kind in UNADDRESSED:
            handlers[kind] = self._on_unaddressed
        self._handlers = handlers

    # -- feeding -----------------------------------------------------------

    def feed(self, event: WireEvent) -> None:
        """Take one wire event. Never raises on bad input."""
        payload = event.payload
        if type(payload) is not dict:
            self._not_an_object(event)
            return
        seq = payload.get("sequence_number")
        if seq is not None:
            last = self._seq_last
            if last is not None and seq == last + 1 and type(seq) is int:
                self._seq_last = seq
                self._seq_seen[seq] = event.sse.data
            elif self._check_sequence(event, seq):
                return
        handler = self._handlers.get(event.type)
        if handler is None:
            self._unknown(event)
            return
        if not self._started or self._terminal is not None:
            self._check_position(event)
        try:
            handler(event, payload)
        except _Malformed as exc:
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

    def _check_sequence(self, event: WireEvent, seq: Any) -> bool:
        """Check a sequence_number off the fast path; True when the event must be skipped."""
        if type(seq) is not int:
            self.note("malformed_event", f"{event.type}: sequence_number {seq!r} is not an "
                      "integer; not checked", severity="warning", event=event)
            return False
        data = event.sse.data
        earlier = self._seq_seen.get(seq)
        if earlier is not None:
            same = earlier == data
            self.note("sequence_duplicate",
                      f"sequence_number {seq} arrives again; "
                      + ("an exact repeat of the earlier event, skipped" if same else
                         "a different event from the first with that number, accumulated"),
                      severity="warning", event=event, sequence_number=seq, repeat=same)
            return same
        self._seq_seen[seq] = data
        last = self._seq_last
        if last is None:
            self._seq_last = seq      # a stream may start anywhere (resumed): nothing to check
        elif seq < last:
            late = seq in self._seq_missing
            self._seq_missing.discard(seq)
            self.note("sequence_out_of_order",
                      f"sequence_number {seq} arrives after {last}"
                      + ("; it fills part of a gap reported earlier" if late else "")
                      + "; accumulated where it arrived", severity="warning", event=event,
                      sequence_number=seq, after=last)
        else:
            missing = seq - last - 1
            if missing <= _GAP_MEMORY:
                self._seq_missing.update(range(last + 1, seq))
            self.note("sequence_gap",
                      f"sequence_number jumps from {last} to {seq}: {missing} event"
                      f"{'s' if missing != 1 else ''} missing", severity="warning", event=event,
                      sequence_number=seq, after=last, missing=missing)
            self._seq_last = seq
        return False

    def _once_note(self, key: tuple, code: str, message: str, **kw: Any) -> None:
        if key not in self._once:
            self._once.add(key)
            self.note(code, message, **kw)

    # -- the response ------------------------------------------------------

    def _on_lifecycle(self, ev: WireEvent, p: dict) -> None:
        resp = p.get("response")
        if not isinstance(resp, dict):
            raise _Malformed("no response object")
        if ev.type == "response.created":
            if self._created:
                self.note("duplicate_start", "response.created again; the later one's settings "
                          "are kept", severity="warning", event=ev)
            self._created = True
        self._check_identity(ev, resp)
        self._response = resp
        self._structured = _structured_name(resp)
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
        resp = p.get("response")
        if not isinstance(resp, dict):
            raise _Malformed("no response object")
        self._check_identity(ev, resp)
        self._compare_with_server(ev, resp)
        self._terminal = resp
        self.terminal = TERMINALS[ev.type]
        if self.terminal == "failed":
            self.complete = False
            if self.error is None:
                err = resp.get("error")
                err = err if isinstance(err, dict) else {}
                self.note("in_band_error", f"response.failed: {err.get('message') or 'no message'}",
                          event=ev, error_code=err.get("code"))
        else:
            self.complete = self.error is None

    def _compare_with_server(self, ev: WireEvent, resp: dict) -> None:
        """Check our output items against the server's own, in the terminal event."""
        for key in ("model", "created_at"):
            ours = (self._response or {}).get(key)
            theirs = resp.get(key)
            if ours is not None and theirs is not None and ours != theirs:
                self.note("server_object_differs", f"{key}: ours {ours!r}, the server's "
                          f"{theirs!r}", severity="warning", event=ev, path=key,
                          ours=ours, theirs=theirs)
        theirs_out = resp.get("output")
        if not isinstance(theirs_out, list):      # newer servers may leave it out
            return
        ours_out = [self._items[i].build() for i in sorted(self._items)]
        self._fill_from(resp, ours_out)
        shown = 0
        for path, a, b in differences(ours_out, theirs_out, ("output",)):
            if shown == DIFF_LIMIT:
                self.note("server_object_differs", f"more differences from {ev.type}'s response "
                          "not listed", severity="warning", event=ev)
                break
            shown += 1
            where = format_path(path)
            self.note("server_object_differs", f"{where}: ours is {_say(a)}, the server's "
                      f"{ev.type} says {_say(b)}", severity="warning", event=ev,
                      slot=self._slot_of(path), path=where, against=ev.type, **_both(a, b))

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

    def _on_item_added(self, ev: WireEvent, p: dict) -> None:
        oi, data = p.get("output_index"), p.get("item")
        if not isinstance(data, dict) or not _is_index(oi):
            raise _Malformed("needs an output_index and an item object")
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
        oi, data = p.get("output_index"), p.get("item")
        if not isinstance(data, dict) or not _is_index(oi):
            raise _Malformed("needs an output_index and an item object")
        iid = data.get("id")
        item = self._items.get(oi)
        if item is not None and item.id is not None and isinstance(iid, str) and iid != item.id:
            other = self._by_id.get(iid)
            self.note("unknown_slot", f"output_item.done for item {iid} at output_index {oi}, "
                      f"where item {item.id} was announced; "
                      + (f"applied to {iid} (output_index {other.index})" if other else
                         "applied by output_index"), event=ev, slot=(oi,))
            item = other or item
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

    def _check_streamed(self, ev: WireEvent, item: Item, done: dict) -> None:
        """What the deltas built against the server's item at its end."""
        for path, ours in item.streamed():
            theirs = get_path(done, path)
            if ours != theirs:
                self._differs(ev, (item.index, *path), ours, theirs)

    def _differs(self, ev: WireEvent, path: tuple, ours: Any, theirs: Any) -> None:
        where = format_path(("output", *path))
        self.note("server_object_differs",
                  f"{where}: the deltas built {_say(ours)}, but {ev.type} says {_say(theirs)}; "
                  "the server's value is kept", severity="warning", event=ev,
                  slot=self._slot_of(("output", *path)), path=where, against=ev.type,
                  **_both(ours, theirs))

    def _slot_of(self, path: tuple) -> tuple | None:
        """The slot address of a path inside ``output``."""
        if len(path) < 2 or path[0] != "output" or not isinstance(path[1], int):
            return None
        if len(path) >= 4 and path[2] in ("content", "summary") and isinstance(path[3], int):
            return (path[1], path[3]) if path[2] == "content" else (path[1], "summary", path[3])
        return (path[1],)

    def _item_for(self, ev: WireEvent, p: dict, kind: str) -> Item:
        """The item an event addresses (slow path): checked, found by id, or assumed."""
        oi, iid = p.get("output_index"), p.get("item_id")
        item = self._items.get(oi) if _is_index(oi) else None
        if item is not None and isinstance(iid, str):
            if item.id is None:
                item.id = iid
                self._by_id[iid] = item
            elif iid != item.id:
                other = self._by_id.get(iid)
                self.note("unknown_slot", f"{ev.type} names item {iid}, but output_index {oi} "
                          f"holds item {item.id}; "
                          + (f"applied to {iid} (output_index {other.index})" if other else
                             "applied by output_index"), event=ev, slot=(oi,))
                item = other or item
        elif item is None and isinstance(iid, str):
            item = self._by_id.get(iid)
            if item is not None and oi is not None:
                self.note("unknown_slot", f"{ev.type} for item {iid} says output_index {oi}, but "
                          f"the item was announced at {item.index}; applied to the item",
                          event=ev, slot=(item.index,))
        if item is None:
            index = oi if _is_index(oi) else max(self._items, default=-1) + 1
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

    # -- parts (content_index) ---------------------------------------------

    def _part_for(self, ev: WireEvent, p: dict, item: Item, kind: str) -> Part:
        """The part an event addresses (slow path): checked, or assumed."""
        ci = p.get("content_index")
        if not _is_index(ci):
            raise _Malformed(f"content_index {ci!r} is not an index")
        part = item.parts.get(ci)
        address = (item.index, ci)
        if part is None:
            if item.type not in PART_HOSTS.get(kind, (item.type,)):
                self._once_note(("host", address), "delta_mismatch",
                                f"{ev.type}: a {item.type} item has no {kind} parts; kept as its "
                                f"content[{ci}]", event=ev, slot=address)
            part = item.parts[ci] = Part(dict(ASSUMED_PARTS[kind]), assumed=True)
            self.note("event_before_start", f"{ev.type} for content_index {ci} of "
                      f"{item.label()}, never announced by content_part.added: assumed an "
                      f"empty {kind} part", severity="warning", event=ev, slot=address)
        elif part.state != "open":
            if item.state == "open":              # else said once for the whole item
                self._once_note(("late", address), "delta_after_stop",
                                f"{ev.type} after part {address} was done: accumulated "
                                "anyway", severity="warning", event=ev, slot=address)
        elif part.type != kind:
            self._once_note(("kind", address, kind), "delta_mismatch",
                            f"{ev.type} addresses a {part.type} part at {address}; "
                            "accumulated anyway", event=ev, slot=address)
        return part

    def _on_part_added(self, ev: WireEvent, p: dict) -> None:
        data, ci = p.get("part"), p.get("content_index")
        if not isinstance(data, dict) or not _is_index(ci):
            raise _Malformed("needs a content_index and a part object")
        kind = data.get("type")
        item = self._item_for(ev, p, "reasoning" if kind == "reasoning_text" else "message")
        part = item.parts.get(ci)
        if part is None:
            part = item.parts[ci] = Part(data)
            self._structured_call(ev, item, ci, part)
        elif part.assumed:
            part.announce(data)
        else:
            self.note("duplicate_start", f"content_index {ci} of {item.label()} announced "
                      "again; the first announcement is kept", severity="warning", event=ev,
                      slot=(item.index, ci))

    def _on_part_done(self, ev: WireEvent, p: dict) -> None:
        data, ci = p.get("part"), p.get("content_index")
        if not isinstance(data, dict) or not _is_index(ci):
            raise _Malformed("needs a content_index and a part object")
        kind = data.get("type")
        item = self._item_for(ev, p, "reasoning" if kind == "reasoning_text" else "message")
        part = item.parts.get(ci)
        if part is None:
            self.note("event_before_start", f"content_part.done for content_index {ci} of "
                      f"{item.label()}, never announced: the server's part is taken",
                      severity="warning", event=ev, slot=(item.index, ci))
            part = item.parts[ci] = Part(data)
        else:
            self._settle_part(ev, item, ("content", ci), part, data)
        if part.call is not None:
            part.call.end(part.text, t=ev.t, event=ev.index)
        part.state = "closed"

    def _settle_part(self, ev: WireEvent, item: Item, path: tuple, part: Part,
                     data: dict) -> None:
        """A part's done statement: compare what the deltas built, keep the server's."""
        if part.key is None:                      # a part of an unknown type: kept raw
            part.data = data
            return
        theirs = data.get(part.key)
        if isinstance(theirs, str):
            if theirs != part.text:
                self._differs(ev, (item.index, *path, part.key), part.text, theirs)
            part.adopt_text(theirs)
        ann = data.get("annotations")
        if isinstance(ann, list):
            if part.annotations is not None and ann != part.annotations:
                self._differs(ev, (item.index, *path, "annotations"), part.annotations, ann)
            part.annotations = list(ann)
        logprobs = data.get("logprobs")
        if isinstance(logprobs, list) and logprobs:    # the recorded part.done says [] at times
            part.logprobs = list(logprobs)

    def _on_part_delta(self, ev: WireEvent, p: dict) -> None:
        # The hot path: a dict lookup for the item, one for the part, an append.
        item = self._items.get(p.get("output_index"))
        iid = p.get("item_id")
        kind, host = PART_DELTAS[ev.type]
        if item is None or (iid is not None and iid != item.id) or item.state != "open":
            item = self._item_for(ev, p, host)
        part = item.parts.get(p.get("content_index"))
        if part is None or part.state != "open" or part.type != kind:
            part = self._part_for(ev, p, item, kind)
        delta = p["delta"]
        if type(delta) is not str:
            raise _Malformed("delta is not a string")
        part.frags.append(delta)
        call = part.call
        if call is None and self._structured is not None:
            call = self._structured_call(ev, item, p.get("content_index"), part, delta)
        if call is not None:
            call.feed(delta, t=ev.t, event=ev.index)
        logprobs = p.get("logprobs")
        if logprobs:
            if part.logprobs is None:
                part.logprobs = []
            part.logprobs.extend(logprobs)

    def _on_part_text_done(self, ev: WireEvent, p: dict) -> None:
        kind, host, field = PART_DONES[ev.type]
        item = self._item_for(ev, p, host)
        part = self._part_for(ev, p, item, kind)
        theirs = p.get(field)
        if not isinstance(theirs, str):
            raise _Malformed(f"{field} is not a string")
        if theirs != part.text:
            pos = sorted(item.parts).index(p["content_index"])
            self._differs(ev, (item.index, "content", pos, part.key or field), part.text, theirs)
        part.adopt_text(theirs)
        call = part.call
        if call is None and self._structured is not None:
            call = self._structured_call(ev, item, p["content_index"], part)
        if call is not None:
            call.end(theirs, t=ev.t, event=ev.index)
        logprobs = p.get("logprobs")
        if isinstance(logprobs, list) and logprobs:
            part.logprobs = list(logprobs)

    def _on_annotation(self, ev: WireEvent, p: dict) -> None:
        item = self._item_for(ev, p, "message")
        part = self._part_for(ev, p, item, "output_text")
        annotation, n = p.get("annotation"), p.get("annotation_index")
        if part.annotations is None:
            part.annotations = []
        if _is_index(n) and n < len(part.annotations):
            self.note("duplicate_start", f"annotation_index {n} of part "
                      f"({item.index}, {p['content_index']}) again; replaced",
                      severity="warning", event=ev, slot=(item.index, p["content_index"]))
            part.annotations[n] = annotation
        else:
            part.annotations.append(annotation)

    # -- reasoning summaries (summary_index) -------------------------------

    def _summary_for(self, ev: WireEvent, p: dict, item: Item) -> Part:
        si = p.get("summary_index")
        if not _is_index(si):
            raise _Malformed(f"summary_index {si!r} is not an index")
        part = item.summary.get(si)
        address = (item.index, "summary", si)
        if part is None:
            part = item.summary[si] = Part(dict(ASSUMED_PARTS["summary_text"]), assumed=True)
            self.note("event_before_start", f"{ev.type} for summary_index {si} of "
                      f"{item.label()}, never announced by reasoning_summary_part.added: "
                      "assumed an empty summary_text part", severity="warning", event=ev,
                      slot=address)
        elif part.state != "open" and item.state == "open":
            self._once_note(("late", address), "delta_after_stop",
                            f"{ev.type} after summary part {si} of {item.label()} was done: "
                            "accumulated anyway", severity="warning", event=ev, slot=address)
        return part

    def _on_summary_part_added(self, ev: WireEvent, p: dict) -> None:
        data, si = p.get("part"), p.get("summary_index")
        if not isinstance(data, dict) or not _is_index(si):
            raise _Malformed("needs a summary_index and a part object")
        item = self._item_for(ev, p, "reasoning")
        part = item.summary.get(si)
        if part is None:
            item.summary[si] = Part(data)
        elif part.assumed:
            part.announce(data)
        else:
            self.note("duplicate_start", f"summary_index {si} of {item.label()} announced "
                      "again; the first announcement is kept", severity="warning", event=ev,
                      slot=(item.index, "summary", si))

    def _on_summary_delta(self, ev: WireEvent, p: dict) -> None:
        item = self._items.get(p.get("output_index"))
        iid = p.get("item_id")
        if item is None or (iid is not None and iid != item.id) or item.state != "open":
            item = self._item_for(ev, p, "reasoning")
        part = item.summary.get(p.get("summary_index"))
        if part is None or part.state != "open":
            part = self._summary_for(ev, p, item)
        delta = p["delta"]
        if type(delta) is not str:
            raise _Malformed("delta is not a string")
        part.frags.append(delta)

    def _on_summary_text_done(self, ev: WireEvent, p: dict) -> None:
        item = self._item_for(ev, p, "reasoning")
        part = self._summary_for(ev, p, item)
        theirs = p.get("text")
        if not isinstance(theirs, str):
            raise _Malformed("text is not a string")
        if theirs != part.text:
            pos = sorted(item.summary).index(p["summary_index"])
            self._differs(ev, (item.index, "summary", pos, "text"), part.text, theirs)
        part.adopt_text(theirs)

    def _on_summary_part_done(self, ev: WireEvent, p: dict) -> None:
        data = p.get("part")
        if not isinstance(data, dict):
            raise _Malformed("no part object")
        item = self._item_for(ev, p, "reasoning")
        part = self._summary_for(ev, p, item)
        pos = sorted(item.summary).index(p["summary_index"])
        self._settle_part(ev, item, ("summary", pos), part, data)
        part.state = "closed"

    # -- string fields of items (arguments, code, diff, input) -------------

    def _on_field_delta(self, ev: WireEvent, p: dict) -> None:
        kind, path = FIELD_DELTAS[ev.type]
        item = self._items.get(p.get("output_index"))
        iid = p.get("item_id")
        if item is None or (iid is not None and iid != item.id) or item.state != "open":
            item = self._item_for(ev, p, kind)
        frags = item.texts.get(path)
        if frags is None:
            if item.type != kind:
                self._item_for(ev, p, kind)       # says so, once
            frags = item.text_field(path)
        delta = p["delta"]
        if type(delta) is not str:
            raise _Malformed("delta is not a string")
        frags.append(delta)
        if kind in TOOL_ITEMS and item.type == kind:
            call = item.call
            if call is None:
                call = self._call_of(item, ev, skip=delta)
            call.feed(delta, t=ev.t, event=ev.index)

    def _on_field_done(self, ev: WireEvent, p: dict) -> None:
        kind, path, field = FIELD_DONES[ev.type]
        item = self._item_for(ev, p, kind)
        theirs = p.get(field)
        if not isinstance(theirs, str):
            raise _Malformed(f"{field} is not a string")
        frags = item.texts.get(path)
        if frags is not None and frags.text != theirs:
            self._differs(ev, (item.index, *path), frags.text, theirs)
        item.texts[path] = Fragments(theirs)
        if kind == "function_call" and item.type == "function_call":
            self._parse_input(ev, item, theirs)
        elif kind in TOOL_ITEMS and item.type == kind:
            self._call_of(item, ev).end(theirs, t=ev.t, event=ev.index)

    def _parse_input(self, ev: WireEvent, item: Item, raw: str) -> None:
        """A function call's arguments ended: check them strictly, once."""
        item.input = self.end_tool_call(self._call_of(item, ev), cut=False, slot=(item.index,),
                                        event=ev, final_text=raw,
                                        what=f"function_call {item.name or '?'} "
                                             f"(output_index {item.index})")
        item.input_done = True

    # -- tool calls (lesson 3) ---------------------------------------------

    def _call_of(self, item: Item, ev: WireEvent | None, skip: str | None = None) -> ToolCall:
        """The item's tool call (made on first need, seeded with the announced text);
        its name and call id follow the item's announcement."""
        call = item.call
        if call is None:
            if item.type not in TOOL_ITEMS:
                return None  # type: ignore[return-value]
            call = item.call = ToolCall(item.name, item.call_id, kind=item.type,
                                        address=(item.index,),
                                        json_arguments=item.type != "custom_tool_call",
                                        t=ev.t if ev is not None else None,
                                        event=ev.index if ev is not None else None)
            frags = item.texts.get(TOOL_ITEMS[item.type])
            first = frags.text if frags is not None else get_path(item.data,
                                                                  TOOL_ITEMS[item.type])
            if skip is not None and isinstance(first, str) and first.endswith(skip):
                first = first[:len(first) - len(skip)]   # the delta being fed right now
            if isinstance(first, str) and first:
                call.feed(first, t=call.start_t, event=call.start_event)
        else:
            call.name = call.name or item.name or ""
            call.call_id = call.call_id or item.call_id
        return call

    def _structured_call(self, ev: WireEvent, item: Item, ci: Any, part: Part,
                         skip: str | None = None) -> ToolCall | None:
        """With text.format json_schema, an output_text part is structured output: a
        pseudo tool call named after the format."""
        if self._structured is None or part.type != "output_text" or item.type != "message":
            return None
        part.call = ToolCall(self._structured, item.id, kind="structured output",
                             address=(item.index, ci), structured=True, t=ev.t, event=ev.index)
        first = part.text
        if skip is not None and first.endswith(skip):
            first = first[:len(first) - len(skip)]
        if first:
            part.call.feed(first, t=ev.t, event=ev.index)
        return part.call

    def live_tool_calls(self) -> list[ToolCall]:
        """Tool call items and structured-output parts, in output_index order."""
        out = []
        for oi in sorted(self._items):
            item = self._items[oi]
            if item.call is not None:
                out.append(item.call)
            out += [item.parts[ci].call for ci in sorted(item.parts)
                    if item.parts[ci].call is not None]
        return out

    # -- the rest: progress of server tools, images, shell, audio ----------

    def _on_status(self, ev: WireEvent, p: dict) -> None:
        kind, status = STATUS_EVENTS[ev.type]
        item = self._item_for(ev, p, kind)
        if status is not None and "status" in item.data and item.state == "open":
            item.status = status

    def _on_partial_image(self, ev: WireEvent, p: dict) -> None:
        item = self._item_for(ev, p, "image_generation_call")
        b64 = p.get("partial_image_b64")
        if not isinstance(b64, str):
            raise _Malformed("partial_image_b64 is not a string")
        item.partial_images.append((p.get("partial_image_index"), b64))

    def _on_shell_command(self, ev: WireEvent, p: dict) -> None:
        item = self._item_for(ev, p, "shell_call")
        n = p.get("command_index")
        if not _is_index(n):
            raise _Malformed(f"command_index {n!r} is not an index")
        path = ("action", "commands", n)
        if ev.type.endswith(".delta"):
            delta = p["delta"]
            if type(delta) is not str:
                raise _Malformed("delta is not a string")
            item.text_field(path).append(delta)
            return
        command = p.get("command")
        if not isinstance(command, str):
            raise _Malformed("command is not a string")
        frags = item.texts.get(path)
        if ev.type.endswith(".done") and frags is not None and frags.text != command:
            self._differs(ev, (item.index, *path), frags.text, command)
        item.texts[path] = Fragments(command)

    def _on_shell_output(self, ev: WireEvent, p: dict) -> None:
        item = self._item_for(ev, p, "shell_call_output")
        n = p.get("command_index")
        if not _is_index(n):
            raise _Malformed(f"command_index {n!r} is not an index")
        if ev.type.endswith(".delta"):
            delta = p.get("delta")
            if not isinstance(delta, dict):
                raise _Malformed("delta is not an object")
            for stream in ("stdout", "stderr"):
                if isinstance(delta.get(stream), str):
                    item.text_field(("output", n, stream)).append(delta[stream])
        # .done states the outputs whole; output_item.done carries them in the item

    def _on_unaddressed(self, ev: WireEvent, p: dict) -> None:
        """Audio events: no output item, nothing in the `Response`."""

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

    def _fill_from(self, terminal: dict, output: list[dict]) -> None:
        """What only the terminal `Response` knows about our items, taken from it.

        Opaque fields (``encrypted_content``, re-issued at the end) for every
        item; the ``status`` of an item that never got its ``output_item.done``
        (the server says how it ended: ``incomplete``, as a rule).
        """
        theirs = terminal.get("output")
        if not isinstance(theirs, list):
            return
        by_id = {t["id"]: t for t in theirs if isinstance(t, dict) and isinstance(t.get("id"), str)}
        undone = {it.id for it in self._items.values() if it.done is None}
        for item in output:
            iid = item.get("id")
            match = by_id.get(iid) if isinstance(iid, str) else None
            if match is None:
                continue
            for key in OPAQUE_FIELDS:
                if key in match:
                    item[key] = clone(match[key])
            if iid in undone and "status" in match and "status" in item:
                item["status"] = match["status"]

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
            text = self._item_text(item, built)
            tool = item.type in ("function_call", "custom_tool_call", "mcp_call")
            out.append(Slot((oi,), item.type, item.label(), text, item.state,
                            name=item.name, call_id=item.call_id,
                            raw_input=text if tool else None))
        return out

    @staticmethod
    def _item_text(item: Item, built: dict) -> str:
        path = MAIN_FIELD.get(item.type)
        if path is not None:
            text = get_path(built, path)
            return text if isinstance(text, str) else ""
        if item.type == "shell_call":
            commands = get_path(built, ("action", "commands"))
            if isinstance(commands, list):
                return "\n".join(c for c in commands if isinstance(c, str))
        if item.type == "image_generation_call":
            result = built.get("result")
            if isinstance(result, str) and result:
                return f"image: {len(result)} base64 characters"
            if item.partial_images:
                n, b64 = item.partial_images[-1]
                return f"partial image {n}: {len(b64)} base64 characters"
        if item.type == "web_search_call":
            query = get_path(built, ("action", "query"))
            if isinstance(query, str):
                return query
        return ""
