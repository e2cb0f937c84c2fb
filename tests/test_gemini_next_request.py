"""Gemini's next request carries the model's parts back, thought signatures included.

Gemini's request format has no assistant message: the model's own parts go back
in ``contents`` under ``role: model``, each with the ``thoughtSignature`` it
came with (a call sent back without its signature is refused by the API with
``MISSING_THOUGHT_SIGNATURE``), then the tool results as ``functionResponse``
parts. Checked against the recorded step-2 request of the weather turn, and,
on every Gemini stream that ends properly, against the model's parts as the
accumulator assembles them (the non-streaming API's ``content``).
"""

from __future__ import annotations

import asyncio

import pytest
from pending import readable

from lesson_lib.accumulate import accumulate
from lesson_lib.capture.captures import corpus, load, reference_corpus
from lesson_lib.turn.fake_tools import weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.next_request import next_request
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_events

WIRE = "google-gemini"
REQUEST = {"model": "gemini-2.5-flash",
           "contents": [{"role": "user", "parts": [{"text": "Hi"}]}]}


def _gemini_captures():
    found = [c for c in corpus() if c.wire == WIRE]
    found += [c for c in readable(reference_corpus()) if c.wire == WIRE]
    return found


CAPTURES = [c for c in _gemini_captures() if c.status < 300]


def test_the_weather_turns_next_request_is_the_recorded_one_with_its_signature():
    steps = [load(f"{WIRE}/weather-turn-step1"), load(f"{WIRE}/weather-turn-step2")]
    result = asyncio.run(run_turn(steps, [weather_tool()], route="wire"))
    assert result.state.outcome == "completed"
    index = next(e.seq for e in result.events if e.kind == "step_started" and e.step == 2)
    rebuilt = next_request(result.state.at(index), steps[0].request, step=1)
    assert rebuilt == steps[1].request
    model = rebuilt["contents"][1]
    assert model["role"] == "model" and "thoughtSignature" in model["parts"][0]
    assert [p["functionResponse"]["response"]["location"] for p in
            rebuilt["contents"][2]["parts"]] == ["Paris, France", "Tokyo, Japan"]


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.key for c in CAPTURES])
def test_the_models_parts_go_back_as_the_api_assembles_them(capture):
    final = accumulate(capture)
    if not final.complete:
        pytest.skip(f"{capture.key} does not end properly: no whole content to send back")
    state = reduce_all(turn_events(capture, "wire"))
    request = next_request(state, REQUEST)
    assert request["contents"][0] == REQUEST["contents"][0]
    sent = request["contents"][1]
    assert sent["role"] == "model"
    assert sent["parts"] == [_with_args(p) for p in final.final["candidates"][0]["content"]["parts"]]


def _with_args(part: dict) -> dict:
    """A call that came with no arguments at all goes back with ``args: {}`` (its input)."""
    call = part.get("functionCall")
    if isinstance(call, dict) and "args" not in call:
        return {**part, "functionCall": {**call, "args": {}}}
    return part


def test_every_signature_the_stream_carried_goes_back():
    signed = 0
    for capture in CAPTURES:
        if not accumulate(capture).complete:
            continue
        parts = next_request(reduce_all(turn_events(capture, "wire")),
                             REQUEST)["contents"][1]["parts"]
        streamed = [p["thoughtSignature"] for e in capture.events
                    for p in _parts(e) if p.get("thoughtSignature")]
        sent = [p["thoughtSignature"] for p in parts if "thoughtSignature" in p]
        assert sent == streamed, capture.key
        signed += bool(sent)
    assert signed >= 3


def _parts(event):
    import json
    try:
        payload = json.loads(event.data)
    except ValueError:
        return []
    return [p for c in payload.get("candidates") or [] if isinstance(c, dict)
            for p in (c.get("content") or {}).get("parts") or [] if isinstance(p, dict)]


def test_a_failed_tool_goes_back_as_an_error_object():
    from lesson_lib.turn.fake_tools import FakeTool, ToolFailed

    def fails(arguments):
        raise ToolFailed("the weather service timed out")
    steps = [load(f"{WIRE}/weather-turn-step1")]
    result = asyncio.run(run_turn(steps, [FakeTool("get_weather", fails, 10.0)], route="wire"))
    request = next_request(result.state, steps[0].request, step=1)
    responses = [p["functionResponse"] for p in request["contents"][-1]["parts"]]
    assert len(responses) == 2
    assert all(set(r["response"]) == {"error"} and r["name"] == "get_weather" for r in responses)


def test_the_request_given_is_not_modified():
    request = {"model": "m", "contents": "Hi"}
    out = next_request(reduce_all(turn_events(load(f"{WIRE}/text-crlf"), "wire")), request)
    assert request == {"model": "m", "contents": "Hi"}
    assert out["contents"][0] == {"role": "user", "parts": [{"text": "Hi"}]}
