"""The constructed AWS Bedrock corpus: ConverseStream and InvokeModelWithResponseStream.

No public recording of an InvokeModelWithResponseStream body or of an
exception frame was found, so these are constructed: the frames as the
shared reference captures' README lays them out and as botocore's parser
(``botocore.eventstream``) reads them, written with the course's own
encoder (`lesson_lib.sse.eventstream.encode_frame`), the ConverseStream payloads
shaped like the three ConverseStream recordings (sorted keys, ``p`` padding,
no ``contentBlockStart`` for text, ``metadata`` after ``messageStop``). The
tests read every one of them with botocore's parser too.

`build(root)` writes ``root/aws-bedrock-converse/NAME.eventstream`` and
``root/aws-bedrock-invoke/NAME.eventstream``, each with its ``NAME.json``
sidecar. Each capture has its own seed (from its name), so rebuilding gives
identical bytes.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from lesson_lib.sse.eventstream import CONTENT_TYPE
from lesson_lib.wires.bedrock import CONVERSE, INVOKE

from . import bedrock_turn
from .bedrock_writer import BedrockWriter

MODEL_ID = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
ANTHROPIC_MODEL = "claude-sonnet-4-5-20250929"
BASED_ON = ("Constructed from the frame layout the shared reference captures' README describes "
            "(prelude with two lengths and a CRC32, string headers, payload, message CRC32) "
            "and from botocore's own event-stream parser (botocore.eventstream), which reads "
            "these bytes the same way (tests/test_bedrock.py). ")
CONVERSE_BASIS = ("Payloads shaped like the three ConverseStream recordings: keys sorted, a "
                  "random-length `p` padding on every payload, no contentBlockStart for text, "
                  "metadata after messageStop. ")
INVOKE_BASIS = ("No public recording of InvokeModelWithResponseStream was found: each chunk "
                "frame's `bytes` is one Anthropic Messages event, base64, as the README and "
                "botocore's service model describe; message_stop carries Bedrock's "
                "amazon-bedrock-invocationMetrics. ")

WEATHER_TOOL = {"name": "get_weather", "description": "The current weather in a city.",
                "input_schema": {"type": "object", "properties": {
                    "city": {"type": "string"}, "unit": {"type": "string",
                                                         "enum": ["celsius", "fahrenheit"]}},
                    "required": ["city"]}}
WEATHER_ASK = "What's the weather in Paris right now?"
WEATHER_ARGS = '{"city": "Paris", "unit": "celsius"}'


@dataclass
class Scenario:
    """What a builder function says about the stream it wrote (the sidecar's facts)."""

    demonstrates: str
    request: dict[str, Any]
    based_on: str
    turn: dict[str, Any] | None = None


def converse_request(text: str, *, tools: bool = False) -> dict[str, Any]:
    request: dict[str, Any] = {"modelId": MODEL_ID,
                               "messages": [{"role": "user", "content": [{"text": text}]}],
                               "inferenceConfig": {"maxTokens": 1024}}
    if tools:
        spec = {"name": WEATHER_TOOL["name"], "description": WEATHER_TOOL["description"],
                "inputSchema": {"json": WEATHER_TOOL["input_schema"]}}
        request["toolConfig"] = {"tools": [{"toolSpec": spec}]}
    return request


def invoke_request(text: str, *, tools: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 1024,
                            "messages": [{"role": "user", "content": text}]}
    if tools:
        body["tools"] = [WEATHER_TOOL]
    return {"modelId": MODEL_ID, "body": body}


def tool_use_id(w: BedrockWriter, prefix: str = "tooluse_") -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
    return prefix + "".join(w.rng.choice(alphabet) for _ in range(22))


def message_id(w: BedrockWriter) -> str:
    alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
    return "msg_bdrk_01" + "".join(w.rng.choice(alphabet) for _ in range(22))


# -- ConverseStream -----------------------------------------------------------------------


def converse_hello(w: BedrockWriter) -> Scenario:
    w.converse_start()
    w.converse_text(0, "Hello! How can I help you today? I can answer questions, draft text "
                       "or work through a problem with you.", first=True)
    w.converse_stop("end_turn", (12, 31), 1184)
    return Scenario("ConverseStream's smallest turn: text deltas with no contentBlockStart, "
                    "messageStop end_turn, then the metadata (usage, latency) after it.",
                    converse_request("Hello"), BASED_ON + CONVERSE_BASIS)


def converse_get_weather(w: BedrockWriter) -> Scenario:
    w.converse_start()
    w.converse_text(0, "I'll check the current weather in Paris for you.", first=True)
    w.converse_tool(1, tool_use_id(w), "get_weather", WEATHER_ARGS)
    w.converse_stop("tool_use", (402, 74), 2203)
    return Scenario("ConverseStream tool use: a text block, then a toolUse block announced by "
                    "contentBlockStart (toolUseId, name) whose input arrives as string "
                    "fragments; stopReason tool_use.",
                    converse_request(WEATHER_ASK, tools=True), BASED_ON + CONVERSE_BASIS)


def converse_cut_in_tool_input(w: BedrockWriter) -> Scenario:
    w.converse_start()
    w.converse_text(0, "Let me look that up.", first=True)
    w.frame("contentBlockStart", {"contentBlockIndex": 1, "start": {
        "toolUse": {"name": "get_weather", "toolUseId": tool_use_id(w)}}})
    for piece in ('{"city": "Pa', 'ris", "un'):
        w.frame("contentBlockDelta", {"contentBlockIndex": 1,
                                      "delta": {"toolUse": {"input": piece}}})
    w.cut(37)    # the connection dies 37 bytes into this frame: inside its headers
    return Scenario("A ConverseStream cut inside a frame, in the middle of a tool call's "
                    "input: the whole frames before it are kept, the last one is a "
                    "truncated_frame at its offset, the call is cut, no messageStop.",
                    converse_request(WEATHER_ASK, tools=True), BASED_ON + CONVERSE_BASIS)


def converse_model_stream_error(w: BedrockWriter) -> Scenario:
    w.converse_start()
    text = "Here is a summary of the three reports. The first one argues that"
    for i, piece in enumerate(w.pieces(text)):
        w.frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": piece}},
                after_ms=w.first_gap() if i == 0 else None)
    w.exception("modelStreamErrorException", "The model encountered an error processing "
                "the stream. Try your request again.", after_ms=640.0,
                originalMessage="Internal server error", originalStatusCode=500)
    return Scenario("An exception frame in the middle of a ConverseStream answer "
                    "(modelStreamErrorException, :message-type exception): an in-band error "
                    "after HTTP 200 that a retry can cure; the text so far is kept.",
                    converse_request("Summarise the three reports."),
                    BASED_ON + CONVERSE_BASIS + "Exception frames as botocore's service model "
                    "for ConverseStream lists them; modelStreamErrorException's fields "
                    "(originalStatusCode, originalMessage) from that model.")


