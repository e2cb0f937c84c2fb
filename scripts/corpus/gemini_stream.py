"""A Gemini stream as the two real ones look: the Gemini API and Vertex AI.

Every record is a whole ``GenerateContentResponse`` on one ``data:`` line. The
shapes follow the recordings in the shared reference captures:

- the Gemini API (``generativelanguage``): records end with ``\\r\\n\\r\\n``,
  JSON with a space after ``:`` and none after ``,``, ``role`` after
  ``parts``, the candidate ``index`` on most records, a running
  ``usageMetadata`` on every record whose ``promptTokenCount`` can drop at the
  end, the last record often an empty text part holding the ``finishReason``;
- Vertex AI: records end with ``\\n\\n``, compact JSON, ``role`` before
  ``parts``, no candidate ``index``, ``createTime`` beside ``responseId`` and
  ``usageMetadata`` of only ``trafficType`` until the last record.

Text arrives a few words per record (not a token per event, as on the other
wires); streamed function-call arguments arrive as ``partialArgs`` entries.
"""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass, field
from typing import Any

from .openai_pacing import Pace, text_tokens
from .writer import StreamBuilder

WIRE = "google-gemini"
HELPER = "models.generate_content_stream (one response object per record; no final object)"
API_BASE = ("the Gemini API records in the shared reference captures (pydantic-ai cassettes: "
            "CRLF separators, spaced JSON, usage on every record)")
VERTEX_BASE = ("the Vertex AI records in the shared reference captures (vercel/ai chunk "
               "fixtures: compact JSON, createTime, partialArgs)")


