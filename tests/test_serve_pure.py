"""The server's pure parts: the fault grammar, capture matching, the chunk schedule, errors."""

from __future__ import annotations

import math

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.capture.captures import corpus, load
from lesson_lib.cli.serve import fault_spec, matching, streaming
from lesson_lib.cli.serve.errors import error_body

CORPUS = corpus()


# -- the fault grammar -----------------------------------------------------------------


@pytest.mark.parametrize("spec, name, arg", [
    ("cut:1200", "cut", 1200), ("error-after:5", "error-after", 5),
    ("stall:3000", "stall", 3000.0), ("stall:2.5", "stall", 2.5),
    ("drop-terminal", "drop-terminal", None), (" corrupt-json:3 ", "corrupt-json", 3),
])
def test_fault_specs_parse(spec, name, arg):
    parsed = fault_spec.parse(spec)
    assert (parsed.name, parsed.arg) == (name, arg)
    assert fault_spec.parse(str(parsed)) == parsed


@pytest.mark.parametrize("spec, says", [
    ("melt:3", "unknown fault 'melt'"), ("cut", "needs a number"), ("cut:", "needs a number"),
    ("cut:1.5", "needs a number"), ("cut:-4", "0 or more"), ("stall:nan", "0 or more"),
    ("stall:inf", "0 or more"), ("drop-terminal:1", "takes no argument"),
])
def test_bad_fault_specs_say_what_is_wrong(spec, says):
    with pytest.raises(fault_spec.FaultSpecError, match=says):
        fault_spec.parse(spec)


@settings(derandomize=True, max_examples=examples(300), deadline=None)
@given(st.text(max_size=30))
def test_any_spec_text_parses_or_is_a_fault_spec_error(text):
    try:
        parsed = fault_spec.parse_all([text])
    except fault_spec.FaultSpecError:
        return
    assert all(p.name in fault_spec.KINDS for p in parsed)


def test_faults_apply_in_order_and_a_fault_that_cannot_apply_is_a_spec_error():
    cap = load("anthropic-messages/hello")
    cut = fault_spec.apply(cap, fault_spec.parse_all(["stall:100,cut:500"]))
    assert cut.body == cap.body[:500]
    with pytest.raises(fault_spec.FaultSpecError, match="no event 999"):
        fault_spec.apply(cap, [fault_spec.parse("error-after:999")])
    with pytest.raises(fault_spec.FaultSpecError, match="HTTP 529"):
        fault_spec.apply(load("http-529-overloaded"), [fault_spec.parse("error-after:0")])


# -- matching ----------------------------------------------------------------------------


@pytest.mark.parametrize("cap", CORPUS, ids=lambda c: c.key)
def test_every_capture_is_found_by_name_and_by_its_own_request(cap):
    assert matching.find(CORPUS, cap.wire, {}, cap.key) is cap
    found = matching.find(CORPUS, cap.wire, cap.request, None)
    if isinstance(found, matching.Miss):
        assert found.status == 400 and cap.key in found.message   # ambiguous, and says so
    else:
        assert found is cap


def test_content_matching_normalises_string_and_block_content():
    cap = load("anthropic-messages/hello")
    blocks = {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hello"}]}],
              "model": cap.request["model"]}
    assert matching.by_content(CORPUS, cap.wire, blocks).key == cap.key
    text = load("openai-responses/text")
    as_list = {"input": [{"role": "user", "content": text.request["input"]}]}
    assert matching.by_content(CORPUS, text.wire, as_list).key == text.key


def test_misses_name_what_exists():
    miss = matching.find(CORPUS, "openai-chat", {"messages": [{"role": "user",
                                                              "content": "unheard of"}]}, None)
    assert isinstance(miss, matching.Miss) and miss.status == 404
    assert all(c.key in miss.message for c in CORPUS if c.wire == "openai-chat")
    wrong_wire = matching.find(CORPUS, "openai-chat", {}, "anthropic-messages/hello")
    assert wrong_wire.status == 400 and "/v1/messages" in wrong_wire.message
    ambiguous = matching.by_name(CORPUS, None, "refusal")
    assert ambiguous.status == 400 and "openai-chat/refusal" in ambiguous.message
    assert matching.by_name(CORPUS, "openai-chat", "refusal").key == "openai-chat/refusal"


# -- the schedule ------------------------------------------------------------------------


@pytest.mark.parametrize("cap", CORPUS[:12], ids=lambda c: c.key)
def test_the_schedule_is_the_body_at_the_recorded_times_scaled(cap):
    plan = streaming.schedule(cap, 1.0)
    assert b"".join(chunk for _, chunk in plan) == cap.body
    assert [due for due, _ in plan] == pytest.approx([t / 1000 for t in cap.chunk_times])
    fast = streaming.schedule(cap, 4.0)
    assert [d for d, _ in fast] == pytest.approx([d / 4 for d, _ in plan])
    assert {d for d, _ in streaming.schedule(cap, streaming.INSTANT)} == {0.0}


def test_at_instant_speed_only_a_stall_waits():
    cap = load("anthropic-messages/hello")
    stalled = fault_spec.apply(cap, [fault_spec.parse("stall:3000")])
    dues = [d for d, _ in streaming.schedule(stalled, streaming.INSTANT)]
    middle = (len(cap.chunk_ends) - 1) // 2
    assert dues == [0.0] * (middle + 1) + [3.0] * (len(dues) - middle - 1)


@pytest.mark.parametrize("text, speed", [("instant", math.inf), ("1", 1.0), ("0.5", 0.5)])
def test_speeds(text, speed):
    assert streaming.parse_speed(text) == speed


@pytest.mark.parametrize("text", ["0", "-1", "fast", "nan", ""])
def test_bad_speeds(text):
    with pytest.raises(streaming.SpeedError):
        streaming.parse_speed(text)


def test_replayed_headers_and_streaming_flag():
    cap = load("openai-chat/tool-call")
    headers = streaming.response_headers(cap)
    assert headers["x-request-id"] == cap.sidecar["response"]["headers"]["x-request-id"]
    assert headers["x-capture"] == cap.key and "content-length" not in headers
    assert streaming.is_streaming({"stream": True})
    assert streaming.is_streaming({"parameters": {"stream": True}})
    assert not streaming.is_streaming({"stream": False}) and not streaming.is_streaming({})


def test_error_bodies_are_in_each_providers_shape():
    assert error_body("anthropic-messages", 404, "m") == {
        "type": "error", "error": {"type": "not_found_error", "message": "m"}}
    assert error_body("openai-chat", 400, "m")["error"]["type"] == "invalid_request_error"
    assert error_body("openai-responses", 404, "m")["error"]["message"] == "m"
