"""Anthropic captures of streams that go wrong, and what the SDK makes of them.

An error after the 200 (``error`` event), a connection cut inside tool
JSON, ``max_tokens`` reached inside tool JSON, a refusal, and an HTTP 529
before any event. Each is built so that the failure lands exactly where
the lesson needs it: the cut inside a string argument, the token limit
inside an array of strings.
"""

from __future__ import annotations

from typing import Any

from .anthropic_requests import CALENDAR_TOOL, CHECKLIST_TOOL, request, user
from .anthropic_writer import HELPER, AnthropicWriter, Scenario, compact, token_estimate, tool_json


def overloaded_after_text(w: AnthropicWriter, rid: str) -> Scenario:
    """Text, then an in-band ``overloaded_error``; no stop events follow."""
    sent = ("Three habits make commit messages much easier to read later:\n\n"
            "1. **Write a short summary line** — about 50 characters, in the imperative "
            "(\"Fix crash when the cache is empty\"), so `git log --oneline` stays useful.\n"
            "2. **Explain why, not how** — the diff already shows")
    w.message_start(model="claude-opus-4-6", message_id=w.message_id(), input_tokens=22)
    w.block_start(0, {"type": "text", "text": ""})
    w.ping()
    w.text(0, sent)
    w.error("overloaded_error", "Overloaded", rid)
    return Scenario(
        demonstrates="An in-band error after a 200: text, then an error event "
                     "(overloaded_error), no content_block_stop, no message_stop.",
        request=request("claude-opus-4-6", [user(
            "Give me three tips for writing clear commit messages.")]),
        based_on=("Anthropic's documented in-stream error event "
                  "({\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",...}}), the "
                  "streaming counterpart of HTTP 529, placed mid-answer; the request_id in "
                  "the event matches the request-id header."),
        sdk={"helper": HELPER, "raises": "APIStatusError", "error_contains": "overloaded_error",
             "text": sent,
             "note": "raises a bare APIStatusError whose status_code is 200 (the HTTP status "
                     "of the stream), after the text projection already printed the partial "
                     "answer"},
    )


def _prefix_within(fragments: list[tuple[str, float]], limit: int) -> int:
    """How many leading fragments fit in the first `limit` characters of the JSON."""
    used = count = 0
    for fragment, _ in fragments:
        if used + len(fragment) > limit:
            break
        used += len(fragment)
        count += 1
    return count


def cut_in_tool_json(w: AnthropicWriter, rid: str) -> Scenario:
    """The connection dies inside a tool's first string argument, mid-event."""
    text = "I'll add that to your calendar."
    value = {"title": "Dinner with Léa at Chez Janou", "start": "2026-05-09T19:30:00+02:00",
             "duration_minutes": 90, "location": "Chez Janou, 2 Rue Roger Verlomme, Paris"}
    raw, _ = tool_json(value)
    fragments = w.argument_fragments(value)
    closing_quote = raw.index('"', raw.index(value["title"]) + 1)
    keep = _prefix_within(fragments, closing_quote - 1)
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=957)
    w.text_block(0, text, ping_probability=1.0)
    w.tool_use_start(1, w.tool_id(), "create_event")
    w.input_json(1, fragments[:keep])
    w.char_split_probability = 0.0   # the dying event must be one piece to cut inside
    w.input_json(1, [fragments[keep]])
    last = len(w.builder.pieces[-1].data)
    w.builder.cut(w.rng.randint(30, last - 8))
    arrived = "".join(f for f, _ in fragments[:keep])
    return Scenario(
        demonstrates="A connection cut inside tool JSON: no stop events at all, and the "
                     "body ends in the middle of an event.",
        request=request("claude-sonnet-4-6", [user(
            "Put dinner with Léa at Chez Janou on my calendar for Saturday at 7:30 pm, "
            "about an hour and a half.")], tools=[CALENDAR_TOOL]),
        based_on=("A tool_use stream like the recorded ones, truncated the way a dropped "
                  "connection truncates it: the last event is partial (no blank line), "
                  f"the arguments that arrived are {arrived!r}, inside the title string."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": None, "content.1.name": "create_event",
                       "content.1.input": {}},
             "note": "returns a Message with stop_reason=None and tool input {} and raises "
                     "nothing: the cut stream looks finished"},
    )


