"""What the Responses accumulator's `feed` and `finish` return: its changes, rule by rule.

The fold property test (tests/test_accumulate_fold.py) checks on every
capture that the changes rebuild `slots()` and `tool_calls()`; these tests
name the changes themselves, and that they stay linear.
"""

from __future__ import annotations

import json

from lesson_lib.accumulate import changes as ch
from lesson_lib.accumulate.fragments import Fragments
from lesson_lib.accumulate.responses import ResponsesAccumulator
from lesson_lib.accumulate.responses.objects import Item
from lesson_lib.capture.captures import from_bytes, load
from lesson_lib.wires.wire_events import parse_all


def _changes(capture):
    acc = ResponsesAccumulator()
    per_event = [acc.feed(e) for e in parse_all(capture.events)]
    return acc, per_event, acc.finish(capture.sse_diagnostics)


def _kinds(changes):
    return [c.kind for c in changes if c.kind != "diagnostic_noted"]


def test_a_function_call_opens_grows_ends_at_its_arguments_done_and_closes_with_its_item():
    acc, per_event, end = _changes(load("openai-responses/function-call"))
    flat = [c for cs in per_event for c in cs]
    opened = [c for c in flat if isinstance(c, ch.SlotOpened) and c.slot_kind == "function_call"]
    assert len(opened) == 1 and opened[0].takes_input and opened[0].name == "create_event"
    address = opened[0].address
    grew = [c for c in flat if isinstance(c, ch.ToolInputGrew) and c.address == address]
    final = acc.final()["output"][address[0]]
    assert "".join(c.fragment for c in grew) == final["arguments"]
    assert any(c.json_changes for c in grew)         # the partial-JSON changes ride along
    closes = [c for c in flat if isinstance(c, ch.SlotClosed) and c.address == address]
    assert [c.how for c in closes] == ["arguments_done", "done"]
    assert closes[0].call_state == "complete" and closes[0].input == json.loads(
        final["arguments"])
    assert closes[1].data == final                     # the server's finished item
    assert _kinds(end) == ["stream_ended"] and end[-1].properly


def test_a_message_gives_way_to_its_part_and_text_arrives_as_fragments():
    acc, per_event, _ = _changes(load("openai-responses/text"))
    flat = [c for cs in per_event for c in cs]
    item_open = next(c for c in flat if isinstance(c, ch.SlotOpened) and c.slot_kind == "message")
    removed = next(c for c in flat if isinstance(c, ch.SlotRemoved))
    assert removed.address == item_open.address
    text = [c for c in flat if isinstance(c, ch.TextAppended)]
    assert len(text) > 1 and {c.channel for c in text} == {"text"}
    assert "".join(c.fragment for c in text) == acc.final()["output"][0]["content"][0]["text"]
    assert not any(isinstance(c, ch.SlotRestated) for c in flat)
    item_close = [c for c in flat if isinstance(c, ch.SlotClosed)
                  and c.address == item_open.address]
    assert len(item_close) == 1 and item_close[0].data["type"] == "message"
    terminal = [c for cs in per_event[-1:] for c in cs]
    assert [c.kind for c in terminal if c.kind in ("response_changed", "terminal_reached")] == \
        ["response_changed", "terminal_reached"]
    usage = next(c for c in terminal if isinstance(c, ch.ResponseChanged)).fields["usage"]
    assert usage == acc.final()["usage"]


def test_a_reasoning_items_end_carries_its_encrypted_content():
    acc, per_event, _ = _changes(load("openai-responses/reasoning-summary"))
    flat = [c for cs in per_event for c in cs]
    reasoning = [c for c in flat if isinstance(c, ch.SlotClosed) and c.how == "done"
                 and isinstance(c.data, dict) and c.data.get("type") == "reasoning"]
    assert reasoning and "encrypted_content" in reasoning[0].data


def _stream(*payloads) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def _item(kind="message", **kw):
    return {"id": "msg_1", "type": kind, "status": "in_progress", "role": "assistant",
            "content": [], **kw}


def test_text_restated_by_its_done_is_a_slot_restated():
    body = _stream(
        {"type": "response.output_item.added", "output_index": 0, "item": _item()},
        {"type": "response.content_part.added", "output_index": 0, "content_index": 0,
         "item_id": "msg_1", "part": {"type": "output_text", "text": "", "annotations": []}},
        {"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
         "item_id": "msg_1", "delta": "Helo"},
        {"type": "response.output_text.done", "output_index": 0, "content_index": 0,
         "item_id": "msg_1", "text": "Hello"})
    acc, per_event, end = _changes(from_bytes(body, sidecar={"wire": "openai-responses"}))
    assert [c for c in per_event[3] if isinstance(c, ch.SlotRestated)] == [
        ch.SlotRestated(3, (0, 0), content="Hello")]
    # Cut before any done: what is open is closed by `finish`, synthesised.
    closes = [c for c in end if isinstance(c, ch.SlotClosed)]
    assert {c.address for c in closes} == {(0,), (0, 0)}
    assert all(c.synthesised and c.how == "end_of_stream" for c in closes)
    assert end[-1] == ch.StreamEnded(None, False, "cut")


