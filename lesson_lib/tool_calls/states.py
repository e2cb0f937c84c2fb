"""What a tool call can be: its four states, and why one is invalid.

``forming``, ``complete``, ``invalid``, ``cut``: see `lesson_lib.tool_calls`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ToolCallState = Literal["forming", "complete", "invalid", "cut"]


@dataclass(frozen=True)
class CallError:
    """Why a call's arguments are not JSON: the 0-based character `position`, and a
    `message` that says what was expected there (from `PartialJSONError`)."""

    position: int
    message: str

    def __str__(self) -> str:
        return f"{self.message} (at character {self.position})"
