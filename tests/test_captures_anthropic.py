"""The constructed Anthropic corpus: rebuilt byte for byte, shaped like the wire,
as messy as real recordings, and doing to the official SDK what its sidecar says."""

from __future__ import annotations

import json
import re
import statistics
from datetime import datetime
from email.utils import parsedate_to_datetime
from functools import cache
from pathlib import Path
from typing import Any

import anthropic
import pydantic
import pytest
from anthropic.types import RawMessageStreamEvent, RefusalStopDetails
from anthropic.types.beta import BetaRawMessageStreamEvent
from anthropic.types.shared.error_response import ErrorResponse

from corpus import anthropic_corpus, anthropic_turn, weather_turn
from corpus.anthropic_requests import MUSEUM_GUIDE
from corpus.anthropic_writer import AnthropicWriter, tool_json
from lesson_lib.capture import captures, replay
from lesson_lib.cli.validate import sdk_claim_problems
from lesson_lib.wires.wire_events import parse_all

WIRE = "anthropic-messages"
FOLDER = captures.CAPTURES_DIR / WIRE
NAMES = [
    "hello", "get-weather", "text-then-tool", "parallel-tools", "tool-no-params",
    "thinking-signature", "redacted-thinking", "citations", "web-search",
    "overloaded-after-text", "cut-in-tool-json", "max-tokens-in-tool-json", "refusal",
    "http-529-overloaded", "html-in-text", "write-file-tool",
    "weather-turn-step1", "weather-turn-step2", "http-429-rate-limited", "overloaded-first",
    "fallback-after-refusal", "code-execution-pause", "mcp-listing-window-full",
    "compaction-stop", "stop-sequence", "fallback-after-tool-call",
]
HTTP_ERRORS = {"http-529-overloaded", "http-429-rate-limited"}
STREAMS = [n for n in NAMES if n not in HTTP_ERRORS]
MODELS = {"claude-sonnet-4-6", "claude-opus-4-6", "claude-haiku-4-5"}
ID = "[1-9A-HJ-NP-Za-km-z]"


@cache
def cap(name: str) -> captures.Capture:
    return captures.load(FOLDER / f"{name}.sse")


@cache
def events(name: str) -> list:
    return parse_all(cap(name).events)


@cache
def sdk(name: str) -> replay.SDKOutcome:
    return replay.run_sdk(cap(name))


def deltas(name: str, index: int, kind: str | None = None) -> list[dict]:
    return [e.payload["delta"] for e in events(name)
            if e.type == "content_block_delta" and e.payload["index"] == index
            and (kind is None or e.payload["delta"]["type"] == kind)]


def starts(name: str) -> dict[int, dict]:
    return {e.payload["index"]: e.payload["content_block"] for e in events(name)
            if e.type == "content_block_start"}


def stopped(name: str) -> set[int]:
    return {e.payload["index"] for e in events(name) if e.type == "content_block_stop"}


def raw_arguments(name: str, index: int) -> str:
    return "".join(d["partial_json"] for d in deltas(name, index, "input_json_delta"))


# -- the corpus as files ---------------------------------------------------------


def test_the_corpus_has_exactly_the_named_captures():
    assert sorted(anthropic_corpus.CAPTURES) == sorted(NAMES)
    on_disk = sorted(p.name for p in FOLDER.iterdir())
    assert on_disk == sorted([f"{n}.sse" for n in NAMES] + [f"{n}.json" for n in NAMES])


def test_rebuilding_gives_the_committed_bytes(tmp_path: Path):
    written = anthropic_corpus.build(tmp_path)
    assert sorted(p.stem for p in written) == sorted(NAMES)
    for path in written:
        for suffix in (".sse", ".json"):
            fresh = path.with_suffix(suffix).read_bytes()
            committed = (FOLDER / path.name).with_suffix(suffix).read_bytes()
            assert fresh == committed, f"{path.stem}{suffix} differs: run the builder again"


def test_building_twice_in_one_process_is_identical():
    first = anthropic_corpus.build_one("text-then-tool")
    assert anthropic_corpus.build_one("text-then-tool") == first