def test_an_error_event_is_an_in_band_error_with_its_code():
    acc, per_event, end = _changes(load("openai-responses/error-then-failed"))
    errors = [c for cs in per_event for c in cs if isinstance(c, ch.InBandError)]
    assert errors and errors[0].error_type
    assert end[-1].cause == "in_band_error"


def test_an_unknown_event_passes_through_as_a_change():
    body = _stream({"type": "response.something_new", "output_index": 0, "x": 1})
    _, per_event, _ = _changes(from_bytes(body, sidecar={"wire": "openai-responses"}))
    unknown = [c for c in per_event[0] if isinstance(c, ch.UnknownEvent)]
    assert unknown == [ch.UnknownEvent(0, "response.something_new",
                                       {"type": "response.something_new", "output_index": 0,
                                        "x": 1})]


def _counting(monkeypatch, cls, name, counts):
    """Count the reads of `cls.name` (a property or a method) in `counts[name]`."""
    real = cls.__dict__[name]
    if isinstance(real, property):
        def read(self):
            counts[name] += 1
            return real.fget(self)
        monkeypatch.setattr(cls, name, property(read))
    else:
        def call(self, *args, **kwargs):
            counts[name] += 1
            return real(self, *args, **kwargs)
        monkeypatch.setattr(cls, name, call)


def test_each_delta_is_one_change_and_feeding_never_rereads_what_arrived(monkeypatch):
    # Work that grows with the stream per delta (joining the text so far, building an
    # item) makes feeding quadratic. Counted, not timed: the whole text is read and the
    # item built as often for 1000 deltas as for 100 (at the dones and the end only).
    reads = []
    for n in (100, 1000):
        counts = {"text": 0, "build": 0, "built": 0}
        _counting(monkeypatch, Fragments, "text", counts)
        _counting(monkeypatch, Item, "build", counts)
        _counting(monkeypatch, Item, "built", counts)
        words = [f"w{i} " for i in range(n)]
        args = ['{"a": [', *(f"{i}, " for i in range(n)), "0]}"]
        body = _stream(
            {"type": "response.output_item.added", "output_index": 0, "item": _item()},
            {"type": "response.content_part.added", "output_index": 0, "content_index": 0,
             "item_id": "msg_1", "part": {"type": "output_text", "text": "", "annotations": []}},
            *({"type": "response.output_text.delta", "output_index": 0, "content_index": 0,
               "item_id": "msg_1", "delta": w} for w in words),
            {"type": "response.output_text.done", "output_index": 0, "content_index": 0,
             "item_id": "msg_1", "text": "".join(words)},
            {"type": "response.output_item.added", "output_index": 1,
             "item": {"id": "fc_1", "type": "function_call", "status": "in_progress",
                      "name": "f", "call_id": "c1", "arguments": ""}},
            *({"type": "response.function_call_arguments.delta", "output_index": 1,
               "item_id": "fc_1", "delta": a} for a in args),
            {"type": "response.function_call_arguments.done", "output_index": 1,
             "item_id": "fc_1", "arguments": "".join(args)})
        acc, per_event, _ = _changes(from_bytes(body, sidecar={"wire": "openai-responses"}))
        text = per_event[2:2 + n]
        calls = per_event[4 + n:6 + 2 * n]
        assert all(len(cs) == 1 and isinstance(cs[0], ch.TextAppended) for cs in text)
        assert all(len(cs) == 1 and isinstance(cs[0], ch.ToolInputGrew) for cs in calls)
        assert acc.tool_calls()[0].value == {"a": [*range(n), 0]}
        reads.append(counts)
        monkeypatch.undo()
    assert reads[0] == reads[1], reads
    assert reads[0]["build"] + reads[0]["built"] < 20 and reads[0]["text"] < 40, reads[0]


def test_an_annotation_is_a_citation_added_to_its_part():
    acc, per_event, _ = _changes(load("openai-responses/web-search"))
    cited = [c for cs in per_event for c in cs if isinstance(c, ch.CitationAdded)]
    message = next(i for i, o in enumerate(acc.final()["output"]) if o["type"] == "message")
    assert cited and all(c.address[0] == message for c in cited)
    assert [c.citation for c in cited] == \
        acc.final()["output"][message]["content"][cited[0].address[1]]["annotations"]
