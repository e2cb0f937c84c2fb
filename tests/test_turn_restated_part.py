"""A part the server restates replaces only its own text in its block.

A Responses reasoning item is one block, its summary parts' text joined. When one
part's deltas disagree with its ``reasoning_summary_text.done`` (an event lost on the
way), the server's text wins for that part; the other parts, which arrived intact, stay.
"""

from __future__ import annotations

import json

import pytest

from lesson_lib.capture import captures
from lesson_lib.capture.captures import Capture, from_bytes
from lesson_lib.turn.run import turn_state
from lesson_lib.wires import responses as r

NAME = "openai-responses/reasoning-summary"


def without(cap: Capture, *indexes: int) -> Capture:
    """The capture with the events at `indexes` lost on the way."""
    body = cap.body
    for i in sorted(indexes, reverse=True):
        sse = cap.events[i]
        body = body[:sse.start] + body[sse.end:]
    return from_bytes(body, name=f"{cap.name}.dropped", sidecar={"wire": cap.wire})


def summary_deltas(cap: Capture) -> dict[int, list[int]]:
    """Summary part index -> the indexes of its text deltas."""
    parts: dict[int, list[int]] = {}
    for i, sse in enumerate(cap.events):
        if sse.event == r.REASONING_SUMMARY_TEXT_DELTA:
            parts.setdefault(json.loads(sse.data)["summary_index"], []).append(i)
    return parts


def reasoning(cap: Capture):
    state = turn_state(cap)
    [block] = [b for b in state.blocks if b.kind == "reasoning"]
    return state, block


def test_the_capture_has_two_summary_parts():
    cap = captures.load(NAME)
    assert len(summary_deltas(cap)) >= 2


@pytest.mark.parametrize("part", [0, 1])
def test_one_part_restated_keeps_the_others(part):
    cap = captures.load(NAME)
    _, whole = reasoning(cap)
    deltas = summary_deltas(cap)[part]
    state, block = reasoning(without(cap, deltas[len(deltas) // 2]))
    assert block.restated
    assert block.text == whole.text        # the lost delta restored, the other part kept
    assert state.outcome == "failed"       # the deltas and the server disagreed: an error


def test_the_issue_example_keeps_checking_the_intuitive_answer():
    cap = captures.load(NAME)
    assert cap.body.count(b"Checking the intuitive") == 4
    state, block = reasoning(without(cap, 29))
    assert "Checking the intuitive" in block.text
    assert "Setting up the equation" in block.text


def test_both_parts_restated():
    cap = captures.load(NAME)
    _, whole = reasoning(cap)
    parts = summary_deltas(cap)
    _, block = reasoning(without(cap, parts[0][3], parts[1][3]))
    assert block.text == whole.text
