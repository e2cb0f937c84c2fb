"""The Chat Completions accumulator: choices by index, tool calls by id, then index.

Chat chunks have no event names and no per-block start or stop. Each chunk
carries ``choices[i].delta`` with pieces of one message: ``content``,
``refusal``, ``reasoning_content`` (from compatible servers) and
``tool_calls[]`` fragments. The first fragment of a call carries its ``id``,
``type`` and ``function.name``; later ones only an ``index`` and argument
text. So a fragment goes to the call with its ``id`` when it has one (a new
``id`` at a reused ``index`` opens a *new* call), else to the call last seen
at its ``index``.

Some compatible servers (Mistral) send ``content`` as an array of typed parts:
a ``thinking`` part's text goes to the reasoning slot, a ``text`` part's to the
content slot, and the message keeps the parts (`chat_parts`); the padding
field ``p`` is stream-only, like ``obfuscation``.

Nothing says "this call is done" except the choice's ``finish_reason`` (or,
for a choice that never got one, ``data: [DONE]``): only then are the
arguments checked. Each call's `ToolCall` (lesson 3) is fed every argument
fragment as it arrives. Given the name of a ``response_format`` json_schema
(structured output), each choice's ``content`` is a pseudo `ToolCall` too,
named after the schema: fed every content fragment, ended at the choice's
``finish_reason``, cut when the stream ends first (``final()`` is unchanged:
the content stays the JSON text). A usage chunk (``choices: []``) may come
last; ``data: [DONE]`` ends the stream (a body without it ends properly, with a
``no_done_marker`` warning, by `wires.chat.ended_without_done`); a payload with
a top-level ``error`` is an in-band error (its ``usage`` kept). The legacy single
``function_call`` delta is accumulated like a tool call. Fields a provider adds (to a
chunk, a choice or a delta) are kept where they arrived, an unknown delta field with one
warning.

Spoken output (``delta.audio``) is one slot per choice, ``(choice, "audio")``: its
``transcript`` pieces are its text (channel ``other``), its base64 ``data`` fragments are
concatenated, and the last update carries only ``expires_at``. The message's ``audio`` is
the SDK's concatenation, except where the SDK garbles an identity: a repeated ``id`` is kept
once and a repeated ``expires_at`` replaces the earlier one (the SDK would concatenate the
one and add up the other). The moderation chunk (``moderation``: the input's and the
output's results) is kept on the completion as the SDK keeps it (the latest wins), and
noted: a warning when either side is flagged or failed, since the text it judges has
already streamed.

Chat numbers nothing, but its few markers show an order, and what breaks
it is an error that keeps the text the chunk carried (``orphan_text``) next
to the raw chunk: a delta for a choice that already has its
``finish_reason`` (``delta_after_finish``) or a second ``finish_reason``
(``duplicate_stop``) is not applied; a fragment with the ``id`` of a call
already opened is a second opening (``duplicate_start``), not applied; an
id-less fragment at an index whose call's arguments are already a whole JSON
value cannot continue it (``event_before_start``): it is held for the next
call opened at that index. Data after ``[DONE]`` (``event_after_terminal``)
is an error too, though still applied.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

from ..diagnostics import Diagnostic
from ..partial_json import NOTHING
from ..tool_calls import ToolCall
from ..wires import chat
from ..wires.chat import (
    STREAM_ONLY_FIELDS,
    content_part_text,
    ended_without_done,
    fragment_arguments,
    has_usage,
    is_error_payload,
    opening_id,
    usage_promised,
)
from ..wires.wire_events import DONE, WireEvent
from .base import Accumulator, Fragments, Slot
from .changes import (
    InBandError,
    ResponseChanged,
    SlotClosed,
    SlotOpened,
    SlotRenamed,
    SlotReserved,
    TerminalReached,
    TextAppended,
    ToolInputGrew,
)
from .chat_parts import ContentParts, IndexedEntries, indexed

# Text fields of a message delta, accumulated by concatenation.
TEXT_FIELDS = ("content", "refusal", "reasoning_content", "reasoning")
# ``thinking``: the text of ``content``'s thinking parts (Mistral), never a delta field.
_SLOT_NAME = {"content": "content", "refusal": "refusal", "reasoning_content": "reasoning",
              "reasoning": "reasoning", "thinking": "reasoning"}
_CHANNEL = {"content": "text", "refusal": "refusal", "reasoning_content": "reasoning",
            "reasoning": "reasoning", "thinking": "reasoning"}
_new = tuple.__new__
_DELTA_KNOWN = frozenset(TEXT_FIELDS) | {"role", "tool_calls", chat.FUNCTION_CALL, "audio"}
_CHOICE_KNOWN = frozenset({"index", "delta", "logprobs", "finish_reason"})
# Chunk fields read on their own, or stream-only (obfuscation pads the chunk's size).
_CHUNK_KNOWN = frozenset({"id", "object", "created", "model", "system_fingerprint",
                          "service_tier", "choices", "usage", "moderation",
                          *STREAM_ONLY_FIELDS})


class _Audio:
    """A choice's spoken output: its id, its transcript and data fragments, its expiry."""

    __slots__ = ("fields", "texts")

    def __init__(self) -> None:
        self.fields: dict[str, Any] = {}         # id (first kept), expires_at (last), others
        self.texts: dict[str, Fragments] = {}    # transcript, data: concatenated

    def add(self, delta: dict) -> str | None:
        """Take one ``delta.audio``; return its transcript piece (None when it has none)."""
        for key, value in delta.items():
            if value is None:
                continue
            if isinstance(value, str) and key != "id":
                self.texts.setdefault(key, Fragments()).append(value)
            elif key != "id" or "id" not in self.fields:
                self.fields[key] = copy.deepcopy(value)
        piece = delta.get("transcript")
        return piece if isinstance(piece, str) else None

    def as_dict(self) -> dict:
        out = dict(copy.deepcopy(self.fields))
        out.update({key: frags.text for key, frags in self.texts.items()})
        return out


