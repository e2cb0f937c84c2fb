"""The Gemini Interactions wire's one home (`lesson_lib.wires.gemini_interactions`), held
to google-genai's own types and to the five reference recordings.

The vocabulary is read from the SDK's unions (its event, step and delta variants
and its status literals), never from a copied list, so an SDK that grows a type
fails here until the wire module knows it.
"""

from __future__ import annotations

import json
import re
import typing
from dataclasses import fields
from pathlib import Path

import pytest

from lesson_lib import wires
from lesson_lib.capture.captures import reference_dir
from lesson_lib.sse.decoder import SSEDecoder
from lesson_lib.wires import gemini_interactions as gi
from lesson_lib.wires.wire_events import parse_all

interactions_types = pytest.importorskip("google.genai._gaos.types.interactions")
from google.genai._gaos.types.interactions import (  # noqa: E402
    errorevent,
    interaction,
    interactionsseevent,
    interactionsseeventinteraction,
    interactionstatusupdate,
    step,
    stepdeltadata,
)

FOLDER = reference_dir() / gi.WIRE
RECORDINGS = sorted(FOLDER.glob("*.sse")) if FOLDER.is_dir() else []
needs_recordings = pytest.mark.skipif(not RECORDINGS,
                                      reason=f"reference captures not present ({FOLDER})")


def _statuses(alias) -> set[str]:
    """The string literals of an SDK status type (a Union of a Literal and an open str)."""
    found: set[str] = set()
    for arg in typing.get_args(alias):
        found |= {a for a in typing.get_args(arg) if isinstance(a, str)}
    return found


def _payloads(path: Path) -> list[dict]:
    decoder = SSEDecoder()
    events = decoder.feed(path.read_bytes()) + decoder.finish()
    return [ev.payload for ev in parse_all(events)]


# -- the vocabulary against the SDK's unions ------------------------------------------------

def test_every_event_type_of_the_sdk_union_is_known():
    sdk = set(interactionsseevent._INTERACTION_SSE_EVENT_VARIANTS)
    assert sdk, "the SDK's union is empty: its layout changed"
    assert sdk <= gi.EVENT_TYPES, sorted(sdk - gi.EVENT_TYPES)


def test_every_step_type_of_the_sdk_union_is_known():
    sdk = set(step._STEP_VARIANTS)
    assert sdk and sdk <= gi.STEP_TYPES, sorted(sdk - gi.STEP_TYPES)


def test_every_delta_type_of_the_sdk_union_is_known():
    sdk = set(stepdeltadata._STEP_DELTA_DATA_VARIANTS)
    assert sdk and sdk <= gi.DELTA_TYPES, sorted(sdk - gi.DELTA_TYPES)


def test_the_server_tool_steps_are_the_sdks_call_and_result_steps():
    sdk = set(step._STEP_VARIANTS)
    assert gi.SERVER_CALL_STEPS <= sdk and gi.SERVER_RESULT_STEPS <= sdk
    assert {s for s in sdk if s.endswith("_call")} == gi.SERVER_CALL_STEPS | {"function_call"}
    assert {s for s in sdk if s.endswith("_result")} == (gi.SERVER_RESULT_STEPS
                                                        | {"function_result"})


def test_a_server_steps_delta_is_typed_like_the_step():
    deltas = set(stepdeltadata._STEP_DELTA_DATA_VARIANTS)
    assert gi.WHOLE_STEPS <= deltas


def test_the_delta_keys_are_the_sdks_field_names():
    variants = stepdeltadata._STEP_DELTA_DATA_VARIANTS
    assert gi.ARGUMENTS_KEY in variants[gi.ARGUMENTS_DELTA].model_fields
    assert gi.SIGNATURE_KEY in variants[gi.THOUGHT_SIGNATURE_DELTA].model_fields
    assert "text" in variants[gi.TEXT_DELTA].model_fields
    assert gi.CONTENT_FIELD in variants[gi.THOUGHT_SUMMARY_DELTA].model_fields
    assert gi.ANNOTATIONS_KEY in variants[gi.TEXT_ANNOTATION_DELTA].model_fields
    steps = step._STEP_VARIANTS
    assert gi.CONTENT_FIELD in steps[gi.MODEL_OUTPUT_STEP].model_fields
    assert gi.SUMMARY_FIELD in steps[gi.THOUGHT_STEP].model_fields
    assert gi.ARGUMENTS_KEY in steps[gi.FUNCTION_CALL_STEP].model_fields


