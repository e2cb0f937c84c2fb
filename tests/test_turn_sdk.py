"""The SDK route on every capture: the official SDK's own stream events -> turn events.

Each capture is replayed offline through its wire's streaming helper
(`lesson_lib.capture.replay`), and the SDK adapter says what the helper yielded in the
turn's vocabulary. Held to independent oracles: the stream's end as lesson 1
judges it (`stream_end.how_it_ended`), and the text and calls lesson 2's
accumulators build from the bytes.
"""

from __future__ import annotations

import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulate
from lesson_lib.breaks import faults
from lesson_lib.capture.captures import corpus, from_bytes, load, reference_corpus
from lesson_lib.capture.replay import run_sdk
from lesson_lib.turn.order import check
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_events
from lesson_lib.wires.stream_end import how_it_ended
from lesson_lib.wires.wire_events import parse_all

CAPTURES = [c for c in corpus() + reference_corpus()
            if c.wire in ("anthropic-messages", "openai-responses", "openai-chat")
            and "starting_after" not in c.request]   # a resumed stream joins its first one
IDS = [c.key for c in CAPTURES]

# The stream's end (lesson 1's verdict) -> the turn's outcome.
EXPECTED = {"ended": {"completed", "paused"}, "cut": {"truncated"}, "error": {"failed"},
            "http_error": {"failed"}}


def final_texts(final: dict | None, wire: str) -> list[str]:
    """The text parts of a provider's final object, in order."""
    if not final:
        return []
    if wire == "anthropic-messages":
        return [b.get("text", "") for b in final.get("content", []) if b.get("type") == "text"]
    if wire == "openai-responses":
        return [p.get("text", "") for item in final.get("output", [])
                if item.get("type") == "message"
                for p in item.get("content", []) if p.get("type") == "output_text"]
    return [_answer(c["message"].get("content")) for c in final.get("choices", [])
            if (c.get("message") or {}).get("content")]


