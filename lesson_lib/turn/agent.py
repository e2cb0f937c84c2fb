"""The agent loop's rule, once: ask, stream a step, run its tools, ask again, until the end.

    turn started
    for each step, up to `max_steps`:
        stream the step: send its request, read the reply as it arrives, and start
            each tool the moment its call is ready (`tool_start.ToolStarter`)
        run the tools the step asked for to their ends
        stop here if the turn was stopped (cancel, budget, deadline), the step
            failed, a call is held for approval, or the step asked for no tool
        build the next request from the turn so far (`next_request`)
    turn finished (``max_steps`` when the steps ran out first)

Two loops run this rule and differ only in what they plug in, a `Transport`:

- how a step's request becomes turn events: lesson 4's simulated loop
  (`lesson_lib.turn.loop.run_turn`) replays a capture per step with fake tools;
  lesson 6's live loop (`lesson_lib.live.loop.LiveTurn`) sends the request over
  HTTP, with retries, resume and a stall watchdog inside its step;
- the clock its events are stamped with (ms since the turn started): virtual
  (the captures' recorded arrival times) or the event loop's;
- who may stop the turn: a cancel at a virtual time (the application's, or a budget
  crossed in a capture), or `cancel()`, a live budget and a deadline.

A change to the rule here changes both loops (tests/test_agent_core.py shows it).

Budgets count one way in both, each piece of output a turn event carries
(`breaks.budget.delta_of`, ``ceil(characters / 4)`` tokens each), but are checked in two
places, and why both stay: this station sits upstream of `breaks/`, so the rule cannot
hold a budget. Lesson 5 finds a capture's crossing before the replay
(`budget.first_crossing`, over four limits, on the virtual clock) and hands it to the
simulated loop as a cancel at that time (`budget.budget_end` says how the turn ends);
the live loop cannot know its crossing ahead, so its transport checks output tokens
as each chunk arrives (and the wire's own count, where it reports one as it goes).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import count
from typing import Any, Protocol

from .ends import TurnEnd
from .events import StepFinished, TurnEvent, TurnStarted
from .outcome import end_of_step, end_of_turn, turn_finished
from .reduce import TurnState


class Transport(Protocol):
    """What a loop plugs into the rule: its steps' transport, its tools, its clock."""

    wire: str
    state: TurnState

    def now_ms(self) -> float:
        """The turn's clock: ms since it started."""

    def seq(self) -> int:
        """The next event's sequence number."""

    def emit(self, events: Iterable[TurnEvent]) -> None:
        """Keep `events` in the turn and reduce them into `state`."""

    async def stream(self, step: int, request: Any) -> StepFinished | None:
        """Send the step's request, feed its reply into the turn as it arrives, and start
        each tool whose call is ready. The step's end (None: stopped before it had one)."""

    async def run_tools(self, step: int, last: StepFinished | None) -> None:
        """Run the step's tools to their ends (or interrupt them, once stopped)."""

    def stopped(self) -> TurnEnd | None:
        """How the turn ends if it was stopped from outside the steps, else None."""

    def gave_up(self, step: int) -> bool:
        """Whether a failed step failed for good (its retries ran out)."""

    def next_request(self, request: Any, step: int) -> Any | None:
        """The request after `step` (None: there is none, the turn ends as the step did)."""


async def run_agent_turn(transport: Transport, request: Any, *, max_steps: int | None,
                         turn: str = "turn") -> TurnEnd:
    """Run one agent turn by the rule above over `transport`; how it ended."""
    transport.emit([TurnStarted(transport.seq(), turn=turn, t=0.0)])
    end = await _steps(transport, request, max_steps)
    transport.emit([turn_finished(transport.seq(), end, t=transport.now_ms())])
    return end


async def _steps(transport: Transport, request: Any, max_steps: int | None) -> TurnEnd:
    for step in count(1) if max_steps is None else range(1, max_steps + 1):
        last = await transport.stream(step, request)
        await transport.run_tools(step, last)
        end = after_step(transport, step, last)
        if end is not None:
            return end
        request = transport.next_request(request, step)
        if request is None:
            return end_of_turn(last, transport.wire)
    return TurnEnd("max_steps", "step_limit", {"max_steps": max_steps})


def after_step(transport: Transport, step: int, last: StepFinished | None) -> TurnEnd | None:
    """How the turn ends after `step`, or None when it goes on to the next request."""
    stopped = transport.stopped()
    if stopped is not None:
        return stopped
    if last is None:                    # every step ends; a stream without an end is cut
        return end_of_turn(None, transport.wire)
    if end_of_step(last, transport.wire) is not None:
        end = end_of_turn(last, transport.wire)
        return TurnEnd("failed", "gave_up", end.detail) if transport.gave_up(step) else end
    held = [b for b in transport.state.calls if b.step == step and b.execution == "held"]
    if held:
        # The turn stops to ask the application about a held call.
        return TurnEnd("paused", "approval",
                       {"held": [b.name or b.call_id or b.id for b in held]})
    if last.finish.reason != "tool_calls":
        return end_of_turn(last, transport.wire)
    return None
