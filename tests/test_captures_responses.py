"""The constructed OpenAI Responses corpus: deterministic, consistent, as messy as real streams.

The builder is run into a temporary folder; the committed captures must be
byte-identical to it. Every stream is checked against the Responses rules
(sequence numbers, item addressing, terminal object = what the events
built), against the official SDK (replayed offline, it must do what the
sidecar says), and against the shared reference recordings (no cleaner,
no more invalid under the SDK's own schema).
"""

from __future__ import annotations

import json
import statistics
import typing
from collections import defaultdict
from typing import Any

import pydantic
import pytest
from capture_assertions import (
    CorpusAsFiles,
    assert_sdk_does_what_the_sidecar_says,
    assert_sdk_outcome_independent_of_chunking,
    assert_sidecar_provenance,
    assert_sidecar_request,
    build_corpus,
    events,
)
from openai.types.responses import ResponseStreamEvent
from pending import PENDING_FIELDS

from corpus import responses_corpus
from corpus import weather_turn as weather
from lesson_lib.capture import captures, replay
from lesson_lib.cli.validate import sdk_claim_problems

WIRE = "openai-responses"
NAMES = {"text", "function-call", "parallel-function-calls", "reasoning-summary", "refusal",
         "incomplete", "error-then-failed", "web-search", "http-429", "structured-output",
         "weather-turn-step1", "weather-turn-step2", "http-429-retry-after", "background-cut",
         "background-resumed", "custom-tool-call", "queued-compaction",
         "openrouter-reasoning-text", "mcp-failures", "mcp-approval-request", "audio-output",
         "hosted-shell", "file-search", "tool-search", "rotating-ids"}
RESUME_PAIR = ("background-cut", "background-resumed")
STREAMS = sorted(NAMES - {"http-429", "http-429-retry-after", *RESUME_PAIR})
# Streams in another server's Responses style (data-only events, no obfuscation, its own
# headers, [DONE] at the end; or ids that change from event to event): the api.openai.com
# rules below leave them out.
OTHER_SERVERS = {"openrouter-reasoning-text", "rotating-ids"}
OPENAI_STREAMS = [n for n in STREAMS if n not in OTHER_SERVERS]
TERMINALS = {"response.completed", "response.incomplete", "response.failed"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, captures.Capture]:
    return build_corpus(responses_corpus, tmp_path_factory.mktemp("built"), WIRE)


def of_type(cap: captures.Capture, kind: str) -> list[dict[str, Any]]:
    return [w.payload for w in events(cap) if w.type == kind]


# -- the corpus as files ----------------------------------------------------------


class TestCorpusAsFiles(CorpusAsFiles):
    corpus, names, wire = responses_corpus, NAMES, WIRE


@pytest.mark.parametrize("name", sorted(NAMES))
def test_sidecar_says_what_produced_the_capture(built, name):
    cap = built[name]
    side = cap.sidecar
    if name == "background-resumed":   # a GET: no model, no input
        assert side["request"]["method"] == "GET" and side["request"]["stream"] is True
    else:
        assert_sidecar_request(cap, WIRE)
    headers = side["response"]["headers"]
    if name in OTHER_SERVERS:
        headers = {"x-request-id": "req_" + "0" * 32, **headers}
    assert headers["x-request-id"].startswith("req_") and len(headers["x-request-id"]) == 36
    assert not any("key" in h.lower() or "auth" in h.lower() for h in headers)
    assert_sidecar_provenance(cap, "responses.stream + get_final_response()")


# -- the Responses rules ------------------------------------------------------------


@pytest.mark.parametrize("name", OPENAI_STREAMS)
def test_events_are_numbered_named_and_end_once(built, name):
    cap = built[name]
    evs = events(cap)
    assert not cap.sse_diagnostics
    assert all(w.parse_error is None and w.sse.event == w.type for w in evs)
    assert [w.payload["sequence_number"] for w in evs] == list(range(len(evs)))
    # A background response may wait in the queue first (response.queued).
    opening = [w.type for w in evs[:3]]
    assert opening[:2] == ["response.created", "response.in_progress"] or opening == [
        "response.created", "response.queued", "response.in_progress"]
    assert evs[-1].type in TERMINALS
    assert sum(w.type in TERMINALS for w in evs) == 1
    ids = {w.payload["response"]["id"] for w in evs if "response" in w.payload}
    assert len(ids) == 1


