"""What every Chat capture builder shares: the wire name, the helper, requests and headers."""

from __future__ import annotations

import json
from typing import Any

from .openai_chat_stream import ChatStream
from .openai_sidecar import openai_headers

WIRE = "openai-chat"
HELPER = "chat.completions.stream + get_final_completion()"
BASE = "the chunk shapes of the recorded Chat streams in the shared reference captures"
STREAM_USAGE = {"stream": True, "stream_options": {"include_usage": True}}


def ok(stream: ChatStream) -> dict[str, Any]:
    """A 200 response with api.openai.com's headers."""
    first = stream.builder.pieces[0].at_ms
    return {"status": 200, "headers": openai_headers(stream.rng, processing_ms=first * 0.8)}


def user(text: str) -> list[dict[str, Any]]:
    """The messages of a one-question conversation."""
    return [{"role": "user", "content": text}]


def function_tool(name: str, description: str, properties: dict[str, Any],
                  required: list[str] | None = None, strict: bool = True) -> dict[str, Any]:
    """A Chat Completions function tool with a full JSON schema."""
    params = {"type": "object", "properties": properties,
              "required": required if required is not None else list(properties),
              "additionalProperties": False}
    return {"type": "function", "function": {"name": name, "description": description,
                                             "parameters": params, "strict": strict}}


def compact(args: dict[str, Any]) -> str:
    """Arguments as the model writes them."""
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))
