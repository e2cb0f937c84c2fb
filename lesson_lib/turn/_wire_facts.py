"""Each wire's finish reasons, usage fields and retry facts, as the turn needs them.

Kept here, private and minimal, until `lesson_lib.wires` (one home per wire:
``for_wire(name).finish_reason(raw)`` and the retry facts) lands; then this
module moves there and the adapters import from it.
"""

from __future__ import annotations

from typing import Any

from .events import FinishReason, Usage

_ANTHROPIC_STOP: dict[str, FinishReason] = {
    "end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length",
    "model_context_window_exceeded": "length", "tool_use": "tool_calls",
    "pause_turn": "pause", "refusal": "refusal",
}
_CHAT_FINISH: dict[str, FinishReason] = {
    "stop": "stop", "length": "length", "tool_calls": "tool_calls",
    "function_call": "tool_calls", "content_filter": "content_filter",
}
_RESPONSES_INCOMPLETE: dict[str, FinishReason] = {
    "max_output_tokens": "length", "content_filter": "content_filter",
}

# Error types a retry can cure: the provider was busy or failed on its side.
_RETRYABLE_TYPES = frozenset({
    "overloaded_error", "rate_limit_error", "api_error", "server_error",
    "rate_limit_exceeded", "server_is_overloaded", "slow_down", "timeout",
    "internal_error", "service_unavailable",
})
_RETRYABLE_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})


def finish_reason(wire: str, raw: Any, *, status: str | None = None,
                  incomplete_reason: str | None = None,
                  called_tools: bool = False) -> FinishReason:
    """The unified finish reason of a step, from its wire's own value(s).

    Responses has no finish-reason field: it is derived from `status`, the
    `incomplete_reason` and whether the output holds a function call.
    """
    if wire == "anthropic-messages":
        return _ANTHROPIC_STOP.get(raw, "other") if isinstance(raw, str) else "other"
    if wire == "openai-chat":
        return _CHAT_FINISH.get(raw, "other") if isinstance(raw, str) else "other"
    if wire == "openai-responses":
        if status == "completed":
            return "tool_calls" if called_tools else "stop"
        if status == "incomplete":
            return _RESPONSES_INCOMPLETE.get(incomplete_reason or "", "other")
        if status == "failed":
            return "error"
        return "other"
    return "other"


def retryable(error_type: str | None = None, status: int | None = None) -> bool:
    """Whether sending the same request again can cure this provider error."""
    if status is not None and status in _RETRYABLE_STATUS:
        return True
    return error_type in _RETRYABLE_TYPES


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
