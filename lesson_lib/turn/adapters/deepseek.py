"""DeepSeek, an OpenAI-compatible Chat server: the Chat adapter plus what it says its way.

DeepSeek streams the Chat Completions wire. What it adds, the Chat
accumulator already reads as a compatible server's fields (its
``reasoning_content`` deltas become a reasoning slot, so a reasoning block).
What differs for the turn is its usage: cache hits are counted in
``prompt_cache_hit_tokens`` (and misses in ``prompt_cache_miss_tokens``),
where OpenAI says ``prompt_tokens_details.cached_tokens``. Everything else is
the Chat adapter's: this module is the whole cost of one more provider.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..events import Usage
from .chat import ChatAdapter


class DeepSeekChatAdapter(ChatAdapter):
    """Turn events from a DeepSeek Chat stream: its cache hits read from its own field."""

    def step_usage(self, raw: Any) -> Usage:
        """Chat's usage, with cache reads from ``prompt_cache_hit_tokens`` when present."""
        usage = super().step_usage(raw)
        hits = raw.get("prompt_cache_hit_tokens") if isinstance(raw, dict) else None
        if isinstance(hits, int) and not isinstance(hits, bool):
            usage = replace(usage, cache_read=hits)
        return usage