@pytest.mark.parametrize("name", STREAMS)
def test_the_terminal_object_is_what_the_events_built(built, name):
    """Deltas add up to the .done events, the closed items, and the server's final output."""
    evs = events(built[name])
    texts: dict[tuple, str] = defaultdict(str)
    closed: dict[int, dict] = {}
    for w in evs:
        p = w.payload
        if not isinstance(p, dict):     # [DONE] after the terminal (another server's style)
            continue
        where = (p.get("output_index"), p.get("content_index", p.get("summary_index")))
        if w.type.endswith(".delta") and isinstance(p["delta"], str):
            # (a shell output's delta is an object of streams: checked by its own test)
            texts[(w.type.rsplit(".", 1)[0], *where)] += p["delta"]
        elif w.type in ("response.output_text.done", "response.refusal.done",
                        "response.reasoning_summary_text.done",
                        "response.function_call_arguments.done"):
            field = {"response.refusal.done": "refusal",
                     "response.function_call_arguments.done": "arguments"}.get(w.type, "text")
            assert texts[(w.type.rsplit(".", 1)[0], *where)] == p[field], w.index
        elif w.type == "response.output_item.done":
            closed[p["output_index"]] = p["item"]
            if p["item"]["type"] == "function_call":
                arguments = texts[("response.function_call_arguments", p["output_index"], None)]
                assert p["item"]["arguments"] == arguments
                json.loads(arguments)
    final = next(w for w in reversed(evs) if w.type in TERMINALS).payload["response"]
    rotating = name == "rotating-ids"     # the same items under fresh ids
    for index, item in closed.items():
        ours = final["output"][index]
        if rotating:
            assert ours["id"] != item["id"]
            ours, item = {**ours, "id": None}, {**item, "id": None}
        assert ours == item
    for index, item in enumerate(final["output"]):
        for i, part in enumerate(item.get("content", [])):
            streamed = texts[(f"response.{part['type']}", index, i)]
            assert part.get("text", part.get("refusal")) == streamed
    if final["status"] == "completed":
        assert len(final["output"]) == len(closed)


def _schema_complaints(caps: list[captures.Capture]) -> set[tuple[str, str]]:
    """(event type or "Response", field path) pairs the SDK's own pydantic models reject."""
    union = typing.get_args(ResponseStreamEvent)[0]
    classes = {typing.get_args(m.model_fields["type"].annotation)[0]: m
               for m in typing.get_args(union)}
    out: set[tuple[str, str]] = set()
    for cap in caps:
        for w in events(cap):
            if w.type not in classes:   # newer than the SDK: covered by the test below
                continue
            try:
                classes[w.type].model_validate(w.payload)
            except pydantic.ValidationError as exc:
                for err in exc.errors():
                    loc = ".".join(str(x) for x in err["loc"] if not isinstance(x, int))
                    # Every lifecycle event carries the same Response object.
                    out.add(("Response" if loc.startswith("response.") else w.type, loc))
    return out


@pytest.fixture(scope="module")
def reference_streams() -> list[captures.Capture]:
    caps = [c for c in captures.reference_corpus() if c.wire == WIRE]
    if not caps:
        pytest.skip(f"reference captures not found at {captures.reference_dir()} "
                    "(set REFERENCE_CAPTURES)")
    return caps


def test_every_event_type_is_one_the_sdk_knows(built):
    union = typing.get_args(ResponseStreamEvent)[0]
    known = {typing.get_args(m.model_fields["type"].annotation)[0] for m in typing.get_args(union)}
    used = {w.type for name in OPENAI_STREAMS for w in events(built[name])}
    assert used <= known


def test_no_more_invalid_than_real_recordings(built, reference_streams):
    """What the SDK's schema rejects in ours, it also rejects in a real recording."""
    ours = _schema_complaints([built[n] for n in STREAMS])
    real = _schema_complaints(reference_streams)
    assert ours <= real, sorted(ours - real)
    assert ("error", "message") in ours, "the error event must be nested, as recorded"


def test_response_objects_carry_every_field_real_ones_do(built, reference_streams):
    def fields(caps):
        return {k for c in caps for p in of_type(c, "response.created") for k in p["response"]}
    pending = PENDING_FIELDS.get(WIRE, (set(),))[0]   # tests/pending.py says which and why
    assert fields(reference_streams) - pending <= fields([built[n] for n in STREAMS])


# -- messiness ------------------------------------------------------------------------


def test_deltas_carry_obfuscation_and_logprobs(built):
    for name in OPENAI_STREAMS:
        for p in of_type(built[name], "response.output_text.delta"):
            assert p["logprobs"] == [] and p["obfuscation"], name
        for p in of_type(built[name], "response.function_call_arguments.delta"):
            assert p["obfuscation"], name


def test_key_order_varies_like_real_streams(built):
    layouts = defaultdict(set)
    for name in OPENAI_STREAMS:
        for w in events(built[name]):
            keys = list(w.payload)
            assert keys[0] == "type"
            if keys[1:] == sorted(keys[1:]):
                layouts["sorted"].add(name)
            elif keys[1] == "sequence_number":
                layouts["classic"].add(name)
            else:
                layouts["shuffled"].add(name)
    assert layouts["sorted"] and layouts["classic"] and layouts["shuffled"]


