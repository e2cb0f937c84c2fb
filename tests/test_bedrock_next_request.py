"""Bedrock's next request: Converse's content blocks, and Anthropic's messages inside Invoke's body.

After a step that asked for tools, ConverseStream's next request carries an
``assistant`` message of the step's content blocks (text, reasoning with its
signature, ``toolUse`` with the parsed input), then a ``user`` message of
``toolResult`` blocks; InvokeModel's carries Anthropic's messages in its
``body``. Checked against the recorded step-2 requests of the weather turn, against
botocore's own service model (its validator, offline: the shape boto3 would
send), and, on every Converse stream that ends properly, against the
message as the accumulator assembles it (the non-streaming API's
``output.message``).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from botocore.session import get_session
from botocore.validate import ParamValidator
from pending import readable

from lesson_lib.accumulate import accumulate
from lesson_lib.capture.captures import corpus, load, reference_corpus
from lesson_lib.turn.fake_tools import FakeTool, ToolFailed, weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.next_request import next_request
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_events

CONVERSE, INVOKE = "aws-bedrock-converse", "aws-bedrock-invoke"
REQUEST = {"modelId": "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
           "messages": [{"role": "user", "content": [{"text": "Hi"}]}]}


def _converse_problems(request: dict) -> str:
    """What botocore's validator finds wrong in a Converse request ('' when nothing)."""
    model = get_session().get_service_model("bedrock-runtime")
    report = ParamValidator().validate(request, model.operation_model("Converse").input_shape)
    return report.generate_report() if report.has_errors() else ""


def _weather_turn(wire: str, tool=None):
    steps = [load(f"{wire}/weather-turn-step1"), load(f"{wire}/weather-turn-step2")]
    result = asyncio.run(run_turn(steps[:1] if tool else steps, [tool or weather_tool()],
                                  route="wire"))
    index = next((e.seq for e in result.events if e.kind == "step_started" and e.step == 2),
                 None)
    state = result.state.at(index) if index is not None else result.state
    return steps, next_request(state, steps[0].request, step=1)


@pytest.mark.parametrize("wire", [CONVERSE, INVOKE])
def test_the_weather_turns_next_request_is_the_recorded_one(wire):
    steps, rebuilt = _weather_turn(wire)
    assert rebuilt == steps[1].request


def test_the_weather_turns_converse_request_is_one_boto3_would_send():
    steps, rebuilt = _weather_turn(CONVERSE)
    assert _converse_problems(steps[0].request) == ""
    assert _converse_problems(rebuilt) == ""
    assistant, results = rebuilt["messages"][1:]
    assert [next(iter(block)) for block in assistant["content"]] == ["text", "toolUse",
                                                                     "toolUse"]
    assert [r["toolResult"]["content"][0]["json"]["location"] for r in results["content"]] \
        == ["Paris, France", "Tokyo, Japan"]


def test_the_validator_sees_a_malformed_request():
    # The check above must be able to fail: a toolUse without its input is refused.
    bad = {**REQUEST, "messages": REQUEST["messages"] + [
        {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "f"}}]}]}
    assert "input" in _converse_problems(bad)


def test_a_failed_tool_goes_back_as_an_error_result():
    def fails(arguments):
        raise ToolFailed("the weather service timed out")
    _, request = _weather_turn(CONVERSE, FakeTool("get_weather", fails, 10.0))
    results = [block["toolResult"] for block in request["messages"][-1]["content"]]
    assert len(results) == 2 and all(r["status"] == "error" for r in results)
    assert all("text" in r["content"][0] for r in results)
    assert _converse_problems(request) == ""
    _, invoke = _weather_turn(INVOKE, FakeTool("get_weather", fails, 10.0))
    assert all(r["is_error"] for r in invoke["body"]["messages"][-1]["content"])


def _converse_captures():
    found = [c for c in corpus() if c.wire == CONVERSE]
    found += [c for c in readable(reference_corpus()) if c.wire == CONVERSE]
    return [c for c in found if c.status < 300]


CAPTURES = _converse_captures()


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.key for c in CAPTURES])
def test_the_models_blocks_go_back_as_the_api_assembles_them(capture):
    final = accumulate(capture)
    if not final.complete:
        pytest.skip(f"{capture.key} does not end properly: no whole content to send back")
    request = next_request(reduce_all(turn_events(capture, "wire")), REQUEST)
    assert request["messages"][0] == REQUEST["messages"][0]
    sent = request["messages"][1]
    assembled = [_sendable(block) for block in final.final["output"]["message"]["content"]
                 if _sendable(block) is not None]
    assert sent["role"] == "assistant" and sent["content"] == assembled
    assert _converse_problems(request) == ""


def _sendable(block: dict) -> dict | None:
    """A block of the non-streaming message as it goes back: cited text as its text; a
    server tool's call and result stay with the provider; a call goes back without its
    start's optional ``type`` (the request's ``ToolUseBlock`` does not need it)."""
    if "citationsContent" in block:
        return {"text": "".join(c["text"] for c in block["citationsContent"]["content"])}
    use = block.get("toolUse")
    if "toolResult" in block or (use or {}).get("type") == "server_tool_use":
        return None
    if use is not None:
        return {"toolUse": {k: v for k, v in use.items() if k != "type"}}
    return block


def test_the_request_given_is_not_modified():
    request = {"modelId": "m", "messages": [{"role": "user", "content": [{"text": "Hi"}]}]}
    capture = CAPTURES[0]
    next_request(reduce_all(turn_events(capture, "wire")), request)
    assert request == {"modelId": "m", "messages": [{"role": "user",
                                                     "content": [{"text": "Hi"}]}]}


@pytest.mark.parametrize("route", ["wire", "sdk"])
def test_redacted_reasoning_is_flagged_and_goes_back_as_it_came(route):
    # A Converse block that begins with redactedContent is reasoning only the provider can
    # read: the adapter flags it, and the next request sends those bytes back untouched
    # (the SDK route reads them as bytes and puts them back as the wire's base64 text).
    capture = load(f"{CONVERSE}/converse-redacted-reasoning")
    state = reduce_all(turn_events(capture, route))
    reasoning = [b for b in state.blocks if b.kind == "reasoning"]
    assert [b.redacted for b in reasoning] == [False, True]
    assert reasoning[0].signature and reasoning[0].text
    recorded = [json.loads(e.data)["delta"]["reasoningContent"] for e in capture.events
                if '"redactedContent"' in e.data]
    request = next_request(state, REQUEST)
    sent = request["messages"][1]["content"]
    assert sent[:2] == [{"reasoningContent": {"reasoningText": {
        "text": reasoning[0].text, "signature": reasoning[0].signature}}},
        {"reasoningContent": recorded[0]}]
    assert _converse_problems(request) == ""
