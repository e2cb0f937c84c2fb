"""Lesson 6's checkers: the solutions pass, and the wrong answers the lesson warns about
fail with a message that says what went wrong."""

from __future__ import annotations

import asyncio

import pytest

from lesson_lib.exercises import lesson06 as ex
from lesson_lib.solutions import lesson06 as sol


@pytest.fixture(autouse=True)
def _fresh(fresh_progress):
    yield


def test_the_solutions_pass():
    assert ex.check_split_blocks(sol.split_blocks).passed
    assert ex.check_live_turn(sol.live_turn).passed
    assert ex.check_stop(sol.live_turn_with_stop).passed


def test_an_untouched_starter_is_not_attempted():
    def starter(*args):
        raise NotImplementedError

    async def async_starter(*args):
        raise NotImplementedError

    assert ex.check_split_blocks(starter).status == "not attempted"
    assert ex.check_live_turn(async_starter).status == "not attempted"
    assert ex.check_stop(async_starter).status == "not attempted"


def blank_line_splitter(text):
    """Settles at every blank line: wrong inside a code fence."""
    parts = text.split("\n\n")
    return [p + "\n\n" for p in parts[:-1]], parts[-1]


def never_settles(text):
    return [], text


def uses_the_line_still_arriving(text):
    settled, tail = sol.split_blocks(text + "\n")
    return (settled, tail[:-1]) if tail else (settled[:-1], settled[-1][:-1]) \
        if settled else ([], text)


@pytest.mark.parametrize("wrong, words", [
    (blank_line_splitter, "too early"),
    (never_settles, "kept it in the tail"),
])
def test_a_drawer_that_flickers_or_never_settles_fails(wrong, words):
    verdict = ex.check_split_blocks(wrong)
    assert verdict.status == "failed" and words in verdict.message, verdict.message


def test_a_drawer_that_trusts_the_line_still_arriving_fails():
    verdict = ex.check_split_blocks(uses_the_line_still_arriving)
    assert verdict.status == "failed"


async def says_completed_after_anything(url, wire, request, tools):
    state = await sol.live_turn(url, wire, request, tools, stall_s=60)
    return state


def test_a_loop_that_waits_out_a_stall_and_says_completed_fails():
    verdict = ex.check_live_turn(says_completed_after_anything)
    assert verdict.status == "failed"
    assert "a 3 s stall" in verdict.message and "'completed'" in verdict.message


async def never_runs_tools(url, wire, request, tools):
    return await sol.live_turn(url, wire, request, {"get_weather": _never})


async def _never(arguments):
    raise RuntimeError("not run")


def test_a_loop_whose_tools_fail_is_caught_at_the_first_wire():
    verdict = ex.check_live_turn(never_runs_tools)
    assert verdict.status == "failed" and "anthropic-messages, as recorded" in verdict.message


async def stop_ignores_tools(url, wire, request, tools, stop):
    patient = {name: _uncancellable(tool) for name, tool in tools.items()}
    return await sol.live_turn_with_stop(url, wire, request, patient, stop)


def _uncancellable(tool):
    async def run(arguments):
        asyncio.ensure_future(tool(arguments))
        await asyncio.sleep(0)
        return None                      # leaves the real tool running: never cancelled
    return run


def test_a_stop_that_never_cancels_the_tools_fails():
    verdict = ex.check_stop(stop_ignores_tools)
    assert verdict.status == "failed" and "CancelledError" in verdict.message, verdict.message


async def stop_reports_completed(url, wire, request, tools, stop):
    state = await sol.live_turn_with_stop(url, wire, request, tools, stop)
    from lesson_lib.turn.events import TurnFinished
    from lesson_lib.turn.reduce import reduce_all
    events = [e for e in state.events if e.kind != "turn_finished"]
    return reduce_all(events + [TurnFinished(len(events), outcome="completed")])


def test_a_stop_that_says_completed_fails():
    verdict = ex.check_stop(stop_reports_completed)
    assert verdict.status == "failed" and "'cancelled'" in verdict.message, verdict.message


# -- exercise 2: the point of the loop is that tools start early -----------------------------


async def starts_tools_after_the_stream(url, wire, request, tools, stall_s=1.0):
    """Right blocks, right outcome, right order of events; but each step's body is read
    to its end before anything is fed, so every tool starts after the stream ended."""
    import httpx

    from lesson_lib.live.loop import PATHS
    from lesson_lib.turn import TurnStream
    from lesson_lib.turn.adapters import Counter
    from lesson_lib.turn.events import (
        ToolExecutionFinished,
        ToolExecutionStarted,
        TurnFinished,
        TurnStarted,
    )
    from lesson_lib.turn.next_request import next_request
    from lesson_lib.turn.outcome import outcome_of_step
    from lesson_lib.turn.reduce import initial, reduce

    seq = Counter()
    state = reduce(initial(), TurnStarted(seq(), turn="turn"))
    outcome = "max_steps"
    async with httpx.AsyncClient(timeout=None) as client:
        for step in range(1, 6):
            stream = TurnStream(wire, request=request, step=step, seq=seq)
            body, end = b"", stream.finish
            async with client.stream("POST", url + PATHS[wire], json=request) as response:
                chunks = response.aiter_raw()
                while True:
                    try:
                        body += await asyncio.wait_for(anext(chunks), stall_s)
                    except StopAsyncIteration:
                        break
                    except TimeoutError:
                        def end(stream=stream):
                            return stream.transport_error("stalled", code="stall")
                        break
            ready = []
            for event in stream.feed(body) + end():
                state = reduce(state, event)
                if event.kind == "tool_call_ready":
                    ready.append(event)
            for call in ready:
                state = reduce(state, ToolExecutionStarted(seq(), block=call.block,
                                                           call_id=call.call_id, name=call.name))
                result = await tools[call.name](call.input)
                state = reduce(state, ToolExecutionFinished(seq(), block=call.block,
                                                            call_id=call.call_id, status="ok",
                                                            result=result))
            last = state.steps[-1]
            outcome = outcome_of_step(last.ended, last.finish.reason)
            if outcome is not None or last.finish.reason != "tool_calls":
                break
            request = next_request(state, request, step)
    return reduce(state, TurnFinished(seq(), outcome=outcome or "completed"))


