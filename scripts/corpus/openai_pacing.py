"""How a model's output is cut into deltas, and how long each one takes to arrive.

Text streams roughly one token per delta: a word with its leading space, a
run of punctuation, now and then half of a long word, and now and then two
tokens merged into one delta when the server flushes late. Tool arguments
stream the same way but as JSON: ``{"``, ``location``, ``":"``, ``Paris``,
``","``, … The pauses follow live recordings: a slow first token (hundreds
of milliseconds), then a delta every 10-40 ms with the odd hiccup, and
while arguments form a long pause at each new key (the model is deciding
what comes next).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from .writer import StreamBuilder, dumps

_TEXT_TOKEN = re.compile(r" ?\w+|\n+| ?[^\w\s]+| +", re.UNICODE)
_JSON_TOKEN = re.compile(r'\{"|"\s*:\s*"|"\s*,\s*"|"\s*:\s*|,\s*"|"\}|\}|\]|\[| ?\w+|.', re.DOTALL)


def text_tokens(text: str, rng: random.Random, *, merge: float = 0.08) -> list[str]:
    """Cut prose into token-sized deltas; ``"".join`` of the result is `text`."""
    pieces: list[str] = []
    for token in _TEXT_TOKEN.findall(text):
        word = token.strip()
        if len(word) > 7 and rng.random() < 0.5:
            cut = len(token) - len(word) + rng.randint(3, len(word) - 3)
            pieces += [token[:cut], token[cut:]]
        else:
            pieces.append(token)
    assert "".join(pieces) == text, "tokenising must not lose characters"
    return _merge_some(pieces, rng, merge)


def json_tokens(arguments: str, rng: random.Random) -> list[str]:
    """Cut a JSON argument string into the fragments a model emits."""
    pieces: list[str] = []
    for token in _JSON_TOKEN.findall(arguments):
        if len(token) > 6 and token[0] not in '{",:' and rng.random() < 0.6:
            cut = rng.randint(2, len(token) - 2)
            pieces += [token[:cut], token[cut:]]
        else:
            pieces.append(token)
    assert "".join(pieces) == arguments, "tokenising must not lose characters"
    return pieces


def starts_key(previous: str) -> bool:
    """True when the fragment after `previous` is the name of a new object key."""
    return previous.endswith(('{"', ',"', ', "'))


def _merge_some(pieces: list[str], rng: random.Random, probability: float) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        if out and rng.random() < probability:
            out[-1] += piece
        else:
            out.append(piece)
    return out


@dataclass
class Pace:
    """Synthetic but realistic gaps between events, in milliseconds."""

    rng: random.Random

    def first_token(self, low: float = 280.0, high: float = 900.0) -> float:
        """Time to first token: the model reads the prompt before it writes."""
        return round(self.rng.uniform(low, high), 1)

    def token(self) -> float:
        """The gap between two deltas: ~10-40 ms, with an occasional stall."""
        if self.rng.random() < 0.04:
            return round(self.rng.uniform(70.0, 220.0), 1)
        return round(self.rng.uniform(9.0, 40.0), 1)

    def key_pause(self) -> float:
        """The pause before a new key of the tool arguments (300-1500 ms)."""
        return round(self.rng.uniform(300.0, 1500.0), 1)

    def late_half(self) -> float:
        """How much later the second half of a torn event arrives."""
        return round(self.rng.uniform(5.0, 30.0), 1)

    def settle(self) -> float:
        """The server totting up usage before the terminal event (a few ms)."""
        return round(self.rng.uniform(5.0, 40.0), 1)

    def instant(self) -> float:
        """Events written back to back by the server (usually one network read)."""
        return round(self.rng.uniform(0.05, 1.5), 2)

    def thinking(self, low: float = 900.0, high: float = 3500.0) -> float:
        """A reasoning model working before its next visible event."""
        return round(self.rng.uniform(low, high), 1)


def emit_torn(builder: StreamBuilder, name: str | None, payload: dict, *, after_ms: float,
              late_ms: float) -> None:
    """Emit an event whose bytes arrive in two reads, the first ending inside a character.

    TCP segments and proxy flushes ignore characters: a read can end after
    the first byte of ``é``. The cut goes after the first byte of the first
    multi-byte character (or in the middle when there is none), and the
    rest arrives `late_ms` later, so the writer keeps the two reads apart.
    """
    line = (f"event: {name}\n" if name is not None else "") + f"data: {dumps(payload)}\n\n"
    data = line.encode("utf-8")
    cut = next((i + 1 for i, byte in enumerate(data) if byte >= 0xC0), len(data) // 2)
    builder.raw(data[:cut], after_ms=after_ms)
    builder.raw(data[cut:], after_ms=late_ms)