@pytest.mark.parametrize("name", NAMES)
def test_sidecar(name: str):
    side = cap(name).sidecar
    assert side["wire"] == WIRE and cap(name).wire == WIRE
    assert side["demonstrates"].strip() and "\n" not in side["demonstrates"]
    req = side["request"]
    assert req["model"] in MODELS
    assert req["max_tokens"] > 0 and req["messages"][0]["role"] == "user"
    assert req["parameters"]["stream"] is True
    for tool in req.get("tools", []):
        assert tool["name"]
        if "type" not in tool:   # a client tool: a full JSON schema
            assert tool["input_schema"]["type"] == "object"
            assert isinstance(tool["input_schema"]["properties"], dict)
    headers = side["response"]["headers"]
    assert re.fullmatch(f"req_011C{ID}{{20}}", headers["request-id"])
    assert not {"authorization", "x-api-key", "set-cookie", "cookie"} & {h.lower()
                                                                        for h in headers}
    assert side["provenance"]["kind"] == "constructed"
    assert side["provenance"]["timing"] == "synthetic"
    assert side["provenance"]["based_on"].strip()
    ends, times = side["chunks"]["ends"], side["chunks"]["t_ms"]
    assert len(ends) == len(times) and ends[-1] == len(cap(name).body)
    assert all(a < b for a, b in zip(ends, ends[1:], strict=False))
    assert all(a <= b for a, b in zip(times, times[1:], strict=False))
    assert side["sdk"]["helper"] == "messages.stream + get_final_message()"
    assert side["sdk"]["note"].strip()


# -- shaped like the wire ------------------------------------------------------------


@pytest.mark.parametrize("name", STREAMS)
def test_every_payload_is_a_known_event_with_only_known_fields(name: str):
    # A request that names betas is read by the beta types (fallback, MCP, compaction).
    beta = "betas" in cap(name).request.get("parameters", {})
    adapter = pydantic.TypeAdapter(BetaRawMessageStreamEvent if beta else RawMessageStreamEvent)
    for e in events(name):
        assert e.parse_error is None, e.parse_error
        assert e.sse.event == e.type   # the SSE name repeats the payload type
        if e.type == "ping":
            assert e.sse.data == '{"type": "ping"}'
            continue
        if e.type == "error":
            parsed = ErrorResponse.model_validate(e.payload)
        else:
            parsed = adapter.validate_python(e.payload)
        assert not _unknown_fields(parsed), (e.index, _unknown_fields(parsed))


def _unknown_fields(model: Any, path: str = "") -> list[str]:
    if isinstance(model, pydantic.BaseModel):
        out = [f"{path}.{k}" for k in model.model_extra or {}]
        for key in type(model).model_fields:
            out += _unknown_fields(getattr(model, key), f"{path}.{key}")
        return out
    if isinstance(model, list):
        return [x for item in model for x in _unknown_fields(item, path + "[]")]
    return []


TERMINAL = {"overloaded-after-text": "error", "overloaded-first": "error",
            "cut-in-tool-json": None}
NEVER_STOPPED = {"overloaded-after-text": {0}, "cut-in-tool-json": {1},
                 "max-tokens-in-tool-json": {1}}


@pytest.mark.parametrize("name", STREAMS)
def test_block_addressing_and_terminal(name: str):
    evs = events(name)
    assert evs[0].type == "message_start"
    message = evs[0].payload["message"]
    assert message["content"] == [] and message["stop_reason"] is None
    assert re.fullmatch(f"msg_0?1{ID}{{22,30}}", message["id"])
    opened = [e.payload["index"] for e in evs if e.type == "content_block_start"]
    assert opened == list(range(len(opened)))
    seen: set[int] = set()
    for e in evs:
        if e.type == "content_block_start":
            seen.add(e.payload["index"])
        elif e.type in ("content_block_delta", "content_block_stop"):
            assert e.payload["index"] in seen, f"event {e.index} addresses an unopened slot"
    assert set(opened) - stopped(name) == NEVER_STOPPED.get(name, set())
    expected = TERMINAL.get(name, "message_stop")
    if expected is None:
        assert evs[-1].type not in ("message_stop", "error")
    else:
        assert evs[-1].type == expected
    assert [d.code for d in cap(name).sse_diagnostics] == (
        ["undispatched_bytes"] if name == "cut-in-tool-json" else [])


