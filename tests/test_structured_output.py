"""Structured output on the Chat wire: a ``response_format`` json_schema makes the content a
pseudo tool call, as the Responses wire does with ``text.format``.

The request is data: `accumulate` and the history read the schema's name from
the capture's sidecar ``request``; the bare accumulator takes it as an argument.
"""

from __future__ import annotations

import json

from lesson_lib.accumulate import accumulate, accumulator_for, structured_output
from lesson_lib.accumulate.chat import ChatAccumulator
from lesson_lib.accumulate.history import History
from lesson_lib.capture.captures import Capture, from_bytes, load
from lesson_lib.partial_json import NOTHING
from lesson_lib.views.tool_card import ToolCardPane, card_text, end_event, show_tool_calls
from lesson_lib.wires.wire_events import parse_all

NAME = "openai-chat/structured-output"


def cap() -> Capture:
    return load(NAME, search_reference=False)


def content_of(capture: Capture) -> str:
    return "".join(c["delta"].get("content") or ""
                   for e in parse_all(capture.events) if e.type == "chat.completion.chunk"
                   for c in e.payload["choices"])


def walk(capture: Capture):
    """(event, views after it) for every event, then (None, views after finish)."""
    acc = accumulator_for(capture.wire, capture.request)
    for event in parse_all(capture.events):
        acc.feed(event)
        yield event, acc.tool_calls()
    acc.finish(capture.sse_diagnostics)
    yield None, acc.tool_calls()


def test_the_request_names_the_schema():
    capture = cap()
    assert capture.request["response_format"]["type"] == "json_schema"
    assert structured_output(capture.request) == "flight_search"
    assert structured_output({"response_format": {"type": "json_object"}}) is None
    assert structured_output({}) is None and structured_output(None) is None
    nameless = {"response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}
    assert structured_output(nameless) == "structured output"


def test_the_content_forms_a_pseudo_tool_call():
    capture = cap()
    text = content_of(capture)
    steps = list(walk(capture))
    views = [v for _, v in steps]
    first = next(i for i, v in enumerate(views) if v)
    (call,) = views[first]
    assert (call.kind, call.name, call.structured) == ("structured output", "flight_search",
                                                       True)
    assert call.address == (0, "content") and call.value is NOTHING
    # complete exactly at the chunk that carries finish_reason, forming until then
    done = next(i for i, (e, v) in enumerate(steps) if v and v[0].state == "complete")
    event = steps[done][0]
    assert event.payload["choices"][0]["finish_reason"] == "stop"
    fed = [v[0] for v in views[first:done]]
    assert all(v.state == "forming" for v in fed)
    settled = [len(v.settled_keys()) for v in fed if type(v.value) is dict]
    assert settled == sorted(settled) and 0 < settled[-1]
    assert fed[-1].raw == text and fed[-1].fragments > 50
    (end,) = views[-1]
    assert end.state == "complete" and end.value == json.loads(text) and end.raw == text
    assert end.end_event == event.index


def test_final_is_unchanged_the_content_stays_text():
    capture = cap()
    result = accumulate(capture)
    plain = ChatAccumulator()
    for event in parse_all(capture.events):
        plain.feed(event)
    plain.finish(capture.sse_diagnostics)
    assert result.complete and result.final == plain.final()
    assert result.final["choices"][0]["message"]["content"] == content_of(capture)
    assert plain.tool_calls() == []
    assert not [d for d in result.diagnostics if d.severity == "error"]


def test_without_a_response_format_there_is_no_pseudo_call():
    for name in ("openai-chat/text-usage", "openai-chat/refusal"):
        capture = load(name, search_reference=False)
        acc = accumulator_for(capture.wire, capture.request)
        for event in parse_all(capture.events):
            acc.feed(event)
        acc.finish(capture.sse_diagnostics)
        assert acc.tool_calls() == [], name


def cut_copy(capture: Capture) -> Capture:
    body = capture.body
    marker = b'"content":"'
    at = body.index(marker, len(body) // 2) + len(marker) + 2
    return from_bytes(body[:at], name="structured-output-cut", sidecar=capture.sidecar)


def test_a_cut_stream_cuts_the_call():
    capture = cut_copy(cap())
    (_, views), = list(walk(capture))[-1:]
    (call,) = views
    assert call.state == "cut" and call.structured
    assert type(call.value) is dict and call.value["origin"] == "CDG"
    result = accumulate(capture)
    assert not result.complete
    assert "block_never_stopped" in {d.code for d in result.diagnostics}


def test_the_history_gives_the_pseudo_call():
    capture = cap()
    history = History(capture, every=8)
    truth = [[(v.state, v.raw) for v in views] for _, views in walk(capture)][:-1]
    for k in (len(truth), 1, len(truth) // 2, 5, len(truth) - 3):
        got = [(v.state, v.raw) for v in history.accumulator_at(k).tool_calls()]
        assert got == truth[k - 1], k
    (end,) = history.end().tool_calls
    assert end.state == "complete" and end.name == "flight_search"


def test_the_tool_card_renders_it():
    capture = cap()
    n = len(capture.events)
    text = repr(show_tool_calls(capture))
    assert "flight_search" in text and "structured output" in text and "LH2229" in text
    middle = ToolCardPane().text(capture, n // 2)
    assert "flight_search" in middle
    html = ToolCardPane()(capture, n // 2)
    assert "flight_search" in html
    (view,) = History(cut_copy(capture)).end().tool_calls
    assert "flight_search" in card_text(view)


def test_the_card_names_the_finish_reason_as_the_end_of_chat_structured_output():
    *_, (_, views) = walk(cap())
    (view,) = [v for v in views if v.structured]
    assert end_event(view) == "finish_reason"
