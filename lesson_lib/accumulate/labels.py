"""What each event of a stream addressed, in words: the slot view's and the graders' labels.

``block [1] tool_use · input_json_delta`` (Anthropic), ``item [1] function_call ·
function_call_arguments.delta`` (Responses), ``choice 0 · tool_calls[1] · arguments``
(Chat). A label is read from the changes the event caused (the slot it
addressed, that slot's kind, a call's name, a finish or stop reason), kept by
the `History`, and from the event's own name (its type, an Anthropic delta's
type). An event that changed no slot (a done statement that agreed with the
deltas) is placed by its payload's own indexes, as the wire wrote them.

The labels are a fact of the stream, not of a view: the slot view's counter,
the tool-call card's counter and lesson 2's graders all read them from here,
and `address_text` is how any of them writes a slot's address.

Each wire's reader is its registry entry's `labels` part (`wires.entry`): the
readers of the course's wires are below, and a wire whose entry names none is
labelled by its events' types.
"""

from __future__ import annotations

from typing import Any

from .. import wires
from ..capture.captures import Capture
from ..wires import anthropic, chat
from ..wires import gemini_interactions as gi
from ..wires.wire_events import DONE, WireEvent, parse_all
from .changes import InBandError, ResponseChanged, SlotOpened, TextAppended, ToolInputGrew
from .history import History
from .responses.vocabulary import AUDIO, AUDIO_EVENTS

# The wires whose entry names a reader of labels (read when asked: a wire registered later
# is in it).
WIRES = wires.PerWire(lambda entry: entry.part("labels"),
                      keep=lambda entry: entry.labels is not None)


def address_text(address: Any) -> str:
    """A slot's address in the wire's own terms.

    Anthropic ``1`` -> ``[1]``; Responses ``(0,)`` -> ``item [0]``,
    ``(0, 1)`` -> ``item [0] · part [1]``, ``(0, "summary", 1)`` ->
    ``item [0] · summary [1]``, ``("audio",)`` (spoken output) -> ``audio``; Chat ``(0, "content")`` -> ``choice 0 ·
    content``, ``(0, ("tool", 1))`` -> ``choice 0 · tool_calls[1]``.
    """
    if isinstance(address, int):
        return f"[{address}]"
    if address == AUDIO:                   # Responses' spoken output: no item of its own
        return "audio"
    if isinstance(address, tuple) and address and isinstance(address[0], int):
        head, rest = address[0], address[1:]
        if not rest:
            return f"item [{head}]"
        if len(rest) == 1 and isinstance(rest[0], int):
            return f"item [{head}] · part [{rest[0]}]"
        if len(rest) == 2 and rest[0] == "summary":
            return f"item [{head}] · summary [{rest[1]}]"
        if len(rest) == 1 and isinstance(rest[0], str):
            return f"choice {head} · {rest[0]}"
        if len(rest) == 1 and isinstance(rest[0], tuple) and rest[0][:1] == ("tool",):
            return f"choice {head} · tool_calls[{rest[0][1]}]"
    return f"[{address}]"



def labels_for(capture: Capture) -> list[str]:
    """What each event of `capture` addresses (its own `History` is built to read the
    changes; a view that has one calls `event_labels`)."""
    if capture.wire not in WIRES:
        return [_plain(ev) for ev in parse_all(capture.events)]
    return event_labels(History(capture))


def event_labels(history: History) -> list[str]:
    """What each event of the history's stream addresses, from the changes it caused."""
    labels = EventLabels(history)
    return [labels[i] for i in range(len(labels))]


class EventLabels:
    """The labels of one history's events, read as far as asked: ``labels[i]`` reads the
    changes of events up to `i` only, so a player asking for the label of the event it
    shows never feeds the history past that event."""

    def __init__(self, history: History) -> None:
        self.history = history
        self._done: list[str] = []
        self._kinds: dict[Any, str] = {}    # Anthropic: slot address -> its block type
        entry = wires.ENTRIES.get(history.capture.wire or "")
        self._reader = entry.part("labels") if entry is not None and history.events else None

    def __len__(self) -> int:
        return len(self.history.events)

    def __getitem__(self, i: int) -> str:
        if not 0 <= i < len(self):
            raise IndexError(i)
        events = self.history.events
        while len(self._done) <= i:
            k = len(self._done)
            if self._reader is None:
                self._done.append(_plain(events[k]))
            else:
                self._done.append(self._reader(events[k], self.history.changes_of(k),
                                               self._kinds))
        return self._done[i]