def test_network_reads_split_events_and_characters(built):
    mid_event = mid_char = 0
    for name in STREAMS:
        cap = built[name]
        starts = {e.start for e in cap.events} | {len(cap.body)}
        for end in cap.chunk_ends[:-1]:
            mid_event += end not in starts
            mid_char += (cap.body[end] & 0xC0) == 0x80
        whole = captures.from_bytes(cap.body, sidecar={"wire": WIRE}).decode()[0]
        assert [e.data for e in cap.events] == [e.data for e in whole]
    assert mid_event >= 10 and mid_char >= 2


def test_timing_is_realistic(built):
    for name in STREAMS:
        evs = events(built[name])
        deltas = [w.t for w in evs if w.type.endswith(".delta")]
        assert evs[0].t >= 150, name
        if not deltas:          # every item whole in its events (an approval request)
            continue
        assert deltas[0] - evs[0].t >= 100, name
        gaps = [b - a for a, b in zip(deltas, deltas[1:], strict=False)]
        if len(gaps) > 10:
            assert 3 <= statistics.median(gaps) <= 45, name
    arguments = [w.t for w in events(built["function-call"])
                 if w.type == "response.function_call_arguments.delta"]
    pauses = [b - a for a, b in zip(arguments, arguments[1:], strict=False) if b - a >= 300]
    assert len(pauses) >= 3, "arguments should pause at each new key"


# -- each capture shows its thing --------------------------------------------------------


def test_the_resume_pair_is_one_stream_cut_and_resumed(built):
    cut, resumed = (built[n] for n in RESUME_PAIR)
    first, rest = events(cut), events(resumed)
    assert [d.code for d in cut.sse_diagnostics] == ["undispatched_bytes"]
    assert not resumed.sse_diagnostics
    numbers = [w.payload["sequence_number"] for w in first + rest]
    last = first[-1].payload["sequence_number"]
    assert numbers[:len(first)] == list(range(len(first)))
    # one event is lost in the cut: the resume starts right after the last whole one
    assert numbers[len(first):] == list(range(last + 1, last + 1 + len(rest)))
    assert first[-1].type == rest[0].type == "response.output_text.delta"
    assert not {w.type for w in first} & TERMINALS and rest[-1].type == "response.completed"
    request = resumed.sidecar["request"]
    assert request["starting_after"] == request["query"]["starting_after"] == last
    assert request["path"] == f"/v1/responses/{first[0].payload['response']['id']}"
    assert first[0].payload["response"]["background"] is True
    joined = "".join(w.payload["delta"] for w in first + rest
                     if w.type == "response.output_text.delta")
    assert joined == rest[-1].payload["response"]["output"][0]["content"][0]["text"]
    assert first[0].t >= 150 and rest[0].t >= 100
    assert cut.sidecar["sdk"]["text"] == "".join(
        w.payload["delta"] for w in first if w.type == "response.output_text.delta")


def test_the_429_hints_agree_with_the_message(built):
    headers = built["http-429-retry-after"].sidecar["response"]["headers"]
    assert headers["x-ratelimit-remaining-requests"] == "0"
    assert int(headers["retry-after"]) == 6 * 60
    assert headers["x-ratelimit-reset-requests"] == "6m0s"
    assert "6m0s" in json.loads(built["http-429-retry-after"].body)["error"]["message"]


def test_function_calls_are_separate_items(built):
    adds = [p for p in of_type(built["parallel-function-calls"], "response.output_item.added")]
    assert [a["item"]["type"] for a in adds] == ["function_call", "function_call"]
    assert len({a["item"]["id"] for a in adds}) == len({a["item"]["call_id"] for a in adds}) == 2
    seq = [(w.type, w.payload.get("output_index")) for w in events(built["parallel-function-calls"])]
    assert seq.index(("response.output_item.done", 0)) < seq.index(
        ("response.function_call_arguments.delta", 1))


def test_reasoning_summary_streams_before_the_answer(built):
    evs = events(built["reasoning-summary"])
    kinds = [w.type for w in evs]
    assert {p["summary_index"] for p in of_type(built["reasoning-summary"],
                                               "response.reasoning_summary_part.added")} == {0, 1}
    last_summary = max(i for i, k in enumerate(kinds) if k.startswith("response.reasoning"))
    assert last_summary < kinds.index("response.output_text.delta")
    assert evs[2].payload["item"]["encrypted_content"]


def test_refusal_has_no_output_text(built):
    cap = built["refusal"]
    assert of_type(cap, "response.content_part.added")[0]["part"] == {"type": "refusal",
                                                                       "refusal": ""}
    assert not of_type(cap, "response.output_text.delta")
    assert of_type(cap, "response.refusal.delta")