class _Call:
    """One tool call of one choice: identity from its first fragment, then text."""

    __slots__ = ("n", "index", "id", "type", "name", "arguments", "input", "ended",
                 "extra", "call")

    def __init__(self, n: int, index: Any, call_id: str | None, address: Any = None,
                 event: WireEvent | None = None) -> None:
        self.n = n                  # its position in the choice's tool_calls
        self.index = index          # the wire's index (may be reused by a later call)
        self.id = call_id
        self.type = "function"
        self.name = ""
        self.arguments = Fragments()
        self.input: Any = None
        self.ended = False
        self.extra: dict[str, Any] = {}
        self.call = ToolCall(None, call_id, kind="function", address=address,
                             ended_by=chat.CALL_ENDED_BY,
                             t=event.t if event is not None else None,
                             event=event.index if event is not None else None)

    def as_dict(self) -> dict:
        out = {"id": self.id, "type": self.type,
               "function": {"name": self.name, "arguments": self.arguments.text}}
        out.update(copy.deepcopy(self.extra))
        return out


def _address(choice: _Choice, call: _Call) -> tuple:
    """A call's slot address: ``(choice, ("tool", n))``, or ``(choice, "function_call")``."""
    if call is choice.function_call:
        return (choice.index, chat.FUNCTION_CALL)
    return (choice.index, ("tool", call.n))


def _label(choice: _Choice, call: _Call) -> str:
    """A call's slot label: ``[choice] tool n name`` (or ``function_call name``)."""
    if call is choice.function_call:
        return f"[{choice.index}] function_call {call.name}".rstrip()
    return f"[{choice.index}] tool {call.n} {call.name}".rstrip()


def _kind(choice: _Choice, call: _Call) -> str:
    return chat.FUNCTION_CALL if call is choice.function_call else call.type


