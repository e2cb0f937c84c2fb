"""The shared accumulator API: wire events in, the provider's final object out.

Every wire has its own accumulator (one module each) with the same face:

- `feed(event)` takes one `WireEvent` and never raises on bad input; what
  does not fit becomes a `Diagnostic`;
- `feed` and `finish` return what they changed: a list of typed, addressed
  changes (`lesson_lib.accumulate.changes`); folding them from the start
  gives back `slots()` and `tool_calls()` (`lesson_lib.accumulate.fold`);
- `finish(sse_diagnostics)` marks the end of the stream: whatever is still
  open is closed and reported (``block_never_stopped``, ``no_terminal``,
  ``cut_tool_input``);
- `final()` builds the provider's final object on demand, JSON-ready, in the
  shape its *non-streaming* API returns. It may be called at any point, so a
  player can show the object as it forms;
- `complete` says whether the stream ended with its own terminal event;
- `slots()` lists the addressed places the deltas went to, for the slot view.

Text and tool arguments are kept as lists of fragments and joined only when
asked for, so feeding stays linear in the size of the stream.

Tool calls (lesson 3): every accumulator keeps a `ToolCall` per call and
feeds it each argument fragment as it arrives (`lesson_lib.tool_calls`);
`tool_calls()` gives immutable views of them. The raw argument text is the
truth. It is checked strictly once, at the call's explicit end; empty text
means ``{}``. A call whose stream ended before its end keeps the partial
value that did arrive (`partial_value`) and gets a ``cut_tool_input``
diagnostic carrying the raw text.
"""

from __future__ import annotations

import copy
import json
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from ..diagnostics import Diagnostic, Severity
from ..tool_calls import ToolCall, ToolCallView, partial_value
from ..wires.wire_events import WireEvent
from .changes import DiagnosticNoted, SlotClosed, StreamEnded
from .fragments import Fragments as Fragments  # where the accumulators import it from

SlotState = Literal["open", "closed", "never closed"]


@dataclass(frozen=True)
class Slot:
    """A view of one addressed place in the stream, for the slot view.

    `address` is how the wire addresses it (Anthropic: the block ``index``;
    Chat: ``(choice, "content" | "refusal" | "reasoning" | ("tool", n))``;
    Responses: ``(output_index, content_index)`` and the like); `kind` is the
    block or item type (an unknown type is shown as the wire spelled it);
    `content` the text or raw argument text so far. Tool calls also carry
    `name`, `call_id`, `raw_input` and `input` (the parsed value once the
    call ended, the partial value before). What a server-side tool wrote (a
    search's results, a run's output) is `from_server`, with `answers` the id
    of the call it answers, where it names one.
    """

    address: Any
    kind: str
    label: str
    content: str = ""
    state: SlotState = "open"
    name: str | None = None
    call_id: str | None = None
    raw_input: str | None = None
    input: Any = None
    from_server: bool = False
    answers: str | None = None


@dataclass
class Accumulated:
    """The outcome of accumulating one capture."""

    final: dict | None
    complete: bool
    diagnostics: list[Diagnostic]
    wire: str


# -- tool input ---------------------------------------------------------------


def parse_tool_input(raw: str) -> tuple[Any, str | None]:
    """Parse a finished call's raw arguments strictly: ``(value, error)``.

    Empty text means ``{}``. On invalid JSON the value is the partial value
    and `error` says why the text is not JSON.
    """
    if not raw.strip():
        return {}, None
    try:
        return json.loads(raw), None
    except ValueError as exc:
        return partial_value(raw), str(exc)


# -- the accumulator ----------------------------------------------------------


