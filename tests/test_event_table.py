"""The raw event table: one row per event, the same columns on every wire."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from pending import reason

from lesson_lib.capture.captures import corpus, from_bytes, load, reference_corpus
from lesson_lib.views.event_table import (
    COLUMNS,
    INT_COLUMNS,
    TEXT_DELTAS,
    Silence,
    block_address,
    event_kind,
    event_table,
    final_output_tokens,
    gaps,
    kinds,
    longest_silence,
    output_tokens_per_second,
    preview_text,
    time_to_first_token,
)

REFERENCE = reference_corpus()
needs_reference = pytest.mark.skipif(not REFERENCE, reason="reference captures not present "
                                     "(set REFERENCE_CAPTURES to the shared folder)")


def reference(name: str):
    for cap in REFERENCE:
        if cap.name == name:
            return cap
    pytest.skip(f"reference capture {name} not present")


def stream(wire: str, events: list[tuple[float | None, str | None, object]]):
    """An in-memory capture: (arrival ms, SSE event name, payload or raw data string)."""
    body, ends, times = b"", [], []
    for t, name, payload in events:
        data = payload if isinstance(payload, str) else json.dumps(payload)
        block = (f"event: {name}\n" if name else "") + f"data: {data}\n\n"
        body += block.encode()
        ends.append(len(body))
        times.append(t)
    sidecar = {"wire": wire}
    if any(t is not None for t in times):
        sidecar["chunks"] = {"ends": ends, "t_ms": times}
    return from_bytes(body, name="test", sidecar=sidecar)


def anthropic_delta(index: int, kind: str, **fields):
    return {"type": "content_block_delta", "index": index, "delta": {"type": kind, **fields}}


# -- shape, on every capture we have ------------------------------------------------


def all_captures():
    return [c for c in corpus() + REFERENCE]


@pytest.mark.parametrize("capture", all_captures(), ids=lambda c: c.key)
def test_one_row_per_event_with_every_column(capture):
    table = event_table(capture)
    assert tuple(table.columns) == COLUMNS
    assert len(table) == len(capture.events)
    assert table["seq"].tolist() == list(range(len(table)))
    assert table["start"].tolist() == [e.start for e in capture.events]
    assert table["end"].tolist() == [e.end for e in capture.events]
    for column in INT_COLUMNS:
        assert str(table[column].dtype) == "Int64", column
    assert table["unknown"].dtype == bool and table["error"].dtype == bool
    assert table["preview"].dropna().map(len).le(40).all()


def test_the_project_corpus_and_the_reference_are_both_covered():
    if not REFERENCE:
        pytest.skip("reference captures not present")
    wires = {c.wire for c in REFERENCE if reason(c) is None}
    assert wires == {"anthropic-messages", "openai-responses", "openai-chat", "google-gemini",
                     "aws-bedrock-converse", "google-gemini-interactions"}


def test_a_failed_request_gives_an_empty_table_with_the_columns():
    cap = from_bytes(b'{"type":"error","error":{"type":"overloaded_error"}}',
                     sidecar={"wire": "anthropic-messages", "response": {"status": 529}})
    table = event_table(cap)
    assert table.empty
    assert tuple(table.columns) == COLUMNS
    assert str(table["index"].dtype) == "Int64"
    assert time_to_first_token(table) is None
    assert longest_silence(table) is None


# -- Anthropic -------------------------------------------------------------------------


@needs_reference
def test_anthropic_rows_carry_the_block_index_and_delta_type():
    table = event_table(reference("tool-use-text-then-args"))
    start = table.iloc[6]
    assert (start["type"], start["index"], start["preview"]) == (
        "content_block_start", 1, "tool_use get_weather")
    first_args = table.iloc[7]
    assert (first_args["delta_type"], first_args["preview"]) == ("input_json_delta", "")
    assert table.iloc[8]["preview"] == '{"locati'
    assert table.iloc[3]["delta_type"] == "text_delta"
    assert pd.isna(table.iloc[0]["index"])           # message_start has no block
    assert table.iloc[0]["output_tokens"] == 1       # placeholder count in message_start
    assert final_output_tokens(table) == 65
    assert table["sequence_number"].isna().all() and table["choice"].isna().all()
    assert not table["unknown"].any() and not table["error"].any()


def test_anthropic_error_event_is_flagged_with_its_message():
    cap = stream("anthropic-messages", [
        (None, "message_start", {"type": "message_start", "message": {"usage": {}}}),
        (None, "error", {"type": "error", "error": {"type": "overloaded_error",
                                                     "message": "Overloaded"}}),
    ])
    table = event_table(cap)
    assert table["error"].tolist() == [False, True]
    assert table.iloc[1]["preview"] == "overloaded_error: Overloaded"


def test_unknown_event_and_delta_types_are_rows_with_a_flag():
    cap = stream("anthropic-messages", [
        (None, "message_start", {"type": "message_start", "message": {}}),
        (None, "mystery_event", {"type": "mystery_event", "index": 0}),
        (None, "content_block_delta", anthropic_delta(0, "hologram_delta", text="x")),
        (None, "content_block_delta", anthropic_delta(0, "text_delta", text="ok")),
    ])
    table = event_table(cap)
    assert table["unknown"].tolist() == [False, True, True, False]
    assert table.iloc[1]["type"] == "mystery_event"
    assert table.iloc[2]["delta_type"] == "hologram_delta"


def test_a_payload_that_is_not_json_is_a_row_with_the_reason():
    cap = stream("anthropic-messages", [
        (None, "message_start", {"type": "message_start", "message": {}}),
        (None, "content_block_delta", '{"type":"content_block_delta","index":0,"del'),
    ])
    table = event_table(cap)
    row = table.iloc[1]
    assert row["parse_error"].startswith("not JSON")
    assert row["type"] == "content_block_delta"     # from the SSE event name
    assert row["preview"].startswith('{"type"')
    assert table.iloc[0]["parse_error"] is None


# -- Responses -------------------------------------------------------------------------


@needs_reference
def test_responses_rows_carry_sequence_number_and_item_addressing():
    table = event_table(reference("reasoning-summary-text"))
    assert table["sequence_number"].tolist() == list(range(len(table)))
    deltas = table[table["type"] == "response.output_text.delta"]
    assert set(deltas["delta_type"]) == {"output_text"}
    assert deltas["output_index"].notna().all() and deltas["content_index"].notna().all()
    assert deltas["item_id"].str.startswith("msg_").all()
    summary = table[table["type"] == "response.reasoning_summary_text.delta"]
    assert set(summary["delta_type"]) == {"reasoning_summary_text"}
    assert summary["summary_index"].notna().all()
    assert table["index"].isna().all() and table["tool_call"].isna().all()
    assert table.iloc[-1]["type"] == "response.completed"
    assert table.iloc[-1]["output_tokens"] == final_output_tokens(table) > 0


@needs_reference
def test_responses_streams_without_sequence_numbers_leave_the_column_empty():
    table = event_table(reference("text-legacy-no-sequence-number"))
    assert table["sequence_number"].isna().all()
    assert table["output_index"].notna().any()


@needs_reference
def test_responses_error_then_failed_are_both_flagged():
    table = event_table(reference("error-insufficient-quota-failed"))
    assert table["type"].tolist() == ["response.created", "response.in_progress", "error",
                                      "response.failed"]
    assert table["error"].tolist() == [False, False, True, True]
    assert table.iloc[2]["preview"].startswith("insufficient_quota: You exceeded")


@needs_reference
def test_responses_event_types_newer_than_the_sdk_pass_through_flagged_unknown():
    table = event_table(reference("apply-patch"))
    unknown = table[table["unknown"]]
    assert len(unknown) == 33
    assert set(unknown["type"]) == {"response.apply_patch_call_operation_diff.delta",
                                    "response.apply_patch_call_operation_diff.done"}
    assert set(unknown["delta_type"].dropna()) == {"apply_patch_call_operation_diff"}


def test_responses_flat_error_payload_is_read_too():
    cap = stream("openai-responses", [
        (None, "error", {"type": "error", "code": "server_error", "message": "boom",
                         "sequence_number": 4}),
    ])
    row = event_table(cap).iloc[0]
    assert row["error"] and row["preview"] == "server_error: boom"
    assert row["sequence_number"] == 4


# -- Chat Completions --------------------------------------------------------------------


@needs_reference
def test_chat_rows_carry_choice_and_tool_call_indices():
    table = event_table(reference("tool-calls-parallel"))
    assert table["sse_event"].isna().all()
    assert table.iloc[0]["delta_type"] == "role"
    calls = table[table["delta_type"].isin(("tool_calls", "tool_call_name"))]
    assert sorted(set(calls["tool_call"])) == [0, 1]
    first = calls.iloc[0]
    assert first["preview"] == "GetWeatherArgs" and first["delta_type"] == "tool_call_name"
    names = calls[calls["delta_type"] == "tool_call_name"]
    assert list(names["tool_call"]) == [0, 1]
    assert set(kinds(names)) == {"start/stop"}
    assert set(kinds(calls[calls["delta_type"] == "tool_calls"])) == {"tool-args delta"}
    assert (calls["choice"] == 0).all() and (calls["choices"] == 1).all()
    assert table.iloc[-1]["type"] == "[DONE]" and pd.isna(table.iloc[-1]["choices"])
    usage = table[table["delta_type"] == "usage"]
    assert len(usage) == 1 and usage.iloc[0]["choices"] == 0
    assert usage.iloc[0]["output_tokens"] == final_output_tokens(table) == 60


@needs_reference
def test_chat_reasoning_content_and_refusal_have_their_own_delta_types():
    assert "reasoning_content" in set(event_table(reference("deepseek-reasoning-content"))
                                      ["delta_type"])
    refusal = event_table(reference("refusal"))
    assert "refusal" in set(refusal["delta_type"])
    assert refusal["delta_type"].iloc[0] == "role"   # content null, refusal "" on the first


def test_chat_chunk_with_two_choices_gives_the_first_and_the_count():
    chunk = {"object": "chat.completion.chunk", "choices": [
        {"index": 1, "delta": {"content": "b"}, "finish_reason": None},
        {"index": 0, "delta": {"content": "a"}, "finish_reason": None}]}
    row = event_table(stream("openai-chat", [(None, None, chunk)])).iloc[0]
    assert (row["choice"], row["choices"], row["delta_type"], row["preview"]) == (
        1, 2, "content", "b")


def test_chat_finish_chunk_and_error_payload():
    finish = {"object": "chat.completion.chunk",
              "choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
    error = {"error": {"message": "The server had an error", "type": "server_error"}}
    table = event_table(stream("openai-chat", [(None, None, finish), (None, None, error),
                                               (None, None, "[DONE]")]))
    assert table["delta_type"].tolist()[:1] == ["finish"]
    assert table.iloc[0]["preview"] == "finish_reason=length"
    assert table["type"].tolist() == ["chat.completion.chunk", "error", "[DONE]"]
    assert table["error"].tolist() == [False, True, False]
    assert table.iloc[1]["preview"] == "server_error: The server had an error"


# -- preview --------------------------------------------------------------------------------


def test_preview_makes_control_characters_visible_and_stays_short():
    assert preview_text("a\nb\tc\r") == "a\\nb\\tc\\r"
    assert preview_text("\x00") == "\\x00"
    long = preview_text("x" * 100)
    assert len(long) == 40 and long.endswith("…")
    assert preview_text("<b>") == "<b>"     # plain text here; HTML views escape it


# -- the lesson's questions ----------------------------------------------------------------


def timed_tool_stream():
    a = "anthropic-messages"
    return stream(a, [
        (400.0, "message_start", {"type": "message_start",
                                  "message": {"usage": {"output_tokens": 1}}}),
        (410.0, "content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "text", "text": ""}}),
        (900.0, "content_block_delta", anthropic_delta(0, "text_delta", text="Hi")),
        (950.0, "content_block_delta", anthropic_delta(0, "text_delta", text=" there")),
        (960.0, "content_block_stop", {"type": "content_block_stop", "index": 0}),
        (1000.0, "content_block_start", {"type": "content_block_start", "index": 1,
                                         "content_block": {"type": "tool_use", "id": "t",
                                                           "name": "f", "input": {}}}),
        (1000.0, "ping", {"type": "ping"}),
        (1100.0, "content_block_delta", anthropic_delta(1, "input_json_delta",
                                                        partial_json='{"a":')),
        (3100.0, "content_block_delta", anthropic_delta(1, "input_json_delta",
                                                        partial_json=' 1}')),
        (3150.0, "content_block_stop", {"type": "content_block_stop", "index": 1}),
        (3200.0, "message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                                   "usage": {"output_tokens": 22}}),
        (3200.0, "message_stop", {"type": "message_stop"}),
    ])


def test_time_to_first_token_is_the_first_output_delta():
    table = event_table(timed_tool_stream())
    assert time_to_first_token(table) == 900.0
    assert time_to_first_token(table, {"input_json_delta"}) == 1100.0
    assert time_to_first_token(table, TEXT_DELTAS) == 900.0


def test_time_to_first_token_is_none_without_timing():
    table = event_table(stream("anthropic-messages", [
        (None, "content_block_delta", anthropic_delta(0, "text_delta", text="x"))]))
    assert math.isnan(table["t_ms"].iloc[0])
    assert time_to_first_token(table) is None


def test_gaps_per_event_and_per_block():
    g = gaps(event_table(timed_tool_stream()))
    assert g["block"].tolist()[:3] == [None, "content[0]", "content[0]"]
    assert math.isnan(g["gap_ms"].iloc[0])
    assert g["gap_ms"].iloc[2] == 490.0
    # the second text delta: 50 ms after the first one, in the same block
    assert g["block_gap_ms"].iloc[3] == 50.0
    # the tool block's second fragment waited 2 s for the first one
    assert g["block_gap_ms"].iloc[8] == 2000.0
    # the ping has no block, so no block gap
    assert math.isnan(g["block_gap_ms"].iloc[6])


def test_longest_silence_names_where_it_falls():
    silence = longest_silence(event_table(timed_tool_stream()))
    assert silence == Silence(ms=2000.0, seq=8, after_seq=7, type="content_block_delta",
                              delta_type="input_json_delta", block="content[1]")
    assert "2000 ms of silence between events 7 and 8" in str(silence)


def test_output_tokens_per_second_uses_the_span_of_the_output():
    table = event_table(timed_tool_stream())
    # 22 tokens from the first delta (900 ms) to the last (3100 ms): 2.2 s
    assert output_tokens_per_second(table) == pytest.approx(10.0)


def test_output_tokens_per_second_ignores_the_placeholder_count_of_a_stream_that_died():
    cap = stream("anthropic-messages", [
        (100.0, "message_start", {"type": "message_start",
                                  "message": {"usage": {"output_tokens": 1}}}),
        (200.0, "content_block_delta", anthropic_delta(0, "text_delta", text="a")),
        (300.0, "content_block_delta", anthropic_delta(0, "text_delta", text="b")),
        (400.0, "error", {"type": "error", "error": {"type": "overloaded_error"}}),
    ])
    table = event_table(cap)
    assert final_output_tokens(table) == 1
    assert output_tokens_per_second(table) is None


def test_event_kinds_and_block_addresses():
    table = event_table(timed_tool_stream())
    assert kinds(table).tolist() == [
        "start/stop", "start/stop", "text delta", "text delta", "start/stop", "start/stop",
        "ping", "tool-args delta", "tool-args delta", "start/stop", "start/stop", "start/stop"]
    assert event_kind({"type": "error", "delta_type": None, "error": True}) == "error"
    assert block_address(pd.Series({"output_index": 2, "content_index": 0})) == \
        "output[2].content[0]"
    assert block_address(pd.Series({"choice": 0, "tool_call": 1})) == "choices[0].tool_calls[1]"


CONSTRUCTED = corpus()


@pytest.mark.skipif(not CONSTRUCTED, reason="constructed corpus not built yet")
def test_constructed_captures_carry_timing_in_arrival_order():
    timed = [c for c in CONSTRUCTED if c.events and c.chunk_times[0] is not None]
    assert timed, "constructed captures carry synthetic timing"
    for cap in timed:
        assert event_table(cap)["t_ms"].is_monotonic_increasing, cap.key


def test_the_longest_silence_of_a_tool_call_falls_while_its_arguments_form():
    try:
        cap = load("anthropic-messages/text-then-tool")
    except Exception:
        pytest.skip("constructed capture text-then-tool not built yet")
    silence = longest_silence(event_table(cap))
    assert silence.delta_type == "input_json_delta" and silence.ms > 1000


def test_the_tables_styler_shows_html_from_the_stream_as_text():
    body = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m",'
            b'"type":"message","role":"assistant","model":"x","content":[],"stop_reason":null,'
            b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
            b'"delta":{"type":"text_delta","text":"<script>alert(1)</script>"}}\n\n')
    html = event_table(from_bytes(body, sidecar={"wire": "anthropic-messages"})).style.to_html()
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_the_chat_chunk_that_names_a_call_is_its_start_not_an_argument_delta():
    table = event_table(load("openai-chat/parallel-tools-interleaved", search_reference=False))
    named = table[table["delta_type"] == "tool_call_name"]
    assert list(named["preview"]) == ["get_weather", "get_air_quality"]
    assert set(kinds(named)) == {"start/stop"}
    arguments = table[table["delta_type"] == "tool_calls"]
    assert len(arguments) > 10 and set(kinds(arguments)) == {"tool-args delta"}
