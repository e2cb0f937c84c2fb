"""Gemini in the turn: its adapter on every capture, honest outcomes, and the two routes.

The wire route (bytes -> records -> the accumulator's changes -> the Gemini
adapter) and the SDK route (google-genai's ``generate_content_stream`` replayed
offline -> its response objects -> the same adapter) must give the same turn
wherever the SDK accepts the capture, but for what the SDK cannot see.
"""

from __future__ import annotations

import json

import pytest

from lesson_lib.capture.captures import corpus, from_bytes, reference_corpus
from lesson_lib.capture.replay import run_sdk
from lesson_lib.turn.adapters import ADAPTERS, GeminiAdapter
from lesson_lib.turn.order import check
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import route_for, turn_events, turn_state
from lesson_lib.wires.stream_end import how_it_ended
from lesson_lib.wires.wire_events import parse_all

WIRE = "google-gemini"
CAPTURES = [c for c in reference_corpus() + corpus() if c.wire == WIRE]
IDS = [c.key for c in CAPTURES]
EXPECTED = {"ended": {"completed"}, "cut": {"truncated"}, "error": {"failed"},
            "http_error": {"failed"}}
# What google-genai's types drop: it cannot hand them on.
SDK_UNSEEN_USAGE = {"serviceTier"}


def gemini(body: bytes, **sidecar):
    return from_bytes(body, sidecar={"wire": WIRE, **sidecar})


def rec(*parts, finish=None, usage=None) -> bytes:
    cand: dict = {"content": {"parts": list(parts), "role": "model"}, "index": 0}
    if finish:
        cand["finishReason"] = finish
    payload: dict = {"candidates": [cand], "modelVersion": "gemini-2.5-flash",
                     "responseId": "r1"}
    if usage:
        payload["usageMetadata"] = usage
    return b"data: " + json.dumps(payload).encode() + b"\r\n\r\n"


def test_the_adapter_is_registered_and_the_wire_route_is_taken():
    assert ADAPTERS[WIRE] is GeminiAdapter
    assert route_for(WIRE) == "wire"


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_every_capture_gives_an_ordered_turn_with_an_honest_outcome(capture):
    events = turn_events(capture)
    assert check(events) == []
    state = reduce_all(events)
    ending = how_it_ended(capture.wire, parse_all(capture.events), capture.sse_diagnostics,
                          capture.status, capture.text)
    assert state.outcome in EXPECTED[ending.kind], ending.reason
    if ending.kind != "ended":
        assert state.outcome != "completed"
    assert len({b.id for b in state.blocks}) == len(state.blocks)


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_both_routes_give_the_same_turn_where_the_sdk_accepts_the_capture(capture):
    sdk = run_sdk(capture)
    wire_state = turn_state(capture, "wire").as_dict()
    sdk_state = turn_state(capture, "sdk").as_dict()
    if sdk.error is not None:
        # A record cut in the middle: the SDK raises on the partial JSON, so that
        # route fails where the wire route says truncated. Never completed on either.
        assert wire_state["outcome"] != "completed" and sdk_state["outcome"] != "completed"
        return
    for state in (wire_state, sdk_state):
        for block in state["blocks"]:
            # The SDK reads every numberValue as a double (45 -> 45.0) and dumps a whole
            # part's fields in its own order: compare the values, not their spelling.
            if block["kind"] == "tool_call":
                block.pop("raw_input")
            elif block["kind"] in ("other", "tool_result") and block["text"].startswith("{"):
                block["text"] = json.loads(block["text"])
        for step in state["steps"]:
            raw = step["usage"]["raw"]
            if isinstance(raw, dict):
                step["usage"]["raw"] = {k: v for k, v in raw.items() if k not in SDK_UNSEEN_USAGE}
        state["usage"]["raw"] = [s["usage"]["raw"] for s in state["steps"]]
    assert sdk_state == wire_state


def test_the_finish_reason_reads_stop_with_calls_as_tool_calls():
    body = rec({"functionCall": {"name": "get_weather", "args": {"city": "Paris"}},
                "thoughtSignature": "c2ln"}) + rec({"text": ""}, finish="STOP")
    state = turn_state(gemini(body))
    assert state.outcome == "completed"
    assert (state.steps[0].finish.reason, state.steps[0].finish.raw) == ("tool_calls", "STOP")
    call = state.calls[0]
    assert (call.name, call.input, call.call_state) == ("get_weather", {"city": "Paris"},
                                                         "complete")


@pytest.mark.parametrize(("raw", "unified"), [("MAX_TOKENS", "length"),
                                               ("SAFETY", "content_filter"),
                                               ("MALFORMED_FUNCTION_CALL", "error")])
