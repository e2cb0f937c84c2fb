"""The Anthropic stream writer: Messages API events, paced like a live model.

`AnthropicWriter` sits on a `StreamBuilder` and speaks the Messages wire:
``message_start``, blocks opened at an index, deltas addressed to that
index, ``message_delta`` and ``message_stop``, ``ping`` and ``error``. It
adds what the real recordings show and documentation examples leave out:

- both payload styles seen in recordings: the current one (``model`` first,
  ``stop_details``, ``inference_geo``, full usage on ``message_delta``) and
  the older one (``id`` first, only ``output_tokens`` on ``message_delta``);
- ids in the providers' shape (``msg_01…``, ``toolu_01…``, ``req_011C…``)
  and opaque base64 tokens for signatures and encrypted fields;
- live pacing: a slow first token, text every 10-40 ms, and the pauses
  while tool arguments form, one key and value at a time;
- text cut into deltas at arbitrary places (inside words, escapes, and
  next to multi-byte characters), tool JSON cut into small fragments;
- now and then a network read that ends inside a multi-byte character.

Everything is drawn from the builder's seeded generator, so a capture
rebuilt from the same seed has the same bytes.
"""

from __future__ import annotations

import base64
import json
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .writer import StreamBuilder, dumps, shuffled

BASE58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

# What each requested model alias is reported as in `message_start`.
RESOLVED_MODEL = {
    "claude-sonnet-4-6": "claude-sonnet-4-6",
    "claude-opus-4-6": "claude-opus-4-6",
    "claude-haiku-4-5": "claude-haiku-4-5-20251001",
}

HELPER = "messages.stream + get_final_message()"   # the SDK helper the sidecars describe

FIRST_TOKEN_MS = (280.0, 900.0)    # from message_start to the first delta
TEXT_GAP_MS = (10.0, 40.0)         # between text deltas
HICCUP_MS = (70.0, 180.0)          # an occasional longer gap in the text
KEY_PAUSE_MS = (300.0, 1500.0)     # before each key/value of tool arguments
FRAGMENT_GAP_MS = (4.0, 30.0)      # between fragments of one key/value


def token_estimate(text: str) -> int:
    """A plausible token count for `text` (about 3.7 characters a token)."""
    return max(1, round(len(text) / 3.7))


def tool_json(value: dict[str, Any]) -> tuple[str, list[str]]:
    """The argument text as the API streams it, and its key/value members.

    The API writes ``{"a": 1, "b": "x"}`` (a space after ``:`` and ``,``)
    with non-ASCII characters raw. Each member is returned with the
    punctuation that precedes it, so the members concatenate to the text.
    """
    members = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}"
               for k, v in value.items()]
    if not members:
        return "{}", ["{}"]
    parts = ["{" + members[0]] + [", " + m for m in members[1:]]
    parts[-1] += "}"
    return "".join(parts), parts


