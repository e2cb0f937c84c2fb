"""The Managed Agents session adapter: a session's turn on the course's union.

The accumulator already reconciled the previews and dropped what was delivered
twice; what is left is what the session says its own way:

- blocks: an agent message's entries are text, ``agent.thinking`` reasoning
  (a progress signal, with no text); ``agent.tool_use`` and
  ``agent.mcp_tool_use`` calls the agent runs itself (server-side), with their
  ``agent.*_tool_result``; ``agent.custom_tool_use`` a call of the
  application's own tool, and ``user.custom_tool_result`` the result it posted
  back; a ``user.tool_confirmation`` an ``other`` block holding the event (a
  call held for it is noted, ``held_for_confirmation``); the application's
  other echoed events (its message, an interrupt) pass as wire events;
- the end: the last ``session.status_idle``'s ``stop_reason`` is the step's
  finish (`wires.managed_agents.FINISH_REASONS`), and the turn's end where the
  wire says one of its own (`wires.managed_agents.TURN_ENDS`): ``end_turn``
  completes it; ``requires_action`` pauses it (reason ``requires_action``; a
  finish of ``tool_calls`` when every event it waits on is a custom tool call,
  which the application's loop runs); ``budget_reached`` is the outcome
  ``budget_reached`` (reason ``vendor_budget``); ``refusal`` is a refusal
  finish, as on the Messages wire; ``retries_exhausted`` fails it;
- the session running again after an idle (the application answered) takes
  the idle back: the turn goes on;
- usage: the model requests' ``model_usage``, summed.
"""

from __future__ import annotations

from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ..events import Finish, TurnEvent
from .base import WireAdapter

_ma = wires.managed_agents


class ManagedAgentsAdapter(WireAdapter):
    """Turn events from the Managed Agents accumulator's changes."""

    wire = _ma.WIRE

    def feed(self, changes: Any, *, t: float | None = None,
             at: int | None = None) -> list[TurnEvent]:
        """The turn events of one session event's changes (see the module)."""
        changes = list(changes or ())
        for change in changes:
            if type(change) is ch.ResponseChanged and change.fields.get("status") == "running":
                self.terminal = None          # the session goes on after its idle
        return super().feed(changes, t=t, at=at)

    def classify(self, opened: ch.SlotOpened):
        """Text, reasoning, the agent's calls and results (server-side), the application's
        calls and results, and what the application sent (other)."""
        kind = opened.slot_kind
        if kind == _ma.AGENT_MESSAGE:
            return ("text", False, "text") if not opened.whole else ("other", False, "other")
        if kind == _ma.AGENT_THINKING:
            return "reasoning", False, "reasoning"
        if kind in _ma.CALLS:
            return "tool_call", kind in _ma.AGENT_CALLS, "text"
        if kind in _ma.RESULTS:
            return "tool_result", kind in _ma.AGENT_RESULTS, "other"
        if kind == _ma.USER_TOOL_CONFIRMATION:
            return "other", False, "other"
        return super().classify(opened)

    def finish(self) -> Finish:
        """From the last idle's ``stop_reason`` (see the module)."""
        raw = self.response.get("stop_reason")
        reason = _ma.finish_reason(raw) or "other"
        if raw == _ma.REQUIRES_ACTION and self._waits_on_application():
            reason = "tool_calls"
        return Finish(reason, raw)

    def _waits_on_application(self) -> bool:
        """Whether every event the idle waits on is a call of the application's own tool."""
        waits = self.response.get("waits_on") or ()
        mine = {b.call_id for b in self.order
                if b.kind == "tool_call" and b.wire_kind in _ma.APPLICATION_CALLS}
        return bool(waits) and all(w in mine for w in waits)
