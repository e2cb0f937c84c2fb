"""The Bedrock stream writer: binary event-stream frames, paced like a live model.

`BedrockWriter` sits on a `StreamBuilder` and writes each event as one frame
(`lesson_lib.sse.eventstream.encode_frame`), with what the recordings show:

- three string headers in the recorded order: ``:event-type``,
  ``:content-type`` (``application/json``), ``:message-type`` (``event``);
  an exception frame has ``:exception-type`` first and ``exception``;
- compact JSON with its keys sorted, and a ``p`` padding field of random
  length on every payload (a prefix of ``abc...XYZ0123456789``);
- ConverseStream (`converse_*`): no ``contentBlockStart`` for text and
  reasoning blocks, ``metadata`` after ``messageStop``;
- InvokeModelWithResponseStream (`chunk`): each Anthropic event base64 in
  a ``chunk`` frame's ``bytes``, and Bedrock's invocation metrics in the
  ``message_stop`` event.

Everything is drawn from the builder's seeded generator, so a capture
rebuilt from the same seed has the same bytes.
"""

from __future__ import annotations

import base64
import json
import string
from typing import Any

from lesson_lib.sse.eventstream import encode_frame

from .writer import StreamBuilder

PADDING = string.ascii_lowercase + string.ascii_uppercase + string.digits
FIRST_TOKEN_MS = (300.0, 900.0)
GAP_MS = (15.0, 60.0)


def compact(payload: Any) -> str:
    """JSON as Bedrock writes it: compact, keys sorted."""
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


class BedrockWriter:
    """Emits one Bedrock stream as frames; see the module docstring."""

    def __init__(self, seed: int) -> None:
        self.builder = StreamBuilder(seed)
        self.rng = self.builder.rng

    # -- frames ----------------------------------------------------------------

    def padding(self) -> str:
        return PADDING[:self.rng.randint(1, len(PADDING) - 1)]

    def frame(self, event_type: str, payload: dict, *, after_ms: float | None = None) -> None:
        """An event frame: `payload` with its padding, keys sorted."""
        body = compact({**payload, "p": self.padding()}).encode("utf-8")
        headers = {":event-type": event_type, ":content-type": "application/json",
                   ":message-type": "event"}
        self.builder.raw(encode_frame(headers, body), after_ms=self.gap(after_ms))

    def exception(self, exception_type: str, message: str, *,
                  after_ms: float | None = None, **fields: Any) -> None:
        """An exception frame: the error that ends the stream."""
        headers = {":exception-type": exception_type, ":content-type": "application/json",
                   ":message-type": "exception"}
        body = compact({"message": message, **fields}).encode("utf-8")
        self.builder.raw(encode_frame(headers, body), after_ms=self.gap(after_ms))

    def gap(self, after_ms: float | None) -> float:
        return after_ms if after_ms is not None else self.rng.uniform(*GAP_MS)

    def first_gap(self) -> float:
        return self.rng.uniform(*FIRST_TOKEN_MS)

    def pieces(self, text: str, sizes: tuple[int, int] = (2, 14)) -> list[str]:
        """`text` cut at arbitrary places, as deltas arrive."""
        out, i = [], 0
        while i < len(text):
            n = self.rng.randint(*sizes)
            out.append(text[i:i + n])
            i += n
        return out

    def opaque(self, size: int) -> str:
        """`size` random bytes as base64: a signature or a redacted block, which only the
        provider can read."""
        return base64.b64encode(bytes(self.rng.getrandbits(8) for _ in range(size))).decode()

    def cut(self, keep: int) -> None:
        """The connection dies: only the first `keep` bytes of the last frame arrive."""
        self.builder.cut(keep)

    def finish(self) -> tuple[bytes, dict[str, list]]:
        body, ends, times = self.builder.finish()
        return body, {"ends": ends, "t_ms": times}

    # -- ConverseStream ----------------------------------------------------------

    def converse_start(self) -> None:
        self.frame("messageStart", {"role": "assistant"}, after_ms=self.rng.uniform(200, 500))

    def converse_text(self, index: int, text: str, *, first: bool = False) -> None:
        """A text block: deltas only (no contentBlockStart), then its stop."""
        for i, piece in enumerate(self.pieces(text)):
            self.frame("contentBlockDelta", {"contentBlockIndex": index,
                                             "delta": {"text": piece}},
                       after_ms=self.first_gap() if first and i == 0 else None)
        self.frame("contentBlockStop", {"contentBlockIndex": index})

    def converse_tool(self, index: int, tool_use_id: str, name: str, arguments: str) -> None:
        """A toolUse block: its start, the argument text in fragments, its stop."""
        self.frame("contentBlockStart", {"contentBlockIndex": index, "start": {
            "toolUse": {"name": name, "toolUseId": tool_use_id}}})
        for piece in self.pieces(arguments, (3, 20)):
            self.frame("contentBlockDelta", {"contentBlockIndex": index,
                                             "delta": {"toolUse": {"input": piece}}})
        self.frame("contentBlockStop", {"contentBlockIndex": index})

    def converse_stop(self, stop_reason: str, usage: tuple[int, int], latency_ms: int) -> None:
        """``messageStop``, then the ``metadata`` that comes after it."""
        self.frame("messageStop", {"stopReason": stop_reason})
        inp, out = usage
        self.frame("metadata", {"metrics": {"latencyMs": latency_ms},
                                "usage": {"inputTokens": inp, "outputTokens": out,
                                          "totalTokens": inp + out}})

    # -- InvokeModelWithResponseStream ----------------------------------------------

    def chunk(self, event: dict, *, after_ms: float | None = None) -> None:
        """One Anthropic event, base64 in a ``chunk`` frame's ``bytes``."""
        inner = json.dumps(event, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self.frame("chunk", {"bytes": base64.b64encode(inner).decode("ascii")},
                   after_ms=after_ms)

    def invoke_text(self, index: int, text: str, *, first: bool = False) -> None:
        self.chunk({"type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}})
        for i, piece in enumerate(self.pieces(text)):
            self.chunk({"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": piece}},
                       after_ms=self.first_gap() if first and i == 0 else None)
        self.chunk({"type": "content_block_stop", "index": index})

    def invoke_tool(self, index: int, tool_use_id: str, name: str, arguments: str) -> None:
        self.chunk({"type": "content_block_start", "index": index, "content_block": {
            "type": "tool_use", "id": tool_use_id, "name": name, "input": {}}})
        for piece in self.pieces(arguments, (3, 20)):
            self.chunk({"type": "content_block_delta", "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": piece}})
        self.chunk({"type": "content_block_stop", "index": index})

    def invoke_stop(self, stop_reason: str, usage: tuple[int, int], latency_ms: int) -> None:
        """``message_delta`` and ``message_stop``, which Bedrock gives its invocation
        metrics."""
        inp, out = usage
        self.chunk({"type": "message_delta",
                    "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                    "usage": {"output_tokens": out}})
        self.chunk({"type": "message_stop", "amazon-bedrock-invocationMetrics": {
            "inputTokenCount": inp, "outputTokenCount": out,
            "invocationLatency": latency_ms,
            "firstByteLatency": round(latency_ms * self.rng.uniform(0.2, 0.5))}})
