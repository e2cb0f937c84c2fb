"""What a start event states whole means what the same content streamed means.

A response read from its start after output began (a resumed or background response)
can carry finished content in its first event: an Anthropic ``message_start`` whose
``message.content`` holds a ``tool_use``, a Responses ``response.created`` (or
``in_progress``) whose ``output`` holds items. On both routes, that content becomes the
turn events it would have become had it streamed: a call stated whole is a call ready,
never one left forming. Gemini states a function call whole in its record as a matter of
course; the same rule holds there.
"""

from __future__ import annotations

import json
from dataclasses import fields

import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulate
from lesson_lib.capture.captures import from_bytes
from lesson_lib.cli.commands import main
from lesson_lib.turn import order
from lesson_lib.turn.run import turn_events, turn_state

ANTHROPIC, RESPONSES, GEMINI = "anthropic-messages", "openai-responses", "google-gemini"
ROUTES = ("wire", "sdk")


def sse(*payloads: dict, numbered: bool = False) -> bytes:
    """An SSE body, one named event per payload (Responses: with sequence numbers)."""
    return "".join(f"event: {p['type']}\ndata: "
                   f"{json.dumps({**p, 'sequence_number': i} if numbered else p)}\n\n"
                   for i, p in enumerate(payloads)).encode()


def cap(body: bytes, wire: str):
    return from_bytes(body, sidecar={"wire": wire})


def said(events) -> list[tuple[str, dict]]:
    """The turn events as what they say: their sequence numbers, times, event indexes and
    the partial-JSON detail of a delta left out (a stated call's input arrives in one
    fragment whatever the streamed one was cut into)."""
    out = []
    for e in events:
        d = {f.name: getattr(e, f.name) for f in fields(e)}
        for k in ("seq", "t", "at", "json_changes", "settled"):
            d.pop(k, None)
        out.append((type(e).__name__, d))
    return out


def ready(events) -> list[tuple]:
    return [(e.name, e.call_id, e.input) for e in events if e.kind == "tool_call_ready"]


# -- Anthropic: message_start with message.content ----------------------------------------

TOOL = {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
        "input": {"city": "Paris", "days": [1, 2]}, "caller": {"type": "direct"}}
USAGE = {"input_tokens": 10, "output_tokens": 5}


def message(content: list, stop_reason: str | None) -> dict:
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": USAGE}


def anthropic_whole(content: list, stop_reason: str = "tool_use") -> bytes:
    """A resumed response: a start that states every block, then the stop."""
    return sse({"type": "message_start", "message": message(content, stop_reason)},
               {"type": "message_stop"})


def anthropic_streamed(content: list, stop_reason: str = "tool_use") -> bytes:
    """The same blocks as a stream sends them: each started empty, its deltas, stopped."""
    events: list[dict] = [{"type": "message_start", "message": message([], None)}]
    for i, block in enumerate(content):
        start, deltas = dict(block), []
        if "input" in block:
            start["input"] = {}
            # (A call without arguments streams one empty fragment, as the API sends it.)
            deltas.append({"type": "input_json_delta",
                           "partial_json": json.dumps(block["input"], ensure_ascii=False)
                           if block["input"] else ""})
        field = {"text": "text", "thinking": "thinking"}.get(block["type"])
        if field and block[field]:
            start[field] = ""
            deltas.append({"type": f"{block['type']}_delta", field: block[field]})
        if block.get("citations"):
            start["citations"] = []
            deltas += [{"type": "citations_delta", "citation": c} for c in block["citations"]]
        if block.get("signature"):
            start["signature"] = ""
            deltas.append({"type": "signature_delta", "signature": block["signature"]})
        events.append({"type": "content_block_start", "index": i, "content_block": start})
        events += [{"type": "content_block_delta", "index": i, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": i})
    events.append({"type": "message_delta", "delta": {"stop_reason": stop_reason,
                                                      "stop_sequence": None},
                   "usage": {"output_tokens": USAGE["output_tokens"]}})
    events.append({"type": "message_stop"})
    return sse(*events)


CITATION = {"type": "char_location", "cited_text": "Paris", "document_index": 0,
            "document_title": "Atlas", "start_char_index": 0, "end_char_index": 5}
ANTHROPIC_CASES = {
    "a tool call": ([TOOL], "tool_use"),
    "text, then a tool call": ([{"type": "text", "text": "Let me look."}, TOOL], "tool_use"),
    "signed thinking, cited text": ([
        {"type": "thinking", "thinking": "The user wants Paris.", "signature": "c2ln"},
        {"type": "text", "text": "Paris is in France.", "citations": [CITATION]}], "end_turn"),
    "a server tool and its result": ([
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search",
         "input": {"query": "Paris weather"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
         "content": [{"type": "web_search_result", "title": "Weather", "url": "https://x.test",
                      "encrypted_content": "ZQ==", "page_age": None}]},
        {"type": "text", "text": "Sunny."}], "end_turn"),
    "redacted thinking, then a call": ([{"type": "redacted_thinking", "data": "b3BhcXVl"},
                                        TOOL], "tool_use"),
}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("case", list(ANTHROPIC_CASES))
def test_anthropic_blocks_a_start_states_whole_are_the_turn_of_them_streamed(case, route):
    content, stop = ANTHROPIC_CASES[case]
    whole = turn_events(cap(anthropic_whole(content, stop), ANTHROPIC), route=route)
    streamed = turn_events(cap(anthropic_streamed(content, stop), ANTHROPIC), route=route)
    assert said(whole) == said(streamed)
    assert order.check(whole) == []
    if any(b["type"] == "tool_use" for b in content):
        assert ready(whole) == [("get_weather", "toolu_1", TOOL["input"])]


def test_anthropic_the_final_message_of_a_stated_start_is_the_message_it_states():
    for content, stop in ANTHROPIC_CASES.values():
        result = accumulate(cap(anthropic_whole(content, stop), ANTHROPIC))
        assert result.final == message(content, stop)     # the call's `caller` kept
        assert result.diagnostics == []


def test_anthropic_a_stated_call_is_ready_on_the_sdk_route_too():
    state = turn_state(cap(anthropic_whole([TOOL]), ANTHROPIC), route="sdk")
    (block,) = state.blocks
    assert (block.kind, block.name, block.call_id) == ("tool_call", "get_weather", "toolu_1")
    assert (block.call_state, block.input) == ("complete", TOOL["input"])
    assert state.steps[0].finish.reason == "tool_calls"


def test_cli_turn_says_a_stated_call_is_complete(tmp_path, capsys):
    path = tmp_path / "resumed.sse"
    path.write_bytes(anthropic_whole([TOOL]))
    (tmp_path / "resumed.json").write_text(json.dumps({"wire": ANTHROPIC}))
    code = main(["turn", str(path), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["outcome"] == "completed"
    (block,) = out["blocks"]
    assert (block["kind"], block["tool_name"], block["state"]) == ("tool_call", "get_weather",
                                                                   "complete")
    assert block["input"] == TOOL["input"] and block["complete"] is True


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
_BLOCKS = st.lists(st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=20)),
    st.builds(lambda t, s: {"type": "thinking", "thinking": t, "signature": s},
              st.text(max_size=20), st.text(max_size=6)),
    st.builds(lambda n, i: {"type": "tool_use", "id": f"toolu_{n}", "name": "f", "input": i},
              st.integers(0, 9), st.dictionaries(st.text(max_size=5), _JSON, max_size=3))),
    max_size=4)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_BLOCKS)
