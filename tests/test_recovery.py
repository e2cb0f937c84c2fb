"""After an error that came after output: continue or redo, what each pays again, and no tool
run twice, on every wire."""

from __future__ import annotations

import asyncio
import json
import math

import pytest

from lesson_lib.breaks import faults, recovery
from lesson_lib.capture.captures import load
from lesson_lib.turn.fake_tools import weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.run import turn_state
from lesson_lib.wires.wire_events import parse_all

AFTER_OUTPUT = ("anthropic-messages/overloaded-after-text", "openai-responses/error-then-failed",
                "openai-chat/error-mid-stream")
WIRES = ("anthropic-messages", "openai-responses", "openai-chat")


def _messages(request: dict) -> list:
    return request["input"] if "input" in request and isinstance(request["input"], list) \
        else request["messages"]


def _assistant_text(item: dict) -> str:
    content = item["content"]
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content)


def _start_input_tokens(capture) -> int | None:
    """Anthropic's input count from the capture's own message_start, read from the bytes."""
    for ev in parse_all(capture.events):
        if ev.type == "message_start":
            return ev.payload["message"]["usage"]["input_tokens"]
    return None


@pytest.mark.parametrize("key", AFTER_OUTPUT)
def test_both_options_are_laid_out_with_what_each_pays_again(key):
    capture = load(key)
    state = turn_state(capture, route="auto")
    laid = recovery.after_output_options(state, capture.request)
    assert laid.step == 1 and laid.wire == capture.wire and not laid.diagnostics
    text = [b for b in state.blocks if b.kind == "text"]
    assert laid.partial_text == "".join(b.text for b in text) and laid.partial_text
    assert all(not b.complete for b in text)
    # The output so far: no stream in the corpus reports it after the error, so it is estimated.
    assert laid.output_so_far == recovery.Tokens(math.ceil(len(laid.partial_text) / 4),
                                                 recovery.ESTIMATE)
    if capture.wire == "anthropic-messages":
        assert laid.input_tokens == recovery.Tokens(_start_input_tokens(capture),
                                                    recovery.REPORTED)
    else:
        assert laid.input_tokens == recovery.input_estimate(capture.request)
        assert laid.input_tokens.basis == recovery.ESTIMATE
    go_on, redo = laid.option("continue"), laid.option("redo")
    prompt = math.ceil(len(recovery.CONTINUE_PROMPT) / 4)
    assert go_on.input_again.value == laid.input_tokens.value + laid.output_so_far.value + prompt
    assert go_on.input_again.basis == recovery.ESTIMATE
    assert go_on.output_again.value == 0
    assert redo.input_again == laid.input_tokens and redo.output_again == laid.output_so_far
    assert "(estimate)" in laid.text() and "continue" in laid.text() and "redo" in laid.text()


@pytest.mark.parametrize("key", AFTER_OUTPUT)
def test_continue_sends_the_partial_back_and_asks_to_go_on_redo_sends_the_same(key):
    capture = load(key)
    state = turn_state(capture, route="auto")
    laid = recovery.after_output_options(state, capture.request)
    sent = _messages(laid.option("continue").request)
    before = _messages(capture.request) if not isinstance(capture.request.get("input"), str) \
        else [{"role": "user", "content": capture.request["input"]}]
    assert sent[:len(before)] == before
    assistant, ask = sent[len(before):]
    assert assistant["role"] == "assistant" and _assistant_text(assistant) == laid.partial_text
    assert ask == {"role": "user", "content": recovery.CONTINUE_PROMPT}
    assert laid.option("redo").request == capture.request
    assert capture.request == load(key).request          # the step's own request is untouched


@pytest.mark.parametrize("key", ["anthropic-messages/hello", "anthropic-messages/overloaded-first",
                                 "openai-responses/http-429", "openai-chat/cut-in-arguments"])
def test_no_options_where_the_turn_did_not_fail_after_output(key):
    capture = load(key)
    laid = recovery.after_output_options(turn_state(capture, route="auto"), capture.request)
    assert laid.options == () and [d.code for d in laid.diagnostics] == ["not_after_output"]
    assert laid.text().startswith("no options")


def test_without_the_request_the_input_is_reported_or_unknown_never_guessed():
    capture = load("openai-chat/error-mid-stream")
    laid = recovery.after_output_options(turn_state(capture, route="auto"))
    assert laid.input_tokens.basis == recovery.UNKNOWN and str(laid.input_tokens) == "unknown"
    assert laid.option("continue").request is None
    assert laid.option("continue").input_again.basis == recovery.UNKNOWN


def test_anthropic_output_is_reported_once_message_delta_came():
    hello = load("anthropic-messages/hello")
    events = parse_all(hello.events)
    delta = next(e for e in events if e.type == "message_delta")
    after = turn_state(faults.inject_error(hello, delta.index), route="auto")
    before = turn_state(faults.inject_error(hello, delta.index - 1), route="auto")
    assert recovery.after_output_options(after).output_so_far == recovery.Tokens(
        delta.payload["usage"]["output_tokens"], recovery.REPORTED)
    assert recovery.after_output_options(before).output_so_far.basis == recovery.ESTIMATE


@pytest.mark.parametrize("wire", WIRES)
def test_tools_that_ran_are_reused_in_both_options_never_run_again(wire):
    step1, step2 = load(f"{wire}/weather-turn-step1"), load(f"{wire}/weather-turn-step2")
    failing = faults.inject_error(step2, len(step2.events) // 2)
    result = asyncio.run(run_turn([step1, failing], [weather_tool()], route="auto"))
    state = result.state
    assert state.outcome == "failed" and [r.status for r in result.runs] == ["ok", "ok"]
    laid = recovery.after_output_options(state, failing.request)
    assert laid.step == 2
    tools = {t.call_id: t for t in laid.tools}
    assert [t.state for t in laid.tools] == ["ran", "ran"]
    assert set(tools) == {r.call_id for r in result.runs}
    # Each result goes back exactly once, in the continued request and in the redone one.
    for option in laid.options:
        text = json.dumps(option.request)
        for call_id in tools:
            assert text.count(call_id) == json.dumps(failing.request).count(call_id) > 0
    assert "never run again" in laid.text()


def test_a_call_ready_in_the_failed_step_runs_once_and_a_cut_one_is_dropped():
    step1 = load("anthropic-messages/weather-turn-step1")
    events = parse_all(step1.events)
    stops = [e.index for e in events if e.type == "content_block_stop"]
    # Error after the first call closed and after the second had begun to stream.
    failing = faults.inject_error(step1, stops[-1] - 1)
    laid = recovery.after_output_options(turn_state(failing, route="auto"), failing.request)
    assert [t.state for t in laid.tools] == ["ready", "dropped"]
    # With the loop, the ready call ran before the error: reused, never run again.
    result = asyncio.run(run_turn([failing], [weather_tool()], route="auto"))
    laid = recovery.after_output_options(result.state, failing.request)
    assert [t.state for t in laid.tools][0] in ("ran", "running")
    assert laid.tools[-1].state == "dropped"
