"""The Bedrock wires end to end: frames read as events, the Converse and Invoke
accumulators, their turn adapters, the constructed captures (read by botocore's parser
too), and the CLI on binary bodies."""

from __future__ import annotations

import base64
import json

import pytest
from botocore.eventstream import EventStreamBuffer

from lesson_lib import wires
from lesson_lib.accumulate import accumulate, accumulator_for
from lesson_lib.capture import captures
from lesson_lib.cli.commands import main
from lesson_lib.sse.eventstream import Header, decode, encode_frame
from lesson_lib.sse.strict_json import read_object
from lesson_lib.turn.run import turn_state
from lesson_lib.wires.bedrock import CONVERSE, INVOKE, frame_event
from lesson_lib.wires.wire_events import parse_all, parse_payload

BEDROCK = (CONVERSE, INVOKE)
OURS = [c for c in captures.corpus() if c.wire in BEDROCK]
RECORDED = [c for c in captures.reference_corpus() if c.wire in BEDROCK]
ALL = OURS + RECORDED


def key(c):
    return c.key


def event_frame(event_type: str, payload: dict) -> bytes:
    return encode_frame({":event-type": event_type, ":content-type": "application/json",
                         ":message-type": "event"}, json.dumps(payload).encode())


def exception_frame(kind: str, message: str) -> bytes:
    return encode_frame({":exception-type": kind, ":content-type": "application/json",
                         ":message-type": "exception"}, json.dumps({"message": message}).encode())


def chunk(event: dict) -> bytes:
    inner = base64.b64encode(json.dumps(event).encode()).decode()
    return event_frame("chunk", {"bytes": inner, "p": "abc"})


def converse(*frames: bytes) -> captures.Capture:
    return captures.from_bytes(b"".join(frames))


HELLO = [event_frame("messageStart", {"p": "ab", "role": "assistant"}),
         event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Hi"},
                                           "p": "abcdef"}),
         event_frame("contentBlockDelta", {"contentBlockIndex": 0,
                                           "delta": {"text": " there"}, "p": "a"}),
         event_frame("contentBlockStop", {"contentBlockIndex": 0, "p": "abc"}),
         event_frame("messageStop", {"p": "abcd", "stopReason": "end_turn"}),
         event_frame("metadata", {"metrics": {"latencyMs": 5}, "p": "a",
                                  "usage": {"inputTokens": 3, "outputTokens": 2,
                                            "totalTokens": 5}})]


# -- the corpus ------------------------------------------------------------------------------


def test_the_corpus_has_the_bedrock_captures_the_issue_asks_for():
    names = {c.key for c in OURS}
    assert len(names) >= 4
    assert {"aws-bedrock-invoke/invoke-hello", "aws-bedrock-converse/converse-get-weather",
            "aws-bedrock-converse/converse-cut-in-tool-input",
            "aws-bedrock-invoke/invoke-throttling-exception"} <= names
    for cap in OURS:
        assert cap.path.suffix == ".eventstream"
        assert "botocore" in cap.sidecar["provenance"]["based_on"]
        assert cap.sidecar["provenance"]["kind"] == "constructed"


@pytest.mark.parametrize("cap", OURS, ids=key)
def test_every_constructed_capture_reads_the_same_with_botocores_parser(cap):
    buffer = EventStreamBuffer()
    theirs = []
    for piece, _ in cap.chunks():
        buffer.add_data(piece)
        theirs += [(m.headers, m.payload) for m in buffer]
    frames, _ = cap.frames()
    assert [(f.header_values(), f.payload) for f in frames] == theirs


@pytest.mark.parametrize("cap", ALL, ids=key)
def test_the_wire_is_told_from_the_frames_alone(cap):
    assert captures.detect_wire(cap.body) == cap.wire
    assert cap.framing == "eventstream" and cap.text_diagnostics == []


@pytest.mark.parametrize("cap", ALL, ids=key)
def test_events_are_the_same_at_every_chunking(cap):
    whole = [(e.event, e.data, e.start, e.end) for e in cap.decode(1 << 20)[0]]
    for size in (1, 7, 100):
        assert [(e.event, e.data, e.start, e.end) for e in cap.decode(size)[0]] == whole


@pytest.mark.parametrize("cap", RECORDED, ids=key)
def test_every_recording_ends_properly_and_turns_completed(cap):
    result = accumulate(cap)
    assert result.complete and not [d for d in result.diagnostics if d.severity == "error"]
    assert turn_state(cap, "auto").outcome == "completed"
    final = result.final
    assert final["stopReason"] in ("end_turn", "tool_use")
    assert final["usage"]["totalTokens"] > 0 and final["metrics"]["latencyMs"] > 0
    assert not _has_key(final, "p")     # the padding is no part of the response


