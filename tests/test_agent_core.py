"""One agent-loop rule, two transports: the simulated loop (captures, virtual clock) and the
live loop (HTTP, the event loop's clock) run the same `turn.agent` core."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from lesson_lib import wires
from lesson_lib.breaks import budget
from lesson_lib.capture.captures import load
from lesson_lib.live import LiveTurn
from lesson_lib.live import weather_tool as live_weather
from lesson_lib.turn import agent
from lesson_lib.turn.ends import TurnEnd
from lesson_lib.turn.fake_tools import weather_tool as fake_weather
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.order import check
from lesson_lib.turn.run import step_events

WIRES = ["anthropic-messages", "openai-responses", "openai-chat", "google-gemini"]


class Chunks(httpx.AsyncByteStream):
    """A response body that arrives in these chunks."""

    def __init__(self, chunks):
        self.chunks = chunks

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk


def weather(wire):
    return [load(f"{wire}/weather-turn-step1"), load(f"{wire}/weather-turn-step2")]


def simulated(captures, **options):
    return asyncio.run(run_turn(captures, [fake_weather(10.0)], **options))


def live(captures, *, chunk=None, **options):
    """A live turn whose server answers step n with capture n's body (in `chunk`-byte
    pieces, or whole)."""
    sent = []

    async def handler(request):
        body = captures[len(sent)].body
        sent.append(request)
        pieces = [body] if chunk is None else [body[i:i + chunk]
                                               for i in range(0, len(body), chunk)]
        return httpx.Response(200, stream=Chunks(pieces), headers={
            "content-type": wires.entry_for(captures[0].wire).content_type})

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await LiveTurn("http://test", captures[0].wire, captures[0].request,
                                  [live_weather(0.0)], client=client, **options).run()

    return asyncio.run(asyncio.wait_for(go(), 30)), sent


def blocks(state):
    return [(b.step, b.kind, b.name, b.text if b.kind != "tool_call" else b.input,
             b.execution_status) for b in state.blocks]


@pytest.mark.parametrize("wire", WIRES)
def test_a_rule_added_to_the_core_once_holds_in_both_loops(wire, monkeypatch):
    """A new rule in `agent.after_step` (here: a turn stops after any step that ran a
    tool) changes the simulated and the live loop alike, with nothing else touched."""
    rule = agent.after_step

    def stop_after_tools(transport, step, last):
        ran = [b for b in transport.state.calls if b.step == step and b.execution_status]
        if ran:
            return TurnEnd("paused", "approval", {"held": ["the new rule"], "step": step})
        return rule(transport, step, last)

    monkeypatch.setattr(agent, "after_step", stop_after_tools)
    offline = simulated(weather(wire))
    online, sent = live(weather(wire))
    for state in (offline.state, online.state):
        assert (state.outcome, state.end.reason) == ("paused", "approval")
        assert state.end.detail == {"held": ["the new rule"], "step": 1}
        assert [s.step for s in state.steps] == [1]
    assert len(sent) == 1, "the live loop sent no second request"
    assert blocks(offline.state) == blocks(online.state)
    assert check(offline.events) == [] and check(online.events) == []


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("max_steps", [0, 1, 2, 3])
def test_both_loops_end_the_weather_turn_the_same_way(wire, max_steps):
    """Same captures, same ends: a step limit (0 too) ends both as ``max_steps``; a turn
    within it ends as its last step says."""
    offline = simulated(weather(wire), max_steps=max_steps)
    online, sent = live(weather(wire), max_steps=max_steps)
    assert offline.state.end == online.state.end
    assert blocks(offline.state) == blocks(online.state)
    assert len(sent) == len(offline.state.steps)


def test_the_live_budget_counts_a_blocks_first_text_as_lesson_5s_budget_does():
    """On Gemini a block's first text arrives with its start: the live loop's budget counts
    it, as `budget.delta_of` does, so it stops where the offline budget says."""
    cap = load("google-gemini/text-crlf")
    run = [d for d in map(budget.delta_of, step_events(cap)) if d is not None]
    crossing = budget.first_crossing(run, budget.Budget(output_tokens=5))
    assert crossing is not None and crossing.delta == 0     # the first block's start
    result, _ = live([cap], chunk=8, budget_tokens=5)
    assert result.outcome == "budget_reached"
    assert result.state.end.detail["spent"] == crossing.value
    # Stopped in the first block: nothing of the second arrived.
    assert len([b for b in result.state.blocks if b.kind == "text"]) == 1