def converse_redacted_reasoning(w: BedrockWriter) -> Scenario:
    w.converse_start()
    thought = ("The user wants the current weather in Paris. I have a get_weather tool; "
               "I should call it with the city and a unit.")
    for i, piece in enumerate(w.pieces(thought)):
        w.frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
            "reasoningContent": {"text": piece}}}, after_ms=w.first_gap() if i == 0 else None)
    w.frame("contentBlockDelta", {"contentBlockIndex": 0, "delta": {
        "reasoningContent": {"signature": w.opaque(96)}}})
    w.frame("contentBlockStop", {"contentBlockIndex": 0})
    w.frame("contentBlockDelta", {"contentBlockIndex": 1, "delta": {
        "reasoningContent": {"redactedContent": w.opaque(180)}}})
    w.frame("contentBlockStop", {"contentBlockIndex": 1})
    w.converse_text(2, "I'll check the current weather in Paris for you.")
    w.converse_tool(3, tool_use_id(w), "get_weather", WEATHER_ARGS)
    w.converse_stop("tool_use", (431, 142), 3310)
    request = converse_request(WEATHER_ASK, tools=True)
    request["additionalModelRequestFields"] = {"thinking": {"type": "enabled",
                                                            "budget_tokens": 2048}}
    return Scenario("ConverseStream reasoning: a reasoningContent block whose text arrives in "
                    "deltas and whose signature comes in a delta of its own, then a redacted "
                    "one (redactedContent, base64 bytes, in one delta), then text and a "
                    "toolUse. Both reasoning blocks must go back in the next request as they "
                    "came.", request, BASED_ON + CONVERSE_BASIS + "Reasoning deltas as "
                    "botocore's service model lists them (ReasoningContentBlockDelta: text, "
                    "signature, redactedContent as a blob).")


# -- InvokeModelWithResponseStream ---------------------------------------------------------


