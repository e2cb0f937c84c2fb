"""The OpenAI Agents session adapter: a session's turn on the course's union.

The accumulator already dropped what was delivered twice; what is left is what
the session says its own way:

- blocks: an assistant message's ``output_text`` parts are text, a reasoning
  item's summary parts reasoning; a ``function_call`` item is a call of the
  application's own function (it arrives whole), and a ``function_call_output``
  the output posted back; the server's own items (an MCP call, a web search, a
  command run, a subagent's call...) are server-side calls, each holding its
  outcome; other items (a message between agents, a browser's approval
  request) are ``other`` blocks holding the item;
- the end (`wires.openai_sessions.FINISH_REASONS`, `TURN_ENDS`): an idle after
  the root turn ended finishes as the turn's status (``completed`` stops,
  ``failed`` fails, ``cancelled`` is the vendor's cancel); ``requires_action``
  pauses the turn (reason ``requires_action``), or asks for tools (a finish of
  ``tool_calls``) when every action is a call of the application's function the
  step made, which the loop runs; ``budget_reached`` is the outcome
  ``budget_reached`` (``vendor_budget``); ``agent.session.failed`` fails it; an
  idle after a status this module does not know is ``unknown``;
- the session in progress again after a step's end (the application answered)
  takes the end back: the turn goes on;
- usage: the root turn's ``usage`` when it ended, before that the session's.
"""

from __future__ import annotations

from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ..events import Finish, TurnEvent
from .base import WireAdapter

_oas = wires.openai_sessions


class OpenAISessionsAdapter(WireAdapter):
    """Turn events from the OpenAI Agents session accumulator's changes."""

    wire = _oas.WIRE

    def feed(self, changes: Any, *, t: float | None = None,
             at: int | None = None) -> list[TurnEvent]:
        """The turn events of one session event's changes (see the module)."""
        changes = list(changes or ())
        for change in changes:
            if (type(change) is ch.ResponseChanged
                    and change.fields.get("status") == _oas.IN_PROGRESS):
                self.terminal = None          # the session goes on after its stop
        return super().feed(changes, t=t, at=at)

    def classify(self, opened: ch.SlotOpened):
        """Text, reasoning, the application's calls and outputs, the server's items."""
        kind = opened.slot_kind
        if kind == _oas.OUTPUT_TEXT_PART:
            return "text", False, "text"
        if kind == _oas.SUMMARY_TEXT_PART:
            return "reasoning", False, "reasoning"
        if kind == _oas.FUNCTION_CALL_ITEM:
            return "tool_call", False, "text"
        if kind == _oas.FUNCTION_CALL_OUTPUT_ITEM:
            return "tool_result", False, "other"
        if kind in _oas.SERVER_ITEMS:
            return "tool_call", True, "text"
        return "other", False, "other"

    def stated_call(self, wire_kind: str | None, data: Any
                    ) -> tuple[str | None, str | None, Any] | None:
        """A server item's name (its tool's, else its type), id and input (its arguments,
        its action, or the command it runs), as the item states them."""
        if wire_kind not in _oas.SERVER_ITEMS or not isinstance(data, dict):
            return None
        name = data.get("name") if isinstance(data.get("name"), str) else wire_kind
        if isinstance(data.get("command"), str):      # a command run: its line, as an object
            return name, data.get("id"), {"command": data["command"]}
        stated = next((data[k] for k in ("arguments", "action") if data.get(k) is not None),
                      {})
        return name, data.get("id"), stated

    def server_failure(self, wire_kind: str | None, data: Any) -> str | None:
        """A server item that says it failed (``status`` failed, or an ``error``)."""
        if not isinstance(data, dict) or not (data.get("status") == _oas.FAILED
                                              or data.get("error")):
            return None
        error = data.get("error")
        return f"{wire_kind} {data.get('name') or data.get('id')} failed on the server" + (
            f": {error}" if error else "")

    def finish(self) -> Finish:
        """From where the step stopped (see the module)."""
        raw = self.response.get("finish")
        reason = _oas.finish_reason(raw) or "other"
        if raw == _oas.REQUIRES_ACTION and self._waits_on_application():
            reason = "tool_calls"
        return Finish(reason, raw)

    def _waits_on_application(self) -> bool:
        """Whether every action the session waits on is a call of the application's
        function made in this step."""
        actions = self.response.get("actions") or ()
        waits = self.response.get("waits_on") or ()
        mine = {b.call_id for b in self.order
                if b.kind == "tool_call" and b.wire_kind == _oas.FUNCTION_CALL_ITEM}
        return (bool(actions) and all(a == _oas.FUNCTION_CALL_ACTION for a in actions)
                and len(waits) == len(actions) and all(w in mine for w in waits))
