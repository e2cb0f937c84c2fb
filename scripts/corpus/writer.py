"""The capture writer: builds a constructed stream as messy as real ones.

`StreamBuilder` emits events one at a time, each with the pause before it
(synthetic timing), and adds what real streams do and documentation
examples don't: trailing padding inside the JSON, unstable key order,
extra fields, pings. `finish()` then cuts the body into network chunks the
way a socket delivers them (several small events coalesced into one read,
a large event split across reads, sometimes inside a UTF-8 character) and
returns the body with its chunk ends and arrival times.

Everything is driven by a seeded `random.Random`, so rebuilding the corpus
gives the same bytes.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

COALESCE_MS = 4.0     # events closer than this usually arrive in one read
MAX_READ = 1400       # a read larger than this is split (roughly one TCP segment)


def dumps(payload: Any, *, spaced: bool = False) -> str:
    """Compact JSON as the APIs send it (``spaced`` for the ``{"type": "ping"}`` style)."""
    if spaced:
        return json.dumps(payload, ensure_ascii=False)
    return json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


def shuffled(payload: dict[str, Any], rng: random.Random, keep_first: str | None = "type"
             ) -> dict[str, Any]:
    """The same object with its keys in another order (``keep_first`` stays first)."""
    keys = [k for k in payload if k != keep_first]
    rng.shuffle(keys)
    head = [keep_first] if keep_first in payload else []
    return {k: payload[k] for k in head + keys}


@dataclass
class _Piece:
    data: bytes
    at_ms: float


@dataclass
class StreamBuilder:
    """Accumulates SSE events with timing; see the module docstring."""

    seed: int
    pad_probability: float = 0.0   # chance of trailing spaces inside a payload (Anthropic)
    clock_ms: float = 0.0
    pieces: list[_Piece] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def wait(self, ms: float) -> None:
        """Advance the synthetic clock (the pause before the next event)."""
        self.clock_ms += ms

    def event(self, name: str | None, payload: Any, *, after_ms: float = 0.0,
              pad: int | None = None, spaced: bool = False, raw_data: str | None = None) -> None:
        """Emit one event: ``event: name`` (when given) and one ``data:`` line."""
        self.wait(after_ms)
        text = raw_data if raw_data is not None else dumps(payload, spaced=spaced)
        if pad is None and self.pad_probability and self.rng.random() < self.pad_probability:
            pad = self.rng.randint(1, 17)
        if pad and text.endswith("}"):
            text = text[:-1] + " " * pad + "}"   # as recorded: spaces before the last brace
        lines = (f"event: {name}\n" if name is not None else "") + f"data: {text}\n\n"
        self.pieces.append(_Piece(lines.encode("utf-8"), self.clock_ms))

    def raw(self, data: bytes | str, *, after_ms: float = 0.0) -> None:
        """Emit bytes exactly as given (a comment, ``data: [DONE]``, a cut tail)."""
        self.wait(after_ms)
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.pieces.append(_Piece(data, self.clock_ms))

    def cut(self, keep: int) -> None:
        """The connection dies: keep only the first `keep` bytes of the last piece."""
        last = self.pieces[-1]
        self.pieces[-1] = _Piece(last.data[:keep], last.at_ms)

    def finish(self) -> tuple[bytes, list[int], list[float]]:
        """The body, the byte offsets where reads ended, and their arrival times (ms).

        A read's time is when its last byte arrived. Events closer together
        than `COALESCE_MS` share a read; an event larger than `MAX_READ` is
        split over several; and now and then a read ends at a random byte
        inside an event, sometimes inside a UTF-8 character.
        """
        body = bytearray()
        ends: list[int] = []
        times: list[float] = []
        first: float | None = None   # arrival of the open read's first byte
        last = 0.0                   # arrival of its latest byte

        def close(at: int, t: float) -> None:
            ends.append(at)
            times.append(round(max(t, times[-1] if times else t), 1))

        for piece in self.pieces:
            at = piece.at_ms
            if first is not None and at - first > COALESCE_MS:
                close(len(body), last)
                first = None
            data = piece.data
            while len(data) > MAX_READ:
                cut = self.rng.randint(MAX_READ // 2, MAX_READ)
                body += data[:cut]
                data = data[cut:]
                close(len(body), at)
                first = None
                at += self.rng.uniform(0.2, 1.5)
            body += data
            if first is None:
                first = at
            last = max(last, at)
            if self.rng.random() < 0.08 and len(data) > 1:
                split = len(body) - self.rng.randint(1, len(data) - 1)
                if not ends or split > ends[-1]:
                    close(split, last)
                    first = last = last + self.rng.uniform(0.1, 0.9)
        if not ends or ends[-1] != len(body):
            close(len(body), last if first is not None else self.clock_ms)
        return bytes(body), ends, times
