"""Whether the wire can show a duplicated or swapped event at all.

`faults.duplicate` and `faults.swap` break the order of a stream without
losing a byte. Whether a reader can notice depends on what the wire
carries: Responses numbers every event (``sequence_number``), so any
repeat or swap is visible; Anthropic frames each block with a start and a
stop, so only what crosses a frame is visible; Chat numbers nothing, so
only its few markers (``finish_reason``, a tool call's opening fragment,
``[DONE]``) can show it. The table of what stays invisible is in the
`lesson_lib.breaks.faults` docstring.

`visibility(capture, kind, at)` returns the reason a fault is visible (a
short category, the same for every instance of one kind of breakage), or
``None`` when the wire leaves no trace of it. Where a wire frames or numbers
its events, it reads only the events, never the accumulators, so a test can
hold the accumulators to it: each such wire says it through its registry
entry's `shows_duplicate` and `shows_swap` (`wires.entry`); the readers of
Anthropic Messages, OpenAI Responses and OpenAI Chat are below. A wire whose
entry names no `shows_duplicate` shows a duplicate only where its accumulator
says so: an event that names itself by
an id (the session streams, lesson 7) is dropped when it comes again, noted
``duplicate_event`` (`noted_again`); any other repeat leaves no trace. A wire
whose entry names no `shows_swap` shows no swap.
"""

from __future__ import annotations

from typing import Any

from ..accumulate import accumulator_for
from ..capture.captures import Capture
from ..wires import ENTRIES, WIRES, anthropic, responses
from ..wires.chat import opening_id
from ..wires.wire_events import DONE, WireEvent, parse_all

_ANTHROPIC_FRAMES = frozenset({anthropic.MESSAGE_START, anthropic.CONTENT_BLOCK_START,
                               anthropic.CONTENT_BLOCK_STOP, anthropic.MESSAGE_STOP, "error"})
_RESPONSES_LIFECYCLE = frozenset({responses.CREATED, responses.IN_PROGRESS,
                                  responses.QUEUED, "error", responses.FAILED})


def visibility(capture: Capture, kind: str, at: int,
               events: list[WireEvent] | None = None) -> str | None:
    """Why `kind` (``duplicate`` or ``swap``) at event `at` is visible on the wire, or None.

    For ``swap``, `at` is the first of the two events swapped. `events` are
    the capture's parsed events, when the caller already has them.
    """
    if kind not in ("duplicate", "swap"):
        raise ValueError(f"unknown order fault {kind!r}: duplicate or swap")
    wire = capture.wire or ""
    entry = ENTRIES.get(wire)
    if entry is None:
        return None
    shows = entry.part(f"shows_{kind}")
    if shows is None and kind == "swap":
        return None
    events = parse_all(capture.events) if events is None else events
    if kind == "swap":
        return shows(events[at], events[at + 1], wire)
    if shows is None:
        return noted_again(events[at], wire, capture.sidecar.get("request"))
    return shows(events[at], wire)


# The code an accumulator gives an event it was already given (by its id) and drops.
REDELIVERED = "duplicate_event"


def noted_again(ev: WireEvent, wire: str, request: Any = None) -> str | None:
    """A duplicate on a wire whose entry names no reader: visible where the wire's
    accumulator, given `ev` twice, notes the second a ``duplicate_event`` (an event it
    knows by its id, dropped); None where it does not. A repeat follows its event at
    once, so a fresh accumulator sees what the stream's own would."""
    acc = accumulator_for(wire, request if isinstance(request, dict) else None)
    acc.feed(ev)
    before = len(acc.diagnostics)
    acc.feed(ev)
    if any(d.code == REDELIVERED for d in acc.diagnostics[before:]):
        return f"{REDELIVERED} noted"
    return None


def _seq(ev: WireEvent) -> int | None:
    seq = ev.payload.get("sequence_number") if isinstance(ev.payload, dict) else None
    return seq if type(seq) is int else None


def _terminal(ev: WireEvent, wire: str) -> bool:
    return wire in WIRES and ev.type in WIRES[wire].TERMINALS


# -- Anthropic: block frames ---------------------------------------------------------


def _index(ev: WireEvent) -> Any:
    return ev.payload.get("index") if isinstance(ev.payload, dict) else None


def anthropic_duplicate(ev: WireEvent, wire: str) -> str | None:
    """Anthropic (its entry's `shows_duplicate`): a frame of a block or of the message twice."""
    if ev.type in _ANTHROPIC_FRAMES:
        return f"{ev.type} twice"
    return None


