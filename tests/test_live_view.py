"""The live view: a thin widget over `LiveTurn` whose Stop button cancels the turn."""

from __future__ import annotations

import asyncio

from lesson_lib.capture.captures import load
from lesson_lib.cli.serve.background import serving
from lesson_lib.live import LiveTool, LiveTurn
from lesson_lib.views.live_view import LiveView


async def _slow(arguments):
    await asyncio.sleep(30)


def test_stop_pressed_while_a_tool_runs_cancels_and_keeps_the_drawing():
    wire = "openai-responses"
    with serving(speed="instant") as url:
        request = load(f"{wire}/weather-turn-step1").request
        view = LiveView(LiveTurn(url, wire, request, [LiveTool("get_weather", _slow)]))

        async def go():
            view.start()
            while not any(b.execution == "running" for b in view.turn.state.calls):
                await asyncio.sleep(0.01)
            view.stop.click()
            return await asyncio.wait_for(view.done(), 20)

        result = asyncio.run(go())
    assert result.outcome == "cancelled"
    assert view.stop.disabled and "ended: cancelled" in view.status.value
    assert "get_weather" in view.chat.text and "cancelled" in view.chat.text
    assert 'aria-live="polite"' in view.status.value
    assert "<script" not in view.chat.value
