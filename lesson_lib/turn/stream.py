"""Lesson 4 (live in lesson 6): one push pipeline from a response's bytes to turn events.

    chunk -> framing (`lesson_lib.sse.framing`: SSE, or the wire's own)
          -> wire events (`lesson_lib.wires.wire_events`)
          -> the wire's accumulator, whose `feed` and `finish` say what changed
          -> the wire's adapter -> turn events

`TurnStream` holds one of each station for one step (one model call) and
is driven the same way by a live connection, a replayed capture and a
test: `feed` each chunk as it arrives, then `finish` once the body ended.
A request that failed before any event is `http_error`; a connection that
broke, or that the client abandoned, is `transport_error`, unless the wire
resumes: then `resume` carries the same step on into the resume request's
body. What comes out
never depends on where the chunks were cut (only `t`, the arrival time a
chunk brings, is kept on the events it completed).

>>> from lesson_lib.capture.captures import load
>>> cap = load("anthropic-messages/hello")
>>> stream = TurnStream(cap.wire, request=cap.request)
>>> events = [e for chunk, t in cap.chunks() for e in stream.feed(chunk, t)]
>>> events += stream.finish()
>>> [e.kind for e in events][:3], events[-1].ended
(['step_started', 'block_started', 'block_delta'], 'proper')
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from ..accumulate import accumulator_for
from ..sse.framing import decoder_for
from ..wires.stream_end import http_error as http_error_diagnostic
from ..wires.wire_events import WireEvent, parse_payload
from .adapters import Counter, WireAdapter, adapter_for, dialect_for
from .events import TurnEvent

# What one wire event (None: the step's start or end) became in turn events.
Batch = tuple[WireEvent | None, list[TurnEvent]]


class TurnStream:
    """The stations from bytes to turn events for one step on `wire`, in one push object.

    `request` is the request as data (its ``model`` names the step's model;
    a Chat request's structured output changes what its answer is); `step`
    the step's number in the turn and `seq` the turn's shared sequence
    numbers. `dialect` names a server's own traits (see
    `lesson_lib.turn.adapters.DIALECTS`); when not given it is told from the
    request's model, else from the model the first event names, which is
    why the step's start (`StepStarted`) comes with the first event.
    """

    def __init__(self, wire: str | None, *, request: dict[str, Any] | None = None,
                 step: int = 1, seq: Counter | None = None, dialect: str | None = None) -> None:
        self.wire = wire
        self.request = request if isinstance(request, dict) else {}
        self.step = step
        self.seq = seq if seq is not None else Counter()
        self.dialect = dialect
        self.adapter: WireAdapter | None = None
        self._decoder = decoder_for(wire)
        self._accumulator = accumulator_for(wire, self.request)
        self._read = 0              # wire events read so far: the next one's index
        self._ended = False
        # After a resume: which wire events of the new body join the stream.
        self._keep: Callable[[WireEvent], bool] | None = None

    # -- the three ways in -------------------------------------------------------

    def feed(self, chunk: bytes, t: float | None = None) -> list[TurnEvent]:
        """The turn events one chunk of the body completed; `t` is its arrival time (ms)."""
        return _joined(self.feed_batches(chunk, t))

    def finish(self, t: float | None = None) -> list[TurnEvent]:
        """The end of the body: what never formed an event, blocks left open and the
        step's end become events and diagnostics; `t` is when the body ended (ms), kept
        on the events the end makes. Idempotent (later calls return [])."""
        return _joined(self.finish_batches(t))

    def http_error(self, status: int, body: bytes | str = b"") -> list[TurnEvent]:
        """A request that failed with HTTP `status` before any event: one provider error
        (from the error `body`), then the step's end."""
        if self._ended or self.adapter is not None:
            raise ValueError("http_error is for a request that failed before any event")
        self._ended = True
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        diagnostic = http_error_diagnostic(status, text)
        data, error_type = _error_body(diagnostic.raw or "")
        start: list[Batch] = []
        adapter = self._adapter(None, start)
        return _joined(start) + adapter.http_error(status, diagnostic.message, data,
                                                   error_type=error_type)

    def transport_error(self, message: str, *, code: str = "transport",
                        t: float | None = None) -> list[TurnEvent]:
        """The connection failed under the stream, or the client gave up on it (a
        stall): what arrived is kept, one transport error (retryable: it is not the
        provider's word) is reported, and the step ends as failed, however many
        attempts came before. Use it instead of `finish` (after it, nothing is left to
        say: it returns [])."""
        if self._ended:
            return []
        self._ended = True
        out = self._batches(self._decoder.finish())   # complete events still count
        adapter = self._adapter(None, out)
        out.append((None, adapter.transport_error(message, code=code, t=t)))
        changes = self._accumulator.finish(list(self._decoder.diagnostics))
        out.append((None, adapter.feed(changes, t=t)))
        return _joined(out)

    def resume(self, keep: Callable[[WireEvent], bool]) -> None:
        """The body broke, and another body goes on with the same stream (the wire's
        resume request): the bytes of an event the break cut short are let go (the new
        body sends that event whole), and from now on only the wire events `keep`
        accepts are fed on (it turns away those already received)."""
        if self._ended:
            raise ValueError("resume after the step's end")
        self._decoder = decoder_for(self.wire)
        self._keep = keep

    # -- the same, one batch per wire event ------------------------------------------

    def feed_batches(self, chunk: bytes, t: float | None = None) -> list[Batch]:
        """What `feed` returns, batched: (None, the step's start) with the first event,
        then (wire event, what it became) for each wire event the chunk completed."""
        if self._ended:
            raise ValueError("feed after finish")
        return self._batches(self._decoder.feed(chunk, t))

    def finish_batches(self, t: float | None = None) -> list[Batch]:
        """What `finish` returns, batched: the events the end completes, then (None, the
        step's end)."""
        if self._ended:
            return []
        self._ended = True
        out = self._batches(self._decoder.finish())
        adapter = self._adapter(None, out)
        changes = self._accumulator.finish(list(self._decoder.diagnostics))
        out.append((None, adapter.feed(changes, t=t)))
        return out

    def feed_events(self, events: Iterable[WireEvent]) -> list[TurnEvent]:
        """The turn events of wire events already read (`wire_events.parse_all` of a
        capture's events): what feeding the bytes they came from gives, the framing done."""
        if self._ended:
            raise ValueError("feed after finish")
        out: list[Batch] = []
        for event in events:
            self._read = event.index + 1
            self._wire_event(event, out)
        return _joined(out)

    # -- the stations ---------------------------------------------------------------

    def _batches(self, framed: Any) -> list[Batch]:
        out: list[Batch] = []
        for sse in framed:
            event = parse_payload(sse, self._read)
            if self._keep is not None and not self._keep(event):
                continue
            self._read += 1
            self._wire_event(event, out)
        return out

    def _wire_event(self, event: WireEvent, out: list[Batch]) -> None:
        """One wire event through the accumulator and the adapter, its batch put in `out`."""
        adapter = self.adapter or self._adapter(event.payload, out)
        changes = self._accumulator.feed(event)
        out.append((event, adapter.feed(changes, t=event.t, at=event.index)))

    def _adapter(self, first_payload: Any, out: list[Batch]) -> WireAdapter:
        """The step's adapter. The first call sets it up, in the dialect the request or
        the first payload says, and puts the step's start in `out`."""
        if self.adapter is None:
            dialect = self.dialect or dialect_for(self.wire, self.request, first_payload)
            self.adapter = adapter_for(self.wire, self.step, self.seq,
                                       model=self.request.get("model"), dialect=dialect)
            out.append((None, self.adapter.begin()))
        return self.adapter


def _joined(batches: list[Batch]) -> list[TurnEvent]:
    return [event for _, events in batches for event in events]


def _error_body(text: str) -> tuple[Any, str | None]:
    """A failed request's body as data (the text when not JSON), and its error type."""
    try:
        body = json.loads(text)
    except ValueError:
        return text, None
    err = body.get("error") if isinstance(body, dict) else None
    return body, ((err.get("type") or err.get("code")) if isinstance(err, dict) else None)