def response_id(rng: random.Random) -> str:
    """A response id in Gemini's alphabet (23 characters; fake)."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return "".join(rng.choice(alphabet) for _ in range(23))


def signature(rng: random.Random, size: int = 180) -> str:
    """A thought signature: opaque base64 the next request must send back (fake)."""
    return base64.b64encode(rng.randbytes(size)).decode("ascii")


@dataclass
class GeminiStream:
    """Writes the records of one response; `usage` holds the running counts."""

    seed: int
    model: str
    vertex: bool = False
    prompt_tokens: int = 12
    create_time: str = "2026-03-02T10:15:07.482913Z"
    builder: StreamBuilder = field(init=False)
    output_tokens: int = 0
    thought_tokens: int = 0

    def __post_init__(self) -> None:
        self.builder = StreamBuilder(self.seed)
        self.rng = self.builder.rng
        self.pace = Pace(self.rng)
        self.id = response_id(self.rng)

    # -- one record ------------------------------------------------------------------

    def record(self, parts: list[dict[str, Any]], *, after_ms: float, finish: str | None = None,
               last: bool = False, candidate: dict[str, Any] | None = None,
               usage: dict[str, Any] | None = None, tear: bool = False) -> None:
        """One ``data:`` record with these parts (and the finish reason, on the last)."""
        content: dict[str, Any] = ({"role": "model", "parts": parts} if self.vertex
                                   else {"parts": parts, "role": "model"})
        cand: dict[str, Any] = {"content": content}
        if finish is not None:
            cand["finishReason"] = finish
        if not self.vertex and (last or self.rng.random() < 0.85):
            cand["index"] = 0
        cand.update(candidate or {})
        payload: dict[str, Any] = {"candidates": [cand],
                                   "usageMetadata": usage or self.usage(last=last),
                                   "modelVersion": self.model}
        if self.vertex:
            payload["createTime"] = self.create_time
        payload["responseId"] = self.id
        self.raw_record(payload, after_ms=after_ms, tear=tear)

    def raw_record(self, payload: dict[str, Any], *, after_ms: float, tear: bool = False) -> None:
        """Any payload as one record, in this API's spelling. `tear`: its bytes arrive in two
        reads, the first ending inside its first multi-byte character."""
        text = json.dumps(payload, ensure_ascii=False,
                          separators=(",", ":") if self.vertex else (",", ": "))
        end = "\n\n" if self.vertex else "\r\n\r\n"
        data = f"data: {text}{end}".encode()
        cut = next((i + 1 for i, byte in enumerate(data) if byte >= 0xC0), None) if tear else None
        if cut is None:
            self.builder.raw(data, after_ms=after_ms)
            return
        self.builder.raw(data[:cut], after_ms=after_ms)
        self.builder.raw(data[cut:], after_ms=self.pace.late_half())

    def usage(self, *, last: bool = False) -> dict[str, Any]:
        """The running ``usageMetadata``: Vertex says only its traffic type until the end;
        the Gemini API counts on every record (the prompt a little high until the end)."""
        if self.vertex and not last:
            return {"trafficType": "ON_DEMAND"}
        prompt = self.prompt_tokens + (0 if last else 2)
        out: dict[str, Any] = {"promptTokenCount": prompt}
        if self.output_tokens:
            out["candidatesTokenCount"] = self.output_tokens
        out["totalTokenCount"] = prompt + self.output_tokens + self.thought_tokens
        if self.vertex:
            out["trafficType"] = "ON_DEMAND"
        out["promptTokensDetails"] = [{"modality": "TEXT", "tokenCount": prompt}]
        if last and self.output_tokens:
            out["candidatesTokensDetails"] = [{"modality": "TEXT",
                                               "tokenCount": self.output_tokens}]
        if self.thought_tokens:
            out["thoughtsTokenCount"] = self.thought_tokens
        return out

    # -- what a model writes -------------------------------------------------------------

    def text(self, text: str, *, first_ms: float, thought: bool = False,
             sign_first: str | None = None, finish: str | None = None,
             cut_after: int | None = None) -> list[str]:
        """`text` over several records, a few words each; returns the pieces sent.

        `sign_first` puts a signature on the first part; `finish` goes on the
        last record; `cut_after` stops after that many records (no finish).
        """
        tokens = text_tokens(text, self.rng, merge=0.0)
        pieces: list[str] = []
        while tokens:
            take = self.rng.randint(3, 14)
            pieces.append("".join(tokens[:take]))
            tokens = tokens[take:]
        for n, piece in enumerate(pieces):
            if cut_after is not None and n == cut_after:
                return pieces[:n]
            part: dict[str, Any] = {"text": piece}
            if thought:
                part["thought"] = True
            if n == 0 and sign_first:
                part["thoughtSignature"] = sign_first
            counted = max(1, len(piece) // 4)
            if thought:
                self.thought_tokens += counted * 3
            else:
                self.output_tokens += counted
            last = finish is not None and n == len(pieces) - 1
            torn = not any(ord(ch) > 127 for ch in "".join(pieces[:n]))   # the first one
            self.record([part], after_ms=first_ms if n == 0 else self.pace.token() * 6,
                        finish=finish if last else None, last=last, tear=torn)
        return pieces

    def end(self, finish: str = "STOP", *, after_ms: float, part: dict[str, Any] | None = None,
            candidate: dict[str, Any] | None = None) -> None:
        """The last record: an empty text part (or `part`) carrying the finish reason."""
        self.record([part if part is not None else {"text": ""}], after_ms=after_ms,
                    finish=finish, last=True, candidate=candidate)


def partial_args(path: str, value: Any, rng: random.Random) -> list[dict[str, Any]]:
    """The ``partialArgs`` entries of one value: a string in pieces, each continuing, then
    the empty terminator; anything else whole."""
    if value is None:                      # the API's enum, as google-genai types it
        return [{"jsonPath": path, "nullValue": "NULL_VALUE"}]
    if not isinstance(value, str):
        return [{"jsonPath": path, "boolValue" if isinstance(value, bool) else "numberValue":
                 value}]
    pieces, rest = [], value
    while rest:
        take = rng.randint(3, 12)
        pieces.append(rest[:take])
        rest = rest[take:]
    return ([{"jsonPath": path, "stringValue": p, "willContinue": True} for p in pieces]
            + [{"jsonPath": path, "stringValue": ""}])
