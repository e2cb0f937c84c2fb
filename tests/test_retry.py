"""Retry by phase: the classification and the backoff, against the corpus's own errors."""

from __future__ import annotations

import random
from datetime import UTC, datetime

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulate
from lesson_lib.breaks import retry
from lesson_lib.capture.captures import load
from lesson_lib.wires.wire_events import parse_all


def _headers(key: str) -> dict[str, str]:
    return load(key).sidecar["response"]["headers"]


def _in_band(key: str) -> retry.Verdict:
    """Classify a capture's in-band error, its phase read from what arrived before it."""
    cap = load(key)
    events = parse_all(cap.events)
    error = next(e for e in events if e.type == "error")
    kind = error.payload["error"].get("type") or error.payload["error"].get("code")
    before = [e for e in events[:error.index] if e.type in (
        "content_block_delta", "response.output_text.delta", "chat.completion.chunk")]
    return retry.classify(wire=cap.wire, status=cap.status, error_type=kind,
                          output_arrived=bool(before))


@pytest.mark.parametrize("key,action,phase", [
    ("anthropic-messages/http-529-overloaded", retry.RETRY, retry.BEFORE_OUTPUT),
    ("anthropic-messages/http-429-rate-limited", retry.RETRY, retry.BEFORE_OUTPUT),
    ("openai-responses/http-429", retry.RETRY, retry.BEFORE_OUTPUT),
    ("openai-responses/http-429-retry-after", retry.RETRY, retry.BEFORE_OUTPUT),
])
def test_an_http_error_before_any_event_is_retryable_as_is(key, action, phase):
    cap = load(key)
    verdict = retry.classify(wire=cap.wire, status=cap.status, headers=_headers(key))
    assert (verdict.action, verdict.phase) == (action, phase)
    assert accumulate(cap).final is None   # nothing arrived that a retry could duplicate


@pytest.mark.parametrize("key,action", [
    ("anthropic-messages/overloaded-first", retry.RETRY),
    ("anthropic-messages/overloaded-after-text", retry.NOT_PLAIN_RETRY),
    ("openai-responses/error-then-failed", retry.NOT_PLAIN_RETRY),
    ("openai-chat/error-mid-stream", retry.NOT_PLAIN_RETRY),
])
def test_an_in_band_error_depends_on_whether_output_arrived(key, action):
    assert _in_band(key).action == action


def test_a_request_error_is_not_retried_and_the_header_wins():
    assert retry.classify(wire="openai-chat", status=400).action == retry.NO_RETRY
    assert retry.classify(wire="anthropic-messages", status=200,
                          error_type="invalid_request_error").action == retry.NO_RETRY
    assert retry.classify(wire="openai-chat", status=400,
                          headers={"X-Should-Retry": "true"}).action == retry.RETRY
    assert retry.classify(wire="openai-chat", status=503,
                          headers={"x-should-retry": "false"}).action == retry.NO_RETRY
    # after output the header does not make a replay safe
    assert retry.classify(wire="anthropic-messages", status=200, error_type="overloaded_error",
                          output_arrived=True,
                          headers={"x-should-retry": "true"}).action == retry.NOT_PLAIN_RETRY


@pytest.mark.parametrize("text,seconds", [
    ("1s", 1.0), ("6m0s", 360.0), ("20ms", 0.02), ("1.492s", 1.492), ("345ms", 0.345),
    ("1h2m3s", 3723.0), ("0s", 0.0)])
def test_reset_durations(text, seconds):
    assert retry.parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "s", "1", "1x", "abc", "1s junk", "-1s"])
def test_bad_durations_are_none(text):
    assert retry.parse_duration(text) is None


@settings(max_examples=examples(200), derandomize=True, database=None)
@given(st.dictionaries(st.sampled_from(["retry-after", "retry-after-ms", "date",
                                        "x-ratelimit-reset-tokens",
                                        "anthropic-ratelimit-tokens-reset"]),
                       st.text(max_size=30)))
