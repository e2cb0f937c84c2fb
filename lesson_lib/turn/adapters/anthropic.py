"""The Anthropic Messages adapter: blocks by index, `stop_reason`, cumulative usage."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ..events import Finish, Usage
from .base import WireAdapter


class AnthropicAdapter(WireAdapter):
    """Turn events from the Anthropic accumulator's changes."""

    wire = wires.anthropic.WIRE
    redacted_kinds = frozenset({wires.anthropic.REDACTED_THINKING_BLOCK})

    def classify(self, opened: ch.SlotOpened):
        """Server tool calls, their results and what the server did on its own
        (`wires.anthropic.SERVER_ACTION_BLOCKS`) are server-side; redacted thinking is
        reasoning."""
        kind = opened.slot_kind
        if kind in wires.anthropic.SERVER_CALL_BLOCKS:
            return "tool_call", True, "text"
        if kind in self.redacted_kinds:
            return "reasoning", False, "reasoning"
        if kind.endswith("_tool_result"):
            return "tool_result", True, "other"
        if kind in wires.anthropic.SERVER_ACTION_BLOCKS:
            return "other", True, "other"
        return super().classify(opened)

    def finish(self) -> Finish:
        """From ``stop_reason`` (``pause_turn`` is a pause, ``max_tokens`` a length stop)."""
        raw = self.response.get("stop_reason")
        return Finish(wires.anthropic.finish_reason(raw) or "other", raw)

    def step_usage(self, raw: Any) -> Usage:
        """The step's usage; with ``usage.iterations``, each hop's usage too, and the
        counts their sum (`wires.anthropic.usage_counts`)."""
        usage = super().step_usage(raw)
        hops = wires.anthropic.iterations(raw)
        if not hops:
            return usage
        return replace(usage, hops=tuple(
            Usage(**wires.anthropic.usage_counts(hop), raw=hop) for hop in hops))

    def merge_usage(self, old: Any, new: Any) -> Any:
        """``message_start`` has the input counts, each ``message_delta`` the output so far."""
        if isinstance(old, dict) and isinstance(new, dict):
            return {**old, **{k: v for k, v in new.items() if v is not None}}
        return new
