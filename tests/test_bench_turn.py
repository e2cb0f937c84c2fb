"""The turn bench's own check: both sides end with the same content, on every case."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
try:
    import bench_turn
finally:
    sys.path.pop(0)


@pytest.mark.parametrize("case", bench_turn.CASES, ids=[c[0] for c in bench_turn.CASES])
def test_ours_and_the_sdk_end_with_the_same_content(case):
    name, wire, build, unit, _, _ = case
    body = build(3_000 if unit == "bytes" else 40)
    state = bench_turn._ours(body, wire)()
    final = bench_turn._sdk(bench_turn._capture(body, wire))()
    assert state.outcome == "completed" and len(state.blocks) == 1
    assert bench_turn._same_result(wire, state, final)


def test_the_check_sees_a_different_text():
    body = bench_turn.anthropic_text(40)
    state = bench_turn._ours(body, "anthropic-messages")()
    other = bench_turn._sdk(bench_turn._capture(bench_turn.anthropic_text(41),
                                                "anthropic-messages"))()
    assert not bench_turn._same_result("anthropic-messages", state, other)


def test_the_tool_input_has_the_size_asked_and_arrives_in_fragments():
    body = bench_turn.anthropic_tool_bytes(5_000, fragment=100)
    payloads = [json.loads(line[6:]) for line in body.decode().splitlines()
                if line.startswith("data: ")]
    fragments = [p["delta"]["partial_json"] for p in payloads
                 if p["type"] == "content_block_delta"]
    value = json.loads("".join(fragments))
    assert len(value["text"]) == 5_000
    assert all(len(f) == 100 for f in fragments[:-1])
