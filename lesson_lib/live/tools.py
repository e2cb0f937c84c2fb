"""Tools as asyncio tasks: each starts the moment its call is ready, and runs while the
stream goes on.

A `LiveTool` is a name and an async function of the call's input. The
`ToolRunner` keeps the running tasks by block id; `finished()` collects those
that are done (their result, their error, or their timeout) as
`ToolExecutionFinished` events, and `interrupt()` cancels every one still
running: the tool sees `asyncio.CancelledError`, and its execution ends
``interrupted``.

A retry replaces a failed attempt, and the new attempt announces its calls again.
A tool that already finished in the failed attempt is not run twice (a tool can
have effects: a booking, a payment): `carry(events)` keeps each finished result by
its call's name and input, and the same call in the next attempt gets it back,
marked ``reused``, once per result. A tool that was interrupted runs again.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ..turn.events import ToolCallReady, ToolExecutionFinished, ToolExecutionStarted, TurnEvent
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
        self.carried: dict[str, list[tuple[str, Any, str | None]]] = {}
        self.reused: set[str] = set()       # blocks whose result was carried over

    def new_step(self) -> None:
        """A new model call: results carried for the last one's retries do not apply."""
        self.carried.clear()
        self.reused.clear()

    def carry(self, events: Iterable[TurnEvent]) -> None:
        """Keep the results a failed attempt's tools finished with, for the retry (the
        attempt's `ToolCallReady` and `ToolExecutionFinished` events)."""
        ready = {e.block: e for e in events if isinstance(e, ToolCallReady)}
        for e in events:
            if isinstance(e, ToolExecutionFinished) and e.status != "interrupted" \
                    and e.block in ready:
                key = _call_key(ready[e.block])
                self.carried.setdefault(key, []).append((e.status, e.result, e.error))

    def start(self, ready: ToolCallReady, t: float) -> ToolExecutionStarted:
        """Start the tool of a ready call as a task; its `ToolExecutionStarted`. A call a
        failed attempt already ran gets that result back instead (`carry`)."""
        earlier = self.carried.get(_call_key(ready))
        if earlier:
            status, result, error = earlier.pop(0)
            task = asyncio.ensure_future(_again(status, result, error, t))
            self.reused.add(ready.block)
        else:
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
                                                 result=result, error=error, t=t,
                                                 reused=block in self.reused))
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


def _call_key(ready: ToolCallReady) -> str:
    """A call's identity across attempts: its tool and its input (ids may differ)."""
    return json.dumps([ready.name, ready.input], sort_keys=True, default=repr)


async def _again(status: str, result: Any, error: str | None, t: float
                 ) -> tuple[str, Any, str | None, float]:
    """A carried result, as an execution that ends at once."""
    return status, result, error, t


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