class _Choice:
    """One choice: its message's text fields, tool calls, finish reason and logprobs."""

    __slots__ = ("index", "role", "texts", "calls", "by_id", "by_index", "held",
                 "finish_reason", "logprobs", "extra", "extra_text", "extra_lists", "fields",
                 "function_call", "audio",
                 "structured", "parts")

    def __init__(self, index: int) -> None:
        self.index = index
        self.role: str | None = None
        self.texts: dict[str, Fragments] = {}   # present once a string (even "") arrived
        self.calls: list[_Call] = []
        self.by_id: dict[str, _Call] = {}
        self.by_index: dict[Any, _Call] = {}
        self.held: dict[int, list[str]] = {}   # fragments before their call's opening
        self.finish_reason: str | None = None
        self.logprobs: dict[str, Any] | None = None
        self.extra: dict[str, Any] = {}           # unknown message fields, last value
        self.extra_text: dict[str, Fragments] = {}  # unknown string fields, concatenated
        self.extra_lists: dict[str, IndexedEntries] = {}   # unknown indexed lists, merged
        self.fields: dict[str, Any] = {}            # unknown choice-level fields
        self.function_call: _Call | None = None     # the legacy single function call
        self.structured: ToolCall | None = None     # structured output: content as a call
        self.parts: ContentParts | None = None       # content as typed parts (Mistral)
        self.audio: _Audio | None = None              # spoken output

    def message(self, calls_as: Any) -> dict:
        msg: dict[str, Any] = {"role": self.role or "assistant", "content": None,
                               "refusal": None}
        for name, frags in self.texts.items():
            if name != "thinking":
                msg[name] = frags.text
        if self.parts is not None:
            msg["content"] = self.parts.build()
        msg.update(copy.deepcopy(self.extra))
        for name, frags in self.extra_text.items():
            msg[name] = frags.text
        for name, entries in self.extra_lists.items():
            msg[name] = entries.build()
        if self.calls:
            msg["tool_calls"] = [calls_as(c) for c in self.calls]
        if self.function_call is not None:
            msg[chat.FUNCTION_CALL] = calls_as(self.function_call)["function"]
        if self.audio is not None:
            msg["audio"] = self.audio.as_dict()
        return msg


