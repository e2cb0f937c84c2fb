"""Lesson 1, framing: which decoder cuts a wire's body into events.

Most wires frame their events as server-sent events (`lesson_lib.sse.decoder`).
A wire with a framing of its own (Bedrock's binary event stream) has its
decoder named in `FRAMINGS`; every other wire gets the SSE decoder. A
station downstream (`lesson_lib.turn.stream.TurnStream`) asks `decoder_for`
and never names a framing itself.

A decoder is push-driven, like `sse.SSEDecoder`: `feed(chunk, t)` returns
the events the chunk completed, `finish()` the ones the end of the body
completes (then it reports what never formed an event in `diagnostics`).
Its events read like `sse.ServerSentEvent`: `event`, `data` (the payload's
text), `start` and `end` (the byte range) and `t` (arrival, ms).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from ..diagnostics import Diagnostic
from .bedrock_frames import CONVERSE, INVOKE, FrameEventDecoder
from .decoder import SSEDecoder


class Decoder(Protocol):
    """What a framing's decoder offers (see the module)."""

    diagnostics: list[Diagnostic]

    def feed(self, chunk: bytes, t: float | None = None) -> Sequence[Any]: ...

    def finish(self) -> Sequence[Any]: ...


# The wires whose framing is not SSE, each with the class (or factory) of its decoder:
# Bedrock's two APIs frame their events in binary (`lesson_lib.sse.eventstream`).
FRAMINGS: dict[str, Callable[[], Decoder]] = {CONVERSE: FrameEventDecoder,
                                              INVOKE: FrameEventDecoder}


def decoder_for(wire: str | None) -> Decoder:
    """A fresh decoder for one body on `wire`: its own framing's, else SSE's."""
    return FRAMINGS.get(wire or "", SSEDecoder)()