def test_anthropic_any_stated_blocks_mean_what_they_mean_streamed(content):
    whole = turn_events(cap(anthropic_whole(content), ANTHROPIC))
    streamed = turn_events(cap(anthropic_streamed(content), ANTHROPIC))
    assert said(whole) == said(streamed)
    assert accumulate(cap(anthropic_whole(content), ANTHROPIC)).final == message(content,
                                                                                 "tool_use")


def invoke(body: bytes) -> bytes:
    """The same Anthropic events as Bedrock's InvokeModelWithResponseStream frames them:
    each one base64 in a ``chunk`` frame."""
    import base64

    from lesson_lib.sse.decoder import SSEDecoder
    from lesson_lib.sse.eventstream import encode_frame
    out, decoder = [], SSEDecoder()
    for event in decoder.feed(body) + decoder.finish():
        inner = base64.b64encode(event.data.encode()).decode()
        out.append(encode_frame({":event-type": "chunk", ":content-type": "application/json",
                                 ":message-type": "event"}, json.dumps({"bytes": inner}).encode()))
    return b"".join(out)


@pytest.mark.parametrize("route", ROUTES)
def test_bedrock_invoke_a_start_that_states_a_call_makes_it_ready(route):
    content, stop = ANTHROPIC_CASES["text, then a tool call"]
    wire = "aws-bedrock-invoke"
    whole = turn_events(cap(invoke(anthropic_whole(content, stop)), wire), route=route)
    streamed = turn_events(cap(invoke(anthropic_streamed(content, stop)), wire), route=route)
    assert said(whole) == said(streamed)
    assert ready(whole) == [("get_weather", "toolu_1", TOOL["input"])]


# -- Responses: items in a lifecycle event's output ---------------------------------------

CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
        "arguments": '{"city":"Paris"}', "status": "completed"}
TEXT = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Let me look.", "annotations": []}]}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [
    {"type": "summary_text", "text": "Weather, so a call."}]}
RESPONSE = {"id": "resp_1", "object": "response", "created_at": 1, "status": "in_progress",
            "model": "gpt-x", "output": []}
DONE = {**RESPONSE, "status": "completed", "output": [REASONING, TEXT, CALL],
        "usage": {"input_tokens": 3, "output_tokens": 4, "total_tokens": 7}}


