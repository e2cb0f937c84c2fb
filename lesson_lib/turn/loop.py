"""The simulated agent loop: runs a multi-step turn, each tool starting as soon as its call
is ready.

The loop's rule (ask, stream a step, run its tools, ask again) is `agent.run_agent_turn`,
the same one the live loop runs; this module is its offline transport and clock. The
model's side comes from captures (one per step, played at their recorded arrival times);
the tools are deterministic fakes with declared durations. Time is virtual: a
discrete-event schedule on the captures' clock, so a run is the same every time and says
exactly "get_weather(Paris) started 900 ms before the stream ended".

How it goes, step by step:

- the step's turn events are played in arrival order (on the wire route, the
  capture's recorded chunks pushed through a `TurnStream` by
  `run.timed_batches`, as a live connection would push them); before each, every
  tool whose virtual end has come finishes (`ToolExecutionFinished`);
- a `ToolCallReady` starts its tool at once (`tool_start`'s ``settled`` rule) (an asyncio task, so parallel
  calls really run side by side) while the stream goes on; each result is
  kept under its call's id, so it goes to the right call. On Chat a call
  is ready only at its choice's finish reason: the loop cannot start it
  earlier, because the wire has not said the arguments are over;
- when the stream and every tool are done, the next step starts with the
  results (its request is the next capture's; a live turn builds it with
  `lesson_lib.turn.next_request`);
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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..capture.captures import Capture
from .adapters import Counter
from .agent import run_agent_turn
from .closing import closing_events
from .ends import TurnEnd
from .events import (
    ErrorReported,
    StepFinished,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnEvent,
    renumber,
)
from .fake_tools import FakeTool, ToolFailed
from .outcome import where_stopped
from .reduce import TurnState, initial, reduce
from .run import Route, timed_batches
from .tool_start import ToolStarter

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


class _Replay:
    """The simulated loop's transport: each step's reply replayed from its capture, its
    tools fakes that take their declared time, the clock virtual (`agent.Transport`)."""

    def __init__(self, captures: Sequence[Capture], tools: Mapping[str, FakeTool],
                 route: Route, cancel_at: float | None, cancel_end: TurnEnd) -> None:
        self.captures, self.tools, self.route = captures, tools, route
        self.wire = captures[0].wire if captures else ""     # the step's wire
        self.cancel_at, self.cancel_end = cancel_at, cancel_end
        self.events: list[TurnEvent] = []
        self.state = initial()
        self.pending: list[tuple[float, int, asyncio.Task, dict]] = []   # a heap by end time
        self.order = 0
        self.runs: list[ToolRun] = []
        self.streams: list[tuple[int, float, float]] = []
        self.counter = Counter()
        self.clock = 0.0
        self.cancelled = False
        self.end: TurnEnd | None = None         # how a cancel ended the turn

    # -- the clock, the events -----------------------------------------------------

    def now_ms(self) -> float:
        return self.clock

    def seq(self) -> int:
        return 0                        # the turn is renumbered once it is over

    def emit(self, events: Iterable[TurnEvent]) -> None:
        for event in events:
            self.events.append(event)
            self.state = reduce(self.state, event)

    def emit_at(self, event: TurnEvent, t: float) -> None:
        self.emit([replace(event, t=t)])

    # -- a step ----------------------------------------------------------------------

    async def stream(self, step: int, request: Any) -> StepFinished | None:
        """Replay the step's capture (`request`) at its arrival times, starting each ready
        call's tool and finishing each tool whose virtual end has come before the next
        events."""
        if request is None:             # no capture to replay: a turn of no step
            return None
        self.wire = request.wire
        start = self.clock
        if self.cancel_at is not None and start >= self.cancel_at:
            # between steps (or before the first): the next one never starts
            self.stop(in_step=step == 1, first_byte=False)
            return None
        last: StepFinished | None = None
        arrived = False
        starter = ToolStarter("settled")
        for t_rel, batch in timed_batches(request, step, self.counter, self.route):
            t = start + (t_rel or 0.0)
            if self.cancel_at is not None and t > self.cancel_at:
                self.stop(in_step=True, first_byte=arrived)
                await self.cancel(self.cancel_at)
                self.clock = self.cancel_at
                break
            await self.finish_until(t)
            self.clock = t
            for event in batch:
                self.emit_at(event, t)
                arrived = arrived or event.kind not in ("step_started", "turn_started")
                for ready in starter.feed(event):
                    self.start(ready, t, step)
                if event.kind == "step_finished":
                    last = event
        if self.cancelled:
            self.emit_at(StepFinished(0, step=step, ended="cancelled"), self.clock)
            last = None
        self.streams.append((step, start, self.clock))
        return last

    async def run_tools(self, step: int, last: StepFinished | None) -> None:
        """Finish the step's tools in end-time order; a cancel that falls before the last
        one ends interrupts what still runs."""
        if self.end is not None:
            return
        stream_end = self.clock
        if self.cancel_at is not None and any(due > self.cancel_at for due, *_ in self.pending):
            await self.finish_until(self.cancel_at)
            self.stop(in_step=False, first_byte=True)
            await self.cancel(self.cancel_at)
            self.clock = self.cancel_at
            return
        await self.finish_until(None)
        self.clock = max([stream_end] + [r.end for r in self.runs if r.step == step])

    # -- the tools ---------------------------------------------------------------------

    def start(self, ready: Any, t: float, step: int) -> None:
        tool = self.tools.get(ready.name or "")
        self.emit_at(ToolExecutionStarted(0, block=ready.block, call_id=ready.call_id,
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
            self.emit_at(ToolExecutionFinished(0, block=ready.block, call_id=ready.call_id,
                                               status=status, result=result, error=error),
                         end)
            if status == "error":
                # The model gets the error as the call's result; the turn goes on.
                self.emit_at(ErrorReported(0, step=info["step"], scope="tool",
                                           phase="after_output", retryable=False,
                                           message=error or "", code="tool_error"), end)
            self.runs.append(ToolRun(info["step"], ready.block, ready.call_id, ready.name,
                                     ready.input, info["start"], end, status, result, error))

    async def cancel(self, t: float) -> None:
        """Close what is open, interrupt what runs, start nothing new."""
        self.cancelled = True
        for event in closing_events(self.state, "the turn was cancelled"):
            self.emit_at(event, t)
        await self.finish_until(t)
        while self.pending:
            _, _, task, info = heapq.heappop(self.pending)
            task.cancel()
            ready = info["ready"]
            self.emit_at(ToolExecutionFinished(0, block=ready.block, call_id=ready.call_id,
                                               status="interrupted",
                                               error="the turn was cancelled"), t)
            self.runs.append(ToolRun(info["step"], ready.block, ready.call_id, ready.name,
                                     ready.input, info["start"], t, "interrupted"))

    # -- how the turn ends ------------------------------------------------------------

    def stop(self, *, in_step: bool, first_byte: bool) -> None:
        """The cancel at `cancel_at` found the turn: its end says where."""
        where = where_stopped(self.state, in_step=in_step, first_byte=first_byte)
        end = self.cancel_end
        self.end = TurnEnd(end.outcome, end.reason,
                           {"by": f"at {self.cancel_at:g} ms", **(end.detail or {}), **where,
                            "at_ms": self.cancel_at})

    def stopped(self) -> TurnEnd | None:
        return self.end

    def gave_up(self, step: int) -> bool:
        return False                    # a replayed step has one attempt: nothing to retry

    def next_request(self, request: Any, step: int) -> Any | None:
        """What the next step replays: the next capture (None: the captures ran out)."""
        return self.captures[step] if step < len(self.captures) else None


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
    replay = _Replay(captures, tools, route, cancel_at, cancel_end)
    await run_agent_turn(replay, captures[0] if captures else None, max_steps=max_steps,
                         turn=turn)
    events = renumber(replay.events)
    state = initial()
    for event in events:
        state = reduce(state, event)
    return LoopResult(events, state, replay.runs, replay.streams)