def test_a_loop_that_starts_tools_after_the_stream_ended_fails_on_the_paced_capture():
    verdict = ex.check_live_turn(starts_tools_after_the_stream)
    assert verdict.status == "failed", verdict.message
    # Every case before the paced one passes: only the timing tells this loop apart.
    assert verdict.cases_passed == verdict.cases_total - 1, verdict.message
    assert "the tool for Paris, France started" in verdict.message
    assert "after step 1's last byte" in verdict.message and "tool_call_ready" in verdict.message


def test_the_paced_capture_has_a_call_ready_long_before_its_end():
    leads = ex.ready_leads(ex.PACED_KEY, ex.PACED_SPEED)
    assert max(leads.values()) >= 2 * ex.MIN_LEAD_S and min(leads.values()) < ex.MIN_LEAD_S


# -- exercise 3: Stop anywhere, and the turn's order ------------------------------------------


def test_stop_is_pressed_before_the_first_byte_and_inside_a_block():
    assert ex.arrived_blocks("anthropic-messages/weather-turn-step1", 0) == []
    offset, kind = ex.mid_block("anthropic-messages/weather-turn-step1")
    assert kind == "text"
    [(kind, text)] = ex.arrived_blocks("anthropic-messages/weather-turn-step1", offset)
    assert kind == "text" and text and not text.endswith(".")
    offset, kind = ex.mid_block("openai-chat/weather-turn-step1")
    assert kind == "tool_call"


async def stop_ends_a_step_that_never_began(url, wire, request, tools, stop):
    """The solution's turn without its step start: `step_finished` between steps."""
    from lesson_lib.turn.events import renumber
    from lesson_lib.turn.reduce import reduce_all

    state = await sol.live_turn_with_stop(url, wire, request, tools, stop)
    return reduce_all(renumber([e for e in state.events if e.kind != "step_started"]))


def test_a_stop_whose_events_break_the_order_fails():
    verdict = ex.check_stop(stop_ends_a_step_that_never_began)
    assert verdict.status == "failed", verdict.message
    assert "before the first byte" in verdict.message
    assert "the events break the turn's order" in verdict.message


async def stop_that_waits_for_the_read(url, wire, request, tools, stop):
    """Cancels the tools on Stop, but never the read: a silent stream holds it forever."""
    return await sol.live_turn_with_stop(url, wire, request, tools, asyncio.Event())


def test_a_stop_that_never_cancels_the_read_fails_at_the_deadline(monkeypatch):
    monkeypatch.setattr(ex, "STOP_DEADLINE_S", 2.0)
    verdict = ex.check_stop(stop_that_waits_for_the_read)
    assert verdict.status == "failed", verdict.message
    assert "before the first byte" in verdict.message
    assert "did not end within 2 s after Stop" in verdict.message


async def stop_forgets_what_arrived(url, wire, request, tools, stop):
    """Ends the turn cancelled and in order, but with none of the blocks that arrived."""
    from lesson_lib.turn.events import StepFinished, StepStarted, TurnFinished, TurnStarted
    from lesson_lib.turn.reduce import reduce_all

    await sol.live_turn_with_stop(url, wire, request, tools, stop)
    return reduce_all([TurnStarted(0, turn="turn"), StepStarted(1, step=1, wire=wire),
                       StepFinished(2, step=1, ended="cancelled"),
                       TurnFinished(3, outcome="cancelled")])


def test_a_stop_that_loses_the_text_that_arrived_fails():
    verdict = ex.check_stop(stop_forgets_what_arrived)
    assert verdict.status == "failed", verdict.message
    assert "in the middle of the text" in verdict.message
    assert "had arrived before Stop" in verdict.message


async def stop_leaves_the_text_complete(url, wire, request, tools, stop):
    """Keeps the text, but ends its block as if it were whole."""
    from dataclasses import replace

    from lesson_lib.turn.reduce import reduce_all

    state = await sol.live_turn_with_stop(url, wire, request, tools, stop)
    return reduce_all([replace(e, complete=True, synthesised=False, reason=None)
                       if e.kind == "block_ended" else e for e in state.events])


def test_a_stop_that_calls_the_stopped_text_complete_fails():
    verdict = ex.check_stop(stop_leaves_the_text_complete)
    assert verdict.status == "failed", verdict.message
    assert "in the middle of the text" in verdict.message
    assert "complete=False" in verdict.message
