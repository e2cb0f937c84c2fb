"""The constructed Anthropic Messages corpus: one builder function per capture.

Each function writes one stream with an `AnthropicWriter` and returns the
`Scenario` that becomes its sidecar. `build(root)` writes them all under
``root/anthropic-messages/``. Each capture has its own seed (from its name),
so rebuilding gives identical bytes and one capture's change leaves the
others alone.

This module holds the plain text, thinking and HTML captures; the others
live by theme: tool calls in `anthropic_tool_calls`, cited answers in
`anthropic_citations`, streams that go wrong (errors, cuts, truncation,
refusal, HTTP 529) in `anthropic_failures`, and the two steps of the
weather turn in `anthropic_turn`.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from lesson_lib.capture.capture_writer import write_capture

from . import (
    anthropic_citations,
    anthropic_failures,
    anthropic_features,
    anthropic_retry,
    anthropic_tool_calls,
    anthropic_turn,
)
from .anthropic_requests import request, user
from .anthropic_writer import HELPER, AnthropicWriter, Scenario, token_estimate

WIRE = "anthropic-messages"

Builder = Callable[[AnthropicWriter, str], Scenario]


def hello(w: AnthropicWriter, rid: str) -> Scenario:
    """The plain "Hello" response from the streaming documentation, completed."""
    text = "Hello! 👋 How can I help you today?"
    w.message_start(model="claude-sonnet-4-6", message_id=w.ident("msg_1nZ", 27),
                    input_tokens=25, output_tokens=1)
    w.block_start(0, {"type": "text", "text": ""})
    w.ping()
    w.delta(0, {"type": "text_delta", "text": "Hello"}, w.next_gap())
    w.text(0, text[len("Hello"):], sizes=(3, 12))
    w.block_stop(0)
    w.message_delta(stop_reason="end_turn", output_tokens=15, input_tokens=25)
    w.message_stop()
    return Scenario(
        demonstrates="The smallest complete stream: one text block, a ping, end_turn.",
        request=request("claude-sonnet-4-6", [user("Hello")], max_tokens=1024),
        based_on=("The plain-text example of Anthropic's streaming documentation, as quoted "
                  "in the lesson text. Same order (message_start, content_block_start, ping, "
                  "text_delta \"Hello\", content_block_stop, message_delta end_turn with "
                  "output_tokens 15, message_stop) and the same usage (25 in, 1 then 15 out). "
                  "Differs: the quoted text was trimmed, so the reply is completed after "
                  "\"Hello\" with more deltas; the truncated id msg_1nZ... is a full id; "
                  "message_start carries the fields current streams add (model, "
                  "stop_details, cache usage, service_tier, inference_geo); padding."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "end_turn", "content.0.text": text,
                       "usage.input_tokens": 25, "usage.output_tokens": 15},
             "note": "returns the complete Message; the text projection printed every delta"},
    )


def thinking_signature(w: AnthropicWriter, rid: str) -> Scenario:
    """Thinking deltas, an empty thinking delta, the signature, then the answer."""
    thinking = ("The user asks whether 1,001 is prime. It's odd, so 2 is out. The digit "
                "sum is 2, so not 3. It doesn't end in 0 or 5. Try 7: 7 × 143 = 1,001, so "
                "it's composite. And 143 = 11 × 13, so 1,001 = 7 × 11 × 13. I'll say no "
                "and show the factorisation, plus the abcabc trick it explains.")
    text = ("No — 1,001 is not prime. It factors as 7 × 11 × 13 (7 × 143 = 1,001, and "
            "143 = 11 × 13).\n\nThat is also why any six-digit number of the form abcabc, "
            "like 572572, is divisible by 7, 11 and 13: it equals abc × 1,001.")
    signature = w.opaque(236)
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=46)
    w.thinking(0, thinking, signature)
    w.text_block(1, text, after_ms=w.pause((15.0, 60.0)))
    w.message_delta(stop_reason="end_turn", input_tokens=46,
                    output_tokens=token_estimate(thinking + text) + 31)
    w.message_stop()
    return Scenario(
        demonstrates="A thinking block (thinking_delta events, an empty one, then "
                     "signature_delta) before the text answer.",
        request=request("claude-sonnet-4-6", [user("Is 1,001 a prime number?")],
                        max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 2048}),
        based_on=("pydantic-ai's recorded thinking stream: thinking block with empty "
                  "thinking and signature, deltas, an empty thinking_delta just before the "
                  "signature_delta, stop, then a text block. Differs: content and length."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "end_turn", "content.0.type": "thinking",
                       "content.0.thinking": thinking, "content.0.signature": signature,
                       "content.1.text": text},
             "note": "returns the thinking with its signature; the text projection shows "
                     "only the answer"},
    )


def redacted_thinking(w: AnthropicWriter, rid: str) -> Scenario:
    """A redacted_thinking block, whole in its start event, then text."""
    data = w.opaque(410)
    text = ("That looks like a test string rather than a question, so there's nothing "
            "for me to act on. What would you like to talk about?")
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=91,
                    output_tokens=71)
    w.block_start(0, {"type": "redacted_thinking", "data": data})
    w.ping()
    w.block_stop(0, after_ms=w.pause((300.0, 800.0)))
    w.ping()
    w.text_block(1, text, ping_probability=0.6)
    w.message_delta(stop_reason="end_turn", input_tokens=91, output_tokens=183)
    w.message_stop()
    trigger = ("ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_"
               "46C9A13E193C177646C7398A98432ECCCE4C1253")
    return Scenario(
        demonstrates="A redacted_thinking block that arrives whole in content_block_start "
                     "(no deltas), then text.",
        request=request("claude-sonnet-4-6", [user(trigger)], max_tokens=2048,
                        thinking={"type": "enabled", "budget_tokens": 1024}),
        based_on=("pydantic-ai's recorded redacted-thinking stream (the documented test "
                  "trigger string): redacted_thinking with opaque data in the start event, "
                  "pings around its stop, message_start output_tokens far above 1. Differs: "
                  "one redacted block instead of two; the data is random base64."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "end_turn", "content.0.type": "redacted_thinking",
                       "content.0.data": data, "content.1.text": text},
             "note": "returns the redacted block as it arrived; the text projection "
                     "shows no trace of it"},
    )


def html_in_text(w: AnthropicWriter, rid: str) -> Scenario:
    """An answer about XSS whose text carries live-looking HTML."""
    text = (
        "Cross-site scripting (XSS) happens when a page puts untrusted text into its "
        "HTML without escaping it, so the browser runs it as code instead of showing it.\n\n"
        "The classic harmless test payload is:\n\n```html\n<script>alert(1)</script>\n```\n\n"
        "If a comment box echoes that back unescaped, every visitor's browser runs the "
        "script. Filters that only block `<script>` are easy to get around, for example "
        "with an event handler:\n\n```html\n<img src=x onerror=alert(2)>\n```\n\n"
        "The fix is to escape output for the context it lands in (`<` becomes `&lt;`, "
        "`&` becomes `&amp;`) and to add a Content-Security-Policy as a second line of "
        "defence. 🛡️")
    w.message_start(model="claude-haiku-4-5", message_id=w.message_id(), input_tokens=29,
                    geo="not_available")
    w.text_block(0, text, sizes=(2, 18))
    w.message_delta(stop_reason="end_turn", input_tokens=29, output_tokens=token_estimate(text))
    w.message_stop()
    return Scenario(
        demonstrates="Text that contains <script> and <img onerror> tags: every view must "
                     "show it escaped, never run it.",
        request=request("claude-haiku-4-5", [user(
            "How does a cross-site scripting attack actually work? Show me what a "
            "payload looks like.")], max_tokens=1024),
        based_on=("An ordinary text stream (the shape of the recorded llm-anthropic text "
                  "cassette), no ping at all. Differs: the answer quotes HTML, split across "
                  "deltas at arbitrary places, so a renderer that concatenates raw HTML "
                  "would build live tags."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "end_turn", "content.0.text": text},
             "note": "returns the text verbatim; escaping it is the renderer's job"},
    )


CAPTURES: dict[str, Builder] = {
    "hello": hello,
    **anthropic_tool_calls.CAPTURES,
    "thinking-signature": thinking_signature,
    "redacted-thinking": redacted_thinking,
    **anthropic_citations.CAPTURES,
    **anthropic_failures.CAPTURES,
    **anthropic_retry.CAPTURES,
    "html-in-text": html_in_text,
    **anthropic_turn.CAPTURES,
    **anthropic_features.CAPTURES,
}

# Per capture: payload layout and messiness (pad probability, key shuffling).
_STYLE: dict[str, dict[str, Any]] = {
    "parallel-tools": {"style": "older", "pad_probability": 0.0},
    "citations": {"style": "older", "pad_probability": 0.3, "shuffle_probability": 0.3},
    "html-in-text": {"pad_probability": 0.7},
    "web-search": {"shuffle_probability": 0.2},
    "text-then-tool": {"shuffle_probability": 0.5},
}


def seed_of(name: str) -> int:
    """The capture's seed: stable across runs and Python versions."""
    return zlib.crc32(f"{WIRE}/{name}".encode())


