"""The Gemini and Bedrock turn bench's own checks: its streams are what they say, and both
sides end with the same text on every case (so the times compare the same work)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lesson_lib.capture import captures
from lesson_lib.sse import eventstream
from lesson_lib.wires.wire_events import parse_all

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
try:
    import bench_turn_wires as bench
finally:
    sys.path.pop(0)


@pytest.mark.parametrize("case", bench.CASES, ids=[c[0] for c in bench.CASES])
def test_ours_and_the_sdk_end_with_the_same_text(case):
    name, wire, build, unit, _, _ = case
    body = build(60)
    state = bench._ours(body, wire)()
    assert state.outcome == "completed" and len(state.blocks) == 1
    assert bench._text(state) == bench._sdk(body, wire)() != ""


@pytest.mark.parametrize("case", bench.CASES, ids=[c[0] for c in bench.CASES])
def test_the_streams_are_the_size_asked_and_check_clean(case):
    name, wire, build, unit, _, _ = case
    capture = captures.from_bytes(build(50), sidecar={"wire": wire})
    assert capture.wire == wire
    events = parse_all(capture.events)
    kinds = [e.type for e in events]
    wanted = {"google-gemini": 50, "aws-bedrock-converse": 50 + 4, "aws-bedrock-invoke": 50 + 5,
              "google-gemini-interactions": 50 + 5}
    assert len(kinds) == wanted[wire], kinds[:6]
    if wire in ("aws-bedrock-converse", "aws-bedrock-invoke"):
        frames, problems = eventstream.decode(capture.body)
        assert len(frames) == len(kinds) and problems == []


def test_the_check_sees_a_different_text():
    ours = bench._text(bench._ours(bench.converse_text_bytes(40), "aws-bedrock-converse")())
    sdk = bench._sdk(bench.converse_text_bytes(41), "aws-bedrock-converse")()
    assert ours != sdk
