"""The Gemini accumulator: whole records in, one ``GenerateContentResponse`` out.

Every record is a whole ``GenerateContentResponse`` carrying the *new* parts
of each candidate. Parts have no index and no id, so this module mints the
slots: a part either continues the part before it or opens the next slot
``(candidate, n)``, where ``n`` is its place in the final ``parts``:

- a ``text`` part continues a text part of the same kind (``thought: true``
  is reasoning, the rest is answer text) right before it, unless both carry a
  ``thoughtSignature``; a signature that arrives on a continuing part (often
  an empty ``"text": ""`` on the last record) joins the part it continues. A
  bare empty text part that continues nothing carries nothing: no slot;
- a ``functionCall`` opens a slot of its own: whole in one part (``name`` and
  ``args``), or streamed over the parts that follow it (``willContinue``,
  ``partialArgs``: see `calls`);
- every other part (``executableCode``, ``codeExecutionResult``,
  ``toolCall``, ``toolResponse``, ``inlineData``...) is whole: its own slot,
  kept as it arrived.

A part slot closes when the next part begins, or at the record that carries
its candidate's ``finishReason``. Usage (``usageMetadata``) is a running total
that can go down: the last one wins. ``groundingMetadata`` arrives empty on
every record and whole on the last: the last non-empty one wins.

Bad input is a diagnostic, never a traceback: a record that is not an object
(``unparseable_json``), a call's arguments that do not fit (see `calls`), a record
with two candidates (``several_candidates``: both are accumulated, each into
its own ``candidates[i]``), a part of a kind this module does not know
(``unknown_part``, kept whole). An error record (``{"error": {...}}``) is an
in-band failure.

That is the rule. Beside this module, each in the file named for it: `part` (what a
part and a candidate hold) and `calls` (``functionCall`` parts, whole or streamed).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ...diagnostics import Diagnostic
from ...partial_json import NOTHING
from ...tool_calls import ToolCall
from ...wires import gemini as wire
from ...wires.wire_events import WireEvent
from ..base import Accumulator, Fragments, Slot
from ..changes import (
    InBandError,
    ResponseChanged,
    SlotClosed,
    SlotOpened,
    SlotSigned,
    TextAppended,
    UnknownEvent,
)
from .calls import FunctionCalls
from .part import Candidate, Part

# Fields of a record read on their own; any other is kept, last value.
_RECORD_OWN = frozenset({"candidates", "usageMetadata"})
_TEXT_KEYS = frozenset({wire.TEXT_PART, wire.THOUGHT, wire.THOUGHT_SIGNATURE})


class GeminiAccumulator(FunctionCalls, Accumulator):
    """Builds a Gemini ``GenerateContentResponse`` from its stream's records."""

    wire = wire.WIRE

    def __init__(self) -> None:
        super().__init__()
        self.head: dict[str, Any] = {}           # modelVersion, responseId, createTime...
        self.usage: dict | None = None
        self.candidates: dict[int, Candidate] = {}
        self.errored = False
        self.records = 0
        self.last_finished = False     # the last record with candidates had a finishReason
        self._warned_several = False

    # -- feeding -------------------------------------------------------------

    def feed(self, event: WireEvent) -> list:
        """Take one record (or an error record); return what it changed."""
        self.changes = changes = []
        if event.parse_error is not None or not isinstance(event.payload, dict):
            why = event.parse_error or "the record is not a JSON object"
            self.note("unparseable_json", f"record skipped: {why}", event=event,
                      raw=event.sse.data)
            return changes
        if event.type in wire.FAILURES:
            self._error(event)
            return changes
        if event.type != wire.RECORD:
            changes.append(UnknownEvent(event.index, event.type, event.payload))
            self.note("unknown_event", f"a payload of type {event.type!r} is not a "
                      "GenerateContentResponse; kept as raw data", event=event,
                      severity="warning", raw=event.sse.data, payload=event.payload)
            return changes
        if self.errored:
            self.note("event_after_error", "a record after the error record; applied anyway",
                      event=event, raw=event.sse.data)
        self.records += 1
        self._record(event.payload, event)
        self._update_complete()
        return changes

    def _error(self, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        error = event.payload.get("error")
        read = wire.read_error_body(error)
        kind = (read.kind if read is not None else None) or "error"
        text = (read.message if read is not None else None) or event.sse.data
        self.changes.append(InBandError(event.index, f"{kind}: {text}", copy.deepcopy(error),
                                        read.type if read is not None else None))
        self.note("in_band_error", f"{kind}: {text}", event=event, raw=event.sse.data,
                  error=copy.deepcopy(error))

    def _record(self, payload: dict, event: WireEvent) -> None:
        # The parsed payload is read, never written: its values are kept as they are
        # (shared with the event), and copied only when `final()` hands them out.
        fields: dict[str, Any] = {}
        for key, value in payload.items():
            if key not in _RECORD_OWN and self.head.get(key, NOTHING) != value:
                self.head[key] = fields[key] = value
        usage = payload.get("usageMetadata")
        if isinstance(usage, dict):
            self.usage = fields["usageMetadata"] = usage   # a running total: the last wins
        if fields:
            self.changes.append(ResponseChanged(event.index, fields))
        found = payload.get("candidates")
        if found is None:
            return
        if not isinstance(found, list):
            self.note("unknown_slot", "candidates is not a list; not applied", event=event,
                      raw=event.sse.data)
            return
        if len(found) > 1 or (found and self.candidates and isinstance(found[0], dict)
                              and wire.candidate_index(found[0], 0) not in self.candidates):
            self._several(event)
        finished = False
        for position, data in enumerate(found):
            if not isinstance(data, dict):
                self.note("unknown_slot", f"candidate {position} is not an object; not applied",
                          event=event, raw=event.sse.data)
                continue
            finished |= self._candidate(data, wire.candidate_index(data, position), event)
        if found:
            self.last_finished = finished

    def _several(self, event: WireEvent) -> None:
        if not self._warned_several:
            self._warned_several = True
            self.note("several_candidates", "more than one candidate: each is accumulated "
                      "into its own candidates[i], and the turn reads each as a choice",
                      event=event, severity="warning", raw=event.sse.data)

    def _candidate(self, data: dict, index: int, event: WireEvent) -> bool:
        """Apply one candidate of a record; whether it carried a finishReason."""
        cand = self.candidates.get(index)
        if cand is None:
            cand = self.candidates[index] = Candidate(index)
        if type(data.get("index")) is int:
            cand.said_index = True
        content = data.get("content")
        if isinstance(content, dict):
            if isinstance(content.get("role"), str):
                cand.role = content["role"]
            parts = content.get("parts")
            for part in parts if isinstance(parts, list) else ():
                self._part(cand, part, event)
        cand.take_fields(data)
        reason = data.get("finishReason")
        if not isinstance(reason, str):
            return False
        cand.finish_reason = reason
        self.changes.append(ResponseChanged(event.index, {"finishReason": reason}, choice=index))
        if cand.open_call is not None:
            self._close_call(cand, event, how="finish_reason", closed_by_wire=False)
        self._close_last(cand, event, how="finish_reason", reason=reason)
        return True

    # -- parts ---------------------------------------------------------------

    def _part(self, cand: Candidate, part: Any, event: WireEvent) -> None:
        if not isinstance(part, dict):
            self.note("unknown_part", "a part that is not an object; not applied", event=event,
                      slot=cand.index, raw=event.sse.data)
            return
        call = part.get(wire.FUNCTION_CALL)
        if cand.open_call is not None:
            if isinstance(call, dict) and "name" not in call:
                self._continue_call(cand, part, call, event)
                return
            self._close_call(cand, event, how="stop", closed_by_wire=False)
        if isinstance(call, dict):
            self._call(cand, part, call, event)
        elif isinstance(part.get(wire.TEXT_PART), str):
            self._text(cand, part, event)
        else:
            self._whole(cand, part, event)

    def _text(self, cand: Candidate, part: dict, event: WireEvent) -> None:
        kind = wire.THOUGHT if part.get(wire.THOUGHT) is True else wire.TEXT_PART
        signature = part.get(wire.THOUGHT_SIGNATURE)
        last = cand.parts[-1] if cand.parts else None
        continues = (last is not None and last.state == "open" and last.kind == kind
                     and _TEXT_KEYS.issuperset(part)
                     and not (signature and wire.THOUGHT_SIGNATURE in last.data))
        if continues:
            target = last
        elif part[wire.TEXT_PART] == "" and part.keys() == {wire.TEXT_PART}:
            return                          # an empty text that continues nothing
        else:
            data = {k: copy.deepcopy(v) for k, v in part.items() if k != wire.TEXT_PART}
            target = self._open(cand, kind, data, event, content=part[wire.TEXT_PART])
            target.text = Fragments()
            target.text.append(part[wire.TEXT_PART])
            if isinstance(signature, str):
                self.changes.append(SlotSigned(event.index, target.address, signature))
            return
        fragment = part[wire.TEXT_PART]
        target.text.append(fragment)  # type: ignore[union-attr]
        if fragment:
            self.changes.append(TextAppended(event.index, target.address,
                                             "reasoning" if kind == wire.THOUGHT else "text",
                                             fragment))
        if isinstance(signature, str) and signature:
            target.data[wire.THOUGHT_SIGNATURE] = signature
            self.changes.append(SlotSigned(event.index, target.address, signature))

    def _whole(self, cand: Candidate, part: dict, event: WireEvent) -> None:
        kind = next((f for f in wire.PART_FIELDS if f in part), None)
        if kind is None:
            kind = "unknown"
            self.note("unknown_part", "a part with none of the known fields "
                      f"({', '.join(wire.PART_FIELDS)}); kept whole as it arrived",
                      event=event, severity="warning", slot=cand.index, raw=event.sse.data)
        # Opened, signed and closed in one record: not `whole` in the change's sense, so
        # that its signature (if any) comes between its start and its end.
        target = self._open(cand, kind, copy.deepcopy(part), event, shown=True)
        if isinstance(part.get(wire.THOUGHT_SIGNATURE), str):
            self.changes.append(SlotSigned(event.index, target.address,
                                               part[wire.THOUGHT_SIGNATURE]))
        target.state = "closed"
        self.changes.append(SlotClosed(event.index, target.address, "stop", data=target.data))

    def _open(self, cand: Candidate, kind: str, data: dict, event: WireEvent, *,
              content: str = "", shown: bool = False, takes_input: bool = False) -> Part:
        """Close the part before, and open the next slot ``(candidate, n)``."""
        self._close_last(cand, event, how="stop")
        part = Part((cand.index, len(cand.parts)), kind, data)
        cand.parts.append(part)
        self.changes.append(SlotOpened(
            event.index, part.address, kind, part.label(), name=part.name,
            call_id=part.call_id, choice=cand.index,
            content=part.shown() if shown else content, takes_input=takes_input,
            data=part.data if shown else None,
            ended_by=wire.CALL_ENDED_BY if takes_input else None))
        return part

    def _close_last(self, cand: Candidate, event: WireEvent, *, how: str,
                    reason: str | None = None) -> None:
        last = cand.parts[-1] if cand.parts else None
        if last is not None and last.state == "open" and last.call is None:
            last.state = "closed"
            self.changes.append(SlotClosed(event.index, last.address, how,  # type: ignore[arg-type]
                                           reason=reason))

    # -- ending --------------------------------------------------------------

    def _update_complete(self) -> None:
        self.complete = (not self.errored and self.last_finished and bool(self.candidates)
                         and all(c.finish_reason is not None for c in self.candidates.values()))

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: a body that did not end right after a finished record is cut;
        what is still open is closed (a streamed call cut). Return what that changed."""
        sse_diagnostics = list(sse_diagnostics)
        if not self.begin_finish(sse_diagnostics):
            return []
        if any(d.code == "undispatched_bytes" for d in sse_diagnostics):
            self.complete = False          # the body did not end at a record's end
        for index in sorted(self.candidates):
            cand = self.candidates[index]
            open_call = cand.open_call
            if open_call is not None:
                cand.open_call = None
                self.note("block_never_stopped", f"{open_call.label()} (candidate {index}) "
                          "was still streaming its arguments", slot=open_call.address,
                          severity="warning" if self.complete else "error")
                self._end_call(open_call, None, how="end_of_stream", cut=True)
            for part in cand.parts:
                if part.state == "open":
                    part.state = "never closed"
                    self.changes.append(SlotClosed(None, part.address, "end_of_stream",
                                                   synthesised=True))
        if not self.complete and not self.errored:
            self.note("no_terminal", "the stream ended without a last record carrying a "
                      "finishReason: what arrived is kept, but the response is incomplete")
        return self.end_changes("in_band_error" if self.errored else "cut")

    # -- reading -------------------------------------------------------------

    def final(self) -> dict:
        """The ``GenerateContentResponse`` so far, as the non-streaming API returns it."""
        out: dict[str, Any] = {"candidates": [self.candidates[i].as_dict()
                                              for i in sorted(self.candidates)]}
        for key, value in self.head.items():
            if key == "usageMetadata":
                continue
            out[key] = copy.deepcopy(value)
        if self.usage is not None:
            out["usageMetadata"] = copy.deepcopy(self.usage)
        order = ("candidates", "promptFeedback", "usageMetadata", "modelVersion", "createTime",
                 "responseId")
        return {k: out[k] for k in sorted(out, key=lambda k: (order.index(k) if k in order
                                                              else len(order), ))}

    def live_tool_calls(self) -> list[ToolCall]:
        """Every functionCall part's call, candidate by candidate, in part order."""
        return [p.call for i in sorted(self.candidates) for p in self.candidates[i].parts
                if p.call is not None]

    def slots(self) -> list[Slot]:
        """One slot per part, candidate by candidate."""
        out = []
        for i in sorted(self.candidates):
            for part in self.candidates[i].parts:
                if part.call is not None:
                    raw = part.call.raw
                    out.append(Slot(part.address, part.kind, part.label(), raw, part.state,
                                    name=part.name, call_id=part.call_id, raw_input=raw,
                                    input=part.current_input()))
                else:
                    out.append(Slot(part.address, part.kind, part.label(), part.shown(),
                                    part.state))
        return out