def test_the_statuses_are_the_sdks_on_every_object_that_has_one():
    for alias in (interaction.InteractionStatus,
                  interactionsseeventinteraction.InteractionSseEventInteractionStatus,
                  interactionstatusupdate.InteractionStatusUpdateStatus):
        assert _statuses(alias) == gi.STATUSES


@pytest.mark.parametrize("status", sorted(gi.STATUSES))
def test_every_status_reads_as_a_unified_finish_or_none_while_running(status):
    reason = gi.finish_reason(status)
    if status in gi.RUNNING_STATUSES:
        assert reason is None
    else:
        assert reason in wires.FINISHES


def test_the_finish_of_each_ending_status():
    assert gi.finish_reason("completed") == "stop"
    assert gi.finish_reason("requires_action") == "tool_calls"
    assert gi.finish_reason("failed") == "error"
    assert gi.finish_reason("incomplete") == "length"
    assert gi.finish_reason("requires_continuation") == "pause"
    assert gi.finish_reason("something_new") == "other"
    assert gi.finish_reason(None) is None


# -- the ending and the error event ---------------------------------------------------------

def test_the_terminal_and_the_failure_are_event_types():
    assert gi.TERMINALS and gi.TERMINALS <= gi.EVENT_TYPES
    assert gi.FAILURES and gi.FAILURES <= gi.EVENT_TYPES
    assert not gi.TERMINALS & gi.FAILURES


def test_the_error_example_is_an_error_event_the_sdk_reads():
    event = errorevent.ErrorEvent.model_validate(gi.ERROR_EXAMPLE)
    assert event.error is not None and event.error.message
    err = gi.read_error(gi.ERROR, gi.ERROR_EXAMPLE)
    assert err is not None and err.message == event.error.message
    assert err.kind == "UNAVAILABLE" and gi.retryable(err)


@pytest.mark.parametrize("code, name, retry", [
    ("RESOURCE_EXHAUSTED", "RESOURCE_EXHAUSTED", True),
    ("https://generativelanguage.googleapis.com/errors/RESOURCE_EXHAUSTED",
     "RESOURCE_EXHAUSTED", True),
    ("type.googleapis.com/google.rpc#INVALID_ARGUMENT", "INVALID_ARGUMENT", False),
])
def test_an_error_events_code_is_named_by_its_last_segment(code, name, retry):
    err = gi.read_error(gi.ERROR, {"error": {"code": code, "message": "m"},
                                   "event_type": gi.ERROR})
    assert err is not None and err.type == name and err.code == code
    assert gi.retryable(err) is retry


def test_only_the_error_event_reads_as_an_error():
    assert gi.read_error(gi.STEP_DELTA, {"error": {"code": "INTERNAL"}}) is None
    assert gi.read_error(gi.ERROR, "not an object") is None
    bare = gi.read_error(gi.ERROR, {"event_type": gi.ERROR})
    assert bare is not None and bare.kind is None


# -- usage ----------------------------------------------------------------------------------

@needs_recordings
@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_the_usage_counts_add_up_to_the_total(path):
    completed = [p for p in _payloads(path)
                 if p.get(gi.EVENT_TYPE_FIELD) in gi.TERMINALS]
    usage = completed[-1]["interaction"]["usage"]
    counts = gi.usage_counts(usage)
    assert set(counts) == set(wires.USAGE_COUNTS)
    assert counts["input"] + counts["output"] == usage["total_tokens"]
    assert counts["reasoning"] == usage["total_thought_tokens"]


# -- every recording speaks the vocabulary ----------------------------------------------------