def _answer(content) -> str:
    """A Chat message's answer: its string, or its typed parts' text parts (Mistral)."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if p.get("type") == "text")
    return content


@pytest.fixture(scope="module")
def routes():
    return {str(c.path): turn_events(c, "sdk") for c in CAPTURES}


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_sdk_route_is_in_order_and_its_outcome_matches_the_streams_end(capture, routes):
    events = routes[str(capture.path)]
    assert check(events) == []
    state = reduce_all(events)
    ending = how_it_ended(capture.wire, parse_all(capture.events), capture.sse_diagnostics,
                          capture.status)
    if any(e.kind == "noted" and e.code == "sdk_broke" for e in events):
        # The helper raised on its own on a stream that did not end properly: nothing
        # after reaches the application, so the step is cut there.
        assert state.outcome == "truncated" and ending.kind != "ended"
        return
    if any(e.kind == "error_reported" and e.code == "sdk_refused" for e in events):
        # The helper refused a stream the wire completed (Responses: an item's call_id
        # restated at its done): the step fails with the SDK's refusal, never as cut.
        assert ending.kind == "ended" and state.outcome == "failed"
        assert run_sdk(capture).error is not None
        return
    assert state.outcome in EXPECTED[ending.kind], ending.reason
    if ending.kind == "cut":
        assert state.outcome != "completed"
    if state.outcome == "failed":
        # (A protocol error the wire route reports, such as a second finish reason, may
        # come first: the Chat SDK route reads the chunks with the same accumulator.)
        provider = [e for e in state.errors if e.scope == "provider"]
        assert provider
        phase = "after_output" if any(b for b in state.blocks) else "before_output"
        assert provider[0].phase == phase


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_sdk_route_keeps_the_text_and_calls_the_accumulator_builds(capture, routes):
    events = routes[str(capture.path)]
    state = reduce_all(events)
    acc = accumulate(capture)
    texts = [b.text for b in sorted(state.blocks, key=lambda b: b.choice)
             if b.kind == "text" and b.channel == "text"]
    built = "".join(final_texts(acc.final, capture.wire))
    if any(getattr(e, "code", None) in ("sdk_broke", "sdk_refused") for e in events):
        # The helper raised on its own (Responses: a lifecycle event naming another
        # response id, as a server that rotates ids sends it): only what came before.
        assert built.startswith("".join(texts))
    else:
        assert "".join(texts) == built
    # (Calls whose item states its input whole, not streamed as JSON, are no tool call of
    # the accumulator's: tests/test_turn_wire_features.py checks them.)
    ready = [(b.name, b.input) for b in state.calls if b.call_state == "complete"
             and not b.server_side and b.wire_kind not in STATED_WHOLE]
    expected = [(c.name, c.value) for c in _calls(capture) if c.state == "complete"
                and c.kind in ("tool_use", "function_call", "function",
                                       "custom_tool_call")]
    assert ready == expected


STATED_WHOLE = frozenset({"apply_patch_call", "mcp_approval_request", "tool_search_call",
                          "local_shell_call"})


def _calls(capture):
    from lesson_lib.accumulate import accumulator_for
    acc = accumulator_for(capture.wire, capture.request)
    for ev in parse_all(capture.events):
        acc.feed(ev)
    acc.finish(capture.sse_diagnostics)
    return acc.tool_calls()


def test_a_cut_stream_the_sdk_returns_silently_is_truncated_with_its_text_kept():
    cap = load("anthropic-messages/cut-in-tool-json")
    assert run_sdk(cap).error is None                      # the SDK says nothing
    state = reduce_all(turn_events(cap, "sdk"))
    assert state.outcome == "truncated"
    call = state.calls[0]
    assert (call.call_state, call.input, call.complete) == ("cut", None, False)
    assert call.raw_input and state.blocks[0].text


def test_the_status_200_error_is_a_provider_error_after_output():
    cap = load("anthropic-messages/overloaded-after-text")
    sdk = run_sdk(cap)
    assert getattr(sdk.error, "status_code", None) == 200   # what the SDK makes of it
    state = reduce_all(turn_events(cap, "sdk"))
    err = state.errors[0]
    assert (state.outcome, err.scope, err.phase, err.retryable, err.code) == (
        "failed", "provider", "after_output", True, "overloaded_error")
    assert state.blocks[0].synthesised and state.blocks[0].text


def test_chat_premature_arguments_done_is_ignored_calls_ready_at_finish_reason():
    cap = load("openai-chat/parallel-tools-interleaved")
    sdk = run_sdk(cap)
    kinds = [(e.type, getattr(e, "index", None)) for e in sdk.events]
    done0 = kinds.index(("tool_calls.function.arguments.done", 0))
    last0 = max(i for i, k in enumerate(kinds) if k == ("tool_calls.function.arguments.delta", 0))
    assert done0 < last0          # the helper's "done" came before call 0's last fragment
    events = turn_events(cap, "sdk")
    ready = [e for e in events if e.kind == "tool_call_ready"]
    finished = next(e for e in events if e.kind == "step_finished")
    assert len(ready) == 2 and all(e.seq < finished.seq for e in ready)
    assert all(isinstance(e.input, dict) and e.input for e in ready)


def test_chat_done_is_invisible_to_the_sdk_and_both_routes_read_its_absence_alike():
    # The SDK never yields [DONE]. A body that ends without it after every finish
    # reason and the owed usage chunk ended properly (with a warning) on both routes;
    # one that also lost its usage chunk is cut on both.
    cap = faults.drop_terminal(load("openai-chat/text-usage"))
    ending = how_it_ended(cap.wire, parse_all(cap.events), cap.sse_diagnostics)
    assert (ending.kind, [d.code for d in ending.diagnostics]) == ("ended", ["no_done_marker"])
    for route in ("wire", "sdk"):
        assert reduce_all(turn_events(cap, route)).outcome == "completed", route
    usage = next(e.index for e in parse_all(cap.events)
                 if isinstance(e.payload, dict) and e.payload.get("usage"))
    no_usage = faults.cut_at(cap, cap.events[usage].start)
    assert how_it_ended(cap.wire, parse_all(no_usage.events), no_usage.sse_diagnostics
                        ).kind == "cut"
    for route in ("wire", "sdk"):
        assert reduce_all(turn_events(no_usage, route)).outcome == "truncated", route


def test_sdk_route_turns_every_cut_into_truncated():
    cap = load("anthropic-messages/weather-turn-step1")
    for offset in range(200, len(cap.body) - 40, 97):
        cut = faults.cut_at(cap, offset)
        state = reduce_all(turn_events(cut, "sdk"))
        assert state.outcome == "truncated", offset
        assert all(not b.open for b in state.blocks)
        assert not any(b.call_state == "complete" and b.synthesised for b in state.calls)


def test_multi_step_turn_through_the_sdk():
    for wire in ("anthropic-messages", "openai-responses", "openai-chat"):
        steps = [load(f"{wire}/weather-turn-step1"), load(f"{wire}/weather-turn-step2")]
        events = turn_events(steps, "sdk")
        assert check(events) == []
        state = reduce_all(events)
        assert state.outcome == "completed"
        assert [s.finish.reason for s in state.steps] == ["tool_calls", "stop"]
        assert len({b.id for b in state.blocks}) == len(state.blocks)
        assert state.usage.input == sum(s.usage.input for s in state.steps) > 0


def test_chat_calls_are_correlated_by_id_first_then_index():
    # The server reused index 0 for a second call with a new id: two calls, not one.
    cap = load("openai-chat/index-reused-new-id")
    state = reduce_all(turn_events(cap, "sdk"))
    calls = state.calls
    assert len(calls) == 2 and len({c.call_id for c in calls}) == 2
    assert all(c.call_state == "complete" and isinstance(c.input, dict) for c in calls)


# -- properties: any cut, any injected error ----------------------------------------


PROPERTY = settings(max_examples=examples(60), deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
GOOD = [c for c in corpus() if c.status < 300 and how_it_ended(
    c.wire, parse_all(c.events), c.sse_diagnostics).kind == "ended"
    and "starting_after" not in c.request     # a resumed stream joins its first one
    and not (c.sidecar.get("sdk") or {}).get("raises")]   # a helper that refuses it whole


@st.composite
def cut_captures(draw):
    cap = draw(st.sampled_from(GOOD))
    return faults.cut_at(cap, draw(st.integers(1, len(cap.body) - 1)))


@PROPERTY
@given(cut_captures())
def test_any_cut_is_never_completed_and_the_order_holds(cap):
    events = turn_events(cap, "sdk")
    assert check(events) == []
    state = reduce_all(events)
    ending = how_it_ended(cap.wire, parse_all(cap.events), cap.sse_diagnostics)
    if ending.kind == "cut":
        # Chat's [DONE] is invisible to the SDK: cut just before it, the SDK route
        # cannot tell (see test_chat_done_is_invisible_to_the_sdk). Nor can it
        # see Gemini's last blank line: google-genai yields each `data:` line
        # as it comes, so a cut that loses only the final separator reaches it
        # as a whole record (see test_gemini_sdk_reads_a_record_without_its_blank_line).
        assert state.outcome == "truncated" or (
            state.outcome == "completed"
            and (cap.wire == "openai-chat" or only_the_last_separator_lost(cap)))
    assert not any(b.open for b in state.blocks)
    assert all(not b.complete for b in state.blocks if b.synthesised)


def only_the_last_separator_lost(cap) -> bool:
    """Whether the cut body would have ended properly, had its blank line arrived."""
    whole = from_bytes(cap.body + b"\r\n\r\n", sidecar=cap.sidecar)
    return how_it_ended(whole.wire, parse_all(whole.events),
                        whole.sse_diagnostics).kind == "ended"


def test_gemini_sdk_reads_a_record_without_its_blank_line():
    cap = load("google-gemini/text-crlf")
    assert cap.body.endswith(b"\r\n\r\n")
    cut = faults.cut_at(cap, len(cap.body) - 4)
    assert how_it_ended(cut.wire, parse_all(cut.events), cut.sse_diagnostics).kind == "cut"
    assert reduce_all(turn_events(cut, "wire")).outcome == "truncated"
    assert reduce_all(turn_events(cut, "sdk")).outcome == "completed"   # what it cannot see
    assert only_the_last_separator_lost(cut)
    assert not only_the_last_separator_lost(faults.cut_at(cap, len(cap.body) - 6))


@st.composite
def errored_captures(draw):
    cap = draw(st.sampled_from(GOOD))
    n = len(parse_all(cap.events))
    return faults.inject_error(cap, draw(st.integers(0, max(0, n - 2))))


@PROPERTY
@given(errored_captures())
def test_an_injected_error_fails_the_turn_with_its_phase(cap):
    state = reduce_all(turn_events(cap, "sdk"))
    assert state.outcome == "failed"
    err = state.errors[0]
    assert err.scope == "provider"
    assert err.phase == ("after_output" if state.blocks else "before_output")


@pytest.mark.parametrize("name, reason", [("openai-chat/finish-length", "length"),
                                          ("openai-chat/content-filter", "content_filter"),
                                          ("openai-responses/incomplete", "length")])
def test_the_helpers_raise_on_a_proper_stream_is_noted_not_an_error(name, reason):
    cap = load(name)
    assert run_sdk(cap).error is not None                  # the helper raises...
    events = turn_events(cap, "sdk")
    state = reduce_all(events)
    assert (state.outcome, state.steps[0].finish.reason, state.errors) == (
        "completed", reason, [])                            # ...the turn just stopped there
    assert any(e.kind == "noted" and e.code == "sdk_raised" for e in events)


def _queued_from_the_start() -> bytes:
    """A background response read from its start: ``response.queued``, no
    ``response.created``, then a whole answer and ``response.completed``."""
    import json
    base = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-x",
            "background": True, "output": []}
    item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}
    events = [
        {"type": "response.queued", "response": {**base, "status": "queued"}},
        {"type": "response.in_progress", "response": {**base, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**item, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "part": {**item["content"][0], "text": ""}},
        {"type": "response.output_text.delta", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "delta": "Done."},
        {"type": "response.output_text.done", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "text": "Done."},
        {"type": "response.content_part.done", "output_index": 0, "item_id": "msg_1",
         "content_index": 0, "part": item["content"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": {
            **base, "status": "completed", "output": [item],
            "usage": {"input_tokens": 3, "output_tokens": 2, "total_tokens": 5}}}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': i})}\n\n"
                   for i, e in enumerate(events)).encode()


def _refused(events) -> list:
    return [e for e in events if e.kind == "error_reported" and e.code == "sdk_refused"]


def test_an_sdk_that_refuses_a_stream_the_wire_completed_says_so_not_cut():
    cap = from_bytes(_queued_from_the_start(), sidecar={"wire": "openai-responses"})
    assert reduce_all(turn_events(cap, "wire")).outcome == "completed"
    raised = run_sdk(cap).error
    assert "before `response.queued`" in str(raised)            # the SDK's own refusal
    events = turn_events(cap, "sdk")
    state = reduce_all(events)
    assert state.outcome == "failed" and check(events) == []
    (refusal,) = _refused(events)
    assert str(raised) in refusal.message and refusal.scope == "protocol"
    assert refusal.phase == "before_output" and not refusal.retryable
    assert not any(e.kind == "noted" and e.code == "sdk_broke" for e in events)


def test_a_resumed_stream_the_sdk_refuses_is_its_refusal_too():
    cap = load("openai-responses/background-resumed")
    events = turn_events(cap, "sdk")
    assert reduce_all(events).outcome == "failed"
    (refusal,) = _refused(events)
    assert str(run_sdk(cap).error) in refusal.message


def test_a_stream_cut_under_the_sdk_is_still_cut():
    cap = load("openai-responses/background-cut")
    events = turn_events(cap, "sdk")
    assert reduce_all(events).outcome == "truncated" and _refused(events) == []
    assert any(e.kind == "noted" and e.code == "sdk_broke" for e in events)


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_every_final_state_is_json_ready(capture, routes):
    import json
    state = reduce_all(routes[str(capture.path)])
    assert json.loads(json.dumps(state.as_dict()))["outcome"] == state.outcome


@pytest.mark.parametrize("name", ["anthropic-messages/citations",
                                  "openai-responses/web-search"])
def test_citations_become_sources_on_their_text_block(name):
    cap = load(name)
    state = reduce_all(turn_events(cap, "sdk"))
    sources = [s for b in state.blocks if b.kind == "text" for s in b.sources]
    final = accumulate(cap).final
    if cap.wire == "anthropic-messages":
        recorded = [c for b in final["content"] if b["type"] == "text"
                    for c in b.get("citations") or []]
    else:
        recorded = [a for i in final["output"] if i["type"] == "message"
                    for p in i["content"] for a in p.get("annotations") or []]
    assert recorded and len(sources) == len(recorded)
    assert [s.get("url") for s in sources] == [r.get("url") for r in recorded]


def test_provider_side_web_search_is_marked_server_side_and_not_run_locally():
    state = reduce_all(turn_events(load("anthropic-messages/web-search"), "sdk"))
    server = [b for b in state.blocks if b.server_side]
    assert {b.kind for b in server} == {"tool_call", "tool_result"}
    assert all(b.wire_kind.startswith(("server_tool_use", "web_search")) for b in server)


class APIConnectionError(Exception):
    """Stands for the SDKs' connection error (known to the adapter by name)."""


