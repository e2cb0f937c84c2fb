"""The Bedrock accumulators: ConverseStream's own, and InvokeModel's (Anthropic's, reused).

**ConverseStream.** Blocks sit in slots addressed by ``contentBlockIndex``.
Only tool blocks get a ``contentBlockStart`` (``start.toolUse`` with
``toolUseId`` and ``name``, or a server tool's ``start.toolResult``); a text
or reasoning block begins with its first delta, so a delta for a slot never
seen opens it, its kind told by the delta. What each delta does:

- ``text``: appends to the block's text;
- ``reasoningContent``: ``text`` appends to the reasoning text, ``signature``
  sets its signature (one delta of its own), ``redactedContent`` sets it. A
  block that begins with ``redactedContent`` is redacted reasoning: it
  arrives whole in that delta (base64 bytes only the provider can read), so
  its slot opens `whole`, with the delta's object as its `data`;
- ``citation``: appends one citation to a text block (it may come before any
  of the block's text, so it opens the block too);
- ``toolUse.input``: feeds the block's `ToolCall` (lesson 3), checked
  strictly at the block's stop;
- ``toolResult``: appends result items (a server tool's result).

``messageStop`` carries ``stopReason`` and ends the stream properly; the
``metadata`` after it brings ``usage`` and ``metrics`` (a frame cut after
``messageStop`` still leaves the stream incomplete: the metadata was lost). Every payload's ``p``
padding field is ignored. An exception frame (``throttlingException``...) is
an in-band error. `final()` is the Converse response as the non-streaming
API returns it::

    {"output": {"message": {"role": "assistant", "content": [
        {"text": ...} | {"citationsContent": {"content": [{"text"}], "citations"}}
        | {"toolUse": {"toolUseId", "name", "input"}}
        | {"reasoningContent": {"reasoningText": {"text", "signature"}}}
        | {"reasoningContent": {"redactedContent": ...}}
        | {"toolResult": {"toolUseId", "content", "status"}}]}},
     "stopReason": ..., "usage": {...}, "metrics": {...}}

What does not fit is a diagnostic, never dropped: a delta for a stopped slot
(``delta_after_stop``), a second start (``duplicate_start``) or stop
(``duplicate_stop``), a tool delta for a slot no start opened
(``unknown_slot``), a block event after ``messageStop``
(``event_after_terminal``), a delta of a kind this module does not know
(``unknown_delta``), an unknown event (``unknown_event``).

**InvokeModelWithResponseStream** carries Anthropic's own events, so its
accumulator is `AnthropicAccumulator` as it is; it only learns Bedrock's
exception frames, which it reads as Anthropic ``error`` events.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

from ..diagnostics import Diagnostic
from ..partial_json import NOTHING
from ..sse.eventstream import FRAMING_ERRORS
from ..tool_calls import ToolCall
from ..wires import bedrock, bedrock_converse
from ..wires.bedrock_converse import CITATION, PADDING, REASONING_TEXT, REDACTED_CONTENT
from ..wires.bedrock_converse import REASONING_BLOCK as REASONING
from ..wires.bedrock_converse import TEXT_BLOCK as TEXT
from ..wires.bedrock_converse import TOOL_RESULT_BLOCK as TOOL_RESULT
from ..wires.bedrock_converse import TOOL_USE_BLOCK as TOOL_USE
from ..wires.wire_events import WireEvent
from .anthropic import AnthropicAccumulator
from .base import Fragments
from .changes import (
    CitationAdded,
    InBandError,
    ResponseChanged,
    SlotClosed,
    SlotOpened,
    SlotSigned,
    TerminalReached,
    TextAppended,
    ToolInputGrew,
    UnknownEvent,
)
from .indexed import IndexedAccumulator, IndexedBlock

# Which kind of block a delta's field belongs to (a delta for a slot never seen opens one).
_DELTA_KIND = {TEXT: TEXT, CITATION: TEXT, REASONING: REASONING,
               TOOL_USE: TOOL_USE, TOOL_RESULT: TOOL_RESULT}


class _Block(IndexedBlock):
    """One slot: its kind, its start (tool blocks), and what the deltas added."""

    __slots__ = ("start", "text", "signature", "redacted", "citations", "results", "input")

    def __init__(self, index: int, kind: str, start: dict | None = None) -> None:
        super().__init__(index, kind)
        self.start = start or {}             # ``start.toolUse`` / ``start.toolResult``
        self.text = Fragments()              # text, reasoning text
        self.signature: str | None = None
        self.redacted: Any = None
        self.citations: list = []
        self.results: list = []              # toolResult items
        self.input: Any = NOTHING            # a tool call's input once it ended

    @property
    def takes_input(self) -> bool:
        return self.kind == TOOL_USE

    def identity(self) -> tuple[Any, Any]:
        return self.start.get("name"), self.start.get("toolUseId")

    def shown(self) -> str:
        """What the slot view shows: the text, or the result items."""
        if self.kind == TOOL_RESULT:
            return "".join(_item_text(item) for item in self.results)
        return self.text.text

    def current_input(self) -> Any:
        if self.input is not NOTHING:
            return self.input
        if self.call is not None and self.call.raw_length:
            value = self.call.view().value
            return value if value is not NOTHING else {}
        return {}

    def as_dict(self) -> dict:
        """The block as the non-streaming response's content block."""
        if self.kind == TOOL_USE:
            use = {k: copy.deepcopy(v) for k, v in self.start.items()}
            use["input"] = self.current_input()
            return {TOOL_USE: use}
        if self.kind == TOOL_RESULT:
            result = {k: copy.deepcopy(v) for k, v in self.start.items()}
            result["content"] = copy.deepcopy(self.results)
            return {TOOL_RESULT: result}
        if self.kind == REASONING:
            if self.redacted is not None and not self.text.text:
                return {REASONING: {REDACTED_CONTENT: self.redacted}}
            text: dict[str, Any] = {"text": self.text.text}
            if self.signature is not None:
                text["signature"] = self.signature
            return {REASONING: {REASONING_TEXT: text}}
        if self.citations:
            return {"citationsContent": {"content": [{"text": self.text.text}],
                                         "citations": copy.deepcopy(self.citations)}}
        return {TEXT: self.text.text}