class ChatAccumulator(Accumulator):
    """Builds an OpenAI ``chat.completion`` from ``chat.completion.chunk`` events."""

    wire = "openai-chat"

    def __init__(self, structured_output: str | None = None,
                 usage_requested: bool = False) -> None:
        super().__init__()
        self._structured = structured_output   # response_format json_schema: its name
        self.head: dict[str, Any] = {}      # id, created, model, ... from the chunks
        self.choices: dict[int, _Choice] = {}
        self.usage: dict | None = None
        self.done = False
        self.errored = False
        self._unknown_keys: set[str] = set()
        # Whether a usage chunk is owed: the request asked, or a chunk said "usage": null.
        self._usage_owed = usage_requested

    # -- feeding -------------------------------------------------------------

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

    def _error(self, payload: dict, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        error = payload.get("error")
        if isinstance(error, dict):
            kind = error.get("type") or error.get("code") or "error"
            text = error.get("message") or event.sse.data
        else:
            kind, text = "error", str(error)
        self.changes.append(InBandError(event.index, f"{kind}: {text}", copy.deepcopy(error),
                                        kind if isinstance(kind, str) else None))
        # An error inside a chunk (OpenRouter) may carry usage: kept. Its choices are not
        # applied (the error ends them); any text they carry stays in the diagnostic.
        choices = payload.get("choices")
        orphan = "".join(_delta_text(c.get("delta")) or "" for c in choices
                         if isinstance(c, dict)) if isinstance(choices, list) else ""
        self.note("in_band_error", f"{kind}: {text}", event=event, raw=event.sse.data,
                  error=copy.deepcopy(error), **({"orphan_text": orphan} if orphan else {}))
        if has_usage(payload):
            self.usage = copy.deepcopy(payload["usage"])
            self.changes.append(ResponseChanged(event.index, {"usage": copy.deepcopy(
                payload["usage"])}))

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

    def _moderation(self, moderation: Any, event: WireEvent) -> None:
        """The moderation chunk: kept (the latest wins, as in the SDK) and noted."""
        self.head["moderation"] = copy.deepcopy(moderation)
        said = []
        for side in ("input", "output"):
            result = moderation.get(side) if isinstance(moderation, dict) else None
            result = result if isinstance(result, dict) else {}
            if result.get("type") == "error":
                said.append(f"the {side} could not be judged ({result.get('code')})")
            elif any(isinstance(r, dict) and r.get("flagged")
                     for r in result.get("results") or []):
                said.append(f"the {side} is flagged")
        if said:
            self.note("moderation", "; ".join(said) + " by moderation, after the text "
                      "streamed", event=event, severity="warning", raw=event.sse.data)
        else:
            self.note("moderation", "moderation flagged nothing", event=event,
                      severity="info")

    def _choice(self, data: dict, event: WireEvent) -> None:
        index = data.get("index", 0)
        choice = self.choices.get(index)
        if choice is None:
            choice = self.choices[index] = _Choice(index)
        delta = data.get("delta")
        if choice.finish_reason is not None and data.get("finish_reason") is not None:
            # A choice stops once: a second finish_reason (the same or another) is a
            # repeated stop; the first is kept, the chunk's text stays in the diagnostic.
            self.note("duplicate_stop", f"choice {index} already finished "
                      f"({choice.finish_reason}); a second finish_reason "
                      f"({data['finish_reason']}) is not applied, the first is kept",
                      event=event, slot=index, raw=event.sse.data,
                      orphan_text=_delta_text(delta))
            return
        if choice.finish_reason is not None and delta:
            # The order is visible here (nothing follows a choice's finish_reason),
            # so it is an error; the text the delta carried stays in the diagnostic.
            self.note("delta_after_finish", f"choice {index} already finished "
                      f"({choice.finish_reason}); this delta is not applied, its text is "
                      "kept here", event=event, slot=index, raw=event.sse.data,
                      orphan_text=_delta_text(delta))
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

    def _close_texts(self, choice: _Choice, event: WireEvent | None, *, how: str,
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
                index, (choice.index, _SLOT_NAME[name]), how, synthesised=cut,  # type: ignore[arg-type]
                reason=reason, call_state=call.state if call is not None else None,
                input=call.input if call is not None else None))

    @staticmethod
    def _calls_of(choice: _Choice) -> list[_Call]:
        legacy = [choice.function_call] if choice.function_call is not None else []
        return choice.calls + legacy

    def _delta(self, choice: _Choice, delta: dict, event: WireEvent) -> None:
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
                    call = choice.function_call = _Call(0, None, None,
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

    def _text(self, choice: _Choice, key: str, value: str, event: WireEvent) -> None:
        """One text fragment of a text field (``content``, ``reasoning_content``, a
        thinking part's text...) to its slot."""
        frags = choice.texts.get(key)
        if frags is None:
            frags = choice.texts[key] = Fragments()
            self._open_text(choice, key, event, reserve=not value)
        elif not frags and value:
            self._open_text(choice, key, event, reserve=False)
        frags.append(value)
        self.changes.append(_new(TextAppended, (event.index, (choice.index, _SLOT_NAME[key]),
                                                _CHANNEL[key], value, key)))
        if key == "content" and self._structured is not None:
            self._feed_structured(choice, value, event)

    def _audio(self, choice: _Choice, delta: dict, event: WireEvent) -> None:
        """One ``delta.audio`` to the choice's audio slot (opened by the first): its
        transcript piece is the slot's text."""
        if choice.audio is None:
            choice.audio = _Audio()
            self.changes.append(SlotOpened(event.index, (choice.index, "audio"), "audio",
                                           f"[{choice.index}] audio", choice=choice.index))
        piece = choice.audio.add(delta)
        if piece:
            self.changes.append(_new(TextAppended, (event.index, (choice.index, "audio"),
                                                    "other", piece, "transcript")))

    def _content_parts(self, choice: _Choice, parts: list, event: WireEvent) -> None:
        """``content`` as an array of typed parts (Mistral): a ``text`` part's text goes
        to the content slot, a ``thinking`` part's text to the reasoning slot, in order;
        the message keeps the parts (`ContentParts`). A part of another type is kept
        on the message as it arrived, with one warning."""
        if choice.parts is None:
            choice.parts = ContentParts(choice.texts.get("content"))
        for part in parts:
            kind, text = content_part_text(part)
            choice.parts.add(kind, part, text)
            if kind == "text":
                self._text(choice, "content", text, event)
            elif kind == "thinking":
                self._text(choice, "thinking", text, event)
            else:
                self._unknown_key(f"content[].type={kind}", event)

    def _open_text(self, choice: _Choice, key: str, event: WireEvent, reserve: bool) -> None:
        """A text slot's start: opened with its first text (reserved on an empty one;
        structured output opens on its first string, as its call does)."""
        kind = _SLOT_NAME[key]
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

    def _extend_function(self, choice: _Choice, call: _Call, function: dict,
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
            self.changes.append(SlotRenamed(event.index, _address(choice, call),
                                            _label(choice, call), name=call.name))
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            self._add_arguments(choice, call, arguments, event)

    def _add_arguments(self, choice: _Choice, call: _Call, text: str,
                       event: WireEvent) -> None:
        """One argument fragment to a call: its text, its `ToolCall`, a `ToolInputGrew`."""
        call.arguments.append(text)
        grew = call.call.feed(text, t=event.t, event=event.index)
        self.changes.append(_new(ToolInputGrew, (event.index, _address(choice, call), text,
                                                 tuple(grew))))

    def _open_call(self, choice: _Choice, call: _Call, event: WireEvent) -> None:
        self.changes.append(SlotOpened(
            event.index, _address(choice, call), _kind(choice, call), _label(choice, call),
            name=call.name, call_id=call.id, choice=choice.index, takes_input=True,
            ended_by=chat.CALL_ENDED_BY))

    def _feed_structured(self, choice: _Choice, fragment: str, event: WireEvent) -> None:
        """Structured output: the choice's content (from its first string, even "")
        feeds a pseudo tool call named after the schema."""
        call = choice.structured
        if call is None:
            call = choice.structured = ToolCall(self._structured, self.head.get("id"),
                                                kind="structured output",
                                                address=(choice.index, "content"),
                                                structured=True, t=event.t, event=event.index,
                                                ended_by=chat.CALL_ENDED_BY)
        if fragment:
            call.feed(fragment, t=event.t, event=event.index)

    @staticmethod
    def _end_structured(choice: _Choice, event: WireEvent) -> None:
        """The choice's finish_reason (or [DONE]) ends its structured-output call."""
        if choice.structured is not None:
            frags = choice.texts.get("content")
            choice.structured.end(frags.text if frags is not None else None, t=event.t,
                                  event=event.index)

    def _unknown_key(self, key: str, event: WireEvent) -> None:
        if key not in self._unknown_keys:
            self._unknown_keys.add(key)
            self.note("unknown_delta", f"delta field {key!r} is not part of Chat "
                      "Completions; kept on the message as it arrived", event=event,
                      severity="warning", raw=event.sse.data)

    def _tool_fragment(self, choice: _Choice, fragment: Any, event: WireEvent) -> None:
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
            call = _Call(n, index, call_id, (choice.index, ("tool", n)), event)
            choice.calls.append(call)
            if call.id:
                choice.by_id[call.id] = call
            if call.id is None:
                self.note("tool_call_without_id", f"a tool call fragment at index {index!r} "
                          "with no id and no earlier call there; a call without id is opened",
                          event=event, severity="warning", slot=_address(choice, call),
                          raw=event.sse.data)
        if index is not None:
            choice.by_index[index] = call
        if isinstance(fragment.get("type"), str) and fragment["type"] != call.type:
            call.type = call.call.kind = fragment["type"]
            if not opening:
                self.changes.append(SlotRenamed(event.index, _address(choice, call),
                                                _label(choice, call), slot_kind=call.type))
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

    def _announced_again(self, choice: _Choice, call: _Call, fragment: dict,
                         event: WireEvent) -> None:
        """A fragment with the id of a call this choice already opened: only a call's
        opening carries its id, so this is a second opening (the first is kept)."""
        self.note("duplicate_start", f"tool call {call.id} ({_label(choice, call)}) was "
                  "already opened; this fragment with its id is not applied, the first "
                  "opening is kept (its text is kept here)", event=event,
                  slot=_address(choice, call), raw=event.sse.data,
                  orphan_text=fragment_arguments(fragment))

    def _held(self, choice: _Choice, call: _Call, index: int, fragment: dict,
              event: WireEvent) -> bool:
        """Whether an id-less argument fragment at `index` belongs to a call not opened
        yet: the call there already has a whole JSON value (nothing can follow it), or
        fragments are already held for that index. Held text goes to the next call
        opened at `index`, and stays in the diagnostic."""
        text = fragment_arguments(fragment)
        held = choice.held.get(index)
        if held is None:
            ready = call.call.state == "forming" and () in call.call.settled
            if not (text and not text.isspace() and ready):
                return False
            held = choice.held[index] = []
        held.append(text or "")
        self.note("event_before_start", f"an argument fragment at tool_calls index {index} "
                  f"after the arguments of {_label(choice, call)} were already whole: it "
                  "belongs to a call not opened yet, so it is held for the next call opened "
                  "at that index (its text is kept here)", event=event, slot=choice.index,
                  raw=event.sse.data, orphan_text=text)
        return True

    def _end_call(self, choice: _Choice, call: _Call, *, cut: bool,
                  event: WireEvent | None, how: str, reason: str | None = None) -> None:
        if call.ended:
            if how == "end_of_stream":      # ended by [DONE]: its slot closes now
                self.changes.append(SlotClosed(None, _address(choice, call), how,  # type: ignore[arg-type]
                                               synthesised=True, call_state=call.call.state,
                                               input=call.input))
            return
        call.ended = True
        if call is choice.function_call:
            what = f"function call {call.name or '?'} (choice {choice.index})"
        else:
            what = f"tool call {call.name or '?'} (choice {choice.index}, call {call.n})"
        call.input = self.close_call_slot(call.call, _address(choice, call), cut=cut,
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

    def _logprobs(self, choice: _Choice, logprobs: dict) -> None:
        if choice.logprobs is None:
            choice.logprobs = {"content": None, "refusal": None}
        for key, value in logprobs.items():
            if isinstance(value, list):
                have = choice.logprobs.get(key)
                if not isinstance(have, list):
                    have = choice.logprobs[key] = []
                have.extend(copy.deepcopy(value))
            elif value is not None:
                choice.logprobs[key] = copy.deepcopy(value)

    # -- ending --------------------------------------------------------------

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

    def _without_done(self) -> None:
        """The body ended without ``data: [DONE]``: ended properly, with a warning, when
        `wires.chat.ended_without_done` says so (every choice finished, the usage came if
        owed, the body whole); else cut."""
        finished = bool(self.choices) and all(c.finish_reason is not None
                                              for c in self.choices.values())
        whole = not any(d.code in ("undispatched_bytes", "unparseable_json")
                        for d in self.diagnostics)
        if ended_without_done(every_choice_finished=finished,
                              usage_owed=self._usage_owed,
                              usage_came=self.usage is not None, whole=whole):
            self.note("no_done_marker", "the body ended without data: [DONE], after every "
                      "choice's finish_reason and at an event boundary: taken as the end "
                      "(the official SDK does the same)", severity="warning")
            self.complete = True
            return
        why = ("a choice never got its finish_reason" if not finished else
               "the usage chunk the request asked for never came" if whole else
               "the body does not end at an event boundary")
        self.note("no_terminal", f"the stream ended before data: [DONE] ({why}); what "
                  "arrived is kept, but the completion is incomplete")
        self.complete = False

    def _update_complete(self) -> None:
        self.complete = (self.done and not self.errored and
                         all(c.finish_reason is not None for c in self.choices.values()))

    # -- reading -------------------------------------------------------------

    def final(self) -> dict:
        """The ``chat.completion`` so far (choices in index order, ``message`` each)."""
        out: dict[str, Any] = {"id": self.head.get("id"), "object": "chat.completion",
                               "created": self.head.get("created"),
                               "model": self.head.get("model")}
        for key, value in self.head.items():
            if key not in out:
                out[key] = copy.deepcopy(value)
        out["choices"] = [
            {**copy.deepcopy(c.fields), "index": i, "message": c.message(_Call.as_dict),
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
                kind = _SLOT_NAME[name]
                out.append(Slot((i, kind), kind, f"[{i}] {kind}", frags.text, state))
            if choice.audio is not None:
                spoken = choice.audio.texts.get("transcript")
                out.append(Slot((i, "audio"), "audio", f"[{i}] audio",
                                spoken.text if spoken is not None else "", state))
            for call in self._calls_of(choice):
                raw = call.arguments.text
                value = call.input if call.ended else call.call.view().value
                value = {} if value is NOTHING else value
                address = _address(choice, call)
                if call is choice.function_call:
                    kind, label = chat.FUNCTION_CALL, f"[{i}] function_call"
                else:
                    kind, label = call.type, f"[{i}] tool {call.n}"
                out.append(Slot(address, kind, f"{label} {call.name}".rstrip(), raw, state,
                                name=call.name, call_id=call.id, raw_input=raw, input=value))
        return out


def _delta_text(delta: Any) -> str | None:
    """The text a delta carries: its text fields, then its argument fragments, joined."""
    if not isinstance(delta, dict):
        return None
    parts = [delta[key] for key in TEXT_FIELDS if isinstance(delta.get(key), str)]
    if isinstance(delta.get("content"), list):
        parts += [content_part_text(part)[1] for part in delta["content"]]
    calls = delta.get("tool_calls")
    for fragment in calls if isinstance(calls, list) else ():
        text = fragment_arguments(fragment)
        if text is not None:
            parts.append(text)
    return "".join(parts) if parts else None
