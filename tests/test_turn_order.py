"""The order checker on its own: legal turns pass, hand-made violations are named."""

from __future__ import annotations

from dataclasses import replace

import pytest

from lesson_lib.turn.events import (
    BlockDelta,
    BlockEnded,
    BlockStarted,
    Finish,
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
    return [TurnStarted(0, turn="t"), StepStarted(1, step=1, wire="anthropic-messages"),
            BlockStarted(2, block="s1.b0", step=1, block_kind="text"),
            BlockDelta(3, block="s1.b0", fragment="Hi"),
            BlockEnded(4, block="s1.b0"),
            BlockStarted(5, block="s1.b1", step=1, block_kind="tool_call", name="f",
                         call_id="c"),
            BlockEnded(6, block="s1.b1"),
            ToolCallReady(7, block="s1.b1", name="f", call_id="c", input={}),
            ToolExecutionStarted(8, block="s1.b1", call_id="c", name="f"),
            StepFinished(9, step=1, ended="proper", finish=Finish("tool_calls")),
            ToolExecutionFinished(10, block="s1.b1", call_id="c", status="ok"),
            StepStarted(11, step=2, wire="anthropic-messages"),
            # A turn is completed only over a finish the reader knows (`turn.ends`).
            StepFinished(12, step=2, ended="proper", finish=Finish("stop")),
            TurnFinished(13, outcome="completed")]


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
    (lambda ev: ev + [BlockStarted(0, block="s1.b7", step=1, block_kind="text")], "event_out_of_turn"),
    # a block started twice
    (lambda ev: ev[:3] + [BlockStarted(0, block="s1.b0", step=1, block_kind="text")] + ev[3:], "duplicate_block"),
    # a step that ends with a block open
    (lambda ev: ev[:4] + ev[9:10], "unended_block"),
    # a call run before it was ready
    (lambda ev: ev[:7] + ev[8:], "bad_transition"),
    # the turn finishes while a tool still runs
    (lambda ev: ev[:10] + [TurnFinished(0, outcome="completed")], "tool_still_running"),
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
    assert checker.feed(StepStarted(0, step=1, wire="openai-chat")) == []
    found = checker.feed(BlockEnded(1, block="nope"))
    assert [d.code for d in found] == ["outside_block"] and found[0].index == 1


def test_a_delta_before_its_block_started_says_to_start_the_block_first():
    events = legal()
    events = events[:2] + [BlockDelta(0, block="s1.b2", fragment="x")] + events[2:]
    found = [d for d in check(renumbered(events)) if d.code == "outside_block"]
    assert [d.message for d in found] == [
        "`block_delta` for s1.b2 before its `block_started`: start the block first, "
        "or check the adapter's block ids"]


@pytest.mark.parametrize("edit, code, fix", [
    (lambda ev: ev[:5] + [BlockDelta(0, block="s1.b0", fragment="x")] + ev[5:],
     "outside_block", "before the block ends, or start a new block"),
    (lambda ev: ev[:5] + [BlockEnded(0, block="s1.b0")] + ev[5:], "second_end",
     "end each block once"),
    (lambda ev: ev + [BlockStarted(0, block="s1.b7", step=1, block_kind="text")],
     "event_out_of_turn", "the turn's last event is its finish"),
    (lambda ev: ev[:3] + [BlockStarted(0, block="s1.b0", step=1, block_kind="text")] + ev[3:],
     "duplicate_block", "give each block a new id"),
    (lambda ev: ev[:4] + ev[9:10], "unended_block", "end every block of the step first"),
    (lambda ev: ev[:7] + ev[8:], "bad_transition",
     "`tool_execution_started` for s1.b1 while it is ended: it must be ready first "
     "(`tool_call_ready`)"),
    (lambda ev: ev[:7] + ev[9:], "unresolved_call", "say `tool_call_ready` or "
     "`tool_call_invalid`"),
    (lambda ev: ev[:10] + [TurnFinished(0, outcome="completed")], "tool_still_running",
     "finish each tool"),
    (lambda ev: ev[1:], "event_out_of_turn", "`step_started` before `turn_started`: start "
     "the turn first"),
    (lambda ev: ev[:2] + [StepStarted(0, step=2, wire="openai-chat")] + ev[2:],
     "event_out_of_turn", "finish the step first (`step_finished`)"),
    (lambda ev: ev[:9] + [BlockDelta(0, block="s1.b0", fragment="x")] + ev[9:10] + ev[11:],
     "outside_block", "after its `block_ended`"),
    (lambda ev: ev[:12], "turn_not_finished", "finish the turn with `turn_finished`"),
    (lambda ev: ev[:4] + [ToolCallReady(0, block="s1.b0", name="f", call_id="c")] + ev[4:],
     "not_a_tool_call", "only a block started with block_kind tool_call"),
])
def test_each_violation_says_what_to_do(edit, code, fix):
    messages = [d.message for d in check(renumbered(edit(legal()))) if d.code == code]
    assert messages and any(fix in m for m in messages), messages


def test_an_out_of_order_seq_says_how_to_number_the_turn():
    events = legal()
    events[4] = replace(events[4], seq=40)
    found = [d.message for d in check(events) if d.code == "seq_order"]
    assert found and "share one `Counter`" in found[0]
