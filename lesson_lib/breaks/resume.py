"""Resume: join a resumed Responses stream onto the one it continues, by sequence number.

A background-mode response can be streamed again from any point:
``GET /v1/responses/{id}?stream=true&starting_after=N`` (the openai SDK's
``responses.retrieve(id, stream=True, starting_after=N)``) sends every
event whose ``sequence_number`` is above N. A client that lost its
connection asks for N = the last number it received whole; `join` then
lays the resumed events after the first stream's, keeping each number
once: an event already received is dropped (a server that resends a little
more than asked must not double a delta) and a hole between the two is a
diagnostic (``resume_gap``), never silently skipped. The joined events
feed any accumulator as one stream.

SSE has its own resume: each event may carry ``id:``, and a browser's
``EventSource`` reconnects by itself, sending the last one back as
``Last-Event-ID``. Neither LLM API relies on it. Anthropic sends no ``id:``
at all; OpenAI's streams carry none either, and the resume is a different
request (a GET on the response, with ``starting_after`` in the query),
because the first request was a POST with a body that ``EventSource``
cannot send, and because only a stored, background response can be read
again: a foreground stream is gone once its connection is. With ``id:``
set to the sequence number, ``Last-Event-ID`` would carry exactly what
``starting_after`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..wires.wire_events import WireEvent


def sequence_number(event: WireEvent) -> int | None:
    """The event's ``sequence_number``, or None when it has none."""
    seq = event.payload.get("sequence_number") if isinstance(event.payload, dict) else None
    return seq if type(seq) is int else None


def resume_point(events: list[WireEvent]) -> int | None:
    """The ``starting_after`` to ask for: the last sequence number received whole."""
    numbers = [n for n in map(sequence_number, events) if n is not None]
    return max(numbers) if numbers else None


def served_after(stored: list[WireEvent], starting_after: int) -> list[WireEvent]:
    """What a resume request with ``starting_after=N`` is sent: the stored events above N.

    The server's side of the resume, for a lesson or a test to play: a client
    that asks with an older N than the last event it holds (it saved its
    resume point only now and then) gets events it already has, and `join`
    must drop them.
    """
    return [e for e in stored if (n := sequence_number(e)) is not None and n > starting_after]


@dataclass
class Joined:
    """The joined stream: `events` in order, what was dropped, and what is missing."""

    events: list[WireEvent]
    dropped: list[WireEvent] = field(default_factory=list)   # already received
    diagnostics: list[Diagnostic] = field(default_factory=list)


def join(first: list[WireEvent], resumed: list[WireEvent]) -> Joined:
    """The first stream's events, then the resumed ones not already received.

    Linear in the number of events. An event of the resumed stream whose
    number was already received is dropped; a resumed event without a
    number is kept (nothing says it was seen); a jump in the numbers where
    the streams meet is a ``resume_gap`` diagnostic.
    """
    last = resume_point(first)
    out = Joined(events=list(first))   # renumbered below as one stream
    expected = None if last is None else last + 1
    for event in resumed:
        seq = sequence_number(event)
        if seq is not None and last is not None and seq <= last:
            out.dropped.append(event)
            continue
        if seq is not None and expected is not None and seq != expected:
            out.diagnostics.append(Diagnostic(
                "resume_gap", f"the resumed stream goes on at sequence_number {seq}, "
                f"but {expected} was next: {seq - expected} event(s) missing",
                severity="error", extra={"expected": expected, "got": seq}))
        if seq is not None:
            expected = seq + 1
            last = seq
        out.events.append(event._replace(index=len(out.events)))
    return out
