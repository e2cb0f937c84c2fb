"""The constructed OpenAI Chat Completions corpus: deterministic, consistent, messy like reality.

The builder is run into a temporary folder; the committed captures must be
byte-identical to it. Every chunk must be one the SDK's own model accepts,
tool calls must be addressed the Chat way (the first fragment names the
call), and the official SDK, replayed offline, must do what each sidecar
says, including the helper's premature ``arguments.done`` on interleaved
calls.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from typing import Any

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
from openai.types.chat import ChatCompletionChunk

from corpus import chat_corpus
from corpus import weather_turn as weather
from lesson_lib.capture import captures, replay
from lesson_lib.wires.wire_events import DONE

WIRE = "openai-chat"
NAMES = {"text-usage", "tool-call", "parallel-tools-sequential", "parallel-tools-interleaved",
         "n2-choices", "refusal", "finish-length", "content-filter", "cut-in-arguments",
         "error-mid-stream", "index-reused-new-id", "reasoning-content", "weather-turn-step1",
         "weather-turn-step2", "structured-output", "thinking-parts-no-done",
         "length-then-error-in-chunk", "audio-output", "moderation-chunk",
         "legacy-function-call", "azure-filter-results"}
UNFINISHED = {"cut-in-arguments", "error-mid-stream"}
NO_DONE = {"thinking-parts-no-done"}    # ends properly without [DONE] (a warning)
COMPATIBLE = {"parallel-tools-interleaved", "index-reused-new-id", "reasoning-content",
              "thinking-parts-no-done", "length-then-error-in-chunk", "azure-filter-results"}
OPENAI_DIALECT = NAMES - COMPATIBLE


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, captures.Capture]:
    return build_corpus(chat_corpus, tmp_path_factory.mktemp("built"), WIRE)


def chunks(cap: captures.Capture) -> list[dict[str, Any]]:
    return [w.payload for w in events(cap) if w.type == "chat.completion.chunk"]


def deltas(cap: captures.Capture, index: int = 0) -> list[dict[str, Any]]:
    return [c["delta"] for p in chunks(cap) for c in p["choices"] if c["index"] == index]


def fragments(cap: captures.Capture) -> list[dict[str, Any]]:
    """Every tool-call fragment of choice 0, in order."""
    return [call for d in deltas(cap) for call in d.get("tool_calls") or []]


def arguments_by_slot(cap: captures.Capture) -> dict[int, str]:
    out: dict[int, str] = defaultdict(str)
    for call in fragments(cap):
        out[call["index"]] += call["function"].get("arguments") or ""
    return dict(out)


def finish_reasons(cap: captures.Capture) -> dict[int, str]:
    return {c["index"]: c["finish_reason"] for p in chunks(cap) for c in p["choices"]
            if c["finish_reason"]}


# -- the corpus as files ----------------------------------------------------------


class TestCorpusAsFiles(CorpusAsFiles):
    corpus, names, wire = chat_corpus, NAMES, WIRE


@pytest.mark.parametrize("name", sorted(NAMES))
def test_sidecar_says_what_produced_the_capture(built, name):
    cap = built[name]
    side = cap.sidecar
    assert_sidecar_request(cap, WIRE)
    assert side["response"]["status"] == 200
    headers = side["response"]["headers"]
    assert headers["content-type"].startswith("text/event-stream")
    assert not any("key" in h.lower() or "auth" in h.lower() for h in headers)
    if name in OPENAI_DIALECT:
        assert headers["x-request-id"].startswith("req_")
        assert side["request"]["stream_options"] == {"include_usage": True}
    assert_sidecar_provenance(cap, "chat.completions.stream + get_final_completion()")


# -- the Chat rules ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NAMES))
def test_chunks_are_ones_the_sdk_accepts(built, name):
    cap = built[name]
    evs = events(cap)
    assert all(w.sse.event is None for w in evs), "Chat has no event names"
    for p in chunks(cap):
        if any(isinstance(c["delta"].get("content"), list) for c in p["choices"]):
            # Typed content parts: the SDK's schema wants a string, as for the real Mistral
            # recording; the rest of such a chunk is checked with the content left out.
            p = {**p, "choices": [{**c, "delta": {k: v for k, v in c["delta"].items()
                                                  if k != "content"}} for c in p["choices"]]}
        ChatCompletionChunk.model_validate(p)
    envelope = {(p["id"], p["created"], p["model"], p.get("system_fingerprint"))
                for p in chunks(cap)}
    assert len(envelope) == 1
    if name in UNFINISHED | NO_DONE:
        assert evs[-1].type != DONE
    else:
        assert evs[-1].type == DONE and not cap.sse_diagnostics
        assert all(w.parse_error is None for w in evs)


@pytest.mark.parametrize("name", sorted(NAMES - UNFINISHED - {"index-reused-new-id"}))
def test_every_finished_call_is_json_and_named_once(built, name):
    cap = built[name]
    seen: dict[int, dict] = {}
    for call in fragments(cap):
        if call["index"] not in seen:
            assert set(call) == {"index", "id", "type", "function"}
            assert call["function"]["arguments"] == "" and call["function"]["name"]
            seen[call["index"]] = call
        else:
            assert set(call) == {"index", "function"} and set(call["function"]) == {"arguments"}
    for raw in arguments_by_slot(cap).values():
        json.loads(raw)
    assert set(finish_reasons(cap).values()) <= {"stop", "tool_calls", "length",
                                                 "content_filter", "function_call"}


def test_usage_rides_on_a_last_chunk_without_choices(built):
    for name in OPENAI_DIALECT - UNFINISHED:
        cs = chunks(built[name])
        assert cs[-1]["choices"] == [], name
        usage = cs[-1]["usage"]
        assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
        assert all(c["usage"] is None for c in cs[:-1]), name


# -- messiness ------------------------------------------------------------------------------


def test_openai_chunks_carry_the_newer_envelope(built):
    for name in OPENAI_DIALECT:
        for p in chunks(built[name]):
            assert p["service_tier"] == "default" and p["obfuscation"], name
            assert p["system_fingerprint"].startswith("fp_"), name


def test_chunks_carry_every_field_real_ones_do(built):
    real = [c for c in captures.reference_corpus() if c.wire == WIRE]
    if not real:
        pytest.skip(f"reference captures not found at {captures.reference_dir()}")
    # Compatible servers' fields (p, provider, an error in a chunk) in our captures of
    # those servers' styles.
    keys = {k for c in real for p in chunks(c) for k in p}
    ours = {k for cap in built.values() for p in chunks(cap) for k in p}
    assert keys <= ours


def test_network_reads_split_events_and_characters(built):
    mid_event = mid_char = 0
    for cap in built.values():
        starts = {e.start for e in cap.events} | {len(cap.body)}
        for end in cap.chunk_ends[:-1]:
            mid_event += end not in starts
            mid_char += (cap.body[end] & 0xC0) == 0x80
        whole = captures.from_bytes(cap.body, sidecar={"wire": WIRE}).decode()[0]
        assert [e.data for e in cap.events] == [e.data for e in whole]
    assert mid_event >= 10 and mid_char >= 2


def test_timing_is_realistic(built):
    for name, cap in built.items():
        evs = events(cap)
        assert evs[0].t >= 200, name
        times = [w.t for w in evs]
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        if len(gaps) > 10:
            assert 3 <= statistics.median(gaps) <= 45, name
    args = [w.t for w in events(built["tool-call"])
            if (w.payload or {}).get("choices") and w.payload["choices"][0]["delta"].get(
                "tool_calls")]
    pauses = [b - a for a, b in zip(args, args[1:], strict=False) if b - a >= 300]
    assert len(pauses) >= 3, "arguments should pause at each new key"


# -- each capture shows its thing ---------------------------------------------------------


def test_sequential_calls_do_not_overlap(built):
    slots = [call["index"] for call in fragments(built["parallel-tools-sequential"])]
    assert slots == sorted(slots) and set(slots) == {0, 1}


def test_interleaved_calls_alternate(built):
    slots = [call["index"] for call in fragments(built["parallel-tools-interleaved"])]
    switches = sum(a != b for a, b in zip(slots, slots[1:], strict=False))
    assert set(slots) == {0, 1} and switches >= 6
    first_of_1 = slots.index(1)
    assert 0 in slots[first_of_1:], "call 0 keeps streaming after call 1 starts"


def test_the_helper_finishes_interleaved_calls_too_early(built):
    """The SDK's done event for a call comes before the call's last fragment."""
    cap = built["parallel-tools-interleaved"]
    final = arguments_by_slot(cap)
    helper = [e for e in replay.run_sdk(cap).events if e.type.startswith("tool_calls.")]
    dones = [(i, e) for i, e in enumerate(helper) if e.type.endswith(".done")]
    assert [e.index for _, e in dones] == [0, 1], "one done per call, none at the finish"
    for position, done in dones:
        assert done.arguments != final[done.index]
        assert final[done.index].startswith(done.arguments)
        with pytest.raises(ValueError):
            json.loads(done.arguments)
        later = [e for e in helper[position + 1:] if e.index == done.index]
        assert later and all(e.type.endswith(".delta") for e in later)
        assert later[-1].arguments == final[done.index]
    milestones = []
    for position, done in dones:
        after = next(e for e in helper[position + 1:] if e.index == done.index)
        milestones += [{"type": e.type, "index": e.index, "arguments": e.arguments}
                       for e in (done, after)]
    assert milestones == cap.sidecar["sdk"]["events"]


def test_two_choices_interleave_irregularly(built):
    cap = built["n2-choices"]
    order = [c["index"] for p in chunks(cap) for c in p["choices"] if c["delta"].get("content")]
    runs = [a != b for a, b in zip(order, order[1:], strict=False)]
    assert set(order) == {0, 1} and sum(runs) >= 4
    assert order != [i % 2 for i in range(len(order))], "not a strict alternation"
    assert finish_reasons(cap) == {0: "stop", 1: "stop"}
    assert cap.request["n"] == 2


def test_refusal_opens_with_null_content(built):
    first = deltas(built["refusal"])[0]
    assert first["content"] is None and first["refusal"] == ""
    assert all("content" not in d for d in deltas(built["refusal"])[1:])


def test_length_and_filter_finishes(built):
    length = built["finish-length"]
    assert finish_reasons(length) == {0: "length"}
    assert (chunks(length)[-1]["usage"]["completion_tokens"]
            == length.request["max_completion_tokens"])
    text = "".join(d.get("content") or "" for d in deltas(length))
    assert text.rstrip()[-1] not in ".!?"
    assert finish_reasons(built["content-filter"]) == {0: "content_filter"}


def test_cut_inside_arguments(built):
    cap = built["cut-in-arguments"]
    assert [d.code for d in cap.sse_diagnostics] == ["undispatched_bytes"]
    assert not finish_reasons(cap) and DONE not in {w.type for w in events(cap)}
    assert not cap.body.endswith(b"\n\n"), "the last event is unfinished"
    with pytest.raises(ValueError):
        json.loads(arguments_by_slot(cap)[0])


def test_error_payload_after_content(built):
    cap = built["error-mid-stream"]
    evs = events(cap)
    assert evs[-1].type == "error" and set(evs[-1].payload) == {"error"}
    assert {"message", "type", "param", "code"} == set(evs[-1].payload["error"])
    assert any(d.get("content") for d in deltas(cap))
    assert not cap.sse_diagnostics


def test_index_zero_reused_for_a_new_call(built):
    calls = fragments(built["index-reused-new-id"])
    assert [c["index"] for c in calls] == [0, 0]
    assert len({c["id"] for c in calls}) == len({c["function"]["name"] for c in calls}) == 2
    for call in calls:
        json.loads(call["function"]["arguments"])
    with pytest.raises(ValueError):
        json.loads(arguments_by_slot(built["index-reused-new-id"])[0])


def test_reasoning_content_comes_before_content(built):
    cap = built["reasoning-content"]
    ds = deltas(cap)
    reasoning = [i for i, d in enumerate(ds) if d.get("reasoning_content")]
    content = [i for i, d in enumerate(ds) if d.get("content")]
    assert reasoning and content and max(reasoning) < min(content)
    last = chunks(cap)[-1]
    assert last["choices"][0]["finish_reason"] == "stop" and last["usage"]["completion_tokens"]
    assert b": keep-alive\n\n" in cap.body


def test_weather_turn_matches_the_shared_story(built):
    one, two = built["weather-turn-step1"], built["weather-turn-step2"]
    assert one.sidecar["turn"] == {"name": weather.TURN_NAME, "step": 1}
    assert two.sidecar["turn"] == {"name": weather.TURN_NAME, "step": 2}
    assert one.request["messages"] == [{"role": "user", "content": weather.QUESTION}]
    args = arguments_by_slot(one)
    assert [json.loads(args[i]) for i in (0, 1)] == weather.CALLS
    assert finish_reasons(one) == {0: "tool_calls"}
    ids = [c["id"] for c in fragments(one) if "id" in c]
    sent = {m["tool_call_id"]: json.loads(m["content"]) for m in two.request["messages"]
            if m["role"] == "tool"}
    assert sent == dict(zip(ids, weather.RESULTS, strict=True))
    assert "".join(d.get("content") or "" for d in deltas(two)) == weather.ANSWER


# -- the official SDK -----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_sdk_does_what_the_sidecar_says(built, name):
    assert_sdk_does_what_the_sidecar_says(built[name])


@pytest.mark.parametrize("name", ["text-usage", "finish-length", "cut-in-arguments"])
def test_the_sdk_outcome_does_not_depend_on_chunking(built, name):
    assert_sdk_outcome_independent_of_chunking(built[name], chunk_size=5)


def test_the_chat_helper_crashes_on_interleaved_calls_with_strict_tools():
    """With strict tools the helper parses the arguments at its premature `done`:
    on interleaved parallel calls that is unfinished JSON, and the stream raises."""
    cap = captures.load("openai-chat/parallel-tools-interleaved")
    tools = replay.strict_tools(cap)
    assert tools and all(t["function"]["strict"] for t in tools)
    client = replay.openai_client(cap)
    with pytest.raises(json.JSONDecodeError):
        with client.chat.completions.stream(tools=tools, **replay.request_kwargs(cap)) as s:
            for _ in s:
                pass


def test_strict_tools_are_fine_when_calls_arrive_one_after_another():
    cap = captures.load("openai-chat/parallel-tools-sequential")
    client = replay.openai_client(cap)
    with client.chat.completions.stream(tools=replay.strict_tools(cap),
                                        **replay.request_kwargs(cap)) as s:
        final = s.get_final_completion()
    calls = final.choices[0].message.tool_calls
    assert len(calls) == 2 and all(c.function.parsed_arguments for c in calls)
