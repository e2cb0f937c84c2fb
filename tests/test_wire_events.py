"""The payload station: strict JSON, and no input that makes it raise."""

from __future__ import annotations

import json
import re

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.accumulate import accumulate
from lesson_lib.capture.captures import from_bytes
from lesson_lib.sse.decoder import ServerSentEvent
from lesson_lib.sse.strict_json import _STRICT, MAX_DEPTH, nested_deeper_than, strict_loads
from lesson_lib.views.event_table import event_table
from lesson_lib.wires.wire_events import parse_payload

WIRE = {"wire": "anthropic-messages"}
MS = {"type": "message_start", "message": {
    "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
    "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}


def body(*payloads: str) -> bytes:
    out = []
    for text in payloads:
        name = re.match(r'\{"type": ?"(\w+)"', text).group(1)
        out.append(f"event: {name}\ndata: {text}\n\n")
    return "".join(out).encode()


def deep_tool_start(depth: int) -> str:
    return ('{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
            '"id":"t","name":"f","input":' + "[" * depth + "]" * depth + "}}")


@pytest.mark.parametrize("depth", [1_000, 10_000])
def test_a_payload_nested_deeper_than_the_reader_is_a_parse_error_not_a_crash(depth):
    ev = parse_payload(ServerSentEvent(None, deep_tool_start(depth)))
    assert ev.payload is None and "nested too deeply" in ev.parse_error
    cap = from_bytes(body(json.dumps(MS), deep_tool_start(depth)), sidecar=WIRE)
    assert not accumulate(cap).complete
    assert len(event_table(cap)) == 2


def test_the_depth_limit_is_the_courses_own_not_the_interpreters():
    # Python 3.12 and 3.13 read 1,000 levels, 3.11 does not: the limit must not move with them.
    # (The payload nests two levels around the tool input.)
    at_limit = parse_payload(ServerSentEvent(None, deep_tool_start(MAX_DEPTH - 2)))
    assert at_limit.parse_error is None and at_limit.payload["content_block"]["input"]
    over = parse_payload(ServerSentEvent(None, deep_tool_start(MAX_DEPTH - 1)))
    assert over.payload is None and f"over {MAX_DEPTH} levels" in over.parse_error


@pytest.mark.parametrize(("data", "deeper"), [
    ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), True),
    ("[" * MAX_DEPTH + "]" * MAX_DEPTH, False),
    ('["' + "[" * 600 + '"]', False),              # brackets inside a string do not nest
    ('["\\\\"' + ", [" * 600 + "]" * 601, True),   # an escaped backslash does not hide the quote
    ('["\\"' + "[" * 600 + '"]', False),           # an escaped quote does not end the string
    ('{"a": "\\\\"}' + "{" * 600, True),
])
def test_nesting_is_counted_outside_strings(data, deeper):
    assert nested_deeper_than(data) is deeper


@pytest.mark.parametrize(("data", "says"), [
    ('{"type": "x", "v": NaN}', "NaN"),
    ('{"type": "x", "v": -Infinity}', "Infinity"),
    ('{"type": "x", "v": 1e999}', "too large"),
    ('{"type": "x", "a": 1, "a": 2}', "'a' appears twice"),
    ('{"type": "x", "inner": {"b": 1, "b": 1}}', "'b' appears twice"),
])
def test_payloads_are_strict_json(data, says):
    ev = parse_payload(ServerSentEvent("x", data))
    assert ev.payload is None and says in ev.parse_error


def test_strict_json_still_reads_what_is_json():
    ev = parse_payload(ServerSentEvent(None, '{"type": "x", "v": [1.5e300, -0.0, 2], "w": {}}'))
    assert ev.parse_error is None and ev.payload["v"] == [1.5e300, -0.0, 2]


# -- the quick read: the strict reader's answer, every time ------------------------------

_names = st.sampled_from(["a", "b", "\\u0061", "a:b", "text", ""])
_scalars = st.sampled_from(["1", "-0.5", "1e999", "NaN", "-Infinity", "true", "null",
                            '"x"', '"x:y"', '"\\":"', '"\\u003a"'])


@st.composite
def _json_texts(draw, depth=0):
    """JSON-like text from names and scalars: names possibly given twice, values not JSON."""
    if depth > 2 or draw(st.booleans()):
        return draw(_scalars)
    space = draw(st.sampled_from(["", " ", "\n"]))
    if draw(st.booleans()):
        items = draw(st.lists(_json_texts(depth + 1), max_size=3))
        return "[" + f",{space}".join(items) + "]"
    pairs = draw(st.lists(st.tuples(_names, _json_texts(depth + 1)), max_size=4))
    return "{" + f",{space}".join(f'"{n}"{space}:{space}{v}' for n, v in pairs) + "}"


def _strict_answer(read, text):
    try:
        return "value", read(text)
    except ValueError as exc:
        return "error", str(exc)


@settings(max_examples=examples(400), deadline=None)
@given(_json_texts(), st.sampled_from(["", " ", "x"]))
def test_the_quick_read_answers_as_the_strict_reader_does(text, after):
    # `strict_loads` may skip the name check only where a count proves it idle: on any
    # text (names twice, escaped twice, colons in strings, NaN, trailing text) it must
    # give the strict reader's value or its very error.
    text += after
    assert _strict_answer(strict_loads, text) == _strict_answer(_STRICT.decode, text)


@pytest.mark.parametrize("data", [
    '{"type":"x","a":"one: two","a":1}',     # a colon in a string hides the second name
    '{"type":"x","a":1,"\\u0061":2}',       # the same name, spelled two ways
    '{"type":"x","v":[{"b":1,"b":2}]}',      # inside an array
])
def test_a_name_given_twice_is_found_however_the_text_hides_it(data):
    ev = parse_payload(ServerSentEvent("x", data))
    assert ev.payload is None and "appears twice" in ev.parse_error
