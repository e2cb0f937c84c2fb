"""Gemini Interactions onto the turn: the adapter, the SDK route, and the next request.

Every Interactions capture (the constructed ones and the five recordings) gives
a turn on both routes (the bytes through the accumulator, google-genai's
objects through the same accumulator) whose ending, finish and blocks agree,
and whose outcome is honest: a body cut mid-step is truncated, an error event
fails the step, ``requires_action`` waits on tools (never shown as done).
The adapter's events do not depend on where the body was cut. The next request
sends the results back as the API takes them, stateful and stateless.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import replace

import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulate
from lesson_lib.capture.captures import corpus, detect_wire, from_bytes, load, reference_corpus
from lesson_lib.turn.adapters import ADAPTERS, GeminiInteractionsAdapter
from lesson_lib.turn.fake_tools import FakeTool, ToolFailed, weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.next_request import next_request
from lesson_lib.turn.order import check
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import step_events, stream_for, turn_events
from lesson_lib.turn.summary import shown_outcome
from lesson_lib.wires import gemini_interactions as gi

WIRE = gi.WIRE
CAPTURES = [c for c in corpus() + reference_corpus() if c.wire == WIRE]
IDS = [c.key for c in CAPTURES]
OURS = [c for c in CAPTURES if c.path is not None and "reference" not in str(c.path)]


def state_of(name: str, route: str = "wire"):
    return reduce_all(turn_events(load(f"{WIRE}/{name}"), route))


def last_step(events):
    return next(e for e in reversed(events) if e.kind == "step_finished")


def blocks_said(state) -> list[tuple]:
    """What a reader sees of each block: kind, text, call, signature, sources, completeness."""
    return [(b.kind, b.wire_kind, b.channel, b.text, b.name, b.call_id, b.input, b.call_state,
             b.server_side, b.signature, tuple(json.dumps(x, sort_keys=True) for x in b.sources), b.complete)
            for b in state.blocks]


def test_the_wire_is_registered_with_its_adapter():
    assert ADAPTERS[WIRE] is GeminiInteractionsAdapter
    assert len(OURS) >= 10 and len(CAPTURES) >= 15


# -- the adapter ----------------------------------------------------------------------------


def test_a_thought_is_reasoning_with_its_signature_and_the_output_is_text():
    cap = load(f"{WIRE}/thought-signature")
    state = state_of("thought-signature")
    thought, text = state.blocks
    assert (thought.kind, thought.channel, text.kind) == ("reasoning", "reasoning", "text")
    deltas = [json.loads(e.data)["delta"] for e in cap.events
              if json.loads(e.data)["event_type"] == gi.STEP_DELTA]
    assert thought.signature == next(d["signature"] for d in deltas
                                     if d["type"] == gi.THOUGHT_SIGNATURE_DELTA)
    assert thought.text == "".join(d["content"]["text"] for d in deltas
                                   if d["type"] == gi.THOUGHT_SUMMARY_DELTA)
    assert text.text == cap.sidecar["sdk"]["text"] and text.complete
    assert state.outcome == "completed" and state.steps[-1].finish.reason == "stop"


def test_a_signature_only_thought_is_a_signed_reasoning_block_of_no_text():
    thought = state_of("text").blocks[0]
    assert thought.kind == "reasoning" and thought.text == "" and thought.signature


def test_streamed_arguments_settle_through_the_partial_json_parser_split_characters_and_all():
    cap = load(f"{WIRE}/streamed-arguments")
    events = turn_events(cap)
    call = next(b for b in reduce_all(events).blocks if b.kind == "tool_call")
    fragments = [json.loads(e.data)["delta"]["arguments"] for e in cap.events
                 if json.loads(e.data)["event_type"] == gi.STEP_DELTA
                 and json.loads(e.data)["delta"]["type"] == gi.ARGUMENTS_DELTA]
    assert len(fragments) > 10
    prefixes = ["".join(fragments[:i]) for i in range(1, len(fragments))]
    assert any(p.endswith("\\u0") for p in prefixes)           # inside an escape
    assert any(p.endswith("\\ud83c") for p in prefixes)        # between surrogate halves
    assert call.input == json.loads("".join(fragments))
    assert call.input["message"].count("\U0001f302") == 1 and call.input["to"] == "Renée Dubois"
    assert (call.name, call.call_state, call.server_side) == ("send_postcard", "complete", False)
    settled = [tuple(p) for e in events if e.kind == "block_delta" for p in e.settled]
    assert {("to",), ("city",), ("message",), ("stamps",)} <= set(settled)
    # A path settles once, and only when its value is whole: "to" before "message" arrives.
    assert len(settled) == len(set(settled))
    ready = next(e for e in events if e.kind == "tool_call_ready")
    assert ready.input == call.input


def test_requires_action_is_a_step_that_waits_on_tools_never_shown_as_done():
    for name in ("weather-turn-step1", "parallel-calls", "streamed-arguments"):
        state = state_of(name)
        finish = state.steps[-1].finish
        assert (finish.reason, finish.raw) == ("tool_calls", gi.REQUIRES_ACTION), name
        assert shown_outcome(state) == "tools_to_run", name
    calls = [b for b in state_of("parallel-calls").blocks if b.kind == "tool_call"]
    assert [json.loads(json.dumps(c.input)) for c in calls] == [
        {"timezone": "Europe/Paris"}, {"timezone": "America/Sao_Paulo"}]
    assert len({c.call_id for c in calls}) == 2


def test_server_tool_steps_are_server_work_and_the_citation_is_a_source():
    state = state_of("server-tool")
    call, result, text = state.blocks
    assert (call.wire_kind, call.kind, call.server_side) == ("google_search_call", "tool_call",
                                                              True)
    assert (result.wire_kind, result.kind, result.server_side) == ("google_search_result",
                                                                   "tool_result", True)
    assert not state.calls or all(b.server_side for b in state.calls)
    assert text.kind == "text" and [s["type"] for s in text.sources] == ["url_citation"]
    assert state.outcome == "completed"


@pytest.mark.parametrize("route", ["wire", "sdk"])
def test_a_server_call_s_block_carries_the_input_its_delta_stated(route):
    """The search queries arrive in a delta after the step's start: the call's block holds
    them as its input and its end data, as a server call's block does on the other wires,
    and a stateless next request sends them back."""
    capture = load(f"{WIRE}/server-tool")
    stated = accumulate(capture).final["steps"][0]
    assert stated["type"] == "google_search_call" and stated[gi.ARGUMENTS_KEY]["queries"]
    state = reduce_all(turn_events(capture, route))
    call = state.blocks[0]
    assert (call.kind, call.server_side, call.call_state) == ("tool_call", True, "complete")
    assert (call.name, call.call_id) == ("google_search", stated["id"])
    assert call.input == stated[gi.ARGUMENTS_KEY]
    assert call.end_data == stated
    rebuilt = next_request(state, {"model": "m", "input": "Who won?"}, stateful=False)
    assert rebuilt["input"][1] == stated


def test_a_server_call_cut_before_its_stop_is_no_complete_call():
    capture = load(f"{WIRE}/server-tool")
    cut = capture.body[:capture.body.index(b"event: step.stop")]
    state = reduce_all(turn_events(from_bytes(cut, sidecar={"wire": WIRE})))
    call = state.blocks[0]
    assert (call.kind, call.server_side, call.complete) == ("tool_call", True, False)
    assert call.call_state == "cut" and state.outcome != "completed"


def test_an_error_event_fails_the_step_as_a_retryable_provider_error():
    events = turn_events(load(f"{WIRE}/error-mid-stream"))
    error = next(e for e in events if e.kind == "error_reported")
    assert (error.scope, error.code, error.retryable, error.phase) == (
        "provider", "UNAVAILABLE", True, "after_output")
    assert last_step(events).ended == "error" and events[-1].outcome == "failed"
    text = reduce_all(events).blocks[-1]
    assert text.kind == "text" and not text.complete and text.text


def test_a_body_cut_mid_step_is_truncated_on_both_routes():
    for route in ("wire", "sdk"):
        events = turn_events(load(f"{WIRE}/cut-mid-step"), route)
        assert last_step(events).ended == "cut", route
        assert events[-1].outcome == "truncated", route
        assert not any(e.kind == "error_reported" for e in events), route
        text = reduce_all(events).blocks[-1]
        assert text.synthesised and not text.complete, route


def test_a_cut_inside_a_call_s_arguments_is_a_cut_call_not_a_ready_one():
    cap = load(f"{WIRE}/streamed-arguments")
    said, at = "", None
    for e in cap.events:            # cut after the fragment that starts the "city" key
        delta = json.loads(e.data).get("delta") or {}
        said += delta.get("arguments", "")
        if '"city"' in said:
            at = e.end
            break
    events = step_events(from_bytes(cap.body[:at], sidecar={"wire": WIRE}))
    assert not any(e.kind == "tool_call_ready" for e in events)
    invalid = next(e for e in events if e.kind == "tool_call_invalid")
    assert invalid.state == "cut" and invalid.partial["to"] == "Renée Dubois"
    assert events[-1].ended == "cut"


def test_the_usage_is_the_interaction_s_in_the_turn_s_names():
    step = state_of("text").steps[-1]
    raw = step.usage.raw
    assert step.usage.input == raw["total_input_tokens"] + raw["total_tool_use_tokens"]
    assert step.usage.output == raw["total_output_tokens"] + raw["total_thought_tokens"]
    assert step.model == "gemini-2.5-flash" and step.response_id.startswith("v1_")


def test_a_bare_body_is_told_by_its_event_type_field():
    for cap in CAPTURES:
        assert detect_wire(cap.body) == WIRE, cap.key
        bare = b"".join(b"data: " + e.data.encode() + b"\n\n" for e in cap.events)
        assert detect_wire(bare) == WIRE, cap.key      # no event: lines at all


# -- both routes ----------------------------------------------------------------------------


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_both_routes_give_the_same_turn_and_an_honest_outcome(capture):
    wire, sdk = turn_events(capture, "wire"), turn_events(capture, "sdk")
    assert check(wire) == [] and check(sdk) == []
    a, b = last_step(wire), last_step(sdk)
    assert (a.ended, a.finish, a.usage, a.model, a.response_id) == (
        b.ended, b.finish, b.usage, b.model, b.response_id)
    assert wire[-1].outcome == sdk[-1].outcome
    assert blocks_said(reduce_all(wire)) == blocks_said(reduce_all(sdk))
    payloads = [json.loads(e.data) for e in capture.events if e.data.startswith("{")]
    completed = [p for p in payloads if p.get("event_type") == gi.INTERACTION_COMPLETED]
    errors = [p for p in payloads if p.get("event_type") == gi.ERROR]
    if errors:
        assert a.ended == "error" and wire[-1].outcome == "failed"
    elif not completed:
        assert a.ended == "cut" and wire[-1].outcome == "truncated"
    else:
        status = completed[-1]["interaction"]["status"]
        assert a.ended == "proper" and a.finish.raw == status
        assert wire[-1].outcome == "completed"
        assert shown_outcome(reduce_all(wire)) == (
            "tools_to_run" if status == gi.REQUIRES_ACTION else "completed")


# -- chunk invariance -------------------------------------------------------------------------


def pushed(capture, chunks) -> list:
    stream = stream_for(capture)
    out = []
    for chunk in chunks:
        out += stream.feed(chunk)
    return out + stream.finish()


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_chunkings_give_the_same_turn_events(data):
    capture = data.draw(st.sampled_from(CAPTURES), label="capture")
    body = capture.body
    n = len(body)
    ends = sorted(data.draw(st.sets(st.integers(1, max(1, n - 1)), max_size=60), label="ends"))
    edges = [0, *[e for e in ends if 0 < e < n], n]
    chunks = [body[a:b] for a, b in zip(edges, edges[1:], strict=False)]
    assert pushed(capture, chunks) == pushed(capture, [body])


def test_one_byte_at_a_time_and_the_recorded_reads_give_the_same_events():
    for capture in OURS:
        whole = pushed(capture, [capture.body])
        assert pushed(capture, [capture.body[i:i + 1] for i in range(len(capture.body))]) \
            == whole, capture.key
        assert [replace(e, t=None) for e in step_events(capture)] == whole, capture.key


# -- the next request ---------------------------------------------------------------------------


def _weather(tools=None, steps=None):
    steps = steps or [load(f"{WIRE}/weather-turn-step1"), load(f"{WIRE}/weather-turn-step2")]
    result = asyncio.run(run_turn(steps, tools or [weather_tool()], route="wire"))
    index = next((e.seq for e in result.events if e.kind == "step_started" and e.step == 2),
                 None)
    return steps, result, (result.state.at(index) if index is not None else result.state)


def test_the_weather_turn_s_next_request_is_the_recorded_stateful_one():
    steps, result, state = _weather()
    assert result.state.outcome == "completed"
    rebuilt = next_request(state, steps[0].request, step=1)
    assert rebuilt == steps[1].request
    first_id = json.loads(steps[0].events[0].data)["interaction"]["id"]
    assert rebuilt["previous_interaction_id"] == first_id
    assert [s["type"] for s in rebuilt["input"]] == [gi.FUNCTION_RESULT_STEP] * 2
    assert [json.loads(s["result"])["location"] for s in rebuilt["input"]] == [
        "Paris, France", "Tokyo, Japan"]


def test_stateless_the_whole_history_goes_back_and_the_sdk_reads_it_as_steps():
    from google.genai._gaos.types.interactions import step as sdk_step
    from pydantic import TypeAdapter

    steps, _, state = _weather()
    rebuilt = next_request(state, steps[0].request, step=1, stateful=False)
    assert "previous_interaction_id" not in rebuilt
    history = rebuilt["input"]
    assert [s["type"] for s in history] == [
        gi.USER_INPUT_STEP, gi.THOUGHT_STEP, gi.FUNCTION_CALL_STEP, gi.FUNCTION_CALL_STEP,
        gi.FUNCTION_RESULT_STEP, gi.FUNCTION_RESULT_STEP]
    signature = next(json.loads(e.data)["delta"]["signature"] for e in steps[0].events
                     if '"thought_signature"' in e.data)
    assert history[1]["signature"] == signature
    assert [c["id"] for c in history[2:4]] == [r["call_id"] for r in history[4:]]
    read = TypeAdapter(list[sdk_step.Step]).validate_python(history)
    assert not any(getattr(s, "is_unknown", False) for s in read)
    # A store: false request has no interaction to name: stateless by default.
    assert "previous_interaction_id" not in next_request(
        state, {**steps[0].request, "store": False}, step=1)


def test_stateless_text_and_citations_go_back_as_model_output():
    state = state_of("server-tool")
    rebuilt = next_request(state, {"model": "m", "input": "Who won?"}, stateful=False)
    kinds = [s["type"] for s in rebuilt["input"]]
    assert kinds == [gi.USER_INPUT_STEP, "google_search_call", "google_search_result",
                     gi.MODEL_OUTPUT_STEP]
    content = rebuilt["input"][-1][gi.CONTENT_FIELD][0]
    assert content["text"] == state.blocks[-1].text
    assert content[gi.ANNOTATIONS_KEY][0]["type"] == "url_citation"


def test_a_failed_tool_goes_back_as_an_error_result():
    def broken(arguments):
        raise ToolFailed("the weather service is down")

    steps = [load(f"{WIRE}/weather-turn-step1")]
    _, result, state = _weather([FakeTool("get_weather", broken, 50)], steps)
    rebuilt = next_request(state, steps[0].request)
    assert all(r["is_error"] for r in rebuilt["input"])
    assert all(r["result"].startswith("error:") for r in rebuilt["input"])