@needs_recordings
@pytest.mark.parametrize("path", RECORDINGS, ids=[p.stem for p in RECORDINGS])
def test_every_recorded_event_step_and_delta_is_known(path):
    payloads = _payloads(path)
    kinds = [p[gi.EVENT_TYPE_FIELD] for p in payloads]
    assert set(kinds) <= gi.EVENT_TYPES
    assert kinds[0] == gi.INTERACTION_CREATED and kinds[-1] in gi.TERMINALS
    for p in payloads:
        if p[gi.EVENT_TYPE_FIELD] == gi.STEP_START:
            assert p["step"]["type"] in gi.STEP_TYPES
        if p[gi.EVENT_TYPE_FIELD] == gi.STEP_DELTA:
            assert p["delta"]["type"] in gi.DELTA_TYPES
    status = payloads[-1]["interaction"]["status"]
    assert gi.finish_reason(status) in {"stop", "tool_calls"}


# -- the cheat sheet ------------------------------------------------------------------------

def test_every_cell_of_the_sheet_is_filled():
    for f in fields(gi.SHEET):
        value = getattr(gi.SHEET, f.name)
        assert value, f.name
        if isinstance(value, tuple):
            assert all(all(cell for cell in row) for row in value), f.name
    assert gi.SHEET.wire == gi.WIRE
    assert {kind for kind, _ in gi.SHEET.events} <= gi.EVENT_TYPES
    assert gi.SHEET.terminal in gi.TERMINALS
    for status in gi.FINISH_REASONS:
        assert status in gi.SHEET.finish


# -- over HTTP --------------------------------------------------------------------------------

def test_the_entry_posts_the_request_with_stream_true():
    entry = gi.ENTRY
    request = {"model": "gemini-2.5-flash", "input": "Hi"}
    assert entry.wire == gi.WIRE and entry.framing == "sse" and entry.suffix == ".sse"
    assert entry.request_path(request) == "/v1beta/interactions"
    assert entry.request_body(request) == {**request, "stream": True}
    assert set(entry.conversation) <= set(interaction.Interaction.model_fields)


@pytest.mark.parametrize("status, name", [(429, "RESOURCE_EXHAUSTED"), (503, "UNAVAILABLE"),
                                          (400, "INVALID_ARGUMENT")])
def test_the_entrys_error_body_reads_back_in_googles_shape(status, name):
    body = gi.ENTRY.error_body(status, "nope")
    err = wires.error_body(json.dumps(body))
    assert err is not None and err.type == name and err.message == "nope"
    assert body["error"]["code"] == status
    assert gi.retryable(err) is wires.retryable_status(status)


def _route_pattern(route: str) -> re.Pattern[str]:
    return re.compile("^" + re.sub(r"\\\{[A-Za-z_]+\\\}", "[^/]+", re.escape(route)) + "$")


def test_the_sdk_posts_to_the_entrys_route_with_the_entrys_body():
    """google-genai, offline: what it sends is what the entry's route answers."""
    import httpx2
    from google import genai
    from google.genai import types

    seen = []
    body = (b"event: interaction.completed\ndata: "
            + json.dumps({"interaction": {"id": "x", "status": "completed"},
                          "event_type": gi.INTERACTION_COMPLETED}).encode() + b"\n\n")

    def answer(request):
        seen.append(request)
        return httpx2.Response(200, headers={"content-type": "text/event-stream"},
                               content=body, request=request)

    http = httpx2.Client(transport=httpx2.MockTransport(answer))
    client = genai.Client(api_key="offline", http_options=types.HttpOptions(httpx_client=http))
    events = list(client.interactions.create(model="gemini-2.5-flash", input="Hi",
                                             stream=True))
    (request,) = seen
    assert request.method == "POST"
    assert _route_pattern(gi.ENTRY.route).match(request.url.path), request.url.path
    assert json.loads(request.content) == gi.ENTRY.request_body(
        {"model": "gemini-2.5-flash", "input": "Hi"})
    assert [type(e).__name__ for e in events] == ["InteractionCompletedEvent"]