def test_incomplete_stops_mid_sentence(built):
    cap = built["incomplete"]
    final = of_type(cap, "response.incomplete")[0]["response"]
    assert final["status"] == "incomplete"
    assert final["incomplete_details"] == {"reason": "max_output_tokens"}
    assert final["usage"]["output_tokens"] == cap.request["max_output_tokens"]
    assert final["output"][0]["status"] == "incomplete"
    assert final["output"][0]["content"][0]["text"].rstrip()[-1] not in ".!?"


def test_error_is_nested_then_the_response_fails(built):
    cap = built["error-then-failed"]
    kinds = [w.type for w in events(cap)]
    assert kinds[-2:] == ["error", "response.failed"]
    assert "response.output_text.delta" in kinds[:-2]
    error = of_type(cap, "error")[0]
    assert set(error) == {"type", "sequence_number", "error"}
    assert set(error["error"]) == {"type", "code", "message", "param"}
    assert cap.sidecar["response"]["headers"]["x-request-id"] in error["error"]["message"]
    failed = of_type(cap, "response.failed")[0]["response"]
    assert failed["status"] == "failed" and failed["error"]["code"] == error["error"]["code"]
    assert failed["output"][0]["status"] == "incomplete"


def test_web_search_citation_covers_the_link(built):
    cap = built["web-search"]
    kinds = [w.type for w in events(cap)]
    assert kinds.index("response.web_search_call.completed") < kinds.index(
        "response.output_text.delta")
    note = of_type(cap, "response.output_text.annotation.added")[0]
    text = of_type(cap, "response.output_text.done")[0]["text"]
    cited = text[note["annotation"]["start_index"]:note["annotation"]["end_index"]]
    assert cited.startswith("([") and cited.endswith("))")
    assert note["annotation"]["url"] in cited
    before = kinds.index("response.output_text.annotation.added")
    streamed = "".join(p["delta"] for p in of_type(cap, "response.output_text.delta")[
        :sum(k == "response.output_text.delta" for k in kinds[:before])])
    assert len(streamed) >= note["annotation"]["end_index"], "announced after its text"


def test_http_429_is_a_json_error_before_any_event(built):
    cap = built["http-429"]
    assert cap.status == 429 and cap.events == []
    assert cap.sidecar["response"]["headers"]["content-type"].startswith("application/json")
    assert json.loads(cap.body)["error"]["code"] == "rate_limit_exceeded"


def test_structured_output_is_json_only_when_whole(built):
    cap = built["structured-output"]
    deltas = [p["delta"] for p in of_type(cap, "response.output_text.delta")]
    whole = "".join(deltas)
    schema = cap.request["text"]["format"]["schema"]
    assert set(json.loads(whole)) == set(schema["required"])
    prefix = ""
    for delta in deltas[:-1]:
        prefix += delta
        with pytest.raises(ValueError):
            json.loads(prefix)
    assert not whole.isascii(), "non-ASCII inside the JSON strings"


def test_weather_turn_matches_the_shared_story(built):
    one, two = built["weather-turn-step1"], built["weather-turn-step2"]
    assert one.sidecar["turn"] == {"name": weather.TURN_NAME, "step": 1}
    assert two.sidecar["turn"] == {"name": weather.TURN_NAME, "step": 2}
    calls = [p["item"] for p in of_type(one, "response.output_item.done")]
    assert [json.loads(c["arguments"]) for c in calls] == weather.CALLS
    assert {c["name"] for c in calls} == {"get_weather"}
    sent = {i["call_id"]: json.loads(i["output"]) for i in two.request["input"]
            if i.get("type") == "function_call_output"}
    assert sent == {c["call_id"]: r for c, r in zip(calls, weather.RESULTS, strict=True)}
    assert two.request["input"][0] == {"role": "user", "content": weather.QUESTION}
    assert of_type(two, "response.output_text.done")[0]["text"] == weather.ANSWER


# -- the official SDK -------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_sdk_does_what_the_sidecar_says(built, name):
    assert_sdk_does_what_the_sidecar_says(built[name])


@pytest.mark.parametrize("name", ["text", "incomplete", "error-then-failed"])
def test_the_sdk_outcome_does_not_depend_on_chunking(built, name):
    assert_sdk_outcome_independent_of_chunking(built[name], chunk_size=7)


def test_sdk_check_catches_a_wrong_expectation(built):
    """The sidecar check itself can fail (so the SDK test above means something)."""
    cap = built["text"]
    outcome = replay.run_sdk(cap)
    wrong = {**cap.sidecar["sdk"], "raises": "RuntimeError", "final": {"status": "failed"}}
    problems = sdk_claim_problems(wrong, outcome)
    assert len(problems) == 2

