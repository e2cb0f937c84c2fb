"""The Gemini Interactions accumulator: steps in slots addressed by `index`.

``interaction.created`` announces the interaction (and ``interaction.status_update``
its status); each ``step.start`` opens the slot ``index`` with the step; deltas
name that index; ``step.stop`` closes it; ``interaction.completed`` ends the
stream with the interaction's ``status`` and ``usage``. The final object is the
``Interaction`` google-genai reports at ``interaction.completed``, with the
``steps`` the stream said (the event leaves them out: the bytes win).

What each delta does to its step (`lesson_lib.wires.gemini_interactions`):

- ``text``: appends to the step's last text item in ``content`` (a model
  output's), or starts one; ``image``, ``audio``, ``video`` and ``document``
  append a whole item;
- ``text_annotation_delta``: adds its annotations to the last text item;
- ``thought_signature``: sets the step's ``signature``;
- ``thought_summary``: appends its item to a thought's ``summary`` (text
  continues the text before it);
- ``arguments_delta``: feeds the function call's `ToolCall` (lesson 3), which
  keeps the raw text and the partial value; checked strictly at the stop;
- a delta typed like its step (a server tool's ``google_search_call``,
  ``code_execution_result``...): states the step's fields; server steps are
  kept whole.

Every event is read by its payload's ``event_type`` (what google-genai reads;
an ``event:`` line that says otherwise is noted, ``event_type_mismatch``).
Nothing is dropped silently: a step of a type this module does not know stays
in ``steps`` as the raw data of its start (``unknown_step``); an unknown delta
or event type, a delta for a slot never started, or one that does not fit its
step is not applied, and its diagnostic carries the raw event
(``unknown_delta``, ``unknown_event``, ``unknown_slot``, ``delta_mismatch``).

The order is part of the protocol, and what breaks it is an ``error``
diagnostic: an event before ``interaction.created`` (``event_before_created``),
a second one (``duplicate_created``), a delta or stop for a slot never started
(``unknown_slot``) or already stopped (``delta_after_stop``,
``duplicate_stop``), a second start (``duplicate_start``), anything after
``interaction.completed`` (``event_after_terminal``) or a step event after an
``error`` (``event_after_error``). A step that starts while another is open is
a warning (``steps_overlap``): both are kept.

An ``error`` event, or a completed interaction whose status is ``failed``
(``interaction_failed``), leaves the accumulator incomplete.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any

from ..diagnostics import Diagnostic
from ..partial_json import NOTHING
from ..tool_calls import ToolCall
from ..wires import gemini_interactions as gi
from ..wires.wire_events import WireEvent
from .base import Fragments, SlotState
from .changes import (
    CitationAdded,
    InBandError,
    ResponseChanged,
    SlotClosed,
    SlotOpened,
    SlotRestated,
    SlotSigned,
    TerminalReached,
    TextAppended,
    ToolInputGrew,
    UnknownEvent,
)
from .indexed import IndexedAccumulator, IndexedBlock

_TEXT = "text"


class _Item:
    """One item of a step's content or summary: a text whose fragments grow, or a whole
    item (an image, a text the start stated)."""

    __slots__ = ("data", "text")

    def __init__(self, data: Any, text: Fragments | None = None) -> None:
        self.data = data
        self.text = text

    @classmethod
    def of(cls, data: Any) -> _Item:
        """An item as a start or a delta states it (a text item's text made to grow)."""
        item = copy.deepcopy(data)
        if isinstance(item, dict) and item.get("type") == _TEXT \
                and isinstance(item.get(_TEXT), str):
            text = Fragments()
            text.append(item.pop(_TEXT))
            return cls(item, text)
        return cls(item)

    def as_dict(self) -> Any:
        out = copy.deepcopy(self.data)
        if self.text is not None:
            out[_TEXT] = self.text.text
        return out


class _Step(IndexedBlock):
    """One slot: the start event's step, plus what the deltas added."""

    __slots__ = ("data", "items", "items_field", "input", "input_ended")

    def __init__(self, index: int, data: dict, state: SlotState = "open") -> None:
        kind = data.get("type")
        super().__init__(index, kind if isinstance(kind, str) else "unknown", state)
        self.data = data
        # A model output's content, a thought's summary: items, in order.
        self.items_field = {gi.MODEL_OUTPUT_STEP: gi.CONTENT_FIELD,
                            gi.THOUGHT_STEP: gi.SUMMARY_FIELD}.get(self.kind)
        # (A start's items that are no list stay in the step as they came.)
        given = data.get(self.items_field) if self.items_field else None
        self.items: list[_Item] | None = None
        if isinstance(given, list):
            del data[self.items_field]    # type: ignore[arg-type]
            self.items = [_Item.of(item) for item in given]
        self.input: Any = None
        self.input_ended = False

    @property
    def takes_input(self) -> bool:
        return self.kind in gi.CALL_STEPS

    def identity(self) -> tuple[Any, Any]:
        return self.data.get("name"), self.data.get("id")

    def from_server(self) -> bool:
        return self.kind in gi.SERVER_RESULT_STEPS

    def answers(self) -> str | None:
        call_id = self.data.get("call_id")
        return call_id if isinstance(call_id, str) else None

    def last_text(self) -> _Item | None:
        """The last item, when it is a text (where text and annotations go)."""
        if self.items and self.items[-1].text is not None:
            return self.items[-1]
        return None

    def shown(self) -> str:
        if self.items_field is not None:
            return "".join(i.text.text for i in self.items or () if i.text is not None)
        rest = {k: v for k, v in self.data.items() if k != "type"}
        return json.dumps(rest, ensure_ascii=False) if rest else ""

    def current_input(self) -> Any:
        if self.input_ended:
            return self.input
        call = self.call
        if call is not None and call.raw_length:
            value = call.view().value
            return value if value is not NOTHING else {}
        start = self.data.get(gi.ARGUMENTS_KEY)
        return start if start is not None else {}

    def open_call(self, event: WireEvent | None) -> ToolCall:
        """The step's function call, made from its start: name and id first."""
        if self.call is None:
            name, call_id = self.identity()
            start = self.data.get(gi.ARGUMENTS_KEY)
            self.call = ToolCall(name if isinstance(name, str) else None,
                                 call_id if isinstance(call_id, str) else None,
                                 kind=self.kind, address=self.index,
                                 given=start if start is not None else NOTHING,
                                 ended_by=gi.CALL_ENDED_BY,
                                 t=event.t if event is not None else None,
                                 event=event.index if event is not None else None)
        return self.call

    def as_dict(self) -> dict:
        out = copy.deepcopy(self.data)
        if self.items is not None and self.items_field is not None:
            out[self.items_field] = [item.as_dict() for item in self.items]
        if self.takes_input:
            out[gi.ARGUMENTS_KEY] = self.current_input()
        return out


class GeminiInteractionsAccumulator(IndexedAccumulator):
    """Builds a Gemini ``Interaction`` from Interactions-API stream events."""

    wire = gi.WIRE
    blocks: dict[int, _Step]

    def __init__(self) -> None:
        super().__init__()
        self.interaction: dict[str, Any] = {}
        self.created = False
        self.stopped = False        # interaction.completed arrived
        self.errored = False
        self._warned_before_created = False
        self._open: list[int] = []
        # What each step.stop said of its own step's usage, by index (no field of a step).
        self.step_usage: dict[int, Any] = {}

    # -- feeding -----------------------------------------------------------------------

    def feed(self, event: WireEvent) -> list:
        """Take one event of the stream (see the module docstring); return its changes."""
        self.changes = changes = []
        if event.type == gi.SENTINEL:     # what the SDK stops at: no event, nothing to apply
            return changes
        payload = event.payload
        if event.parse_error is not None or not isinstance(payload, dict):
            why = event.parse_error or "the payload is not a JSON object"
            self.note("unparseable_json", f"event {event.type!r} skipped: {why}",
                      event=event, raw=event.sse.data)
            return changes
        named = payload.get(gi.EVENT_TYPE_FIELD)
        kind = named if isinstance(named, str) else event.type
        if isinstance(named, str) and event.sse.event not in (None, "", "message", named):
            self.note("event_type_mismatch", f"the event line says {event.sse.event!r}, the "
                      f"payload {named!r}; read as the payload says", event=event,
                      severity="warning", raw=event.sse.data)
        handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
        if handler is None:
            changes.append(UnknownEvent(event.index, kind, payload))
            self.note("unknown_event", f"event type {kind!r} is not part of the Interactions "
                      "stream; kept as raw data", event=event, severity="warning",
                      raw=event.sse.data, payload=payload)
            return changes
        if self.stopped:
            self.note("event_after_terminal", f"{kind} after {gi.INTERACTION_COMPLETED}",
                      event=event, raw=event.sse.data)
        elif self.errored and kind in gi.STEP_EVENTS:
            self.note("event_after_error", f"{kind} after the error that ended the stream",
                      event=event, raw=event.sse.data)
        if not self.created and kind not in (gi.INTERACTION_CREATED, gi.ERROR):
            if not self._warned_before_created:
                self._warned_before_created = True
                self.note("event_before_created", f"{kind} arrived before "
                          f"{gi.INTERACTION_CREATED}; events are accumulated anyway",
                          event=event, raw=event.sse.data)
        handler(self, payload, event)
        return changes

    def _merge_interaction(self, interaction: Any, event: WireEvent) -> None:
        """Take the fields an interaction object states (its steps go to the slots)."""
        if not isinstance(interaction, dict):
            self.note("unknown_event", f"{event.type} carries no interaction object",
                      event=event, raw=event.sse.data)
            return
        fields = copy.deepcopy(interaction)
        steps = fields.pop("steps", None)
        self.interaction.update(fields)
        self.changes.append(ResponseChanged(event.index, copy.deepcopy(fields)))
        if isinstance(steps, list):
            self._stated_steps(steps, event)

    def _stated_steps(self, steps: list, event: WireEvent) -> None:
        """Steps an interaction states whole: a step the stream did not send becomes a closed
        slot; one it sent keeps what the stream said, and a difference is noted."""
        for index, step in enumerate(steps):
            if not isinstance(step, dict):
                continue
            block = self.blocks.get(index)
            if block is None:
                block = self.blocks[index] = _Step(index, copy.deepcopy(step), "closed")
                self._opened(block, event)
                if block.takes_input:
                    block.input = self.close_call_slot(block.open_call(event), index,
                                                       cut=False, event=event,
                                                       what=_what(block), how="done")
                    block.input_ended = True
            elif block.as_dict() != step:
                self.note("step_restated", f"{event.type} states step {index} otherwise than "
                          "the stream did; the stream's is kept", event=event,
                          severity="warning", slot=index, raw=json.dumps(step))

    def _opened(self, block: _Step, event: WireEvent) -> None:
        """Record the `SlotOpened` of a step (closed already for one stated whole)."""
        name, call_id = block.identity()
        whole = block.state != "open" or block.kind in gi.WHOLE_STEPS
        self.changes.append(SlotOpened(
            event.index, block.index, block.kind, block.label(),
            name=name if isinstance(name, str) else None,
            call_id=call_id if isinstance(call_id, str) else None,
            item_id=call_id if isinstance(call_id, str) else None, whole=whole,
            takes_input=block.takes_input, data=block.as_dict(),
            input=block.data.get(gi.ARGUMENTS_KEY) if block.takes_input else None,
            shown=None if block.takes_input else block.shown(),
            ended_by=gi.CALL_ENDED_BY if block.takes_input else None))
        if block.state != "open" and not block.takes_input:
            self.changes.append(SlotClosed(event.index, block.index, "done"))

    def _created(self, payload: dict, event: WireEvent) -> None:
        if self.created:
            self.note("duplicate_created", f"a second {gi.INTERACTION_CREATED}; merged into "
                      "the first", event=event, raw=event.sse.data)
        self.created = True
        self._merge_interaction(payload.get("interaction"), event)

    def _status_update(self, payload: dict, event: WireEvent) -> None:
        fields = {k: copy.deepcopy(payload[k]) for k in ("status", "usage", "continuation_token")
                  if payload.get(k) is not None}
        self.interaction.update(fields)
        if fields:
            self.changes.append(ResponseChanged(event.index, copy.deepcopy(fields)))

    def _step_start(self, payload: dict, event: WireEvent) -> None:
        index, data = payload.get("index"), payload.get("step")
        if type(index) is not int or not isinstance(data, dict):
            self.note("unknown_slot", f"{gi.STEP_START} without an integer index and a step "
                      "object", event=event, raw=event.sse.data)
            return
        if index in self.blocks:
            self.note("duplicate_start", f"slot {index} was already started; the first start "
                      "is kept", event=event, slot=index, raw=event.sse.data)
            return
        still_open = [i for i in self._open if self.blocks[i].state == "open"]
        if still_open:
            self.note("steps_overlap", f"slot {index} started while slot {still_open[0]} is "
                      f"still open (no {gi.STEP_STOP}); both are kept", event=event,
                      severity="warning", slot=index, raw=event.sse.data)
        block = self.blocks[index] = _Step(index, copy.deepcopy(data))
        self._open = [*still_open, index]
        if block.takes_input:
            block.open_call(event)
        self._opened(block, event)
        if block.kind not in gi.STEP_TYPES:
            self.note("unknown_step", f"step type {block.kind!r} is not known; kept as the "
                      "raw data of its start", event=event, severity="warning", slot=index,
                      raw=event.sse.data)

    def _step_delta(self, payload: dict, event: WireEvent) -> None:
        index, delta = payload.get("index"), payload.get("delta")
        block = self.blocks.get(index) if type(index) is int else None
        if block is None or block.state != "open":
            code = "unknown_slot" if block is None else "delta_after_stop"
            why = "which was never started" if block is None else "after its stop"
            self.note(code, f"delta for slot {index!r}, {why}; not applied, its text is kept "
                      "here", event=event, slot=index, raw=event.sse.data,
                      orphan_text=_delta_text(delta))
            return
        dtype = delta.get("type") if isinstance(delta, dict) else None
        if dtype not in gi.DELTA_TYPES:
            self.note("unknown_delta", f"delta type {dtype!r} is not known; kept as raw data",
                      event=event, severity="warning", slot=index, raw=event.sse.data)
            return
        assert isinstance(delta, dict)
        if not _APPLY[dtype](self, block, delta, event):
            self.note("delta_mismatch", f"{dtype} does not fit slot {index} ({block.kind}); "
                      "not applied", event=event, severity="warning", slot=index,
                      raw=event.sse.data)

    # Each returns whether the delta fit its step.
    def _text(self, block: _Step, delta: dict, event: WireEvent) -> bool:
        text = delta.get(_TEXT)
        if block.kind != gi.MODEL_OUTPUT_STEP or not isinstance(text, str):
            return False
        self._append_text(block, text, "text", event)
        return True

    def _append_text(self, block: _Step, text: str, channel: Any, event: WireEvent) -> None:
        if block.items is None:
            block.items = []
        item = block.last_text()
        if item is None:
            item = _Item({"type": _TEXT}, Fragments())
            block.items.append(item)
        item.text.append(text)  # type: ignore[union-attr]
        self.changes.append(TextAppended(event.index, block.index, channel, text,
                                         block.items_field or _TEXT))

    def _media(self, block: _Step, delta: dict, event: WireEvent) -> bool:
        if block.kind != gi.MODEL_OUTPUT_STEP:
            return False
        if block.items is None:
            block.items = []
        block.items.append(_Item(copy.deepcopy(delta)))
        return True

    def _summary(self, block: _Step, delta: dict, event: WireEvent) -> bool:
        content = delta.get(gi.CONTENT_FIELD)
        if block.kind != gi.THOUGHT_STEP or not isinstance(content, dict):
            return False
        if content.get("type") == _TEXT and isinstance(content.get(_TEXT), str) \
                and set(content) == {"type", _TEXT}:
            self._append_text(block, content[_TEXT], "reasoning", event)
            return True
        if block.items is None:
            block.items = []
        block.items.append(_Item.of(content))
        self.changes.append(SlotRestated(event.index, block.index, content=block.shown()))
        return True

    def _annotations(self, block: _Step, delta: dict, event: WireEvent) -> bool:
        found = delta.get(gi.ANNOTATIONS_KEY)
        item = block.last_text()
        if item is None or not isinstance(found, list):
            return False
        kept = item.data.setdefault(gi.ANNOTATIONS_KEY, [])
        if not isinstance(kept, list):
            return False
        for annotation in found:
            kept.append(copy.deepcopy(annotation))
            self.changes.append(CitationAdded(event.index, block.index, kept[-1]))
        return True

    def _signature(self, block: _Step, delta: dict, event: WireEvent) -> bool:
        signature = delta.get(gi.SIGNATURE_KEY)
        if not isinstance(signature, str):
            return False
        block.data[gi.SIGNATURE_KEY] = signature
        self.changes.append(SlotSigned(event.index, block.index, signature))
        return True

    def _arguments(self, block: _Step, delta: dict, event: WireEvent) -> bool:
        fragment = delta.get(gi.ARGUMENTS_KEY)
        if not block.takes_input or not isinstance(fragment, str):
            return False
        grew = block.open_call(event).feed(fragment, t=event.t, event=event.index)
        self.changes.append(ToolInputGrew(event.index, block.index, fragment, tuple(grew)))
        return True

    def _whole(self, block: _Step, delta: dict, event: WireEvent) -> bool:
        if delta.get("type") != block.kind:
            return False
        for key, value in delta.items():
            block.data[key] = copy.deepcopy(value)
        self.changes.append(SlotRestated(event.index, block.index, content=block.shown()))
        return True

    def _step_stop(self, payload: dict, event: WireEvent) -> None:
        block = self.block_to_stop(payload.get("index"), event)
        if block is None:
            return
        if payload.get("step_usage") is not None:
            self.step_usage[block.index] = copy.deepcopy(payload["step_usage"])
        if isinstance(payload.get("usage"), dict):
            self.interaction["usage"] = copy.deepcopy(payload["usage"])
            self.changes.append(ResponseChanged(event.index,
                                                {"usage": copy.deepcopy(payload["usage"])}))
        self._end_input(block, cut=False, event=event)

    def _end_input(self, block: _Step, *, cut: bool, event: WireEvent | None) -> None:
        """Close the step's slot (`SlotClosed`), checking its arguments if it takes them."""
        how = "end_of_stream" if cut else "stop"
        if not block.takes_input or block.input_ended:
            self.changes.append(SlotClosed(event.index if event is not None else None,
                                           block.index, how, synthesised=cut))  # type: ignore[arg-type]
            return
        block.input = self.close_call_slot(block.open_call(event), block.index, cut=cut,
                                           event=event, what=_what(block), how=how)
        block.input_ended = True

    def _completed(self, payload: dict, event: WireEvent) -> None:
        self._merge_interaction(payload.get("interaction"), event)
        self.stopped = True
        status = self.interaction.get("status")
        if status == gi.FAILED:
            errors = self.interaction.get("errors")
            first = errors[0] if isinstance(errors, list) and errors else None
            said = first.get("message") if isinstance(first, dict) else None
            message = f"the interaction failed: {said or 'no message'}"
            self.changes.append(InBandError(event.index, message, copy.deepcopy(errors),
                                            gi.error_name(first.get("code"))
                                            if isinstance(first, dict) else None))
            self.note("interaction_failed", message, event=event, raw=event.sse.data,
                      error=copy.deepcopy(errors))
        self.complete = not self.errored and status != gi.FAILED
        self.changes.append(TerminalReached(event.index, gi.INTERACTION_COMPLETED))

    def length_stop(self) -> bool:
        """`interaction.completed` with a status that says the model ran out of room."""
        return self.stopped and self.interaction.get("status") in gi.LENGTH_STATUSES

    def _error(self, payload: dict, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        error = gi.read_error(gi.ERROR, payload)
        kind = error.kind if error is not None else None
        message = f"{kind or 'error'}: {(error and error.message) or event.sse.data}"
        self.changes.append(InBandError(event.index, message,
                                        copy.deepcopy(payload.get("error")), kind))
        self.note("in_band_error", message, event=event, raw=event.sse.data,
                  error=copy.deepcopy(payload.get("error")))

    # -- ending ------------------------------------------------------------------------

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: close open steps (arguments cut), note a missing terminal; return
        what that changed."""
        if not self.begin_finish(sse_diagnostics):
            return []
        for index in sorted(self.blocks):
            block = self.blocks[index]
            if block.state != "open":
                continue
            block.state = "never closed"
            self.note("block_never_stopped", f"slot {index} ({block.kind}) never got its "
                      f"{gi.STEP_STOP}", slot=index,
                      severity="warning" if self.complete and self.length_stop() else "error")
            self._end_input(block, cut=True, event=None)
        if not self.stopped and not self.errored:
            self.note("no_terminal", f"the stream ended before {gi.INTERACTION_COMPLETED}: "
                      "what arrived is kept, but the interaction is incomplete")
        failed = self.errored or self.interaction.get("status") == gi.FAILED
        return self.end_changes("in_band_error" if failed else "cut")

    # -- reading -----------------------------------------------------------------------

    def final(self) -> dict:
        """The ``Interaction`` so far: the fields its lifecycle events stated (the last
        word wins), and the steps in index order."""
        out = copy.deepcopy(self.interaction)
        out["steps"] = [self.blocks[i].as_dict() for i in sorted(self.blocks)]
        return out

    def status(self) -> str | None:
        """The interaction's status as the stream last stated it."""
        status = self.interaction.get("status")
        return status if isinstance(status, str) else None


def _what(block: _Step) -> str:
    return f"{block.kind} {block.data.get('name', '')}".rstrip() + f" (slot {block.index})"


def _delta_text(delta: Any) -> str | None:
    """The text a delta carries (its text, argument fragment or signature)."""
    if not isinstance(delta, dict):
        return None
    for key in (_TEXT, gi.ARGUMENTS_KEY, gi.SIGNATURE_KEY):
        if isinstance(delta.get(key), str):
            return delta[key]
    return None


_Acc = GeminiInteractionsAccumulator
_APPLY = {gi.TEXT_DELTA: _Acc._text, gi.THOUGHT_SIGNATURE_DELTA: _Acc._signature,
          gi.THOUGHT_SUMMARY_DELTA: _Acc._summary, gi.ARGUMENTS_DELTA: _Acc._arguments,
          gi.TEXT_ANNOTATION_DELTA: _Acc._annotations,
          **{kind: _Acc._media for kind in gi.MEDIA_DELTAS},
          **{kind: _Acc._whole for kind in gi.WHOLE_STEPS}}

_HANDLERS = {
    gi.INTERACTION_CREATED: _Acc._created,
    gi.INTERACTION_STATUS_UPDATE: _Acc._status_update,
    gi.STEP_START: _Acc._step_start,
    gi.STEP_DELTA: _Acc._step_delta,
    gi.STEP_STOP: _Acc._step_stop,
    gi.INTERACTION_COMPLETED: _Acc._completed,
    gi.ERROR: _Acc._error,
}
