"""`validate` (``lesson-lib check``): what it keeps from the SDK's replay stays linear."""

from __future__ import annotations

import json
import tracemalloc

from lesson_lib.capture import replay
from lesson_lib.capture.captures import from_bytes
from lesson_lib.cli.validate import validate


def _text_capture(n: int, claims: dict | None = None):
    """An Anthropic capture of `n` text deltas, ended properly (`claims`: its ``sdk``)."""
    head = [{"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0,
         "content_block": {"type": "text", "text": ""}}]
    deltas = [{"type": "content_block_delta", "index": 0,
               "delta": {"type": "text_delta", "text": f"w{i} "}} for i in range(n)]
    tail = [{"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
             "usage": {"output_tokens": n}},
            {"type": "message_stop"}]
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n"
                   for p in head + deltas + tail)
    sidecar = {"wire": "anthropic-messages"}
    if claims is not None:
        sidecar["sdk"] = claims
    return from_bytes(body.encode(), name=f"text-{n}", sidecar=sidecar)


def _check_peak(n: int) -> int:
    capture = _text_capture(n)
    validate(_text_capture(1))           # the SDK's imports are not part of the figure
    tracemalloc.start()
    try:
        validate(capture)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_check_memory_is_linear_in_the_text_deltas():
    # Every SDK event kept, each with a snapshot of the whole text: 3.5x here before.
    small, large = _check_peak(4_000), _check_peak(8_000)
    assert large / small < 2.4, (small, large)


def test_without_events_the_replay_keeps_what_the_check_compares():
    capture = _text_capture(50)
    full, lean = replay.run_sdk(capture), replay.run_sdk(capture, keep_events=False)
    assert lean.events == [] and lean.event_count == len(full.events) > 50
    assert lean.text == full.text == "".join(f"w{i} " for i in range(50))
    assert lean.final.model_dump() == full.final.model_dump()


def test_the_text_claim_is_still_compared():
    text = "".join(f"w{i} " for i in range(20))
    mismatch = "the SDK's text projection differs from the sidecar's"
    assert mismatch not in validate(_text_capture(20, {"raises": None, "text": text})).problems
    assert mismatch in validate(_text_capture(20, {"raises": None, "text": text + "!"})).problems
