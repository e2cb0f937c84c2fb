"""What a Chat stream builds, per choice: its message's text fields, its tool calls, its
finish reason, and where each lives as a slot.

A `Choice` holds one choice's message as it forms; a `Call` one tool call of it
(identity from its first fragment, then argument text, and the `ToolCall` that
parses it). What the features beside the rule add to a choice (`audio`, `parts`) is
held here and built there: this module imports none of them. `address_of`, `label_of` and `kind_of` say where a call sits for the
slot view: ``(choice, ("tool", n))``, or ``(choice, "function_call")`` for the
legacy single function call.
"""

from __future__ import annotations

import copy
from typing import Any

from ...tool_calls import ToolCall
from ...wires import chat
from ...wires.chat import content_part_text, fragment_arguments
from ...wires.wire_events import WireEvent
from ..base import Fragments

# Text fields of a message delta, accumulated by concatenation.
TEXT_FIELDS = ("content", "refusal", "reasoning_content", "reasoning")
# ``thinking``: the text of ``content``'s thinking parts (Mistral), never a delta field.
SLOT_NAME = {"content": "content", "refusal": "refusal", "reasoning_content": "reasoning",
             "reasoning": "reasoning", "thinking": "reasoning"}
CHANNEL = {"content": "text", "refusal": "refusal", "reasoning_content": "reasoning",
           "reasoning": "reasoning", "thinking": "reasoning"}


class Call:
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


def address_of(choice: Choice, call: Call) -> tuple:
    """A call's slot address: ``(choice, ("tool", n))``, or ``(choice, "function_call")``."""
    if call is choice.function_call:
        return (choice.index, chat.FUNCTION_CALL)
    return (choice.index, ("tool", call.n))


def label_of(choice: Choice, call: Call) -> str:
    """A call's slot label: ``[choice] tool n name`` (or ``function_call name``)."""
    if call is choice.function_call:
        return f"[{choice.index}] function_call {call.name}".rstrip()
    return f"[{choice.index}] tool {call.n} {call.name}".rstrip()


def kind_of(choice: Choice, call: Call) -> str:
    """A call's slot kind: its ``type`` (``function``), or ``function_call`` (legacy)."""
    return chat.FUNCTION_CALL if call is choice.function_call else call.type


class Choice:
    """One choice: its message's text fields, tool calls, finish reason and logprobs."""

    __slots__ = ("index", "role", "texts", "calls", "by_id", "by_index", "held",
                 "finish_reason", "logprobs", "extra", "extra_text", "extra_lists", "fields",
                 "function_call", "audio",
                 "structured", "parts")

    def __init__(self, index: int) -> None:
        self.index = index
        self.role: str | None = None
        self.texts: dict[str, Fragments] = {}   # present once a string (even "") arrived
        self.calls: list[Call] = []
        self.by_id: dict[str, Call] = {}
        self.by_index: dict[Any, Call] = {}
        self.held: dict[int, list[str]] = {}   # fragments before their call's opening
        self.finish_reason: str | None = None
        self.logprobs: dict[str, Any] | None = None
        self.extra: dict[str, Any] = {}           # unknown message fields, last value
        self.extra_text: dict[str, Fragments] = {}  # unknown string fields, concatenated
        self.extra_lists: dict[str, Any] = {}   # unknown indexed lists (`parts.IndexedEntries`)
        self.fields: dict[str, Any] = {}            # unknown choice-level fields
        self.function_call: Call | None = None     # the legacy single function call
        self.structured: ToolCall | None = None     # structured output: content as a call
        self.parts: Any = None           # content as typed parts (`parts.ContentParts`, Mistral)
        self.audio: Any = None           # spoken output (`audio.Audio`)

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


def delta_text(delta: Any) -> str | None:
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
