"""How a stream ended: properly, cut, or with an error (in-band or HTTP).

**The stream ended properly** when three things hold: its wire's own
terminal event arrived (Anthropic ``message_stop``; Responses
``response.completed`` or ``response.incomplete``; Chat ``[DONE]`` after
every choice has a ``finish_reason``, or a body without ``[DONE]`` that
`wires.chat.ended_without_done` accepts, with a ``no_done_marker``
warning: `wires`' ``TERMINALS``), nothing
arrived that could not be dispatched (no SSE framing diagnostic, no event
that is not JSON), and no in-band error came (an Anthropic ``error`` event,
a Responses ``error`` or ``response.failed``, a Chat ``error`` payload:
`wires`' ``FAILURES``). That is ``how_it_ended(...).proper``, a verdict on
the *stream*.

**The accumulator is complete** (``Accumulated.complete``) is a verdict on
the *object it built*: the wire's terminal reached it and no in-band error
did, so its final object is the one the provider meant as the end of the
turn (an ``incomplete`` Responses response included: it is the provider's
own last word). An accumulator skips what it cannot dispatch and says so in
a diagnostic, so it can be complete over a stream that did not end properly
(an event that is not JSON, a framing fault before the terminal); a stream
that ended properly always leaves its accumulator complete.

A stream without its terminal was cut, however finished its text looks.
A request that failed before any event (non-2xx) has one `http_error`
diagnostic, the same one the accumulators report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import wires
from ..diagnostics import Diagnostic
from .wire_events import DONE, WireEvent


def http_error(status: int, body: str = "") -> Diagnostic:
    """The ``http_error`` diagnostic of a request that failed with HTTP `status`.

    `body` is the error body; its ``error`` object (the same shape on every
    wire) gives the provider's own type and message. `extra` says the phase
    (``before_output``), the status, the error's type and code, and whether a
    retry could cure it (by the status: `wires.retryable_status`).
    """
    err = wires.error_body(body)
    said = body.strip()
    if err is not None and err.message:
        said = f"{err.kind}: {err.message}" if err.kind else err.message
    message = f"HTTP {status} before any event (phase before_output)"
    return Diagnostic("http_error", f"{message}: {said}" if said else message, offset=0,
                      raw=body or None,
                      extra={"phase": "before_output", "status": status,
                             "error_type": err.type if err else None,
                             "error_code": err.code if err else None,
                             "retryable": wires.retryable_status(status)})


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
                 sse_diagnostics: list[Diagnostic], status: int = 200,
                 body: str = "", request: dict | None = None) -> Ending:
    """Classify the end of a decoded stream; the diagnostics say why it is not proper.

    `body` is read only when `status` is not 2xx: the error body. `request` (optional)
    says whether a Chat stream owes a usage chunk (`wires.chat.usage_promised`).
    """
    if status >= 300:
        return Ending("http_error", f"HTTP {status}: the request failed before any event",
                      [http_error(status, body)])
    diags: list[Diagnostic] = list(sse_diagnostics)
    for ev in events:
        if ev.parse_error:
            diags.append(Diagnostic("unparseable_json", ev.parse_error, offset=ev.sse.start,
                                    index=ev.index, raw=ev.sse.data[:200]))
        elif ev.type in wires.FAILURE_TYPES and _fails(wire, ev):
            diags.append(Diagnostic("in_band_error", _error_message(wire, ev), offset=ev.sse.start,
                                    index=ev.index))
    errors = [d for d in diags if d.code == "in_band_error"]
    if errors:
        return Ending("error", f"in-band error after HTTP 200: {errors[0].message}", diags)
    terminal = _terminal_reached(wire, events)
    if terminal is False and wire == "openai-chat" and not diags:
        warning = _chat_without_done(events, request)
        if warning is not None:
            return Ending("ended", "every choice finished and the body ended at an event "
                          "boundary, without [DONE]", [warning])
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


def _fails(wire: str | None, ev: WireEvent) -> bool:
    """Whether a failure event ends the stream in error: a wire whose errors may be
    retried by the server while the stream goes on says which do (`gives_up`)."""
    rule = getattr(wires.WIRES.get(wire or ""), "gives_up", None)
    return rule is None or rule(ev.payload)


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
    if wire in wires.WIRES:
        rule = getattr(wires.WIRES[wire], "terminal_reached", None)
        if rule is not None:        # a wire without a terminal event says its own rule
            return rule(events)
        terminals = wires.WIRES[wire].TERMINALS
        return any(ev.type in terminals for ev in events)
    return None


def _chat_without_done(events: list[WireEvent], request: dict | None) -> Diagnostic | None:
    """A Chat body without ``[DONE]`` that ended properly by `wires.chat`'s rule (no
    framing or parse fault: the caller checked): its warning, else None."""
    if any(ev.type == DONE for ev in events):
        return None
    chat = wires.chat
    open_choices: set[int] = set()
    seen = False
    owed, came = chat.usage_promised(None, request), False
    for ev in events:
        owed = owed or chat.usage_promised(ev.payload)
        came = came or chat.has_usage(ev.payload)
        for choice in _choices(ev):
            index = choice.get("index", 0)
            seen = True
            open_choices.add(index)
            if choice.get("finish_reason"):
                open_choices.discard(index)
    if not chat.ended_without_done(every_choice_finished=seen and not open_choices,
                                   usage_owed=owed, usage_came=came, whole=True):
        return None
    return Diagnostic("no_done_marker", "no data: [DONE], but every choice finished and the "
                      "body ended at an event boundary: taken as the end", severity="warning",
                      offset=events[-1].sse.end if events else 0)


def _choices(ev: WireEvent) -> list[dict]:
    if isinstance(ev.payload, dict) and isinstance(ev.payload.get("choices"), list):
        return [c for c in ev.payload["choices"] if isinstance(c, dict)]
    return []


def _missing_terminal(wire: str | None) -> str:
    wanted = {"anthropic-messages": "message_stop",
              "openai-responses": "response.completed / response.incomplete",
              "openai-chat": "[DONE] after every choice's finish_reason",
              "google-gemini": "a last record with a finishReason",
              "aws-bedrock-converse": "messageStop",
              "aws-bedrock-invoke": "message_stop",
              "google-gemini-interactions": "interaction.completed"}.get(wire or "", "?")
    return f"no terminal event ({wanted}): the stream was cut"


def _error_message(wire: str | None, ev: WireEvent) -> str:
    err = wires.read_error(wire, ev.type, ev.payload)
    if err is None:
        return ev.type or "error"
    if err.where != "flat":
        return f"{err.kind or 'error'}: {err.message or ''}".strip()
    if err.message:
        return f"{err.code or 'error'}: {err.message}"
    return ev.type or "error"
