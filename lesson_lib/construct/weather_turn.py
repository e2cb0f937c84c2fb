"""The weather turn: one agent turn in two model calls, the same story on every wire.

Step 1: the user asks about Paris and Tokyo; the model calls
``get_weather`` twice in parallel. Step 2: the tool results go back and the
model answers. The Anthropic captures tell the same story with the same
tool, arguments and results, so a lesson can put the wires side by side.
"""

from __future__ import annotations

import json
from typing import Any

TURN_NAME = "weather-two-cities"
QUESTION = "What's the weather like in Paris and Tokyo right now?"

TOOL_NAME = "get_weather"
TOOL_DESCRIPTION = "Get the current weather for a city."
TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "location": {"type": "string",
                     "description": "City and country, e.g. \"Paris, France\""},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                 "description": "Temperature unit"},
    },
    "required": ["location", "unit"],
    "additionalProperties": False,
}

CALLS: list[dict[str, Any]] = [
    {"location": "Paris, France", "unit": "celsius"},
    {"location": "Tokyo, Japan", "unit": "celsius"},
]

RESULTS: list[dict[str, Any]] = [
    {"location": "Paris, France", "temperature": 18, "unit": "celsius",
     "conditions": "light rain"},
    {"location": "Tokyo, Japan", "temperature": 24, "unit": "celsius",
     "conditions": "clear"},
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


def result_text(result: dict[str, Any]) -> str:
    """A tool result as the application sends it back (JSON text)."""
    return json.dumps(result, ensure_ascii=False)


def responses_tool() -> dict[str, Any]:
    """``get_weather`` as a Responses API function tool."""
    return {"type": "function", "name": TOOL_NAME, "description": TOOL_DESCRIPTION,
            "parameters": TOOL_PARAMETERS, "strict": True}


def chat_tool() -> dict[str, Any]:
    """``get_weather`` as a Chat Completions function tool."""
    return {"type": "function",
            "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION,
                         "parameters": TOOL_PARAMETERS, "strict": True}}
