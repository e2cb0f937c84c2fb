"""When to start a tool while the reply streams: two rules over the turn's events.

- ``settled`` (the course's rule, lessons 3 and 6): a call starts the moment its
  arguments settle, at its `ToolCallReady`.
- ``moved_on`` (the anthropic SDK's ``run_tools_eagerly``,
  ``lib/tools/_beta_runner.py``): a call whose block has ended starts only once the
  model has moved on from it: the next block starts, or the step ends asking for tools.
  A block's own end is not enough, because a reply that is cut off (a length stop)
  closes its last call too. After a block that hands the reply to a fallback model, no
  call starts until the reply ends (the refusal that led to it may have cut off the
  call before it). The SDK sees the stop reason at ``message_delta``; the turn learns it
  at `StepFinished`, one wire event later, which is when the SDK runs the call anyway
  (it runs a call when its reader asks for the event after the one that moved on).

`ToolStarter` applies a rule as the events arrive (the live loop's option);
`tool_starts` applies it to a whole turn and says, for every call it started, whether
the rest of the stream contradicts the input the call ran on: the step was cut or
failed after it, a fallback model took over, the step ended without asking for tools,
or the input never parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..wires.anthropic import FALLBACK_BLOCK
from .events import (
    BlockStarted,
    StepFinished,
    StepStarted,
    ToolCallInvalid,
    ToolCallReady,
    TurnEvent,
)

Rule = Literal["settled", "moved_on"]
RULES: tuple[str, ...] = ("settled", "moved_on")

# Blocks that hand the rest of the reply to another model (the wire's own kinds).
HANDOVER_KINDS = frozenset({FALLBACK_BLOCK})

Call = ToolCallReady | ToolCallInvalid


@dataclass
class ToolStarter:
    """One rule, pushed event by event: `feed` returns the calls to start now.

    Only the application's own calls start (a provider-side call is the provider's).
    Under ``moved_on`` a call whose input never parsed (`ToolCallInvalid`) can be
    returned too, as the SDK would run it with whatever parsed; a caller that runs
    tools starts only the `ToolCallReady` ones.
    """

    rule: Rule = "settled"
    _closed: list[Call] = field(default_factory=list)
    _handed_over: bool = False

    def __post_init__(self) -> None:
        if self.rule not in RULES:
            raise ValueError(f"tool_start is one of {', '.join(RULES)}, not {self.rule!r}")

    def feed(self, event: TurnEvent) -> list[Call]:
        """The calls `event` starts under the rule (often none)."""
        if isinstance(event, ToolCallReady | ToolCallInvalid):
            if getattr(event, "server_side", False):
                return []
            if self.rule == "settled":
                return [event] if isinstance(event, ToolCallReady) else []
            if not self._handed_over and (isinstance(event, ToolCallReady)
                                          or event.state == "invalid"):
                self._closed.append(event)
            return []
        if self.rule == "settled":
            return []
        if isinstance(event, StepStarted):
            self._closed, self._handed_over = [], False
        elif isinstance(event, BlockStarted):
            if event.wire_kind in HANDOVER_KINDS:
                self._handed_over = True
                self._closed = []
            else:
                return self._take()
        elif isinstance(event, StepFinished):
            if event.ended == "proper" and event.finish.reason == "tool_calls":
                return self._take()
            self._closed = []
        return []

    def _take(self) -> list[Call]:
        out, self._closed = self._closed, []
        return out


@dataclass(frozen=True)
class ToolStart:
    """When a rule started one call: the turn event that started it (`index` in the
    turn's events, `t` in ms on the capture's clock, `at` the wire event), and what
    the rest of the stream says against it (`contradicted`, None when nothing)."""

    rule: str
    step: int
    block: str
    name: str | None
    call_id: str | None
    index: int
    t: float | None
    at: int | None
    input: Any = None
    contradicted: str | None = None


def tool_starts(events: Sequence[TurnEvent], rule: Rule) -> list[ToolStart]:
    """Every call `rule` starts in a turn's `events`, in order, each with what the rest
    of its step says against the input it started on."""
    starter = ToolStarter(rule)
    when = arrivals(events)
    step = 0
    out = []
    for index, event in enumerate(events):
        if isinstance(event, StepStarted):
            step = event.step
        for call in starter.feed(event):
            t, at = when[index]
            out.append(ToolStart(
                rule, step, call.block, call.name, call.call_id, index, t, at,
                call.input if isinstance(call, ToolCallReady) else call.partial,
                _contradiction(call, events, index)))
    return out


def arrivals(events: Sequence[TurnEvent]) -> list[tuple[float | None, int | None]]:
    """When each event arrived (`t`) and its wire event (`at`). An event the end of the
    body made (a step's end, a block it closed) has neither of its own: it arrived with
    the last event of its step before it that has them."""
    out = []
    t = at = None
    for event in events:
        if isinstance(event, StepStarted):
            t = at = None
        t = event.t if event.t is not None else t
        at = event.at if event.at is not None else at
        out.append((t, at))
    return out


def _contradiction(call: Call, events: Sequence[TurnEvent], start: int) -> str | None:
    """What the events from `start` (the event that started the call) to the end of the
    call's step say against it."""
    if isinstance(call, ToolCallInvalid):
        return "its input never parsed"
    for event in events[start:]:
        if isinstance(event, BlockStarted) and event.wire_kind in HANDOVER_KINDS:
            return "a fallback model took over after it started"
        if (isinstance(event, BlockStarted) and event.block_kind == "tool_result"
                and call.call_id is not None and event.call_id == call.call_id):
            # A session streams the loop the vendor runs: the call's own result, posted
            # back, says the call was meant to run, whatever the step ends with after it.
            return None
        if event.kind == "error_reported":
            return f"an error came after it started ({event.scope})"
        if isinstance(event, StepFinished):
            if event.ended != "proper":
                return f"the step ended {event.ended} after it started"
            if event.finish.reason != "tool_calls":
                return f"the step ended with {event.finish.reason}, not asking for tools"
            return None
    return "the step never ended"

