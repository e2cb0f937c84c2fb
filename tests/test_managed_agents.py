"""The Anthropic Managed Agents session stream (lesson 7): its wire module against the SDK,
its accumulator against the SDK's own fold, previews reconciled, duplicates dropped by id
(and only by id), and the idle reasons on the turn's outcomes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.lib.sessions import accumulate_managed_agents_event
from anthropic.types.beta.sessions import BetaManagedAgentsStreamSessionEvents
from anthropic.types.beta.sessions.beta_managed_agents_session_status_idle_event import (
    StopReason,
)
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st
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
from lesson_lib.accumulate.managed_agents import ManagedAgentsAccumulator
from lesson_lib.breaks import faults
from lesson_lib.capture.captures import Capture, from_bytes
from lesson_lib.capture.replay import run_sdk
from lesson_lib.cli.serve import fault_spec
from lesson_lib.turn.run import turn_events, turn_state
from lesson_lib.wires import managed_agents as ma
from lesson_lib.wires.wire_events import parse_all

BY_NAME = captures_of(ma.WIRE)
CAPTURES = list(BY_NAME.values())


def _capture(*payloads: dict) -> Capture:
    return inline_capture(ma.WIRE, *payloads)


# -- the wire module ---------------------------------------------------------------------


def test_the_vocabulary_holds_every_event_type_of_the_sdk_s_union():
    assert sdk_literals(BetaManagedAgentsStreamSessionEvents) <= ma.EVENT_TYPES


def test_every_idle_stop_reason_of_the_sdk_has_a_finish_reason():
    assert sdk_literals(StopReason) == ma.STOP_REASONS
    assert ma.finish_reason({"type": "requires_action", "event_ids": []}) == "pause"
    assert ma.finish_reason("budget_reached") == "length"
    assert ma.finish_reason("some_new_reason") == "other"
    assert ma.finish_reason(None) is None


def test_a_session_error_gives_up_unless_the_server_retries():
    retrying = {"type": "session.error", "error": {"type": "model_overloaded_error",
                                                   "message": "busy",
                                                   "retry_status": {"type": "retrying"}}}
    exhausted = json.loads(json.dumps(retrying).replace("retrying", "exhausted"))
    assert not ma.gives_up(retrying) and ma.gives_up(exhausted)
    error = ma.read_error("session.error", exhausted)
    assert (error.type, error.message) == ("model_overloaded_error", "busy")
    assert ma.retryable(error)
    assert ma.read_error("agent.message", exhausted) is None


def test_the_entry_is_the_sdk_s_path():
    assert ma.ENTRY.request_path({"session_id": "sesn_1"}) == "/v1/sessions/sesn_1/events/stream"


# -- the corpus --------------------------------------------------------------------------


def test_the_corpus_has_a_capture_for_every_case_and_each_says_it_is_constructed():
    assert {"session-plain-turn", "session-custom-tool", "session-previews",
            "session-preview-only", "session-requires-action", "session-budget-reached",
            "session-error", "session-duplicates"} <= set(BY_NAME)
    check_each_says_it_is_constructed(CAPTURES)


EXPECTED = {   # capture: (outcome, finish reason, raw stop reason)
    "session-plain-turn": ("completed", "stop", "end_turn"),
    "session-custom-tool": ("completed", "stop", "end_turn"),
    "session-previews": ("completed", "stop", "end_turn"),
    "session-preview-only": ("completed", "stop", "end_turn"),
    "session-requires-action": ("paused", "pause", "requires_action"),
    "session-budget-reached": ("budget_reached", "length", "budget_reached"),
    "session-error": ("failed", "error", "retries_exhausted"),
    "session-refusal": ("completed", "refusal", "refusal"),
    "session-duplicates": ("completed", "stop", "end_turn"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_idle_reason_is_the_turn_s_end(name):
    state = turn_state(BY_NAME[name]).as_dict()
    step = state["steps"][0]
    assert (state["outcome"], step["finish"]["reason"], step["finish"]["raw"]) == EXPECTED[name]


def test_a_budget_end_and_an_approval_end_say_why_and_are_never_completed():
    check_a_budget_end_and_an_approval_end(BY_NAME)


# -- the SDK's own fold -------------------------------------------------------------------


def check_against_the_sdks_fold(capture: Capture, ours: Any = None) -> None:
    """After every event, the SDK's snapshot (``accumulate_managed_agents_event``) equals our
    agent message with its id; at the end, its last snapshot is our last message."""
    outcome = run_sdk(capture)
    assert outcome.error is None, outcome.error
    ours_acc = ManagedAgentsAccumulator()
    wire_events = [e for e in parse_all(capture.events) if e.sse.event is not None]
    assert len(wire_events) == len(outcome.events)      # the SDK reads every named event
    snapshot = None
    for event, sdk_event in zip(wire_events, outcome.events, strict=True):
        ours_acc.feed(event)
        snapshot = accumulate_managed_agents_event(snapshot, sdk_event)
        if snapshot is not None:
            theirs = snapshot.model_dump(mode="json")
            mine = ours_acc.messages()[snapshot.id]
            assert mine["content"] == theirs["content"], (event.index, snapshot.id)
    ours_acc.finish()
    messages = [e for e in ours_acc.final()["events"] if e.get("type") == ma.AGENT_MESSAGE]
    if snapshot is None:
        assert not messages
        return
    assert messages[-1]["id"] == snapshot.id
    assert messages[-1]["content"] == snapshot.model_dump(mode="json")["content"]
    if ours is not None:
        assert ours.final == ours_acc.final()


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_our_messages_equal_the_sdk_s_fold_after_every_event(capture):
    check_against_the_sdks_fold(capture, accumulate(capture))


# -- previews ------------------------------------------------------------------------------


def _start(event_id: str, kind: str = "agent.message") -> dict:
    return {"type": "event_start", "event": {"type": kind, "id": event_id}}


def _delta(event_id: str, text: str, index: int = 0) -> dict:
    return {"type": "event_delta", "event_id": event_id,
            "delta": {"type": "content_delta", "index": index,
                      "content": {"type": "text", "text": text}}}


def _message(event_id: str, text: str) -> dict:
    return {"type": "agent.message", "id": event_id, "content": [{"type": "text", "text": text}],
            "processed_at": "2026-05-04T09:30:01Z"}


_SPAN = {"type": "span.model_request_start", "id": "span1",
         "processed_at": "2026-05-04T09:30:00Z"}
_END = {"type": "span.model_request_end", "id": "span1e", "model_request_start_id": "span1",
        "model_usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 0,
                        "cache_creation_input_tokens": 0},
        "processed_at": "2026-05-04T09:30:02Z"}
_IDLE = {"type": "session.status_idle", "id": "idle1", "stop_reason": {"type": "end_turn"},
         "processed_at": "2026-05-04T09:30:03Z"}


def test_the_canonical_event_replaces_its_preview_and_is_never_appended_to_it():
    capture = _capture(_SPAN, _start("m1"), _delta("m1", "Hello, "), _delta("m1", "wor"),
                       _message("m1", "Hello, world."), _END, _IDLE)
    assert texts(capture) == ["Hello, world."]
    final = accumulate(capture).final
    assert [e for e in final["events"] if e["type"] == "agent.message"] == [
        _message("m1", "Hello, world.")]


def test_a_preview_that_never_gets_its_canonical_event_is_kept_and_marked():
    capture = _capture(_SPAN, _start("m1"), _delta("m1", "Half an ans"), _END, _IDLE)
    state = turn_state(capture).as_dict()
    [block] = [b for b in state["blocks"] if b["kind"] == "text"]
    assert block["text"] == "Half an ans" and block["complete"] is False
    assert "preview_only" in [d.code for d in accumulate(capture).diagnostics]
    [message] = [e for e in accumulate(capture).final["events"] if e["type"] == "agent.message"]
    assert message["preview"] is True and message["content"][0]["text"] == "Half an ans"


def test_a_canonical_event_with_the_preview_s_text_is_not_restated():
    capture = _capture(_SPAN, _start("m1"), _delta("m1", "All of it."),
                       _message("m1", "All of it."), _END, _IDLE)
    [block] = [b for b in turn_state(capture).as_dict()["blocks"] if b["kind"] == "text"]
    assert block["text"] == "All of it." and not block.get("restated")


# -- duplicates -----------------------------------------------------------------------------


def test_the_duplicates_capture_gives_the_turn_of_the_stream_without_them():
    capture = BY_NAME["session-duplicates"]
    seen, kept = set(), []
    for event in parse_all(capture.events):
        event_id = event.payload.get("id")
        if event_id is None or event_id not in seen:
            kept.append(capture.body[event.sse.start:event.sse.end])
            seen.add(event_id)
    clean = from_bytes(b"".join(kept), name="clean", sidecar={"wire": ma.WIRE})
    assert len(clean.events) < len(capture.events)
    assert turn_of(capture) == turn_of(clean)
    assert [d.code for d in accumulate(capture).diagnostics].count("duplicate_event") == 4


def test_a_repeated_delta_has_no_id_and_is_text_not_a_duplicate():
    capture = _capture(_SPAN, _start("m1"), _delta("m1", "ha"), _delta("m1", "ha"), _END, _IDLE)
    assert texts(capture) == ["haha"]
    assert "duplicate_event" not in [d.code for d in accumulate(capture).diagnostics]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_event_delivered_again_later_leaves_the_turn_unchanged(name):
    capture = BY_NAME[name]
    want = turn_of(capture)
    for index, event in enumerate(parse_all(capture.events)):
        if "id" not in event.payload:
            continue
        for broken in (faults.duplicate(capture, index), faults.redeliver(capture, index)):
            assert turn_of(broken) == want, (index, broken.sidecar["demonstrates"])


@settings(max_examples=examples(40), deadline=None)
@given(data=st.data())
def test_any_redelivery_of_ids_leaves_the_turn_unchanged(data):
    capture = data.draw(st.sampled_from(CAPTURES), label="capture")
    broken = capture
    for _ in range(data.draw(st.integers(1, 3), label="copies")):
        events = parse_all(broken.events)
        with_ids = [i for i, e in enumerate(events) if "id" in e.payload]
        index = data.draw(st.sampled_from(with_ids), label="event")
        later = data.draw(st.integers(0, len(events) - 1 - index), label="later")
        broken = faults.duplicate(broken, index, later=later)
    assert turn_of(broken) == turn_of(capture)


def test_duplicate_later_puts_the_copy_after_the_later_event():
    capture = BY_NAME["session-plain-turn"]
    broken = faults.duplicate(capture, 1, later=3)
    before, after = parse_all(capture.events), parse_all(broken.events)
    assert [e.sse.data for e in after] == [e.sse.data for e in before[:5]] + [
        before[1].sse.data] + [e.sse.data for e in before[5:]]
    assert broken.sidecar["fault"] == {"kind": "duplicate", "at": 1, "later": 3}
    assert "again after event 4" in broken.sidecar["demonstrates"]
    with pytest.raises(faults.FaultError):
        faults.duplicate(capture, 1, later=len(before))


def test_redeliver_puts_the_copy_just_before_the_last_event():
    capture = BY_NAME["session-plain-turn"]
    before = parse_all(capture.events)
    after = parse_all(faults.redeliver(capture, 0).events)
    assert [e.sse.data for e in after] == [e.sse.data for e in before[:-1]] + [
        before[0].sse.data, before[-1].sse.data]


def test_serve_s_duplicate_spec_redelivers_event_n():
    [spec] = fault_spec.parse_all(["duplicate:2"])
    capture = BY_NAME["session-plain-turn"]
    served = fault_spec.apply(capture, [spec])
    assert served.body == faults.redeliver(capture, 2).body
    assert turn_of(served) == turn_of(capture)


# -- the session goes on after it asked --------------------------------------------------


def test_a_stream_cut_after_the_session_ran_again_is_truncated_not_completed():
    capture = BY_NAME["session-custom-tool"]
    events = parse_all(capture.events)
    running = max(i for i, e in enumerate(events) if e.type == ma.SESSION_RUNNING)
    cut = faults.cut_at(capture, events[running + 1].sse.end)
    assert turn_state(cut).as_dict()["outcome"] == "truncated"


def test_a_custom_tool_the_application_runs_is_its_call_and_its_result_posted_back():
    capture = BY_NAME["session-custom-tool"]
    blocks = turn_state(capture).as_dict()["blocks"]
    call = next(b for b in blocks if b["kind"] == "tool_call")
    assert (call["tool_name"], call["input"], call["server_side"]) == (
        "lookup_pinned_version", {"package": "requests"}, False)
    [result] = [e for e in turn_events(capture)
                if e.kind == "block_started" and e.block_kind == "tool_result"]
    assert (result.call_id, result.server_side) == (call["call_id"], False)


def test_a_session_that_waits_only_on_the_application_s_tool_asks_for_tools():
    capture = BY_NAME["session-custom-tool"]
    events = parse_all(capture.events)
    idle = next(i for i, e in enumerate(events) if e.type == ma.SESSION_IDLE)
    asked = faults.cut_at(capture, events[idle].sse.end)
    step = turn_state(asked).as_dict()["steps"][0]
    assert step["finish"] == {"reason": "tool_calls", "raw": "requires_action"}


@pytest.mark.parametrize("capture", CAPTURES, ids=lambda c: c.name)
def test_the_sdk_route_gives_the_same_turn(capture):
    check_the_sdk_route_gives_the_same_turn(capture)
