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
