"""A Gemini Interactions stream as the recordings look (``POST /v1beta/interactions``).

Every event is an ``event: <event_type>`` line and one compact ``data:`` line
whose payload names itself again in ``event_type`` (last, as recorded); the
interaction opens with ``interaction.created`` (``id``, ``status``,
``object``, ``model``) and ``interaction.status_update``; each step is
``step.start`` / ``step.delta``... / ``step.stop`` by ``index``; the end is
``interaction.completed`` with the status, the usage, ``created`` and
``updated`` and the service tier, but no steps. The shapes follow the
recordings in the shared reference captures (vercel/ai's chunk fixtures);
timing and network reads are synthetic (`writer.StreamBuilder`).

`event_ids` puts an ``event_id`` on every event (what a client resumes a
broken stream from, ``last_event_id``).
"""

from __future__ import annotations

import base64
import json
import random
from dataclasses import dataclass, field
from typing import Any

from lesson_lib.wires import gemini_interactions as gi

from .openai_pacing import Pace, text_tokens
from .writer import StreamBuilder

WIRE = gi.WIRE
HELPER = ("interactions.create(stream=True) (one object per event; no final object: "
          "interaction.completed reports the interaction without its steps)")
BASE = ("the Interactions recordings in the shared reference captures (vercel/ai chunk "
        "fixtures: event lines, compact JSON, event_type last)")
CREATED_AT = "2026-05-15T18:51:57Z"


def interaction_id(rng: random.Random) -> str:
    """An interaction id as the API writes them (``v1_`` and base64url; fake)."""
    return "v1_" + base64.urlsafe_b64encode(rng.randbytes(60)).decode("ascii").rstrip("=")


def signature(rng: random.Random, size: int = 180) -> str:
    """A thought signature: opaque base64 the next request sends back (fake)."""
    return base64.b64encode(rng.randbytes(size)).decode("ascii")


def call_id(rng: random.Random) -> str:
    """A function call's id (eight characters, as recorded; fake)."""
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))