class AnthropicWriter:
    """Emits one Messages API stream; see the module docstring.

    `style` is ``"current"`` (model first, stop_details, inference_geo, full
    usage on message_delta) or ``"older"`` (id first, output_tokens only).
    `shuffle_probability` reorders message and block keys now and then;
    `char_split_probability` is the chance that an event holding a
    multi-byte character arrives in two reads split inside it.
    """

    def __init__(self, seed: int, *, pad_probability: float = 0.45,
                 style: str = "current", shuffle_probability: float = 0.0,
                 char_split_probability: float = 0.3) -> None:
        self.builder = StreamBuilder(seed, pad_probability=pad_probability)
        self.rng = self.builder.rng
        self.style = style
        self.shuffle_probability = shuffle_probability
        self.char_split_probability = char_split_probability
        self.output_started = False

    # -- identity ----------------------------------------------------------

    def ident(self, prefix: str, length: int) -> str:
        """A random id in the providers' base58 alphabet: ``prefix`` + `length` chars."""
        return prefix + "".join(self.rng.choice(BASE58) for _ in range(length))

    def message_id(self) -> str:
        return self.ident("msg_01", 22)

    def tool_id(self) -> str:
        return self.ident("toolu_01", 22)

    def server_tool_id(self) -> str:
        return self.ident("srvtoolu_01", 22)

    def request_id(self) -> str:
        return self.ident("req_011C", 20)

    def opaque(self, size: int) -> str:
        """An opaque base64 token (signature, redacted data, encrypted field)."""
        payload = bytes(self.rng.getrandbits(8) for _ in range(size))
        head = bytes([0x12, (size & 0x7F) | 0x80, size >> 7, 0x0A, 0x46, 0x08, 0x07, 0x18, 0x02])
        return base64.b64encode(head + payload).decode("ascii")

    # -- timing helpers ----------------------------------------------------

    def pause(self, bounds: tuple[float, float]) -> float:
        """A random pause, rounded to 0.1 ms."""
        return round(self.rng.uniform(*bounds), 1)

    def next_gap(self, gap: tuple[float, float] = TEXT_GAP_MS) -> float:
        """The pause before the next delta: slow for the first one, then `gap`."""
        if not self.output_started:
            self.output_started = True
            return self.pause(FIRST_TOKEN_MS)
        if self.rng.random() < 0.06:
            return self.pause(HICCUP_MS)
        return self.pause(gap)

    def _maybe_shuffle(self, payload: dict[str, Any]) -> dict[str, Any]:
        if self.shuffle_probability and self.rng.random() < self.shuffle_probability:
            return shuffled(payload, self.rng)
        return payload

    def send(self, name: str, payload: dict[str, Any], *, after_ms: float = 0.0,
             pad: int | None = None) -> None:
        """One event, named as its payload's type (the API always repeats it).

        Now and then an event holding a multi-byte character reaches the
        client in two reads that split that character.
        """
        text = dumps(payload)
        wide = [i for i, ch in enumerate(text) if ord(ch) > 0x7F]
        if wide and self.rng.random() < self.char_split_probability:
            at = self.rng.choice(wide)
            head = f"event: {name}\ndata: {text[:at]}".encode()
            inside = self.rng.randint(1, len(text[at].encode()) - 1)
            data = f"event: {name}\ndata: {text}\n\n".encode()
            self.builder.raw(data[:len(head) + inside], after_ms=after_ms)
            self.builder.raw(data[len(head) + inside:], after_ms=self.pause((4.5, 16.0)))
            return
        self.builder.event(name, payload, after_ms=after_ms, pad=pad)

    # -- message envelope --------------------------------------------------

    def message_start(self, *, model: str, message_id: str, input_tokens: int,
                      output_tokens: int = 1, cache_read: int = 0, cache_write: int = 0,
                      geo: str = "global", after_ms: float | None = None) -> None:
        """``message_start``: the empty message, its id, model and opening usage."""
        usage: dict[str, Any] = {
            "input_tokens": input_tokens,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
            "cache_creation": {"ephemeral_5m_input_tokens": cache_write,
                               "ephemeral_1h_input_tokens": 0},
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }
        resolved = RESOLVED_MODEL.get(model, model)
        if self.style == "current":
            usage["inference_geo"] = geo
            message = {"model": resolved, "id": message_id, "type": "message",
                       "role": "assistant", "content": [], "stop_reason": None,
                       "stop_sequence": None, "stop_details": None, "usage": usage}
        else:
            del usage["cache_creation"]
            message = {"id": message_id, "type": "message", "role": "assistant",
                       "model": resolved, "content": [], "stop_reason": None,
                       "stop_sequence": None, "usage": usage}
        message = self._maybe_shuffle(message)
        wait = self.pause((240.0, 620.0)) if after_ms is None else after_ms
        self.send("message_start", {"type": "message_start", "message": message}, after_ms=wait)

    def ping(self, after_ms: float | None = None) -> None:
        """``ping``, in the spaced style the API uses, never padded."""
        wait = self.pause((0.5, 6.0)) if after_ms is None else after_ms
        self.builder.event("ping", {"type": "ping"}, after_ms=wait, spaced=True, pad=0)

    def maybe_ping(self, probability: float) -> None:
        """A ping, sometimes: real streams send none, one, or several."""
        if self.rng.random() < probability:
            self.ping()

    def message_delta(self, *, stop_reason: str | None, output_tokens: int,
                      input_tokens: int | None = None, cache_read: int = 0,
                      server_tool_use: dict[str, int] | None = None,
                      stop_details: dict[str, Any] | None = None,
                      stop_sequence: str | None = None,
                      container: dict[str, Any] | None = None,
                      iterations: list[dict[str, Any]] | None = None,
                      after_ms: float | None = None) -> None:
        """``message_delta``: the stop reason and the cumulative usage (with the matched
        `stop_sequence`, the code-execution `container` and per-call `iterations` when
        given)."""
        delta: dict[str, Any] = {"stop_reason": stop_reason, "stop_sequence": stop_sequence}
        if container is not None:
            delta["container"] = container
        if self.style == "current":
            delta["stop_details"] = stop_details
            usage: dict[str, Any] = {"input_tokens": input_tokens,
                                     "cache_creation_input_tokens": 0,
                                     "cache_read_input_tokens": cache_read,
                                     "output_tokens": output_tokens}
        else:
            usage = {"output_tokens": output_tokens}
        if server_tool_use is not None:
            usage["server_tool_use"] = server_tool_use
        if iterations is not None:
            usage["iterations"] = iterations
        wait = self.pause((12.0, 70.0)) if after_ms is None else after_ms
        self.send("message_delta", {"type": "message_delta", "delta": delta, "usage": usage},
                  after_ms=wait)

    def message_stop(self) -> None:
        """``message_stop``: the stream's own terminal event."""
        self.send("message_stop", {"type": "message_stop"}, after_ms=self.pause((0.3, 3.0)))

    def error(self, kind: str, message: str, request_id: str,
              after_ms: float | None = None) -> None:
        """An in-band ``error`` event; nothing follows it."""
        payload = {"type": "error", "error": {"type": kind, "message": message},
                   "request_id": request_id}
        wait = self.pause((150.0, 900.0)) if after_ms is None else after_ms
        self.send("error", payload, after_ms=wait)

    # -- blocks ------------------------------------------------------------

    def block_start(self, index: int, block: dict[str, Any],
                    after_ms: float | None = None) -> None:
        """``content_block_start``: a slot opens, with its type and identity."""
        wait = self.pause((1.0, 40.0)) if after_ms is None else after_ms
        payload = {"type": "content_block_start", "index": index,
                   "content_block": self._maybe_shuffle(block)}
        self.send("content_block_start", payload, after_ms=wait)

    def block_stop(self, index: int, after_ms: float | None = None) -> None:
        """``content_block_stop``: the slot at `index` is complete."""
        wait = self.pause((2.0, 35.0)) if after_ms is None else after_ms
        self.send("content_block_stop", {"type": "content_block_stop", "index": index},
                  after_ms=wait)

    def delta(self, index: int, delta: dict[str, Any], after_ms: float) -> None:
        """One ``content_block_delta`` addressed to the slot at `index`."""
        self.send("content_block_delta",
                  {"type": "content_block_delta", "index": index, "delta": delta},
                  after_ms=after_ms)

    def split_text(self, text: str, sizes: tuple[int, int] = (2, 28)) -> list[str]:
        """Cut `text` into delta-sized pieces at arbitrary places.

        A cut may fall inside a word; it never separates a character from
        a combining mark, variation selector or joiner that follows it.
        """
        pieces: list[str] = []
        start = 0
        while start < len(text):
            end = min(len(text), start + self.rng.randint(*sizes))
            while end < len(text) and _clings(text[end]):
                end += 1
            pieces.append(text[start:end])
            start = end
        return pieces

    def text(self, index: int, text: str, *, sizes: tuple[int, int] = (2, 28),
             gap: tuple[float, float] = TEXT_GAP_MS) -> list[str]:
        """Stream `text` into the text slot at `index` as ``text_delta`` events."""
        pieces = self.split_text(text, sizes)
        for piece in pieces:
            self.delta(index, {"type": "text_delta", "text": piece}, self.next_gap(gap))
        return pieces

    def text_block(self, index: int, text: str, *, ping_probability: float = 0.0,
                   after_ms: float | None = None, sizes: tuple[int, int] = (2, 28)) -> None:
        """A whole text block: start (empty text), deltas, stop."""
        self.block_start(index, {"type": "text", "text": ""}, after_ms=after_ms)
        self.maybe_ping(ping_probability)
        self.text(index, text, sizes=sizes)
        self.block_stop(index)

    def cited_text_block(self, index: int, text: str, citations: list[dict[str, Any]],
                         after_ms: float | None = None) -> None:
        """A cited text block: start with ``"citations": []``, citations, then text."""
        self.block_start(index, {"citations": [], "type": "text", "text": ""},
                         after_ms=after_ms)
        for citation in citations:
            self.delta(index, {"type": "citations_delta", "citation": citation},
                       self.next_gap((2.0, 12.0)))
        self.text(index, text)
        self.block_stop(index)

    def thinking(self, index: int, thinking: str, signature: str) -> None:
        """A thinking block: deltas, an empty delta, the signature, stop."""
        self.block_start(index, {"type": "thinking", "thinking": "", "signature": ""})
        self.maybe_ping(0.7)
        self.text_like(index, "thinking_delta", "thinking", thinking)
        self.delta(index, {"type": "thinking_delta", "thinking": ""}, self.pause((8.0, 30.0)))
        self.delta(index, {"type": "signature_delta", "signature": signature},
                   self.pause((20.0, 90.0)))
        self.block_stop(index)

    def text_like(self, index: int, delta_type: str, field: str, text: str) -> None:
        """Stream `text` as deltas of another text-like type (``thinking_delta``)."""
        for piece in self.split_text(text, (3, 36)):
            self.delta(index, {"type": delta_type, field: piece}, self.next_gap(TEXT_GAP_MS))

    # -- tool arguments ------------------------------------------------------

    def argument_fragments(self, value: dict[str, Any], *, sizes: tuple[int, int] = (1, 14),
                           lead_empty: bool = True) -> list[tuple[str, float]]:
        """The ``partial_json`` fragments for `value`, each with the pause before it.

        The model writes one complete key and value at a time: a long
        pause before each member, then its fragments in a quick burst.
        Fragments are cut anywhere, inside keys, strings and escapes.
        """
        out: list[tuple[str, float]] = []
        if lead_empty:
            out.append(("", self.pause(FRAGMENT_GAP_MS)))
        _, members = tool_json(value)
        for member in members:
            start = 0
            while start < len(member):
                end = min(len(member), start + self.rng.randint(*sizes))
                wait = self.pause(KEY_PAUSE_MS if start == 0 else FRAGMENT_GAP_MS)
                out.append((member[start:end], wait))
                start = end
        return out

    def input_json(self, index: int, fragments: list[tuple[str, float]]) -> None:
        """Send tool-argument fragments as ``input_json_delta`` events.

        When these are the message's first deltas, the first one waits for
        the slow first token instead of its planned pause.
        """
        for fragment, wait in fragments:
            if not self.output_started:
                wait = self.next_gap()
            self.delta(index, {"type": "input_json_delta", "partial_json": fragment}, wait)

    def tool_use_start(self, index: int, tool_id: str, name: str, *,
                       server: bool = False, caller: bool = True,
                       after_ms: float | None = None) -> None:
        """Open a ``tool_use`` (or ``server_tool_use``) slot with an empty input."""
        block: dict[str, Any] = {"type": "server_tool_use" if server else "tool_use",
                                 "id": tool_id, "name": name, "input": {}}
        if caller:
            block["caller"] = {"type": "direct"}
        self.block_start(index, block, after_ms=after_ms)

    def tool_use_block(self, index: int, tool_id: str, name: str, value: dict[str, Any], *,
                       server: bool = False, caller: bool = True,
                       sizes: tuple[int, int] = (1, 14), after_ms: float | None = None) -> int:
        """A whole tool call: start, argument fragments over pauses, stop.

        Returns how many argument fragments it sent (a sidecar can quote it).
        """
        self.tool_use_start(index, tool_id, name, server=server, caller=caller,
                            after_ms=after_ms)
        fragments = self.argument_fragments(value, sizes=sizes)
        self.input_json(index, fragments)
        self.block_stop(index)
        return len(fragments)

    # -- the end -------------------------------------------------------------

    def finish(self) -> tuple[bytes, dict[str, list]]:
        """The body and its ``chunks`` sidecar entry."""
        body, ends, times = self.builder.finish()
        return body, {"ends": ends, "t_ms": times}


def _clings(ch: str) -> bool:
    """True for a character that must stay with the one before it."""
    return ch in "\u200d\ufe0f\ufe0e" or unicodedata.category(ch) in ("Mn", "Me")


def compact(payload: Any) -> str:
    """Compact JSON the way the API writes it (for raw tails and error bodies)."""
    return dumps(payload)


@dataclass
class Scenario:
    """What a capture's builder says about it; becomes most of the sidecar.

    `sdk` records what the official SDK's streaming helper does with the
    bytes (discovered by replaying, asserted by the tests).
    """

    demonstrates: str
    request: dict[str, Any]
    based_on: str
    sdk: dict[str, Any]
    status: int = 200
    turn: dict[str, Any] | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)
    # Headers that depend on the response's date (rate-limit resets), given that date.
    dated_headers: Callable[[datetime], dict[str, str]] | None = None
