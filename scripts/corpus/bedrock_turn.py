"""The weather turn on both Bedrock wires: two model calls of one agent turn.

The same story as on every other wire (`weather_turn`): step 1 asks about
Paris and Tokyo and the model calls ``get_weather`` twice; step 2 sends both
results back and the model answers. ConverseStream says it in its own
vocabulary (``toolUse`` blocks, ``toolResult`` content in the request);
InvokeModelWithResponseStream in Anthropic's. The tool ids are drawn once for
the turn, so step 2's request names exactly the calls step 1 announced.
"""

from __future__ import annotations

import json
import random
import zlib
from typing import Any

from . import weather_turn as weather
from .bedrock_writer import BedrockWriter

STEP1_TEXT = "I'll check the weather in both cities at once."
ID_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
TURN = weather.TURN_NAME


def tool_ids(prefix: str) -> tuple[str, str]:
    """The turn's two tool-use ids (the same in both steps)."""
    rng = random.Random(zlib.crc32(f"{TURN}/{prefix}".encode()))
    paris, tokyo = (prefix + "".join(rng.choice(ID_ALPHABET) for _ in range(22))
                    for _ in range(2))
    return paris, tokyo


def converse_tool() -> dict[str, Any]:
    return {"toolSpec": {"name": weather.TOOL_NAME, "description": weather.TOOL_DESCRIPTION,
                         "inputSchema": {"json": weather.TOOL_PARAMETERS}}}


def converse_messages(step: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [{"text": weather.QUESTION}]}]
    if step == 2:
        ids = tool_ids("tooluse_")
        messages.append({"role": "assistant", "content": [{"text": STEP1_TEXT}, *[
            {"toolUse": {"toolUseId": i, "name": weather.TOOL_NAME, "input": dict(args)}}
            for i, args in zip(ids, weather.CALLS, strict=True)]]})
        messages.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": i, "content": [{"json": result}]}}
            for i, result in zip(ids, weather.RESULTS, strict=True)]})
    return messages


def invoke_messages(step: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": weather.QUESTION}]
    if step == 2:
        ids = tool_ids("toolu_bdrk_01")
        messages.append({"role": "assistant", "content": [{"type": "text", "text": STEP1_TEXT}, *[
            {"type": "tool_use", "id": i, "name": weather.TOOL_NAME, "input": dict(args)}
            for i, args in zip(ids, weather.CALLS, strict=True)]]})
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": i, "content": weather.result_text(result)}
            for i, result in zip(ids, weather.RESULTS, strict=True)]})
    return messages


def converse_step(w: BedrockWriter, step: int, model_id: str) -> dict[str, Any]:
    """One step on ConverseStream; returns its request."""
    w.converse_start()
    if step == 1:
        w.converse_text(0, STEP1_TEXT, first=True)
        for slot, (tool_id, args) in enumerate(zip(tool_ids("tooluse_"), weather.CALLS,
                                                   strict=True), start=1):
            w.converse_tool(slot, tool_id, weather.TOOL_NAME, weather.arguments_text(args))
        w.converse_stop("tool_use", (468, 131), 2410)
    else:
        w.converse_text(0, weather.ANSWER, first=True)
        w.converse_stop("end_turn", (671, 61), 3302)
    return {"modelId": model_id, "messages": converse_messages(step),
            "toolConfig": {"tools": [converse_tool()]}, "inferenceConfig": {"maxTokens": 1024}}


def invoke_step(w: BedrockWriter, step: int, model_id: str,
                start: Any) -> dict[str, Any]:
    """One step on InvokeModelWithResponseStream; returns its request. `start` writes
    the ``message_start`` chunk."""
    if step == 1:
        start(w, 468)
        w.invoke_text(0, STEP1_TEXT, first=True)
        for slot, (tool_id, args) in enumerate(zip(tool_ids("toolu_bdrk_01"), weather.CALLS,
                                                   strict=True), start=1):
            w.invoke_tool(slot, tool_id, weather.TOOL_NAME, weather.arguments_text(args))
        w.invoke_stop("tool_use", (468, 131), 2390)
    else:
        start(w, 671)
        w.invoke_text(0, weather.ANSWER, first=True)
        w.invoke_stop("end_turn", (671, 61), 3280)
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 1024,
            "messages": invoke_messages(step), "tools": [weather.anthropic_tool()]}
    return {"modelId": model_id, "body": json.loads(json.dumps(body))}
