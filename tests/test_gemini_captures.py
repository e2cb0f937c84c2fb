"""The constructed Gemini corpus: deterministic, consistent, and as messy as the recordings.

The builder is run into a temporary folder; the committed captures must be
byte-identical to it. The Gemini API captures must look like the API's
recordings (CRLF between records, spaced JSON, usage on every record), the
Vertex AI one like Vertex's (compact JSON, ``createTime``, ``partialArgs``),
and google-genai, replayed offline, must do what each sidecar says.
"""

from __future__ import annotations

import json
import statistics

import pytest
from capture_assertions import (
    CorpusAsFiles,
    assert_sdk_does_what_the_sidecar_says,
    assert_sdk_outcome_independent_of_chunking,
    assert_sidecar_provenance,
    build_corpus,
    events,
)
from google.genai import types

from corpus import gemini_corpus
from corpus import weather_turn as weather
from corpus.gemini_stream import HELPER
from lesson_lib.accumulate import accumulate
from lesson_lib.capture import captures
from lesson_lib.wires.wire_events import GEMINI_RECORD

WIRE = "google-gemini"
NAMES = {"text-crlf", "thinking-signature", "parallel-calls", "streamed-partial-args",
         "safety-stop", "max-tokens", "cut-mid-record", "error-mid-stream", "http-429",
         "weather-turn-step1", "weather-turn-step2"}
VERTEX = {"streamed-partial-args"}
UNFINISHED = {"cut-mid-record", "error-mid-stream"}
STREAMED = NAMES - {"http-429"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, captures.Capture]:
    return build_corpus(gemini_corpus, tmp_path_factory.mktemp("built"), WIRE)


def records(cap: captures.Capture) -> list[dict]:
    return [w.payload for w in events(cap) if w.type == GEMINI_RECORD]


def parts(cap: captures.Capture) -> list[dict]:
    return [p for r in records(cap) for c in r["candidates"] for p in c["content"]["parts"]]


# -- the corpus as files ----------------------------------------------------------------


class TestCorpusAsFiles(CorpusAsFiles):
    corpus, names, wire = gemini_corpus, NAMES, WIRE


@pytest.mark.parametrize("name", sorted(NAMES))
def test_sidecar_says_what_produced_the_capture(built, name):
    cap = built[name]
    side = cap.sidecar
    assert side["wire"] == WIRE == cap.wire
    assert side["demonstrates"] and "\n" not in side["demonstrates"]
    assert side["request"]["model"].startswith("gemini-")
    assert side["request"]["contents"][0]["role"] == "user"
    assert "stream" not in side["request"]        # the path streams, not a body field
    headers = side["response"]["headers"]
    assert not any("key" in h.lower() or "auth" in h.lower() for h in headers)
    if name == "http-429":
        assert side["response"]["status"] == 429
        assert json.loads(cap.body)["error"]["status"] == "RESOURCE_EXHAUSTED"
    else:
        assert side["response"]["status"] == 200
        assert headers["content-type"] == "text/event-stream"
    assert_sidecar_provenance(cap, HELPER)


# -- as messy as the recordings ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(STREAMED))
def test_records_are_whole_responses_the_sdk_accepts(built, name):
    cap = built[name]
    evs = events(cap)
    assert all(w.sse.event is None for w in evs), "Gemini has no event names"
    for payload in records(cap):
        types.GenerateContentResponse.model_validate(payload)
        assert payload["modelVersion"] == cap.request["model"]
    assert len({r["responseId"] for r in records(cap)}) == 1
    if name in VERTEX:
        assert b"\r\n" not in cap.body and b'":"' in cap.body
        assert all("createTime" in r and "index" not in r["candidates"][0]
                   for r in records(cap))
        assert all(r["usageMetadata"] == {"trafficType": "ON_DEMAND"} for r in records(cap)[:-1])
    else:
        assert cap.body.count(b"\r\n\r\n") == len(evs) and b'": ' in cap.body
        assert all("promptTokenCount" in r["usageMetadata"] for r in records(cap))
    if name not in UNFINISHED:
        assert "finishReason" in records(cap)[-1]["candidates"][0]
        assert not any("finishReason" in c for r in records(cap)[:-1] for c in r["candidates"])


def test_the_api_captures_carry_every_envelope_field_real_ones_do(built):
    real = [c for c in captures.reference_corpus() if c.wire == WIRE]
    if not real:
        pytest.skip(f"reference captures not found at {captures.reference_dir()}")
    ours = [r for cap in built.values() for r in records(cap)]
    assert {k for c in real for r in records(c) for k in r} <= {k for r in ours for k in r}
    # Server tools add their own usage counts; the corpus has no server tool.
    tool_usage = {"toolUsePromptTokenCount", "toolUsePromptTokensDetails", "serviceTier"}
    real_usage = {k for c in real for r in records(c) for k in r["usageMetadata"]}
    assert real_usage - tool_usage <= {k for r in ours for k in r["usageMetadata"]}


