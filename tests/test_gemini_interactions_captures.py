"""The constructed Gemini Interactions corpus: deterministic, consistent, and as messy as the
recordings.

The builder is run into a temporary folder; the committed captures must be
byte-identical to it. Each capture must look like the five recordings
(``event:`` lines, compact JSON, ``event_type`` last, the lifecycle events'
fields), carry every field they carry, and google-genai, replayed offline, must
do what each sidecar says.
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

from corpus import gemini_interactions_corpus
from corpus import weather_turn as weather
from corpus.gemini_interactions_stream import HELPER
from lesson_lib.accumulate import accumulate
from lesson_lib.capture import captures
from lesson_lib.wires import gemini_interactions as gi

pytest.importorskip("google.genai._gaos.types.interactions")
from google.genai._gaos.types.interactions import interactionsseevent  # noqa: E402
from pydantic import TypeAdapter  # noqa: E402

WIRE = gi.WIRE
NAMES = {"text", "thought-signature", "streamed-arguments", "parallel-calls", "server-tool",
         "error-mid-stream", "cut-mid-step", "event-ids", "weather-turn-step1",
         "weather-turn-step2"}
UNFINISHED = {"error-mid-stream", "cut-mid-step"}
WAITING = {"streamed-arguments", "parallel-calls", "weather-turn-step1"}
SSE_EVENT = TypeAdapter(interactionsseevent.InteractionSSEEvent)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, captures.Capture]:
    return build_corpus(gemini_interactions_corpus, tmp_path_factory.mktemp("built"), WIRE)


def payloads(cap: captures.Capture) -> list[dict]:
    return [w.payload for w in events(cap) if isinstance(w.payload, dict)]


def recordings() -> list[captures.Capture]:
    return [c for c in captures.reference_corpus() if c.wire == WIRE]


class TestCorpusAsFiles(CorpusAsFiles):
    corpus, names, wire = gemini_interactions_corpus, NAMES, WIRE


@pytest.mark.parametrize("name", sorted(NAMES))
def test_sidecar_says_what_produced_the_capture(built, name):
    cap = built[name]
    side = cap.sidecar
    assert side["wire"] == WIRE == cap.wire
    assert side["demonstrates"] and "\n" not in side["demonstrates"]
    assert side["request"]["model"].startswith("gemini-")
    assert side["request"]["stream"] is True        # the body asks for the stream
    assert side["response"]["status"] == 200
    assert side["response"]["headers"]["content-type"] == "text/event-stream"
    assert_sidecar_provenance(cap, HELPER)


# -- as messy as the recordings ------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NAMES))
def test_every_event_is_one_the_sdk_reads_named_twice_as_recorded(built, name):
    cap = built[name]
    for w in events(cap):
        if w.payload is None:           # the cut tail
            assert name == "cut-mid-step"
            continue
        assert w.sse.event == w.payload[gi.EVENT_TYPE_FIELD] and list(w.payload)[-1] == gi.EVENT_TYPE_FIELD
        assert '":"' in w.sse.data or '":{' in w.sse.data      # compact JSON
        read = SSE_EVENT.validate_python(w.payload)
        assert not getattr(read, "is_unknown", False)
    kinds = [p[gi.EVENT_TYPE_FIELD] for p in payloads(cap)]
    assert kinds[:2] == [gi.INTERACTION_CREATED, gi.INTERACTION_STATUS_UPDATE]
    if name in UNFINISHED:
        assert gi.INTERACTION_COMPLETED not in kinds
    else:
        assert kinds[-1] == gi.INTERACTION_COMPLETED
        status = payloads(cap)[-1]["interaction"]["status"]
        assert status == (gi.REQUIRES_ACTION if name in WAITING else gi.COMPLETED)


def test_the_corpus_carries_every_field_the_recordings_carry(built):
    real = recordings()
    if not real:
        pytest.skip(f"reference captures not found at {captures.reference_dir()}")

    def fields(caps) -> set[tuple[str, str]]:
        out = set()
        for cap in caps:
            for p in payloads(cap):
                kind = p[gi.EVENT_TYPE_FIELD]
                out |= {(kind, k) for k in p}
                for inner in ("interaction", "step", "delta"):
                    if isinstance(p.get(inner), dict):
                        out |= {(f"{kind}.{inner}", k) for k in p[inner]}
                usage = (p.get("interaction") or {}).get("usage") or {}
                out |= {(f"{kind}.usage", k) for k in usage}
        return out

    assert fields(real) <= fields(built.values())


def test_network_reads_split_events_and_characters(built):
    mid_event = mid_char = 0
    for cap in built.values():
        starts = {e.start for e in cap.events} | {len(cap.body)}
        for end in cap.chunk_ends[:-1]:
            mid_event += end not in starts
            mid_char += (cap.body[end] & 0xC0) == 0x80
    assert mid_event >= 5 and mid_char >= 3


def test_timing_is_realistic(built):
    for name, cap in built.items():
        evs = events(cap)
        assert evs[0].t >= 200, name
        times = [w.t for w in evs]
        assert times == sorted(times), name
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert 0 <= statistics.median(gaps) <= 300, name


# -- each capture shows its thing ------------------------------------------------------------


def test_the_thought_carries_its_summary_and_its_signature(built):
    deltas = [p["delta"] for p in payloads(built["thought-signature"]) if "delta" in p]
    kinds = [d["type"] for d in deltas]
    assert kinds.count(gi.THOUGHT_SUMMARY_DELTA) >= 2
    assert kinds.index(gi.THOUGHT_SIGNATURE_DELTA) > kinds.index(gi.THOUGHT_SUMMARY_DELTA)
    final = accumulate(built["thought-signature"]).final
    assert final["steps"][0]["signature"] and final["steps"][0]["summary"][0]["type"] == "text"


def test_the_streamed_arguments_split_an_escape_and_a_surrogate_pair(built):
    fragments = [p["delta"]["arguments"] for p in payloads(built["streamed-arguments"])
                 if p.get("delta", {}).get("type") == gi.ARGUMENTS_DELTA]
    joined = "".join(fragments)
    prefixes = ["".join(fragments[:i]) for i in range(1, len(fragments))]
    assert any(p.endswith("\\u0") for p in prefixes)
    assert any(p.endswith("\\ud83c") for p in prefixes)
    step = accumulate(built["streamed-arguments"]).final["steps"][1]
    assert step["arguments"] == json.loads(joined)


def test_the_server_tool_steps_and_the_citation(built):
    final = accumulate(built["server-tool"]).final
    kinds = [s["type"] for s in final["steps"]]
    assert kinds == ["google_search_call", "google_search_result", gi.MODEL_OUTPUT_STEP]
    call, result, text = final["steps"]
    assert call["arguments"]["queries"] and result["call_id"] == call["id"]
    assert text["content"][0]["annotations"][0]["type"] == "url_citation"


def test_the_cut_and_the_error_end_without_a_completed_interaction(built):
    cut = built["cut-mid-step"]
    assert cut.sse_diagnostics and cut.sse_diagnostics[0].code == "undispatched_bytes"
    error = events(built["error-mid-stream"])[-1]
    assert error.type == gi.ERROR and error.payload["error"]["code"] == "UNAVAILABLE"


def test_every_event_of_the_event_id_capture_carries_one_and_no_other_capture_does(built):
    for name, cap in built.items():
        ids = [p.get("event_id") for p in payloads(cap)]
        if name == "event-ids":
            assert all(ids) and len(set(ids)) == len(ids)
        else:
            assert not any(ids), name


def test_weather_turn_matches_the_shared_story(built):
    one, two = built["weather-turn-step1"], built["weather-turn-step2"]
    assert one.sidecar["turn"] == {"name": weather.TURN_NAME, "step": 1}
    assert two.sidecar["turn"] == {"name": weather.TURN_NAME, "step": 2}
    assert one.request["input"] == weather.QUESTION
    calls = [s for s in accumulate(one).final["steps"] if s["type"] == gi.FUNCTION_CALL_STEP]
    assert [c["arguments"] for c in calls] == weather.CALLS
    sent = two.request["input"]
    assert [s["call_id"] for s in sent] == [c["id"] for c in calls]
    assert [json.loads(s["result"]) for s in sent] == weather.RESULTS
    assert two.request["previous_interaction_id"] == accumulate(one).final["id"]
    assert "".join(p["delta"].get("text", "") for p in payloads(two) if "delta" in p) \
        == weather.ANSWER


# -- the official SDK -------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_sdk_does_what_the_sidecar_says(built, name):
    assert_sdk_does_what_the_sidecar_says(built[name])


@pytest.mark.parametrize("name", ["text", "streamed-arguments", "cut-mid-step"])
def test_the_sdk_outcome_does_not_depend_on_chunking(built, name):
    assert_sdk_outcome_independent_of_chunking(built[name], chunk_size=5)