@pytest.mark.parametrize("name", STREAMS)
def test_tool_arguments_that_finished_are_json(name: str):
    for index, block in starts(name).items():
        if block["type"] not in ("tool_use", "server_tool_use") or index not in stopped(name):
            continue
        raw = raw_arguments(name, index)
        value = json.loads(raw) if raw else {}
        assert isinstance(value, dict)
        if raw:
            assert raw == tool_json(value)[0], "not in the API's own JSON layout"


@pytest.mark.parametrize("name", STREAMS)
def test_decoding_does_not_depend_on_the_chunking(name: str):
    recorded = [(e.event, e.data, e.start, e.end) for e in cap(name).events]
    whole, _ = cap(name).decode(chunk_size=len(cap(name).body))
    tiny, _ = cap(name).decode(chunk_size=3)
    assert [(e.event, e.data, e.start, e.end) for e in whole] == recorded
    assert [(e.event, e.data, e.start, e.end) for e in tiny] == recorded


# -- as messy as the real recordings ---------------------------------------------------


def test_messiness_across_the_corpus():
    bodies = {n: cap(n).body for n in STREAMS}
    padded = [n for n, b in bodies.items() if re.search(rb"  +}\n\n", b)]
    assert len(padded) >= len(STREAMS) // 2
    pings = {n: b.count(b"event: ping\n") for n, b in bodies.items()}
    assert 0 in pings.values() and max(pings.values()) >= 2
    opening = {n: events(n)[0].payload["message"]["usage"]["output_tokens"] for n in STREAMS}
    assert len(set(opening.values())) >= 3
    layouts = {next(iter(events(n)[0].payload["message"])) for n in STREAMS}
    assert layouts == {"id", "model"}   # both key orders seen in recordings
    inside_char = [n for n in STREAMS
                   if any(0x80 <= cap(n).body[end] < 0xC0 for end in cap(n).chunk_ends[:-1])]
    assert len(inside_char) >= 4, "network reads should sometimes split a UTF-8 character"
    non_ascii = [n for n in STREAMS if any(ord(c) > 0x7F for c in cap(n).text)]
    assert len(non_ascii) >= len(STREAMS) // 2


@pytest.mark.parametrize("name", [n for n in STREAMS if n != "overloaded-first"])
def test_a_slow_first_token_then_a_steady_stream(name: str):
    evs = events(name)
    first = next(e for e in evs if e.type == "content_block_delta")
    assert evs[0].t >= 200
    assert first.t - evs[0].t >= 200
    text_times = [e.t for e in evs if e.type == "content_block_delta"
                  and e.payload["delta"]["type"] == "text_delta"]
    if len(text_times) >= 6:
        gaps = [b - a for a, b in zip(text_times[1:], text_times[2:], strict=False)]
        assert 8 <= statistics.median(gaps) <= 45


def test_tool_arguments_pause_at_key_boundaries():
    evs = [e for e in events("text-then-tool") if e.type == "content_block_delta"
           and e.payload["index"] == 1]
    long_gaps = [(b.t - a.t, b.payload["delta"]["partial_json"])
                 for a, b in zip(evs, evs[1:], strict=False) if b.t - a.t >= 300]
    assert len(long_gaps) >= 5
    assert all(gap <= 1600 and fragment[:1] in "{," for gap, fragment in long_gaps)


# -- what each capture shows ----------------------------------------------------------


def test_hello_follows_the_quoted_documentation():
    evs = events("hello")
    assert [e.type for e in evs[:3]] == ["message_start", "content_block_start", "ping"]
    assert deltas("hello", 0)[0] == {"type": "text_delta", "text": "Hello"}
    assert evs[0].payload["message"]["usage"]["input_tokens"] == 25
    assert evs[0].payload["message"]["id"].startswith("msg_1nZ")
    assert evs[-2].payload["usage"]["output_tokens"] == 15