def test_other_finish_reasons_keep_their_raw_value(raw, unified):
    state = turn_state(gemini(rec({"text": "Once upon"}, finish=raw)))
    assert (state.steps[0].finish.reason, state.steps[0].finish.raw) == (unified, raw)


def test_a_whole_function_call_is_ready_in_the_record_that_carries_it():
    body = (rec({"text": "Checking."})
            + rec({"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}})
            + rec({"text": ""}, finish="STOP"))
    events = turn_events(gemini(body))
    ready = next(e for e in events if e.kind == "tool_call_ready")
    started = next(e for e in events if e.kind == "block_started" and e.name == "get_weather")
    assert ready.at == started.at == 1
    assert ready.input == {"city": "Paris"}


def test_streamed_arguments_settle_paths_as_they_arrive():
    body = (rec({"functionCall": {"name": "get_weather", "willContinue": True}})
            + rec({"functionCall": {"partialArgs": [
                {"jsonPath": "$.city", "stringValue": "Par", "willContinue": True}],
                "willContinue": True}})
            + rec({"functionCall": {"partialArgs": [
                {"jsonPath": "$.city", "stringValue": "is"}], "willContinue": True}})
            + rec({"functionCall": {"partialArgs": [
                {"jsonPath": "$.days", "numberValue": 3}], "willContinue": True}})
            + rec({"functionCall": {}}, finish="STOP"))
    events = turn_events(gemini(body))
    deltas = [(e.at, e.fragment, e.settled) for e in events if e.kind == "block_delta"]
    assert deltas == [(1, '{"city":"Par', ()), (2, 'is"', (("city",),)),
                      (3, ',"days":3', ()), (4, "}", (("days",), ()))]
    state = reduce_all(events)
    assert state.calls[0].input == {"city": "Paris", "days": 3}
    assert state.steps[0].finish.reason == "tool_calls"


def test_usage_is_the_last_running_total():
    body = (rec({"text": "a"}, usage={"promptTokenCount": 15, "totalTokenCount": 15})
            + rec({"text": "b"}, finish="STOP", usage={"promptTokenCount": 13,
                                                       "candidatesTokenCount": 2,
                                                       "thoughtsTokenCount": 5}))
    usage = turn_state(gemini(body)).steps[0].usage
    assert (usage.input, usage.output, usage.reasoning) == (13, 7, 5)


@pytest.mark.parametrize("cut", ["middle", "boundary"])
def test_a_cut_stream_is_truncated_never_completed(cut):
    body = rec({"text": "Hello"}) + rec({"text": " there"})
    if cut == "middle":
        body = body[:-20]
    state = turn_state(gemini(body))
    assert state.outcome == "truncated"
    assert state.blocks[0].text.startswith("Hello") and not state.blocks[0].complete


def test_an_error_record_fails_the_turn_after_output():
    body = rec({"text": "Hel"}) + (b'data: {"error": {"code": 503, "message": "The model is '
                                   b'overloaded.", "status": "UNAVAILABLE"}}\r\n\r\n')
    state = turn_state(gemini(body))
    err = state.errors[0]
    assert state.outcome == "failed"
    assert (err.scope, err.phase, err.retryable, err.code) == (
        "provider", "after_output", True, "UNAVAILABLE")


def test_an_http_error_before_any_record_fails_before_output():
    body = b'{"error": {"code": 400, "message": "API key not valid.", "status": "INVALID_ARGUMENT"}}'
    state = turn_state(gemini(body, response={"status": 400}))
    err = state.errors[0]
    assert state.outcome == "failed"
    assert (err.phase, err.retryable) == ("before_output", False)
    assert "API key not valid." in err.message


def test_a_path_that_jumps_back_fails_the_turn():
    body = (rec({"functionCall": {"name": "f", "willContinue": True}})
            + rec({"functionCall": {"partialArgs": [
                {"jsonPath": "$.a", "numberValue": 1},
                {"jsonPath": "$.a", "numberValue": 2}], "willContinue": True}})
            + rec({"functionCall": {}}, finish="STOP"))
    state = turn_state(gemini(body))
    assert state.outcome == "failed"
    assert state.errors[0].scope == "protocol"
    assert state.errors[0].code == "partial_args_out_of_order"


def test_two_candidates_become_two_choices():
    payload = {"candidates": [
        {"index": 0, "content": {"parts": [{"text": "a"}]}, "finishReason": "STOP"},
        {"index": 1, "content": {"parts": [{"text": "b"}]}, "finishReason": "STOP"}]}
    state = turn_state(gemini(b"data: " + json.dumps(payload).encode() + b"\n\n"))
    assert state.outcome == "completed"
    assert [(b.choice, b.text) for b in state.blocks] == [(0, "a"), (1, "b")]
