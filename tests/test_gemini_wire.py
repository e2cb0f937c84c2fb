"""The Gemini wire's one home (`lesson_lib.wires.gemini`), checked against its recordings.

Gemini has no terminal event: a stream ended properly when its body ended at
an event boundary right after a record carrying a ``finishReason``. These
tests cut every recording at every byte boundary between records and inside
them, and hold the rule to what the cut left.
"""

from __future__ import annotations

import json

import pytest

from lesson_lib import wires
from lesson_lib.accumulate import accumulate
from lesson_lib.capture.captures import corpus, detect_wire, from_bytes, reference_corpus
from lesson_lib.wires.stream_end import how_it_ended
from lesson_lib.wires.wire_events import GEMINI_RECORD, parse_all

G = wires.gemini
RECORDINGS = [c for c in reference_corpus() if c.wire == G.WIRE]
OURS = [c for c in corpus() if c.wire == G.WIRE]
STREAMS = [c for c in RECORDINGS + OURS if c.status < 300]
needs_recordings = pytest.mark.skipif(not RECORDINGS, reason="reference captures not present")


def gemini(body: bytes):
    return from_bytes(body, sidecar={"wire": G.WIRE})


def record(parts=(), finish=None, **extra) -> bytes:
    cand = {"content": {"parts": list(parts), "role": "model"}}
    if finish:
        cand["finishReason"] = finish
    payload = {"candidates": [cand], "modelVersion": "gemini-2.5-flash", **extra}
    return b"data: " + json.dumps(payload).encode() + b"\r\n\r\n"


# -- the module's facts -------------------------------------------------------------------


def test_the_module_offers_every_fact_a_wire_offers():
    assert wires.for_wire("google-gemini") is G
    assert G.EVENT_TYPES == {GEMINI_RECORD, "error"} and G.FAILURES == {"error"}
    assert G.TERMINALS == frozenset()         # no terminal event: `terminal_reached` says
    assert G.SHEET.wire == G.WIRE and "finishReason" in G.SHEET.terminal


@pytest.mark.parametrize(("raw", "unified"), [
    ("STOP", "stop"), ("MAX_TOKENS", "length"), ("SAFETY", "content_filter"),
    ("RECITATION", "content_filter"), ("PROHIBITED_CONTENT", "content_filter"),
    ("MALFORMED_FUNCTION_CALL", "error"), ("OTHER", "other"), ("SOMETHING_NEW", "other"),
    (None, None)])
def test_finish_reasons_read_in_the_unified_vocabulary(raw, unified):
    assert G.finish_reason(raw) == unified
    assert unified is None or unified in wires.FINISHES


def test_stop_with_a_function_call_is_tool_calls():
    assert G.finish_from("STOP", called_tools=True) == "tool_calls"
    assert G.finish_from("STOP", called_tools=False) == "stop"
    assert G.finish_from("MAX_TOKENS", called_tools=True) == "length"


def test_an_error_record_reads_by_its_status():
    payload = {"error": {"code": 429, "message": "Resource has been exhausted",
                         "status": "RESOURCE_EXHAUSTED"}}
    err = G.read_error("error", payload)
    assert (err.type, err.code, err.message, err.kind) == (
        "RESOURCE_EXHAUSTED", "429", "Resource has been exhausted", "RESOURCE_EXHAUSTED")
    assert G.retryable(err) and G.retryable_error("UNAVAILABLE")
    assert not G.retryable_error("INVALID_ARGUMENT") and not G.retryable_error("PERMISSION_DENIED")
    assert G.read_error(GEMINI_RECORD, payload) is None
    assert G.read_error("error", {"error": "text"}) is None


def test_usage_counts_read_the_last_running_total():
    usage = {"promptTokenCount": 46, "candidatesTokenCount": 132, "thoughtsTokenCount": 396,
             "toolUsePromptTokenCount": 901, "cachedContentTokenCount": 10}
    assert G.usage_counts(usage) == {"input": 947, "output": 528, "cache_read": 10,
                                     "cache_write": 0, "reasoning": 396}
    assert set(G.usage_counts(None).values()) == {0}


