"""The agent loop: runs a multi-step turn, each tool starting as soon as its call is ready.

This is the one async module. The model's side comes from captures (one per
step, played at their recorded arrival times); the tools are deterministic
fakes with declared durations. Time is virtual: a discrete-event schedule
on the captures' clock, so a run is the same every time and says exactly
"get_weather(Paris) started 900 ms before the stream ended".

How it goes, step by step:

- the step's turn events are played in arrival order (on the wire route, the
  capture's recorded chunks pushed through a `TurnStream` by
  `run.timed_batches`, as a live connection would push them); before each, every
  tool whose virtual end has come finishes (`ToolExecutionFinished`);
- a `ToolCallReady` starts its tool at once (an asyncio task, so parallel
  calls really run side by side) while the stream goes on; each result is
  kept under its call's id, so it goes to the right call. On Chat a call
  is ready only at its choice's finish reason: the loop cannot start it
  earlier, because the wire has not said the arguments are over;
- when the stream and every tool are done, the next step starts with the
  results (the next request: `lesson_lib.turn.next_request`);
- the turn stops at a step that fails, is cut or paused, at a step that
  asks for no tool, or at `max_steps` (outcome ``max_steps``);
- `cancel_at` (virtual ms) cancels mid-stream: what is open is closed (its
  end marked synthesised), running tools are interrupted, no new one
  starts, and the outcome is ``cancelled`` (reason ``application``; `cancel_end` says
  otherwise, as a budget's ``budget_reached``), with where the cancel found the turn.
"""

from __future__ import annotations

import asyncio
import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..capture.captures import Capture
from .adapters import Counter
from .closing import closing_events
from .ends import TurnEnd
from .events import (
    ErrorReported,
    StepFinished,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnEvent,
    TurnStarted,
    renumber,
)
from .fake_tools import FakeTool, ToolFailed
from .outcome import end_of_step, end_of_turn, turn_finished, where_stopped
from .reduce import TurnState, initial, reduce
from .run import Route, timed_batches

APPLICATION_CANCEL = TurnEnd("cancelled", "application")


@dataclass(frozen=True)
class ToolRun:
    """One tool execution on the virtual clock (ms from the turn's start)."""

    step: int
    block: str
    call_id: str | None
    name: str | None
    input: Any
    start: float
    end: float
    status: str
    result: Any = None
    error: str | None = None


@dataclass
class LoopResult:
    """What a run of the loop produced: the events, the final state, the tool runs,
    and where each step's stream started and ended on the virtual clock."""

    events: list[TurnEvent]
    state: TurnState
    runs: list[ToolRun] = field(default_factory=list)
    streams: list[tuple[int, float, float]] = field(default_factory=list)

    def head_start(self) -> list[tuple[ToolRun, float]]:
        """Each tool run with how long (ms) before its step's stream ended it started:
        the time won by starting tools as their calls become ready (0 on Chat)."""
        ends = {step: end for step, _, end in self.streams}
        return [(r, ends[r.step] - r.start) for r in self.runs if r.step in ends]

    def results(self, step: int) -> dict[str | None, Any]:
        """The tool results of one step, by call id."""
        return {r.call_id: r.result for r in self.runs if r.step == step and r.status == "ok"}


async def _execute(tool: FakeTool, arguments: Any) -> Any:
    """Run one tool as a task. The real wait is nothing: its time is the declared duration."""
    await asyncio.sleep(0)              # let the other calls' tasks run too
    return tool.answer(arguments)


class _Turn:
    def __init__(self, tools: Mapping[str, FakeTool], cancel_at: float | None) -> None:
        self.tools = tools
        self.cancel_at = cancel_at
        self.events: list[TurnEvent] = []
        self.state = initial()
        self.pending: list[tuple[float, int, asyncio.Task, dict]] = []   # a heap by end time
        self.order = 0
        self.runs: list[ToolRun] = []
        self.cancelled = False

    def emit(self, event: TurnEvent, t: float) -> None:
        event = replace(event, t=t)
        self.events.append(event)
        self.state = reduce(self.state, event)

    def start(self, ready: Any, t: float, step: int) -> None:
        tool = self.tools.get(ready.name or "")
        self.emit(ToolExecutionStarted(0, block=ready.block, call_id=ready.call_id,
                                       name=ready.name), t)
        info = {"step": step, "ready": ready, "start": t}
        if tool is None:
            info["denied"] = f"no tool named {ready.name!r}"
            end = t
            task = asyncio.get_running_loop().create_task(asyncio.sleep(0))
        else:
            end = t + tool.duration
            task = asyncio.get_running_loop().create_task(_execute(tool, ready.input))
        self.order += 1
        heapq.heappush(self.pending, (end, self.order, task, info))

    async def finish_until(self, t: float | None) -> None:
        """Finish, in end-time order, every tool whose end is at or before `t` (all: None)."""
        while self.pending and (t is None or self.pending[0][0] <= t):
            end, _, task, info = heapq.heappop(self.pending)
            ready = info["ready"]
            status, result, error = "ok", None, info.get("denied")
            try:
                result = await task
            except ToolFailed as exc:
                status, error = "error", str(exc)
            if "denied" in info:
                status, result = "denied", None
            self.emit(ToolExecutionFinished(0, block=ready.block, call_id=ready.call_id,
                                            status=status, result=result, error=error), end)
            if status == "error":
                # The model gets the error as the call's result; the turn goes on.
                self.emit(ErrorReported(0, step=info["step"], scope="tool",
                                        phase="after_output", retryable=False,
                                        message=error or "", code="tool_error"), end)
            self.runs.append(ToolRun(info["step"], ready.block, ready.call_id, ready.name,
                                     ready.input, info["start"], end, status, result, error))

    async def cancel(self, t: float, step: int) -> None:
        """Close what is open, interrupt what runs, start nothing new."""
        self.cancelled = True
        for event in closing_events(self.state, "the turn was cancelled"):
            self.emit(event, t)
        await self.finish_until(t)
        while self.pending:
            _, _, task, info = heapq.heappop(self.pending)
            task.cancel()
            ready = info["ready"]
            self.emit(ToolExecutionFinished(0, block=ready.block, call_id=ready.call_id,
                                            status="interrupted",
                                            error="the turn was cancelled"), t)
            self.runs.append(ToolRun(info["step"], ready.block, ready.call_id, ready.name,
                                     ready.input, info["start"], t, "interrupted"))