def test_a_connection_failure_is_a_transport_error_that_a_retry_can_cure():
    from lesson_lib.turn.adapters.sdk import turn_events_from_sdk
    cap = load("anthropic-messages/hello")
    sdk = run_sdk(cap)
    events = turn_events_from_sdk(cap.wire, sdk.events[:4], APIConnectionError("reset"))
    state = reduce_all(events)
    err = state.errors[0]
    assert (err.scope, err.phase, err.retryable) == ("transport", "after_output", True)
    assert state.steps[0].ended == "error" and state.blocks[0].synthesised


@pytest.mark.parametrize("capture", CAPTURES, ids=IDS)
def test_sdk_route_reading_each_event_as_it_arrives_gives_what_the_kept_events_give(capture):
    from lesson_lib.turn.adapters import dialect_of
    from lesson_lib.turn.adapters.sdk import turn_events_from_sdk
    from lesson_lib.turn.run import step_events
    kept = run_sdk(capture)
    model = capture.request.get("model") if isinstance(capture.request, dict) else None
    ended = how_it_ended(capture.wire, parse_all(capture.events), capture.sse_diagnostics,
                         capture.status, request=capture.request).proper
    want = turn_events_from_sdk(capture.wire, kept.events, kept.error, model=model,
                                dialect=dialect_of(capture), wire_ended=ended)
    got = step_events(capture, route="sdk")
    assert [repr(e) for e in got] == [repr(e) for e in want]