def responses_streamed() -> bytes:
    """The three items as a stream sends them."""
    reasoning = [
        {"type": "response.output_item.added", "output_index": 0,
         "item": {**REASONING, "summary": []}},
        {"type": "response.reasoning_summary_part.added", "output_index": 0, "item_id": "rs_1",
         "summary_index": 0, "part": {"type": "summary_text", "text": ""}},
        {"type": "response.reasoning_summary_text.delta", "output_index": 0, "item_id": "rs_1",
         "summary_index": 0, "delta": REASONING["summary"][0]["text"]},
        {"type": "response.reasoning_summary_part.done", "output_index": 0, "item_id": "rs_1",
         "summary_index": 0, "part": REASONING["summary"][0]},
        {"type": "response.output_item.done", "output_index": 0, "item": REASONING}]
    part = TEXT["content"][0]
    text = [
        {"type": "response.output_item.added", "output_index": 1,
         "item": {**TEXT, "status": "in_progress", "content": []}},
        {"type": "response.content_part.added", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "part": {**part, "text": ""}},
        {"type": "response.output_text.delta", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "delta": part["text"]},
        {"type": "response.output_text.done", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "text": part["text"]},
        {"type": "response.content_part.done", "output_index": 1, "item_id": "msg_1",
         "content_index": 0, "part": part},
        {"type": "response.output_item.done", "output_index": 1, "item": TEXT}]
    call = [
        {"type": "response.output_item.added", "output_index": 2,
         "item": {**CALL, "status": "in_progress", "arguments": ""}},
        {"type": "response.function_call_arguments.delta", "output_index": 2,
         "item_id": "fc_1", "delta": CALL["arguments"]},
        {"type": "response.function_call_arguments.done", "output_index": 2,
         "item_id": "fc_1", "arguments": CALL["arguments"]},
        {"type": "response.output_item.done", "output_index": 2, "item": CALL}]
    return sse({"type": "response.created", "response": RESPONSE}, *reasoning, *text, *call,
               {"type": "response.completed", "response": DONE}, numbered=True)


RESPONSES_STARTS = {
    "created": lambda: sse({"type": "response.created", "response": {**DONE, "status":
                                                                     "in_progress"}},
                           {"type": "response.completed", "response": DONE}, numbered=True),
    "in_progress": lambda: sse({"type": "response.created", "response": RESPONSE},
                               {"type": "response.in_progress",
                                "response": {**DONE, "status": "in_progress"}},
                               {"type": "response.completed", "response": DONE},
                               numbered=True),
}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("start", list(RESPONSES_STARTS))
def test_responses_items_a_lifecycle_event_holds_are_the_turn_of_them_streamed(start, route):
    whole = turn_events(cap(RESPONSES_STARTS[start](), RESPONSES), route=route)
    streamed = turn_events(cap(responses_streamed(), RESPONSES), route=route)
    assert said(whole) == said(streamed)
    assert order.check(whole) == []
    assert ready(whole) == [("get_weather", "call_1", {"city": "Paris"})]


@pytest.mark.parametrize("start", list(RESPONSES_STARTS))
def test_responses_the_final_object_of_stated_items_is_the_servers(start):
    result = accumulate(cap(RESPONSES_STARTS[start](), RESPONSES))
    assert result.final["output"] == DONE["output"]
    assert result.diagnostics == []


def test_responses_a_queued_start_with_a_stated_call_makes_it_ready():
    body = sse({"type": "response.queued", "response": {**DONE, "status": "queued"}},
               {"type": "response.completed", "response": DONE}, numbered=True)
    events = turn_events(cap(body, RESPONSES))
    assert ready(events) == [("get_weather", "call_1", {"city": "Paris"})]
    assert order.check(events) == []


# -- Gemini: a function call whole in its record -------------------------------------------

def gemini(*records: dict) -> bytes:
    return "".join(f"data: {json.dumps(r)}\r\n\r\n" for r in records).encode()


def _record(parts: list, finish: str | None = None) -> dict:
    candidate: dict = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    return {"candidates": [candidate], "modelVersion": "gemini-x", "responseId": "r1",
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 3,
                              "totalTokenCount": 8}}


@pytest.mark.parametrize("route", ROUTES)
def test_gemini_a_whole_function_call_is_the_turn_of_its_streamed_arguments(route):
    whole = gemini(_record([{"functionCall": {"name": "get_weather",
                                              "args": {"city": "Paris"}}}], "STOP"))
    streamed = gemini(
        _record([{"functionCall": {"name": "get_weather", "willContinue": True}}]),
        _record([{"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "Par",
                                                    "willContinue": True}],
                                   "willContinue": True}}]),
        _record([{"functionCall": {"partialArgs": [{"jsonPath": "$.city", "stringValue": "is"}],
                                   "willContinue": True}}]),
        _record([{"functionCall": {}}], "STOP"))
    a, b = (turn_state(cap(body, GEMINI), route=route) for body in (whole, streamed))
    assert [(x.kind, x.name, x.input, x.call_state, x.complete) for x in a.blocks] == [
        (x.kind, x.name, x.input, x.call_state, x.complete) for x in b.blocks] == [
        ("tool_call", "get_weather", {"city": "Paris"}, "complete", True)]
    assert a.outcome == b.outcome == "completed"
    assert a.steps[0].finish == b.steps[0].finish
    assert order.check(turn_events(cap(whole, GEMINI), route=route)) == []
