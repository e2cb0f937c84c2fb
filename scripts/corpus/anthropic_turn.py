"""The weather turn on the Anthropic wire: two model calls of one agent turn.

Step 1 answers "weather in Paris and Tokyo" with text and two parallel
``get_weather`` calls (stop_reason ``tool_use``). Step 2 is the next
request: the conversation so far, the assistant's step-1 content sent back
verbatim, and both tool results; its stream is the final answer. The
question, tool, arguments, results and answer come from `weather_turn`,
the turn's one definition for every wire. The tool ids are drawn once for
the turn, so step 2's request refers to exactly the ids step 1 announced.
"""

from __future__ import annotations

import random
import zlib
from typing import Any

from . import weather_turn as weather
from .anthropic_requests import request, user
from .anthropic_writer import BASE58, HELPER, AnthropicWriter, Scenario, token_estimate

STEP1_TEXT = "I'll check the weather in both cities at once."

TOOL = weather.anthropic_tool()


def turn_tool_ids() -> tuple[str, str]:
    """The two tool-use ids of the turn (the same for both steps)."""
    rng = random.Random(zlib.crc32(weather.TURN_NAME.encode()))
    paris, tokyo = ("toolu_01" + "".join(rng.choice(BASE58) for _ in range(22))
                    for _ in range(2))
    return paris, tokyo


def _calls() -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": tool_id, "name": weather.TOOL_NAME, "input": dict(args)}
            for tool_id, args in zip(turn_tool_ids(), weather.CALLS, strict=True)]


def step1(w: AnthropicWriter, rid: str) -> Scenario:
    """Text, then get_weather for Paris and for Tokyo; stop_reason tool_use."""
    calls = _calls()
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=468)
    w.text_block(0, STEP1_TEXT, ping_probability=1.0)
    for slot, call in enumerate(calls, start=1):
        w.tool_use_block(slot, call["id"], call["name"], call["input"])
    w.maybe_ping(0.5)
    w.message_delta(stop_reason="tool_use", input_tokens=468, output_tokens=131)
    w.message_stop()
    final: dict[str, Any] = {"stop_reason": "tool_use", "content.0.text": STEP1_TEXT}
    for slot, call in enumerate(calls, start=1):
        final[f"content.{slot}.id"] = call["id"]
        final[f"content.{slot}.input"] = call["input"]
    return Scenario(
        demonstrates="Weather turn, step 1: text and two parallel get_weather calls "
                     "(Paris, Tokyo), stop_reason tool_use.",
        request=request("claude-sonnet-4-6", [user(weather.QUESTION)], tools=[TOOL]),
        based_on=("Recorded parallel tool_use streams (text block, then one tool_use "
                  "block after another, each with its own fragments); the same turn is "
                  "built on the OpenAI wires with the same tool, arguments and results."),
        sdk={"helper": HELPER, "raises": None, "text": STEP1_TEXT, "final": final,
             "note": "returns both calls; the caller must run them and send the results "
                     "back (step 2)"},
        turn={"name": weather.TURN_NAME, "step": 1},
    )


def step2_messages() -> list[dict[str, Any]]:
    """Step 2's conversation: question, step-1 content, both tool results."""
    calls = _calls()
    results = [{"type": "tool_result", "tool_use_id": call["id"],
                "content": weather.result_text(result)}
               for call, result in zip(calls, weather.RESULTS, strict=True)]
    assistant = {"role": "assistant",
                 "content": [{"type": "text", "text": STEP1_TEXT}, *calls]}
    return [user(weather.QUESTION), assistant, user(results)]


def step2(w: AnthropicWriter, rid: str) -> Scenario:
    """The final answer, written from both tool results."""
    w.message_start(model="claude-sonnet-4-6", message_id=w.message_id(), input_tokens=671,
                    output_tokens=2)
    w.text_block(0, weather.ANSWER, ping_probability=0.5)
    w.message_delta(stop_reason="end_turn", input_tokens=671,
                    output_tokens=token_estimate(weather.ANSWER))
    w.message_stop()
    return Scenario(
        demonstrates="Weather turn, step 2: the request carries both tool results; the "
                     "stream is the final answer text.",
        request=request("claude-sonnet-4-6", step2_messages(), tools=[TOOL]),
        based_on=("An ordinary text stream answering the tool results of step 1 (Paris "
                  "18 °C light rain, Tokyo 24 °C clear); the answer is the same text as "
                  "on the OpenAI wires."),
        sdk={"helper": HELPER, "raises": None, "text": weather.ANSWER,
             "final": {"stop_reason": "end_turn", "content.0.text": weather.ANSWER},
             "note": "returns the final answer; the turn is complete"},
        turn={"name": weather.TURN_NAME, "step": 2},
    )


CAPTURES = {"weather-turn-step1": step1, "weather-turn-step2": step2}
