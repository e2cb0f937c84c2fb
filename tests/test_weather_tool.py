"""The weather tool's facts: the results a fake tool sends back are the ones the captures carry."""

from __future__ import annotations

import json

from lesson_lib.capture.captures import load
from lesson_lib.turn import weather


def test_result_for_a_known_city_is_a_copy_of_its_fixed_result():
    paris = weather.result_for("Paris, France")
    assert paris == {"location": "Paris, France", "temperature": 18, "unit": "celsius",
                     "conditions": "light rain"}
    paris["temperature"] = 0
    assert weather.result_for("Paris, France")["temperature"] == 18


def test_result_for_an_unknown_city_is_none():
    assert weather.result_for("Atlantis") is None


def test_the_chat_capture_sends_back_what_the_tool_answers():
    step2 = load("openai-chat/weather-turn-step2")
    sent = [m for m in step2.request["messages"] if m["role"] == "tool"]
    assert sent, "the second step carries the tool results"
    for message in sent:
        result = json.loads(message["content"])
        assert result == weather.result_for(result["location"])
        assert message["content"] == weather.result_text(result)


def test_every_wire_declares_the_same_schema():
    assert weather.anthropic_tool()["input_schema"] is weather.TOOL_PARAMETERS
    assert weather.responses_tool()["parameters"] is weather.TOOL_PARAMETERS
    assert weather.chat_tool()["function"]["parameters"] is weather.TOOL_PARAMETERS