class Accumulator(ABC):
    """Feed wire events of one stream, then `finish`; read `final()` any time."""

    wire: str = ""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.complete: bool = False
        self.finished: bool = False
        # What the event being fed changed (`lesson_lib.accumulate.changes`):
        # a fresh list per `feed`, handed to the caller.
        self.changes: list = []

    @abstractmethod
    def feed(self, event: WireEvent) -> list:
        """Take one wire event and return what it changed. Never raises on bad input."""

    @abstractmethod
    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: record the decoder's diagnostics, close what is open; return
        what that changed (the closes it synthesised, its notes, `StreamEnded`)."""

    @abstractmethod
    def final(self) -> dict:
        """The provider's final object so far, JSON-ready (non-streaming shape)."""

    @abstractmethod
    def slots(self) -> list[Slot]:
        """The slots so far, in address order."""

    def length_stop(self) -> bool:
        """Whether the stream ended properly because the model ran out of tokens (a length
        stop): the only proper end that may leave a tool call's arguments unfinished."""
        return False

    # -- helpers for the wire modules --------------------------------------

    def note(self, code: str, message: str, *, event: WireEvent | None = None,
             severity: Severity = "error", slot: Any = None, raw: str | None = None,
             **extra: Any) -> Diagnostic:
        """Record a diagnostic located at `event` (byte offset and index)."""
        diag = Diagnostic(code=code, message=message, severity=severity,
                          offset=event.sse.start if event is not None else None,
                          index=event.index if event is not None else None,
                          slot=slot, raw=raw, extra=extra)
        self.diagnostics.append(diag)
        self.changes.append(DiagnosticNoted(diag.index, diag))
        return diag

    def close_call_slot(self, call: ToolCall, address: Any, *, cut: bool,
                        event: WireEvent | None, what: str, how: str,
                        reason: str | None = None, final_text: str | None = None) -> Any:
        """End a slot's tool call (`end_tool_call`) and record its `SlotClosed`."""
        value = self.end_tool_call(call, cut=cut, slot=address, event=event, what=what,
                                   final_text=final_text)
        self.changes.append(SlotClosed(event.index if event is not None else None, address,
                                       how, synthesised=cut, reason=reason,  # type: ignore[arg-type]
                                       call_state=call.state, input=value))
        return value

    def end_tool_call(self, call: ToolCall, *, cut: bool, slot: Any = None,
                      event: WireEvent | None = None, what: str = "tool call",
                      final_text: str | None = None) -> Any:
        """End `call` at its wire's explicit end (or, `cut`, at the end of the stream).

        Finished: strict check, an ``invalid_tool_input`` diagnostic (with the
        position) when the text is not JSON. Cut: a ``cut_tool_input``
        diagnostic. Both carry the raw text. Returns the call's input: its
        value, or the partial value that arrived.
        """
        if call.ended:
            return call.input
        index = event.index if event is not None else None
        if cut:
            call.cut(event=index)
        else:
            call.end(final_text, t=event.t if event is not None else None, event=index)
        if cut and call.was_cut:
            # After the wire's own terminal, a length stop cuts the call: the stream is
            # whole, so it is a warning. Any other proper end never closed a call it
            # opened: that breaks the wire's protocol, an error.
            self.note("cut_tool_input",
                      f"the stream ended inside the arguments of {what} "
                      f"after {call.raw_length} characters; input is the partial value that "
                      "arrived", event=event, slot=slot, raw=call.raw,
                      severity="warning" if self.complete and self.length_stop()
                      else "error")
        elif call.state == "invalid" and call.error is not None:
            self.note("invalid_tool_input",
                      f"the arguments of {what} are not valid JSON ({call.error}); "
                      "input is the partial value, the raw text is kept",
                      event=event, slot=slot, raw=call.raw)
        return call.input

    def __deepcopy__(self, memo: dict) -> Accumulator:
        """An independent copy (a history checkpoint) that shares what can no longer change.

        An ended call's value (the ``input`` a holder keeps too) is never
        written to again (see "Sharing" in `lesson_lib.tool_calls`), so it is
        entered in the memo as its own copy: shared, and never walked, which
        matters because it may nest deeper than recursion can follow. Its
        `ToolCall` copies itself without recursion. Everything else is a JSON
        payload of the wire (as deep as ``json.loads`` allows) or the
        accumulator's own bookkeeping, copied as usual.
        """
        for call in self.live_tool_calls():
            if call.ended:
                value = call.value
                memo.setdefault(id(value), value)
        twin = self.__class__.__new__(self.__class__)
        memo[id(self)] = twin
        # The changes already handed out belong to whoever took them: not copied.
        state = {k: v for k, v in self.__dict__.items() if k != "changes"}
        twin.__dict__.update(copy.deepcopy(state, memo))
        twin.changes = []
        return twin

    def live_tool_calls(self) -> list[ToolCall]:
        """The accumulator's own `ToolCall` objects, in address order (read, don't feed)."""
        return []

    def tool_calls(self) -> list[ToolCallView]:
        """Every tool call so far (structured output too), as immutable views."""
        return [call.view() for call in self.live_tool_calls()]

    def server_outputs(self) -> list[Slot]:
        """The slots a server-side tool wrote so far (`Slot.from_server`), in address order;
        only these are built, so reading them costs no more as the answer grows."""
        return []

    def begin_finish(self, sse_diagnostics: Iterable[Diagnostic]) -> bool:
        """Shared start of `finish`: False when it already ran (idempotent)."""
        self.changes = []
        if self.finished:
            return False
        self.finished = True
        for diag in sse_diagnostics:
            self.diagnostics.append(diag)
            self.changes.append(DiagnosticNoted(diag.index, diag))
        return True

    def end_changes(self, cause: str | None) -> list:
        """Shared end of `finish`: the `StreamEnded` change, and every change of `finish`."""
        self.changes.append(StreamEnded(None, self.complete, None if self.complete else cause))
        out, self.changes = self.changes, []
        return out

