"""The Anthropic Messages accumulator: slots by index, typed blocks, nothing lost."""

from __future__ import annotations

import json

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulate, accumulator_for
from lesson_lib.accumulate.anthropic import AnthropicAccumulator
from lesson_lib.capture.captures import corpus, from_bytes, reference_corpus
from lesson_lib.sse.decoder import ServerSentEvent
from lesson_lib.wires.wire_events import parse_all, parse_payload

WIRE = "anthropic-messages"


def body(*payloads: dict | str) -> bytes:
    """An SSE body: one event per payload (a str is sent as raw data)."""
    out = []
    for p in payloads:
        data = p if isinstance(p, str) else json.dumps(p)
        kind = p.get("type", "x") if isinstance(p, dict) else "x"
        out.append(f"event: {kind}\ndata: {data}\n\n")
    return "".join(out).encode()


def run(*payloads: dict | str, finish: bool = True):
    return accumulate(from_bytes(body(*payloads), sidecar={"wire": WIRE}))


def codes(result) -> list[str]:
    return [d.code for d in result.diagnostics]


def start(**usage) -> dict:
    return {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1, **usage}}}


def block(i: int, **block) -> dict:
    return {"type": "content_block_start", "index": i, "content_block": block}


def delta(i: int, **delta) -> dict:
    return {"type": "content_block_delta", "index": i, "delta": delta}


def text(i: int, t: str) -> dict:
    return delta(i, type="text_delta", text=t)


def args(i: int, fragment: str) -> dict:
    return delta(i, type="input_json_delta", partial_json=fragment)


def stop(i: int) -> dict:
    return {"type": "content_block_stop", "index": i}