def _plain(ev: WireEvent) -> str:
    if ev.parse_error is not None:
        return f"{ev.type or '(no type)'} (not JSON)"
    return ev.type or "(no type)"


def anthropic_label(ev: WireEvent, caused: list, kinds: dict[Any, str]) -> str:
    """``block [1] tool_use · input_json_delta``: the block the event's changes addressed,
    its type (from the block's `SlotOpened`) and the delta's type; a stop reason; an
    error's type."""
    p = ev.payload
    if not isinstance(p, dict):
        return _plain(ev)
    if ev.type in AUDIO_EVENTS:            # spoken output addresses no item
        return f"audio · {ev.type.removeprefix('response.')}"
    addressed = None
    for change in caused:
        if type(change) is SlotOpened:
            kinds[change.address] = change.slot_kind
        if addressed is None and getattr(change, "address", None) is not None:
            addressed = change.address
    kind = ev.type
    if kind in anthropic.BLOCK_EVENTS:
        what = kind
        if kind == anthropic.CONTENT_BLOCK_DELTA:
            delta = p.get("delta") if isinstance(p.get("delta"), dict) else {}
            what = str(delta.get("type", "?"))
        # An event the accumulator could not place still names an index: show it.
        where = addressed if addressed is not None else p.get("index")
        return f"block [{where}] {kinds.get(where, '?')} · {what}"
    if kind == anthropic.MESSAGE_DELTA:
        reason = next((c.fields["stop_reason"] for c in caused if type(c) is ResponseChanged
                       and c.fields.get("stop_reason")), None)
        return f"message_delta · stop_reason {reason}" if reason else anthropic.MESSAGE_DELTA
    if kind in anthropic.FAILURES:
        error = next((c for c in caused if type(c) is InBandError), None)
        return f"error · {(error.error_type if error else None) or '?'}"
    return _plain(ev)


def responses_label(ev: WireEvent, caused: list, kinds: dict[Any, str]) -> str:
    """``item [1] function_call · function_call_arguments.delta``: the slot the event's
    changes addressed, its item's type (from the item's `SlotOpened`)."""
    p = ev.payload
    if not isinstance(p, dict):
        return _plain(ev)
    if ev.type in AUDIO_EVENTS:            # spoken output addresses no item
        return f"audio · {ev.type.removeprefix('response.')}"
    addressed = None
    for change in caused:
        if type(change) is SlotOpened and len(change.address) == 1:
            kinds[change.address[0]] = change.slot_kind
        address = getattr(change, "address", None)
        # The most precise place: a part rather than the item that holds it.
        if isinstance(address, tuple) and (addressed is None or len(address) > len(addressed)):
            addressed = address
    if addressed is None:                  # nothing changed: where the payload says
        oi = p.get("output_index")
        if oi is None:
            return _plain(ev)
        addressed = (oi,)
        if p.get("content_index") is not None:
            addressed += (p["content_index"],)
        elif p.get("summary_index") is not None:
            addressed += ("summary", p["summary_index"])
    head = addressed[0]
    where = f"item [{head}] {kinds.get(head, '?')}"
    if len(addressed) == 2:
        where += f" · part [{addressed[1]}]"
    elif len(addressed) == 3:
        where += f" · summary [{addressed[2]}]"
    return f"{where} · {(ev.type or '(no type)').removeprefix('response.')}"


def chat_label(ev: WireEvent, caused: list, _kinds: dict) -> str:
    """``choice 0 · tool_calls[1] · arguments``: per choice of the chunk, what its changes
    started or grew, and its finish reason; ``usage`` for a usage-only chunk."""
    p = ev.payload
    if ev.type == DONE:
        return DONE
    if not isinstance(p, dict):
        return _plain(ev)
    if any(type(c) is InBandError for c in caused):
        return "error"
    parts = [_chat_choice_label(choice, caused) for choice in p.get("choices") or []
             if isinstance(choice, dict)]
    if p.get("usage") and not p.get("choices"):
        parts.append("usage")
    return "; ".join(parts) if parts else "(empty chunk)"