def test_hints_never_raise_on_any_header_value(headers):
    retry.hints(headers)
    wait = retry.backoff(0, headers)
    assert wait.seconds >= 0


def test_the_anthropic_429_waits_its_retry_after_which_matches_the_exhausted_reset():
    headers = _headers("anthropic-messages/http-429-rate-limited")
    wait = retry.backoff(0, headers)
    assert (wait.seconds, wait.source) == (17.0, "retry-after")
    without = {k: v for k, v in headers.items() if k != "retry-after"}
    hint = retry.hinted_wait(without)
    assert hint.header == "anthropic-ratelimit-input-tokens-reset" and hint.seconds == 17.0


def test_the_openai_429s_wait_for_the_limit_that_ran_out():
    assert retry.backoff(0, _headers("openai-responses/http-429-retry-after")).seconds == 360
    headers = _headers("openai-responses/http-429")   # no retry-after, no limit at 0
    assert retry.hinted_wait(headers) is None
    assert retry.backoff(0, headers) == retry.Wait(0, 0.5, "backoff")
    spent = {**headers, "x-ratelimit-remaining-tokens": "0"}
    wait = retry.backoff(0, spent)
    assert wait.source == "x-ratelimit-reset-tokens" and wait.seconds == pytest.approx(1.492)


def test_a_reset_with_requests_to_spare_is_no_hint_so_a_retry_backs_off():
    headers = _headers("openai-chat/weather-turn-step1")
    assert headers["x-ratelimit-remaining-requests"] == "9991"
    assert headers["x-ratelimit-reset-requests"] == "6ms"
    assert retry.hinted_wait(headers) is None
    assert [w.source for w in retry.schedule(headers)] == ["backoff", "backoff"]
    assert retry.backoff(0, headers).seconds == 0.5
    told = {**headers, "retry-after-ms": "40"}
    assert retry.hinted_wait(told) == retry.Hint("retry-after-ms", 0.04)


@given(st.dictionaries(st.sampled_from(["requests", "tokens"]),
                       st.tuples(st.integers(0, 3), st.integers(0, 5000)), min_size=1))
def test_only_an_exhausted_limit_s_reset_is_a_hint(limits):
    headers = {}
    for name, (remaining, ms) in limits.items():
        headers[f"x-ratelimit-remaining-{name}"] = str(remaining)
        headers[f"x-ratelimit-reset-{name}"] = f"{ms}ms"
    spent = [ms / 1000 for remaining, ms in limits.values() if remaining == 0]
    hint = retry.hinted_wait(headers)
    if spent:
        assert hint.seconds == pytest.approx(max(spent))
    else:
        assert hint is None


def test_retry_after_as_an_http_date_counts_from_the_response_date():
    headers = {"date": "Tue, 21 Apr 2026 03:53:37 GMT",
               "retry-after": "Tue, 21 Apr 2026 03:54:07 GMT"}
    assert retry.backoff(0, headers).seconds == 30.0
    now = datetime(2026, 4, 21, 3, 53, 57, tzinfo=UTC)
    assert retry.backoff(0, headers, now=now).seconds == 10.0
    assert retry.backoff(0, {"retry-after-ms": "250", "retry-after": "9"}).seconds == 0.25


def test_without_hints_the_sdk_schedule_doubles_and_caps():
    assert [w.seconds for w in retry.schedule(retries=6)] == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]
    jittered = retry.schedule(retries=4, seed=7)
    assert jittered == retry.schedule(retries=4, seed=7)
    for plain, shaken in zip(retry.schedule(retries=4), jittered, strict=True):
        assert 0.75 * plain.seconds <= shaken.seconds <= plain.seconds
    rng = random.Random(1)
    assert retry.backoff(3, None, rng=rng).seconds < 4.0
    first, *rest = retry.schedule(_headers("anthropic-messages/http-429-rate-limited"))
    assert first.source == "retry-after" and [w.source for w in rest] == ["backoff"]
