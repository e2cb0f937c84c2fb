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


def test_the_status_line_says_a_step_is_being_retried_and_why():
    from lesson_lib.live.attempts import Attempt
    from lesson_lib.turn.events import StepFinished
    from lesson_lib.views.live_view import retry_words

    first = Attempt(1, 1)
    assert retry_words([]) is None and retry_words([first]) is None
    first.events = [StepFinished(0, step=1, ended="cut")]
    words = retry_words([first, Attempt(1, 2)])
    assert words.startswith("retrying step 1 (attempt 2): the last attempt ended with cut")
    assert "not run again" in words
    assert retry_words([first, Attempt(1, 2), Attempt(2, 1)]) is None


def test_the_status_line_says_a_resume_keeps_what_was_drawn():
    from lesson_lib.live.attempts import Attempt
    from lesson_lib.turn.events import ErrorReported
    from lesson_lib.views.live_view import retry_words

    first = Attempt(1, 1, resume_at=25, errors=[ErrorReported(
        0, step=1, scope="transport", phase="after_output", code="transport",
        message="the connection broke")])
    words = retry_words([first, Attempt(1, 2, resumed_after=25)])
    assert words.startswith("resuming step 1 after 25 (attempt 2): the last attempt ended "
                            "with transport error after_output (transport): the connection "
                            "broke. ")
    assert "stays" in words and "drawn again" not in words


def test_a_resume_on_screen_shows_in_the_status_line_then_the_end():
    from lesson_lib.live import RetryPolicy

    cut = load("openai-responses/background-cut")
    with serving(speed="instant") as url:
        turn = LiveTurn(url, "openai-responses", cut.request,
                        params={"fault": f"drop:{len(cut.body) // 2}@first"},
                        retry=RetryPolicy(attempts=2, initial_s=0.01, max_s=0.05))
        view = LiveView(turn)
        seen = []
        say = view._say
        view._say = lambda words: (seen.append(words), say(words))

        result = asyncio.run(asyncio.wait_for(view.done(), 30))
    assert result.outcome == "completed" and result.attempts[1].resumed_after is not None
    assert any(w.startswith("resuming step 1 after ") for w in seen), seen
    assert not any(w.startswith("retrying") for w in seen), seen
    assert "ended: completed" in view.status.value


def test_a_retry_on_screen_shows_in_the_status_line_then_the_end():
    from lesson_lib.live import RetryPolicy, weather_tool

    wire = "anthropic-messages"
    with serving(speed="instant") as url:
        request = load(f"{wire}/weather-turn-step1").request
        turn = LiveTurn(url, wire, request, [weather_tool(0.0)],
                        params={"fault": "drop:3000@first"},
                        retry=RetryPolicy(attempts=2, initial_s=0.01, max_s=0.05))
        view = LiveView(turn)
        seen = []
        say = view._say
        view._say = lambda words: (seen.append(words), say(words))

        result = asyncio.run(asyncio.wait_for(view.done(), 30))
    assert result.outcome == "completed"
    assert any(w.startswith("retrying step 1 (attempt 2)") for w in seen), seen
    assert "ended: completed" in view.status.value


def test_while_the_wire_is_silent_the_view_redraws_and_the_stall_banner_appears():
    from lesson_lib.live import weather_tool

    wire = "anthropic-messages"
    with serving(speed="instant") as url:
        request = load(f"{wire}/weather-turn-step1").request
        turn = LiveTurn(url, wire, request, [weather_tool(0.0)], params={"fault": "stall:1500"},
                        stall_s=10)
        view = LiveView(turn, stalled_after_ms=300, tick_s=0.05)
        shown = []

        async def go():
            view.start()
            while not view._task.done():
                shown.append(view.chat.text)
                await asyncio.sleep(0.05)
            return await view.done()

        result = asyncio.run(asyncio.wait_for(go(), 30))
    assert result.outcome == "completed"
    stalled = [text for text in shown if "stalled" in text]
    assert stalled, "no stall banner while the wire was silent"
    assert "stalled" not in view.chat.text          # the end replaces it