async def run_turn(captures: Sequence[Capture], tools: Mapping[str, FakeTool] | Sequence[FakeTool],
                   *, route: Route = "wire", cancel_at: float | None = None,
                   cancel_end: TurnEnd = APPLICATION_CANCEL,
                   max_steps: int | None = None, turn: str = "turn") -> LoopResult:
    """Run a turn whose model calls are `captures`, with `tools` (see the module).

    `cancel_end` is what a cancel at `cancel_at` ends the turn as: the application's
    cancel by default; a budget's crossing says ``budget_reached`` (lesson 5). Its detail
    gains where the cancel found the turn (`outcome.where_stopped`)."""
    if not isinstance(tools, Mapping):
        tools = {t.name: t for t in tools}
    run = _Turn(tools, cancel_at)
    seq = Counter()
    run.emit(TurnStarted(0, turn=turn), 0.0)
    streams: list[tuple[int, float, float]] = []
    now, end = 0.0, None

    def cancelled(*, in_step: bool, first_byte: bool) -> TurnEnd:
        where = where_stopped(run.state, in_step=in_step, first_byte=first_byte)
        return TurnEnd(cancel_end.outcome, cancel_end.reason,
                       {"by": f"at {cancel_at:g} ms", **(cancel_end.detail or {}), **where,
                        "at_ms": cancel_at})

    limit = len(captures) if max_steps is None else min(max_steps, len(captures))
    for step in range(1, limit + 1):
        start = now
        if cancel_at is not None and start >= cancel_at:
            # between steps (or before the first): the next one never starts
            end = cancelled(in_step=step == 1, first_byte=False)
            break
        last: StepFinished | None = None
        arrived = False
        for t_rel, batch in timed_batches(captures[step - 1], step, seq, route):
            t = start + (t_rel or 0.0)
            if cancel_at is not None and t > cancel_at:
                end = cancelled(in_step=True, first_byte=arrived)
                await run.cancel(cancel_at, step)
                now = cancel_at
                break
            await run.finish_until(t)
            now = t
            for event in batch:
                run.emit(event, t)
                arrived = arrived or event.kind not in ("step_started", "turn_started")
                if event.kind == "tool_call_ready" and not event.server_side:
                    run.start(event, t, step)
                elif event.kind == "step_finished":
                    last = event
        if run.cancelled:
            run.emit(StepFinished(0, step=step, ended="cancelled"), now)
            streams.append((step, start, now))
            break
        streams.append((step, start, now))
        stream_end = now
        if cancel_at is not None and any(due > cancel_at for due, *_ in run.pending):
            await run.finish_until(cancel_at)
            end = cancelled(in_step=False, first_byte=True)
            await run.cancel(cancel_at, step)
            now = cancel_at
            break
        await run.finish_until(None)
        now = max([stream_end] + [r.end for r in run.runs if r.step == step])
        if last is None:                # every adapter ends its step; never reached
            end = TurnEnd("truncated", "cut")
            break
        end = end_of_turn(last, captures[step - 1].wire)
        if end_of_step(last, captures[step - 1].wire) is not None:
            break
        if last.finish.reason != "tool_calls":
            break
        if step == limit and max_steps is not None and limit < len(captures):
            end = TurnEnd("max_steps", "step_limit", {"max_steps": max_steps})
    run.emit(turn_finished(0, end or TurnEnd("completed", "stop")), now)
    events = renumber(run.events)
    state = initial()
    for event in events:
        state = reduce(state, event)
    return LoopResult(events, state, run.runs, streams)
