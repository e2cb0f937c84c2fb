"""The Managed Agents session around its events: its status (running, idle, terminated),
the last idle's stop reason, the model requests' usage summed, and its errors (a
``session.error`` that retries is a warning; one that gives up is in-band) (mixed into
`ManagedAgentsAccumulator`)."""

from __future__ import annotations

import copy
from typing import Any

from ...wires import managed_agents as ma
from ...wires.wire_events import WireEvent
from ..changes import InBandError, ResponseChanged, TerminalReached


class Session:
    """The session's status, stop, usage and errors."""

    changes: list
    events: list
    status: str | None
    stop_reason: Any
    stop_details: Any
    usage: dict[str, int] | None

    def _status(self, status: str, event: WireEvent, **fields: Any) -> None:
        self.status = status
        self.changes.append(ResponseChanged(event.index, {"status": status, **fields}))

    def _running(self, payload: dict, event: WireEvent) -> None:
        self.events.append(copy.deepcopy(payload))
        self.stopped = self.complete = False
        self._status("running", event)

    def _idle(self, payload: dict, event: WireEvent) -> None:
        self.events.append(copy.deepcopy(payload))
        self._close_previews(event, "the session went idle")
        self.stop_reason = copy.deepcopy(payload.get("stop_reason"))
        self.stop_details = copy.deepcopy(payload.get("stop_details"))
        reason = ma.stop_reason_type(self.stop_reason)
        if reason == ma.RETRIES_EXHAUSTED and not self.errored:
            self._failed("the session's retries are exhausted", self.stop_reason, reason,
                         event)
        self.stopped = True
        self.complete = not self.errored and not self.damaged
        self._status("idle", event, stop_reason=reason, stop_details=self.stop_details,
                     waits_on=tuple(self.waits_on()))
        self.changes.append(TerminalReached(event.index, ma.SESSION_IDLE))

    def _terminated(self, payload: dict, event: WireEvent) -> None:
        self.events.append(copy.deepcopy(payload))
        self._close_previews(event, "the session ended")
        self.stopped = True
        self.complete = not self.errored and not self.damaged
        self._status("terminated", event)
        self.changes.append(TerminalReached(event.index, ma.SESSION_TERMINATED))

    def _model_request_end(self, payload: dict, event: WireEvent) -> None:
        self.events.append(copy.deepcopy(payload))
        self._close_previews(event, "its model request ended")
        usage = payload.get("model_usage")
        if isinstance(usage, dict):
            total = self.usage or {}
            for key, value in usage.items():
                if isinstance(value, int) and not isinstance(value, bool):
                    total[key] = total.get(key, 0) + value
            self.usage = total
            self.changes.append(ResponseChanged(event.index, {"usage": dict(total)}))

    def _error(self, payload: dict, event: WireEvent) -> None:
        self.events.append(copy.deepcopy(payload))
        error = ma.read_error(payload.get("type"), payload)
        kind = error.kind if error is not None else None
        message = f"{kind or 'error'}: {(error and error.message) or event.sse.data}"
        if not ma.gives_up(payload):
            self.note("session_error_retrying", f"{message} (the server retries)",
                      event=event, severity="warning", raw=event.sse.data)
            return
        self._failed(message, payload.get("error"), kind, event)

    def _failed(self, message: str, error: Any, kind: str | None, event: WireEvent) -> None:
        self.errored = True
        self.complete = False
        self.changes.append(InBandError(event.index, message, copy.deepcopy(error), kind))
        self.note("in_band_error", message, event=event, raw=event.sse.data,
                  error=copy.deepcopy(error))

    def waits_on(self) -> list[str]:
        """The event ids the last idle's ``requires_action`` waits on."""
        ids = self.stop_reason.get("event_ids") if isinstance(self.stop_reason, dict) else None
        return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else []

