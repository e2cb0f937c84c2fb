"""From one step's accumulator changes to turn events: what every wire shares.

A wire adapter reads the typed changes an accumulator's `feed` and `finish`
return (`lesson_lib.accumulate.changes`) and says them in the turn's
vocabulary. No payload is parsed again: the accumulator already did that.
The wire modules only say what differs: which slot kinds are which blocks,
which are provider-side tools, the finish reason, and the usage.

Correlation is the accumulator's: a slot address names one call, whatever
index the wire reused (Chat correlates by id first, then index). The
adapter gives each slot a block id unique in the turn (``s1.b0``); an
address that opens again after its block ended is a new block.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ...accumulate.base import parse_tool_input
from ...sse.eventstream import FRAMING_ERRORS
from ...tool_calls import partial_value
from ..events import (
    BlockDelta,
    BlockEnded,
    BlockKind,
    BlockStarted,
    Channel,
    ErrorReported,
    Finish,
    LazyPaths,
    Noted,
    SignatureAdded,
    SourceAdded,
    StepFinished,
    StepStarted,
    ToolCallInvalid,
    ToolCallReady,
    TurnEvent,
    Usage,
    UsageReported,
    WireEventPassed,
)
from ..outcome import step_ending

# Diagnostic codes that make a step fail, and with which scope.
PARSE_CODES = frozenset({"unparseable_json", "malformed_event", "not_text",
                        "unknown_message_type"}) | FRAMING_ERRORS
PROTOCOL_CODES = frozenset({"event_before_start", "unknown_slot", "duplicate_start",
                            "duplicate_stop", "delta_after_stop", "delta_after_finish",
                            "delta_mismatch", "event_after_terminal", "sequence_duplicate",
                            "sequence_out_of_order", "sequence_gap",
                            "partial_args_out_of_order"})
# Codes that say the stream was cut. Before the wire's terminal they make the step
# `truncated`; after it (the wire said it was done) the stream broke its protocol.
CUT_CODES = frozenset({"no_terminal", "block_never_stopped", "cut_tool_input",
                       "undispatched_bytes", "truncated_frame"})   # a binary frame cut short
# Bytes at the end of the body that never became an event. After the terminal they are
# junk the stream did not end with, whatever their severity: the stream did not end
# properly (`stream_end.how_it_ended`), so the step fails, as `final` does.
TAIL_CODES = frozenset({"undispatched_bytes", "truncated_frame"})
# Reported by their own change (InBandError) or by the block's own end.
_SAID_ELSEWHERE = frozenset({"in_band_error"})

CONTAINER = "container"   # a slot that holds blocks but is not one (a Responses message)
PARENT = "parent"         # a slot whose text belongs to its parent's block (a summary part)


class Counter:
    """The turn's sequence numbers, shared by every step's adapter."""

    __slots__ = ("next",)

    def __init__(self, start: int = 0) -> None:
        self.next = start

    def __call__(self) -> int:
        n = self.next
        self.next += 1
        return n


@dataclass(slots=True)
class _Block:
    id: str
    kind: BlockKind
    name: str | None = None
    call_id: str | None = None
    server_side: bool = False
    channel: str = "text"
    fragments: list[str] = field(default_factory=list)   # tool input, joined only at the end
    ended: bool = False
    restated: str | None = None     # the server's whole text, where it differs from the deltas
    # A block made of parts (a reasoning item's summary parts): each part's text, in the
    # order the parts opened, so that a part the server restates replaces only its own.
    parts: dict[Any, list[str]] | None = None
    parts_restated: bool = False
    wire_kind: str | None = None    # the slot's kind as the wire spells it


class WireAdapter:
    """Turn events for one step (one model call) on one wire, from its changes.

    `begin()` announces the step; `feed(changes)` takes what one wire event
    (or `finish()`) changed and returns the turn events it means; the
    `StreamEnded` change ends the step (`StepFinished`). `http_error` ends a
    step whose request failed before any event.
    """

    wire = ""
    # The wire's kinds of reasoning sent only encrypted (BlockStarted.redacted).
    redacted_kinds: frozenset[str] = frozenset()

    def __init__(self, step: int = 1, seq: Counter | None = None, *, model: str | None = None,
                 block_start: int = 0) -> None:
        self.step = step
        self.seq = seq if seq is not None else Counter()
        self.model = model
        self.response: dict[str, Any] = {}
        self.choice_finish: dict[int, Any] = {}
        self.blocks: dict[Any, _Block] = {}        # address -> its latest block
        self.order: list[_Block] = []
        self._next_block = block_start
        self.output_seen = False
        self.errors = 0
        self.terminal: str | None = None
        self.finished = False
        self.usage_raw: Any = None

    # -- what the wire modules say ---------------------------------------------

    def classify(self, opened: ch.SlotOpened) -> tuple[BlockKind | str, bool, Channel]:
        """(block kind or CONTAINER / PARENT, server-side, channel) of an opened slot."""
        kind = opened.slot_kind or ""
        if opened.structured:           # structured output: the answer, not a call to run
            return "text", False, "text"
        if opened.takes_input:
            return "tool_call", False, "text"
        if "thinking" in kind or "reasoning" in kind:
            return "reasoning", False, "reasoning"
        if "refusal" in kind:
            return "text", False, "refusal"
        if kind in ("text", "content", "output_text"):
            return "text", False, "text"
        if kind.endswith("tool_result"):
            return "tool_result", True, "other"
        return "other", False, "other"

    def parent(self, address: Any) -> Any:
        """The address whose block a slot without its own block writes to."""
        return None

    def finish(self) -> Finish:
        """The step's finish reason from what the response said."""
        return Finish("other", None)

    def stated_call(self, wire_kind: str | None, data: Any
                    ) -> tuple[str | None, str | None, Any] | None:
        """``(name, call_id, input)`` of a call whose item states them whole rather than
        streaming its input as JSON text (an input given as a string is parsed), else None."""
        return None

    def server_failure(self, wire_kind: str | None, data: Any) -> str | None:
        """What went wrong, where a server-side item's finished object says its tool failed
        (the model goes on: a note, not an error of the turn), else None."""
        return None

    def merge_usage(self, old: Any, new: Any) -> Any:
        """The step's usage after a change: the wire's usage is cumulative."""
        return new

    def step_usage(self, raw: Any) -> Usage:
        """The step's usage in the turn's terms, from the wire's usage object."""
        if not isinstance(raw, dict) or self.wire not in wires.WIRES:
            return Usage(raw=raw)
        return Usage(**wires.WIRES[self.wire].usage_counts(raw), raw=raw)

    def retryable(self, error_type: str | None, status: int | None = None) -> bool:
        """Whether a retry can cure this error: by its HTTP `status`, else by its type
        or code as this wire says."""
        if status is not None and wires.retryable_status(status):
            return True
        module = wires.WIRES.get(self.wire)
        return module is not None and module.retryable_error(error_type)

    def is_redacted(self, opened: ch.SlotOpened) -> bool:
        """Whether the slot is reasoning sent only encrypted (`BlockStarted.redacted`): by
        its kind, where the wire has a kind of its own for it (`redacted_kinds`)."""
        return opened.slot_kind in self.redacted_kinds

    # -- the adapter ------------------------------------------------------------

    def _ev(self, cls: type, **kw: Any) -> TurnEvent:
        return cls(self.seq(), **kw)

    def begin(self, *, t: float | None = None) -> list[TurnEvent]:
        """The step's start: announce its number and wire."""
        return [self._ev(StepStarted, step=self.step, wire=self.wire, model=self.model, t=t)]

    def feed(self, changes: Iterable[Any] | None, *, t: float | None = None,
             at: int | None = None) -> list[TurnEvent]:
        """The turn events that these changes (of one wire event) mean."""
        out: list[TurnEvent] = []
        for change in changes or ():
            handler = _HANDLERS.get(type(change)) or _HANDLERS.get(type(change).__mro__[1])
            if handler is not None:
                handler(self, change, out, t, change.event if change.event is not None else at)
        return out

    def http_error(self, status: int, message: str, raw: Any = None, *,
                   error_type: str | None = None) -> list[TurnEvent]:
        """A request that failed before any event: one provider error, then the step's end."""
        out = [self._ev(ErrorReported, step=self.step, scope="provider", phase="before_output",
                        retryable=self.retryable(error_type, status), message=message,
                        code="http_error", raw=raw)]
        self.errors += 1
        self.finished = True
        out.append(self._ev(StepFinished, step=self.step, finish=Finish("error", status),
                            usage=Usage(), ended="error"))
        return out

    def transport_error(self, message: str, raw: Any = None, *, code: str = "transport",
                        t: float | None = None) -> list[TurnEvent]:
        """The connection failed under the stream (not the provider's word): a retry can
        cure it. `code` names how (``transport``, ``stall``). The step's end follows with
        the `StreamEnded` change."""
        self.errors += 1
        return [self._ev(ErrorReported, step=self.step, scope="transport",
                         phase="after_output" if self.output_seen else "before_output",
                         retryable=True, message=message, code=code, raw=raw, t=t)]

    def new_block_id(self) -> str:
        """The next block id: step-qualified, so unique in the turn."""
        bid = f"s{self.step}.b{self._next_block}"
        self._next_block += 1
        return bid

    def _block(self, address: Any) -> _Block | None:
        block = self.blocks.get(address)
        if block is None:
            up = self.parent(address)
            if up is not None:
                block = self.blocks.get(up)
        return block

    def _opened(self, c: ch.SlotOpened, out: list, t: float | None, at: int | None) -> None:
        kind, server, channel = self.classify(c)
        if kind == CONTAINER:
            return
        if kind == PARENT and self._block(c.address) is not None:
            block = self._block(c.address)
            if block.parts is None:
                block.parts = {}
            block.parts.setdefault(c.address, [])
            if c.content:
                self._text(ch.TextAppended(c.event, c.address, channel, c.content), out, t, at)
            return
        if kind == PARENT:
            kind = "reasoning" if channel == "reasoning" else "other"
        # Structured output is the answer as text: the schema's name is no call's name.
        name, call_id = (None, None) if c.structured else (c.name, c.call_id)
        stated = self.stated_call(c.slot_kind, c.data) if kind == "tool_call" else None
        if stated is not None:
            name, call_id = name or stated[0], call_id or stated[1]
        block = _Block(self.new_block_id(), kind, name, call_id, server,  # type: ignore[arg-type]
                       channel, wire_kind=c.slot_kind)
        if kind == "tool_call" and c.content:
            block.fragments.append(c.content)     # arguments the start already carries
        self.blocks[c.address] = block
        self.order.append(block)
        self.output_seen = True
        out.append(self._ev(BlockStarted, block=block.id, step=self.step, block_kind=kind,
                            wire_kind=c.slot_kind, choice=c.choice, channel=channel,
                            name=name, call_id=call_id, item_id=c.item_id,
                            server_side=server, content=c.content,
                            data=c.data if c.whole else None,
                            redacted=self.is_redacted(c), t=t, at=at))
        if c.whole:
            block.ended = True
            out.append(self._ev(BlockEnded, block=block.id, reason="whole", t=t, at=at))

    def _text(self, c: ch.TextAppended, out: list, t: float | None, at: int | None) -> None:
        block = self._block(c.address)
        if block is None or block.ended:
            return          # the accumulator noted it (unknown slot, delta after stop)
        if block.parts is not None and c.address in block.parts:
            block.parts[c.address].append(c.fragment)
        # Made here rather than through `_ev`: one is made for nearly every wire event.
        out.append(BlockDelta(self.seq(), block=block.id, fragment=c.fragment,
                              channel=c.channel, t=t, at=at))

    def _input(self, c: ch.ToolInputGrew, out: list, t: float | None, at: int | None) -> None:
        block = self._block(c.address)
        if block is None or block.ended:
            return
        block.fragments.append(c.fragment)
        settles = [j for j in c.json_changes if getattr(j, "op", None) == "settle"]
        settled = LazyPaths(lambda: (j.path for j in settles)) if settles else ()
        out.append(self._ev(BlockDelta, block=block.id, fragment=c.fragment, channel="text",
                            json_changes=tuple(c.json_changes), settled=settled, t=t, at=at))

    def _restated(self, c: ch.SlotRestated, out: list, t: float | None, at: int | None) -> None:
        # The server stated a text's whole content (Responses ``*.done``) and it is not
        # what the deltas built: its statement is the block's text, shown at the block's
        # end (the accumulator notes the difference as an error). A description made
        # from a server tool's data is restated all along and is not text of the stream.
        block = self._block(c.address)
        if (block is None or block.ended or c.content is None
                or block.kind not in ("text", "reasoning")):
            return
        if block.parts is not None and c.address in block.parts:
            # One part of the block restated: the others keep the text that came.
            block.parts[c.address] = [c.content]
            block.parts_restated = True
        else:
            block.restated = c.content

    @staticmethod
    def _whole_text(block: _Block) -> str | None:
        """The server's statement of the block's text where it differs from the deltas:
        stated whole, or its parts joined, one or more of them restated."""
        if block.parts_restated and block.parts is not None:
            return "".join(text for part in block.parts.values() for text in part)
        return block.restated

    def _signature(self, c: ch.SlotSigned, out: list, t: float | None, at: int | None) -> None:
        block = self._block(c.address)
        if block is not None:
            out.append(self._ev(SignatureAdded, block=block.id, signature=c.signature, t=t, at=at))

    def _citation(self, c: ch.CitationAdded, out: list, t: float | None, at: int | None) -> None:
        block = self._block(c.address)
        if block is not None:
            out.append(self._ev(SourceAdded, block=block.id, source=c.citation, t=t, at=at))

    def _closed(self, c: ch.SlotClosed, out: list, t: float | None, at: int | None) -> None:
        block = self.blocks.get(c.address)
        if block is None:
            return
        if not block.ended:
            # ("forming": the slot closed and its call did not end; the adapter checks it.)
            state = None if c.call_state == "forming" else c.call_state
            value = c.input
            stated = (self.stated_call(block.wire_kind, c.data)
                      if block.kind == "tool_call" and state is None and not c.synthesised
                      else None)
            if stated is not None:
                state, value = self._stated_input(block, stated[2])
            self._end(block, out, t, at, synthesised=c.synthesised,
                      reason=c.reason or c.how, call_state=state, value=value,
                      data=getattr(c, "data", None))
        why = self.server_failure(block.wire_kind, c.data) if block.server_side else None
        if why:
            out.append(self._ev(Noted, step=self.step, code="server_tool_failed", message=why,
                                t=t, at=at))

    @staticmethod
    def _stated_input(block: _Block, stated: Any) -> tuple[str, Any]:
        """A stated input's call state and value: a string is the call's raw JSON text."""
        if not isinstance(stated, str):
            return "complete", stated
        block.fragments = [stated]
        value, error = parse_tool_input(stated)
        return ("invalid" if error else "complete"), value

    def _end(self, block: _Block, out: list, t: float | None, at: int | None, *,
             synthesised: bool, reason: str | None, call_state: str | None = None,
             value: Any = None, data: Any = None) -> None:
        block.ended = True
        if block.kind == "tool_call" and call_state is None:
            call_state, value = self._strict(block, cut=synthesised)
        if call_state == "cut" and self.terminal is not None and not self.errors:
            # The stream ended properly around an unfinished call: the model stopped
            # inside it (a length stop). The call is invalid, not cut.
            call_state = "invalid"
        complete = not synthesised and call_state != "cut"
        out.append(self._ev(BlockEnded, block=block.id, complete=complete,
                            synthesised=synthesised, reason=reason, data=data,
                            restated=self._whole_text(block), t=t, at=at))
        if block.kind != "tool_call":
            return
        if call_state == "complete":
            out.append(self._ev(ToolCallReady, block=block.id, name=block.name,
                                call_id=block.call_id, input=value,
                                server_side=block.server_side, t=t, at=at))
        else:
            raw = "".join(block.fragments)
            state = "cut" if call_state == "cut" else "invalid"
            why = ("the stream ended inside the arguments" if state == "cut"
                   else "the model stopped inside the arguments" if synthesised
                   else "the arguments are not valid JSON")
            out.append(self._ev(ToolCallInvalid, block=block.id, name=block.name,
                                call_id=block.call_id, state=state, raw=raw,
                                partial=value, error=why, t=t, at=at))

    @staticmethod
    def _strict(block: _Block, *, cut: bool) -> tuple[str, Any]:
        raw = "".join(block.fragments)
        if cut:
            return "cut", partial_value(raw) if raw.strip() else {}
        value, error = parse_tool_input(raw)
        return ("invalid" if error else "complete"), value

    def _response(self, c: ch.ResponseChanged, out: list, t: float | None, at: int | None) -> None:
        fields = c.fields
        if c.choice is not None and "finish_reason" in fields:
            self.choice_finish[c.choice] = fields["finish_reason"]
        if "usage" in fields and fields["usage"] is not None:
            before = self.usage_raw
            self.usage_raw = self.merge_usage(self.usage_raw, fields["usage"])
            usage = self.step_usage(self.usage_raw)
            if usage != self.step_usage(before) and not self.finished:
                # Counted as it arrives, so a budget can be checked at every delta.
                out.append(self._ev(UsageReported, step=self.step, usage=usage, t=t, at=at))
        self.response.update({k: v for k, v in fields.items() if k != "usage"})

    def _terminal(self, c: ch.TerminalReached, out: list, t: float | None, at: int | None) -> None:
        self.terminal = c.terminal

    def _error(self, c: ch.InBandError, out: list, t: float | None, at: int | None) -> None:
        self.errors += 1
        out.append(self._ev(ErrorReported, step=self.step, scope="provider",
                            phase="after_output" if self.output_seen else "before_output",
                            retryable=self.retryable(c.error_type), message=c.message,
                            code=c.error_type, raw=c.error, t=t, at=at))

    def _unknown(self, c: ch.UnknownEvent, out: list, t: float | None, at: int | None) -> None:
        out.append(self._ev(WireEventPassed, step=self.step, event_type=c.event_type,
                            payload=c.payload, t=t, at=at))

    def _noted(self, c: ch.DiagnosticNoted, out: list, t: float | None, at: int | None) -> None:
        d = c.diagnostic
        if d.code in _SAID_ELSEWHERE:
            return
        scope = None
        if d.severity == "error" or (d.code in TAIL_CODES and self.terminal is not None):
            # Every error fails the step, as it fails `final`, except a cut's own
            # notes before the terminal: the step is then cut, not failed.
            if d.code in PARSE_CODES:
                scope = "parse"
            elif d.code not in CUT_CODES or self.terminal is not None:
                scope = "protocol"
        if scope is not None:
            self.errors += 1
            out.append(self._ev(ErrorReported, step=self.step, scope=scope,
                                phase="after_output" if self.output_seen else "before_output",
                                retryable=False, message=d.message, code=d.code, raw=d.raw,
                                t=t, at=at))
        else:
            out.append(self._ev(Noted, step=self.step, code=d.code, message=d.message,
                                diagnostic=d, t=t, at=at))

    def _ended(self, c: ch.StreamEnded, out: list, t: float | None, at: int | None) -> None:
        if self.finished:
            return
        self.finished = True
        for block in self.order:
            if not block.ended:
                self._end(block, out, t, at, synthesised=True, reason="end_of_stream")
        # A terminal the stream went on past with bytes that make no whole event (said
        # by the SDK route, whose reader drops them) is no proper end.
        terminal = self.terminal is not None and c.cause != "tail_cut"
        ended = step_ending(terminal=terminal or c.properly, failed=self.errors > 0)
        finish = self.finish()
        if ended == "error":
            finish = Finish("error", finish.raw)
        elif finish.reason == "stop" and any(b.channel == "refusal" for b in self.order):
            finish = Finish("refusal", finish.raw)     # Chat and Responses say stop
        out.append(self._ev(StepFinished, step=self.step, finish=finish,
                            usage=self.step_usage(self.usage_raw),
                            ended=ended, model=self.response.get("model"),
                            response_id=self.response.get("id"), t=t, at=at))


_HANDLERS = {
    ch.SlotOpened: WireAdapter._opened, ch.TextAppended: WireAdapter._text,
    ch.ToolInputGrew: WireAdapter._input, ch.SlotSigned: WireAdapter._signature,
    ch.CitationAdded: WireAdapter._citation, ch.SlotClosed: WireAdapter._closed,
    ch.SlotRestated: WireAdapter._restated,
    ch.ResponseChanged: WireAdapter._response, ch.TerminalReached: WireAdapter._terminal,
    ch.InBandError: WireAdapter._error, ch.UnknownEvent: WireAdapter._unknown,
    ch.DiagnosticNoted: WireAdapter._noted, ch.StreamEnded: WireAdapter._ended,
}