def test_get_weather_keeps_the_quoted_fragments():
    block = starts("get-weather")[1]
    assert block["type"] == "tool_use" and block["id"].startswith("toolu_01T1")
    fragments = [d["partial_json"] for d in deltas("get-weather", 1)]
    assert fragments[0] == '{"location":' and fragments[-1] == ' CA"}'
    assert starts("get-weather")[0]["type"] == "text"


def test_tool_without_parameters_sends_one_empty_fragment():
    assert [d["partial_json"] for d in deltas("tool-no-params", 0)] == [""]
    assert starts("tool-no-params")[0]["input"] == {}


def test_parallel_tools_each_fill_their_own_slot():
    first, second = starts("parallel-tools")[1], starts("parallel-tools")[2]
    assert first["name"] == second["name"] == "get_weather" and first["id"] != second["id"]
    assert json.loads(raw_arguments("parallel-tools", 1)) == {"location": "Lyon, France"}
    assert json.loads(raw_arguments("parallel-tools", 2)) == {"location": "Montréal, Canada"}


def test_thinking_ends_with_an_empty_delta_then_the_signature():
    kinds = [(d["type"], d.get("thinking")) for d in deltas("thinking-signature", 0)]
    assert kinds[-2:] == [("thinking_delta", ""), ("signature_delta", None)]
    assert all(kind == "thinking_delta" for kind, _ in kinds[:-1])


def test_redacted_thinking_arrives_whole():
    assert starts("redacted-thinking")[0]["type"] == "redacted_thinking"
    assert starts("redacted-thinking")[0]["data"]
    assert deltas("redacted-thinking", 0) == []


def _document(name: str) -> str:
    content = cap(name).request["messages"][0]["content"]
    return next(part["source"]["data"] for part in content if part["type"] == "document")


def test_citations_point_into_the_request_document():
    document = _document("citations")
    assert document == MUSEUM_GUIDE
    cited = [i for i, b in starts("citations").items() if "citations" in b]
    assert cited and all(starts("citations")[i]["citations"] == [] for i in cited)
    for index in cited:
        kinds = [d["type"] for d in deltas("citations", index)]
        assert kinds[0] == "citations_delta" and "text_delta" in kinds
        assert kinds.index("text_delta") > max(i for i, k in enumerate(kinds)
                                                if k == "citations_delta")
        for d in deltas("citations", index, "citations_delta"):
            c = d["citation"]
            assert document[c["start_char_index"]:c["end_char_index"]] == c["cited_text"]


def test_web_search_result_arrives_whole_and_citations_name_its_pages():
    blocks = starts("web-search")
    call = next(b for b in blocks.values() if b["type"] == "server_tool_use")
    result_index, result = next((i, b) for i, b in blocks.items()
                                if b["type"] == "web_search_tool_result")
    assert result["tool_use_id"] == call["id"] and deltas("web-search", result_index) == []
    urls = {r["url"] for r in result["content"]}
    cited = [d["citation"]["url"] for i in blocks for d in deltas("web-search", i,
                                                                   "citations_delta")]
    assert cited and set(cited) <= urls
    assert events("web-search")[-2].payload["usage"]["server_tool_use"]["web_search_requests"] == 1


def test_html_in_text_is_split_across_deltas():
    pieces = [d["text"] for d in deltas("html-in-text", 0)]
    text = "".join(pieces)
    for tag in ("<script>alert(1)</script>", "<img src=x onerror=alert(2)>"):
        assert tag in text
        assert not any(tag in piece for piece in pieces)


def test_write_file_streams_a_large_string_in_small_fragments():
    fragments = [d["partial_json"] for d in deltas("write-file-tool", 1)]
    value = json.loads("".join(fragments))
    assert 22_000 <= len(value["content"].encode()) <= 26_000
    sizes = [len(f.encode()) for f in fragments if f]
    assert len(fragments) > 1000 and 17 <= statistics.mean(sizes) <= 23


def test_cut_ends_inside_an_event_inside_a_string():
    body = cap("cut-in-tool-json").body
    assert not body.endswith(b"\n\n")
    assert stopped("cut-in-tool-json") == {0}
    assert not any(e.type in ("message_delta", "message_stop") for e in events("cut-in-tool-json"))
    raw = raw_arguments("cut-in-tool-json", 1)
    assert raw.startswith('{"title": "') and raw.count('"') == 3   # inside the first value