def anthropic_swap(a: WireEvent, b: WireEvent, wire: str) -> str | None:
    """Anthropic (its entry's `shows_swap`): any two events but pings, two message_deltas
    or two deltas of one block."""
    kinds = (a.type, b.type)
    if anthropic.PING in kinds or kinds == (anthropic.MESSAGE_DELTA, anthropic.MESSAGE_DELTA):
        return None
    if kinds == (anthropic.CONTENT_BLOCK_DELTA,) * 2 and _index(a) == _index(b):
        return None
    return f"{a.type} swapped with {b.type}"


# -- Responses: sequence numbers (older streams: items and parts) ------------------------


def responses_duplicate(ev: WireEvent, wire: str) -> str | None:
    """Responses (its entry's `shows_duplicate`): a repeated sequence number; in an older
    stream without them, an item's or part's frame or the lifecycle twice."""
    if _seq(ev) is not None:
        return "sequence_number repeated"
    if _frame(ev, wire):
        return f"{ev.type} twice (no sequence numbers)"
    return None


def responses_swap(a: WireEvent, b: WireEvent, wire: str) -> str | None:
    """Responses (its entry's `shows_swap`): sequence numbers out of order; in an older
    stream, a frame moved."""
    if _seq(a) is not None and _seq(b) is not None:
        return "sequence_number out of order"
    if _frame(a, wire) or _frame(b, wire):
        return f"{a.type} swapped with {b.type} (no sequence numbers)"
    return None


def _frame(ev: WireEvent, wire: str) -> bool:
    kind = ev.type or ""
    return (kind.endswith((".added", ".done")) or kind in _RESPONSES_LIFECYCLE
            or _terminal(ev, wire))


# -- Chat: only its markers -------------------------------------------------------------


def _choices(ev: WireEvent) -> list[dict[str, Any]]:
    choices = ev.payload.get("choices") if isinstance(ev.payload, dict) else None
    return [c for c in choices or [] if isinstance(c, dict)]


def _finishes(ev: WireEvent) -> set[Any]:
    return {c.get("index") for c in _choices(ev) if c.get("finish_reason")}


def _carries(ev: WireEvent) -> set[Any]:
    """The choices this chunk adds content, refusal, reasoning or tool calls to."""
    out = set()
    for c in _choices(ev):
        delta = c.get("delta") or {}
        if any(delta.get(k) for k in ("content", "refusal", "reasoning_content", "tool_calls")):
            out.add(c.get("index"))
    return out


def _openings_by_id(ev: WireEvent) -> dict[tuple[Any, Any], Any]:
    """(choice, tool-call index) -> id, of each tool call this chunk opens."""
    out = {}
    for c in _choices(ev):
        for call in (c.get("delta") or {}).get("tool_calls") or []:
            if (call_id := opening_id(call)) is not None:
                out[(c.get("index"), call.get("index"))] = call_id
    return out


def _continues(opening: WireEvent, ev: WireEvent) -> bool:
    """Whether `ev` carries a fragment of a call `opening` opens: at its (choice, index),
    with no id or the same id. Another id there is another call's opening, and two
    openings swapped at a reused index read as the calls made in the other order."""
    opened = _openings_by_id(opening)
    for c in _choices(ev):
        for call in (c.get("delta") or {}).get("tool_calls") or []:
            if not isinstance(call, dict):
                continue
            address = (c.get("index"), call.get("index"))
            if address in opened and opening_id(call) in (None, opened[address]):
                return True
    return False


def chat_duplicate(ev: WireEvent, wire: str) -> str | None:
    """Chat (its entry's `shows_duplicate`): only its markers, ``[DONE]``, a finish reason,
    a tool call's opening."""
    if ev.type == DONE:
        return "[DONE] twice"
    if _finishes(ev):
        return "finish_reason twice"
    if _openings_by_id(ev):
        return "a tool call opened twice"
    return None


def chat_swap(a: WireEvent, b: WireEvent, wire: str) -> str | None:
    """Chat (its entry's `shows_swap`): a chunk after ``[DONE]``, a delta after its
    choice's finish reason, a call's fragment before its opening."""
    if DONE in (a.type, b.type):
        return "a chunk after [DONE]"
    if _finishes(b) & _carries(a):
        return "a delta after its choice's finish_reason"
    if _continues(a, b):
        return "a tool-call fragment before its opening"
    return None

