"""The Chat Completions accumulator: choices by index, tool calls by id, then index (lesson 2).

Chat chunks have no event names and no per-block start or stop. Each chunk
carries ``choices[i].delta`` with pieces of one message: ``content``,
``refusal``, ``reasoning_content`` (from compatible servers) and
``tool_calls[]`` fragments. The first fragment of a call carries its ``id``,
``type`` and ``function.name``; later ones only an ``index`` and argument
text. So a fragment goes to the call with its ``id`` when it has one (a new
``id`` at a reused ``index`` opens a *new* call), else to the call last seen
at its ``index``.

Nothing says "this call is done" except the choice's ``finish_reason`` (or,
for a choice that never got one, ``data: [DONE]``): only then are the
arguments checked. Each call's `ToolCall` (lesson 3) is fed every argument
fragment as it arrives. A usage chunk (``choices: []``) may come last;
``data: [DONE]`` ends the stream. The legacy single ``function_call`` delta is
accumulated like a tool call. Fields a provider adds (to a chunk, a choice or a
delta) are kept where they arrived, an unknown delta field with one warning.

That is the rule; the features around it live beside this module, each in the
file named for it: `choice` (what a choice and a call hold, and their slots),
`order` (what breaks Chat's implicit order, and a body without ``[DONE]``),
`structured` (structured output as a pseudo tool call), `parts` (``content`` as
typed parts, as Mistral streams it), `audio` (spoken output) and `extras` (an
in-band error, moderation, logprobs).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ...diagnostics import Diagnostic
from ...partial_json import NOTHING
from ...tool_calls import ToolCall
from ...wires import chat
from ...wires.chat import (
    STREAM_ONLY_FIELDS,
    fragment_arguments,
    is_error_payload,
    opening_id,
    usage_promised,
)
from ...wires.wire_events import DONE, WireEvent
from ..base import Accumulator, Fragments, Slot
from ..changes import (
    ResponseChanged,
    SlotClosed,
    SlotOpened,
    SlotRenamed,
    SlotReserved,
    TerminalReached,
    TextAppended,
    ToolInputGrew,
)
from .audio import SpokenOutput
from .choice import (
    CHANNEL,
    SLOT_NAME,
    TEXT_FIELDS,
    Call,
    Choice,
    address_of,
    delta_text,
    kind_of,
    label_of,
)
from .extras import BesideTheMessage
from .order import OrderChecks
from .parts import IndexedEntries, TypedParts, indexed
from .structured import StructuredOutput

_new = tuple.__new__
_DELTA_KNOWN = frozenset(TEXT_FIELDS) | {"role", "tool_calls", chat.FUNCTION_CALL, "audio"}
_CHOICE_KNOWN = frozenset({"index", "delta", "logprobs", "finish_reason"})
# Chunk fields read on their own, or stream-only (obfuscation pads the chunk's size).
_CHUNK_KNOWN = frozenset({"id", "object", "created", "model", "system_fingerprint",
                          "service_tier", "choices", "usage", "moderation",
                          *STREAM_ONLY_FIELDS})


class ChatAccumulator(OrderChecks, StructuredOutput, TypedParts, SpokenOutput, BesideTheMessage,
                      Accumulator):
    """Builds an OpenAI ``chat.completion`` from ``chat.completion.chunk`` events."""

    wire = chat.WIRE

    def __init__(self, structured_output: str | None = None,
                 usage_requested: bool = False) -> None:
        super().__init__()
        self._structured = structured_output   # response_format json_schema: its name
        self.head: dict[str, Any] = {}      # id, created, model, ... from the chunks
        self.choices: dict[int, Choice] = {}
        self.usage: dict | None = None
        self.done = False
        self.errored = False
        self._unknown_keys: set[str] = set()
        # Whether a usage chunk is owed: the request asked, or a chunk said "usage": null.
        self._usage_owed = usage_requested

    def feed(self, event: WireEvent) -> list:
        """Take one event: a chunk, ``[DONE]`` or an error payload; return its changes."""
        self.changes = changes = []
        if event.type == DONE:
            if self.done:
                self.note("event_after_terminal", "a second [DONE]", event=event)
            self.done = True
            changes.append(TerminalReached(event.index, DONE))
            self._end_unfinished(event)
            self._update_complete()
            return changes
        if event.parse_error is not None or not isinstance(event.payload, dict):
            why = event.parse_error or "the payload is not a JSON object"
            self.note("unparseable_json", f"chunk skipped: {why}", event=event,
                      raw=event.sse.data)
            return changes
        if self.done:
            self.note("event_after_terminal", "data after [DONE]; applied anyway",
                      event=event, raw=event.sse.data)
        payload = event.payload
        if not self._usage_owed and usage_promised(payload):
            self._usage_owed = True
        if is_error_payload(payload):
            self._error(payload, event)
            return changes
        if event.type != chat.CHUNK and not chat.filter_results_chunk(payload):
            self.note("unknown_event", f"payload of type {event.type!r} is not a chunk; "
                      "read as one", event=event, severity="warning", raw=event.sse.data)
        self._chunk(payload, event)
        if self.done:
            self._update_complete()
        return changes

    def _chunk(self, payload: dict, event: WireEvent) -> None:
        head = self.head
        fields: dict[str, Any] = {}
        for key in chat.IDENTITY_FIELDS:
            # The first real value names the completion: a placeholder (Azure's first
            # chunk) is kept only until one arrives.
            value = payload.get(key)
            if value is not None and (key not in head or (
                    chat.names_nothing(head[key]) and not chat.names_nothing(value))):
                head[key] = fields[key] = value
        for key in ("system_fingerprint", "service_tier"):
            value = payload.get(key)
            if value is not None and head.get(key, None) != value:
                head[key] = fields[key] = value
        for key, value in payload.items():
            # Fields a provider adds (e.g. prompt_filter_results): the first value is kept.
            if key not in _CHUNK_KNOWN and key not in head and value is not None:
                head[key] = copy.deepcopy(value)
                fields[key] = copy.deepcopy(value)
        if payload.get("usage") is not None:
            self.usage = copy.deepcopy(payload["usage"])
            fields["usage"] = copy.deepcopy(payload["usage"])
        if payload.get("moderation") is not None:
            self._moderation(payload["moderation"], event)
            fields["moderation"] = copy.deepcopy(payload["moderation"])
        if fields:
            self.changes.append(ResponseChanged(event.index, fields))
        choices = payload.get("choices")
        if not isinstance(choices, list):
            if choices is not None:
                self.note("unknown_event", "chunk whose choices is not a list", event=event,
                          raw=event.sse.data)
            return
        for choice in choices:
            if not isinstance(choice, dict) or not isinstance(choice.get("index", 0), int):
                self.note("unknown_slot", "choice without an integer index", event=event,
                          raw=event.sse.data)
                continue
            self._choice(choice, event)

    def _choice(self, data: dict, event: WireEvent) -> None:
        index = data.get("index", 0)
        choice = self.choices.get(index)
        if choice is None:
            choice = self.choices[index] = Choice(index)
        delta = data.get("delta")
        if choice.finish_reason is not None and data.get("finish_reason") is not None:
            # A choice stops once: a second finish_reason (the same or another) is a
            # repeated stop; the first is kept, the chunk's text stays in the diagnostic.
            self.note("duplicate_stop", f"choice {index} already finished "
                      f"({choice.finish_reason}); a second finish_reason "
                      f"({data['finish_reason']}) is not applied, the first is kept",
                      event=event, slot=index, raw=event.sse.data,
                      orphan_text=delta_text(delta))
            return
        if choice.finish_reason is not None and delta:
            # The order is visible here (nothing follows a choice's finish_reason),
            # so it is an error; the text the delta carried stays in the diagnostic.
            self.note("delta_after_finish", f"choice {index} already finished "
                      f"({choice.finish_reason}); this delta is not applied, its text is "
                      "kept here", event=event, slot=index, raw=event.sse.data,
                      orphan_text=delta_text(delta))
            return
        if isinstance(delta, dict):
            self._delta(choice, delta, event)
        logprobs = data.get("logprobs")
        if isinstance(logprobs, dict):
            self._logprobs(choice, logprobs)
        for key, value in data.items():
            # Fields a provider adds to a choice (e.g. content_filter_results): last value.
            if key not in _CHOICE_KNOWN and value is not None:
                choice.fields[key] = copy.deepcopy(value)
        reason = data.get("finish_reason")
        if reason is not None:
            choice.finish_reason = reason
            self.changes.append(ResponseChanged(event.index, {"finish_reason": reason},
                                                choice=index))
            self._end_structured(choice, event)
            self._close_texts(choice, event, how="finish_reason", reason=reason)
            for call in self._calls_of(choice):
                self._end_call(choice, call, cut=False, event=event, how="finish_reason",
                               reason=reason)

    def _close_texts(self, choice: Choice, event: WireEvent | None, *, how: str,
                     reason: str | None = None) -> None:
        """`SlotClosed` for each text slot of a choice (its structured output included)."""
        index = event.index if event is not None else None
        cut = how == "end_of_stream"
        if choice.audio is not None:
            self.changes.append(SlotClosed(index, (choice.index, "audio"), how,  # type: ignore[arg-type]
                                           synthesised=cut, reason=reason,
                                           data=choice.audio.as_dict()))
        for name in choice.texts:
            call = choice.structured if name == "content" else None
            self.changes.append(SlotClosed(
                index, (choice.index, SLOT_NAME[name]), how, synthesised=cut,  # type: ignore[arg-type]
                reason=reason, call_state=call.state if call is not None else None,
                input=call.input if call is not None else None))

    @staticmethod
    def _calls_of(choice: Choice) -> list[Call]:
        legacy = [choice.function_call] if choice.function_call is not None else []
        return choice.calls + legacy

    def _delta(self, choice: Choice, delta: dict, event: WireEvent) -> None:
        for key, value in delta.items():
            if value is None:
                continue
            if key in TEXT_FIELDS and isinstance(value, str):
                if key == "content" and choice.parts is not None:
                    choice.parts.add("text", None, value)
                self._text(choice, key, value, event)
            elif key == "content" and isinstance(value, list):
                self._content_parts(choice, value, event)
            elif key == "role":
                choice.role = value
            elif key == "audio" and isinstance(value, dict):
                self._audio(choice, value, event)
            elif key == "tool_calls" and isinstance(value, list):
                for fragment in value:
                    self._tool_fragment(choice, fragment, event)
            elif key == chat.FUNCTION_CALL and isinstance(value, dict):
                call = choice.function_call
                if call is None:
                    call = choice.function_call = Call(0, None, None,
                                                        (choice.index, chat.FUNCTION_CALL), event)
                    call.call.kind = chat.FUNCTION_CALL
                    self._extend_function(choice, call, value, event, opening=True)
                else:
                    self._extend_function(choice, call, value, event)
            elif isinstance(value, str) and key not in _DELTA_KNOWN:
                self._unknown_key(key, event)
                frags = choice.extra_text.get(key)
                if frags is None:
                    frags = choice.extra_text[key] = Fragments()
                frags.append(value)
            elif indexed(value) and key not in _DELTA_KNOWN:
                # A list of entries with an ``index`` (OpenRouter's reasoning_details):
                # merged by index, their strings concatenated, as the SDK does.
                self._unknown_key(key, event)
                choice.extra_lists.setdefault(key, IndexedEntries()).add(value)
            else:
                self._unknown_key(key, event)
                choice.extra[key] = copy.deepcopy(value)

    def _text(self, choice: Choice, key: str, value: str, event: WireEvent) -> None:
        """One text fragment of a text field (``content``, ``reasoning_content``, a
        thinking part's text...) to its slot."""
        frags = choice.texts.get(key)
        if frags is None:
            frags = choice.texts[key] = Fragments()
            self._open_text(choice, key, event, reserve=not value)
        elif not frags and value:
            self._open_text(choice, key, event, reserve=False)
        frags.append(value)
        self.changes.append(_new(TextAppended, (event.index, (choice.index, SLOT_NAME[key]),
                                                CHANNEL[key], value, key)))
        if key == "content" and self._structured is not None:
            self._feed_structured(choice, value, event)

    def _open_text(self, choice: Choice, key: str, event: WireEvent, reserve: bool) -> None:
        """A text slot's start: opened with its first text (reserved on an empty one;
        structured output opens on its first string, as its call does)."""
        kind = SLOT_NAME[key]
        structured = key == "content" and self._structured is not None
        if structured and choice.texts[key].parts:
            return                  # opened already, on an empty first string
        if reserve and not structured:
            self.changes.append(SlotReserved(event.index, (choice.index, kind), kind,
                                             f"[{choice.index}] {kind}", choice.index))
            return
        self.changes.append(SlotOpened(
            event.index, (choice.index, kind), kind, f"[{choice.index}] {kind}",
            name=self._structured if structured else None,
            call_id=self.head.get("id") if structured else None, choice=choice.index,
            takes_input=structured, structured=structured,
            ended_by=chat.CALL_ENDED_BY if structured else None))

    def _extend_function(self, choice: Choice, call: Call, function: dict,
                         event: WireEvent, opening: bool = False) -> None:
        """Add one ``function`` fragment (name and/or argument text) to a call; `opening`:
        the call's first fragment, whose `SlotOpened` goes before its arguments."""
        name = function.get("name")
        # Some servers repeat the whole name on every fragment; others split it.
        renamed = isinstance(name, str) and name != call.name
        if renamed:
            call.name += name
            call.call.name = call.name
        if opening:
            self._open_call(choice, call, event)
        elif renamed:
            self.changes.append(SlotRenamed(event.index, address_of(choice, call),
                                            label_of(choice, call), name=call.name))
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            self._add_arguments(choice, call, arguments, event)

    def _add_arguments(self, choice: Choice, call: Call, text: str,
                       event: WireEvent) -> None:
        """One argument fragment to a call: its text, its `ToolCall`, a `ToolInputGrew`."""
        call.arguments.append(text)
        grew = call.call.feed(text, t=event.t, event=event.index)
        self.changes.append(_new(ToolInputGrew, (event.index, address_of(choice, call), text,
                                                 tuple(grew))))

    def _open_call(self, choice: Choice, call: Call, event: WireEvent) -> None:
        self.changes.append(SlotOpened(
            event.index, address_of(choice, call), kind_of(choice, call), label_of(choice, call),
            name=call.name, call_id=call.id, choice=choice.index, takes_input=True,
            ended_by=chat.CALL_ENDED_BY))

    def _unknown_key(self, key: str, event: WireEvent) -> None:
        if key not in self._unknown_keys:
            self._unknown_keys.add(key)
            self.note("unknown_delta", f"delta field {key!r} is not part of Chat "
                      "Completions; kept on the message as it arrived", event=event,
                      severity="warning", raw=event.sse.data)

    def _tool_fragment(self, choice: Choice, fragment: Any, event: WireEvent) -> None:
        if not isinstance(fragment, dict):
            self.note("unknown_slot", "tool call fragment is not an object", event=event,
                      slot=choice.index, raw=event.sse.data)
            return
        call_id, index = opening_id(fragment), fragment.get("index")
        if index is not None and type(index) is not int:
            self.note("unknown_slot", f"tool call fragment whose index {index!r} is not an "
                      "integer; not applied, its text is kept here", event=event,
                      slot=choice.index, raw=event.sse.data,
                      orphan_text=fragment_arguments(fragment))
            return
        call = None
        if call_id is not None:
            call = choice.by_id.get(call_id)
            if call is not None:
                self._announced_again(choice, call, fragment, event)
                return
        elif index in choice.by_index:
            call = choice.by_index[index]
            if self._held(choice, call, index, fragment, event):
                return
        elif index is None and choice.calls:
            call = choice.calls[-1]   # no index and no id: the latest call of the choice
        opening = call is None
        if call is None:
            n = len(choice.calls)
            call = Call(n, index, call_id, (choice.index, ("tool", n)), event)
            choice.calls.append(call)
            if call.id:
                choice.by_id[call.id] = call
            if call.id is None:
                self.note("tool_call_without_id", f"a tool call fragment at index {index!r} "
                          "with no id and no earlier call there; a call without id is opened",
                          event=event, severity="warning", slot=address_of(choice, call),
                          raw=event.sse.data)
        if index is not None:
            choice.by_index[index] = call
        if isinstance(fragment.get("type"), str) and fragment["type"] != call.type:
            call.type = call.call.kind = fragment["type"]
            if not opening:
                self.changes.append(SlotRenamed(event.index, address_of(choice, call),
                                                label_of(choice, call), slot_kind=call.type))
        function = fragment.get("function")
        if isinstance(function, dict):
            self._extend_function(choice, call, function, event, opening=opening)
        elif opening:
            self._open_call(choice, call, event)
        if opening and index in choice.held:
            # Fragments that came before this opening, at its index: now they have a call.
            for text in choice.held.pop(index):
                self._add_arguments(choice, call, text, event)
        for key, value in fragment.items():
            if key not in ("id", "index", "type", "function") and value is not None:
                call.extra[key] = copy.deepcopy(value)

    def _end_call(self, choice: Choice, call: Call, *, cut: bool,
                  event: WireEvent | None, how: str, reason: str | None = None) -> None:
        if call.ended:
            if how == "end_of_stream":      # ended by [DONE]: its slot closes now
                self.changes.append(SlotClosed(None, address_of(choice, call), how,  # type: ignore[arg-type]
                                               synthesised=True, call_state=call.call.state,
                                               input=call.input))
            return
        call.ended = True
        if call is choice.function_call:
            what = f"function call {call.name or '?'} (choice {choice.index})"
        else:
            what = f"tool call {call.name or '?'} (choice {choice.index}, call {call.n})"
        call.input = self.close_call_slot(call.call, address_of(choice, call), cut=cut,
                                          event=event, what=what, how=how, reason=reason)

    def _end_unfinished(self, event: WireEvent) -> None:
        """``data: [DONE]``: the stream's own end also ends the calls of a choice that
        never got a finish_reason (checked strictly; the choice is still reported)."""
        for choice in self.choices.values():
            if choice.finish_reason is None:
                self._end_structured(choice, event)
                if choice.structured is not None:
                    self.changes.append(SlotClosed(
                        event.index, (choice.index, "content"), "terminal",
                        call_state=choice.structured.state, input=choice.structured.input))
                for call in self._calls_of(choice):
                    self._end_call(choice, call, cut=False, event=event, how="terminal")

    def finish(self, sse_diagnostics: Iterable[Diagnostic] = ()) -> list:
        """End of stream: a choice without ``finish_reason`` has its calls cut; return
        what that changed."""
        if not self.begin_finish(sse_diagnostics):
            return []
        for index in sorted(self.choices):
            choice = self.choices[index]
            if choice.finish_reason is not None:
                continue
            self.note("block_never_stopped", f"choice {index} never got a finish_reason",
                      slot=index, severity="error")
            if choice.structured is not None:
                choice.structured.cut()
            self._close_texts(choice, None, how="end_of_stream")
            for call in self._calls_of(choice):
                self._end_call(choice, call, cut=True, event=None, how="end_of_stream")
        if not self.done and not self.errored:
            self._without_done()
        else:
            self._update_complete()
        return self.end_changes("in_band_error" if self.errored else "cut")

    def _update_complete(self) -> None:
        self.complete = (self.done and not self.errored and
                         all(c.finish_reason is not None for c in self.choices.values()))

    def final(self) -> dict:
        """The ``chat.completion`` so far (choices in index order, ``message`` each)."""
        out: dict[str, Any] = {"id": self.head.get("id"), "object": "chat.completion",
                               "created": self.head.get("created"),
                               "model": self.head.get("model")}
        for key, value in self.head.items():
            if key not in out:
                out[key] = copy.deepcopy(value)
        out["choices"] = [
            {**copy.deepcopy(c.fields), "index": i, "message": c.message(Call.as_dict),
             "finish_reason": c.finish_reason, "logprobs": copy.deepcopy(c.logprobs)}
            for i, c in sorted(self.choices.items())]
        if self.usage is not None:
            out["usage"] = copy.deepcopy(self.usage)
        return out

    def live_tool_calls(self) -> list[ToolCall]:
        """Per choice (in index order): its structured output (with a json_schema
        response_format), its tool calls in arrival order, then a legacy function call."""
        out: list[ToolCall] = []
        for _, choice in sorted(self.choices.items()):
            if choice.structured is not None:
                out.append(choice.structured)
            out += [call.call for call in self._calls_of(choice)]
        return out

    def slots(self) -> list[Slot]:
        """Per choice: its text fields, then its tool calls, in arrival order."""
        out: list[Slot] = []
        for i, choice in sorted(self.choices.items()):
            state = "open" if choice.finish_reason is None else "closed"
            if state == "open" and self.finished:
                state = "never closed"
            for name, frags in choice.texts.items():
                kind = SLOT_NAME[name]
                out.append(Slot((i, kind), kind, f"[{i}] {kind}", frags.text, state))
            if choice.audio is not None:
                spoken = choice.audio.texts.get("transcript")
                out.append(Slot((i, "audio"), "audio", f"[{i}] audio",
                                spoken.text if spoken is not None else "", state))
            for call in self._calls_of(choice):
                raw = call.arguments.text
                value = call.input if call.ended else call.call.view().value
                value = {} if value is NOTHING else value
                address = address_of(choice, call)
                if call is choice.function_call:
                    kind, label = chat.FUNCTION_CALL, f"[{i}] function_call"
                else:
                    kind, label = call.type, f"[{i}] tool {call.n}"
                out.append(Slot(address, kind, f"{label} {call.name}".rstrip(), raw, state,
                                name=call.name, call_id=call.id, raw_input=raw, input=value))
        return out
