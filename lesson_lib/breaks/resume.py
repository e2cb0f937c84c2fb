"""Resume: join a resumed stream onto the one it continues, by the wire's resume point.

A background-mode Responses response can be streamed again from any point:
``GET /v1/responses/{id}?stream=true&starting_after=N`` (the openai SDK's
``responses.retrieve(id, stream=True, starting_after=N)``) sends every
event whose ``sequence_number`` is above N. A client that lost its
connection asks for N = the last number it received whole; `join` then
lays the resumed events after the first stream's, keeping each number
once: an event already received is dropped (a server that resends a little
more than asked must not double a delta) and a hole between the two is a
diagnostic (``resume_gap``), never silently skipped. The joined events
feed any accumulator as one stream.

Gemini Interactions resumes the same way with another point: each event's
``event_id``, sent back as ``last_event_id`` (``GET
/v1beta/interactions/{id}?stream=true&last_event_id=E``). An event id is an
opaque token, so a repeat still shows (the same id twice) but a hole does not.
Each wire's registry entry says how it resumes (`lesson_lib.wires.entry.Resume`);
every function here takes it as `how`, Responses' by default.

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

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..capture.diagnostics import Diagnostic
from ..wires import responses
from ..wires.resume import Resume, ResumePoint
from ..wires.wire_events import WireEvent

RESPONSES: Resume = responses.RESUME     # lesson 5's wire: points are sequence numbers


def point(event: WireEvent, how: Resume = RESPONSES) -> ResumePoint | None:
    """The event's resume point (its ``sequence_number`` on Responses), or None."""
    return how.point(event.payload)


def sequence_number(event: WireEvent) -> int | None:
    """The event's ``sequence_number``, or None when it has none."""
    seq = point(event, RESPONSES)
    return seq if isinstance(seq, int) else None


def resume_point(events: Iterable[WireEvent], how: Resume = RESPONSES) -> ResumePoint | None:
    """The point to resume after (``starting_after``, ``last_event_id``): the last one
    received whole (the highest, where points are numbers)."""
    joiner = Joiner(how)
    for event in events:
        joiner.received(event)
    return joiner.last


def served_after(stored: list[WireEvent], after: ResumePoint,
                 how: Resume = RESPONSES) -> list[WireEvent]:
    """What a resume request after point `after` is sent: the stored events past it.

    The server's side of the resume, for a lesson, a test or `serve` to play:
    a client that asks with an older point than the last event it holds (it
    saved its resume point only now and then) gets events it already has,
    and `join` must drop them. Numbered points: every event numbered above
    `after`. Opaque ones: every event after the one that carries `after`
    (none when no stored event does: `knows` says so first).
    """
    if how.numbered:
        return [e for e in stored if isinstance(n := point(e, how), int) and n > after]
    for i, event in enumerate(stored):
        if point(event, how) == after:
            return stored[i + 1:]
    return []


def knows(stored: list[WireEvent], after: ResumePoint, how: Resume = RESPONSES) -> bool:
    """Whether `after` is a point the stored stream can resume from (a number, on a
    numbered wire; an event id one of its events carries, on the others)."""
    if how.numbered:
        return isinstance(after, int) and after >= -1
    return any(point(e, how) == after for e in stored)


class Joiner:
    """The join, one event at a time: `received` notes each event the first stream
    delivered, `take` says whether a resumed event is new (and notes it). A repeat is
    dropped; where points are numbers, a jump is a ``resume_gap`` in `diagnostics`.
    Constant work per event (a set of the ids seen, on an opaque wire)."""

    def __init__(self, how: Resume = RESPONSES) -> None:
        self.how = how
        self.last: ResumePoint | None = None
        self.diagnostics: list[Diagnostic] = []
        self._seen: set[ResumePoint] = set()

    def received(self, event: WireEvent) -> None:
        """Note an event of the stream so far (idempotent)."""
        found = point(event, self.how)
        if found is None:
            return
        if self.how.numbered:
            self.last = found if self.last is None else max(self.last, found)
        else:
            self._seen.add(found)
            self.last = found

    def seen(self, event: WireEvent) -> bool:
        """Whether the event's point was received already (a repeat)."""
        found = point(event, self.how)
        if found is None or self.last is None:
            return False
        return found <= self.last if self.how.numbered else found in self._seen

    def take(self, event: WireEvent) -> bool:
        """Whether a resumed event joins the stream: False for one already received; a
        jump past the next number is reported. An event without a point is kept
        (nothing says it was seen)."""
        if self.seen(event):
            return False
        found = point(event, self.how)
        if self.how.numbered and found is not None and self.last is not None \
                and found != self.last + 1:
            expected = self.last + 1
            self.diagnostics.append(Diagnostic(
                "resume_gap", f"the resumed stream goes on at {self.how.point_field} {found}, "
                f"but {expected} was next: {found - expected} event(s) missing",
                severity="error", extra={"expected": expected, "got": found}))
        self.received(event)
        return True


@dataclass
class Joined:
    """The joined stream: `events` in order, what was dropped, and what is missing."""

    events: list[WireEvent]
    dropped: list[WireEvent] = field(default_factory=list)   # already received
    diagnostics: list[Diagnostic] = field(default_factory=list)


def join(first: list[WireEvent], resumed: list[WireEvent],
         how: Resume = RESPONSES) -> Joined:
    """The first stream's events, then the resumed ones not already received.

    Linear in the number of events. An event of the resumed stream whose
    point was already received is dropped; a resumed event without a point
    is kept (nothing says it was seen); on a numbered wire a jump in the
    numbers where the streams meet is a ``resume_gap`` diagnostic.
    """
    joiner = Joiner(how)
    for event in first:
        joiner.received(event)
    out = Joined(events=list(first))   # renumbered below as one stream
    for event in resumed:
        if joiner.take(event):
            out.events.append(event._replace(index=len(out.events)))
        else:
            out.dropped.append(event)
    out.diagnostics = joiner.diagnostics
    return out
