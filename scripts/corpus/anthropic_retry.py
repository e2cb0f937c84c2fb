"""Anthropic captures for retry by phase: a 429 with its hints, and an overload before output.

A rate-limited request (HTTP 429) whose headers carry ``retry-after`` and
the ``anthropic-ratelimit-*`` limits, remainders and RFC 3339 resets; and
a stream that fails with ``overloaded_error`` right after
``message_start``, before any content: an error before output, which a
client may retry as is.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from .anthropic_requests import request, user
from .anthropic_writer import HELPER, AnthropicWriter, Scenario, compact

RETRY_AFTER_S = 17    # what the 429 asks the client to wait


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _rate_limit_headers(date: datetime) -> dict[str, str]:
    """The limits of a tier whose input tokens per minute ran out, reset times after `date`."""
    return {
        "retry-after": str(RETRY_AFTER_S),
        "anthropic-ratelimit-requests-limit": "50",
        "anthropic-ratelimit-requests-remaining": "47",
        "anthropic-ratelimit-requests-reset": _rfc3339(date + timedelta(seconds=4)),
        "anthropic-ratelimit-input-tokens-limit": "30000",
        "anthropic-ratelimit-input-tokens-remaining": "0",
        "anthropic-ratelimit-input-tokens-reset": _rfc3339(date + timedelta(seconds=RETRY_AFTER_S)),
        "anthropic-ratelimit-output-tokens-limit": "8000",
        "anthropic-ratelimit-output-tokens-remaining": "8000",
        "anthropic-ratelimit-output-tokens-reset": _rfc3339(date + timedelta(seconds=1)),
        "anthropic-ratelimit-tokens-limit": "38000",
        "anthropic-ratelimit-tokens-remaining": "8000",
        "anthropic-ratelimit-tokens-reset": _rfc3339(date + timedelta(seconds=RETRY_AFTER_S)),
        "x-should-retry": "true",
    }


def http_429_rate_limited(w: AnthropicWriter, rid: str) -> Scenario:
    """HTTP 429 before any event: input tokens per minute are used up."""
    document = {"type": "error", "error": {
        "type": "rate_limit_error",
        "message": "This request would exceed the rate limit for your organization of 30,000 "
                   "input tokens per minute. For details, refer to: "
                   "https://docs.claude.com/en/api/rate-limits. You can see the response "
                   "headers for current usage. Please reduce the prompt length or the maximum "
                   "tokens requested, or try again later."},
        "request_id": rid}
    w.builder.raw(compact(document), after_ms=w.pause((120.0, 300.0)))
    return Scenario(
        demonstrates="HTTP 429 rate_limit_error before any event, with retry-after and the "
                     "anthropic-ratelimit-* limits, remainders and resets.",
        request=request("claude-sonnet-4-6", [user(
            "Here are the minutes of our last twelve board meetings. List every decision "
            "that was later reversed: …")]),
        based_on=("Anthropic's documented rate-limit response: HTTP 429 with the error shape "
                  "(type, error {type rate_limit_error, message}, request_id), retry-after in "
                  "seconds, and anthropic-ratelimit-{requests,input-tokens,output-tokens,"
                  "tokens}-{limit,remaining,reset} with RFC 3339 reset times. Differs: the "
                  "limits are illustrative."),
        sdk={"helper": HELPER, "raises": "RateLimitError", "error_contains": "rate_limit_error",
             "text": "",
             "note": "raises RateLimitError (status_code 429) before yielding any event; with "
                     "retries enabled the SDK would wait the retry-after seconds, however long"},
        status=429,
        dated_headers=_rate_limit_headers,
    )


def overloaded_first(w: AnthropicWriter, rid: str) -> Scenario:
    """message_start, then ``overloaded_error`` before any content block."""
    w.message_start(model="claude-opus-4-6", message_id=w.message_id(), input_tokens=31)
    w.ping()
    w.error("overloaded_error", "Overloaded", rid, after_ms=w.pause((600.0, 1400.0)))
    return Scenario(
        demonstrates="An in-band overloaded_error right after message_start and a ping, "
                     "before any content: an error before output, retryable as is.",
        request=request("claude-opus-4-6", [user(
            "What is the difference between a fjord and a ria?")]),
        based_on=("Anthropic's documented in-stream error event (overloaded_error, the "
                  "streaming counterpart of HTTP 529) arriving before the first content block; "
                  "the request_id in the event matches the request-id header."),
        sdk={"helper": HELPER, "raises": "APIStatusError", "error_contains": "overloaded_error",
             "text": "",
             "note": "raises a bare APIStatusError with status_code 200 after message_start; "
                     "the SDK does not retry an error that arrives inside a 200 stream"},
    )


CAPTURES = {
    "http-429-rate-limited": http_429_rate_limited,
    "overloaded-first": overloaded_first,
}
