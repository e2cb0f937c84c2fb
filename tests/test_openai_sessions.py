"""The OpenAI Agents session stream (lesson 7): its wire module against the SDK, its
accumulator against the SDK's stream helper's own state after every event, duplicates
dropped by id (in the helper's window, and only by id), and the session's ends on the turn's
outcomes."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any, get_args

import httpx2
import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from openai import OpenAI
from openai.lib.beta.agents._result import AgentTurnResultCollector
from openai.lib.streaming.agents import _streams
from openai.lib.streaming.agents._streams import _TurnState
from openai.types.beta.agent_session_event import AgentSessionEvent
from session_checks import (
    captures_of,
    check_a_budget_end_and_an_approval_end,
    check_each_says_it_is_constructed,
    check_the_sdk_route_gives_the_same_turn,
    inline_capture,
    sdk_literals,
    texts,
    turn_of,
)

from lesson_lib.accumulate import accumulate
from lesson_lib.accumulate.openai_sessions import OpenAISessionsAccumulator
from lesson_lib.breaks import faults
from lesson_lib.capture.captures import Capture, from_bytes
from lesson_lib.capture.replay import openai_client
from lesson_lib.turn.fake_tools import weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.next_request import next_request
from lesson_lib.turn.order import check
from lesson_lib.turn.run import turn_events, turn_state
from lesson_lib.wires import openai_sessions as oas
from lesson_lib.wires.wire_events import parse_all

BY_NAME = captures_of(oas.WIRE)
CAPTURES = list(BY_NAME.values())


def _capture(*payloads: dict) -> Capture:
    return inline_capture(oas.WIRE, *payloads)


# -- the wire module ---------------------------------------------------------------------


def test_the_vocabulary_is_the_sdk_s_union():
    assert sdk_literals(AgentSessionEvent) == oas.EVENT_TYPES
    assert oas.SESSION_BUDGET_REACHED in sdk_literals(AgentSessionEvent)


def test_the_window_of_recent_ids_is_the_sdk_s():
    assert oas.RECENT_EVENT_LIMIT == _streams._RECENT_EVENT_LIMIT


def test_the_entry_is_the_path_the_sdk_asks():
    seen = []

    def handler(request):
        seen.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=b"")

    client = OpenAI(api_key="offline", base_url="http://test/v1", max_retries=0,
                    http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))
    list(client.beta.agents.sessions.events.stream("sess_1"))
    [request] = seen
    assert request.method == oas.ENTRY.method == "GET"
    assert request.url.path == oas.ENTRY.request_path({"session_id": "sess_1"})
    assert request.headers["openai-beta"] == oas.BETA


def test_every_turn_error_code_of_the_sdk_is_retryable_or_final_or_named():
    from openai.types.beta.session_turn_error import SessionTurnError
    codes = set(get_args(SessionTurnError.model_fields["code"].annotation))
    unnamed = codes - oas.RETRYABLE_ERRORS - oas.FINAL_ERRORS
    # What no retry rule names is neither: a retry is not known to cure it.
    assert unnamed <= {"cyber_policy", "sandbox_error", "executor_version_incompatible",
                       "active_turn_not_steerable", "project_spend_limit_exceeded",
                       "organization_spend_limit_exceeded",
                       "organization_usage_limit_exceeded", "misalignment_policy_violation"}
    assert oas.retryable_error("server_overloaded") and not oas.retryable_error(
        "session_budget_exceeded")


def test_read_error_reads_each_failure_shape():
    error = oas.read_error("error", {"type": "error", "error": {
        "type": "server_error", "code": "server_overloaded", "message": "busy"}})
    assert (error.type, error.code, error.message) == ("server_error", "server_overloaded",
                                                       "busy")
    failed = oas.read_error(oas.TURN_FAILED, {"turn": {"error": {
        "code": "context_length_exceeded", "message": "too long"}}})
    assert (failed.code, failed.message) == ("context_length_exceeded", "too long")
    gone = oas.read_error(oas.SESSION_FAILED, {"session": {"error": "gone"}})
    assert (gone.kind, gone.message, oas.retryable(gone)) == ("session_failed", "gone", False)
    assert oas.read_error(oas.ITEM_DONE, {"error": {"message": "x"}}) is None


# -- the corpus --------------------------------------------------------------------------


def test_the_corpus_has_a_capture_for_every_case_and_each_says_it_is_constructed():
    assert {"session-plain-turn", "session-reasoning", "session-requires-action",
            "session-budget-reached", "session-failed", "session-cancelled",
            "session-duplicates", "weather-turn-step1", "weather-turn-step2"} <= set(BY_NAME)
    check_each_says_it_is_constructed(CAPTURES)


def test_every_event_of_the_corpus_is_the_sdk_s_model_for_its_type():
    from pydantic import TypeAdapter
    union = TypeAdapter(AgentSessionEvent)
    for capture in CAPTURES:
        for event in parse_all(capture.events):
            model = union.validate_python(event.payload)
            assert model.to_dict(mode="json") == event.payload, (capture.name, event.index)


EXPECTED = {   # capture: (outcome, reason, finish reason, raw finish)
    "session-plain-turn": ("completed", "stop", "stop", "completed"),
    "session-reasoning": ("completed", "stop", "stop", "completed"),
    "session-requires-action": ("paused", "requires_action", "pause", "requires_action"),
    "session-budget-reached": ("budget_reached", "vendor_budget", "length", "budget_reached"),
    "session-failed": ("failed", "error", "error", "failed"),
    "session-failed-session": ("failed", "error", "error", "failed"),
    "session-cancelled": ("cancelled", "vendor", "other", "cancelled"),
    "session-duplicates": ("completed", "stop", "stop", "completed"),
    "weather-turn-step1": ("paused", "requires_action", "tool_calls", "requires_action"),
    "weather-turn-step2": ("completed", "stop", "stop", "completed"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_where_the_session_stopped_is_the_turn_s_end(name):
    state = turn_state(BY_NAME[name]).as_dict()
    [step] = state["steps"]
    assert (state["outcome"], state["reason"], step["finish"]["reason"],
            step["finish"]["raw"]) == EXPECTED[name]


def test_a_budget_end_and_an_approval_end_say_why_and_are_never_completed():
    check_a_budget_end_and_an_approval_end(BY_NAME)


# -- the SDK's stream helper --------------------------------------------------------------


def _helper_states(capture: Capture) -> list[dict]:
    """The helper's state after each event the SDK's stream yields (its ``_TurnState`` and
    ``AgentTurnResultCollector``, fed what the helper accepts until it stops)."""
    client = openai_client(capture)
    session = capture.request["session_id"]
    state, collector, done, out = _TurnState(), AgentTurnResultCollector(session), False, []
    for event in client.beta.agents.sessions.events.stream(session):
        if not done and state.accept(event):
            collector.accept(event)
            done = state.terminal(event, session)

        def dump(model: Any) -> Any:
            return model.to_dict(mode="json") if model is not None else None
        out.append({"turn": dump(collector.turn),
                    "messages": [dump(m) for m in collector.messages()],
                    "required_actions": [dump(a) for a in collector.required_actions],
                    "session_failed": collector.session_failed,
                    "turn_ended": state.turn_ended, "done": done})
    return out


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_our_final_is_the_helper_s_state_after_every_event(capture):
    theirs = _helper_states(capture)
    acc = OpenAISessionsAccumulator(capture.request)
    events = parse_all(capture.events)
    assert len(events) == len(theirs)          # the SDK yields every event
    for event, state in zip(events, theirs, strict=True):
        acc.feed(event)
        assert acc.final() == state, (capture.name, event.index, event.type)


@settings(max_examples=examples(20), deadline=None)
@given(data=st.data())
def test_our_final_is_the_helper_s_state_on_any_redelivery(data):
    capture = data.draw(st.sampled_from(CAPTURES), label="capture")
    events = parse_all(capture.events)
    index = data.draw(st.integers(0, len(events) - 1), label="event")
    later = data.draw(st.integers(0, len(events) - 1 - index), label="later")
    broken = faults.duplicate(capture, index, later=later)
    acc = OpenAISessionsAccumulator(broken.request)
    for event, state in zip(parse_all(broken.events), _helper_states(broken), strict=True):
        acc.feed(event)
        assert acc.final() == state, (event.index, event.type)


@pytest.mark.parametrize("size", [1, 7, 64])
def test_final_does_not_depend_on_the_chunking(size):
    for capture in CAPTURES:
        whole, chunked = accumulate(capture), accumulate(capture, chunk_size=size)
        assert (chunked.final, chunked.complete) == (whole.final, whole.complete)
        assert [d.as_dict() for d in chunked.diagnostics] == [
            d.as_dict() for d in whole.diagnostics]


def test_the_helper_reads_on_where_the_course_s_step_ends():
    # requires_action and a budget mid-turn: the course's turn ends (paused, budget_reached),
    # and the helper has not stopped (it would run handlers, or wait for a higher budget).
    for name in ("session-requires-action", "session-budget-reached", "weather-turn-step1"):
        result = accumulate(BY_NAME[name])
        assert result.complete and result.final["done"] is False, name
    assert accumulate(BY_NAME["session-requires-action"]).final["required_actions"][0][
        "type"] == "mcp_approval_request"


# -- duplicates ----------------------------------------------------------------------------


_TURN = {"id": "turn_1", "object": "agent.session.turn", "agent_id": "a", "session_id": "s",
         "created_at": 1, "status": "in_progress"}


def _delta(text: str, event_id: str | None) -> dict:
    out = {"type": oas.OUTPUT_TEXT_DELTA, "session_id": "s", "turn_id": "turn_1",
           "item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": text}
    return out | ({"event_id": event_id} if event_id is not None else {})


def _ending(status: str = "completed") -> list[dict]:
    return [{"type": oas.TURN_COMPLETED, "event_id": "e_end", "session_id": "s",
             "turn_id": "turn_1", "turn": {**_TURN, "status": status}},
            {"type": oas.SESSION_IDLE, "event_id": "e_idle",
             "session": {"id": "s", "status": "idle"}}]


_START = {"type": oas.TURN_CREATED, "event_id": "e_start", "session_id": "s",
          "turn_id": "turn_1", "turn": _TURN}


def test_the_duplicates_capture_gives_the_turn_of_the_stream_without_them():
    capture = BY_NAME["session-duplicates"]
    seen, kept = set(), []
    for event in parse_all(capture.events):
        if event.payload["event_id"] not in seen:
            kept.append(capture.body[event.sse.start:event.sse.end])
            seen.add(event.payload["event_id"])
    clean = from_bytes(b"".join(kept), name="clean", sidecar={"wire": oas.WIRE})
    assert len(clean.events) == len(capture.events) - 3
    assert turn_of(capture) == turn_of(clean)
    assert [d.code for d in accumulate(capture).diagnostics].count("duplicate_event") == 3
    assert "The pin is hahardly old: 2.31.0." in texts(capture)


def test_a_repeated_delta_with_its_id_is_dropped_and_one_without_an_id_is_kept():
    with_ids = _capture(_START, _delta("ha", "d1"), _delta("ha", "d1"), *_ending())
    assert texts(with_ids) == ["ha"]
    assert "duplicate_event" in [d.code for d in accumulate(with_ids).diagnostics]
    without = _capture(_START, _delta("ha", None), _delta("ha", None), *_ending())
    assert texts(without) == ["haha"]
    assert "duplicate_event" not in [d.code for d in accumulate(without).diagnostics]
    distinct = _capture(_START, _delta("ha", "d1"), _delta("ha", "d2"), *_ending())
    assert texts(distinct) == ["haha"]


def _sdk_accepts(ids: list[str | None]) -> list[bool]:
    state = _TurnState()
    return [state.accept(SimpleNamespace(event_id=i, type=oas.OUTPUT_TEXT_DELTA)) for i in ids]


def _ours_accepts(ids: list[str | None]) -> list[bool]:
    recent = oas.RecentIds()
    return [recent.first_time(i) for i in ids]


def test_an_id_older_than_the_window_is_new_again_as_the_sdk_says():
    fillers = [f"f{n}" for n in range(oas.RECENT_EVENT_LIMIT)]
    inside = ["a", *fillers[:-1], "a"]        # 1023 others since: still in the window
    outside = ["a", *fillers, "a"]            # 1024 others since: pushed out
    assert _ours_accepts(inside)[-1] is False and _sdk_accepts(inside)[-1] is False
    assert _ours_accepts(outside)[-1] is True and _sdk_accepts(outside)[-1] is True
    assert _ours_accepts(outside) == _sdk_accepts(outside)


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "c", "d", "e"]), max_size=40))
def test_the_window_accepts_what_the_sdk_accepts(ids):
    assert _ours_accepts(ids) == _sdk_accepts(ids)


def test_without_an_id_the_sdk_would_drop_a_second_event_and_we_do_not():
    # The helper keys its window by ``event_id`` even when there is none: None is a key.
    assert _sdk_accepts([None, None]) == [True, False]
    assert _ours_accepts([None, None]) == [True, True]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_event_delivered_again_later_leaves_the_turn_unchanged(name):
    capture = BY_NAME[name]
    want = turn_of(capture)
    for index in range(len(capture.events)):
        for broken in (faults.duplicate(capture, index), faults.redeliver(capture, index)):
            assert turn_of(broken) == want, (index, broken.sidecar["demonstrates"])


@settings(max_examples=examples(30), deadline=None)
@given(data=st.data())
def test_any_redelivery_leaves_the_turn_unchanged(data):
    capture = data.draw(st.sampled_from(CAPTURES), label="capture")
    broken = capture
    for _ in range(data.draw(st.integers(1, 3), label="copies")):
        events = parse_all(broken.events)
        index = data.draw(st.integers(0, len(events) - 1), label="event")
        later = data.draw(st.integers(0, len(events) - 1 - index), label="later")
        broken = faults.duplicate(broken, index, later=later)
    assert turn_of(broken) == turn_of(capture)


def test_serve_s_duplicate_spec_redelivers_event_n_and_the_turn_is_the_same():
    from lesson_lib.cli.serve import fault_spec
    [spec] = fault_spec.parse_all(["duplicate:3"])
    capture = BY_NAME["weather-turn-step2"]
    served = fault_spec.apply(capture, [spec])
    assert served.body == faults.redeliver(capture, 3).body != capture.body
    assert turn_of(served) == turn_of(capture)
    assert "duplicate_event" in [d.code for d in accumulate(served).diagnostics]


# -- the turn --------------------------------------------------------------------------


def test_a_function_the_application_runs_is_its_call_and_its_output_posted_back():
    step1, step2 = BY_NAME["weather-turn-step1"], BY_NAME["weather-turn-step2"]
    calls = [b for b in turn_state(step1).as_dict()["blocks"] if b["kind"] == "tool_call"]
    assert [(c["tool_name"], c["input"]["location"], c["server_side"]) for c in calls] == [
        ("get_weather", "Paris, France", False), ("get_weather", "Tokyo, Japan", False)]
    outputs = [e for e in turn_events(step2)
               if e.kind == "block_started" and e.block_kind == "tool_result"]
    assert [(o.call_id, o.server_side) for o in outputs] == [(c["call_id"], False)
                                                            for c in calls]


@pytest.mark.parametrize("route", ["wire", "sdk"])
def test_the_loop_posts_each_output_as_the_sdk_s_helper_does(route):
    steps = [BY_NAME["weather-turn-step1"], BY_NAME["weather-turn-step2"]]
    result = asyncio.run(run_turn(steps, [weather_tool()], route=route))
    assert result.state.outcome == "completed"
    assert check(result.events) == []
    index = next(e.seq for e in result.events if e.kind == "step_started" and e.step == 2)
    rebuilt = next_request(result.state.at(index), steps[0].request, step=1)
    assert rebuilt == steps[1].request
    [first, _] = rebuilt["events"]
    assert set(first) == {"type", "turn_id", "call_id", "success", "output"}
    assert first["turn_id"] == result.state.steps[0].response_id is not None


def test_the_server_s_own_items_are_server_side_calls_and_the_commentary_is_text():
    blocks = turn_state(BY_NAME["session-reasoning"]).as_dict()["blocks"]
    assert [b["kind"] for b in blocks] == ["reasoning", "text", "tool_call", "text"]
    command = blocks[2]
    assert (command["server_side"], command["tool_name"], command["input"]) == (
        True, "command_execution", {"command": "grep -rln 'import requests' ."})


def test_an_idle_after_a_turn_status_the_reader_does_not_know_is_unknown():
    capture = _capture(_START, _delta("Hi", "d1"), *_ending(status="expired"))
    state = turn_state(capture).as_dict()
    assert (state["outcome"], state["reason"]) == ("unknown", "unrecognised")


def test_an_idle_before_the_turn_is_the_session_at_rest_not_its_end():
    rest = {"type": oas.SESSION_IDLE, "event_id": "e_rest",
            "session": {"id": "s", "status": "idle"}}
    cut = _capture(rest, _START, _delta("Hi", "d1"))
    assert turn_state(cut).as_dict()["outcome"] == "truncated"
    whole = _capture(rest, _START, _delta("Hi", "d1"), *_ending())
    assert turn_state(whole).as_dict()["outcome"] == "completed"


def test_an_error_event_fails_the_turn_even_when_the_turn_then_completes():
    error = {"type": "error", "event_id": "e_err", "session_id": "s",
             "error": {"type": "server_error", "code": "server_error", "message": "oops"}}
    capture = _capture(_START, _delta("Hi", "d1"), error, *_ending())
    state = turn_state(capture).as_dict()
    assert (state["outcome"], state["reason"]) == ("failed", "error")
    assert not accumulate(capture).complete


def test_a_subagent_s_failed_turn_does_not_fail_the_turn():
    sub = {**_TURN, "id": "turn_sub", "subagent_id": "sub_1", "status": "failed",
           "error": {"code": "server_error", "message": "lost"}}
    capture = _capture(_START, {"type": oas.TURN_FAILED, "event_id": "e_sub",
                                "session_id": "s", "turn_id": "turn_sub", "turn": sub},
                       _delta("Done.", "d1"), *_ending())
    assert turn_state(capture).as_dict()["outcome"] == "completed"
    assert "subagent_turn_failed" in [d.code for d in accumulate(capture).diagnostics]


def test_a_stream_cut_before_the_idle_is_truncated_not_completed():
    capture = BY_NAME["session-plain-turn"]
    events = parse_all(capture.events)
    done = max(i for i, e in enumerate(events) if e.type == oas.ITEM_DONE)
    assert turn_state(faults.cut_at(capture, events[done].sse.end)).as_dict()[
        "outcome"] == "truncated"


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_the_sdk_route_gives_the_same_turn(capture):
    check_the_sdk_route_gives_the_same_turn(capture)


# -- live, over a socket -----------------------------------------------------------------


def test_stop_cancels_the_live_session_turn_and_its_running_function():
    from lesson_lib.cli.serve.background import serving
    from lesson_lib.live import LiveTool, LiveTurn
    seen = []

    async def slow(arguments):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append(arguments)
            raise

    async def go(url):
        step1 = BY_NAME["weather-turn-step1"]
        turn = LiveTurn(url, oas.WIRE, step1.request, [LiveTool("get_weather", slow)])

        async def stop_when_a_tool_runs():
            while not any(b.execution == "running" for b in turn.state.calls):
                await asyncio.sleep(0.005)
            turn.cancel()

        stopper = asyncio.ensure_future(stop_when_a_tool_runs())
        result = await asyncio.wait_for(turn.run(), 30)
        stopper.cancel()
        return result

    with serving(speed="instant") as url:
        result = asyncio.run(go(url))
    assert (result.outcome, result.state.end.reason) == ("cancelled", "user")
    assert seen and "interrupted" in {b.execution_status for b in result.state.calls}
    assert check(result.events) == []
