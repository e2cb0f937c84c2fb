"""The resume request's answer: a stored stream, sent again after a point.

A provider that keeps a stream (Responses in background mode, Gemini
Interactions) answers a GET on the thing streamed with the events after the
point the client names (`lesson_lib.wires.entry.Resume`). The server keeps
nothing live: what it "stored" is what the corpus holds of that stream, the
captures of the wire whose events name the id, joined by the resume point
(`lesson_lib.breaks.resume`; a cut capture and the recorded resume that
continues it make one whole stream). The answer is a capture of its own: the
stored events past the point, their bytes as recorded, one chunk each at the
time they came.

Pure: the corpus in, `Stored` streams out; a `Stored` and a point in, a
`Capture` out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...breaks.resume import Joiner, knows, served_after
from ...capture.captures import Capture, from_bytes
from ...wires.resume import Resume, ResumePoint
from ...wires.wire_events import WireEvent, parse_all


@dataclass(frozen=True)
class Stored:
    """One stream the corpus holds, by the id of the thing streamed: its events in
    order, each with its bytes, and the capture it first came from (its name, status
    and headers answer for it)."""

    wire: str
    how: Resume
    stream_id: str
    events: list[WireEvent]
    raw: dict[int, bytes]        # by id(event): the bytes the event was recorded as
    source: Capture

    def knows(self, after: ResumePoint) -> bool:
        """Whether a client can resume this stream after `after`."""
        return knows(self.events, after, self.how)

    def after(self, point: ResumePoint) -> Capture:
        """The resume request's body: the events past `point`, as a capture."""
        return self._capture(served_after(self.events, point, self.how))

    def whole(self) -> Capture:
        """The stream from its start (a resume request that asks for no stream is
        answered with its final object)."""
        return self._capture(self.events)

    def _capture(self, events: list[WireEvent]) -> Capture:
        ends, times, body = [], [], bytearray()
        first = next((e.t for e in events if e.t is not None), None)
        for event in events:
            body += self.raw[id(event)]
            ends.append(len(body))
            times.append(None if event.t is None or first is None else event.t - first)
        sidecar = {"wire": self.wire, "response": self.source.sidecar.get("response") or {},
                   "chunks": {"ends": ends, "t_ms": times}}
        return from_bytes(bytes(body), name=self.source.name, sidecar=sidecar)


def stored_streams(corpus: Sequence[Capture], wire: str, how: Resume) -> dict[str, Stored]:
    """Every stream of `wire` the corpus holds, by the id its events name.

    Captures of one id are joined: on a numbered wire in the order of their
    first points, else in the corpus's order; an event already held is not
    held twice. Linear in the corpus's events.
    """
    by_id: dict[str, list[tuple[ResumePoint | None, Capture, list[WireEvent]]]] = {}
    for cap in corpus:
        if cap.wire != wire or cap.status >= 300:
            continue
        events = parse_all(cap.events)
        stream_id = next((s for e in events if (s := how.stream_id(e.payload))), None)
        if stream_id is not None:
            first = next((p for e in events if (p := how.point(e.payload)) is not None), None)
            by_id.setdefault(stream_id, []).append((first, cap, events))
    out = {}
    for stream_id, parts in by_id.items():
        if how.numbered:
            parts.sort(key=lambda part: -1 if part[0] is None else part[0])
        joiner, events, raw = Joiner(how), [], {}
        for _, cap, part in parts:
            for event in part:
                if joiner.take(event):
                    events.append(event)
                    raw[id(event)] = cap.body[event.sse.start:event.sse.end]
        out[stream_id] = Stored(wire, how, stream_id, events, raw, parts[0][1])
    return out