def _chat_choice_label(choice: dict, caused: list) -> str:
    """One choice of a chunk: the calls it started or grew, the text fields it filled,
    its finish reason (the role where nothing else came)."""
    index = choice.get("index", 0)
    calls: dict[Any, str] = {}
    texts, empty = set(), set()
    reason = None
    for change in caused:
        kind = type(change)
        if kind is ResponseChanged:
            if change.choice == index and "finish_reason" in change.fields:
                reason = change.fields["finish_reason"]
            continue
        address = getattr(change, "address", None)
        if not (isinstance(address, tuple) and address[0] == index):
            continue
        if isinstance(address[1], tuple):              # (choice, ("tool", n)): a call
            where = f"tool_calls[{address[1][1]}]"
            if kind is SlotOpened:
                calls[address] = f"{where} · " + f"start {change.name or ''}".rstrip()
            elif kind is ToolInputGrew:
                calls.setdefault(address, f"{where} · arguments")
        elif kind is TextAppended:
            (texts if change.fragment else empty).add(change.field)
    fields = list(calls.values()) + [name for name in chat.TEXT_FIELDS if name in texts]
    delta = choice.get("delta") if isinstance(choice.get("delta"), dict) else {}
    if not fields and delta.get("role"):
        fields.append("role")
    if not fields:
        fields += [name for name in chat.TEXT_FIELDS if name in empty]  # still a fragment
    if reason is not None:
        fields.append(f"finish_reason {reason}")
    return f"choice {index} · " + (" · ".join(fields) if fields else "(empty)")


def gemini_label(ev: WireEvent, caused: list, kinds: dict[Any, str]) -> str:
    """``candidate 0 · part [1] functionCall read_screen · arguments · finishReason STOP``:
    the parts a record opened or grew (its minted slots), and a finish reason."""
    if any(type(c) is InBandError for c in caused):
        error = next(c for c in caused if type(c) is InBandError)
        return f"error · {error.error_type or '?'}"
    if not isinstance(ev.payload, dict):
        return _plain(ev)
    said: dict[Any, str] = {}
    reasons: dict[int, str] = {}
    for change in caused:
        kind = type(change)
        if kind is ResponseChanged:
            if change.choice is not None and "finishReason" in change.fields:
                reasons[change.choice] = change.fields["finishReason"]
            continue
        address = getattr(change, "address", None)
        if not (isinstance(address, tuple) and len(address) == 2):
            continue
        if kind is SlotOpened:
            kinds[address] = f"{change.slot_kind} {change.name or ''}".rstrip()
            said[address] = f"part [{address[1]}] {kinds[address]} · start"
        elif kind in (TextAppended, ToolInputGrew):
            what = "arguments" if kind is ToolInputGrew else "text"
            said.setdefault(address, f"part [{address[1]}] {kinds.get(address, '?')} · {what}")
    by_candidate: dict[int, list[str]] = {}
    for address, text in said.items():
        by_candidate.setdefault(address[0], []).append(text)
    for index, reason in reasons.items():
        by_candidate.setdefault(index, []).append(f"finishReason {reason}")
    if not by_candidate:
        return "(no new part)" if ev.payload.get("candidates") else "usage"
    return "; ".join(f"candidate {i} · " + " · ".join(texts)
                     for i, texts in sorted(by_candidate.items()))


def interactions_label(ev: WireEvent, caused: list, kinds: dict[Any, str]) -> str:
    """``step [1] function_call getWeather · arguments_delta``: the step an event addressed
    (by its index), its kind and name, and the delta's type; the interaction's status at
    its lifecycle events; an error's name."""
    p = ev.payload
    if not isinstance(p, dict):
        return _plain(ev)
    if any(type(c) is InBandError for c in caused):
        error = next(c for c in caused if type(c) is InBandError)
        return f"error · {error.error_type or '?'}"
    for change in caused:
        if type(change) is SlotOpened:
            kinds[change.address] = f"{change.slot_kind} {change.name or ''}".rstrip()
    kind = p.get(gi.EVENT_TYPE_FIELD, ev.type)
    if kind in gi.STEP_EVENTS:
        index = p.get("index")
        what = {gi.STEP_START: "start", gi.STEP_STOP: "stop"}.get(kind)
        if what is None:
            delta = p.get("delta") if isinstance(p.get("delta"), dict) else {}
            what = str(delta.get("type", "?"))
        return f"step [{index}] {kinds.get(index, '?')} · {what}"
    interaction = p.get("interaction") if isinstance(p.get("interaction"), dict) else p
    status = interaction.get("status")
    return f"{kind} · {status}" if isinstance(status, str) else str(kind or _plain(ev))

