"""What the two session accumulators share (lesson 7, `accumulate.sessions`): an event
delivered again dropped by its id, an unreadable event leaving the turn incomplete, an
unknown event type handed on, and a stream cut with a slot open, each read the same way
by both wires, in the words each wire passes in."""

from __future__ import annotations

import json

import pytest
from session_checks import inline_capture

from lesson_lib.accumulate.changes import SlotClosed, StreamEnded, UnknownEvent
from lesson_lib.accumulate.managed_agents import ManagedAgentsAccumulator
from lesson_lib.accumulate.openai_sessions import OpenAISessionsAccumulator
from lesson_lib.capture.captures import from_bytes
from lesson_lib.wires import managed_agents as ma
from lesson_lib.wires import openai_sessions as oas
from lesson_lib.wires.wire_events import parse_all

# Per wire: its accumulator, an event with an id, and an open slot the stream then cuts.
WIRES = {
    ma.WIRE: (ManagedAgentsAccumulator,
              {"type": ma.USER_MESSAGE, "id": "u1", "content": []},
              [{"type": ma.EVENT_START, "event": {"type": ma.AGENT_MESSAGE, "id": "m1"}},
               {"type": ma.EVENT_DELTA, "event_id": "m1",
                "delta": {"type": ma.CONTENT_DELTA, "index": 0,
                          "content": {"type": ma.TEXT_BLOCK, "text": "Half"}}}],
              "agent.message) was still a preview", ma.SESSION_IDLE),
    oas.WIRE: (OpenAISessionsAccumulator,
               {"type": oas.SESSION_IN_PROGRESS, "event_id": "e1",
                "session": {"id": "s", "status": "in_progress"}},
               [{"type": oas.OUTPUT_TEXT_DELTA, "event_id": "e2", "item_id": "msg_1",
                 "output_index": 0, "content_index": 0, "delta": "Half"}],
               "output_text) was still open",
               "the session went idle or stopped to wait"),
}


def _read(wire: str, body: bytes) -> tuple[object, list]:
    acc = WIRES[wire][0]()
    changes = []
    for event in parse_all(from_bytes(body, name="inline", sidecar={"wire": wire}).events):
        changes += acc.feed(event)
    changes += acc.finish()
    return acc, changes


def _sse(*payloads: dict) -> bytes:
    return inline_capture(ma.WIRE, *payloads).body


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_an_event_delivered_again_is_dropped_by_its_id_as_a_warning(wire):
    event = WIRES[wire][1]
    acc, _ = _read(wire, _sse(event, event))
    [again] = [d for d in acc.diagnostics if d.code == "duplicate_event"]
    assert again.severity == "warning" and "delivered again; dropped" in again.message


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_an_unreadable_event_leaves_the_turn_incomplete_and_keeps_its_data(wire):
    acc, changes = _read(wire, _sse(WIRES[wire][1]) + b"event: x\ndata: {not json\n\n")
    [bad] = [d for d in acc.diagnostics if d.code == "unparseable_json"]
    assert bad.raw == "{not json" and acc.damaged and not acc.complete
    assert changes[-1] == StreamEnded(None, False, "cut")


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_an_event_type_that_is_no_string_is_handed_on_without_a_type(wire):
    acc, changes = _read(wire, f"data: {json.dumps({'type': 7})}\n\n".encode())
    assert [c.event_type for c in changes if isinstance(c, UnknownEvent)] == [None]
    [unknown] = [d for d in acc.diagnostics if d.code == "unknown_event"]
    assert "event type 7 is not part of the session stream" in unknown.message


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_a_stream_cut_with_a_slot_open_closes_it_as_never_stopped(wire):
    _, _, opened, still, ended_by = WIRES[wire]
    acc, changes = _read(wire, _sse(*opened))
    [open_slot] = [d for d in acc.diagnostics if d.code == "block_never_stopped"]
    assert still in open_slot.message and open_slot.severity == "error"
    [closed] = [c for c in changes if isinstance(c, SlotClosed)]
    assert closed.synthesised and closed.event is None
    [no_end] = [d for d in acc.diagnostics if d.code == "no_terminal"]
    assert f"the stream ended before {ended_by}:" in no_end.message
    assert acc.finish() == []      # finishing again changes nothing
