"""The history: the accumulator's state after any event index, cheaply."""

from __future__ import annotations

import copy
import json
import random
import tracemalloc

import pytest

from lesson_lib.accumulate import accumulate, accumulator_for
from lesson_lib.accumulate.history import History
from lesson_lib.capture.captures import Capture, corpus, from_bytes, load, reference_corpus
from lesson_lib.tool_calls import ToolCall
from lesson_lib.tool_calls.checkpoints import checkpoint
from lesson_lib.wires.wire_events import parse_all


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
    history = History(capture, every=8)
    n = len(history)
    expected = _straight_states(capture)
    for k in {k for k in (0, 1, n // 3, n // 2, n - 1, n) if k >= 0}:  # truly fresh, a few k
        assert expected[k] == _fresh(capture, k)
    order = list(range(n + 1))
    random.Random(7).shuffle(order)
    for k in order + list(range(n + 1)):   # random jumps, then stepping forward
        snap = history.at(k)
        assert (snap.final, snap.slots, [d.as_dict() for d in snap.diagnostics],
                snap.complete) == expected[k], k
        assert snap.event is (history.events[k - 1] if k else None)
    end = history.end()
    assert (end.final, end.slots, [d.as_dict() for d in end.diagnostics],
            end.complete) == _fresh(capture, n, ended=True)
    assert end.final == accumulate(capture).final


def test_stepping_forward_costs_one_feed_per_step():
    history = History(_long_capture(), every=16)
    history.at(0)
    for k in range(1, len(history) + 1):
        before = history.feeds
        history.at(k)
        assert history.feeds - before == 1
    assert history.feeds == len(history)


def test_any_jump_costs_at_most_one_checkpoint_interval_of_feeds():
    history = History(_long_capture(), every=16)
    history.at(len(history))                      # walk once: checkpoints exist
    rng = random.Random(3)
    for _ in range(200):
        k = rng.randrange(len(history) + 1)
        feeds, copies = history.feeds, history.copies
        history.at(k)
        assert history.feeds - feeds < 16
        assert history.copies - copies <= 1


def test_checkpoints_are_not_changed_by_later_feeds():
    capture = _long_capture()
    history = History(capture, every=4)
    early = history.at(5).final
    history.at(len(history))
    assert history.at(5).final == early == _fresh(capture, 5)[0]


def test_ended_snapshot_does_not_finish_the_live_accumulator():
    capture = _long_capture()
    history = History(capture)
    n = len(history)
    assert "no_terminal" in [d.code for d in history.end().diagnostics]
    assert "no_terminal" not in [d.code for d in history.at(n).diagnostics]
    with pytest.raises(IndexError):
        history.at(n + 1)


def test_http_error_capture_has_one_empty_state():
    cap = from_bytes(b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                     sidecar={"wire": "anthropic-messages", "response": {"status": 529}})
    history = History(cap)
    assert len(history) == 0
    snap = history.end()
    assert snap.final is None and [d.code for d in snap.diagnostics] == ["http_error"]


# -- deep tool inputs and tool calls in snapshots -------------------------------------------

DEPTH = 5_000


def _deep_capture(wire: str, *, depth: int = DEPTH, size: int = 20) -> Capture:
    """A tool call whose arguments are ``[[[...]]]`` `depth` deep, in `size`-character
    fragments, ended properly (Anthropic: block stop, message_delta, message_stop; Chat:
    finish_reason and [DONE])."""
    text = "[" * depth + "]" * depth
    fragments = [text[i:i + size] for i in range(0, len(text), size)]
    if wire == "anthropic-messages":
        payloads = [{"type": "message_start", "message": {
            "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
            "usage": {"input_tokens": 1, "output_tokens": 1}}},
            {"type": "content_block_start", "index": 0, "content_block": {
                "type": "tool_use", "id": "toolu_deep", "name": "nest", "input": {}}}]
        payloads += [{"type": "content_block_delta", "index": 0,
                      "delta": {"type": "input_json_delta", "partial_json": f}}
                     for f in fragments]
        payloads += [{"type": "content_block_stop", "index": 0},
                     {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                      "usage": {"output_tokens": 9}},
                     {"type": "message_stop"}]
        body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    else:
        def chunk(delta: dict, finish: str | None = None) -> str:
            return "data: " + json.dumps({
                "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "x",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"
        chunks = [chunk({"role": "assistant", "tool_calls": [{
            "index": 0, "id": "call_deep", "type": "function",
            "function": {"name": "nest", "arguments": ""}}]})]
        chunks += [chunk({"tool_calls": [{"index": 0, "function": {"arguments": f}}]})
                   for f in fragments]
        chunks += [chunk({}, "tool_calls"), "data: [DONE]\n\n"]
        body = "".join(chunks)
    return from_bytes(body.encode(), name=f"deep-{wire}", sidecar={"wire": wire})


def _same(a, b) -> bool:
    """Deep equality with an explicit stack (``==`` on 5,000 levels would recurse)."""
    todo = [(a, b)]
    while todo:
        x, y = todo.pop()
        if x is y:
            continue
        if type(x) is not type(y):
            return False
        if type(x) is dict:
            if list(x) != list(y):
                return False
            todo += [(x[k], y[k]) for k in x]
        elif type(x) is list:
            if len(x) != len(y):
                return False
            todo += list(zip(x, y, strict=True))
        elif x != y:
            return False
    return True


def _depth(value) -> int:
    """How many lists nest in ``[[[...]]]`` (0 for anything else)."""
    n = 0
    while type(value) is list:
        n += 1
        value = value[0] if value else None
    return n


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_deep_tool_input_works_at_any_index(wire):
    capture = _deep_capture(wire)
    truth = accumulate(capture)
    assert truth.complete and not truth.diagnostics
    history = History(capture, every=64)
    n = len(history)
    sample = sorted({0, 1, 2, n - 3, n - 2, n - 1, n, *range(0, n + 1, 37)})
    order = sample + sample[::-1] + random.Random(5).sample(sample, len(sample))
    # Events before the first fragment; the event count once the call has ended.
    start, ends = (2, n - 2) if wire == "anthropic-messages" else (1, n - 1)
    for k in order:                   # forward, backward (from checkpoints), and jumps
        snap = history.at(k)
        assert snap.index == k and len(snap.tool_calls) == (k >= start)
        if k < start:
            continue
        view = snap.tool_calls[0]
        chars = min((k - start) * 20, 2 * DEPTH)
        opened, closed = min(chars, DEPTH), max(0, chars - DEPTH)
        assert view.raw_length == chars and _depth(view.value) == opened
        if chars == 2 * DEPTH:
            assert view.open_path is None
        elif opened:
            assert len(view.open_path) == opened - 1 - closed
        assert view.state == ("complete" if k >= ends else "forming")
    end = history.end()
    assert _same(end.final, truth.final) and end.complete and end.diagnostics == []
    [call] = end.tool_calls
    assert call.state == "complete" and _depth(call.value) == DEPTH
    if wire == "anthropic-messages":
        assert _same(call.value, truth.final["content"][0]["input"])
    else:
        args = truth.final["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
        assert args == "[" * DEPTH + "]" * DEPTH and call.raw == args
    # Checkpoints stayed cheap: one copy per `every` events walked, plus the jumps.
    assert history.copies <= n // 64 + 1 + len(order) + 1


def test_deep_checkpoints_share_the_ended_input():
    capture = _deep_capture("anthropic-messages", depth=2_000)
    history = History(capture, every=1)       # a checkpoint at every index
    n = len(history)
    first = history.at(n).final["content"][0]["input"]
    history.at(n - 2)                          # back to a checkpoint after the block stop
    again = history.at(n).final["content"][0]["input"]
    assert again is first and _depth(first) == 2_000     # shared, never copied
    assert history.end().tool_calls[0].value is first


def _call_signature(views) -> list:
    """Everything a view says (the value compared without recursion into == limits)."""
    return [(v.name, v.call_id, v.kind, v.address, v.state, json.dumps(v.value, default=repr),
             v.open_path, [(c.path, c.op, c.value) for c in v.changes], v.raw, v.raw_length,
             v.fragments, v.error, v.structured, v.was_cut, v.ended, v.start_t, v.start_event,
             v.last_t, v.last_event, v.end_event, sorted(map(repr, v.settled)))
            for v in views]


def _fresh_calls(capture, k: int, ended: bool = False) -> list:
    acc = accumulator_for(capture.wire)
    for event in parse_all(capture.events)[:k]:
        acc.feed(event)
    if ended:
        acc.finish(capture.sse_diagnostics if k == len(capture.events) else ())
    return _call_signature(acc.tool_calls())


@pytest.mark.parametrize("name", ["anthropic-messages/text-then-tool",
                                  "openai-chat/parallel-tools-interleaved",
                                  "openai-responses/parallel-function-calls"])
def test_snapshot_tool_calls_equal_a_fresh_accumulation(name):
    from lesson_lib.capture.captures import load
    capture = load(name, search_reference=False)
    history = History(capture, every=4)
    n = len(history)
    kept = {}
    order = list(range(n + 1))
    random.Random(11).shuffle(order)
    for k in order + list(range(n + 1)):
        snap = history.at(k)
        kept[k] = snap.tool_calls
        assert _call_signature(snap.tool_calls) == _fresh_calls(capture, k), k
    for k, views in kept.items():           # views taken earlier are still right afterwards
        assert _call_signature(views) == _fresh_calls(capture, k), k
    end = history.end()
    assert _call_signature(end.tool_calls) == _fresh_calls(capture, n, ended=True)
    assert any(v.state == "complete" for v in end.tool_calls)
    assert all(v.ended for v in end.tool_calls)
    assert end.final == accumulate(capture).final
    # The ended state is made once: asking again copies nothing.
    copies = history.copies
    assert _call_signature(history.end().tool_calls) == _call_signature(end.tool_calls)
    assert history.copies == copies


# -- checkpoints share the append-only logs -------------------------------------------------


def _text_and_args_capture(n: int):
    """Anthropic: `n` text deltas, then `n` argument deltas of one tool call, cut."""
    payloads = [{"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
        "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}]
    payloads += [{"type": "content_block_delta", "index": 0,
                  "delta": {"type": "text_delta", "text": f"w{i} "}} for i in range(n)]
    payloads += [{"type": "content_block_stop", "index": 0},
                 {"type": "content_block_start", "index": 1, "content_block": {
                     "type": "tool_use", "id": "t", "name": "f", "input": {}}},
                 {"type": "content_block_delta", "index": 1,
                  "delta": {"type": "input_json_delta", "partial_json": '{"k": ['}}]
    payloads += [{"type": "content_block_delta", "index": 1,
                  "delta": {"type": "input_json_delta", "partial_json": f"{i}, "}}
                 for i in range(n)]
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return from_bytes(body.encode(), name=f"text-args-{n}",
                      sidecar={"wire": "anthropic-messages"})


def _walk_peak(n: int) -> int:
    """Peak traced memory of a first jump to the end (the events parsed beforehand).

    Text only: a forming call's parser still copies its open containers at each
    checkpoint (a long open array or string is copied whole)."""
    text_only = _text_and_args_capture(n).body.split(b"event: content_block_stop")[0]
    history = History(from_bytes(text_only, sidecar={"wire": "anthropic-messages"}), every=16)
    tracemalloc.start()
    try:
        history.at(len(history))
        history.end()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_checkpoints_cost_memory_linear_in_the_stream():
    # A copied fragment list per checkpoint grows as n squared: 3.1x here before sharing.
    small, large = _walk_peak(4_000), _walk_peak(8_000)
    assert large / small < 2.4, (small, large)


def test_scrubbing_after_reads_keeps_every_checkpoint_right():
    # Reading text joins a live log; once checkpoints share it, they must still see
    # their own prefix, and a cursor restored from one must not write into it.
    capture = _text_and_args_capture(40)
    history = History(capture, every=4)
    expected = _straight_states(capture)
    rng = random.Random(11)
    for _ in range(3):
        for k in range(0, len(history) + 1, 3):
            snap = history.at(k)
            assert (snap.final, snap.slots, [d.as_dict() for d in snap.diagnostics],
                    snap.complete) == expected[k], k
        for _ in range(60):
            k = rng.randrange(len(history) + 1)
            snap = history.at(k)
            assert snap.final == expected[k][0] and snap.slots == expected[k][1], k


def test_a_checkpoint_shares_a_calls_fragments_and_a_copy_of_it_goes_on_alone():
    call = ToolCall("f", "c")
    for piece in ('{"k": ', '"ab', 'c"'):
        call.feed(piece)
    frozen = checkpoint(call)
    assert frozen._parts is call._parts                 # shared, not copied
    call.feed("}")
    call.end()
    thawed = copy.deepcopy(frozen)
    assert thawed.raw == '{"k": "abc"' and thawed.fragments == 3
    thawed.feed(', "n": 1}')
    thawed.end()
    assert thawed.value == {"k": "abc", "n": 1} and call.value == {"k": "abc"}
    assert call.raw == '{"k": "abc"}'


def test_the_history_keeps_what_each_event_changed():
    capture = load("anthropic-messages/text-then-tool")
    history = History(capture, every=4)
    fresh = accumulator_for(capture.wire, capture.request)
    expected = [fresh.feed(ev) for ev in parse_all(capture.events)]
    history.at(len(history))
    history.at(2)                      # a rewind feeds again: the changes are kept once
    assert [history.changes_of(i) for i in range(len(history))] == expected
    assert history.at(3).changes == tuple(expected[2])
    end = history.end()
    assert end.changes == (*expected[-1], *fresh.finish(capture.sse_diagnostics))
    assert history.at(0).changes == ()
