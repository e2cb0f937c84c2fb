"""The Responses adapter: output items and their parts, a finish reason derived.

Responses addresses text to a part of an item (``(output_index,
content_index)``), a reasoning summary to ``(output_index, "summary", i)``
and a call to its item ``(output_index,)``. A ``message`` item only holds
parts, so it is no block of its own; a reasoning item is one block, its
summary parts' text included (the item keeps ``encrypted_content``).

There is no finish-reason field: it is derived from ``status``,
``incomplete_details.reason`` and whether the output holds a function call.
"""

from __future__ import annotations

from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ..events import Finish
from .base import CONTAINER, PARENT, WireAdapter

_CLIENT_CALLS = frozenset({"function_call", "custom_tool_call"})
# Items the server makes on its own that are neither text nor a call: the context it
# compacted, the tools it listed from an MCP server.
_SERVER_ITEMS = frozenset({"compaction", "mcp_list_tools"})


class ResponsesAdapter(WireAdapter):
    """Turn events from the Responses accumulator's changes."""

    wire = "openai-responses"

    def classify(self, opened: ch.SlotOpened):
        """Messages hold parts; summary parts join their reasoning item; ``*_call`` items
        other than function calls are the provider's own tools."""
        kind = opened.slot_kind
        if opened.structured:
            return super().classify(opened)
        if kind == "message":
            return CONTAINER, False, "text"
        if kind in ("summary_text", "reasoning_text"):
            return PARENT, False, "reasoning"
        if kind == "reasoning":
            return "reasoning", False, "reasoning"
        if kind in _CLIENT_CALLS:
            return "tool_call", False, "text"
        if kind.endswith("_call"):
            return "tool_call", True, "text"     # web search, code interpreter...
        if kind in _SERVER_ITEMS:
            return "other", True, "other"
        return super().classify(opened)

    def parent(self, address: Any) -> Any:
        """A part's item: ``(output_index, ...)`` -> ``(output_index,)``."""
        if isinstance(address, tuple) and len(address) > 1:
            return address[:1]
        return None

    def finish(self) -> Finish:
        """Derived from ``status``, ``incomplete_details`` and the function calls."""
        status = self.response.get("status")
        details = self.response.get("incomplete_details")
        reason = details.get("reason") if isinstance(details, dict) else None
        called = any(b.kind == "tool_call" and not b.server_side for b in self.order)
        raw = {"status": status, "incomplete_details": details}
        found = wires.responses.finish_from(status, reason, called_tools=called)
        return Finish(found or "other", raw)