@dataclass
class InteractionsStream:
    """Writes the events of one interaction; the counts feed the completed usage."""

    seed: int
    model: str = "gemini-2.5-flash"
    input_tokens: int = 12
    event_ids: bool = False
    builder: StreamBuilder = field(init=False)
    output_tokens: int = 0
    thought_tokens: int = 0
    tool_use_tokens: int = 0
    steps: int = 0          # the next step's index

    def __post_init__(self) -> None:
        self.builder = StreamBuilder(self.seed)
        self.rng = self.builder.rng
        self.pace = Pace(self.rng)
        self.id = interaction_id(self.rng)
        self._events = 0

    # -- one event ------------------------------------------------------------------------

    def event(self, kind: str, fields: dict[str, Any], *, after_ms: float,
              tear: bool = False) -> None:
        """One event: its fields, then ``event_id`` (when asked) and ``event_type`` last.
        `tear`: its bytes arrive in two reads, the first ending inside its first
        multi-byte character."""
        payload = dict(fields)
        if self.event_ids:
            payload["event_id"] = f"{self.id[3:19]}.{self._events:04d}"
        payload[gi.EVENT_TYPE_FIELD] = kind
        self._events += 1
        data = f"event: {kind}\ndata: {json.dumps(payload, ensure_ascii=False, separators=(',', ':'))}\n\n"
        raw = data.encode()
        cut = next((i + 1 for i, byte in enumerate(raw) if byte >= 0xC0), None) if tear else None
        if cut is None:
            self.builder.raw(raw, after_ms=after_ms)
            return
        self.builder.raw(raw[:cut], after_ms=after_ms)
        self.builder.raw(raw[cut:], after_ms=self.pace.late_half())

    def open(self, *, after_ms: float) -> None:
        """``interaction.created`` and ``interaction.status_update`` (in progress)."""
        self.event(gi.INTERACTION_CREATED, {"interaction": {
            "id": self.id, "status": gi.IN_PROGRESS, "object": "interaction",
            "model": self.model}}, after_ms=after_ms)
        self.event(gi.INTERACTION_STATUS_UPDATE, {"interaction_id": self.id,
                                                  "status": gi.IN_PROGRESS},
                   after_ms=self.pace.instant())

    def start(self, step: dict[str, Any], *, after_ms: float) -> int:
        """``step.start`` of the next step; returns its index."""
        index = self.steps
        self.steps += 1
        self.event(gi.STEP_START, {"index": index, "step": step}, after_ms=after_ms)
        return index

    def delta(self, index: int, delta: dict[str, Any], *, after_ms: float,
              tear: bool = False) -> None:
        """One ``step.delta`` (the delta's ``type`` last, as recorded)."""
        self.event(gi.STEP_DELTA, {"index": index, "delta": delta}, after_ms=after_ms, tear=tear)

    def stop(self, index: int, *, after_ms: float) -> None:
        """``step.stop``."""
        self.event(gi.STEP_STOP, {"index": index}, after_ms=after_ms)

    def usage(self) -> dict[str, Any]:
        """The completed interaction's usage (total = input + output + thoughts + tools)."""
        total = (self.input_tokens + self.output_tokens + self.thought_tokens
                 + self.tool_use_tokens)
        return {"total_tokens": total, "total_input_tokens": self.input_tokens,
                "input_tokens_by_modality": [{"modality": "text",
                                              "tokens": self.input_tokens}],
                "total_cached_tokens": 0, "total_output_tokens": self.output_tokens,
                "total_tool_use_tokens": self.tool_use_tokens,
                "total_thought_tokens": self.thought_tokens}

    def complete(self, status: str = gi.COMPLETED, *, after_ms: float) -> None:
        """``interaction.completed`` with `status`, the usage and the times (no steps)."""
        self.event(gi.INTERACTION_COMPLETED, {"interaction": {
            "id": self.id, "status": status, "usage": self.usage(), "created": CREATED_AT,
            "updated": CREATED_AT, "service_tier": "standard", "object": "interaction",
            "model": self.model}}, after_ms=after_ms)

    def error(self, code: str, message: str, *, after_ms: float) -> None:
        """An ``error`` event: ``{"error": {"code", "message"}}``."""
        self.event(gi.ERROR, {"error": {"code": code, "message": message}}, after_ms=after_ms)

    # -- what a model writes ----------------------------------------------------------------

    def thought(self, *, summary: str | None = None, sign: str | None = None,
                first_ms: float) -> int:
        """A thought step: its summary as text items over several deltas, then its
        signature (a thought may hold only its signature, as the recordings' do)."""
        index = self.start({"type": gi.THOUGHT_STEP}, after_ms=first_ms)
        if summary:
            for n, piece in enumerate(self.pieces(summary)):
                self.thought_tokens += max(1, len(piece) // 4) * 3
                self.delta(index, {"content": {"type": "text", "text": piece},
                                   "type": gi.THOUGHT_SUMMARY_DELTA},
                           after_ms=self.pace.token() * 5 if n else self.pace.instant())
        if sign:
            self.delta(index, {"signature": sign, "type": gi.THOUGHT_SIGNATURE_DELTA},
                       after_ms=self.pace.token())
        self.stop(index, after_ms=self.pace.instant())
        return index

    def text(self, text: str, *, first_ms: float, cut_after: int | None = None,
             annotations: list[dict[str, Any]] | None = None) -> tuple[int, list[str]]:
        """A model_output step: `text` over several ``text`` deltas, a few words each (the
        first one with a multi-byte character torn across reads), then `annotations` (a
        ``text_annotation_delta`` for the text before it); returns its index and the pieces
        sent. `cut_after` stops after that many deltas (no stop)."""
        index = self.start({"type": gi.MODEL_OUTPUT_STEP}, after_ms=first_ms)
        pieces = self.pieces(text)
        torn = False
        for n, piece in enumerate(pieces):
            if cut_after is not None and n == cut_after:
                return index, pieces[:n]
            self.output_tokens += max(1, len(piece) // 4)
            tear = not torn and any(ord(ch) > 127 for ch in piece)
            torn = torn or tear
            self.delta(index, {"text": piece, "type": gi.TEXT_DELTA},
                       after_ms=self.pace.instant() if n == 0 else self.pace.token() * 5,
                       tear=tear)
        if annotations:
            self.delta(index, {"annotations": annotations, "type": gi.TEXT_ANNOTATION_DELTA},
                       after_ms=self.pace.token())
        self.stop(index, after_ms=self.pace.instant())
        return index, pieces

    def call(self, name: str, fragments: list[str], *, first_ms: float,
             ident: str | None = None) -> tuple[int, str]:
        """A function_call step: its start with id and name and ``arguments: {}`` (and the
        empty signature the recordings carry), one ``arguments_delta`` per fragment, its
        stop. Returns its index and id."""
        ident = ident or call_id(self.rng)
        index = self.start({"id": ident, "signature": "", "type": gi.FUNCTION_CALL_STEP,
                            "name": name, "arguments": {}}, after_ms=first_ms)
        for n, fragment in enumerate(fragments):
            self.output_tokens += max(1, len(fragment) // 4)
            self.delta(index, {"arguments": fragment, "type": gi.ARGUMENTS_DELTA},
                       after_ms=self.pace.instant() if n == 0 else self.pace.token())
        self.stop(index, after_ms=self.pace.instant())
        return index, ident

    def pieces(self, text: str) -> list[str]:
        """`text` in pieces of a few words, as the API streams them."""
        tokens = text_tokens(text, self.rng, merge=0.0)
        out: list[str] = []
        while tokens:
            take = self.rng.randint(3, 12)
            out.append("".join(tokens[:take]))
            tokens = tokens[take:]
        return out


def argument_fragments(text: str, rng: random.Random, *, low: int = 2, high: int = 9
                       ) -> list[str]:
    """A call's JSON text in small fragments, as ``arguments_delta`` events carry it."""
    out, rest = [], text
    while rest:
        take = rng.randint(low, high)
        out.append(rest[:take])
        rest = rest[take:]
    return out
