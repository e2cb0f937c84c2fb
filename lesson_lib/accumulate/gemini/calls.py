"""Gemini's ``functionCall`` parts: whole in one part, or streamed over several.

A ``functionCall`` with ``name`` and ``args`` is whole: its slot opens, its
arguments are fed as JSON text and checked strictly, and it closes, all in one
record. With ``willContinue: true`` it streams: later ``functionCall`` parts
without a name carry ``partialArgs`` (`path_arguments`, written out as JSON text
for lesson 3's parser) and the one that does not continue (an empty
``functionCall: {}``) closes it. A streamed call the next part or the candidate's
``finishReason`` ends instead is ``call_not_closed``; an argument entry whose path
goes back, skips ahead or does not parse is ``partial_args_out_of_order`` (its entry
kept in the diagnostic), a continuation with no call open ``unknown_slot``.
"""

from __future__ import annotations

import copy
import json

from ...tool_calls import ToolCall
from ...wires import gemini as wire
from ...wires.wire_events import WireEvent
from ..changes import SlotSigned, ToolInputGrew
from ..path_arguments import PathArguments, PathError
from .part import Candidate, Part


class FunctionCalls:
    """The Gemini accumulator's function calls (mixed into `GeminiAccumulator`)."""

    changes: list

    def _call(self, cand: Candidate, part: dict, call: dict, event: WireEvent) -> None:
        name = call.get("name")
        if not isinstance(name, str):
            self.note("unknown_slot", "a functionCall fragment with no call open (no name, "
                      "no streamed call before it); not applied, its data is kept here",
                      event=event, slot=cand.index, raw=event.sse.data,
                      orphan_text=json.dumps(call))
            return
        data = copy.deepcopy(part)
        streamed = call.get("willContinue") is True
        fc = data[wire.FUNCTION_CALL]
        for key in ("willContinue", wire.PARTIAL_ARGS):
            fc.pop(key, None)
        target = self._open(cand, wire.FUNCTION_CALL, data, event, takes_input=True)
        target.call = ToolCall(name, target.call_id, kind=wire.FUNCTION_CALL,
                               address=target.address, t=event.t, event=event.index,
                               ended_by=wire.CALL_ENDED_BY)
        if isinstance(part.get(wire.THOUGHT_SIGNATURE), str):
            self.changes.append(SlotSigned(event.index, target.address,
                                               part[wire.THOUGHT_SIGNATURE]))
        if streamed:
            target.streamed = True
            target.args = PathArguments()
            cand.open_call = target
            self._arguments(cand, target, call, event)
            return
        if wire.PARTIAL_ARGS in call:
            self.note("partial_args_out_of_order", "partialArgs on a call that does not "
                      "continue; not applied, kept here", event=event, slot=target.address,
                      raw=event.sse.data, orphan_text=json.dumps(call[wire.PARTIAL_ARGS]))
        if "args" in call:
            self._feed(target, json.dumps(call["args"], ensure_ascii=False), event)
        self._end_call(target, event, how="stop", cut=False)

    def _continue_call(self, cand: Candidate, part: dict, call: dict, event: WireEvent) -> None:
        target = cand.open_call
        assert target is not None
        signature = part.get(wire.THOUGHT_SIGNATURE)
        if isinstance(signature, str) and signature:
            target.data[wire.THOUGHT_SIGNATURE] = signature
            self.changes.append(SlotSigned(event.index, target.address, signature))
        self._arguments(cand, target, call, event)
        if call.get("willContinue") is not True:
            self._close_call(cand, event, how="stop", closed_by_wire=True)

    def _arguments(self, cand: Candidate, target: Part, call: dict, event: WireEvent) -> None:
        entries = call.get(wire.PARTIAL_ARGS)
        if entries is None:
            return
        if not isinstance(entries, list):
            entries = [entries]
        assert target.args is not None
        for entry in entries:
            try:
                text = target.args.add(entry)
            except PathError as exc:
                self.note("partial_args_out_of_order", f"an argument entry of "
                          f"{target.label()} cannot extend its arguments ({exc}); not "
                          "applied, kept here", event=event, slot=target.address,
                          raw=event.sse.data, orphan_text=json.dumps(entry))
                continue
            if text:
                self._feed(target, text, event)

    def _feed(self, target: Part, text: str, event: WireEvent) -> None:
        assert target.call is not None
        grew = target.call.feed(text, t=event.t, event=event.index)
        self.changes.append(ToolInputGrew(event.index, target.address, text, tuple(grew)))

    def _close_call(self, cand: Candidate, event: WireEvent | None, *, how: str,
                    closed_by_wire: bool) -> None:
        """End the streamed call of `cand`: its closing text, then the strict check."""
        target = cand.open_call
        cand.open_call = None
        if target is None:
            return
        if not closed_by_wire and event is not None:
            self.note("call_not_closed", f"{target.label()} streamed its arguments and was "
                      "never closed by an empty functionCall; it ends here", event=event,
                      severity="warning", slot=target.address)
        assert target.args is not None and event is not None
        text = target.args.close()
        if target.args.unterminated is not None:
            self.note("string_not_ended", f"the string at {target.args.unterminated} of "
                      f"{target.label()} never got its last entry; it ends with the call",
                      event=event, severity="warning", slot=target.address)
        if text:
            self._feed(target, text, event)
        self._end_call(target, event, how=how, cut=False)

    def _end_call(self, target: Part, event: WireEvent | None, *, how: str, cut: bool) -> None:
        assert target.call is not None
        target.state = "never closed" if cut else "closed"
        self.close_call_slot(target.call, target.address, cut=cut, event=event,
                             what=f"{target.label()} (candidate {target.address[0]})", how=how)
