"""Budgets: the cancel falls on the first delta that crosses the budget, on every wire."""

from __future__ import annotations

import asyncio
import math

import pytest

from lesson_lib import wires
from lesson_lib.breaks import budget
from lesson_lib.capture.captures import corpus, load
from lesson_lib.turn.fake_tools import weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.run import step_events
from lesson_lib.wires.wire_events import parse_all

STREAMS = [c for c in corpus() if c.status < 300 and len(c.events) > 4]


def _run(cap):
    return budget.deltas(parse_all(cap.events), cap.wire)


@pytest.mark.parametrize("cap", STREAMS, ids=[c.key for c in STREAMS])
def test_the_token_and_time_budgets_stop_at_the_first_crossing_delta(cap):
    run = _run(cap)
    if len(run) < 3:
        pytest.skip("too few deltas to put a budget in the middle")
    mid = len(run) // 2
    tokens = [math.ceil(len(d.text) / 4) for d in run]
    limit = sum(tokens[:mid + 1])
    crossing = budget.first_crossing(run, budget.Budget(output_tokens=limit))
    assert crossing is not None and crossing.limit == "output_tokens"
    assert sum(tokens[:crossing.delta]) < limit <= sum(tokens[:crossing.delta + 1])
    assert crossing.delta <= mid and crossing.event == run[crossing.delta].event
    # the same budget in money, at an illustrative price, falls on the same delta
    price = budget.price_per_token(cap.request.get("model"))
    if price is not None:
        priced = budget.first_crossing(run, budget.Budget(
            cost_usd=limit * price * (1 - 1e-9), model=cap.request["model"]))
        assert priced.delta == crossing.delta and priced.limit == "cost_usd"
    # time on the virtual clock: the first delta that arrived at or after the limit
    at = run[mid].t
    timed = budget.first_crossing(run, budget.Budget(time_ms=at))
    assert run[timed.delta].t >= at and all(d.t < at for d in run[:timed.delta])
    assert budget.first_crossing(run, budget.Budget(output_tokens=sum(tokens) + 1)) is None


def test_every_wire_is_covered():
    assert {c.wire for c in STREAMS if len(_run(c)) >= 3} == set(wires.WIRES)


@pytest.mark.parametrize("wire", sorted(wires.WIRES))
def test_a_budget_of_three_tokens_cancels_the_weather_turn_mid_stream_on_every_wire(wire):
    cap = load(f"{wire}/weather-turn-step1")
    events = parse_all(cap.events)
    crossing = budget.first_crossing(_run(cap), budget.Budget(output_tokens=3))
    assert crossing is not None and crossing.limit == "output_tokens"
    assert 0 <= crossing.event < len(events) - 1, "the budget must stop the stream before its end"
    # The turn the agent loop plays, cancelled at the crossing delta's arrival, ends cancelled.
    result = asyncio.run(run_turn([cap], [weather_tool()], cancel_at=_run(cap)[crossing.delta].t))
    assert result.state.outcome == "cancelled"


def test_the_live_loop_and_the_offline_budget_count_the_same_deltas():
    cap = load("google-gemini/weather-turn-step1")
    live = [budget.delta_of(e) for e in step_events(cap)]
    assert [d for d in live if d is not None] == _run(cap)


@pytest.mark.parametrize("key,second_call", [
    ("anthropic-messages/parallel-tools", True), ("openai-chat/parallel-tools-interleaved", True),
    ("openai-responses/parallel-function-calls", True), ("openai-chat/text-usage", False)])
def test_a_tool_call_budget_stops_at_the_call_that_exceeds_it(key, second_call):
    cap = load(key)
    run = _run(cap)
    crossing = budget.first_crossing(run, budget.Budget(tool_calls=2))
    if not second_call:
        assert crossing is None
        return
    starts = [i for i, d in enumerate(run) if d.starts_tool_call]
    assert len(starts) >= 2 and crossing.delta == starts[1]


@pytest.mark.parametrize("key", ["anthropic-messages/hello", "openai-responses/text",
                                 "openai-chat/text-usage", "anthropic-messages/html-in-text"])
def test_the_estimate_is_set_against_the_final_usage(key):
    cap = load(key)
    events = parse_all(cap.events)
    estimate = budget.running_estimate(_run(cap))[-1]
    final = budget.final_output_tokens(events)
    assert final is not None
    # an estimate, not a count: within a factor of two on plain text
    assert 0.5 <= estimate / final <= 2.0, (estimate, final)


def test_a_cost_budget_needs_a_listed_model():
    with pytest.raises(ValueError):
        budget.first_crossing([], budget.Budget(cost_usd=1.0, model="unknown-model"))
    assert budget.price_per_token("gpt-4.1-2025-04-14") == budget.PRICES["gpt-4.1"] / 1e6
    assert budget.PRICES_DATE
