"""Adapters: one per wire, from the accumulators' changes to turn events, and one
from the official SDKs' own stream events (`sdk`)."""

from __future__ import annotations

from .anthropic import AnthropicAdapter
from .base import Counter, WireAdapter
from .chat import ChatAdapter
from .responses import ResponsesAdapter

__all__ = ["AnthropicAdapter", "ChatAdapter", "Counter", "ResponsesAdapter", "WireAdapter",
           "adapter_for"]


def adapter_for(wire: str | None, step: int = 1, seq: Counter | None = None, **kw) -> WireAdapter:
    """A fresh adapter for one step on `wire` (``ValueError`` for an unknown wire)."""
    classes = {"anthropic-messages": AnthropicAdapter, "openai-responses": ResponsesAdapter,
               "openai-chat": ChatAdapter}
    if wire not in classes:
        raise ValueError(f"no turn adapter for wire {wire!r}")
    return classes[wire](step, seq, **kw)