@needs_recordings
def test_usage_can_go_down_and_the_last_wins():
    text = next(c for c in RECORDINGS if c.name == "text-basic")
    prompts = [ev.payload["usageMetadata"]["promptTokenCount"] for ev in parse_all(text.events)]
    assert prompts == [15, 15, 13]
    assert accumulate(text).final["usageMetadata"]["promptTokenCount"] == 13


# -- telling the wire by structure ----------------------------------------------------------


def test_a_record_is_told_by_its_structure_never_by_model_text():
    assert detect_wire(record([{"text": "hi"}])) == "google-gemini"
    assert detect_wire(b'data: {"usageMetadata": {"promptTokenCount": 3}}\n\n') == "google-gemini"
    chat = (b'data: {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": '
            b'{"content": "{\\"candidates\\": [], \\"modelVersion\\": 1}"}}]}\n\n')
    assert detect_wire(chat) == "openai-chat"
    assert detect_wire(b'data: {"text": "candidates usageMetadata modelVersion"}\n\n') is None


@pytest.mark.parametrize("capture", RECORDINGS, ids=lambda c: c.key)
def test_every_recording_is_told_gemini_without_its_folder(capture):
    assert detect_wire(capture.body) == "google-gemini"
    assert {ev.type for ev in parse_all(capture.events)} == {GEMINI_RECORD}


# -- the terminal rule, against cuts ----------------------------------------------------------


def _proper(body: bytes) -> bool:
    cap = gemini(body)
    return how_it_ended(cap.wire, parse_all(cap.events), cap.sse_diagnostics).proper


@pytest.mark.parametrize("capture", STREAMS, ids=lambda c: c.key)
def test_a_cut_is_proper_only_at_a_boundary_after_a_finished_record(capture):
    events = parse_all(capture.events)
    whole = how_it_ended(capture.wire, events, capture.sse_diagnostics)
    assert whole.proper == (G.ended_properly(e.payload for e in events)
                            and not capture.sse_diagnostics)
    for ev in events:
        # Right after a record: proper exactly when that record carried a finishReason.
        # (A CRLF blank line dispatches at its CR: its LF belongs to no event.)
        end = ev.sse.end + (capture.body[ev.sse.end:ev.sse.end + 1] == b"\n")
        prefix = capture.body[:end]
        assert _proper(prefix) == (G.record_finished(ev.payload)
                                   and G.ended_properly(e.payload for e in events[:ev.index + 1]))
        # Inside a record: always cut, whatever came before.
        middle = (ev.sse.start + ev.sse.end) // 2
        assert not _proper(capture.body[:middle])
        result = accumulate(gemini(capture.body[:middle]))
        assert not result.complete


@needs_recordings
def test_stop_mid_stream_is_not_the_end_when_records_follow():
    cap = next(c for c in RECORDINGS if c.name == "code-execution-stop-mid-stream")
    finished = [G.record_finished(e.payload) for e in parse_all(cap.events)]
    assert finished == [False, False, True, False, False, False, True]
    assert G.ended_properly(e.payload for e in parse_all(cap.events))
    assert not G.ended_properly(e.payload for e in parse_all(cap.events)[:4])


def test_an_error_record_is_never_a_proper_end():
    body = record([{"text": "Hel"}]) + (b'data: {"error": {"code": 503, "message": "overloaded",'
                                        b' "status": "UNAVAILABLE"}}\r\n\r\n')
    cap = gemini(body)
    ending = how_it_ended(cap.wire, parse_all(cap.events), cap.sse_diagnostics)
    assert ending.kind == "error" and "UNAVAILABLE: overloaded" in ending.reason
    assert not _proper(record([{"text": "a"}], "STOP") + body)


def test_every_candidate_needs_its_finish_reason():
    two = {"candidates": [
        {"index": 0, "content": {"parts": [{"text": "a"}]}, "finishReason": "STOP"},
        {"index": 1, "content": {"parts": [{"text": "b"}]}}]}
    body = b"data: " + json.dumps(two).encode() + b"\n\n"
    assert not _proper(body)
    last = {"candidates": [{"index": 1, "content": {"parts": []}, "finishReason": "STOP"}]}
    assert _proper(body + b"data: " + json.dumps(last).encode() + b"\n\n")
