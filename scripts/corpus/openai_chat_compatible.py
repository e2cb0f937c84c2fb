"""Chat captures from compatible servers that bend the format: typed content parts, padding,
no ``[DONE]``, an error inside a chunk after ``finish_reason: length``.

Each imitates a real recording in the shared reference set
(``openai-chat-compatible/``) in a new conversation: the envelope fields those
servers add (Mistral's ``p`` padding; OpenRouter's ``provider``,
``native_finish_reason``, ``reasoning`` and an ``error`` inside a chunk) and
their irregular ends.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

from .openai_chat_common import BASE, HELPER, WIRE, user
from .openai_chat_stream import ChatStream
from .openai_ids import hex_digits
from .openai_pacing import text_tokens
from .openai_sidecar import sdk_expectation, write

_PAD = string.ascii_lowercase + string.digits


def _padded(s: ChatStream, payload: dict[str, Any]) -> dict[str, Any]:
    """Mistral's ``p``: a run of the alphabet of random length that pads a chunk's size."""
    return {**payload, "p": _PAD[:s.rng.randint(4, 34)]}


def thinking_parts(root: Path) -> Path:
    """Mistral style: ``delta.content`` as typed parts (thinking, then text), ``p`` padding,
    usage on the finishing chunk, and no ``[DONE]``."""
    thinking = ("The user wants 24 × 15. Split it: 24 × 10 = 240 and 24 × 5 = 120, so "
                "240 + 120 = 360. Check: 360 / 15 = 24. Good.")
    answer = "24 × 15 = 360."
    model = "magistral-small-latest"
    req = {"model": model, "messages": user("What is 24 times 15?"), "stream": True}
    s = ChatStream(213, model=model, created=1768011111, dialect="compatible",
                   include_usage=False)
    s.id = hex_digits(s.rng, 32)

    def send(delta: dict[str, Any], *, after_ms: float, finish: str | None = None,
             usage: dict[str, Any] | None = None) -> None:
        payload: dict[str, Any] = {"id": s.id, "object": "chat.completion.chunk",
                                   "created": s.created, "model": s.model,
                                   "choices": [{"index": 0, "delta": delta,
                                                "finish_reason": finish}]}
        if usage is not None:
            payload["usage"] = usage
        s.builder.event(None, payload if delta.get("role") else _padded(s, payload),
                        after_ms=after_ms)

    send({"role": "assistant", "content": ""}, after_ms=s.pace.first_token(300, 600))
    send({"content": ""}, after_ms=s.pace.token())
    tokens = text_tokens(thinking, s.rng)
    for i, token in enumerate(tokens):
        part: dict[str, Any] = {"type": "thinking", "thinking": [{"type": "text", "text": token}]}
        if i % 7 != 3:                  # most parts say closed: true, a few say nothing
            part["closed"] = True
        send({"content": [part]}, after_ms=s.pace.token())
    words = text_tokens(answer, s.rng)
    send({"content": [{"type": "text", "text": words[0]}]}, after_ms=s.pace.first_token(40, 90))
    for word in words[1:-1]:
        send({"content": word}, after_ms=s.pace.token())
    completion = len(tokens) + len(words)
    send({"content": words[-1]}, after_ms=s.pace.token(), finish="stop",
         usage={"prompt_tokens": 11, "total_tokens": 11 + completion,
                "completion_tokens": completion, "prompt_tokens_details": {"cached_tokens": 0}})
    plain = "".join(words[1:])
    return write(root, WIRE, "thinking-parts-no-done", s.builder, request=req,
                 response={"status": 200, "headers": {"content-type": "text/event-stream"}},
                 demonstrates="a compatible server (Mistral style) streams content as typed "
                              "parts (thinking, then text) with a padding field p, and ends "
                              "without [DONE] after the finish_reason: a reasoning block, a "
                              "text block, and an end taken with a warning",
                 based_on="the recorded Mistral stream in the shared reference captures "
                          "(openai-chat-compatible/mistral-thinking-array-content): its typed "
                          "parts, its p padding, its usage on the finishing chunk and its body "
                          "without [DONE]",
                 sdk=sdk_expectation(HELPER, "the helper cannot merge a list into the string "
                                     "content it holds: its message keeps only the plain-"
                                     "string fragments, dropping every thinking part and the "
                                     "first text part; its text events print the text parts",
                                     text=answer,
                                     final={"choices.0.message.content": plain}))


def length_then_error(root: Path) -> Path:
    """OpenRouter style: SSE comments while queued, ``reasoning`` deltas, ``finish_reason:
    length`` (twice), then an ``error`` object inside a chunk that also carries usage."""
    reasoning = "The user says hello. I should greet them back and offer"
    model = "minimax/minimax-m2:free"
    req = {"model": model, "messages": user("Hello!"), "max_tokens": 12, "stream": True}
    s = ChatStream(214, model=model, created=1768022222, dialect="compatible",
                   include_usage=False)
    s.id = f"gen-{s.created}-{hex_digits(s.rng, 20)}"

    def send(choice: dict[str, Any], **extra: Any) -> None:
        payload: dict[str, Any] = {"id": s.id, "provider": "Minimax", **extra, "model": model,
                                   "object": "chat.completion.chunk", "created": s.created,
                                   "choices": [choice]}
        s.builder.event(None, payload, after_ms=s.pace.token())

    def choice(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        return {"index": 0, "delta": delta, "finish_reason": finish,
                "native_finish_reason": finish, "logprobs": None}

    for _ in range(s.rng.randint(6, 12)):
        s.builder.raw(": OPENROUTER PROCESSING\n\n", after_ms=s.pace.thinking(300, 700))
    tokens = text_tokens(reasoning, s.rng)
    for i, token in enumerate(tokens):
        delta = {"role": "assistant", "content": "", "reasoning": token,
                 "reasoning_details": [{"type": "reasoning.text", "text": token, "index": 0,
                                        "format": None}]}
        send(choice(delta, "length" if i == len(tokens) - 1 else None))
    send(choice({"role": "assistant", "content": "", "reasoning": None,
                 "reasoning_details": []}, "length"))
    usage = {"prompt_tokens": 8, "completion_tokens": 12, "total_tokens": 20, "cost": 0,
             "is_byok": False, "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
             "completion_tokens_details": {"reasoning_tokens": 12, "image_tokens": 0}}
    payload = {"id": s.id, "provider": "Minimax",
               "error": {"code": 400, "message": "Token limit reached"}, "model": model,
               "object": "chat.completion.chunk", "created": s.created,
               "choices": [choice({"role": "assistant", "content": ""}, None)], "usage": usage}
    s.builder.event(None, payload, after_ms=s.pace.instant())
    s.done()
    return write(root, WIRE, "length-then-error-in-chunk", s.builder, request=req,
                 response={"status": 200, "headers": {"content-type": "text/event-stream"}},
                 demonstrates="a compatible server (OpenRouter style) sends comment lines while "
                              "queued, a finish_reason length (twice), then an error object "
                              "inside a chunk that also has choices and usage: an in-band "
                              "error, so the turn failed, not completed",
                 based_on="the recorded OpenRouter stream in the shared reference captures "
                          "(openai-chat-compatible/openrouter-comments-length-then-error): its "
                          "comments, provider, native_finish_reason, reasoning and "
                          "reasoning_details deltas, and its error chunk",
                 sdk=sdk_expectation(HELPER, "the SDK raises APIError at the chunk holding "
                                     "the error, with the error object alone (the usage beside "
                                     "it is lost)", raises="APIError",
                                     error_contains="Token limit reached", text=""))


_SAFE = {"filtered": False, "severity": "safe"}
_FILTERS = {"hate": _SAFE, "self_harm": _SAFE, "sexual": _SAFE, "violence": _SAFE}


def azure_filter_results(root: Path) -> Path:
    """Azure OpenAI style: a first chunk that only carries the prompt's filter results and
    names nothing (``id: ""``, ``model: ""``, ``created: 0``, ``object: ""``), then chunks
    with the real names, each choice with its ``content_filter_results``."""
    answer = "Bonjour ! Comment puis-je vous aider aujourd’hui ?"
    model = "gpt-4o-2024-11-20"
    req = {"model": "gpt-4o", "messages": user("Say hello in French."), "stream": True}
    s = ChatStream(215, model=model, created=1768033333, dialect="compatible",
                   include_usage=False)
    s.fingerprint = "fp_ee1d74bde0"

    def send(delta: dict[str, Any], *, after_ms: float, finish: str | None = None) -> None:
        filters = _FILTERS if delta.get("content") else {}
        s.builder.event(None, {
            "choices": [{"content_filter_results": filters, "delta": delta,
                         "finish_reason": finish, "index": 0, "logprobs": None}],
            "created": s.created, "id": s.id, "model": s.model,
            "object": "chat.completion.chunk", "system_fingerprint": s.fingerprint},
            after_ms=after_ms)

    s.builder.event(None, {"choices": [], "created": 0, "id": "", "model": "", "object": "",
                           "prompt_filter_results": [{"prompt_index": 0,
                                                      "content_filter_results": _FILTERS}]},
                    after_ms=s.pace.first_token(250, 450))
    send({"content": "", "refusal": None, "role": "assistant"},
         after_ms=s.pace.thinking(100, 250))
    for token in text_tokens(answer, s.rng):
        send({"content": token}, after_ms=s.pace.token())
    send({}, after_ms=s.pace.instant(), finish="stop")
    s.done()
    return write(root, WIRE, "azure-filter-results", s.builder, request=req,
                 response={"status": 200, "headers": {"content-type": "text/event-stream"}},
                 demonstrates="Azure OpenAI's first chunk carries only the prompt's filter "
                              "results and placeholder names (id \"\", model \"\", created 0): "
                              "the completion is named by the first real chunk, and the "
                              "filter results stay in the final object",
                 based_on="Azure OpenAI's documented streaming chunks (prompt_filter_results "
                          "first, content_filter_results on every choice) and " + BASE,
                 sdk=sdk_expectation(HELPER, "the helper skips every chunk whose object is "
                                     "not chat.completion.chunk: the first chunk, and its "
                                     "prompt_filter_results, never reach the application",
                                     text=answer,
                                     final={"choices.0.message.content": answer,
                                            "id": s.id, "model": model}))