def _has_key(value, name: str) -> bool:
    if isinstance(value, dict):
        return name in value or any(_has_key(v, name) for v in value.values())
    if isinstance(value, list):
        return any(_has_key(v, name) for v in value)
    return False


# -- frames as events --------------------------------------------------------------------


def test_an_invoke_chunk_is_read_as_its_inner_anthropic_event():
    body = chunk({"type": "message_stop"})
    (frame,), _ = decode(body)
    event = frame_event(frame)
    assert (event.event, json.loads(event.data)) == ("message_stop", {"type": "message_stop"})
    assert (event.start, event.end) == (0, len(body))
    assert event.as_dict()["headers"][":event-type"] == "chunk"


@pytest.mark.parametrize("cap", [c for c in ALL if c.wire == INVOKE], ids=key)
def test_an_invoke_chunk_is_read_once_and_as_a_fresh_strict_read_reads_it(cap):
    # Naming a chunk means reading its inner event: the frame event carries that read on,
    # and the wire event made from it is the one a fresh read of its text makes.
    chunks = [e for e in cap.events if e.headers and dict(
        (h.name, h.value) for h in e.headers).get(":event-type") == "chunk"]
    assert chunks and all(e.read is not None for e in chunks if e.data != "")
    for index, e in enumerate(chunks):
        assert e.read == read_object(e.data)
        fresh = parse_payload(e._replace(read=None), index)    # read afresh from its text
        assert parse_payload(e, index)._replace(sse=None) == fresh._replace(sse=None)
        if fresh.parse_error is None:
            assert e.event == fresh.payload["type"] == fresh.type


@pytest.mark.parametrize("inner, why", [
    ('{"type": "content_block_delta", "type": "ping"}', "appears twice"),
    ('{"type": "message_delta", "usage": {"output_tokens": NaN}}', "NaN"),
    ("[" * 2000 + "]" * 2000, "nested too deeply")])
def test_an_invoke_chunk_read_strictly_is_a_typed_error_and_never_completed(inner, why):
    # The strict read that names a chunk refuses what the wire events refuse: the frame
    # keeps its own name, its text is kept, and the turn does not complete.
    events = [{"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}}]
    bad = event_frame("chunk", {"bytes": base64.b64encode(inner.encode()).decode()})
    body = b"".join(chunk(e) for e in events) + bad + chunk({"type": "message_stop"})
    cap = captures.from_bytes(body, sidecar={"wire": INVOKE})
    wire_events = parse_all(cap.events)
    assert wire_events[1].type == "chunk" and wire_events[1].sse.data == inner
    assert why in wire_events[1].parse_error
    assert turn_state(cap, "wire").outcome == "failed"


def test_an_invoke_chunk_that_is_not_base64_is_an_unparseable_payload():
    body = event_frame("chunk", {"bytes": "not base64!!"})
    cap = captures.from_bytes(body, sidecar={"wire": INVOKE})
    (event,) = parse_all(cap.events)
    assert event.parse_error is not None and event.sse.data == "not base64!!"


def test_an_exception_frame_is_named_by_its_exception_type():
    (frame,), _ = decode(exception_frame("throttlingException", "slow down"))
    event = frame_event(frame)
    assert event.event == "throttlingException"
    assert wires.read_error(CONVERSE, event.event, json.loads(event.data)).message == "slow down"


def test_header_values_of_every_type_print_as_json_in_the_events_listing():
    import uuid
    headers = [Header(":event-type", "string", "messageStop"),
               Header(":message-type", "string", "event"), Header("b", "bytes", b"\x01"),
               Header("u", "uuid", uuid.UUID(int=1)), Header("t", "timestamp", 5),
               Header("ok", "bool", True)]
    (frame,), _ = decode(encode_frame(headers, b"{}"))
    shown = frame_event(frame).as_dict()["headers"]
    assert shown == {":event-type": "messageStop", ":message-type": "event", "b": "AQ==",
                     "u": "00000000-0000-0000-0000-000000000001", "t": 5, "ok": True}


# -- the wire modules ----------------------------------------------------------------------


@pytest.mark.parametrize(("raw", "finish"), [
    ("end_turn", "stop"), ("stop_sequence", "stop"), ("max_tokens", "length"),
    ("tool_use", "tool_calls"), ("guardrail_intervened", "content_filter"),
    ("content_filtered", "content_filter"), ("something_new", "other"), (None, None)])
def test_converse_stop_reasons_in_the_unified_vocabulary(raw, finish):
    assert wires.for_wire(CONVERSE).finish_reason(raw) == finish


@pytest.mark.parametrize(("name", "retry"), [
    ("throttlingException", True), ("serviceUnavailableException", True),
    ("modelStreamErrorException", True), ("internalServerException", True),
    ("validationException", False), ("accessDeniedException", False)])
def test_which_exceptions_a_retry_can_cure(name, retry):
    for wire in BEDROCK:
        assert wires.for_wire(wire).retryable_error(name) is retry
        assert name in wires.for_wire(wire).FAILURES


def test_usage_counts_cache_reads_and_writes_as_input():
    usage = {"inputTokens": 10, "outputTokens": 4, "cacheReadInputTokens": 100,
             "cacheWriteInputTokens": 7, "totalTokens": 121}
    assert wires.for_wire(CONVERSE).usage_counts(usage) == {
        "input": 117, "output": 4, "cache_read": 100, "cache_write": 7, "reasoning": 0}


# -- the Converse accumulator ----------------------------------------------------------------


def test_text_with_no_block_start_builds_the_non_streaming_response():
    result = accumulate(converse(*HELLO))
    assert result.complete and result.diagnostics == []
    assert result.final == {"output": {"message": {"role": "assistant",
                                                   "content": [{"text": "Hi there"}]}},
                            "stopReason": "end_turn", "metrics": {"latencyMs": 5},
                            "usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}}


def test_metadata_after_message_stop_is_no_protocol_error_but_a_delta_is():
    late = event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "!"}})
    result = accumulate(converse(*HELLO, late))
    codes = [d.code for d in result.diagnostics]
    assert "event_after_terminal" in codes and "delta_after_stop" in codes