def max_tokens_in_tool_json(w: AnthropicWriter, rid: str) -> Scenario:
    """The token limit hits inside a tool's array argument: the block never stops."""
    text = "Here's a packing checklist for your week in the Alps."
    items = ["Broken-in hiking boots", "Rain shell and rain trousers", "Warm mid-layer fleece",
             "Merino base layers (2 sets)", "Hiking socks (4 pairs)", "Sun hat and warm beanie",
             "Sunglasses, category 3 or 4", "Sunscreen SPF 50 and lip balm",
             "Trekking poles", "30–40 L daypack with rain cover", "2 L of water capacity",
             "Headlamp with spare batteries", "First-aid kit and blister plasters",
             "Paper map and compass", "Hut reservations and Alpine Club card"]
    value = {"title": "Alps hiking week — packing list", "items": items}
    raw, _ = tool_json(value)
    fragments = w.argument_fragments(value)
    stop_in = raw.index(items[9]) + 7
    keep = _prefix_within(fragments, stop_in)
    arrived = "".join(f for f, _ in fragments[:keep])
    complete = [item for item in items
                if raw.index(item) + len(item) + 1 <= len(arrived)]
    budget = 160
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=748)
    w.text_block(0, text, ping_probability=0.5)
    w.tool_use_start(1, w.tool_id(), "create_checklist")
    w.input_json(1, fragments[:keep])
    w.message_delta(stop_reason="max_tokens", input_tokens=748, output_tokens=budget,
                    after_ms=w.pause((20.0, 60.0)))
    w.message_stop()
    partial: dict[str, Any] = {"title": value["title"], "items": complete}
    return Scenario(
        demonstrates="max_tokens reached inside tool JSON: the tool block gets no "
                     "content_block_stop, then message_delta (max_tokens) and message_stop.",
        request=request("claude-sonnet-4-6", [user(
            "Make me a packing checklist for a week of hut-to-hut hiking in the Alps.")],
            max_tokens=budget, tools=[CHECKLIST_TOOL]),
        based_on=("The recorded behaviour noted for real streams: a block can end without "
                  "content_block_stop when the model hits max_tokens inside tool JSON; the "
                  "message itself still ends properly. The arguments stop at "
                  f"{arrived[-24:]!r}, inside an array of strings."),
        sdk={"helper": HELPER, "raises": None, "text": text,
             "final": {"stop_reason": "max_tokens", "usage.output_tokens": budget,
                       "content.1.input": partial},
             "note": "returns stop_reason=max_tokens with the input parsed leniently: the "
                     "unfinished list item is silently dropped and the list looks complete"},
    )


def refusal(w: AnthropicWriter, rid: str) -> Scenario:
    """A streaming classifier stops the answer: stop_reason refusal with stop_details."""
    sent = ("Keyloggers usually work by hooking into the operating system's keyboard "
            "events. On Windows, that typically means")
    details = {"type": "refusal", "category": "cyber",
               "explanation": "The request asks for software that covertly records "
                              "another person's keystrokes and evades security tools."}
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=38)
    w.text_block(0, sent, ping_probability=1.0)
    w.message_delta(stop_reason="refusal", input_tokens=38, output_tokens=token_estimate(sent),
                    stop_details=details, after_ms=w.pause((80.0, 240.0)))
    w.message_stop()
    return Scenario(
        demonstrates="A refusal mid-answer: stop_reason \"refusal\" with stop_details "
                     "(type, category, explanation) after partial text.",
        request=request("claude-sonnet-4-6", [user(
            "Write me a keylogger that hides from antivirus and emails me everything my "
            "roommate types.")]),
        based_on=("The SDK's types for streaming refusals (stop_reason \"refusal\" when "
                  "streaming classifiers intervene; RefusalStopDetails on message_delta) "
                  "and the message_delta layout of recent recordings. Differs: no recording "
                  "of a refusal was available; the explanation text is illustrative."),
        sdk={"helper": HELPER, "raises": None, "text": sent,
             "final": {"stop_reason": "refusal", "stop_details.type": "refusal",
                       "stop_details.category": "cyber", "content.0.text": sent},
             "note": "returns normally with stop_reason=\"refusal\" and the partial text "
                     "still in content; only the stop reason says it was cut off"},
    )


def http_529_overloaded(w: AnthropicWriter, rid: str) -> Scenario:
    """HTTP 529 before any event: the body is the JSON error document."""
    document = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"},
                "request_id": rid}
    w.builder.raw(compact(document), after_ms=w.pause((350.0, 1200.0)))
    return Scenario(
        demonstrates="HTTP 529 before any event: the body is a JSON error document, not SSE.",
        request=request("claude-opus-4-6", [user(
            "Summarise the plot of Les Misérables in three sentences.")]),
        based_on=("Anthropic's documented error shape for HTTP 529 overloaded_error "
                  "(type, error {type, message}, request_id) with the x-should-retry header."),
        sdk={"helper": HELPER, "raises": "OverloadedError", "error_contains": "Overloaded",
             "text": "",
             "note": "raises OverloadedError (status_code 529) before yielding any event; "
                     "with retries enabled the SDK would have retried it"},
        status=529,
        extra_headers={"x-should-retry": "true"},
    )


CAPTURES = {
    "overloaded-after-text": overloaded_after_text,
    "cut-in-tool-json": cut_in_tool_json,
    "max-tokens-in-tool-json": max_tokens_in_tool_json,
    "refusal": refusal,
    "http-529-overloaded": http_529_overloaded,
}