def _item_text(item: Any) -> str:
    return json.dumps(item, ensure_ascii=False, separators=(",", ":"))


def _unpadded(payload: dict) -> dict:
    return {k: copy.deepcopy(v) for k, v in payload.items() if k != PADDING}


class ConverseAccumulator(IndexedAccumulator):
    """Builds the Converse response from ConverseStream events (see the module docstring)."""

    wire = bedrock.CONVERSE
    blocks: dict[int, _Block]

    def __init__(self) -> None:
        super().__init__()
        self.response: dict[str, Any] = {}     # stopReason, usage, metrics, ...
        self.role: str | None = None
        self.started = False
        self.stopped = False
        self.errored = False

    # -- feeding ---------------------------------------------------------------

    def feed(self, event: WireEvent) -> list:
        """Take one event and return what it changed (never raises on bad input)."""
        self.changes = changes = []
        if event.parse_error is not None or not isinstance(event.payload, dict):
            why = event.parse_error or "the payload is not a JSON object"
            self.note("unparseable_json", f"event {event.type!r} skipped: {why}",
                      event=event, raw=event.sse.data)
            return changes
        kind = event.type
        if kind in bedrock.EXCEPTIONS:
            self._exception(event)
            return changes
        handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
        if handler is None:
            changes.append(UnknownEvent(event.index, kind, event.payload))
            self.note("unknown_event", f"event type {kind!r} is not part of ConverseStream; "
                      "kept as raw data", event=event, severity="warning",
                      raw=event.sse.data, payload=event.payload)
            return changes
        if self.errored:
            self.note("event_after_error", f"{kind} after the exception that ended the "
                      "stream", event=event, raw=event.sse.data)
        elif self.stopped and kind != "metadata":
            self.note("event_after_terminal", f"{kind} after messageStop", event=event,
                      raw=event.sse.data)
        if not self.started and kind != bedrock_converse.MESSAGE_START:
            self.started = True
            self.note("event_before_start", f"{kind} arrived before messageStart; events are "
                      "accumulated anyway", event=event)
        handler(self, event.payload, event)
        return changes

    def _message_start(self, payload: dict, event: WireEvent) -> None:
        if self.started:
            self.note("duplicate_start", "a second messageStart; the first one is kept",
                      event=event, raw=event.sse.data)
            return
        self.started = True
        role = payload.get("role")
        self.role = role if isinstance(role, str) else None
        self.changes.append(ResponseChanged(event.index, {"role": self.role}))

    def _block_start(self, payload: dict, event: WireEvent) -> None:
        index, start = payload.get("contentBlockIndex"), payload.get("start")
        kinds = [k for k in (TOOL_USE, TOOL_RESULT) if isinstance(start, dict)
                 and isinstance(start.get(k), dict)]
        if not isinstance(index, int) or not kinds:
            self.note("unknown_slot", "contentBlockStart without an integer contentBlockIndex "
                      "and a toolUse or toolResult start", event=event, raw=event.sse.data)
            return
        if index in self.blocks:
            self.note("duplicate_start", f"slot {index} was already started; the first start "
                      "is kept", event=event, slot=index, raw=event.sse.data)
            return
        self._open(_Block(index, kinds[0], copy.deepcopy(start[kinds[0]])), event)

    def _open(self, block: _Block, event: WireEvent, *, whole: Any = None) -> _Block:
        """Open `block`'s slot. `whole` is the object of a block that arrives whole in
        the event that opens it (redacted reasoning)."""
        self.blocks[block.index] = block
        start = block.start
        name, call_id = start.get("name"), start.get("toolUseId")
        if block.takes_input:
            block.call = ToolCall(name if isinstance(name, str) else None,
                                  call_id if isinstance(call_id, str) else None,
                                  kind=TOOL_USE, address=block.index, t=event.t,
                                  event=event.index, ended_by=bedrock_converse.CALL_ENDED_BY)
        self.changes.append(SlotOpened(
            event.index, block.index, block.kind, block.label(),
            name=name if isinstance(name, str) else None,
            call_id=call_id if isinstance(call_id, str) else None,
            item_id=call_id if isinstance(call_id, str) else None,
            takes_input=block.takes_input, data=start or whole,
            whole=whole is not None,
            ended_by=bedrock_converse.CALL_ENDED_BY if block.takes_input else None))
        return block

    def _block_delta(self, payload: dict, event: WireEvent) -> None:
        index, delta = payload.get("contentBlockIndex"), payload.get("delta")
        fields = list(delta) if isinstance(delta, dict) else []
        if PADDING in fields:
            fields.remove(PADDING)
        field = fields[0] if len(fields) == 1 else None
        if not isinstance(index, int) or field not in _DELTA_KIND:
            self.note("unknown_delta", "a delta that is not one of text, reasoningContent, "
                      "citation, toolUse, toolResult for an integer contentBlockIndex; kept as "
                      "raw data", event=event, severity="warning", slot=index,
                      raw=event.sse.data)
            return
        value = delta[field]
        block = self.blocks.get(index)
        if block is None:
            kind = _DELTA_KIND[field]
            if kind in (TOOL_USE, TOOL_RESULT):   # tool blocks are announced by their start
                self.note("unknown_slot", f"{field} delta for slot {index}, which no "
                          "contentBlockStart opened; not applied, its text is kept here",
                          event=event, slot=index, raw=event.sse.data,
                          orphan_text=_orphan(value))
                return
            redacted = kind == REASONING and isinstance(value, dict) and REDACTED_CONTENT in value
            block = self._open(_Block(index, kind), event,
                               whole={REDACTED_CONTENT: value[REDACTED_CONTENT]} if redacted
                               else None)
        if block.state != "open":
            self.note("delta_after_stop", f"delta for slot {index} after its stop; not "
                      "applied, its text is kept here", event=event, slot=index,
                      raw=event.sse.data, orphan_text=_orphan(value))
            return
        if _DELTA_KIND[field] != block.kind or not _apply(self, block, field, value, event):
            self.note("delta_mismatch", f"a {field} delta does not fit slot {index} "
                      f"({block.kind}); not applied", event=event, severity="warning",
                      slot=index, raw=event.sse.data)

    def _block_stop(self, payload: dict, event: WireEvent) -> None:
        block = self.block_to_stop(payload.get("contentBlockIndex"), event)
        if block is None:
            return
        self._close(block, cut=False, event=event)

    def _close(self, block: _Block, *, cut: bool, event: WireEvent | None) -> None:
        how = "end_of_stream" if cut else "stop"
        if block.call is None:
            self.changes.append(SlotClosed(event.index if event is not None else None,
                                           block.index, how, synthesised=cut))  # type: ignore[arg-type]
            return
        what = f"toolUse {block.start.get('name', '')}".rstrip() + f" (slot {block.index})"
        block.input = self.close_call_slot(block.call, block.index, cut=cut, event=event,
                                           what=what, how=how)

    def _message_stop(self, payload: dict, event: WireEvent) -> None:
        fields = _unpadded(payload)
        self.response.update(fields)
        if fields:
            self.changes.append(ResponseChanged(event.index, copy.deepcopy(fields)))
        if not self.errored:
            self.complete = True
        self.stopped = True
        self.changes.append(TerminalReached(event.index, bedrock_converse.MESSAGE_STOP))

    def _metadata(self, payload: dict, event: WireEvent) -> None:
        fields = _unpadded(payload)
        self.response.update(fields)
        if fields:
            self.changes.append(ResponseChanged(event.index, copy.deepcopy(fields)))

    def _exception(self, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        error = bedrock.read_exception(event.type, event.payload)
        message = f"{event.type}: {error.message if error and error.message else event.sse.data}"
        raw = _unpadded(event.payload) if isinstance(event.payload, dict) else event.payload
        self.changes.append(InBandError(event.index, message, {"type": event.type, **raw},
                                        event.type))
        self.note("in_band_error", message, event=event, raw=event.sse.data,
                  error={"type": event.type, **raw})

    # -- ending ----------------------------------------------------------------

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: close open blocks (tool input cut), note a missing terminal."""
        if not self.begin_finish(sse_diagnostics):
            return []
        if any(d.code in FRAMING_ERRORS or d.code == "truncated_frame"
               for d in self.diagnostics):
            # A frame cut or broken after messageStop took the metadata (usage) with it:
            # the stream did not end as ConverseStream ends.
            self.complete = False
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.state != "open":
                continue
            block.state = "never closed"
            # ConverseStream stops every block before messageStop: a block left open
            # proves a lost frame, unless the model stopped inside it (a length stop),
            # as on Anthropic's wire.
            length = bedrock_converse.finish_reason(self.response.get("stopReason")) == "length"
            self.note("block_never_stopped", f"slot {index} ({block.kind}) never got its "
                      "contentBlockStop", slot=index,
                      severity="warning" if self.stopped and length else "error")
            self._close(block, cut=True, event=None)
        if not self.stopped and not self.errored:
            self.note("no_terminal", "the stream ended before messageStop: what arrived is "
                      "kept, but the message is incomplete")
        return self.end_changes("in_band_error" if self.errored else "cut")

    # -- reading ---------------------------------------------------------------

    def final(self) -> dict:
        """The Converse response so far, as the non-streaming API returns it."""
        content = [self.blocks[i].as_dict() for i in sorted(self.blocks)]
        out: dict[str, Any] = {"output": {"message": {"role": self.role or "assistant",
                                                      "content": content}},
                               "stopReason": None}
        out.update(copy.deepcopy(self.response))
        return out


def _apply(acc: ConverseAccumulator, block: _Block, field: str, value: Any,
           event: WireEvent) -> bool:
    """Apply one delta to its block, recording its change; False when it does not fit."""
    at, index = event.index, block.index
    if field == TEXT and isinstance(value, str):
        block.text.append(value)
        acc.changes.append(TextAppended(at, index, "text", value, TEXT))
    elif field == CITATION and isinstance(value, dict):
        block.citations.append(copy.deepcopy(value))
        acc.changes.append(CitationAdded(at, index, block.citations[-1]))
    elif field == REASONING and isinstance(value, dict):
        return _apply_reasoning(acc, block, value, event)
    elif field == TOOL_USE and isinstance(value, dict) and isinstance(value.get("input"), str):
        assert block.call is not None
        grew = block.call.feed(value["input"], t=event.t, event=at)
        acc.changes.append(ToolInputGrew(at, index, value["input"], tuple(grew)))
    elif field == TOOL_RESULT and isinstance(value, list):
        block.results.extend(copy.deepcopy(value))
        for item in value:
            acc.changes.append(TextAppended(at, index, "other", _item_text(item), TOOL_RESULT))
    else:
        return False
    return True


def _apply_reasoning(acc: ConverseAccumulator, block: _Block, value: dict,
                     event: WireEvent) -> bool:
    if isinstance(value.get("text"), str):
        block.text.append(value["text"])
        acc.changes.append(TextAppended(event.index, block.index, "reasoning", value["text"],
                                        REASONING_TEXT))
    elif isinstance(value.get("signature"), str):
        block.signature = value["signature"]
        acc.changes.append(SlotSigned(event.index, block.index, value["signature"]))
    elif REDACTED_CONTENT in value:
        block.redacted = copy.deepcopy(value[REDACTED_CONTENT])
    else:
        return False
    return True


def _orphan(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("text", "input", "signature"):
            if isinstance(value.get(key), str):
                return value[key]
    return None


_HANDLERS = {
    bedrock_converse.MESSAGE_START: ConverseAccumulator._message_start,
    bedrock_converse.CONTENT_BLOCK_START: ConverseAccumulator._block_start,
    bedrock_converse.CONTENT_BLOCK_DELTA: ConverseAccumulator._block_delta,
    bedrock_converse.CONTENT_BLOCK_STOP: ConverseAccumulator._block_stop,
    bedrock_converse.MESSAGE_STOP: ConverseAccumulator._message_stop,
    "metadata": ConverseAccumulator._metadata,
}


class InvokeAccumulator(AnthropicAccumulator):
    """InvokeModelWithResponseStream: the Anthropic accumulator, plus Bedrock's exception
    frames read as Anthropic ``error`` events (an in-band error that ends the stream)."""

    wire = bedrock.INVOKE

    def feed(self, event: WireEvent) -> list:
        """An exception frame is an ``error`` event; every other event is Anthropic's."""
        if event.type not in bedrock.EXCEPTIONS:
            return super().feed(event)
        self.changes = []
        payload = event.payload if isinstance(event.payload, dict) else {}
        message = payload.get("message")
        self._error({"error": {"type": event.type, "message": message
                               if isinstance(message, str) else None}}, event)
        return self.changes
