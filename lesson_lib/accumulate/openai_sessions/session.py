"""The root turn and the session around it: the turn's id, status and usage; the session's
snapshots (status, model); where a step ends (waiting on an action, idle, a budget
reached, failed); and the errors, in-band (mixed into `OpenAISessionsAccumulator`)."""

from __future__ import annotations

import copy
from typing import Any

from ...wires import openai_sessions as oas
from ...wires.wire_events import WireEvent
from ..changes import InBandError, ResponseChanged, TerminalReached


class Session:
    """The root turn's and the session's events."""

    changes: list
    session_id: str | None
    turn_id: str | None
    turn_ended: bool
    turn_status: str | None
    status: str | None

    def _turn_created(self, payload: dict, event: WireEvent) -> None:
        turn = payload.get("turn")
        if oas.is_root_turn(turn) and self.turn_id is None:
            self.turn_id = payload.get("turn_id")
            self.changes.append(ResponseChanged(event.index, {"id": self.turn_id}))

    def _turn_ended(self, payload: dict, event: WireEvent) -> None:
        turn = payload.get("turn")
        turn = turn if isinstance(turn, dict) else {}
        if self.turn_id is None and oas.is_root_turn(turn):
            # A connection opened after its turn began (the application answered and
            # reads on): the session's own agent's turn is the root turn.
            self.turn_id = payload.get("turn_id")
        if self.turn_id is None or payload.get("turn_id") != self.turn_id:
            if payload.get("type") == oas.TURN_FAILED:
                self.note("subagent_turn_failed", "a subagent's turn failed; the session "
                          "goes on", event=event, severity="warning", raw=event.sse.data)
            return
        self.turn_ended = True
        self.turn_status = turn.get("status") if isinstance(turn.get("status"), str) else None
        fields: dict[str, Any] = {"turn_status": self.turn_status}
        usage = payload.get("usage") or turn.get("usage")
        if isinstance(usage, dict):
            fields["usage"] = copy.deepcopy(usage)
        self.changes.append(ResponseChanged(event.index, fields))
        if payload.get("type") == oas.TURN_FAILED:
            error = oas.read_error(oas.TURN_FAILED, payload)
            kind = error.kind if error is not None else None
            self._failed(f"{kind or 'turn_failed'}: "
                         f"{(error and error.message) or 'the turn failed'}",
                         copy.deepcopy(turn.get("error")), kind, event)

    # -- the session ---------------------------------------------------------------------

    def _snapshot(self, payload: dict, event: WireEvent) -> dict:
        """What a session event's snapshot changes: the status, the model, the usage."""
        session = payload.get("session")
        session = session if isinstance(session, dict) else {}
        found = oas.session_id_of(payload)
        if self.session_id is None and found is not None:
            self.session_id = found
        agent = session.get("agent")
        fields: dict[str, Any] = {"status": session.get("status")}
        if isinstance(agent, dict) and isinstance(agent.get("model"), str):
            fields["model"] = agent["model"]
        self.status = session.get("status") if isinstance(session.get("status"), str) else None
        return fields

    def _same_session(self, payload: dict) -> bool:
        found = oas.session_id_of(payload)
        return found is not None and (self.session_id is None or found == self.session_id)

    def _created(self, payload: dict, event: WireEvent) -> None:
        self.changes.append(ResponseChanged(event.index, self._snapshot(payload, event)))

    def _in_progress(self, payload: dict, event: WireEvent) -> None:
        self.stopped = self.complete = False
        self.changes.append(ResponseChanged(event.index, {**self._snapshot(payload, event),
                                                          "finish": None}))

    def _requires_action(self, payload: dict, event: WireEvent) -> None:
        fields = self._snapshot(payload, event)
        session = payload.get("session")
        actions = session.get("required_actions") if isinstance(session, dict) else None
        actions = actions if isinstance(actions, list) else []
        waits = [a.get("call_id") for a in actions if isinstance(a, dict)
                 and a.get("type") == oas.FUNCTION_CALL_ACTION]
        self._end_step(oas.REQUIRES_ACTION, payload, event,
                       {**fields, "waits_on": tuple(w for w in waits if isinstance(w, str)),
                        "actions": tuple(a.get("type") for a in actions
                                         if isinstance(a, dict))})

    def _idle(self, payload: dict, event: WireEvent) -> None:
        fields = self._snapshot(payload, event)
        if not self.turn_ended:       # the session at rest before its turn: no end
            self.changes.append(ResponseChanged(event.index, fields))
            return
        self._end_step(self.turn_status or "?", payload, event, fields)

    def _budget(self, payload: dict, event: WireEvent) -> None:
        fields = self._snapshot(payload, event)
        same = self._same_session(payload)
        if not same:
            self.changes.append(ResponseChanged(event.index, fields))
            return
        self._end_step(oas.BUDGET_REACHED, payload, event, fields)

    def _session_failed(self, payload: dict, event: WireEvent) -> None:
        fields = self._snapshot(payload, event)
        error = oas.read_error(oas.SESSION_FAILED, payload)
        session = payload.get("session")
        said = session.get("error") if isinstance(session, dict) else None
        self._failed(f"session failed: {(error and error.message) or 'no reason given'}",
                     copy.deepcopy(said), error.kind if error is not None else None, event)
        self._end_step(oas.FAILED, payload, event, fields)

    def _end_step(self, raw: str, payload: dict, event: WireEvent,
                  fields: dict[str, Any]) -> None:
        session = payload.get("session")
        usage = session.get("usage") if isinstance(session, dict) else None
        if isinstance(usage, dict) and not self.turn_ended:
            fields = {**fields, "usage": copy.deepcopy(usage)}   # the turn's own is to come
        self.stopped = True
        self.complete = not self.errored and not self.damaged
        self.changes.append(ResponseChanged(event.index, {**fields, "finish": raw}))
        self.changes.append(TerminalReached(event.index, payload["type"]))

    def _error(self, payload: dict, event: WireEvent) -> None:
        error = oas.read_error(oas.ERROR, payload)
        kind = error.kind if error is not None else None
        self._failed(f"{kind or 'error'}: {(error and error.message) or event.sse.data}",
                     copy.deepcopy(payload.get("error")), kind, event)

    def _environment_failed(self, payload: dict, event: WireEvent) -> None:
        self.note("environment_failed", "the session's environment failed",
                  event=event, severity="warning", raw=event.sse.data)

    def _failed(self, message: str, error: Any, kind: str | None, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        self.changes.append(InBandError(event.index, message, error, kind))
        self.note("in_band_error", message, event=event, raw=event.sse.data, error=error)
