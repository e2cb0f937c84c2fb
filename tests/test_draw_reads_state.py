"""The drawing reads the reducer's state: it does not fold the turn's events a third time.

`draw(state)` takes every fact of the turn (what began, each block's text,
sources and status, the tools running, the calls forming, the steps, what a
cancel stopped, the outcome) from the `TurnState`, through the readers the
reducer gives for what changed since a count. These tests hold the drawing to
that, and the readers to what the state's materialised views say.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.capture.captures import load
from lesson_lib.draw import Drawer, draw
from lesson_lib.draw.banner import turn_status
from lesson_lib.turn import initial, reduce
from lesson_lib.turn.closing import closing_events
from lesson_lib.turn.events import (
    BlockDelta,
    BlockStarted,
    StepFinished,
    StepStarted,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnFinished,
    TurnStarted,
)
from lesson_lib.turn.reduce import TurnState, reduce_all
from lesson_lib.turn.run import turn_events

CAPTURES = ["anthropic-messages/weather-turn-step1", "anthropic-messages/citations",
            "openai-responses/weather-turn-step1", "openai-chat/weather-turn-step1",
            "google-gemini/weather-turn-step1", "aws-bedrock-converse/weather-turn-step1"]


def states_of(events):
    state = initial()
    for event in events:
        state = reduce(state, event)
        yield state


def a_cancelled_turn() -> list:
    """Text half arrived, one tool running, another's arguments arriving: then a cancel."""
    events = [TurnStarted(0, turn="t", t=0.0), StepStarted(1, step=1, wire="anthropic-messages"),
              BlockStarted(2, block="s1.b0", step=1, block_kind="text"),
              BlockDelta(3, block="s1.b0", fragment="Checking the weath", t=40.0),
              BlockStarted(4, block="s1.b1", step=1, block_kind="tool_call", name="search",
                           call_id="c1"),
              ToolExecutionStarted(5, block="s1.b1", call_id="c1", name="search"),
              BlockStarted(6, block="s1.b2", step=1, block_kind="tool_call",
                           name="get_weather", call_id="c2"),
              BlockDelta(7, block="s1.b2", fragment='{"ci', t=90.0)]
    state = reduce_all(events)
    events += closing_events(state, "the turn was cancelled")
    n = len(events)
    events += [ToolExecutionFinished(n, block="s1.b1", call_id="c1", status="interrupted"),
               StepFinished(n + 1, step=1, ended="cancelled"),
               TurnFinished(n + 2, outcome="cancelled", reason="cancelled")]
    return events


@pytest.fixture
def no_event_reading(monkeypatch):
    """A state whose events cannot be read: whatever draws it must read the state."""
    def refuse(self, *args):
        raise AssertionError("the drawing read the turn's events again")
    monkeypatch.setattr(TurnState, "events_since", refuse)
    monkeypatch.setattr(TurnState, "events", property(refuse))


@pytest.mark.parametrize("key", CAPTURES)
def test_the_drawing_reads_the_state_not_the_events(key, no_event_reading):
    events = turn_events(load(key))
    drawer = Drawer()
    for state in states_of(events):
        drawing = drawer.draw(state)
    assert drawing.part("turn/banner").settled
    assert Drawer().draw(state).parts == drawing.parts       # one state, drawn at once
    assert draw(state.at(len(events) // 2)).parts          # and a state older than the last


def test_a_cancelled_turn_is_drawn_from_the_state(no_event_reading):
    state = reduce_all(a_cancelled_turn())
    words = Drawer().draw(state).part("turn/banner").text
    assert words.startswith("⊘ cancelled")
    assert ("interrupting the text arriving, the arguments of search arriving, the arguments "
            "of get_weather arriving and the tool search running") in words


def test_the_banner_says_what_the_reducer_says():
    events = a_cancelled_turn()
    for state in states_of(events):
        status = turn_status(state)
        finished = state.finished
        assert status.outcome == (finished.outcome if finished else None) == state.outcome
        assert status.running == sum(b.execution == "running" for b in state.calls)
        assert status.forming_calls == (0 if finished else sum(
            b.call_state == "forming" and b.open for b in state.calls))
        assert status.last_t == max((e.t for e in state.events if e.t is not None),
                                    default=None)
    assert [e.kind for e in state.interruptions] == ["block_ended"] * 3 + [
        "tool_execution_finished"]


def test_a_request_cancelled_before_its_first_byte_is_an_interruption():
    events = [TurnStarted(0, turn="t"), StepStarted(1, step=1, wire="anthropic-messages"),
              StepFinished(2, step=1, ended="proper"),
              StepFinished(3, step=2, ended="cancelled"), TurnFinished(4, outcome="cancelled")]
    state = reduce_all(events)
    assert [e.step for e in state.interruptions] == [2]
    assert state.at(3).between_steps and state.at(3).last_finish.step == 1
    assert "the request for step 2 before its first byte" in draw(state).text


@settings(max_examples=60, deadline=None)
@given(key=st.sampled_from(CAPTURES),
       cut=st.tuples(st.floats(0, 1), st.floats(0, 1)))
def test_a_blocks_news_is_what_its_view_gained(key, cut):
    """Between any two states of a turn, each block's news is exactly what its view gained:
    its text, its sources (numbered in the turn's order) and nothing else changed."""
    final = reduce_all(turn_events(load(key)))
    i, j = sorted(round(c * final.count) for c in cut)
    before, after = final.at(i), final.at(j)
    changed = set(after.blocks_changed_since(i))
    numbers = []
    for block in after.blocks:
        old = before.block(block.id)
        if old is None:
            continue
        news = after.block_news(block.id, i)
        assert (block.id in changed) == bool(news.fragments or news.sources or news.status)
        if block.kind != "tool_call" and not block.restated:
            assert old.text + "".join(news.fragments) == block.text
        assert list(old.sources) + [s for s, _, _ in news.sources] == list(block.sources)
        numbers += [n for _, _, n in news.sources]
        assert (after.ended_at(block.id) is None) == block.open
    assert numbers == sorted(numbers)
    opened = [e.block for _, e in after.outline_since(i) if e.kind == "block_started"]
    assert opened == [b.id for b in after.blocks if before.block(b.id) is None]
