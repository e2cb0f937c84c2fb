"""A compatible Responses server that gives every event fresh ids is read by output_index.

The response's id changes on every lifecycle event and each item's ``item_id`` on
every event, while ``output_index`` stays put (`captures/openai-responses/rotating-ids`).
Every character arrives, so the turn ends as the stream did: ``completed``, with one
``rotating_ids`` warning. An id that names *another* announced item is still a
protocol error: that is an event addressed to the wrong place, not a fresh id.
"""

from __future__ import annotations

import contextlib
import io
import json

from lesson_lib.accumulate import accumulate
from lesson_lib.accumulate.responses import ResponsesAccumulator
from lesson_lib.capture import captures
from lesson_lib.cli.commands import main
from lesson_lib.turn.run import turn_state
from lesson_lib.wires.wire_events import parse_all

NAME = "openai-responses/rotating-ids"


def test_the_capture_rotates_every_id():
    cap = captures.load(NAME)
    payloads = [e.payload for e in parse_all(cap.events)]
    responses = [p["response"]["id"] for p in payloads if "response" in p]
    items = [p.get("item_id") or p["item"]["id"] for p in payloads
             if "item_id" in p or "item" in p]
    assert len(set(responses)) == len(responses) >= 3
    assert len(set(items)) == len(items) > 20


def test_the_turn_completes_with_every_character_and_one_warning():
    cap = captures.load(NAME)
    state = turn_state(cap)
    assert state.outcome == "completed"
    assert not state.errors
    final = accumulate(cap).final
    reasoning, message = final["output"]
    assert [b.text for b in state.blocks] == [reasoning["summary"][0]["text"],
                                             message["content"][0]["text"]]
    assert "35 minutes" in state.blocks[1].text
    codes = [d.code for d in accumulate(cap).diagnostics]
    assert codes.count("rotating_ids") == 1
    assert all(d.severity != "error" for d in accumulate(cap).diagnostics)


def test_final_and_turn_exit_0():
    for command in ("final", "turn"):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert main([command, NAME]) == 0, command


def _fed(payloads: list[dict]) -> ResponsesAccumulator:
    from lesson_lib.capture.captures import from_bytes

    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()
    cap = from_bytes(body, name="t", sidecar={"wire": "openai-responses"})
    acc = ResponsesAccumulator()
    for ev in parse_all(cap.events):
        acc.feed(ev)
    acc.finish()
    return acc


def test_an_id_naming_another_announced_item_is_still_an_error():
    resp = {"id": "resp_1", "object": "response", "status": "in_progress", "output": []}
    msg = {"id": "msg_a", "type": "message", "status": "in_progress", "role": "assistant",
           "content": []}
    payloads = [
        {"type": "response.created", "response": resp},
        {"type": "response.output_item.added", "output_index": 0, "item": msg},
        {"type": "response.output_item.added", "output_index": 1, "item": {**msg, "id": "msg_b"}},
        {"type": "response.content_part.added", "output_index": 0, "item_id": "msg_b",
         "content_index": 0, "part": {"type": "output_text", "text": "", "annotations": []}},
    ]
    acc = _fed(payloads)
    codes = {d.code: d.severity for d in acc.diagnostics}
    assert codes.get("unknown_slot") == "error"
    assert "rotating_ids" not in codes
