"""What one wire event changed: the typed changes every accumulator's `feed` returns.

An accumulator keeps the provider's object as it forms. The next station (the
slot view, lesson 4's turn adapters) does not want the object again after
every event, nor to parse the payload a second time: it wants *what changed*.
So `feed(event)` and `finish()` return a list of changes, the way
`PartialJSON.feed` returns its own `Change`s one level down::

    acc = accumulator_for("anthropic-messages")
    acc.feed(block_start)   # [SlotOpened(address=0, slot_kind='text', ...)]
    acc.feed(text_delta)    # [TextAppended(address=0, channel='text', fragment='Hel')]
    acc.feed(block_stop)    # [SlotClosed(address=0, how='stop', ...)]
    acc.finish()            # [StreamEnded(properly=True, ...)]

Every change names the wire `event` index that caused it (``None`` for what
`finish()` synthesises) and the slot `address` in the wire's own terms (the
same address `Accumulator.slots()` uses). Folding the changes from the start
gives back `slots()` and `tool_calls()` at every event index
(`lesson_lib.accumulate.fold`): that is the contract, tested on every capture.

Changes are small, immutable records. Text is never repeated: a
`TextAppended` carries the fragment only, never the text so far, so the
changes of a stream are linear in its size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

from ..diagnostics import Diagnostic

# What kind of text a fragment is: the turn's vocabulary, whatever the wire calls it.
Channel = Literal["text", "reasoning", "refusal", "other"]

# How a slot was closed: by its own stop or done event, by its choice's finish
# reason (Chat has no per-block stop), or by `finish()` at the end of a stream
# that never closed it (cut, failed or cancelled): then `synthesised` is true.
# ``terminal``: the stream's own end closed a call whose slot stays open (Chat's
# ``[DONE]`` ends the calls of a choice that never got a finish reason).
# ``arguments_done``: a Responses call's ``*_arguments.done`` ended the call; its
# item (the slot) stays open until ``output_item.done``.
CloseHow = Literal["stop", "done", "finish_reason", "terminal", "arguments_done",
                   "end_of_stream"]
# The closes that end a slot's call but not the slot.
CALL_ENDS = frozenset({"terminal", "arguments_done"})


@dataclass(frozen=True, slots=True)
class SlotOpened:
    """A slot began: its address, its kind, and its identity where the wire announces it.

    `slot_kind` is the block or item type as the wire spells it (``text``,
    ``tool_use``, ``function_call``, ``content``...); `label` the slot view's
    label; `name` and `call_id` a tool call's identity; `item_id` the wire's
    own id of the item (Responses item ids, Anthropic server tool ids), when
    it has one; `choice` the Chat choice (0 on the other wires); `content`
    the text the start already carries. `whole` is true for a block that
    arrives complete in its start event (server tool results,
    ``redacted_thinking``, a Chat refusal in one chunk): nothing will be
    appended to it. `data` is the start's own object (the block or item),
    shared: read, don't modify. `input` is the tool input the start already
    carries (Anthropic's ``input``), used while no argument text has arrived;
    `json_arguments` is false for a call whose input is free text (a Responses
    ``custom_tool_call``); `structured` marks a Chat choice's content read as structured output (a
    call in `tool_calls()`, a text slot in `slots()`). `shown` is the slot
    view's text of the slot at its start, where it is not `content` (a block
    that arrives whole shows its data: ``redacted_thinking``, a result). `ended_by`,
    on a call, names in the wire's words what will make it final (``content_block_stop``,
    ``function_call_arguments.done``, ``finish_reason``), read from the wire's module.
    """

    kind: ClassVar[str] = "slot_opened"
    event: int | None
    address: Any
    slot_kind: str
    label: str
    name: str | None = None
    call_id: str | None = None
    item_id: str | None = None
    choice: int = 0
    content: str = ""
    whole: bool = False
    takes_input: bool = False
    data: Any = None
    input: Any = None
    structured: bool = False
    shown: str | None = None
    json_arguments: bool = True
    ended_by: str | None = None


@dataclass(frozen=True, slots=True)
class SlotReserved:
    """A wire named a text field before any text of it (Chat's ``"content": ""``): the
    slot view lists the slot, empty, from here on; nothing is in it yet, so a
    turn sees no block until its `SlotOpened` (with the first text) follows."""

    kind: ClassVar[str] = "slot_reserved"
    event: int | None
    address: Any
    slot_kind: str
    label: str
    choice: int = 0


@dataclass(frozen=True, slots=True)
class SlotRenamed:
    """A slot's identity grew after its start: Chat sends a call's name (and its
    type) in pieces, a Responses item first met through its deltas is announced
    later, so the label, `name`, `slot_kind` and `call_id` change (None: unchanged)."""

    kind: ClassVar[str] = "slot_renamed"
    event: int | None
    address: Any
    label: str
    name: str | None = None
    slot_kind: str | None = None
    call_id: str | None = None


class TextAppended(NamedTuple):
    """Text arrived for a slot: the fragment only. `channel` says what kind of text
    (`text`, `reasoning`, `refusal`, `other`); `field` is the wire's own name for it
    (``text``, ``thinking``, ``summary_text``, ``reasoning_content``...).

    An immutable tuple with named fields rather than a dataclass: one is made
    for nearly every event, and a tuple is the cheapest record to make."""

    event: int | None
    address: Any
    channel: Channel
    fragment: str
    field: str = "text"
    kind = "text_appended"


class ToolInputGrew(NamedTuple):
    """A tool call's arguments grew by `fragment`; `json_changes` are the
    `lesson_lib.partial_json.Change`s it caused (set, append, settle).
    (A named tuple, like `TextAppended`: one is made per argument fragment.)"""

    event: int | None
    address: Any
    fragment: str
    json_changes: tuple = ()
    kind = "tool_input_grew"


@dataclass(frozen=True, slots=True)
class SlotSigned:
    """A reasoning block's signature arrived (Anthropic ``signature_delta``)."""

    kind: ClassVar[str] = "slot_signed"
    event: int | None
    address: Any
    signature: str


@dataclass(frozen=True, slots=True)
class CitationAdded:
    """One citation was appended to a text slot (Anthropic ``citations_delta``,
    Responses ``output_text.annotation.added``)."""

    kind: ClassVar[str] = "citation_added"
    event: int | None
    address: Any
    citation: Any


@dataclass(frozen=True, slots=True)
class SlotClosed:
    """A slot ended, and how (`how`; `synthesised` when no event of the wire closed it).

    `reason` is the finish reason that closed it, where one did (Chat). For a
    slot that takes tool input, `call_state` is the call's state after the end
    (``complete``, ``invalid``, ``cut``) and `input` its value: parsed, or the
    partial value that arrived. `data` is the wire's own finished object for the
    slot, where the end carries one (the Responses item at ``output_item.done``,
    with its ``encrypted_content``): shared, read only. `final_text` is the call's
    whole text as the wire stated it at the end, where that differs from its
    fragments (Responses ``*_arguments.done``: the statement wins). A
    `call_state` of ``forming`` says the slot closed but its call did not end.
    """

    kind: ClassVar[str] = "slot_closed"
    event: int | None
    address: Any
    how: CloseHow
    synthesised: bool = False
    reason: str | None = None
    call_state: str | None = None
    input: Any = None
    data: Any = None
    final_text: str | None = None


@dataclass(frozen=True, slots=True)
class SlotRestated:
    """The server stated a slot's content whole, and it replaces what the deltas built.

    Responses' ``*.done`` events, ``output_item.done`` and the terminal
    `Response` restate text; where it differs from the deltas a
    ``server_object_differs`` diagnostic says so, and the server's text wins.
    `content` is the slot's whole text from here on (None: unchanged); `label`
    and `slot_kind` likewise. Rare (one per done statement), so it may carry
    the whole text without making the changes quadratic.
    """

    kind: ClassVar[str] = "slot_restated"
    event: int | None
    address: Any
    content: str | None = None
    label: str | None = None
    slot_kind: str | None = None


@dataclass(frozen=True, slots=True)
class SlotRemoved:
    """A slot left `slots()`: a Responses item's own slot gives way to its parts' slots
    when the first part arrives. `replaced_by` names the addresses that take its place."""

    kind: ClassVar[str] = "slot_removed"
    event: int | None
    address: Any
    replaced_by: tuple = ()


@dataclass(frozen=True, slots=True)
class ResponseChanged:
    """Fields of the response itself changed: `fields` maps the wire's own field
    names to their new values (``id``, ``model``, ``stop_reason``, ``usage``,
    ``status``, ``sequence_number``, ``finish_reason``...). Usage is the new
    cumulative value, not an increment. `choice` is set for a Chat choice's own
    field (its ``finish_reason``)."""

    kind: ClassVar[str] = "response_changed"
    event: int | None
    fields: dict = field(default_factory=dict)
    choice: int | None = None


@dataclass(frozen=True, slots=True)
class TerminalReached:
    """The wire's own terminal event arrived (Anthropic ``message_stop``, Responses
    ``response.completed`` / ``response.incomplete`` / ``response.failed``, Chat
    ``[DONE]``): `terminal` is its type."""

    kind: ClassVar[str] = "terminal_reached"
    event: int | None
    terminal: str


@dataclass(frozen=True, slots=True)
class InBandError:
    """An error arrived inside the stream, after the HTTP 200. `error` is the
    wire's error object (type or code, message), `message` says it in one line."""

    kind: ClassVar[str] = "in_band_error"
    event: int | None
    message: str
    error: Any = None
    error_type: str | None = None


@dataclass(frozen=True, slots=True)
class UnknownEvent:
    """An event the wire's vocabulary does not know, passed through as data."""

    kind: ClassVar[str] = "unknown_event"
    event: int | None
    event_type: str | None
    payload: Any = None


@dataclass(frozen=True, slots=True)
class DiagnosticNoted:
    """The accumulator recorded a diagnostic (the same object as in `diagnostics`)."""

    kind: ClassVar[str] = "diagnostic_noted"
    event: int | None
    diagnostic: Diagnostic


@dataclass(frozen=True, slots=True)
class StreamEnded:
    """`finish()` ran: `properly` is true when the wire's own terminal arrived and no
    error came in-band (`Accumulator.complete`); `cause` says otherwise why not
    (``cut``, ``in_band_error``, ``undispatched_bytes``; on the SDK route also
    ``sdk_refused``, and ``tail_cut``: the terminal came, then bytes that make no
    whole event)."""

    kind: ClassVar[str] = "stream_ended"
    event: int | None
    properly: bool
    cause: str | None = None


AccumulatorChange = (SlotOpened | SlotReserved | SlotRenamed | TextAppended | ToolInputGrew | SlotSigned
                     | CitationAdded | SlotClosed | SlotRestated | SlotRemoved | ResponseChanged | TerminalReached
                     | InBandError | UnknownEvent | DiagnosticNoted | StreamEnded)