def long_text_stream(wire: str, n: int, delta: str) -> bytes:
    """A stream of one text block of `n` deltas of `delta`, ended properly."""
    import json
    text = delta * n
    if wire == "anthropic-messages":
        message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 1, "output_tokens": 1}}
        ps = [{"type": "message_start", "message": message},
              {"type": "content_block_start", "index": 0,
               "content_block": {"type": "text", "text": ""}}]
        ps += [{"type": "content_block_delta", "index": 0,
                "delta": {"type": "text_delta", "text": delta}}] * n
        ps += [{"type": "content_block_stop", "index": 0},
               {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": n}},
               {"type": "message_stop"}]
    else:
        ids = {"item_id": "msg_1", "output_index": 0, "content_index": 0}
        base = {"id": "resp_1", "object": "response", "created_at": 1, "model": "m",
                "status": "in_progress", "output": [], "tools": [],
                "tool_choice": "auto", "parallel_tool_calls": True}
        item = {"id": "msg_1", "type": "message", "role": "assistant",
                "status": "in_progress", "content": []}
        part = {"type": "output_text", "text": "", "annotations": []}
        done = {**item, "status": "completed", "content": [{**part, "text": text}]}
        ps = [{"type": "response.created", "response": base},
              {"type": "response.output_item.added", "output_index": 0, "item": item},
              {"type": "response.content_part.added", **ids, "part": part}]
        ps += [{"type": "response.output_text.delta", **ids, "delta": delta}] * n
        ps += [{"type": "response.output_text.done", **ids, "text": text},
               {"type": "response.output_item.done", "output_index": 0, "item": done},
               {"type": "response.completed",
                "response": {**base, "status": "completed", "output": [done]}}]
        ps = [{**p, "sequence_number": i} for i, p in enumerate(ps)]
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in ps).encode()


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-responses"])
def test_sdk_route_memory_is_linear_though_the_sdk_events_carry_the_text_so_far(wire):
    # Anthropic ``text`` and Responses ``output_text.delta`` events carry the whole
    # text so far: keeping them all would take memory quadratic in the stream.
    import tracemalloc

    from lesson_lib.capture.captures import from_bytes
    from lesson_lib.turn.run import step_events

    def peak(n: int) -> int:
        capture = from_bytes(long_text_stream(wire, n, "x" * 400), name="long",
                             sidecar={"wire": wire})
        assert capture.events            # decoded before tracing: only the route counts
        tracemalloc.start()
        try:
            events = step_events(capture, route="sdk")
            most = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert sum(e.kind == "block_delta" for e in events) == n
        return most

    peak(10)                            # the SDK's first run imports its modules
    small, large = peak(120), peak(240)
    assert large / small < 2.6          # quadratic would be near 4


