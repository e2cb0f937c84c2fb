"""The reducer: pure, linear (counted), any state by index, JSON in the CLI's shape."""

from __future__ import annotations

import json

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.capture.captures import corpus, load
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
from lesson_lib.turn.reduce import initial, reduce, reduce_all
from lesson_lib.turn.run import turn_events


def text_turn(deltas: int, blocks: int = 1) -> list:
    events = [TurnStarted(0, turn="t"), StepStarted(1, step=1, wire="openai-chat")]
    for b in range(blocks):
        events.append(BlockStarted(len(events), block=f"s1.b{b}", step=1, block_kind="text"))
        events += [BlockDelta(len(events) + i, block=f"s1.b{b}", fragment="ab")
                   for i in range(deltas)]
        events.append(BlockEnded(len(events), block=f"s1.b{b}"))
    events += [StepFinished(len(events), step=1, ended="proper"),
               TurnFinished(len(events) + 1, outcome="completed")]
    return events


def test_reduce_is_pure_old_states_stay_as_they_were():
    events = text_turn(5)
    states = [initial()]
    for e in events:
        states.append(reduce(states[-1], e))
    assert states[4].blocks[0].text == "ab"
    assert states[-1].blocks[0].text == "ab" * 5
    assert states[4].blocks[0].open and not states[-1].blocks[0].open
    assert states[4].outcome is None and states[-1].outcome == "completed"


def test_a_branch_from_an_older_state_does_not_touch_either_line():
    events = text_turn(3)
    mid = reduce_all(events[:4])
    main = reduce_all(events[4:], mid)
    branch = reduce(mid, BlockDelta(4, block="s1.b0", fragment="ZZ"))
    assert branch.blocks[0].text == "abZZ"
    assert main.blocks[0].text == "ababab"
    assert mid.blocks[0].text == "ab"
    # reduce_all from an older state branches as reduce does, one event at a time
    stepped = mid
    for e in events[4:6]:
        stepped = reduce(stepped, e)
    assert reduce_all(events[4:6], mid).as_dict() == stepped.as_dict()
    assert main.blocks[0].text == "ababab" and mid.blocks[0].text == "ab"


def test_reducing_is_linear_in_the_events_counted():
    # Work counts the entries the reducer writes; a copy of everything so far per
    # event would make it quadratic. Doubling the deltas at most doubles the work.
    def work(n: int, blocks: int) -> tuple[int, int]:
        state = reduce_all(text_turn(n, blocks))
        return state._logs.work, state._logs.copies
    small, copies = work(2000, 5)
    big, _ = work(4000, 5)
    many, _ = work(2000, 10)
    assert copies == 0
    assert big / small <= 2.05 and many / small <= 2.05


def test_the_state_at_any_index_equals_reducing_that_prefix():
    events = turn_events([load("anthropic-messages/weather-turn-step1"),
                          load("anthropic-messages/weather-turn-step2")], "sdk")
    final = reduce_all(events)
    for i in range(0, len(events) + 1, 7):
        assert final.at(i).as_dict() == reduce_all(events[:i]).as_dict()
        assert final.at(i).count == i


def test_calls_and_executions_have_their_states():
    events = [TurnStarted(0, turn="t"), StepStarted(1, step=1, wire="openai-chat"),
              BlockStarted(2, block="s1.b0", step=1, block_kind="tool_call", name="f",
                           call_id="c"),
              BlockDelta(3, block="s1.b0", fragment="{}"),
              BlockEnded(4, block="s1.b0"),
              ToolCallReady(5, block="s1.b0", name="f", call_id="c", input={}),
              ToolExecutionStarted(6, block="s1.b0", call_id="c", name="f"),
              ToolExecutionFinished(7, block="s1.b0", call_id="c", status="ok", result=1)]
    final = reduce_all(events)
    seen = [(s.calls[0].call_state, s.calls[0].execution) for s in
            (final.at(3), final.at(5), final.at(6), final.at(7), final.at(8))]
    assert seen == [("forming", None), ("forming", None), ("complete", None),
                    ("complete", "running"), ("complete", "done")]
    assert final.calls[0].result == 1 and final.calls[0].raw_input == "{}"


def test_as_dict_has_the_turn_json_shape_and_is_json():
    state = reduce_all(turn_events(load("anthropic-messages/thinking-signature"), "sdk"))
    d = json.loads(json.dumps(state.as_dict()))
    # `reason` and `detail` say why the turn ended (`lesson_lib.turn.ends`, lesson 7).
    assert set(d) == {"outcome", "reason", "detail", "steps", "usage", "blocks", "errors"}
    assert set(d["usage"]) >= {"input_tokens", "output_tokens", "cache_read_tokens",
                               "cache_write_tokens", "reasoning_tokens", "raw"}
    step = d["steps"][0]
    assert step["wire"] == "anthropic-messages" and step["finish"]["reason"] == "stop"
    reasoning = next(b for b in d["blocks"] if b["kind"] == "reasoning")
    assert reasoning["signature"] and reasoning["redacted"] is False
    assert all({"id", "step", "kind", "complete"} <= set(b) for b in d["blocks"])


@pytest.mark.parametrize("route", ["wire", "sdk"])
def test_redacted_reasoning_is_said_by_the_adapter_and_read_by_the_reducer(route):
    # Only the adapter knows which of its wire's kinds hides the reasoning: the reducer,
    # the summary and the views read the flag, never a wire's block type.
    events = turn_events(load("anthropic-messages/redacted-thinking"), route)
    started = [e for e in events if isinstance(e, BlockStarted) and e.block_kind == "reasoning"]
    assert [e.redacted for e in started] == [e.wire_kind == "redacted_thinking" for e in started]
    assert any(e.redacted for e in started)
    blocks = [b for b in reduce_all(events).blocks if b.kind == "reasoning"]
    assert [b.redacted for b in blocks] == [e.redacted for e in started]
    for key in ("anthropic-messages/thinking-signature", "openai-responses/reasoning-summary"):
        plain = reduce_all(turn_events(load(key), route))
        assert any(b.kind == "reasoning" for b in plain.blocks)
        assert not any(b.redacted for b in plain.blocks)


TURNS = {c.key: turn_events(c, "sdk") for c in corpus()
         if c.key.endswith(("weather-turn-step1", "thinking-signature", "citations",
                            "cut-in-arguments", "error-then-failed"))}


@settings(max_examples=examples(80), deadline=None, derandomize=True, database=None)
@given(st.sampled_from(sorted(TURNS)), st.floats(0, 1))
def test_any_index_of_the_final_state_is_the_prefix_reduced(key, where):
    events = TURNS[key]
    i = round(where * len(events))
    final = reduce_all(events)
    assert final.at(i).as_dict() == reduce_all(events[:i]).as_dict()
    assert [b.id for b in final.at(i).blocks] == [b.id for b in reduce_all(events[:i]).blocks]


def test_usage_counts_as_it_arrives_so_a_budget_can_be_checked_live():
    from lesson_lib.capture.captures import load
    from lesson_lib.turn.run import turn_events

    events = turn_events(load("anthropic-messages/weather-turn-step1"))
    first_delta = next(i for i, e in enumerate(events) if e.kind == "block_delta")
    state = reduce_all(events[:first_delta + 1])
    [step] = state.steps
    assert not step.finished and step.usage.input > 0      # message_start's input tokens
    final = reduce_all(events)
    assert final.steps[0].usage == next(e for e in events if e.kind == "step_finished").usage
