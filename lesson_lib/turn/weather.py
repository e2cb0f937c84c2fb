"""``get_weather``: the weather tool of the weather turn, its schema and its results.

The constructed weather captures call this tool for Paris and Tokyo; a fake
tool that answers from ``RESULTS`` sends back the same JSON the captures'
second step carries.
"""

from __future__ import annotations

import json
from typing import Any

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

RESULTS: list[dict[str, Any]] = [
    {"location": "Paris, France", "temperature": 18, "unit": "celsius",
     "conditions": "light rain"},
    {"location": "Tokyo, Japan", "temperature": 24, "unit": "celsius",
     "conditions": "clear"},
]


def result_for(location: str) -> dict[str, Any] | None:
    """The fixed weather for a city the tool knows, or None for any other."""
    for result in RESULTS:
        if result["location"] == location:
            return dict(result)
    return None


def result_text(result: dict[str, Any]) -> str:
    """A tool result as the application sends it back (JSON text)."""
    return json.dumps(result, ensure_ascii=False)


def anthropic_tool() -> dict[str, Any]:
    """``get_weather`` as an Anthropic Messages tool."""
    return {"name": TOOL_NAME, "description": TOOL_DESCRIPTION,
            "input_schema": TOOL_PARAMETERS}


def responses_tool() -> dict[str, Any]:
    """``get_weather`` as a Responses API function tool."""
    return {"type": "function", "name": TOOL_NAME, "description": TOOL_DESCRIPTION,
            "parameters": TOOL_PARAMETERS, "strict": True}


def chat_tool() -> dict[str, Any]:
    """``get_weather`` as a Chat Completions function tool."""
    return {"type": "function",
            "function": {"name": TOOL_NAME, "description": TOOL_DESCRIPTION,
                         "parameters": TOOL_PARAMETERS, "strict": True}}