def test_a_custom_tools_free_text_input_is_ready_at_its_done_on_both_routes():
    import json

    from lesson_lib.capture.captures import from_bytes
    seq = iter(range(100))

    def ev(p):
        p = {**p, "sequence_number": next(seq)}
        return f"event: {p['type']}\ndata: {json.dumps(p)}\n\n"

    resp = {"id": "r", "object": "response", "status": "in_progress", "model": "m",
            "output": []}
    item = {"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "run_sql",
            "input": "", "status": "in_progress"}
    done = {**item, "input": "SELECT 1;", "status": "completed"}
    body = "".join([
        ev({"type": "response.created", "response": resp}),
        ev({"type": "response.output_item.added", "output_index": 0, "item": item}),
        ev({"type": "response.custom_tool_call_input.delta", "output_index": 0,
            "item_id": "ctc_1", "delta": "SELECT"}),
        ev({"type": "response.custom_tool_call_input.delta", "output_index": 0,
            "item_id": "ctc_1", "delta": " 1;"}),
        ev({"type": "response.custom_tool_call_input.done", "output_index": 0,
            "item_id": "ctc_1", "input": "SELECT 1;"}),
        ev({"type": "response.output_item.done", "output_index": 0, "item": done}),
        ev({"type": "response.completed",
            "response": {**resp, "status": "completed", "output": [done]}})]).encode()
    cap = from_bytes(body, sidecar={"wire": "openai-responses"})
    for route in ("wire", "sdk"):
        state = reduce_all(turn_events(cap, route))
        (call,) = state.calls
        assert (state.outcome, call.call_state, call.input) == (
            "completed", "complete", "SELECT 1;"), route