def build_one(name: str) -> tuple[bytes, dict[str, Any]]:
    """One capture's body and sidecar, from its builder function."""
    seed = seed_of(name)
    w = AnthropicWriter(seed, **_STYLE.get(name, {}))
    rid = w.request_id()
    scenario = CAPTURES[name](w, rid)
    body, chunks = w.finish()
    return body, sidecar(scenario, rid, chunks, seed)


def sidecar(scenario: Scenario, rid: str, chunks: dict[str, list], seed: int
            ) -> dict[str, Any]:
    """The JSON sidecar for a built scenario (see `lesson_lib.capture.captures`)."""
    # The steps of one turn are requested seconds apart, other captures on any day.
    if scenario.turn is not None:
        offset = zlib.crc32(scenario.turn["name"].encode()) % 1_500_000
        offset += 9 * (scenario.turn["step"] - 1)
    else:
        offset = seed % 1_500_000
    date = datetime(2026, 4, 14, 8, 0, tzinfo=UTC) + timedelta(seconds=offset)
    ok = scenario.status < 300
    headers = {
        "content-type": "text/event-stream; charset=utf-8" if ok else "application/json",
        "date": format_datetime(date, usegmt=True),
        "request-id": rid,
        "cache-control": "no-cache" if ok else None,
        "server": "cloudflare",
        "x-robots-tag": "none",
        **scenario.extra_headers,
        **(scenario.dated_headers(date) if scenario.dated_headers else {}),
    }
    out: dict[str, Any] = {
        "wire": WIRE,
        "demonstrates": scenario.demonstrates,
        "request": scenario.request,
        "response": {"status": scenario.status,
                     "headers": {k: v for k, v in headers.items() if v is not None}},
        "provenance": {"kind": "constructed", "based_on": scenario.based_on,
                       "timing": "synthetic"},
        "chunks": chunks,
        "sdk": scenario.sdk,
    }
    if scenario.turn is not None:
        out["turn"] = scenario.turn
    return out


def build(root: Path) -> list[Path]:
    """Write every Anthropic capture under ``root/anthropic-messages/``; return the paths."""
    folder = Path(root) / WIRE
    paths = []
    for name in CAPTURES:
        body, side = build_one(name)
        paths.append(write_capture(folder, name, body, side))
    return paths
