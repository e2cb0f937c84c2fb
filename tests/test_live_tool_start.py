"""The live loop's tool-start rule (`tool_start`) and its approval hook (`approve`), over a
real socket: the course's server on 127.0.0.1."""

from __future__ import annotations

import asyncio

import pytest

from lesson_lib.capture.captures import load
from lesson_lib.cli.serve.background import serving
from lesson_lib.live import LiveTurn, weather_tool
from lesson_lib.turn.order import check
from lesson_lib.turn.run import turn_state
from lesson_lib.turn.summary import outcome_line

WIRES = ["anthropic-messages", "openai-responses", "aws-bedrock-converse"]


@pytest.fixture(scope="module")
def url():
    with serving(speed="instant") as base:
        yield base


def request(wire):
    return load(f"{wire}/weather-turn-step1").request


def run(turn: LiveTurn):
    return asyncio.run(asyncio.wait_for(turn.run(), 60))


def position(events, kind, block):
    return next(i for i, e in enumerate(events) if e.kind == kind and e.block == block)


@pytest.mark.parametrize("wire", WIRES)
def test_moved_on_starts_a_call_when_the_next_block_starts_and_the_turn_is_the_same(url, wire):
    settled = run(LiveTurn(url, wire, request(wire), [weather_tool(0.01)]))
    moved_on = run(LiveTurn(url, wire, request(wire), [weather_tool(0.01)],
                            tool_start="moved_on"))
    assert settled.outcome == moved_on.outcome == "completed"
    assert check(moved_on.events) == []
    first, second = [b.id for b in moved_on.state.calls if b.step == 1]
    # Settled: the first call runs as soon as its arguments settle, before the second
    # call's block starts; moved on: only once that block has started.
    assert position(settled.events, "tool_execution_started", first) < \
        position(settled.events, "block_started", second)
    assert position(moved_on.events, "tool_execution_started", first) > \
        position(moved_on.events, "block_started", second)
    # The last call waits for the step's end.
    end = next(i for i, e in enumerate(moved_on.events) if e.kind == "step_finished")
    assert position(moved_on.events, "tool_execution_started", second) > end
    assert [b.execution_status for b in moved_on.state.calls] == ["ok", "ok"]
    offline = turn_state([load(f"{wire}/weather-turn-step1"),
                          load(f"{wire}/weather-turn-step2")])
    assert [(b.kind, b.text, b.input) for b in moved_on.state.blocks] == \
        [(b.kind, b.text, b.input) for b in offline.blocks]


@pytest.mark.parametrize("rule", ["settled", "moved_on"])
def test_a_held_call_is_shown_and_the_turn_ends_asking(url, rule):
    wire = "anthropic-messages"
    asked = []

    def approve(call):
        asked.append(call.input["location"])
        return call.input["location"] == asked[0]        # hold every call but the first

    result = run(LiveTurn(url, wire, request(wire), [weather_tool(0.01)],
                          tool_start=rule, approve=approve))
    assert result.outcome == "paused"
    # It says why: a call held for the application's approval, by name (lesson 7).
    assert (result.state.end.reason, result.state.end.detail) == (
        "approval", {"held": ["get_weather"]})
    assert "held for the application's approval" in outcome_line(result.state)
    assert check(result.events) == []
    assert len(asked) == 2 and len(result.state.steps) == 1     # no next request was sent
    first, second = result.state.calls
    assert (first.execution, first.execution_status) == ("done", "ok")
    assert second.execution == "held" and second.execution_status is None
    assert [b.id for b in result.held] == [second.id]
    (held,) = [e for e in result.events if e.kind == "tool_call_held"]
    assert (held.block, held.name, held.call_id) == (second.id, second.name, second.call_id)


def test_a_turn_whose_every_call_runs_is_not_paused_by_the_hook(url):
    wire = "openai-responses"
    result = run(LiveTurn(url, wire, request(wire), [weather_tool(0.01)],
                          approve=lambda call: True))
    assert result.outcome == "completed" and result.held == []


def test_an_unknown_rule_is_refused_before_the_turn_starts(url):
    with pytest.raises(ValueError, match="settled, moved_on"):
        LiveTurn(url, "anthropic-messages", request("anthropic-messages"), [],
                 tool_start="eagerly")


def test_a_held_call_is_drawn_and_summarised_as_held(url):
    from lesson_lib.turn.summary import turn_text
    from lesson_lib.views.turn_view import render_turn

    wire = "anthropic-messages"
    result = run(LiveTurn(url, wire, request(wire), [weather_tool(0.01)],
                          approve=lambda call: False))
    assert result.outcome == "paused" and len(result.held) == 2
    assert turn_text(result.state).count("⏸ held") == 2
    html = render_turn(result.state)
    assert 'data-state="held"' in html and 'data-state="ready"' not in html
    from lesson_lib.draw import draw
    drawn = "\n".join(part.text for part in draw(result.state).parts)
    assert drawn.count("⏸ held") == 2, drawn


def test_after_a_fallback_moved_on_starts_the_calls_only_when_the_step_ends(url):
    from lesson_lib.live import LiveTool

    async def answer(arguments):
        return {"ok": True}

    key = "anthropic-messages/fallback-after-tool-call"
    tools = [LiveTool("scan_ports", answer), LiveTool("list_audit_scope", answer)]
    result = run(LiveTurn(url, "anthropic-messages", load(key).request, tools,
                          params={"capture": key}, tool_start="moved_on", max_steps=1))
    assert result.outcome == "max_steps" and check(result.events) == []
    end = next(i for i, e in enumerate(result.events) if e.kind == "step_finished")
    started = [i for i, e in enumerate(result.events) if e.kind == "tool_execution_started"]
    assert len(started) == 2 and min(started) > end
    assert [b.execution_status for b in result.state.calls] == ["ok", "ok"]