def test_bytes_after_the_terminal_that_make_no_event_are_no_proper_end_on_the_sdk_route():
    """botocore's reader drops a frame cut short after messageStop without a word (found by
    the property above): the SDK route says the stream was cut, as the wire route does."""
    from lesson_lib.breaks.faults import cut_at
    from lesson_lib.capture.captures import load
    from lesson_lib.turn.run import turn_state

    whole = load("aws-bedrock-converse/converse-get-weather")
    cap = cut_at(whole, 2651)          # messageStop, then one byte of the metadata frame
    assert run_sdk(cap).error is None
    for route in ("wire", "sdk"):
        assert turn_state(cap, route=route).outcome == "truncated", route
    events = turn_events(cap, "sdk")
    assert any(getattr(e, "code", None) == "sdk_missed_tail" for e in events)
    assert turn_state(whole, route="sdk").outcome == "completed"


def test_a_helper_that_refuses_a_stream_before_its_in_band_error_fails_the_turn():
    # rotating-ids: openai's helper raises at response.in_progress; an error injected after
    # it is never reached by the SDK, and the bytes arrived whole: the SDK's refusal, not a cut.
    cap = faults.inject_error(load("openai-responses/rotating-ids"), 1)
    state = reduce_all(turn_events(cap, "sdk"))
    assert state.outcome == "failed"
    assert [(e.code, e.scope) for e in state.errors] == [("sdk_refused", "protocol")]
