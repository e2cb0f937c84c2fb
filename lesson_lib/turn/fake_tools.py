"""Deterministic fake tools with declared durations, for the agent loop.

A fake tool answers from fixed data and says how long it takes (`duration`,
ms of virtual time): the loop runs it as a task and plays its duration on
its clock, so a run is the same every time and a lesson can say when each
tool started and ended. (The tools are plain functions: the loop is the one
async module.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .weather import TOOL_NAME, result_for, result_text


class ToolFailed(Exception):
    """A fake tool's own failure (its execution finishes with status ``error``)."""


@dataclass(frozen=True)
class FakeTool:
    """A tool the loop can run: `answer(input)` gives its result (or raises
    `ToolFailed`), after `duration` ms of virtual time."""

    name: str
    answer: Callable[[dict], Any]
    duration: float = 0.0


def _weather(arguments: dict) -> Any:
    location = arguments.get("location") if isinstance(arguments, dict) else None
    result = result_for(location) if isinstance(location, str) else None
    if result is None:
        raise ToolFailed(f"no weather for {location!r}")
    return result


def weather_tool(duration: float = 800.0) -> FakeTool:
    """``get_weather``: the weather turn's tool, answering the captures' own results."""
    return FakeTool(TOOL_NAME, _weather, duration)


def result_as_text(result: Any) -> str:
    """A tool result as the application sends it back to the model (JSON text)."""
    return result if isinstance(result, str) else result_text(result)