def test_a_citation_before_its_text_opens_the_block_and_is_kept():
    citation = {"title": "Doc", "sourceContent": [{"text": "x"}],
                "location": {"documentChar": {"documentIndex": 0, "start": 0, "end": 1}}}
    frames = [HELLO[0],
              event_frame("contentBlockDelta", {"contentBlockIndex": 0,
                                                "delta": {"citation": citation}}),
              *HELLO[1:]]
    content = accumulate(converse(*frames)).final["output"]["message"]["content"]
    assert content == [{"citationsContent": {"content": [{"text": "Hi there"}],
                                             "citations": [citation]}}]


def test_reasoning_text_and_its_signature_make_one_reasoning_block():
    frames = [HELLO[0],
              event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
                  "reasoningContent": {"text": "Think"}}}),
              event_frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
                  "reasoningContent": {"signature": "c2ln"}}}),
              event_frame("contentBlockStop", {"contentBlockIndex": 0}), *HELLO[4:]]
    content = accumulate(converse(*frames)).final["output"]["message"]["content"]
    assert content == [{"reasoningContent": {"reasoningText": {"text": "Think",
                                                               "signature": "c2ln"}}}]


def test_a_tool_delta_without_its_start_is_an_unknown_slot_and_keeps_its_text():
    frames = [HELLO[0], event_frame("contentBlockDelta", {"contentBlockIndex": 3, "delta": {
        "toolUse": {"input": "{\"a\""}}}), *HELLO[4:]]
    result = accumulate(converse(*frames))
    (diag,) = [d for d in result.diagnostics if d.code == "unknown_slot"]
    assert diag.extra["orphan_text"] == '{"a"'


def test_an_exception_frame_is_an_in_band_error_and_never_completes():
    frames = [*HELLO[:3], exception_frame("validationException", "bad input")]
    result = accumulate(converse(*frames))
    assert not result.complete
    (error,) = [d for d in result.diagnostics if d.code == "in_band_error"]
    assert "validationException: bad input" in error.message
    state = turn_state(converse(*frames), "auto")
    assert state.outcome == "failed"


def test_a_bad_crc_mid_stream_keeps_what_came_before_and_fails_the_turn():
    broken = bytearray(HELLO[2])
    broken[-6] ^= 0xFF
    cap = converse(*HELLO[:2], bytes(broken), *HELLO[3:])
    assert [e.event for e in cap.events] == ["messageStart", "contentBlockDelta"]
    (diag,) = cap.sse_diagnostics
    assert diag.code == "bad_message_crc" and diag.offset == len(HELLO[0]) + len(HELLO[1])
    assert turn_state(cap, "auto").outcome != "completed"


def test_a_broken_frame_after_message_stop_still_fails_the_turn():
    broken = bytearray(HELLO[5])
    broken[20] ^= 1
    cap = converse(*HELLO[:5], bytes(broken))
    assert turn_state(cap, "auto").outcome != "completed"


