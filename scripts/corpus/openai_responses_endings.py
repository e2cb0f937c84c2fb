"""Responses captures that do not end in ``response.completed``.

A stream that runs out of output tokens (``response.incomplete``), one that
fails after some output (an ``error`` event, then ``response.failed``), and
a request refused before any event (HTTP 429 with a JSON body). The SDK's
helper raises on all three; what did arrive is what the lessons show.
"""

from __future__ import annotations

import json
from pathlib import Path

from .openai_ids import request_id
from .openai_responses_common import BASE, HELPER, NO_COMPLETED, WIRE, ok, request
from .openai_responses_stream import ResponsesStream
from .openai_sidecar import sdk_expectation, write
from .writer import StreamBuilder


def incomplete(root: Path) -> Path:
    """The model runs out of max_output_tokens in the middle of a sentence."""
    story = (
        "Every night for thirty-one years, Maël climbed the hundred and twelve steps of the "
        "Phare du Créac'h and wiped the salt from the great lens. The storms of Ouessant knew "
        "him by name. On the night the new automatic lamp was switched on, he climbed the "
        "steps anyway, sat down beside the humming machine and listened to the sea telling "
        "him, in its patient grey voice, that it would keep watch now."
    )
    req = request("gpt-4.1", "Write a short story about a lighthouse keeper in Brittany.",
                  max_output_tokens=48)
    s = ResponsesStream(106, model="gpt-4.1-2025-04-14", created_at=1767890077, request=req)
    s.start(first_byte_ms=s.pace.first_token(200, 300))
    s.message(story, after_ms=s.pace.first_token(200, 350), stop_at=44, status="incomplete")
    sent = s.output[0]["content"][0]["text"]
    usage = {"input_tokens": 22, "input_tokens_details": {"cached_tokens": 0},
             "output_tokens": 48, "output_tokens_details": {"reasoning_tokens": 0},
             "total_tokens": 70}
    s.incomplete(usage, "max_output_tokens")
    return write(root, WIRE, "incomplete", s.builder, request=req, response=ok(s),
                 demonstrates="response.incomplete (max_output_tokens) in the middle of a "
                              "sentence: the message item closes with status incomplete",
                 based_on=BASE + "; the terminal event follows the SDK's ResponseIncompleteEvent "
                          "(incomplete_details.reason max_output_tokens)",
                 sdk=sdk_expectation(HELPER, "get_final_response() raises RuntimeError on "
                                     "response.incomplete even though every delta arrived",
                                     raises="RuntimeError", error_contains=NO_COMPLETED,
                                     text=sent))


def error_then_failed(root: Path) -> Path:
    """Some text, then a nested ``error`` event, then ``response.failed``."""
    answer = ("Here is a packing list for four days of hiking in the Dolomites:\n\n"
              "- Boots you have already broken in\n- A rain shell and a warm mid-layer\n"
              "- Sun cream, sunglasses and a hat ☀️\n- Cash for the rifugi (not all take cards)\n"
              "- A paper map of the Alta Via 1 and a headlamp")
    req = request("gpt-4.1", "What should I pack for four days of hut-to-hut hiking in the "
                  "Dolomites in September?")
    s = ResponsesStream(107, model="gpt-4.1-2025-04-14", created_at=1767903310, request=req,
                        style="sorted")
    rid = request_id(s.rng)
    message = ("An error occurred while processing your request. You can retry your request, or "
               "contact us through our help center at help.openai.com if the error persists. "
               f"Please include the request ID {rid} in your message.")
    s.start(first_byte_ms=s.pace.first_token(200, 300))
    s.message(answer, after_ms=s.pace.first_token(200, 350), stop_at=31, close_text=False)
    sent = s.output[0]["content"][0]["text"]
    s.error("server_error", "server_error", message, after_ms=s.pace.thinking(2000, 4000))
    s.failed("server_error", message)
    return write(root, WIRE, "error-then-failed", s.builder, request=req, response=ok(s, rid),
                 demonstrates="text, then an in-band error event (nested {type, code, message, "
                              "param}), then response.failed with the partial output",
                 based_on=BASE + " (error-insufficient-quota-failed: the nested error event and "
                          "response.failed); here the failure comes after output, and the "
                          "failed Response lists the unfinished message",
                 sdk=sdk_expectation(HELPER, "the SDK raises APIError at the error event, so "
                                     "response.failed is never read and the partial text is "
                                     "only in the events already handed out",
                                     raises="APIError", error_contains=rid, text=sent))


def http_429(root: Path) -> Path:
    """A rate-limit refusal before any event: the body is a JSON error, not SSE."""
    b = StreamBuilder(seed=109)
    rid = request_id(b.rng)
    error = {"error": {
        "message": "Rate limit reached for gpt-4.1 in organization org-Xq4bT7mRk2LpV9wZcN3sHd8F "
                   "on tokens per min (TPM): Limit 30000, Used 28734, Requested 2012. Please try "
                   "again in 1.492s. Visit https://platform.openai.com/account/rate-limits to "
                   "learn more.",
        "type": "tokens", "param": None, "code": "rate_limit_exceeded"}}
    b.raw(json.dumps(error, indent=4) + "\n", after_ms=142.7)
    headers = {"content-type": "application/json; charset=utf-8", "x-request-id": rid,
               "openai-processing-ms": "31", "openai-version": "2020-10-01",
               "x-ratelimit-limit-tokens": "30000", "x-ratelimit-remaining-tokens": "1266",
               "x-ratelimit-reset-tokens": "1.492s", "x-ratelimit-limit-requests": "500",
               "x-ratelimit-remaining-requests": "497", "x-ratelimit-reset-requests": "345ms"}
    req = request("gpt-4.1", "Summarise this 40-page contract for me: …")
    return write(root, WIRE, "http-429", b, request=req,
                 response={"status": 429, "headers": headers},
                 demonstrates="HTTP 429 before any event: a JSON error body, no stream at all",
                 based_on="the JSON error document and rate-limit headers OpenAI returns for a "
                          "tokens-per-minute limit",
                 sdk=sdk_expectation(HELPER, "the SDK raises RateLimitError (status 429) before "
                                     "the helper yields a single event",
                                     raises="RateLimitError", error_contains="Rate limit reached",
                                     text=""))
