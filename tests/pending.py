"""Reference recordings the course does not read yet, by name, each with its issue.

The shared reference set (`../shared/reference-captures/`) grew ahead of the
course: it holds two wires the course does not read yet and recordings of
wire features it does not handle yet. A test that reads every reference
capture skips these, and pytest prints the reason; when the issue lands, its
lines here go, and the tests read the recordings again.

- `PENDING_WIRES`: a whole folder's wire (every test skips its recordings).
- `PENDING`: one recording, in the tests named with it (``"*"``: every test).
- `PENDING_FIELDS`: envelope fields real recordings carry that the course's own
  captures do not yet (the "at least as messy" tests leave them out until then).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ISSUE_19 = "issue 19 (a new wire is one adapter)"
ISSUE_21 = "issue 21 (every event the SDKs know, and the ones they don't)"

PENDING_WIRES = {
    "aws-bedrock": f"{ISSUE_19}: the course does not read Bedrock's binary event stream yet",
}

_ALL = ("*",)
PENDING: dict[str, tuple[tuple[str, ...], str]] = {
    "openai-chat/mistral-thinking-array-content": (_ALL, (
        f"{ISSUE_21}: `delta.content` as an array of typed parts (thinking, text) and a body "
        "without [DONE]; the reasoning block and the missing-marker rule are that issue's")),
    "openai-chat/openrouter-comments-length-then-error": ((
        "test_final_equals_the_official_sdk", "test_both_routes_give_the_same_turn",
        "test_sdk_route_is_in_order_and_its_outcome_matches_the_streams_end",
        "test_cut_anywhere_reference", "test_inject_error_after_any_event_reference",
        "test_views_and_cli_on_every_fault_reference"), (
        f"{ISSUE_21}: `finish_reason: length` then an error chunk; how the SDK route and the "
        "wire route read an error after a finish is that issue's, and so is OpenRouter's "
        "`reasoning_details` list, kept as its last value (a stream cut or failed early "
        "shows an earlier list than the whole one)")),
    "openai-chat/xai-whole-tool-call-no-finish-reason-key": ((
        "test_both_routes_give_the_same_turn",
        "test_sdk_route_is_in_order_and_its_outcome_matches_the_streams_end"), (
        f"{ISSUE_21}: no `finish_reason` key until the last chunk and no [DONE]; the "
        "missing-marker rule is that issue's")),
    "openai-responses/reasoning-text-openrouter": (_ALL, (
        f"{ISSUE_21}: item ids differ between the stream and the terminal response, and a "
        "[DONE] after it; following the server's object is that issue's")),
    "openai-responses/programmatic-tool-calling-program": ((
        "test_final_equals_the_official_sdk",
        "test_every_capture_accumulates_to_the_servers_own_response",
        "test_every_capture_matches_what_the_sdk_builds"), (
        f"{ISSUE_21}: the terminal response restates an item with another `fingerprint`; "
        "following the server's object is that issue's")),
    "openai-responses/tool-search-client": ((
        "test_final_equals_the_official_sdk", "test_every_capture_matches_what_the_sdk_builds",
        "test_sdk_route_is_in_order_and_its_outcome_matches_the_streams_end"), (
        f"{ISSUE_21}: tool search events the SDK's union does not know (its helper raises)")),
}

PENDING_FIELDS = {
    "openai-chat": ({"p", "provider", "error"}, f"{ISSUE_21}: compatible servers' padding "
                    "`p`, OpenRouter's `provider`, an `error` inside a chunk"),
    "openai-responses": ({"moderation", "tool_usage", "output_text"},
                         f"{ISSUE_21}: newer response fields"),
}


def reason(key: str, test: str = "*") -> str | None:
    """Why the reference capture `key` (``wire/name``) is skipped in `test`, or None."""
    wire = key.split("/", 1)[0]
    if wire in PENDING_WIRES:
        return PENDING_WIRES[wire]
    tests, why = PENDING.get(key, ((), ""))
    return why if "*" in tests or test in tests else None


def readable(captures: Iterable[Any], test: str = "*") -> list[Any]:
    """The captures a test that loops over them inside one test function can read now."""
    return [c for c in captures if reason(c.key, test) is None]
