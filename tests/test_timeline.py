"""The timeline: the accumulator's state after any event index, cheaply."""

from __future__ import annotations

import json
import random

import pytest

from lesson_lib.accumulate import accumulate, accumulator_for
from lesson_lib.accumulate.timeline import Timeline
from lesson_lib.captures import corpus, from_bytes, reference_corpus
from lesson_lib.wire_events import parse_all


def _available(wire: str):
    return [c for c in corpus() + reference_corpus() if c.wire == wire and c.status < 300]


def _some_captures():
    """A few captures per wire: the longest ones, and one that ends badly."""
    picked = []
    for wire in ("anthropic-messages", "openai-chat"):
        caps = sorted(_available(wire), key=lambda c: -len(c.events))
        picked += caps[:2]
        bad = [c for c in caps if not accumulate(c).complete]
        picked += bad[:1]
    return picked


def _long_capture():
    payloads = [{"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    payloads += [{"type": "content_block_delta", "index": 0,
                  "delta": {"type": "text_delta", "text": f"w{i} "}} for i in range(300)]
    payloads += [{"type": "content_block_start", "index": 1, "content_block": {
        "type": "tool_use", "id": "t", "name": "f", "input": {}}}]
    payloads += [{"type": "content_block_delta", "index": 1,
                  "delta": {"type": "input_json_delta", "partial_json": p}}
                 for p in ['{"k"', ': "v', 'alue"', "}"]]
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return from_bytes(body.encode(), name="long-cut", sidecar={"wire": "anthropic-messages"})


def _state(acc) -> tuple:
    return (acc.final(), acc.slots(), [d.as_dict() for d in acc.diagnostics], acc.complete)


def _fresh(capture, k: int, ended: bool = False) -> tuple:
    acc = accumulator_for(capture.wire)
    for event in parse_all(capture.events)[:k]:
        acc.feed(event)
    if ended:
        acc.finish(capture.sse_diagnostics if k == len(capture.events) else ())
    return _state(acc)


CASES = _some_captures() + [_long_capture()]


def _straight_states(capture) -> list[tuple]:
    """The state after each k, from one accumulator fed in order (no copies, no jumps)."""
    acc = accumulator_for(capture.wire)
    states = [_state(acc)]
    for event in parse_all(capture.events):
        acc.feed(event)
        states.append(_state(acc))
    return states


@pytest.mark.parametrize("capture", CASES, ids=[c.key for c in CASES])
def test_state_at_every_index_equals_a_fresh_accumulation(capture):
    timeline = Timeline(capture, every=8)
    n = len(timeline)
    expected = _straight_states(capture)
    for k in {k for k in (0, 1, n // 3, n // 2, n - 1, n) if k >= 0}:  # truly fresh, a few k
        assert expected[k] == _fresh(capture, k)
    order = list(range(n + 1))
    random.Random(7).shuffle(order)
    for k in order + list(range(n + 1)):   # random jumps, then stepping forward
        snap = timeline.at(k)
        assert (snap.final, snap.slots, [d.as_dict() for d in snap.diagnostics],
                snap.complete) == expected[k], k
        assert snap.event is (timeline.events[k - 1] if k else None)
    end = timeline.end()
    assert (end.final, end.slots, [d.as_dict() for d in end.diagnostics],
            end.complete) == _fresh(capture, n, ended=True)
    assert end.final == accumulate(capture).final


def test_stepping_forward_costs_one_feed_per_step():
    timeline = Timeline(_long_capture(), every=16)
    timeline.at(0)
    for k in range(1, len(timeline) + 1):
        before = timeline.feeds
        timeline.at(k)
        assert timeline.feeds - before == 1
    assert timeline.feeds == len(timeline)


def test_any_jump_costs_at_most_one_checkpoint_interval_of_feeds():
    timeline = Timeline(_long_capture(), every=16)
    timeline.at(len(timeline))                      # walk once: checkpoints exist
    rng = random.Random(3)
    for _ in range(200):
        k = rng.randrange(len(timeline) + 1)
        feeds, copies = timeline.feeds, timeline.copies
        timeline.at(k)
        assert timeline.feeds - feeds < 16
        assert timeline.copies - copies <= 1


def test_checkpoints_are_not_changed_by_later_feeds():
    capture = _long_capture()
    timeline = Timeline(capture, every=4)
    early = timeline.at(5).final
    timeline.at(len(timeline))
    assert timeline.at(5).final == early == _fresh(capture, 5)[0]


def test_ended_snapshot_does_not_finish_the_live_accumulator():
    capture = _long_capture()
    timeline = Timeline(capture)
    n = len(timeline)
    assert "no_terminal" in [d.code for d in timeline.end().diagnostics]
    assert "no_terminal" not in [d.code for d in timeline.at(n).diagnostics]
    with pytest.raises(IndexError):
        timeline.at(n + 1)


def test_http_error_capture_has_one_empty_state():
    cap = from_bytes(b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                     sidecar={"wire": "anthropic-messages", "response": {"status": 529}})
    timeline = Timeline(cap)
    assert len(timeline) == 0
    snap = timeline.end()
    assert snap.final is None and [d.code for d in snap.diagnostics] == ["http_error"]