def invoke_start(w: BedrockWriter, input_tokens: int) -> None:
    w.chunk({"type": "message_start", "message": {
        "id": message_id(w), "type": "message", "role": "assistant", "model": ANTHROPIC_MODEL,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": input_tokens, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0, "output_tokens": 1}}},
        after_ms=w.rng.uniform(250, 600))


def invoke_hello(w: BedrockWriter) -> Scenario:
    invoke_start(w, 12)
    w.invoke_text(0, "Hello! How can I help you today?", first=True)
    w.invoke_stop("end_turn", (12, 12), 906)
    return Scenario("InvokeModelWithResponseStream on Claude: Anthropic's own events, each "
                    "base64 in a chunk frame's `bytes`; message_stop carries Bedrock's "
                    "invocation metrics.", invoke_request("Hello"), BASED_ON + INVOKE_BASIS)


def invoke_get_weather(w: BedrockWriter) -> Scenario:
    invoke_start(w, 398)
    w.invoke_text(0, "I'll check the current weather in Paris for you.", first=True)
    w.invoke_tool(1, tool_use_id(w, "toolu_bdrk_01"), "get_weather", WEATHER_ARGS)
    w.invoke_stop("tool_use", (398, 71), 2040)
    return Scenario("InvokeModelWithResponseStream tool use: Anthropic's tool_use block and "
                    "input_json_delta fragments inside chunk frames; stop_reason tool_use.",
                    invoke_request(WEATHER_ASK, tools=True), BASED_ON + INVOKE_BASIS)


def invoke_throttling_exception(w: BedrockWriter) -> Scenario:
    invoke_start(w, 25)
    w.chunk({"type": "content_block_start", "index": 0,
             "content_block": {"type": "text", "text": ""}})
    for i, piece in enumerate(w.pieces("Sure, here are five ideas for")):
        w.chunk({"type": "content_block_delta", "index": 0,
                 "delta": {"type": "text_delta", "text": piece}},
                after_ms=w.first_gap() if i == 0 else None)
    w.exception("throttlingException", "Too many tokens, please wait before trying again.",
                after_ms=410.0)
    return Scenario("An exception frame inside an InvokeModelWithResponseStream answer "
                    "(throttlingException): no message_stop, an in-band error a retry can "
                    "cure; Anthropic's accumulator reads it as an error event.",
                    invoke_request("Give me five ideas for a team offsite."),
                    BASED_ON + INVOKE_BASIS + "Exception frames as botocore's service model "
                    "for InvokeModelWithResponseStream lists them.")


# -- the weather turn (`bedrock_turn`) ------------------------------------------------------

TURN_BASIS = ("The weather turn of every wire (same question, tool, arguments, results and "
              "answer), said in this API's vocabulary. ")


def converse_weather(step: int) -> Callable[[BedrockWriter], Scenario]:
    def build(w: BedrockWriter) -> Scenario:
        request = bedrock_turn.converse_step(w, step, MODEL_ID)
        return Scenario(WEATHER_STEPS[step].format(api="ConverseStream"), request,
                        BASED_ON + CONVERSE_BASIS + TURN_BASIS,
                        {"name": bedrock_turn.TURN, "step": step})
    return build


def invoke_weather(step: int) -> Callable[[BedrockWriter], Scenario]:
    def build(w: BedrockWriter) -> Scenario:
        request = bedrock_turn.invoke_step(w, step, MODEL_ID, invoke_start)
        return Scenario(WEATHER_STEPS[step].format(api="InvokeModelWithResponseStream"),
                        request, BASED_ON + INVOKE_BASIS + TURN_BASIS,
                        {"name": bedrock_turn.TURN, "step": step})
    return build


WEATHER_STEPS = {1: "Weather turn, step 1 on {api}: text and two parallel get_weather calls "
                    "(Paris, Tokyo), stop reason tool_use.",
                 2: "Weather turn, step 2 on {api}: the request carries both tool results; "
                    "the stream is the final answer text."}

CAPTURES: dict[str, dict[str, Callable[[BedrockWriter], Scenario]]] = {
    CONVERSE: {"converse-hello": converse_hello,
               "converse-get-weather": converse_get_weather,
               "converse-cut-in-tool-input": converse_cut_in_tool_input,
               "converse-model-stream-error": converse_model_stream_error,
               "converse-redacted-reasoning": converse_redacted_reasoning,
               "weather-turn-step1": converse_weather(1),
               "weather-turn-step2": converse_weather(2)},
    INVOKE: {"invoke-hello": invoke_hello,
             "invoke-get-weather": invoke_get_weather,
             "invoke-throttling-exception": invoke_throttling_exception,
             "weather-turn-step1": invoke_weather(1),
             "weather-turn-step2": invoke_weather(2)},
}


def build_one(wire: str, name: str) -> tuple[bytes, dict[str, Any]]:
    """One capture's body and sidecar, from its builder function."""
    seed = zlib.crc32(f"{wire}/{name}".encode())
    w = BedrockWriter(seed)
    scenario = CAPTURES[wire][name](w)
    body, chunks = w.finish()
    date = datetime(2026, 4, 14, 8, 0, tzinfo=UTC) + timedelta(seconds=seed % 1_500_000)
    sidecar = {
        "wire": wire,
        "demonstrates": scenario.demonstrates,
        "request": scenario.request,
        "response": {"status": 200, "headers": {"content-type": CONTENT_TYPE,
                                                "date": format_datetime(date, usegmt=True)}},
        "provenance": {"kind": "constructed", "based_on": scenario.based_on,
                       "timing": "synthetic"},
        "chunks": chunks,
    }
    if scenario.turn is not None:
        sidecar["turn"] = scenario.turn
    return body, sidecar


def build(root: Path) -> list[Path]:
    """Write every Bedrock capture under ``root/<wire>/``; return the body paths."""
    paths = []
    for wire, builders in CAPTURES.items():
        folder = Path(root) / wire
        folder.mkdir(parents=True, exist_ok=True)
        for name in builders:
            body, side = build_one(wire, name)
            path = folder / f"{name}.eventstream"
            path.write_bytes(body)
            (folder / f"{name}.json").write_text(
                json.dumps(side, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            paths.append(path)
    return paths
