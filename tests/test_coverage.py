"""The coverage table keeps itself true: every type the installed SDKs' stream unions
list is shown by a capture, or named in `coverage.NOT_IN_CORPUS` with why; the table
under the cheat sheet is what the corpus renders today."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lesson_lib import wires
from lesson_lib.capture import captures
from lesson_lib.capture.captures import from_bytes
from lesson_lib.course import coverage
from lesson_lib.wires import bedrock

ROOT = Path(__file__).resolve().parent.parent
TYPES = coverage.sdk_types()
OURS = captures.corpus()
REFERENCE = captures.reference_corpus()
needs_reference = pytest.mark.skipif(
    not REFERENCE, reason=f"reference captures not found at {captures.reference_dir()} "
                          "(set REFERENCE_CAPTURES): without them the table undercounts")


def table() -> list[coverage.Row]:
    return coverage.rows(TYPES, coverage.sightings(OURS, REFERENCE))


def test_the_sdk_unions_are_read_from_the_installed_sdks():
    sizes = {name: len(members) for name, members in TYPES.items()}
    assert set(sizes) == {u.name for u in coverage.UNIONS}
    assert sizes["responses.events"] > 50 and sizes["anthropic.blocks"] >= 18
    assert {"fallback", "mcp_tool_listing", "container_upload"} <= TYPES["anthropic.blocks"]
    assert {"compaction", "model_context_window_exceeded"} <= TYPES["anthropic.stop_reasons"]
    assert {"audio", "content", "tool_calls"} <= TYPES["chat.delta_fields"]
    assert {"moderation", "obfuscation"} <= TYPES["chat.chunk_fields"]


@needs_reference
def test_every_sdk_type_is_shown_or_says_why_not():
    unexplained = [(row.union.name, m) for row in table() for m, why in row.missing
                   if why == "?"]
    assert not unexplained, f"no capture and no reason in coverage.NOT_IN_CORPUS: {unexplained}"


@needs_reference
def test_a_reason_is_given_only_for_a_type_the_sdk_lists_and_no_capture_shows():
    seen = coverage.sightings(OURS, REFERENCE)
    for union, member in coverage.NOT_IN_CORPUS:
        assert member in TYPES[union], (union, member, "not in the installed SDK")
        assert (union, member) not in seen, (union, member, "shown now: its reason goes")


def test_our_captures_show_the_features_they_were_built_for():
    seen = coverage.sightings(OURS)
    for pair in [("anthropic.blocks", "fallback"), ("anthropic.blocks", "container_upload"),
                 ("anthropic.blocks", "mcp_tool_listing"),
                 ("anthropic.stop_reasons", "pause_turn"),
                 ("anthropic.stop_reasons", "compaction"),
                 ("anthropic.stop_reasons", "model_context_window_exceeded"),
                 ("anthropic.stop_reasons", "stop_sequence"),
                 ("responses.events", "response.custom_tool_call_input.delta"),
                 ("responses.events", "response.queued"),
                 ("responses.events", "response.compaction.compacting"),
                 ("chat.delta_fields", "audio"), ("chat.delta_fields", "function_call"),
                 ("chat.finish_reasons", "function_call"),
                 ("chat.chunk_fields", "moderation"),
                 ("responses.events", "response.mcp_call.failed"),
                 ("responses.events", "response.mcp_list_tools.failed"),
                 ("responses.events", "response.audio.delta"),
                 ("responses.events", "response.audio.transcript.done"),
                 ("responses.events", "response.shell_call_command.delta"),
                 ("responses.events", "response.shell_call_output_content.done"),
                 ("responses.events", "response.file_search_call.searching"),
                 ("responses.items", "mcp_approval_request"),
                 ("responses.items", "tool_search_call"),
                 ("responses.items", "tool_search_output")]:
        assert seen.get(pair) == {coverage.OURS}, pair


def test_sightings_read_each_wire_by_its_own_shape():
    anthropic = from_bytes(
        b'event: message_delta\ndata: {"type":"message_delta","delta":'
        b'{"stop_reason":"pause_turn"},"usage":{"output_tokens":1}}\n\n',
        sidecar={"wire": "anthropic-messages"})
    chat = from_bytes(("data: " + json.dumps({
        "object": "chat.completion.chunk", "obfuscation": "x", "choices": [
            {"index": 0, "delta": {"audio": {"id": "a"}}, "finish_reason": None}]})
        + "\n\ndata: [DONE]\n\n").encode(), sidecar={"wire": "openai-chat"})
    assert coverage.seen_in(anthropic) == {("anthropic.events", "message_delta"),
                                           ("anthropic.stop_reasons", "pause_turn")}
    assert {("chat.chunk_fields", "obfuscation"), ("chat.delta_fields", "audio")} <= \
        coverage.seen_in(chat)
    both = coverage.sightings([anthropic], [anthropic])
    assert both[("anthropic.stop_reasons", "pause_turn")] == {"ours", "reference"}


def test_a_type_no_capture_shows_is_missing_with_its_reason():
    (row,) = [r for r in coverage.rows(TYPES, {}) if r.union.name == "responses.items"]
    assert row.covered == 0 and row.total == len(TYPES["responses.items"])
    assert dict(row.missing)["computer_call"] == coverage.NOT_IN_CORPUS[
        ("responses.items", "computer_call")]
    assert dict(row.missing)["message"] == "?"


@needs_reference
def test_the_cheat_sheet_ends_with_the_current_table():
    from lesson_lib.course import cheat_sheet

    text = (ROOT / "CHEATSHEET.md").read_text(encoding="utf-8")
    assert text == cheat_sheet.markdown() + "\n" + coverage.markdown(table()), (
        "run `make cheat-sheet`")


def test_every_registered_wire_has_an_sdk_union():
    assert {union.wire for union in coverage.UNIONS} == set(wires.WIRES)
    assert set(coverage.READERS) == set(wires.WIRES)


def test_the_gemini_and_bedrock_unions_are_read_from_google_genai_and_botocore():
    assert {"text", "functionCall", "thoughtSignature", "executableCode",
            "codeExecutionResult"} <= TYPES["gemini.part_fields"]
    assert "function_call" not in TYPES["gemini.part_fields"]     # wire names, not Python's
    assert {"STOP", "MAX_TOKENS", "SAFETY", "MALFORMED_FUNCTION_CALL"} <= TYPES[
        "gemini.finish_reasons"]
    assert {"messageStart", "contentBlockDelta", "messageStop", "metadata",
            "throttlingException"} <= TYPES["converse.events"]
    assert {"toolUse", "reasoningContent", "citation"} <= TYPES["converse.deltas"]
    assert {"end_turn", "guardrail_intervened"} <= TYPES["converse.stop_reasons"]
    assert {"chunk", "modelTimeoutException", "throttlingException"} <= TYPES["invoke.events"]
    assert "messageStart" not in TYPES["invoke.events"]


def test_sightings_read_gemini_and_bedrock_by_their_own_shapes():
    record = {"candidates": [{"content": {"role": "model", "parts": [
        {"text": "a", "thought": True}, {"functionCall": {"name": "f", "args": {}}}]},
        "finishReason": "MAX_TOKENS"}]}
    gemini = from_bytes(b"data: " + json.dumps(record).encode() + b"\r\n\r\n",
                        sidecar={"wire": "google-gemini"})
    assert coverage.seen_in(gemini) == {
        ("gemini.part_fields", "text"), ("gemini.part_fields", "thought"),
        ("gemini.part_fields", "functionCall"), ("gemini.finish_reasons", "MAX_TOKENS")}
    invoke = captures.load("aws-bedrock-invoke/invoke-get-weather")
    thrown = from_bytes(invoke.body + bedrock.exception_frame(
        "modelTimeoutException", {"message": "slow"}), sidecar={"wire": "aws-bedrock-invoke"})
    assert coverage.seen_in(thrown) == {("invoke.events", "chunk"),
                                        ("invoke.events", "modelTimeoutException")}
    converse = set().union(*(coverage.seen_in(c) for c in OURS
                             if c.wire == "aws-bedrock-converse"))
    assert {("converse.events", "messageStart"), ("converse.starts", "toolUse"),
            ("converse.deltas", "text"), ("converse.deltas", "reasoningContent"),
            ("converse.stop_reasons", "tool_use")} <= converse


def test_program_output_is_said_to_be_streamed_by_the_server():
    # Programmatic tool calling: the server streams a `program_output` item when the
    # program ends; the client sends back the calls' outputs, not the program's.
    why = coverage.NOT_IN_CORPUS[("responses.items", "program_output")]
    assert "sent back by the client" not in why and "server" in why