# -- InvokeModelWithResponseStream -------------------------------------------------------------


def test_invoke_builds_the_same_message_as_the_anthropic_accumulator_on_the_same_events():
    cap = captures.load("aws-bedrock-invoke/invoke-get-weather")
    ours = accumulate(cap).final
    plain = accumulator_for("anthropic-messages")
    for event in parse_all(cap.events):
        plain.feed(event)
    plain.finish()
    assert ours == plain.final()
    assert ours["content"][1]["input"] == {"city": "Paris", "unit": "celsius"}


def test_an_invoke_exception_frame_is_an_error_a_retry_can_cure():
    cap = captures.load("aws-bedrock-invoke/invoke-throttling-exception")
    state = turn_state(cap, "auto")
    assert state.outcome == "failed"
    errors = [e for e in state.events if e.kind == "error_reported"]
    assert errors and errors[0].retryable and errors[0].code == "throttlingException"


# -- the CLI -------------------------------------------------------------------------------


def test_events_on_a_binary_body_lists_frames_with_headers_and_offsets(capsys):
    cap = captures.load("aws-bedrock-converse/converse-hello")
    assert main(["events", str(cap.path)]) == 0
    out = capsys.readouterr().out
    assert ":event-type=messageStart (string)" in out and "messageStop" in out
    assert f"0-{cap.events[0].end}" in out.replace(" ", "")


def test_events_json_carries_each_frames_headers(capsys):
    cap = captures.load("aws-bedrock-invoke/invoke-hello")
    assert main(["events", str(cap.path), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed[0]["event"] == "message_start"
    assert listed[0]["headers"][":event-type"] == "chunk"


def test_a_cut_frame_is_reported_with_its_offset_and_exit_3(capsys):
    cap = captures.load("aws-bedrock-converse/converse-cut-in-tool-input")
    assert main(["final", str(cap.path)]) == 3
    err = capsys.readouterr().err
    assert f"byte {cap.events[-1].end}: error: truncated_frame" in err


# -- the weather turn ------------------------------------------------------------------------


def _story(wire: str) -> tuple:
    """What a turn says, whatever its wire: outcome, each step's finish and token counts,
    each block's kind, text, tool name and input."""
    steps = [captures.load(f"{wire}/weather-turn-step{n}") for n in (1, 2)]
    state = turn_state(steps, "auto")
    return (state.outcome,
            [(s.finish.reason if s.finish else None, s.usage.input, s.usage.output)
             for s in state.steps],
            [(b.step, b.kind, b.text, b.name, b.input, b.complete) for b in state.blocks])


@pytest.mark.parametrize("wire", BEDROCK)
def test_the_weather_turn_reduces_to_the_same_state_as_on_the_anthropic_wire(wire):
    assert _story(wire) == _story("anthropic-messages")


def test_an_unknown_message_type_is_a_typed_error_and_the_turn_is_not_completed():
    odd = encode_frame({":event-type": "contentBlockDelta", ":message-type": "gossip"},
                       json.dumps({"contentBlockIndex": 0, "delta": {"text": "?"}}).encode())
    cap = converse(*HELLO[:2], odd, *HELLO[2:])
    (diag,) = cap.sse_diagnostics
    assert diag.code == "unknown_message_type" and diag.offset == len(HELLO[0]) + len(HELLO[1])
    assert turn_state(cap, "auto").outcome == "failed"


def test_an_event_after_an_exception_is_noted():
    frames = [*HELLO[:2], exception_frame("throttlingException", "slow"), HELLO[2]]
    codes = [d.code for d in accumulate(converse(*frames)).diagnostics]
    assert "in_band_error" in codes and "event_after_error" in codes


@pytest.mark.parametrize("cap", ALL, ids=key)
def test_the_event_table_knows_every_bedrock_event_and_addresses_its_blocks(cap):
    from lesson_lib.views.event_table import event_table
    table = event_table(cap)
    assert not table["unknown"].any()
    deltas = table[table["type"].isin(["contentBlockDelta", "content_block_delta"])]
    assert deltas["index"].notna().all() and deltas["delta_type"].notna().all()
    assert table["error"].sum() == sum(e.event in wires.bedrock.EXCEPTIONS for e in cap.events)


def test_no_deadly_fault_leaves_a_bedrock_turn_completed():
    from lesson_lib.views.fault_lab import DEADLY, honesty
    counts = honesty([c for c in OURS if c.events], percents=(10, 60))
    assert all(counts[name] for name in DEADLY)       # every fault applies to frames
    assert not any("completed" in outcomes for outcomes in counts.values())