def test_max_tokens_stops_inside_an_array_string():
    raw = raw_arguments("max-tokens-in-tool-json", 1)
    assert '"items": [' in raw and raw.count('"') % 2 == 1   # ends inside a string
    delta = events("max-tokens-in-tool-json")[-2].payload
    assert delta["delta"]["stop_reason"] == "max_tokens"
    assert delta["usage"]["output_tokens"] == cap("max-tokens-in-tool-json").request["max_tokens"]


def test_refusal_carries_stop_details_of_the_sdk_shape():
    delta = events("refusal")[-2].payload["delta"]
    assert delta["stop_reason"] == "refusal"
    assert RefusalStopDetails.model_validate(delta["stop_details"]).category == "cyber"


def test_overloaded_error_names_the_request():
    last = events("overloaded-after-text")[-1].payload
    assert last["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert last["request_id"] == cap("overloaded-after-text").sidecar["response"]["headers"][
        "request-id"]


def test_overloaded_first_fails_before_any_content():
    evs = events("overloaded-first")
    assert [e.type for e in evs] == ["message_start", "ping", "error"]
    assert evs[-1].payload["error"]["type"] == "overloaded_error"


def test_http_429_carries_the_rate_limit_hints():
    c = cap("http-429-rate-limited")
    assert c.status == 429 and c.events == []
    assert ErrorResponse.model_validate(json.loads(c.body)).error.type == "rate_limit_error"
    headers = c.sidecar["response"]["headers"]
    date = parsedate_to_datetime(headers["date"])
    resets = {k: datetime.fromisoformat(v) for k, v in headers.items() if k.endswith("-reset")}
    assert len(resets) == 4 and all(r > date for r in resets.values())
    limiting = [k for k in resets if headers[k.replace("-reset", "-remaining")] == "0"]
    assert limiting == ["anthropic-ratelimit-input-tokens-reset"]
    assert (resets[limiting[0]] - date).total_seconds() == int(headers["retry-after"])


def test_http_529_is_a_json_error_document():
    c = cap("http-529-overloaded")
    assert c.status == 529 and c.events == []
    document = ErrorResponse.model_validate(json.loads(c.body))
    assert document.error.type == "overloaded_error"
    assert document.request_id == c.sidecar["response"]["headers"]["request-id"]


def test_weather_turn_step2_sends_back_exactly_what_step1_streamed():
    step1, step2 = cap("weather-turn-step1"), cap("weather-turn-step2")
    assert step1.sidecar["turn"] == {"name": "weather-two-cities", "step": 1}
    assert step2.sidecar["turn"] == {"name": "weather-two-cities", "step": 2}
    streamed = sdk("weather-turn-step1").final.model_dump(exclude_none=True)["content"]
    user, assistant, results = step2.request["messages"]
    assert user == step1.request["messages"][0]
    sent = [{k: v for k, v in block.items() if k != "caller"} for block in streamed]
    assert assistant == {"role": "assistant", "content": sent}
    calls = [b for b in streamed if b["type"] == "tool_use"]
    assert [r["tool_use_id"] for r in results["content"]] == [c["id"] for c in calls]
    expected = zip(calls, results["content"], weather_turn.CALLS, weather_turn.RESULTS,
                   strict=True)
    for call, result, arguments, outcome in expected:
        assert call["input"] == arguments
        assert json.loads(result["content"]) == outcome
    assert [r["temperature"] for r in weather_turn.RESULTS] == [18, 24]
    assert step1.request["tools"][0]["input_schema"] == weather_turn.TOOL_PARAMETERS
    assert step1.request["tools"] == step2.request["tools"]
    dates = [parsedate_to_datetime(c.sidecar["response"]["headers"]["date"]) for c in (step1, step2)]
    assert 0 < (dates[1] - dates[0]).total_seconds() < 60
    assert list(anthropic_turn.turn_tool_ids()) == [c["id"] for c in calls]


# -- what the official SDK does with each capture ------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_sdk_does_what_the_sidecar_says(name: str):
    claim = cap(name).sidecar["sdk"]
    outcome = sdk(name)
    assert sdk_claim_problems(claim, outcome) == []
    if claim["raises"] is not None:
        assert outcome.final is None and "final" not in claim


