"""A Chat Completions stream in the making: ``chat.completion.chunk`` payloads, then ``[DONE]``.

Chat has no event names. Every chunk repeats the envelope (id, created,
model, fingerprint) and carries ``choices[i].delta`` fragments; tool calls
are addressed by ``tool_calls[j].index``, and only their first fragment
names the call. `ChatStream` writes chunks in the dialect of one server:

- ``"openai"``: api.openai.com today: ``service_tier``, ``system_fingerprint``,
  ``usage: null`` on every chunk when usage was requested, an
  ``obfuscation`` string on every chunk;
- ``"deepseek"``: uuid ids, ``reasoning_content`` in deltas, usage on the
  chunk that finishes, ``: keep-alive`` comments while it thinks;
- ``"ollama"``: short numeric ids, ``fp_ollama``, no ``logprobs`` key, whole
  tool calls in one fragment;
- ``"compatible"``: a self-hosted compatible server: hex ids, tool call ids
  minted per call, no fingerprint.
"""

from __future__ import annotations

from typing import Any

from .openai_ids import (
    chat_completion_id,
    hex_digits,
    obfuscation,
    system_fingerprint,
    uuid4,
)
from .openai_pacing import Pace, emit_torn, json_tokens, starts_key, text_tokens
from .writer import StreamBuilder

_ABSENT = object()


