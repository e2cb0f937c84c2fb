"""Each wire's finish reasons, usage fields and retry facts, as the turn needs them.

The finish reasons and retry facts are `lesson_lib.wires`' (one home per
wire); this module keeps only the turn's own calling convention for them,
and the usage fields.
"""

from __future__ import annotations

from typing import Any

from .. import wires
from .events import FinishReason, Usage


def finish_reason(wire: str, raw: Any, *, status: str | None = None,
                  incomplete_reason: str | None = None,
                  called_tools: bool = False) -> FinishReason:
    """The unified finish reason of a step, from its wire's own value(s) (``other`` when
    there is none).

    Responses has no finish-reason field: it is derived from `status`, the
    `incomplete_reason` and whether the output holds a function call
    (`wires.responses.finish_from`).
    """
    if wire == wires.responses.WIRE:
        found = wires.responses.finish_from(status, incomplete_reason, called_tools=called_tools)
    elif wire in wires.WIRES:
        found = wires.WIRES[wire].finish_reason(raw)
    else:
        found = None
    return found or "other"


def retryable(error_type: str | None = None, status: int | None = None) -> bool:
    """Whether sending the same request again can cure this provider error: by its HTTP
    `status`, else by its type or code on any wire."""
    if status is not None and wires.retryable_status(status):
        return True
    return any(module.retryable_error(error_type) for module in wires.WIRES.values())


def _int(obj: Any, *path: str) -> int:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj if isinstance(obj, int) and not isinstance(obj, bool) else 0


def usage(wire: str, raw: Any) -> Usage:
    """A step's usage in the turn's terms, from its wire's usage object."""
    if not isinstance(raw, dict):
        return Usage(raw=raw)
    if wire == "anthropic-messages":
        read = _int(raw, "cache_read_input_tokens")
        write = _int(raw, "cache_creation_input_tokens")
        return Usage(_int(raw, "input_tokens") + read + write, _int(raw, "output_tokens"),
                     read, write, 0, raw)
    if wire == "openai-responses":
        return Usage(_int(raw, "input_tokens"), _int(raw, "output_tokens"),
                     _int(raw, "input_tokens_details", "cached_tokens"), 0,
                     _int(raw, "output_tokens_details", "reasoning_tokens"), raw)
    return Usage(_int(raw, "prompt_tokens"), _int(raw, "completion_tokens"),
                 _int(raw, "prompt_tokens_details", "cached_tokens"), 0,
                 _int(raw, "completion_tokens_details", "reasoning_tokens"), raw)