def message_delta(reason: str = "end_turn", **usage) -> dict:
    return {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": 5, **usage}}


END = {"type": "message_stop"}
PING = {"type": "ping"}


def tool(i: int, name: str = "get_weather", call_id: str = "toolu_1") -> dict:
    return block(i, type="tool_use", id=call_id, name=name, input={})


# -- the happy path ------------------------------------------------------------


def test_text_message_has_the_non_streaming_shape():
    r = run(start(), PING, block(0, type="text", text=""), text(0, "Hel"), PING,
            text(0, "lo"), stop(0), message_delta(), END)
    assert r.complete and r.diagnostics == [] and r.wire == WIRE
    assert r.final == {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
        "content": [{"type": "text", "text": "Hello"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def test_tool_input_is_parsed_at_the_stop_and_empty_input_is_an_empty_object():
    r = run(start(), block(0, type="text", text=""), text(0, "Let me look."), stop(0),
            tool(1), args(1, ""), args(1, '{"city": "Pa'), args(1, 'ris"}'), stop(1),
            tool(2, "now", "toolu_2"), args(2, ""), stop(2), message_delta("tool_use"), END)
    assert r.complete and r.diagnostics == []
    content = r.final["content"]
    assert content[1] == {"type": "tool_use", "id": "toolu_1", "name": "get_weather",
                          "input": {"city": "Paris"}}
    assert content[2]["input"] == {}


def test_invalid_tool_json_at_the_stop_is_a_diagnostic_with_the_raw_text():
    r = run(start(), tool(0), args(0, '{"a": "x"}{"b": 1}'), stop(0),
            message_delta("tool_use"), END)
    assert codes(r) == ["invalid_tool_input"]
    diag = r.diagnostics[0]
    assert diag.raw == '{"a": "x"}{"b": 1}' and diag.slot == 0 and diag.index is not None
    assert r.complete  # the stream itself ended properly


def test_thinking_signature_citations_and_whole_blocks():
    citation = {"type": "web_search_result_location", "url": "https://e.x", "title": "E",
                "cited_text": "c", "encrypted_index": "i"}
    result_block = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1",
                    "content": [{"type": "web_search_result", "url": "https://e.x"}]}
    r = run(start(),
            block(0, type="thinking", thinking="", signature=""),
            delta(0, type="thinking_delta", thinking="Hmm"),
            delta(0, type="thinking_delta", thinking=""),
            delta(0, type="signature_delta", signature="sig=="), stop(0),
            block(1, type="redacted_thinking", data="opaque"), stop(1),
            block(2, type="server_tool_use", id="srvtoolu_1", name="web_search", input={}),
            args(2, '{"query": "news"}'), stop(2),
            block(3, **result_block), stop(3),
            block(4, type="text", text="", citations=[]),
            delta(4, type="citations_delta", citation=citation), text(4, "cited"), stop(4),
            message_delta(), END)
    assert r.diagnostics == []
    c = r.final["content"]
    assert c[0] == {"type": "thinking", "thinking": "Hmm", "signature": "sig=="}
    assert c[1] == {"type": "redacted_thinking", "data": "opaque"}
    assert c[2]["input"] == {"query": "news"}
    assert c[3] == result_block
    assert c[4] == {"type": "text", "text": "cited", "citations": [citation]}


def test_message_delta_usage_overwrites_and_absent_fields_keep_their_start_values():
    r = run(start(cache_read_input_tokens=7, cache_creation_input_tokens=3),
            message_delta(input_tokens=12, cache_read_input_tokens=None, output_tokens=40,
                          iterations=[{"type": "message"}]), END)
    assert r.final["usage"] == {"input_tokens": 12, "output_tokens": 40,
                                "cache_read_input_tokens": 7,
                                "cache_creation_input_tokens": 3,
                                "iterations": [{"type": "message"}]}


def test_two_message_deltas_are_cumulative_not_added():
    r = run(start(), message_delta(output_tokens=4), message_delta(output_tokens=9), END)
    assert r.final["usage"]["output_tokens"] == 9


def test_message_start_that_carries_content_is_honoured():
    s = start()
    s["message"]["content"] = [{"type": "text", "text": "Already"}]
    r = run(s, block(1, type="text", text=""), text(1, " more"), stop(1), message_delta(), END)
    assert [b["text"] for b in r.final["content"]] == ["Already", " more"]
    assert r.diagnostics == []


def test_slots_report_labels_content_and_states():
    acc = AnthropicAccumulator()
    events = parse_all(from_bytes(body(
        start(), block(0, type="text", text=""), text(0, "Hi"), stop(0),
        tool(1), args(1, '{"city": "Ro'),
    ), sidecar={"wire": WIRE}).events)
    for e in events:
        acc.feed(e)
    s = acc.slots()
    assert [(x.address, x.kind, x.label, x.state) for x in s] == [
        (0, "text", "[0] text", "closed"), (1, "tool_use", "[1] tool_use get_weather", "open")]
    assert s[0].content == "Hi"
    assert (s[1].name, s[1].call_id, s[1].raw_input) == ("get_weather", "toolu_1",
                                                         '{"city": "Ro')
    assert s[1].input == {"city": "Ro"}  # the partial value, before the end
    acc.finish()
    assert acc.slots()[1].state == "never closed"


# -- streams that end badly ---------------------------------------------------


def test_cut_inside_tool_json_keeps_the_partial_value_and_the_raw_text():
    r = run(start(), tool(0), args(0, '{"city": "Par'), args(0, 'is", "days": 1'))
    assert not r.complete
    assert codes(r) == ["block_never_stopped", "cut_tool_input", "no_terminal"]
    cut = r.diagnostics[1]
    assert cut.raw == '{"city": "Paris", "days": 1' and cut.slot == 0
    assert r.final["content"][0]["input"] == {"city": "Paris", "days": 1}
    assert r.final["stop_reason"] is None


def test_max_tokens_inside_tool_json_without_a_block_stop():
    r = run(start(), tool(0), args(0, '{"path": "a.txt", "text": "lo'),
            message_delta("max_tokens"), END)
    assert r.complete  # message_stop arrived
    assert codes(r) == ["block_never_stopped", "cut_tool_input"]
    assert r.diagnostics[0].severity == "warning"
    assert r.final["content"][0]["input"] == {"path": "a.txt", "text": "lo"}


def test_cut_tool_with_no_fragments_has_an_empty_object_and_a_diagnostic():
    r = run(start(), tool(0))
    assert r.final["content"][0]["input"] == {}
    assert "cut_tool_input" in codes(r)


def test_in_band_error_is_a_diagnostic_and_the_stream_is_not_complete():
    err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    r = run(start(), block(0, type="text", text=""), text(0, "Partial"), err)
    assert not r.complete
    assert codes(r) == ["in_band_error", "block_never_stopped"]
    assert "overloaded_error: Overloaded" in r.diagnostics[0].message
    assert r.diagnostics[0].extra["error"]["type"] == "overloaded_error"
    assert r.final["content"][0]["text"] == "Partial"


def test_an_error_then_message_stop_is_still_not_complete():
    err = {"type": "error", "error": {"type": "api_error", "message": "boom"}}
    assert not run(start(), err, message_delta(), END).complete


def test_http_error_capture_has_no_final():
    cap = from_bytes(b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
                     sidecar={"wire": WIRE, "response": {"status": 529}})
    r = accumulate(cap)
    assert (r.final, r.complete, codes(r)) == (None, False, ["http_error"])
    assert "529" in r.diagnostics[0].message and "Overloaded" in r.diagnostics[0].message


# -- odd input never crashes --------------------------------------------------


def test_unknown_event_delta_and_block_types_are_kept_as_raw_data():
    r = run(start(), {"type": "brand_new_event", "x": 1},
            block(0, type="hologram", shimmer=3), delta(0, type="hologram_delta", z=1),
            stop(0), block(1, type="text", text=""), delta(1, type="sparkle_delta"), stop(1),
            message_delta(), END)
    assert codes(r) == ["unknown_event", "unknown_block", "unknown_delta", "unknown_delta"]
    assert all(d.severity == "warning" for d in r.diagnostics)
    assert '"brand_new_event"' in r.diagnostics[0].raw
    assert r.final["content"][0] == {"type": "hologram", "shimmer": 3}
    assert r.complete


def test_deltas_for_unknown_slots_events_before_start_and_duplicate_starts():
    r = run(text(0, "early"), start(), start(), block(0, type="text", text=""),
            block(0, type="text", text="again"), text(5, "nowhere"), stop(7), text(0, "ok"),
            stop(0), stop(0), text(0, "late"), message_delta(), END)
    assert codes(r) == ["event_before_start", "unknown_slot", "duplicate_start",
                        "duplicate_start", "unknown_slot", "unknown_slot",
                        "duplicate_stop", "delta_after_stop"]
    assert r.diagnostics[4].raw is not None and "nowhere" in r.diagnostics[4].raw
    assert r.final["content"] == [{"type": "text", "text": "ok"}]


def test_mismatched_delta_is_reported_not_applied():
    r = run(start(), tool(0), text(0, "words"), args(0, "{}"), stop(0), message_delta(), END)
    assert codes(r) == ["delta_mismatch"]
    assert r.final["content"][0]["input"] == {}


def test_payload_that_is_not_json_is_reported():
    r = run(start(), "{not json", message_delta(), END)
    assert codes(r) == ["unparseable_json"] and r.diagnostics[0].raw == "{not json"


def test_finish_is_idempotent_and_final_is_json_ready():
    acc = accumulator_for(WIRE)
    for e in parse_all(from_bytes(body(start(), tool(0), args(0, '{"a"')),
                                  sidecar={"wire": WIRE}).events):
        acc.feed(e)
    acc.finish()
    n = len(acc.diagnostics)
    acc.finish()
    assert len(acc.diagnostics) == n
    json.dumps(acc.final())


def test_final_does_not_share_state_with_the_accumulator():
    acc = AnthropicAccumulator()
    for e in parse_all(from_bytes(body(start(), block(0, type="text", text="", citations=[])),
                                  sidecar={"wire": WIRE}).events):
        acc.feed(e)
    snapshot = acc.final()
    snapshot["content"][0]["citations"].append("mutated")
    snapshot["usage"]["input_tokens"] = -1
    assert acc.final()["content"][0]["citations"] == []
    assert acc.final()["usage"]["input_tokens"] == 10


_EVENT = st.one_of(
    st.builds(start), st.just(PING), st.just(END), st.builds(message_delta),
    st.builds(lambda i: block(i, type="text", text=""), st.integers(-1, 3)),
    st.builds(lambda i: tool(i), st.integers(0, 3)),
    st.builds(text, st.integers(0, 3), st.text(max_size=5)),
    st.builds(args, st.integers(0, 3), st.sampled_from(['{"a', '": 1', "}", "", "[", "\\"])),
    st.builds(stop, st.integers(0, 3)),
    st.fixed_dictionaries({"type": st.sampled_from(["error", "weird", "content_block_delta"]),
                           "index": st.one_of(st.none(), st.text(max_size=2)),
                           "delta": st.one_of(st.none(), st.dictionaries(
                               st.sampled_from(["type", "text"]), st.text(max_size=3)))}),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(_EVENT, max_size=25))
def test_any_sequence_of_events_is_accumulated_without_raising(payloads):
    acc = AnthropicAccumulator()
    for i, p in enumerate(payloads):
        acc.feed(parse_payload(ServerSentEvent(p.get("type"), json.dumps(p)), i))
    acc.finish()
    json.dumps(acc.final())
    assert all(s.state != "open" for s in acc.slots())
    assert acc.complete == (END in payloads and
                            not any(d.code == "in_band_error" for d in acc.diagnostics))


# -- every capture ------------------------------------------------------------

CAPTURES = [c for c in corpus() + reference_corpus() if c.wire == WIRE]


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.key for c in CAPTURES])
def test_every_capture_accumulates_with_a_consistent_outcome(capture):
    r = accumulate(capture)
    if capture.status >= 300:
        assert r.final is None and "http_error" in codes(r)
        return
    json.dumps(r.final)
    types = [e.type for e in parse_all(capture.events)]
    assert r.complete == ("message_stop" in types and "error" not in types)
    if "error" in types:
        assert "in_band_error" in codes(r)
    elif not r.complete:
        assert "no_terminal" in codes(r)
    started = sum(t == "content_block_start" for t in types)
    assert len(r.final["content"]) >= started


def test_order_violations_are_errors_and_what_arrived_survives():
    r = run(start(), block(0, type="text", text=""), text(0, "a"),
            block(1, type="text", text=""), text(1, "b"), stop(0), text(0, "orphan"),
            message_delta(), text(1, "c"), stop(1), END)
    assert [(d.code, d.severity) for d in r.diagnostics] == [
        ("blocks_overlap", "error"), ("delta_after_stop", "error"),
        ("block_after_message_delta", "error"), ("block_after_message_delta", "error")]
    assert r.diagnostics[1].extra["orphan_text"] == "orphan"
    assert [b["text"] for b in r.final["content"]] == ["a", "bc"]


def test_a_delta_before_its_start_keeps_its_text_in_the_diagnostic():
    r = run(start(), text(0, "Hello "), block(0, type="text", text=""), text(0, "world"),
            stop(0), message_delta(), END)
    (orphan,) = r.diagnostics
    assert (orphan.code, orphan.severity, orphan.extra["orphan_text"]) == (
        "unknown_slot", "error", "Hello ")


def test_block_events_after_an_error_are_reported():
    r = run(start(), block(0, type="text", text=""), text(0, "a"),
            {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}},
            text(0, "b"))
    assert codes(r)[:2] == ["in_band_error", "event_after_error"]