class ChatStream:
    """Emit the chunks of one Chat Completions stream; see the module docstring."""

    def __init__(self, seed: int, *, model: str, created: int, dialect: str = "openai",
                 include_usage: bool = True) -> None:
        self.builder = StreamBuilder(seed=seed)
        self.rng = self.builder.rng
        self.pace = Pace(self.rng)
        self.model = model
        self.created = created
        self.dialect = dialect
        self.include_usage = include_usage
        self.completion_tokens = 0
        if dialect == "openai":
            self.id = chat_completion_id(self.rng)
            self.fingerprint: str | None = system_fingerprint(self.rng)
        elif dialect == "deepseek":
            self.id = uuid4(self.rng)
            self.fingerprint = f"fp_{hex_digits(self.rng, 10)}_prod0820_fp8_kvcache"
        elif dialect == "ollama":
            self.id = f"chatcmpl-{self.rng.randint(100, 999)}"
            self.fingerprint = "fp_ollama"
        else:
            self.id = "chatcmpl-" + hex_digits(self.rng, 32)
            self.fingerprint = None

    # -- chunks --------------------------------------------------------------

    def chunk(self, choices: list[dict[str, Any]], *, after_ms: float,
              usage: Any = _ABSENT, torn: bool = False,
              fields: dict[str, Any] | None = None) -> None:
        """Send one ``chat.completion.chunk`` (`torn`: in two reads split inside a character;
        `fields`: chunk-level fields before ``usage``, e.g. ``moderation``)."""
        payload: dict[str, Any] = {"id": self.id, "object": "chat.completion.chunk",
                                   "created": self.created, "model": self.model}
        if self.dialect == "openai":
            payload["service_tier"] = "default"
        if self.fingerprint is not None:
            payload["system_fingerprint"] = self.fingerprint
        payload["choices"] = choices
        payload.update(fields or {})
        if usage is not _ABSENT:
            payload["usage"] = usage
        elif self.include_usage or self.dialect == "deepseek":
            payload["usage"] = None
        if self.dialect == "openai":
            payload["obfuscation"] = obfuscation(self.rng, _visible(choices))
        if torn:
            emit_torn(self.builder, None, payload, after_ms=after_ms,
                      late_ms=self.pace.late_half())
        else:
            self.builder.event(None, payload, after_ms=after_ms)

    def choice(self, index: int, delta: dict[str, Any],
               finish_reason: str | None = None) -> dict[str, Any]:
        """One entry of ``choices`` in this dialect."""
        if self.dialect == "ollama":
            return {"index": index, "delta": delta, "finish_reason": finish_reason}
        return {"index": index, "delta": delta, "logprobs": None, "finish_reason": finish_reason}

    def say(self, index: int, delta: dict[str, Any], *, after_ms: float,
            torn: bool = False) -> None:
        """A chunk carrying one delta for one choice."""
        self.chunk([self.choice(index, delta)], after_ms=after_ms, torn=torn)

    # -- what the model writes -------------------------------------------------

    def opening(self, index: int = 0, *, after_ms: float, **fields: Any) -> None:
        """The first delta of a choice: the role, and ``content``/``refusal`` as the server sets them."""
        delta: dict[str, Any] = {"role": "assistant"}
        if self.dialect == "openai":
            delta.update({"content": "", "refusal": None, "annotations": []})
        elif self.dialect == "deepseek":
            delta.update({"content": None, "reasoning_content": ""})
        else:
            delta["content"] = ""
        delta.update(fields)
        self.say(index, delta, after_ms=after_ms)

    def text(self, text: str, index: int = 0, *, first_ms: float, field: str = "content",
             stop_at: int | None = None, tear: bool = False) -> str:
        """Stream `text` into one field (``content``, ``refusal``, ``reasoning_content``).

        With `tear`, the first token holding a non-ASCII character arrives
        split inside that character.
        """
        sent = ""
        tokens = text_tokens(text, self.rng)[:stop_at]
        for i, token in enumerate(tokens):
            torn = tear and not token.isascii()
            tear = tear and not torn
            delta: dict[str, Any] = {field: token}
            if self.dialect == "deepseek":
                delta = ({"content": None, "reasoning_content": token}
                         if field == "reasoning_content"
                         else {"content": token, "reasoning_content": None})
            self.say(index, delta, after_ms=first_ms if i == 0 else self.pace.token(), torn=torn)
            sent += token
            self.completion_tokens += 1
        return sent

    def tool_start(self, slot: int, call_id: str, name: str, *, after_ms: float,
                   index: int = 0, arguments: str = "", opening: bool = False) -> None:
        """The first fragment of a call: ``id``, ``type``, ``function.name``, ``arguments``."""
        call = {"index": slot, "id": call_id, "type": "function",
                "function": {"name": name, "arguments": arguments}}
        delta: dict[str, Any] = {"tool_calls": [call]}
        if opening:
            delta = {"role": "assistant", "content": None, **delta}
            if self.dialect == "openai":
                delta.update({"refusal": None, "annotations": []})
        self.say(index, delta, after_ms=after_ms)
        self.completion_tokens += 1

    def tool_fragment(self, slot: int, fragment: str, *, after_ms: float,
                      index: int = 0) -> None:
        """A later fragment of a call's arguments: only ``index`` and ``arguments``."""
        self.say(index, {"tool_calls": [{"index": slot, "function": {"arguments": fragment}}]},
                 after_ms=after_ms)
        self.completion_tokens += 1

    def argument_fragments(self, arguments: str) -> list[tuple[str, float]]:
        """The fragments of `arguments` with the pause before each (long at new keys)."""
        out: list[tuple[str, float]] = []
        previous = ""
        for i, fragment in enumerate(json_tokens(arguments, self.rng)):
            gap = self.pace.key_pause() if i > 1 and starts_key(previous) else self.pace.token()
            out.append((fragment, gap))
            previous = fragment
        return out

    def tool_arguments(self, slot: int, arguments: str, *, index: int = 0) -> None:
        """Stream a whole call's arguments, one fragment per chunk."""
        for fragment, gap in self.argument_fragments(arguments):
            self.tool_fragment(slot, fragment, after_ms=gap, index=index)

    def finish(self, reason: str, index: int = 0, *, usage: Any = _ABSENT,
               delta: dict[str, Any] | None = None) -> None:
        """The chunk that sets a choice's ``finish_reason`` (with an empty delta)."""
        self.chunk([self.choice(index, delta or {}, reason)], after_ms=self.pace.instant(),
                   usage=usage)

    def usage_chunk(self, prompt_tokens: int, completion_tokens: int | None = None, *,
                    reasoning_tokens: int = 0, cached_tokens: int = 0) -> None:
        """The ``choices: []`` chunk that carries usage (``stream_options.include_usage``)."""
        self.chunk([], after_ms=self.pace.instant(),
                   usage=self.usage(prompt_tokens, completion_tokens,
                                    reasoning_tokens=reasoning_tokens, cached_tokens=cached_tokens))

    def usage(self, prompt_tokens: int, completion_tokens: int | None = None, *,
              reasoning_tokens: int = 0, cached_tokens: int = 0) -> dict[str, Any]:
        """A `CompletionUsage` in this dialect."""
        completion = (completion_tokens if completion_tokens is not None
                      else self.completion_tokens + reasoning_tokens)
        out: dict[str, Any] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion,
                               "total_tokens": prompt_tokens + completion}
        if self.dialect == "deepseek":
            out.update({"prompt_tokens_details": {"cached_tokens": cached_tokens},
                        "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
                        "prompt_cache_hit_tokens": cached_tokens,
                        "prompt_cache_miss_tokens": prompt_tokens - cached_tokens})
        else:
            out.update({"prompt_tokens_details": {"cached_tokens": cached_tokens,
                                                  "audio_tokens": 0},
                        "completion_tokens_details": {"reasoning_tokens": reasoning_tokens,
                                                      "audio_tokens": 0,
                                                      "accepted_prediction_tokens": 0,
                                                      "rejected_prediction_tokens": 0}})
        return out

    def done(self) -> None:
        """The ``data: [DONE]`` sentinel that ends a Chat stream."""
        self.builder.raw("data: [DONE]\n\n", after_ms=self.pace.instant())

    def keep_alive(self, *, after_ms: float) -> None:
        """An SSE comment line some servers send while the model is busy."""
        self.builder.raw(": keep-alive\n\n", after_ms=after_ms)


def _visible(choices: list[dict[str, Any]]) -> str:
    """The text a chunk carries, which its obfuscation pads."""
    out = ""
    for choice in choices:
        delta = choice.get("delta") or {}
        for key in ("content", "refusal"):
            if isinstance(delta.get(key), str):
                out += delta[key]
        for call in delta.get("tool_calls") or []:
            out += (call.get("function") or {}).get("arguments") or ""
    return out
