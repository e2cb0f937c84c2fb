"""The Anthropic Messages accumulator: blocks in slots addressed by `index`.

``message_start`` announces the message; each ``content_block_start`` opens
the slot ``index`` with the block's type and identity; deltas name that
index; ``content_block_stop`` closes it; ``message_delta`` carries the stop
reason and the cumulative usage; ``message_stop`` ends the stream.

What each delta does to its block:

- ``text_delta``: appends to ``text``;
- ``thinking_delta``: appends to ``thinking``;
- ``signature_delta``: sets ``signature`` (it arrives just before the stop);
- ``citations_delta``: appends one citation to ``citations``;
- ``input_json_delta``: feeds the block's `ToolCall` (lesson 3), which keeps
  the raw text and the partial value; checked strictly at the stop;
- ``compaction_delta`` (beta): appends to ``content``.

Result blocks and ``redacted_thinking`` arrive whole in their start event.
A resumed response's ``message_start`` may already hold whole blocks in
``message.content``: each is fed as the start, deltas and stop it would have
streamed as, so it means just what the same block streamed means (a call's
input is checked and ready, a signature said).
Nothing is dropped silently: a block of a type this module does not know
stays in ``content`` as the raw data of its start event (``unknown_block``);
an unknown delta or event type, a delta for a slot never started, or one
that does not fit its block is not applied, and its diagnostic carries the
raw event (``unknown_delta``, ``unknown_event``, ``unknown_slot``,
``delta_mismatch``).

The order of a block's events is part of the protocol: one block at a time,
each started, streamed and stopped, all before ``message_delta``. What breaks
that order is an ``error`` diagnostic (so the CLI exits 3): a delta or a
stop for a slot never started (``unknown_slot``), a delta after its block's
stop (``delta_after_stop``), a second start (``duplicate_start``), a start
while another block is open (``blocks_overlap``), a block event after
``message_delta`` (``block_after_message_delta``) or after an ``error``
(``event_after_error``), any event but ``ping`` after ``message_stop``
(``event_after_terminal``), a second stop (``duplicate_stop``). A delta that cannot be applied keeps its text in the
diagnostic's ``orphan_text`` (and its raw event), so nothing that arrived is
lost; a block event that is merely late is still applied.

That is the rule. Beside this module, each in the file named for it: `block` (what
a block holds, and its text), `resumed` (a ``message_start`` that states blocks
whole) and `fallback` (a ``fallback`` block hands the message to another model).
The first branch of `feed` is the speed path for the common delta: a text delta
for a slot whose first such delta was fully checked goes straight to its text.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ...diagnostics import Diagnostic
from ...wires import anthropic
from ...wires.anthropic import KNOWN_BLOCKS, finish_reason
from ...wires.wire_events import WireEvent
from ..base import Fragments
from ..changes import (
    CitationAdded,
    InBandError,
    ResponseChanged,
    SlotOpened,
    SlotSigned,
    TerminalReached,
    TextAppended,
    ToolInputGrew,
)
from ..indexed import IndexedAccumulator
from ..started import close_started
from .block import (
    CHANNEL,
    KNOWN_DELTAS,
    STREAMED,
    TEXT_DELTA_KIND,
    TEXT_DELTAS,
    Block,
    delta_text,
    slot_text,
)
from .fallback import ModelFallback
from .resumed import StatedWhole

_new = tuple.__new__


class AnthropicAccumulator(StatedWhole, ModelFallback, IndexedAccumulator):
    """Builds an Anthropic ``Message`` from Messages-API stream events."""

    wire = anthropic.WIRE
    blocks: dict[int, Block]

    def __init__(self) -> None:
        super().__init__()
        self.message: dict[str, Any] = {}
        self.started = False
        self.stopped = False
        self.errored = False
        self._warned_before_start = False
        self.message_delta_seen = False
        # Open slot -> delta type -> (the delta's text key, where it goes, and the
        # change's address, channel and field): the fast path for the common
        # delta, set up by its first, fully checked one.
        self._sinks: dict[int, dict[str, tuple[str, list[str], int, str, str]]] = {}
        self._open: list[int] = []   # the slot started last, while it may be open

    def feed(self, event: WireEvent) -> list:
        """Take one event of the stream (see the module docstring); return its changes."""
        if event.type == anthropic.CONTENT_BLOCK_DELTA and self._sinks:
            payload = event.payload
            try:
                delta = payload["delta"]
                key, sink, address, channel, field = self._sinks[payload["index"]][delta["type"]]
            except (KeyError, TypeError):
                pass
            else:
                value = delta.get(key)
                if type(value) is str and self.started and not self.stopped:
                    sink.append(value)
                    return [_new(TextAppended, (event.index, address, channel, value, field))]
        self.changes = changes = []
        if self.unreadable(event):
            return changes
        kind = event.type
        handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
        if handler is None:
            self.unknown_event(event, kind, "the Messages stream")
            return changes
        if self.stopped and kind != anthropic.PING:
            self.note("event_after_terminal", f"{kind} after message_stop",
                      event=event, raw=event.sse.data)
        if kind.startswith("content_block_"):
            self._check_order(kind, event)
        if not self.started and kind not in (anthropic.MESSAGE_START, anthropic.PING, "error"):
            if not self._warned_before_start:
                self._warned_before_start = True
                self.note("event_before_start", f"{kind} arrived before message_start; "
                          "events are accumulated anyway", event=event)
        handler(self, event.payload, event)
        return changes

    def _check_order(self, kind: str, event: WireEvent) -> None:
        """Note a block event that comes after ``message_delta`` or an ``error``."""
        if self.errored:
            self.note("event_after_error", f"{kind} after the error that ended the stream",
                      event=event, raw=event.sse.data)
        elif self.message_delta_seen:
            self.note("block_after_message_delta", f"{kind} after message_delta, which "
                      "comes after the last block; applied anyway", event=event,
                      raw=event.sse.data)

    def _opened(self, block: Block, event: WireEvent) -> None:
        """Record the `SlotOpened` of a block (and its close, for one already closed)."""
        data = block.data
        name, call_id, text = data.get("name"), data.get("id"), data.get("text")
        takes_input = block.takes_input
        whole = block.state != "open" or (not takes_input and block.kind in KNOWN_BLOCKS
                                          and block.kind not in STREAMED)
        self.changes.append(SlotOpened(
            event.index, block.index, block.kind, block.label(),
            name=name if isinstance(name, str) else None,
            call_id=call_id if isinstance(call_id, str) else None,
            item_id=call_id if isinstance(call_id, str) else None,
            content=text if isinstance(text, str) else "", whole=whole,
            takes_input=takes_input, data=data, input=data.get("input"),
            shown=None if takes_input else slot_text(block),
            ended_by=anthropic.CALL_ENDED_BY if takes_input else None))

    def _message_start(self, payload: dict, event: WireEvent) -> None:
        message = payload.get("message")
        if self.started:
            self.note("duplicate_start", "a second message_start; the first one is kept",
                      event=event, raw=event.sse.data)
            return
        self.started = True
        if not isinstance(message, dict):
            self.note("unknown_event", "message_start carries no message object",
                      event=event, raw=event.sse.data)
            return
        self.message = copy.deepcopy(message)
        content = self.message.pop("content", None)
        self.changes.append(ResponseChanged(event.index, copy.deepcopy(self.message)))
        # Blocks the start already carries are slots 0..k-1, each taken as if it had
        # streamed: what a start states whole means what the same block streamed means.
        for i, block in enumerate(content if isinstance(content, list) else []):
            if isinstance(block, dict) and i not in self.blocks:
                self._stated_whole(i, block, event)

    def _block_start(self, payload: dict, event: WireEvent) -> None:
        index, data = payload.get("index"), payload.get("content_block")
        if not isinstance(index, int) or not isinstance(data, dict):
            self.note("unknown_slot", "content_block_start without an integer index and a "
                      "content_block object", event=event, raw=event.sse.data)
            return
        if self.already_started(index, event):
            return
        still_open = [i for i in self._open if self.blocks[i].state == "open"]
        if still_open:
            self.note("blocks_overlap", f"slot {index} started while slot {still_open[0]} "
                      "is still open (no content_block_stop); both are kept", event=event,
                      slot=index, raw=event.sse.data)
        block = Block(index, copy.deepcopy(data))
        self.blocks[index] = block
        self._open = [index]
        if block.takes_input:
            block.open_call(event)
        self._opened(block, event)
        if block.kind == "fallback":
            self._fallback(block, event)
        if block.kind not in KNOWN_BLOCKS:
            self.note("unknown_block", f"block type {block.kind!r} is not known; kept as "
                      "the raw data of its start event", event=event, severity="warning",
                      slot=index, raw=event.sse.data)

    def _block_delta(self, payload: dict, event: WireEvent) -> None:
        index, delta = payload.get("index"), payload.get("delta")
        block = self.blocks.get(index) if isinstance(index, int) else None
        if block is None:
            self.note("unknown_slot", f"delta for slot {index!r}, which was never started; "
                      "not applied, its text is kept here", event=event, slot=index,
                      raw=event.sse.data, orphan_text=delta_text(delta))
            return
        if block.state != "open":
            self.note("delta_after_stop", f"delta for slot {index} after its stop; not "
                      "applied, its text is kept here", event=event, slot=index,
                      raw=event.sse.data, orphan_text=delta_text(delta))
            return
        dtype = delta.get("type") if isinstance(delta, dict) else None
        if dtype in TEXT_DELTAS:
            field, value_key = TEXT_DELTAS[dtype]
            value = delta.get(value_key)
            # The block must have that field (or be of that kind): a text_delta
            # for a tool_use block would invent a field the API never returns.
            fits = field in block.data or block.kind == TEXT_DELTA_KIND[dtype]
            if isinstance(value, str) and fits:
                stream = block.streams.get(field)
                if stream is None:
                    stream = block.streams[field] = Fragments()
                stream.append(value)
                channel = CHANNEL[dtype]
                if not (self.message_delta_seen or self.errored):
                    self._sinks.setdefault(index, {})[dtype] = (value_key, stream.parts,
                                                                index, channel, field)
                self.changes.append(TextAppended(event.index, index, channel, value, field))
                return
        elif dtype == "input_json_delta" and block.takes_input:
            fragment = delta.get("partial_json")
            if isinstance(fragment, str):
                grew = block.open_call(event).feed(fragment, t=event.t, event=event.index)
                self.changes.append(ToolInputGrew(event.index, index, fragment, tuple(grew)))
                return
        elif dtype == "signature_delta" and isinstance(delta.get("signature"), str):
            block.data["signature"] = delta["signature"]
            self.changes.append(SlotSigned(event.index, index, delta["signature"]))
            return
        elif dtype == "citations_delta" and "citation" in delta:
            if block.citations is None:
                block.citations = []
            block.citations.append(copy.deepcopy(delta["citation"]))
            self.changes.append(CitationAdded(event.index, index, block.citations[-1]))
            return
        elif dtype not in KNOWN_DELTAS:
            self.note("unknown_delta", f"delta type {dtype!r} is not known; kept as raw data",
                      event=event, severity="warning", slot=index, raw=event.sse.data)
            return
        self.note("delta_mismatch", f"{dtype} does not fit slot {index} ({block.kind}); "
                  "not applied", event=event, severity="warning", slot=index,
                  raw=event.sse.data)

    def _block_stop(self, payload: dict, event: WireEvent) -> None:
        index = payload.get("index")
        block = self.block_to_stop(index, event)
        if block is None:
            return
        self._sinks.pop(index, None)
        close_started(self, block, cut=False, event=event)

    def _message_delta(self, payload: dict, event: WireEvent) -> None:
        self.message_delta_seen = True
        self._sinks.clear()   # a block event after this one must take the checked path
        delta = payload.get("delta")
        fields: dict[str, Any] = {}
        if isinstance(delta, dict):
            for key, value in delta.items():
                self.message[key] = copy.deepcopy(value)
                fields[key] = copy.deepcopy(value)
        usage = payload.get("usage")
        if isinstance(usage, dict):
            # Cumulative totals: overwrite; a field absent (or null) here keeps its start value.
            total = self.message.get("usage")
            if not isinstance(total, dict):
                total = self.message["usage"] = {}
            for key, value in usage.items():
                if value is not None:
                    total[key] = copy.deepcopy(value)
            fields["usage"] = copy.deepcopy(total)
        if fields:
            self.changes.append(ResponseChanged(event.index, fields))

    def _message_stop(self, payload: dict, event: WireEvent) -> None:
        if not self.errored:
            self.complete = True
        self.stopped = True
        self.changes.append(TerminalReached(event.index, anthropic.MESSAGE_STOP))

    def length_stop(self) -> bool:
        """`message_stop` after a ``max_tokens`` (or context window) stop reason."""
        return self.stopped and finish_reason(self.message.get("stop_reason")) == "length"

    def _error(self, payload: dict, event: WireEvent) -> None:
        self.errored = True
        self._sinks.clear()
        self.complete = False
        error = payload.get("error")
        kind = error.get("type") if isinstance(error, dict) else None
        text = error.get("message") if isinstance(error, dict) else None
        self.changes.append(InBandError(event.index, f"{kind or 'error'}: {text or event.sse.data}",
                                        copy.deepcopy(error),
                                        kind if isinstance(kind, str) else None))
        self.note("in_band_error", f"{kind or 'error'}: {text or event.sse.data}",
                  event=event, raw=event.sse.data, error=copy.deepcopy(error))

    def _ping(self, payload: dict, event: WireEvent) -> None:
        pass

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: close open blocks (tool input cut), note a missing terminal;
        return what that changed."""
        if not self.begin_finish(sse_diagnostics):
            return []
        for block in self.never_stopped(anthropic.CONTENT_BLOCK_STOP,
                                        length_stop=self.stopped and self.length_stop()):
            self._sinks.pop(block.index, None)
            close_started(self, block, cut=True, event=None)
        if not self.stopped and not self.errored:
            self.note("no_terminal", "the stream ended before message_stop: what arrived "
                      "is kept, but the message is incomplete")
        return self.end_changes("in_band_error" if self.errored else "cut")

    def final(self) -> dict:
        """The ``Message`` so far: the start's fields, the blocks in index order,
        the stop reason and usage from ``message_delta``."""
        message = {"id": None, "type": "message", "role": "assistant", "model": None,
                   "content": [], "stop_reason": None, "stop_sequence": None}
        message.update(copy.deepcopy(self.message))
        message["content"] = [self.blocks[i].as_dict() for i in sorted(self.blocks)]
        return message


_HANDLERS = {
    anthropic.MESSAGE_START: AnthropicAccumulator._message_start,
    anthropic.CONTENT_BLOCK_START: AnthropicAccumulator._block_start,
    anthropic.CONTENT_BLOCK_DELTA: AnthropicAccumulator._block_delta,
    anthropic.CONTENT_BLOCK_STOP: AnthropicAccumulator._block_stop,
    anthropic.MESSAGE_DELTA: AnthropicAccumulator._message_delta,
    anthropic.MESSAGE_STOP: AnthropicAccumulator._message_stop,
    "error": AnthropicAccumulator._error,
    anthropic.PING: AnthropicAccumulator._ping,
}