@pytest.mark.parametrize("name", ["get-weather", "overloaded-after-text", "cut-in-tool-json",
                                  "max-tokens-in-tool-json", "citations"])
def test_sdk_outcome_does_not_depend_on_the_chunking(name: str):
    again = replay.run_sdk(cap(name), chunk_size=5)
    assert again.raised == sdk(name).raised and again.text == sdk(name).text
    if again.final is not None:
        assert again.final.model_dump() == sdk(name).final.model_dump()


def test_sdk_tool_inputs_match_the_streamed_arguments():
    for name in STREAMS:
        final = sdk(name).final
        for index, block in enumerate(final.content if final else []):
            if block.type in ("tool_use", "server_tool_use") and index in stopped(name):
                raw = raw_arguments(name, index)
                assert block.input == (json.loads(raw) if raw else {}), (name, index)


def test_sdk_cut_stream_looks_finished():
    outcome = sdk("cut-in-tool-json")
    assert outcome.error is None
    assert outcome.final.stop_reason is None and outcome.final.content[1].input == {}


def test_sdk_in_band_overload_reports_status_200():
    error = sdk("overloaded-after-text").error
    assert type(error) is anthropic.APIStatusError and error.status_code == 200


def test_sdk_http_529_raises_the_overloaded_class():
    error = sdk("http-529-overloaded").error
    assert isinstance(error, anthropic.OverloadedError) and error.status_code == 529


def test_sdk_max_tokens_drops_the_unfinished_item():
    outcome = sdk("max-tokens-in-tool-json")
    items = outcome.final.content[1].input["items"]
    raw = raw_arguments("max-tokens-in-tool-json", 1)
    unfinished = raw[raw.rindex('"') + 1:]
    assert unfinished and all(not item.startswith(unfinished) for item in items)
    assert outcome.final.stop_reason == "max_tokens"


# -- the writer's pieces -----------------------------------------------------------------


def test_tool_json_members_concatenate_to_the_text():
    value = {"a": 1, "b": "é\n", "c": [1, {"d": None}]}
    text, members = tool_json(value)
    assert "".join(members) == text and json.loads(text) == value
    assert text.startswith('{"a": 1, "b": "é')
    assert tool_json({}) == ("{}", ["{}"])


def test_argument_fragments_rebuild_the_json_and_pause_only_between_members():
    writer = AnthropicWriter(7)
    writer.output_started = True
    value = {"city": "Zürich", "days": 3, "tags": ["a", "b"]}
    fragments = writer.argument_fragments(value)
    assert fragments[0][0] == ""
    assert "".join(f for f, _ in fragments) == tool_json(value)[0]
    long = [f for f, wait in fragments if wait >= 300]
    assert len(long) == 3 and all(f[:1] in "{," for f in long)


def test_split_text_keeps_modifiers_with_their_character():
    writer = AnthropicWriter(3)
    text = "ok 🛡️ done ☔ e\u0301t\u00e9 👩\u200d💻" * 20
    for _ in range(20):
        pieces = writer.split_text(text, (1, 3))
        assert "".join(pieces) == text
        assert not any(p[0] in "\ufe0f\u200d\u0301" for p in pieces)


def test_message_start_uses_only_fields_real_streams_use():
    reference = [c for c in captures.reference_corpus() if c.wire == WIRE]
    if not reference:
        pytest.skip(f"reference captures not found at {captures.reference_dir()}")
    real_keys = set()
    for c in reference:
        for e in parse_all(c.events):
            if e.type == "message_start":
                real_keys |= set(e.payload["message"]) | set(e.payload["message"]["usage"])
    ours = set()
    for name in STREAMS:
        message = events(name)[0].payload["message"]
        ours |= set(message) | set(message["usage"])
    assert ours <= real_keys, ours - real_keys
    ping = {e.data for c in reference for e in c.events if e.event == "ping"}
    ours = {e.data for n in STREAMS for e in cap(n).events if e.event == "ping"}
    assert ours == {'{"type": "ping"}'} and ours <= ping
