"""Building Managed Agents session streams from the anthropic SDK's own types.

No public recording of a session stream exists, so every event is made as an
instance of the SDK's model for its type (anthropic 2.16,
``anthropic.types.beta.sessions`` and ``anthropic.types.beta``) and dumped as
the API sends JSON: a field the SDK leaves unset is left out. Each event goes
out as ``event: <type>`` and one ``data:`` line (the SDK's reader skips an
event without an ``event:`` line). `SessionStream` numbers the ids and moves
the clock.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from anthropic.types.beta import (
    BetaManagedAgentsDeltaEvent,
    BetaManagedAgentsSessionUsageEvent,
    BetaManagedAgentsStartEvent,
)
from anthropic.types.beta.sessions import (
    BetaManagedAgentsAgentCustomToolUseEvent,
    BetaManagedAgentsAgentMessageEvent,
    BetaManagedAgentsAgentThinkingEvent,
    BetaManagedAgentsAgentToolResultEvent,
    BetaManagedAgentsAgentToolUseEvent,
    BetaManagedAgentsSessionErrorEvent,
    BetaManagedAgentsSessionStatusIdleEvent,
    BetaManagedAgentsSessionStatusRunningEvent,
    BetaManagedAgentsSpanModelRequestEndEvent,
    BetaManagedAgentsSpanModelRequestStartEvent,
    BetaManagedAgentsUserCustomToolResultEvent,
    BetaManagedAgentsUserInterruptEvent,
    BetaManagedAgentsUserMessageEvent,
    BetaManagedAgentsUserToolConfirmationEvent,
)

from lesson_lib.wires import managed_agents as ma

from .writer import StreamBuilder

WIRE = ma.WIRE
HELPER = ("beta.sessions.events.stream(session_id, event_deltas=[...]), each event folded "
          "with lib.sessions.accumulate_managed_agents_event")
BASED_ON = ("constructed from the anthropic SDK's types (2.16, types/beta/sessions/): no "
            "public recording of a Managed Agents session stream exists")
_EPOCH = datetime(2026, 5, 4, 9, 30, tzinfo=UTC)


class SessionStream:
    """One session stream: events made from the SDK's models, with ids and timing."""

    def __init__(self, seed: int, session: str) -> None:
        self.builder = StreamBuilder(seed=seed)
        self.rng = self.builder.rng
        self.session = session
        self.sent: list[tuple[str, dict[str, Any]]] = []   # every event written, in order
        self._n = 0
        self._clock = _EPOCH

    def new_id(self) -> str:
        """A fresh event id (``sevt_`` and 24 characters, as the API's ids look)."""
        self._n += 1
        tail = "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
                                       "0123456789") for _ in range(20))
        return f"sevt_{self._n:04d}{tail}"

    def now(self, ms: float) -> datetime:
        self._clock += timedelta(milliseconds=ms)
        return self._clock

    def send(self, model: Any, *, after_ms: float = 30.0) -> dict[str, Any]:
        """Write one event (an SDK model instance) after `after_ms`; return its payload."""
        payload = model.model_dump(mode="json", exclude_none=True)
        self.builder.event(payload["type"], payload, after_ms=after_ms)
        self.sent.append((payload["type"], payload))
        return payload

    def again(self, payload: dict[str, Any], *, after_ms: float = 5.0) -> None:
        """Deliver an event already sent once more (at-least-once delivery)."""
        self.builder.event(payload["type"], payload, after_ms=after_ms)
        self.sent.append((payload["type"], payload))

    # -- the events the captures use -----------------------------------------------------

    def user_message(self, text: str) -> dict[str, Any]:
        return self.send(BetaManagedAgentsUserMessageEvent(
            id=self.new_id(), type="user.message", content=[{"type": "text", "text": text}],
            processed_at=self.now(0)), after_ms=90)

    def running(self) -> dict[str, Any]:
        return self.send(BetaManagedAgentsSessionStatusRunningEvent(
            id=self.new_id(), type="session.status_running", processed_at=self.now(40)))

    def request_start(self) -> dict[str, Any]:
        return self.send(BetaManagedAgentsSpanModelRequestStartEvent(
            id=self.new_id(), type="span.model_request_start", processed_at=self.now(20)))

    def request_end(self, start: dict[str, Any], output_tokens: int, *,
                    is_error: bool = False, after_ms: float = 40.0) -> dict[str, Any]:
        return self.send(BetaManagedAgentsSpanModelRequestEndEvent(
            id=self.new_id(), type="span.model_request_end", model_request_start_id=start["id"],
            is_error=is_error, processed_at=self.now(after_ms),
            model_usage={"input_tokens": 1800 + self.rng.randint(0, 400),
                         "output_tokens": output_tokens, "cache_read_input_tokens": 4096,
                         "cache_creation_input_tokens": 0}), after_ms=after_ms)

    def preview(self, kind: str = "agent.message") -> str:
        """``event_start`` of a preview; the id its buffered event will carry."""
        event_id = self.new_id()
        self.send(BetaManagedAgentsStartEvent(type="event_start",
                                              event={"type": kind, "id": event_id}),
                  after_ms=300)
        return event_id

    def deltas(self, event_id: str, pieces: list[str], index: int = 0) -> None:
        for piece in pieces:
            self.send(BetaManagedAgentsDeltaEvent(
                type="event_delta", event_id=event_id,
                delta={"type": "content_delta", "index": index,
                       "content": {"type": "text", "text": piece}}),
                after_ms=self.rng.uniform(12, 45))

    def message(self, text: str, event_id: str | None = None) -> dict[str, Any]:
        return self.send(BetaManagedAgentsAgentMessageEvent(
            id=event_id or self.new_id(), type="agent.message",
            content=[{"type": "text", "text": text}], processed_at=self.now(600)))

    def thinking(self, event_id: str | None = None) -> dict[str, Any]:
        return self.send(BetaManagedAgentsAgentThinkingEvent(
            id=event_id or self.new_id(), type="agent.thinking", processed_at=self.now(900)),
            after_ms=400)

    def tool_use(self, name: str, tool_input: dict[str, Any], *, ask: bool = False
                 ) -> dict[str, Any]:
        return self.send(BetaManagedAgentsAgentToolUseEvent(
            id=self.new_id(), type="agent.tool_use", name=name, input=tool_input,
            evaluated_permission="ask" if ask else "allow",
            evaluation={"type": "always_ask" if ask else "always_allow"},
            processed_at=self.now(350)), after_ms=350)

    def tool_result(self, call: dict[str, Any], text: str) -> dict[str, Any]:
        return self.send(BetaManagedAgentsAgentToolResultEvent(
            id=self.new_id(), type="agent.tool_result", tool_use_id=call["id"],
            content=[{"type": "text", "text": text}], is_error=False,
            processed_at=self.now(700)), after_ms=700)

    def custom_tool_use(self, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        return self.send(BetaManagedAgentsAgentCustomToolUseEvent(
            id=self.new_id(), type="agent.custom_tool_use", name=name, input=tool_input,
            processed_at=self.now(350)), after_ms=350)

    def custom_tool_result(self, call: dict[str, Any], text: str) -> dict[str, Any]:
        return self.send(BetaManagedAgentsUserCustomToolResultEvent(
            id=self.new_id(), type="user.custom_tool_result", custom_tool_use_id=call["id"],
            content=[{"type": "text", "text": text}], processed_at=self.now(1200)),
            after_ms=1200)

    def confirmation(self, call: dict[str, Any], result: str) -> dict[str, Any]:
        return self.send(BetaManagedAgentsUserToolConfirmationEvent(
            id=self.new_id(), type="user.tool_confirmation", tool_use_id=call["id"],
            result=result, processed_at=self.now(2500)), after_ms=2500)

    def interrupt(self) -> dict[str, Any]:
        return self.send(BetaManagedAgentsUserInterruptEvent(
            id=self.new_id(), type="user.interrupt", processed_at=self.now(80)))

    def error(self, kind: str, message: str, retry: str) -> dict[str, Any]:
        return self.send(BetaManagedAgentsSessionErrorEvent(
            id=self.new_id(), type="session.error", processed_at=self.now(30),
            error={"type": kind, "message": message, "retry_status": {"type": retry}}))

    def usage(self, cost: str, budget: str) -> dict[str, Any]:
        return self.send(BetaManagedAgentsSessionUsageEvent(
            id=self.new_id(), type="session.usage", processed_at=self.now(10),
            usage={"input_tokens": 48_211, "output_tokens": 9_877,
                   "list_cost": {"amount": cost, "currency": "USD"}},
            budget={"type": "limit", "max_list_cost": {"amount": budget, "currency": "USD"}}))

    def idle(self, reason: str, *, event_ids: list[str] | None = None,
             details: dict[str, Any] | None = None) -> dict[str, Any]:
        stop: dict[str, Any] = {"type": reason}
        if reason == ma.REQUIRES_ACTION:
            stop["event_ids"] = event_ids or []
        return self.send(BetaManagedAgentsSessionStatusIdleEvent(
            id=self.new_id(), type="session.status_idle", stop_reason=stop,
            stop_details=details, processed_at=self.now(25)))
