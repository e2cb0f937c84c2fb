"""Tools as asyncio tasks: each starts the moment its call is ready, and runs while the
stream goes on.

A `LiveTool` is a name and an async function of the call's input. The
`ToolRunner` keeps the running tasks by block id; `finished()` collects those
that are done (their result, their error, or their timeout) as
`ToolExecutionFinished` events, and `interrupt()` cancels every one still
running: the tool sees `asyncio.CancelledError`, and its execution ends
``interrupted``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..turn.events import ToolCallReady, ToolExecutionFinished, ToolExecutionStarted
from ..turn.weather import TOOL_NAME, result_for


@dataclass(frozen=True)
class LiveTool:
    """A tool the live loop can run: `run(input)` is awaited; past `timeout_s` it fails."""

    name: str
    run: Callable[[Any], Awaitable[Any]]
    timeout_s: float = 30.0


def weather_tool(delay_s: float = 0.2) -> LiveTool:
    """``get_weather`` for real: it waits `delay_s` (a slow service), then answers with
    the weather turn's fixed results (`lesson_lib.turn.weather`)."""

    async def get_weather(arguments: Any) -> Any:
        await asyncio.sleep(delay_s)
        location = arguments.get("location") if isinstance(arguments, dict) else None
        result = result_for(location) if isinstance(location, str) else None
        if result is None:
            raise LookupError(f"no weather for {location!r}")
        return result

    return LiveTool(TOOL_NAME, get_weather)


@dataclass
class _Running:
    ready: ToolCallReady
    task: asyncio.Task


class ToolRunner:
    """The tools of one turn: started on `ToolCallReady`, collected when done."""

    def __init__(self, tools: dict[str, LiveTool], seq: Callable[[], int],
                 now: Callable[[], float]) -> None:
        self.tools = tools
        self.seq = seq
        self.now = now
        self.running: dict[str, _Running] = {}
        self.started_at: dict[str, float] = {}

    def start(self, ready: ToolCallReady, t: float) -> ToolExecutionStarted:
        """Start the tool of a ready call as a task; its `ToolExecutionStarted`."""
        tool = self.tools.get(ready.name or "")
        task = asyncio.ensure_future(_run(tool, ready, self.now))
        self.running[ready.block] = _Running(ready, task)
        self.started_at[ready.block] = t
        return ToolExecutionStarted(self.seq(), block=ready.block, call_id=ready.call_id,
                                    name=ready.name, t=t)

    def finished(self) -> list[ToolExecutionFinished]:
        """The executions that ended since the last look, in the order they were started,
        each stamped with the time it really ended."""
        out = []
        for block, running in list(self.running.items()):
            if running.task.done():
                del self.running[block]
                status, result, error, t = running.task.result()
                out.append(ToolExecutionFinished(self.seq(), block=block,
                                                 call_id=running.ready.call_id, status=status,
                                                 result=result, error=error, t=t))
        return out

    async def wait_all(self) -> None:
        """Wait until every running tool has ended (each ends by itself: a timeout)."""
        if self.running:
            await asyncio.wait([r.task for r in self.running.values()])

    async def interrupt(self, t: float, why: str) -> list[ToolExecutionFinished]:
        """Cancel every running tool; each ends ``interrupted``."""
        out = self.finished()
        for running in self.running.values():
            running.task.cancel()
        for block, running in list(self.running.items()):
            try:
                await running.task
            except asyncio.CancelledError:
                pass
            out.append(ToolExecutionFinished(self.seq(), block=block,
                                             call_id=running.ready.call_id,
                                             status="interrupted", error=why, t=t))
        self.running.clear()
        return out


async def _run(tool: LiveTool | None, ready: ToolCallReady,
               now: Callable[[], float]) -> tuple[str, Any, str | None, float]:
    """One execution: (status, result, error, when it ended). A tool's exception is its
    call's error, never the loop's; a timeout is an error too."""
    if tool is None:
        return "denied", None, f"no tool named {ready.name!r}", now()
    try:
        result = await asyncio.wait_for(tool.run(ready.input), tool.timeout_s)
    except TimeoutError:
        return "error", None, f"{tool.name} did not answer within {tool.timeout_s:g} s", now()
    except asyncio.CancelledError:
        raise
    except Exception as exc:     # the tool's failure is data for the model
        return "error", None, f"{type(exc).__name__}: {exc}", now()
    return "ok", result, None, now()
