"""The weather turn: one agent turn in two model calls, the same story on every wire.

Step 1: the user asks about Paris and Tokyo; the model calls
``get_weather`` twice in parallel. Step 2: the tool results go back and the
model answers. The Anthropic captures tell the same story with the same
tool (``lesson_lib.turn.weather``), arguments and results, so a lesson can
put the wires side by side.
"""

from __future__ import annotations

import json
from typing import Any

# The tool itself lives in lesson_lib (an agent loop runs it at replay time);
# the builders read it through this module with the rest of the story.
from lesson_lib.turn.weather import (  # noqa: F401
    RESULTS,
    TOOL_DESCRIPTION,
    TOOL_NAME,
    TOOL_PARAMETERS,
    anthropic_tool,
    chat_tool,
    responses_tool,
    result_text,
)

TURN_NAME = "weather-two-cities"
QUESTION = "What's the weather like in Paris and Tokyo right now?"

CALLS: list[dict[str, Any]] = [
    {"location": "Paris, France", "unit": "celsius"},
    {"location": "Tokyo, Japan", "unit": "celsius"},
]

ANSWER = (
    "Here's the weather right now:\n\n"
    "- **Paris, France:** 18 °C with light rain 🌧️, so take an umbrella.\n"
    "- **Tokyo, Japan:** 24 °C and clear ☀️, a pleasant evening to be outside.\n\n"
    "Tokyo is about 6 °C warmer than Paris at the moment."
)


def arguments_text(call: dict[str, Any]) -> str:
    """A call's arguments as the model writes them (compact JSON)."""
    return json.dumps(call, ensure_ascii=False, separators=(",", ":"))
