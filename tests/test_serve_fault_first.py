"""``@first``: a fault that breaks only a client's first request for a capture, so that the
live loop's retry succeeds on screen."""

from __future__ import annotations

import asyncio

import pytest

from lesson_lib.capture.captures import load
from lesson_lib.cli.serve import fault_spec
from lesson_lib.cli.serve.background import serving
from lesson_lib.live import LiveTurn, RetryPolicy, weather_tool
from lesson_lib.turn.order import check
from lesson_lib.turn.run import turn_state

WIRES = ["anthropic-messages", "openai-responses", "openai-chat"]
FAST = RetryPolicy(attempts=2, initial_s=0.01, max_s=0.05)


def test_first_parses_prints_and_says_what_is_wrong():
    spec = fault_spec.parse("drop:800@first")
    assert spec == fault_spec.FaultSpec("drop", 800, first=True)
    assert str(spec) == "drop:800@first" and fault_spec.parse(str(spec)) == spec
    assert fault_spec.parse("drop-terminal@first").first
    assert not fault_spec.parse("drop:800").first
    assert [s.first for s in fault_spec.parse_all(["cut:5@first,stall:10"])] == [True, False]
    for bad, says in (("drop:800@last", "unknown fault scope '@last'"),
                      ("drop:800@first@first", "unknown fault scope"),
                      ("melt@first", "unknown fault 'melt'"), ("cut@first", "needs a number")):
        with pytest.raises(fault_spec.FaultSpecError, match=says):
            fault_spec.parse(bad)


def test_first_breaks_once_per_client_and_capture():
    first = fault_spec.FirstRequests()
    once, always = fault_spec.parse("drop:800@first"), fault_spec.parse("stall:10")
    assert first.select([once, always], "10.0.0.1", "w/a") == [once, always]
    assert first.select([once, always], "10.0.0.1", "w/a") == [always]
    assert first.select([once], "10.0.0.2", "w/a") == [once]      # another client
    assert first.select([once], "10.0.0.1", "w/b") == [once]      # another capture
    other = fault_spec.parse("drop:900@first")
    assert first.select([other], "10.0.0.1", "w/a") == [other]    # another fault
    small = fault_spec.FirstRequests(limit=2)
    for client in ("a", "b", "c"):
        small.select([once], client, "w/a")
    assert len(small.broken) == 2


def _turn(url, wire):
    step1 = load(f"{wire}/weather-turn-step1")
    turn = LiveTurn(url, wire, step1.request, [weather_tool(0.01)],
                    params={"fault": "drop:800@first"}, retry=FAST)
    return asyncio.run(asyncio.wait_for(turn.run(), 60))


def _blocks(state):
    return [(b.step, b.kind, b.name, b.text if b.kind != "tool_call" else b.input, b.complete)
            for b in state.blocks]


@pytest.mark.parametrize("wire", WIRES)
def test_a_fault_on_the_first_request_only_lets_the_retry_complete_the_turn(wire):
    offline = turn_state([load(f"{wire}/weather-turn-step1"),
                          load(f"{wire}/weather-turn-step2")])
    with serving(speed="instant") as url:
        result = _turn(url, wire)
        again = _turn(url, wire)
    assert result.outcome == "completed"
    assert check(result.events) == []
    assert _blocks(result.state) == _blocks(offline)
    for step in (1, 2):       # each step's capture: its first request broken, then clean
        broken, clean = [a for a in result.attempts if a.step == step]
        assert [e.code for e in broken.errors] == ["transport"]
        assert "connection broke" in broken.errors[0].message
        assert not clean.errors and not clean.cut and clean.status == 200
    # The same client asking again for the same captures: nothing is broken any more.
    assert again.outcome == "completed"
    assert [(a.step, a.failed) for a in again.attempts] == [(1, False), (2, False)]


def test_the_server_default_fault_can_be_first_only_too():
    wire = "anthropic-messages"
    with serving(speed="instant", faults=["drop:800@first"]) as url:
        step1 = load(f"{wire}/weather-turn-step1")
        turn = LiveTurn(url, wire, step1.request, [weather_tool(0.01)], retry=FAST)
        result = asyncio.run(asyncio.wait_for(turn.run(), 60))
    assert result.outcome == "completed"
    assert [(a.step, a.failed) for a in result.attempts] == [
        (1, True), (1, False), (2, True), (2, False)]
