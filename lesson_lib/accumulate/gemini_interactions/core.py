"""The Gemini Interactions accumulator: steps in slots addressed by `index`.

``interaction.created`` announces the interaction (and ``interaction.status_update``
its status); each ``step.start`` opens the slot ``index`` with the step; deltas
name that index; ``step.stop`` closes it; ``interaction.completed`` ends the
stream with the interaction's ``status`` and ``usage``. The final object is the
``Interaction`` google-genai reports at ``interaction.completed``, with the
``steps`` the stream said (the event leaves them out: the bytes win).

Each delta names its step's slot; what it does to the step depends on its type
(`deltas`).

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

That is the rule. Beside this module, each in the file named for it: `step` (what a
step holds: its items, its call), `deltas` (what each delta does to its step) and
`stated` (an interaction object that states steps whole, at ``interaction.created``
or ``interaction.completed``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ...diagnostics import Diagnostic
from ...wires import gemini_interactions as gi
from ...wires.wire_events import WireEvent
from ..changes import InBandError, ResponseChanged, SlotClosed, SlotOpened, TerminalReached
from ..indexed import IndexedAccumulator
from ..started import close_started
from .deltas import APPLY, StepDeltas, delta_text
from .stated import StatedSteps
from .step import Step


class GeminiInteractionsAccumulator(StatedSteps, StepDeltas, IndexedAccumulator):
    """Builds a Gemini ``Interaction`` from Interactions-API stream events."""

    wire = gi.WIRE
    blocks: dict[int, Step]

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
        if self.unreadable(event):
            return changes
        payload = event.payload
        named = payload.get(gi.EVENT_TYPE_FIELD)
        kind = named if isinstance(named, str) else event.type
        if isinstance(named, str) and event.sse.event not in (None, "", "message", named):
            self.note("event_type_mismatch", f"the event line says {event.sse.event!r}, the "
                      f"payload {named!r}; read as the payload says", event=event,
                      severity="warning", raw=event.sse.data)
        handler = _HANDLERS.get(kind)  # type: ignore[arg-type]
        if handler is None:
            self.unknown_event(event, kind, "the Interactions stream")
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

    def _opened(self, block: Step, event: WireEvent) -> None:
        """Record the `SlotOpened` of a step (closed already for one stated whole)."""
        name, call_id = block.identity()
        # A server call's input is stated by a delta after its start: open until its stop.
        whole = block.state != "open" or (block.kind in gi.WHOLE_STEPS
                                          and block.kind not in gi.SERVER_CALL_STEPS)
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
        if self.already_started(index, event):
            return
        still_open = [i for i in self._open if self.blocks[i].state == "open"]
        if still_open:
            self.note("steps_overlap", f"slot {index} started while slot {still_open[0]} is "
                      f"still open (no {gi.STEP_STOP}); both are kept", event=event,
                      severity="warning", slot=index, raw=event.sse.data)
        block = self.blocks[index] = Step(index, copy.deepcopy(data))
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
                      orphan_text=delta_text(delta))
            return
        dtype = delta.get("type") if isinstance(delta, dict) else None
        if dtype not in gi.DELTA_TYPES:
            self.note("unknown_delta", f"delta type {dtype!r} is not known; kept as raw data",
                      event=event, severity="warning", slot=index, raw=event.sse.data)
            return
        assert isinstance(delta, dict)
        if not APPLY[dtype](self, block, delta, event):
            self.note("delta_mismatch", f"{dtype} does not fit slot {index} ({block.kind}); "
                      "not applied", event=event, severity="warning", slot=index,
                      raw=event.sse.data)

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
        close_started(self, block, cut=False, event=event, data=self._finished(block))

    @staticmethod
    def _finished(block: Step) -> dict | None:
        """A server call's step as its stop finds it: what its delta stated (the queries)."""
        return block.as_dict() if block.kind in gi.SERVER_CALL_STEPS else None

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
        for block in self.never_stopped(gi.STEP_STOP,
                                        length_stop=self.complete and self.length_stop()):
            close_started(self, block, cut=True, event=None, data=self._finished(block))
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


_Acc = GeminiInteractionsAccumulator
_HANDLERS = {
    gi.INTERACTION_CREATED: _Acc._created,
    gi.INTERACTION_STATUS_UPDATE: _Acc._status_update,
    gi.STEP_START: _Acc._step_start,
    gi.STEP_DELTA: _Acc._step_delta,
    gi.STEP_STOP: _Acc._step_stop,
    gi.INTERACTION_COMPLETED: _Acc._completed,
    gi.ERROR: _Acc._error,
}
