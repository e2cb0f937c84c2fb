"""The order checker on its own: legal turns pass, hand-made violations are named."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lesson_lib.turn.events import (
    BlockDelta,
    BlockEnded,
    BlockStarted,
    StepFinished,
    StepStarted,
    ToolCallReady,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnFinished,
    TurnStarted,
)
from lesson_lib.turn.order import BLOCK_TABLE, TURN_TABLE, OrderChecker, check


def legal() -> list:
    return [TurnStarted(0), StepStarted(1),
            BlockStarted(2, block="s1.b0"),
            BlockDelta(3, block="s1.b0", fragment="Hi"),
            BlockEnded(4, block="s1.b0"),
            BlockStarted(5, block="s1.b1", block_kind="tool_call", name="f", call_id="c"),
            BlockEnded(6, block="s1.b1"),
            ToolCallReady(7, block="s1.b1", call_id="c", input={}),
            ToolExecutionStarted(8, block="s1.b1", call_id="c"),
            StepFinished(9),
            ToolExecutionFinished(10, block="s1.b1", call_id="c"),
            StepStarted(11, step=2),
            StepFinished(12, step=2),
            TurnFinished(13)]


def renumbered(events: list) -> list:
    return [replace(e, seq=i) for i, e in enumerate(events)]


def codes(events: list) -> list[str]:
    return [d.code for d in check(renumbered(events))]


def test_a_legal_turn_passes():
    assert check(legal()) == []


def test_tables_are_transition_tables():
    assert all(isinstance(k, tuple) and len(k) == 2 for k in {**TURN_TABLE, **BLOCK_TABLE})
    assert TURN_TABLE[("between steps", "step_started")] == "in a step"


@pytest.mark.parametrize("edit, code", [
    # a delta outside its block: after its end
    (lambda ev: ev[:5] + [BlockDelta(0, block="s1.b0", fragment="x")] + ev[5:], "outside_block"),
    # a delta for a block that never started
    (lambda ev: ev[:3] + [BlockDelta(0, block="s1.b9", fragment="x")] + ev[3:], "outside_block"),
    # a second end
    (lambda ev: ev[:5] + [BlockEnded(0, block="s1.b0")] + ev[5:], "second_end"),
    # an event after the turn finished
    (lambda ev: ev + [BlockStarted(0, block="s1.b7")], "event_out_of_turn"),
    # a block started twice
    (lambda ev: ev[:3] + [BlockStarted(0, block="s1.b0")] + ev[3:], "duplicate_block"),
    # a step that ends with a block open
    (lambda ev: ev[:4] + ev[9:10], "unended_block"),
    # a call run before it was ready
    (lambda ev: ev[:7] + ev[8:], "bad_transition"),
    # the turn finishes while a tool still runs
    (lambda ev: ev[:10] + [TurnFinished(0)], "tool_still_running"),
    # an event before the turn started
    (lambda ev: ev[1:], "event_out_of_turn"),
])
def test_violations_are_reported(edit, code):
    assert code in codes(edit(legal()))


def test_seq_must_count_up_by_one():
    events = legal()
    events[4] = replace(events[4], seq=40)
    assert "seq_order" in [d.code for d in check(events)]


def test_feed_returns_the_violations_of_each_event_and_never_raises():
    checker = OrderChecker(whole_turn=False)
    assert checker.feed(StepStarted(0)) == []
    found = checker.feed(BlockEnded(1, block="nope"))
    assert [d.code for d in found] == ["outside_block"] and found[0].index == 1
