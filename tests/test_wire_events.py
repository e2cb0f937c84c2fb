"""The payload station: strict JSON, and no input that makes it raise."""

from __future__ import annotations

import json
import re

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.captures import from_bytes
from lesson_lib.event_table import event_table
from lesson_lib.sse import ServerSentEvent
from lesson_lib.wire_events import parse_payload

WIRE = {"wire": "anthropic-messages"}
MS = {"type": "message_start", "message": {
    "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
    "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}


def body(*payloads: str) -> bytes:
    out = []
    for text in payloads:
        name = re.match(r'\{"type": ?"(\w+)"', text).group(1)
        out.append(f"event: {name}\ndata: {text}\n\n")
    return "".join(out).encode()


def deep_tool_start(depth: int) -> str:
    return ('{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
            '"id":"t","name":"f","input":' + "[" * depth + "]" * depth + "}}")


@pytest.mark.parametrize("depth", [1_000, 10_000])
def test_a_payload_nested_deeper_than_the_reader_is_a_parse_error_not_a_crash(depth):
    ev = parse_payload(ServerSentEvent(None, deep_tool_start(depth)))
    assert ev.payload is None and "nested too deeply" in ev.parse_error
    cap = from_bytes(body(json.dumps(MS), deep_tool_start(depth)), sidecar=WIRE)
    assert not accumulate(cap).complete
    assert len(event_table(cap)) == 2


@pytest.mark.parametrize(("data", "says"), [
    ('{"type": "x", "v": NaN}', "NaN"),
    ('{"type": "x", "v": -Infinity}', "Infinity"),
    ('{"type": "x", "v": 1e999}', "too large"),
    ('{"type": "x", "a": 1, "a": 2}', "'a' appears twice"),
    ('{"type": "x", "inner": {"b": 1, "b": 1}}', "'b' appears twice"),
])
def test_payloads_are_strict_json(data, says):
    ev = parse_payload(ServerSentEvent("x", data))
    assert ev.payload is None and says in ev.parse_error


def test_strict_json_still_reads_what_is_json():
    ev = parse_payload(ServerSentEvent(None, '{"type": "x", "v": [1.5e300, -0.0, 2], "w": {}}'))
    assert ev.parse_error is None and ev.payload["v"] == [1.5e300, -0.0, 2]
