"""The Responses adapter: output items and their parts, a finish reason derived.

Responses addresses text to a part of an item (``(output_index,
content_index)``), a reasoning summary to ``(output_index, "summary", i)``
and a call to its item ``(output_index,)``. A ``message`` item only holds
parts, so it is no block of its own; a reasoning item is one block, its
summary parts' text included (the item keeps ``encrypted_content``). Spoken
output addresses no item (``("audio",)``): an ``other`` block whose text is the
transcript and whose end data is the sound and the transcript, as on Chat.

Calls the client must answer are client tool calls: function and custom tool calls, an
``apply_patch_call`` (the client edits its files and sends ``apply_patch_call_output``), a
``local_shell_call``, a tool search the client runs (``execution: "client"``), and an
``mcp_approval_request``: the MCP call waits for the client's ``mcp_approval_response``, so
the step ends asking for a tool (finish ``tool_calls``), never as if answered. Items that state
their input whole (an operation, an arguments object, the approval's arguments) give it to
the call at their end (`stated_call`). A server tool whose finished item says it failed
(``response.mcp_call.failed``, ``response.mcp_list_tools.failed``) is noted
(``server_tool_failed``): the model goes on, so the step does not fail.

There is no finish-reason field: it is derived from ``status``,
``incomplete_details.reason`` and whether the output holds a client call.
"""

from __future__ import annotations

from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ..events import Finish
from .base import CONTAINER, PARENT, WireAdapter

# The name of a call whose item has none: the tool's type.
_TOOL_NAMES = {"apply_patch_call": "apply_patch", "tool_search_call": "tool_search",
               "shell_call": "shell", "local_shell_call": "local_shell",
               "file_search_call": "file_search"}
# Items the server makes on its own that are neither text nor a call: the context it
# compacted, the tools it listed from an MCP server.
_SERVER_ITEMS = frozenset({"compaction", "mcp_list_tools"})
# What the server's own tools gave back, as items of their own: a hosted shell's output, the
# tools a server-run tool search loaded.
_SERVER_RESULTS = frozenset({"shell_call_output", "tool_search_output"})


class ResponsesAdapter(WireAdapter):
    """Turn events from the Responses accumulator's changes."""

    wire = wires.responses.WIRE

    def classify(self, opened: ch.SlotOpened):
        """Messages hold parts; summary parts join their reasoning item; ``*_call`` items
        other than function calls are the provider's own tools."""
        kind = opened.slot_kind
        if opened.structured:
            return super().classify(opened)
        if kind == wires.responses.MESSAGE_ITEM:
            return CONTAINER, False, "text"
        if kind in ("summary_text", "reasoning_text"):
            return PARENT, False, "reasoning"
        if kind == "reasoning":
            return "reasoning", False, "reasoning"
        if wires.responses.calls_the_client(kind, opened.data):
            return "tool_call", False, "text"
        if kind.endswith("_call"):
            return "tool_call", True, "text"     # web search, code interpreter...
        if kind in _SERVER_RESULTS:
            return "tool_result", True, "other"
        if kind in _SERVER_ITEMS:
            return "other", True, "other"
        if kind == "audio":
            # Spoken output, as on Chat: its transcript is the block's text, the sound
            # (base64) the block's end data; not the answer's text, so a block of its own.
            return "other", False, "other"
        return super().classify(opened)

    def stated_call(self, wire_kind: str | None, data: Any
                    ) -> tuple[str | None, str | None, Any] | None:
        """The name, id and input an item states whole: a patch's operation, a tool search's
        or an approval request's arguments, a hosted shell's commands, a file search's
        queries."""
        if not isinstance(data, dict):
            return None
        name = data.get("name") or _TOOL_NAMES.get(wire_kind or "")
        if wire_kind == "apply_patch_call":
            return name, data.get("call_id"), data.get("operation")
        if wire_kind == "mcp_approval_request":       # answered by its own id
            return name, data.get("id"), data.get("arguments")
        if wire_kind == "tool_search_call":
            return name, data.get("call_id"), data.get("arguments")
        if wire_kind in ("shell_call", "local_shell_call"):
            return name, data.get("call_id"), data.get("action")
        if wire_kind == "file_search_call":
            return name, None, {"queries": data.get("queries") or []}
        return None

    def server_failure(self, wire_kind: str | None, data: Any) -> str | None:
        """A server tool's finished item with status ``failed`` or an ``error``."""
        if not isinstance(data, dict) or not (data.get("status") == "failed" or data.get("error")):
            return None
        what = data.get("name") or data.get("server_label") or data.get("id")
        error = data.get("error")
        if isinstance(error, dict):
            texts = [c.get("text") for c in error.get("content") or [] if isinstance(c, dict)]
            error = "; ".join(t for t in texts if t) or error.get("message") or error.get("type")
        return f"{wire_kind} {what} failed on the server" + (f": {error}" if error else "")

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
