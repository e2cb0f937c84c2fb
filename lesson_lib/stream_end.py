"""How a stream ended: properly, cut, or with an error (in-band or HTTP).

Every wire has its own terminal: Anthropic ``message_stop``; Responses
``response.completed`` or ``response.incomplete``; Chat ``[DONE]`` after
every choice has a ``finish_reason``. A stream without its terminal was cut,
however finished its text looks. An ``error`` event, a Chat ``error``
payload or ``response.failed`` is an in-band error after HTTP 200.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .diagnostics import Diagnostic
from .wire_events import DONE, WireEvent

# The event types that end each wire's stream properly. (Chat's [DONE] counts
# only after every choice has finished: see `_terminal_reached`.)
TERMINALS: dict[str, frozenset[str]] = {
    "anthropic-messages": frozenset({"message_stop"}),
    "openai-responses": frozenset({"response.completed", "response.incomplete"}),
    "openai-chat": frozenset({DONE}),
}
# The event types that report an in-band failure after HTTP 200.
FAILURES: dict[str, frozenset[str]] = {
    "anthropic-messages": frozenset({"error"}),
    "openai-responses": frozenset({"error", "response.failed"}),
    "openai-chat": frozenset({"error"}),
}
ERRORS = frozenset().union(*FAILURES.values())


@dataclass(frozen=True)
class Ending:
    """The verdict on a stream's end. `kind`: ended | cut | error | http_error | undecided."""

    kind: str
    reason: str
    diagnostics: list[Diagnostic] = field(default_factory=list)

    @property
    def proper(self) -> bool:
        return self.kind == "ended"


def how_it_ended(wire: str | None, events: list[WireEvent],
                 sse_diagnostics: list[Diagnostic], status: int = 200) -> Ending:
    """Classify the end of a decoded stream; the diagnostics say why it is not proper."""
    if status >= 300:
        diag = Diagnostic("http_error", f"HTTP {status} before any event (phase before_output)",
                          offset=0, extra={"phase": "before_output", "status": status})
        return Ending("http_error", f"HTTP {status}: the request failed before any event", [diag])
    diags: list[Diagnostic] = list(sse_diagnostics)
    for ev in events:
        if ev.parse_error:
            diags.append(Diagnostic("unparseable_json", ev.parse_error, offset=ev.sse.start,
                                    index=ev.index, raw=ev.sse.data[:200]))
        elif ev.type in ERRORS:
            diags.append(Diagnostic("in_band_error", _error_message(ev), offset=ev.sse.start,
                                    index=ev.index))
    errors = [d for d in diags if d.code == "in_band_error"]
    if errors:
        return Ending("error", f"in-band error after HTTP 200: {errors[0].message}", diags)
    terminal = _terminal_reached(wire, events)
    if terminal is None:
        kind = "cut" if diags else "undecided"
        return Ending(kind, "wire unknown: only the SSE framing was checked", diags)
    if not terminal:
        diags.append(Diagnostic("no_terminal", _missing_terminal(wire),
                                offset=events[-1].sse.end if events else 0))
        return Ending("cut", "the stream stopped before its terminal event", diags)
    if diags:
        return Ending("cut", diags[0].message, diags)
    return Ending("ended", "the stream ended with its own terminal event", diags)


def _terminal_reached(wire: str | None, events: list[WireEvent]) -> bool | None:
    if wire == "openai-chat":
        if not any(ev.type == DONE for ev in events):
            return False
        open_choices: set[int] = set()
        for ev in events:
            for choice in _choices(ev):
                index = choice.get("index", 0)
                open_choices.add(index)
                if choice.get("finish_reason"):
                    open_choices.discard(index)
        return not open_choices
    if wire in TERMINALS:
        return any(ev.type in TERMINALS[wire] for ev in events)
    return None


def _choices(ev: WireEvent) -> list[dict]:
    if isinstance(ev.payload, dict) and isinstance(ev.payload.get("choices"), list):
        return [c for c in ev.payload["choices"] if isinstance(c, dict)]
    return []


def _missing_terminal(wire: str | None) -> str:
    wanted = {"anthropic-messages": "message_stop",
              "openai-responses": "response.completed / response.incomplete",
              "openai-chat": "[DONE] after every choice's finish_reason"}.get(wire or "", "?")
    return f"no terminal event ({wanted}): the stream was cut"


def _error_message(ev: WireEvent) -> str:
    payload = ev.payload if isinstance(ev.payload, dict) else {}
    err = payload.get("error")
    if ev.type == "response.failed":
        err = (payload.get("response") or {}).get("error") or err
    if isinstance(err, dict):
        kind = err.get("type") or err.get("code") or "error"
        return f"{kind}: {err.get('message', '')}".strip()
    if payload.get("message"):
        return f"{payload.get('code') or 'error'}: {payload['message']}"
    return ev.type or "error"