def test_what_the_recordings_do_the_corpus_does_too(built):
    every = [r for cap in built.values() for r in records(cap)]
    # The candidate index is absent on some records of the Gemini API too.
    assert any("index" not in r["candidates"][0] for cap in built.values()
               if cap.name not in VERTEX for r in records(cap) if r.get("candidates"))
    # An empty text part holding the finish reason.
    assert any(c.get("finishReason") and c["content"]["parts"] == [{"text": ""}]
               for r in every for c in r.get("candidates", []))
    # The prompt count drops on the last record.
    text = [r["usageMetadata"]["promptTokenCount"] for r in records(built["text-crlf"])]
    assert text[0] > text[-1]
    # A thought signature on a text part and on a call; thought parts.
    sigs = [p for cap in built.values() for p in parts(cap) if "thoughtSignature" in p]
    assert {("text" in p, "functionCall" in p) for p in sigs} == {(True, False), (False, True)}
    assert any(p.get("thought") for p in parts(built["thinking-signature"]))


def test_network_reads_split_records_and_characters(built):
    mid_event = mid_char = 0
    for cap in built.values():
        starts = {e.start for e in cap.events} | {len(cap.body)}
        for end in cap.chunk_ends[:-1]:
            mid_event += end not in starts
            mid_char += (cap.body[end] & 0xC0) == 0x80
        whole = captures.from_bytes(cap.body, sidecar={"wire": WIRE}).decode()[0]
        assert [e.data for e in cap.events] == [e.data for e in whole]
    assert mid_event >= 5 and mid_char >= 1


def test_timing_is_realistic(built):
    for name in STREAMED:
        evs = events(built[name])
        assert evs[0].t >= 200, name
        times = [w.t for w in evs]
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        if len(gaps) > 5:
            assert 3 <= statistics.median(gaps) <= 300, name


# -- each capture shows its thing ------------------------------------------------------------


def test_streamed_arguments_cover_every_kind_of_value(built):
    cap = built["streamed-partial-args"]
    entries = [e for p in parts(cap) for e in p.get("functionCall", {}).get("partialArgs", [])]
    kinds = {k for e in entries for k in e if k.endswith("Value")}
    assert kinds == {"stringValue", "numberValue", "boolValue", "nullValue"}
    assert any("[1]" in e["jsonPath"] for e in entries)
    assert parts(cap)[-1] == {"functionCall": {}}
    call = accumulate(cap).final["candidates"][0]["content"]["parts"][0]["functionCall"]
    assert call["args"]["attendees"] == ["ana.lima@example.com", "li.wei@example.com"]


@pytest.mark.parametrize(("name", "reason"), [("safety-stop", "SAFETY"),
                                              ("max-tokens", "MAX_TOKENS")])
def test_the_stops_say_why(built, name, reason):
    last = records(built[name])[-1]["candidates"][0]
    assert last["finishReason"] == reason
    if reason == "SAFETY":
        assert any(r.get("blocked") for r in last["safetyRatings"])


def test_the_cut_and_the_error_end_without_a_finish(built):
    cut = built["cut-mid-record"]
    assert cut.sse_diagnostics and cut.sse_diagnostics[0].code == "undispatched_bytes"
    error = events(built["error-mid-stream"])[-1]
    assert error.type == "error" and error.payload["error"]["status"] == "UNAVAILABLE"


def test_weather_turn_matches_the_shared_story(built):
    one, two = built["weather-turn-step1"], built["weather-turn-step2"]
    assert one.sidecar["turn"] == {"name": weather.TURN_NAME, "step": 1}
    assert two.sidecar["turn"] == {"name": weather.TURN_NAME, "step": 2}
    assert one.request["contents"] == [{"role": "user", "parts": [{"text": weather.QUESTION}]}]
    calls = [p["functionCall"] for p in parts(one) if "functionCall" in p]
    assert [c["args"] for c in calls] == weather.CALLS
    sent = [p["functionResponse"]["response"] for p in two.request["contents"][-1]["parts"]]
    assert sent == weather.RESULTS
    model_turn = two.request["contents"][1]
    assert model_turn["role"] == "model" and "thoughtSignature" in model_turn["parts"][0]
    assert "".join(p.get("text", "") for p in parts(two)) == weather.ANSWER


# -- the official SDK -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_sdk_does_what_the_sidecar_says(built, name):
    assert_sdk_does_what_the_sidecar_says(built[name])


@pytest.mark.parametrize("name", ["text-crlf", "streamed-partial-args", "cut-mid-record"])
def test_the_sdk_outcome_does_not_depend_on_chunking(built, name):
    assert_sdk_outcome_independent_of_chunking(built[name], chunk_size=5)
