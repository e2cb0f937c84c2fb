"""`TurnStream`, the push pipeline from bytes to turn events: its events never depend on
where the chunks were cut, it is what the wire route of `turn_events` is, and its framing
is chosen per wire.

Where the chunks were cut: every capture and every reference capture (those a pending
issue is about to read are skipped by `conftest.py`, saying why) fed whole, one byte at a
time, at its recorded chunk ends, and at random cuts gives the same events. Fed whole or
in pieces without times, the events are equal in every field; at the recorded chunk ends
each event also carries its chunk's arrival time `t`, the one field left out there.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib import wires
from lesson_lib.capture.captures import corpus, from_bytes, load, reference_corpus, reference_dir
from lesson_lib.sse.decoder import ServerSentEvent
from lesson_lib.turn.adapters import DeepSeekChatAdapter
from lesson_lib.turn.order import check
from lesson_lib.turn.run import step_events, stream_for
from lesson_lib.turn.stream import TurnStream

CAPTURES = corpus() + reference_corpus()
IDS = [c.key for c in CAPTURES]
WIRES = ("anthropic-messages", "openai-responses", "openai-chat")


def pushed(capture, chunks) -> list:
    """The turn events of `capture`'s step when its body arrives as `chunks`
    ((bytes, t) pairs)."""
    stream = stream_for(capture)
    if capture.status >= 300:
        return stream.http_error(capture.status, capture.body)
    out = []
    for chunk, t in chunks:
        out += stream.feed(chunk, t)
    return out + stream.finish()


def cut(body: bytes, ends: list[int]) -> list[tuple[bytes, None]]:
    """`body` cut at `ends` (sorted offsets inside it), without times."""
    edges = [0, *ends, len(body)]
    return [(body[a:b], None) for a, b in zip(edges, edges[1:], strict=False)]


def untimed(events: list) -> list:
    return [replace(e, t=None) for e in events]


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_whole_one_byte_at_a_time_and_at_the_recorded_chunk_ends_give_the_same_events(capture):
    whole = pushed(capture, [(capture.body, None)])
    assert whole and whole[0].kind == "step_started" and whole[-1].kind == "step_finished"
    assert check(whole, whole_turn=False) == []
    body = capture.body
    assert pushed(capture, [(body[i:i + 1], None) for i in range(len(body))]) == whole
    recorded = pushed(capture, capture.chunks())
    assert untimed(recorded) == whole
    # ... and that is the wire route of `turn_events` (one step), arrival times and all.
    assert recorded == step_events(capture, route="wire")


SAMPLE = [c for c in CAPTURES if c.wire in WIRES and c.path is not None
          and not c.path.resolve().is_relative_to(reference_dir().resolve())]


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_cuts_give_the_same_events(data):
    capture = data.draw(st.sampled_from(SAMPLE), label="capture")
    n = len(capture.body)
    ends = sorted(data.draw(st.sets(st.integers(1, max(1, n - 1)), max_size=40), label="ends"))
    ends = [e for e in ends if 0 < e < n]
    assert pushed(capture, cut(capture.body, ends)) == pushed(capture, [(capture.body, None)])


def test_finish_is_idempotent_and_nothing_is_fed_after_it():
    cap = load("anthropic-messages/hello")
    stream = stream_for(cap)
    events = stream.feed(cap.body) + stream.finish()
    assert events[-1].kind == "step_finished" and events[-1].ended == "proper"
    assert stream.finish() == [] and stream.finish_batches() == []
    with pytest.raises(ValueError, match="feed after finish"):
        stream.feed(b"data: {}\n\n")


def test_a_stream_cut_before_any_event_still_starts_and_ends_its_step():
    stream = TurnStream("anthropic-messages")
    assert stream.feed(b'event: message_start\ndata: {"type": "mess') == []
    events = stream.finish()
    assert [e.kind for e in events] == ["step_started", "noted", "noted", "step_finished"]
    assert [e.code for e in events[1:3]] == ["undispatched_bytes", "no_terminal"]
    assert events[-1].ended == "cut"


def test_an_http_error_before_any_event_is_one_provider_error_and_the_step_s_end():
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    cap = from_bytes(body, name="overloaded",
                     sidecar={"wire": "anthropic-messages", "response": {"status": 529}})
    events = TurnStream("anthropic-messages").http_error(529, body)
    assert events == step_events(cap)
    assert [e.kind for e in events] == ["step_started", "error_reported", "step_finished"]
    error = events[1]
    assert (error.scope, error.phase, error.retryable, error.code) == \
        ("provider", "before_output", True, "http_error")
    assert error.raw == json.loads(body) and events[-1].ended == "error"


def test_a_transport_error_keeps_what_arrived_and_fails_the_step():
    cap = load("anthropic-messages/hello")
    stream = TurnStream(cap.wire, request=cap.request)
    half = cap.body[: len(cap.body) // 2]
    events = stream.feed(half) + stream.transport_error("the connection broke", code="stall")
    error = next(e for e in events if e.kind == "error_reported")
    assert (error.scope, error.code, error.retryable, error.phase) == (
        "transport", "stall", True, "after_output")
    assert events[-1].kind == "step_finished" and events[-1].ended == "error"
    assert [e.fragment for e in events if e.kind == "block_delta"]   # what arrived is kept
    assert stream.transport_error("again") == [] and stream.finish() == []


def test_an_http_error_after_an_event_is_refused():
    cap = load("anthropic-messages/hello")
    stream = stream_for(cap)
    stream.feed(cap.body)
    with pytest.raises(ValueError, match="before any event"):
        stream.http_error(500, b"")


def test_an_unknown_wire_is_refused_at_once():
    with pytest.raises(ValueError):
        TurnStream("carrier-pigeon")


def test_the_step_number_and_the_turn_s_sequence_are_the_caller_s():
    from lesson_lib.turn.adapters import Counter
    cap = load("anthropic-messages/hello")
    seq = Counter(7)
    stream = TurnStream(cap.wire, request=cap.request, step=3, seq=seq)
    events = stream.feed(cap.body) + stream.finish()
    assert [e.seq for e in events] == list(range(7, 7 + len(events))) == \
        list(range(7, seq.next))
    assert events[0].step == 3
    assert next(e for e in events if e.kind == "block_started").block.startswith("s3.")


DEEPSEEK = reference_dir() / "openai-chat-compatible" / "deepseek-reasoning-content.sse"


@pytest.mark.skipif(not DEEPSEEK.exists(), reason=f"reference capture absent: {DEEPSEEK}")
def test_without_a_request_the_dialect_is_told_from_the_first_event():
    stream = TurnStream("openai-chat")
    assert stream.feed(b"") == [] and stream.adapter is None
    body = DEEPSEEK.read_bytes()
    events = stream.feed(body) + stream.finish()
    assert isinstance(stream.adapter, DeepSeekChatAdapter)
    assert events[0].kind == "step_started" and events[-1].model == "deepseek-reasoner"


class JSONLines:
    """A framing of its own for the test: one JSON payload per line, its type inside."""

    def __init__(self) -> None:
        self.pending = b""
        self.offset = 0
        self.diagnostics: list = []

    def feed(self, chunk: bytes, t: float | None = None) -> list[ServerSentEvent]:
        *lines, self.pending = (self.pending + chunk).split(b"\n")
        out = []
        for line in lines:
            end = self.offset + len(line) + 1
            if line:
                out.append(ServerSentEvent(None, line.decode(), start=self.offset, end=end, t=t))
            self.offset = end
        return out

    def finish(self) -> list[ServerSentEvent]:
        return self.feed(b"\n") if self.pending else []


def test_a_wire_with_a_framing_of_its_own_gets_its_decoder(monkeypatch):
    cap = load("anthropic-messages/weather-turn-step1")
    lines = b"".join(e.data.encode() + b"\n" for e in cap.events)
    entry = wires.ENTRIES[cap.wire]
    monkeypatch.setitem(wires.ENTRIES, cap.wire, replace(entry, decoder=JSONLines))
    stream = TurnStream(cap.wire, request=cap.request)
    events = [e for i in range(0, len(lines), 7) for e in stream.feed(lines[i:i + 7])]
    events += stream.finish()
    monkeypatch.setitem(wires.ENTRIES, cap.wire, entry)
    assert events == pushed(cap, [(cap.body, None)])
    assert any(e.kind == "tool_call_ready" for e in events)
