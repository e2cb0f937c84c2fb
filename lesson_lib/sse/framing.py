"""Lesson 1, framing: what a decoder that cuts a wire's body into events offers.

Most wires frame their events as server-sent events (`lesson_lib.sse.decoder`).
A wire with a framing of its own (Bedrock's binary event stream,
`lesson_lib.sse.bedrock_frames`) has its own decoder. Which wire takes which
is said by the wire's registry entry (`lesson_lib.wires.entry.Entry.decoder`);
a station downstream (`lesson_lib.turn.stream.TurnStream`) asks the entry and
never names a framing itself.

A decoder is push-driven, like `sse.SSEDecoder`: `feed(chunk, t)` returns
the events the chunk completed, `finish()` the ones the end of the body
completes (then it reports what never formed an event in `diagnostics`).
Its events read like `sse.ServerSentEvent`: `event`, `data` (the payload's
text), `start` and `end` (the byte range) and `t` (arrival, ms).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from ..diagnostics import Diagnostic


class Decoder(Protocol):
    """What a framing's decoder offers (see the module)."""

    diagnostics: list[Diagnostic]

    def feed(self, chunk: bytes, t: float | None = None) -> Sequence[Any]: ...

    def finish(self) -> Sequence[Any]: ...
