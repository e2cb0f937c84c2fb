"""The agent loop on the weather turn: tools start as calls become ready, on a virtual clock.

Runs on the SDK route now, and on the wire route as soon as the accumulators
return their changes (skipped until then, saying so).
"""

from __future__ import annotations

import asyncio

import pytest

from lesson_lib.capture.captures import load
from lesson_lib.turn.fake_tools import FakeTool, ToolFailed, result_as_text, weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.next_request import next_request
from lesson_lib.turn.order import check

WIRES = ["anthropic-messages", "openai-responses", "openai-chat"]
ROUTES = [pytest.param("sdk", id="sdk"), pytest.param("wire", id="wire")]
# The tests that do not name a route take the wire route.
DEFAULT_ROUTE = "wire"


def weather(wire: str):
    return [load(f"{wire}/weather-turn-step1"), load(f"{wire}/weather-turn-step2")]


def run(captures, tools=None, **kw):
    kw.setdefault("route", DEFAULT_ROUTE)
    tools = [weather_tool()] if tools is None else tools
    return asyncio.run(run_turn(captures, tools, **kw))


def recorded_results(wire: str, request: dict) -> dict[str, str]:
    """The tool results a recorded request sends back, by call id."""
    if wire == "anthropic-messages":
        return {b["tool_use_id"]: b["content"] for m in request["messages"]
                if isinstance(m["content"], list)
                for b in m["content"] if b.get("type") == "tool_result"}
    if wire == "openai-responses":
        return {i["call_id"]: i["output"] for i in request["input"]
                if i.get("type") == "function_call_output"}
    return {m["tool_call_id"]: m["content"] for m in request["messages"] if m["role"] == "tool"}


def state_before_step(result, step: int):
    index = next(e.seq for e in result.events if e.kind == "step_started" and e.step == step)
    return result.state.at(index)


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("wire", WIRES)
def test_tool_results_and_next_request_equal_the_recorded_step_two(wire, route):
    steps = weather(wire)
    result = run(steps, route=route)
    assert result.state.outcome == "completed"
    assert check(result.events) == []
    loop_results = {call_id: result_as_text(r) for call_id, r in result.results(1).items()}
    assert loop_results == recorded_results(wire, steps[1].request)
    rebuilt = next_request(state_before_step(result, 2), steps[0].request, step=1)
    assert rebuilt == steps[1].request


@pytest.mark.parametrize("route", ROUTES)
def test_each_tool_starts_when_its_call_is_ready_while_the_stream_goes_on(route):
    result = run(weather("anthropic-messages"), route=route)
    _, start, end = result.streams[0]
    first, second = sorted(result.runs, key=lambda r: r.start)
    assert first.start < end and second.start < end       # both before the stream ended
    ready = {e.call_id: e.t for e in result.events if e.kind == "tool_call_ready"}
    assert all(r.start == ready[r.call_id] for r in result.runs)
    assert first.input["location"] == "Paris, France"
    won = dict((r.input["location"], ms) for r, ms in result.head_start())
    assert won["Paris, France"] == end - first.start > won["Tokyo, Japan"] > 0


@pytest.mark.parametrize("route", ROUTES)
def test_on_chat_calls_are_ready_only_at_the_finish_reason(route):
    result = run(weather("openai-chat"), route=route)
    finish_t = next(e.t for e in result.events if e.kind == "step_finished")
    last_delta = max(e.t for e in result.events if e.kind == "block_delta" and e.block == "s1.b0")
    starts = {r.start for r in result.runs if r.step == 1}
    assert len(starts) == 1                     # both at the choice's finish reason
    assert last_delta <= starts.pop() <= finish_t
    assert all(ms == 0 for _, ms in result.head_start())   # nothing won on Chat


def test_parallel_calls_run_concurrently_and_each_result_goes_to_its_call():
    result = run(weather("anthropic-messages"), [weather_tool(duration=3000)])
    a, b = sorted(result.runs, key=lambda r: r.start)
    assert a.start < b.start < a.end            # overlapping on the virtual clock
    by_call = {c.call_id: c for c in result.state.calls}
    for r in result.runs:
        assert by_call[r.call_id].result["location"] == r.input["location"]
        assert by_call[r.call_id].execution == "done"
    # the next step waits for the slower tool
    assert result.streams[1][1] == max(r.end for r in result.runs)


def test_runs_are_deterministic():
    first, second = run(weather("openai-responses")), run(weather("openai-responses"))
    assert first.events == second.events and first.runs == second.runs


def test_cancel_mid_stream_closes_interrupts_and_starts_nothing_new():
    steps = weather("anthropic-messages")
    plain = run(steps)
    paris = min(plain.runs, key=lambda r: r.start)
    cancel_at = paris.start + 100               # Paris runs, Tokyo's call is still forming
    result = run(steps, cancel_at=cancel_at)
    state = result.state
    assert state.outcome == "cancelled" and check(result.events) == []
    assert [(r.input["location"], r.status) for r in result.runs] == [("Paris, France",
                                                                        "interrupted")]
    assert not any(b.open for b in state.blocks)
    closed = [b for b in state.blocks if b.synthesised]
    assert closed and all(not b.complete for b in closed)
    assert all(e.t <= cancel_at for e in result.events)
    assert not any(e.kind == "tool_execution_started" and e.t > cancel_at for e in result.events)
    assert len(state.steps) == 1 and not state.errors      # cancelled is no error


def test_cancel_after_the_stream_interrupts_the_running_tools():
    steps = weather("openai-chat")
    end = run(steps).streams[0][2]
    result = run(steps, cancel_at=end + 10)
    assert result.state.outcome == "cancelled"
    assert {r.status for r in result.runs} == {"interrupted"}
    assert check(result.events) == []
    assert result.events[-1].t == end + 10 == max(e.t for e in result.events)


def test_max_steps_stops_a_turn_that_still_asks_for_tools():
    result = run(weather("openai-responses"), max_steps=1)
    assert result.state.outcome == "max_steps"
    assert len(result.state.steps) == 1


def test_a_failing_tool_and_an_unknown_tool():
    def broken(arguments):
        raise ToolFailed("the weather service is down")
    result = run(weather("anthropic-messages")[:1], [FakeTool("get_weather", broken, 50)])
    assert {r.status for r in result.runs} == {"error"}
    assert {c.execution for c in result.state.calls} == {"failed"}
    assert [e.scope for e in result.state.errors] == ["tool", "tool"]
    assert result.state.outcome == "completed"      # the model gets the error as the result
    request = next_request(result.state, weather("anthropic-messages")[0].request)
    assert all(b.get("is_error") for b in request["messages"][-1]["content"])
    denied = run(weather("openai-chat")[:1], [])
    assert {r.status for r in denied.runs} == {"denied"}
    assert check(denied.events) == []


def test_cancel_between_steps_starts_no_next_step():
    steps = weather("openai-responses")
    second = run(steps).streams[1][1]
    result = run(steps, cancel_at=second)
    assert result.state.outcome == "cancelled" and len(result.state.steps) == 1
    assert {r.status for r in result.runs} == {"ok"}
    assert check(result.events) == []


def test_the_weather_tool_answers_the_captures_cities_only():
    tool = weather_tool()
    assert tool.answer({"location": "Paris, France", "unit": "celsius"})["temperature"] == 18
    with pytest.raises(ToolFailed):
        tool.answer({"location": "Berlin, Germany", "unit": "celsius"})
