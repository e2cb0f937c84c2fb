"""Captures in, turn events out: the two routes to a turn, step by step.

The wire route: the capture's recorded chunks pushed through a `TurnStream`
(`lesson_lib.turn.stream`: bytes -> framing -> wire events -> the wire's
accumulator, whose `feed` and `finish` return what changed -> the wire's
adapter -> turn events), as a live connection would push them. The SDK route: the capture replayed offline through the official
SDK's streaming helper (`lesson_lib.capture.replay`) -> its stream events -> the SDK
adapter -> the same turn events.

Several captures are the consecutive steps of one turn. The turn stops at
the first step that ends it (failed, truncated, paused); otherwise its
outcome is ``completed``, even when the last step asks for tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

from .. import wires
from ..capture.captures import Capture
from ..wires.stream_end import how_it_ended
from ..wires.wire_events import DONE, WireEvent, parse_all
from .adapters import ADAPTERS, Counter, dialect_of, named_dialect
from .ends import TurnEnd
from .events import TurnEvent, TurnStarted
from .outcome import end_of_step, end_of_turn, turn_finished
from .reduce import TurnState, reduce_all
from .stream import TurnStream

Route = Literal["wire", "sdk", "auto"]


def route_for(wire: str | None) -> Route:
    """The route a step on `wire` takes under ``route="auto"``: the wire route for every
    wire with an adapter (their accumulators say what changed), the SDK route for any other."""
    return "wire" if wire in ADAPTERS else "sdk"


def step_events(capture: Capture, step: int = 1, seq: Counter | None = None,
                route: Route = "wire") -> list[TurnEvent]:
    """One step's turn events, from `StepStarted` to `StepFinished` (``route="auto"``:
    the wire route on every wire with an adapter, see `route_for`)."""
    route = route_for(capture.wire) if route == "auto" else route
    if route == "wire":
        stream = stream_for(capture, step, seq)
        if capture.status >= 300:
            return stream.http_error(capture.status, capture.body)
        out = []
        for chunk, t in capture.chunks():
            out += stream.feed(chunk, t)
        return out + stream.finish()
    from ..capture.replay import run_sdk
    from .adapters.sdk import SDKAdapter
    seq = seq if seq is not None else Counter()
    sdk = SDKAdapter(capture.wire or "", step, seq, model=_model(capture),
                     dialect=dialect_of(capture))
    out = sdk.begin()
    # Each SDK event is read as it arrives and not kept: some carry the whole
    # text so far (Anthropic ``text``, Responses ``output_text.delta``), so
    # keeping them all would cost memory quadratic in the stream.
    outcome = run_sdk(capture, keep_events=False,
                      on_event=lambda event: out.extend(sdk.feed(event)))
    return out + sdk.end(outcome.error, wire_ended=_wire_ended(capture, outcome.error),
                         tail_cut=_tail_cut(capture, outcome.error))


Batch = tuple[float | None, list[TurnEvent]]


def timed_batches(capture: Capture, step: int = 1, seq: Counter | None = None,
                  route: Route = "wire") -> Iterator[Batch]:
    """One step's turn events in batches, each with the arrival time (ms) of the wire
    event that caused it: what the agent loop plays on its virtual clock.

    The SDK route has no times of its own: each of the SDK's raw events is
    matched, in order and by type, to the wire event it was decoded from
    (see `_aligned_times`).
    """
    route = route_for(capture.wire) if route == "auto" else route
    if route == "wire":
        yield from _wire_batches(capture, step, seq)
        return
    from ..capture.replay import run_sdk
    from .adapters.sdk import SDKAdapter
    seq = seq if seq is not None else Counter()
    outcome = run_sdk(capture)
    adapter = SDKAdapter(capture.wire or "", step, seq, model=_model(capture),
                         dialect=dialect_of(capture))
    yield 0.0, adapter.begin()
    times = _aligned_times(capture, outcome.events)
    last = 0.0
    for event, t in zip(outcome.events, times, strict=True):
        last = t if t is not None else last
        yield last, adapter.feed(event)
    yield last, adapter.end(outcome.error, wire_ended=_wire_ended(capture, outcome.error),
                            tail_cut=_tail_cut(capture, outcome.error))


def stream_for(capture: Capture, step: int = 1, seq: Counter | None = None) -> TurnStream:
    """A `TurnStream` for one step read from `capture` (its wire, request and dialect)."""
    return TurnStream(capture.wire, request=capture.request, step=step, seq=seq,
                      dialect=named_dialect(capture.sidecar))


def _wire_batches(capture: Capture, step: int, seq: Counter | None) -> Iterator[Batch]:
    """The wire route in batches: the capture's recorded chunks pushed through a
    `TurnStream`, one batch per wire event (the step's start at 0 ms, its end at the
    last event's time)."""
    stream = stream_for(capture, step, seq)
    if capture.status >= 300:
        yield 0.0, stream.http_error(capture.status, capture.body)
        return
    last = 0.0

    def pushed() -> Iterator[tuple[WireEvent | None, list[TurnEvent]]]:
        for chunk, t in capture.chunks():
            yield from stream.feed_batches(chunk, t)
        yield from stream.finish_batches(last)

    for event, batch in pushed():
        if event is not None and event.t is not None:
            last = event.t
        starts = bool(batch) and batch[0].kind == "step_started"
        yield (0.0 if starts else last), batch


def _wire_ended(capture: Capture, error: BaseException | None) -> bool:
    """Whether the capture's bytes arrived whole, where the SDK raised: they ended properly,
    or with an in-band error the SDK never reached (so that the SDK route can tell an SDK's
    refusal of a whole stream from a stream cut under it)."""
    if error is None:
        return False
    return how_it_ended(capture.wire, parse_all(capture.events), capture.sse_diagnostics,
                        capture.status, request=capture.request).kind in ("ended", "error")


def _tail_cut(capture: Capture, error: BaseException | None) -> str | None:
    """Where the SDK returned without a word: why the capture's bytes did not end properly
    although their terminal arrived (bytes after it that make no whole event, which an
    SDK's reader drops), else None."""
    if error is not None:
        return None
    ending = how_it_ended(capture.wire, parse_all(capture.events), capture.sse_diagnostics,
                          capture.status, request=capture.request)
    codes = {d.code for d in ending.diagnostics}
    if ending.kind != "cut" or "no_terminal" in codes:
        return None
    return ending.reason


def _model(capture: Capture) -> str | None:
    return capture.request.get("model") if isinstance(capture.request, dict) else None


def _aligned_times(capture: Capture, sdk_events: list[Any]) -> list[float | None]:
    """For each SDK event, the arrival time of the wire event it came from: the SDK route's
    `raw_types` say which of its events stand for a wire event, and `by_type` how they are
    matched (`wires.entry.SDKRoute`). A wire event the SDK never yields (a ping) is passed
    over, as no raw event has its type."""
    wire: list[WireEvent] = [e for e in parse_all(capture.events) if e.type != DONE]
    entry = wires.ENTRIES.get(capture.wire or "")
    route = entry.sdk if entry is not None else None
    raw_types = route.raw_types if route is not None else None
    by_type = route is None or route.by_type
    out: list[float | None] = []
    k, t = 0, None
    for ev in sdk_events:
        if raw_types is None or ev.type in raw_types:
            while k < len(wire) and by_type and wire[k].type != ev.type:
                k += 1
            if k < len(wire):
                t = wire[k].t
                k += 1
        out.append(t)
    return out


def turn_events(captures: Sequence[Capture] | Capture, route: Route = "wire",
                turn: str = "turn") -> list[TurnEvent]:
    """A whole turn's events from its steps' captures (see the module)."""
    if isinstance(captures, Capture):
        captures = [captures]
    seq = Counter()
    out: list[TurnEvent] = [TurnStarted(seq(), turn=turn)]
    end = None
    for step, capture in enumerate(captures, 1):
        events = step_events(capture, step, seq, route)
        out += events
        end = end_of_turn(events[-1], capture.wire)
        if end_of_step(events[-1], capture.wire) is not None:
            break
    out.append(turn_finished(seq(), end or TurnEnd("truncated", "cut")))
    return out


def turn_by_wire_event(capture: Capture, route: Route = "wire"
                       ) -> tuple[list[TurnEvent], list[int]]:
    """A capture as a one-step turn, and for each of its wire events how many of the
    turn's events it has reached (the player's slider, in turn terms).

    The last wire event reaches everything: the step's synthesised ends and the
    turn's end too. The SDK route has no event indexes, so its events are
    matched to the wire events by arrival time.
    """
    route = route_for(capture.wire) if route == "auto" else route
    seq = Counter(1)
    events: list[TurnEvent] = [TurnStarted(0, turn="turn")]
    batches = list(timed_batches(capture, 1, seq, route))
    counts = []
    for _, batch in batches:
        events += batch
        counts.append(len(events))
    last = next((e for e in reversed(events) if e.kind == "step_finished"), None)
    events.append(turn_finished(seq(), end_of_turn(last, capture.wire)))
    n = len(capture.events)
    if route == "wire" and len(batches) == n + 2:
        marks = counts[1:n + 1]          # one batch per wire event, between begin and finish
    else:
        times = [t for t, _ in batches]
        marks, k = [], 0
        for sse in capture.events:
            while k + 1 < len(batches) - 1 and (times[k + 1] or 0.0) <= (sse.t or 0.0):
                k += 1
            marks.append(counts[k])
    if marks:
        marks[-1] = len(events)
    return events, marks


def turn_state(captures: Iterable[Capture] | Capture, route: Route = "wire") -> TurnState:
    """The final `TurnState` of a turn from its captures."""
    caps = [captures] if isinstance(captures, Capture) else list(captures)
    return reduce_all(turn_events(caps, route))
