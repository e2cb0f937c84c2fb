"""The live loop: an agent turn over a real HTTP connection, drawn as it arrives.

One step, one attempt at a time:

1. send the step's request and read the body chunk by chunk, as it arrives;
2. push each chunk through `TurnStream` and each turn event through the
   reducer (`on_update` sees the state after every chunk: draw it there);
3. start each tool the moment its call is ready (`tools.ToolRunner`);
4. check the budget at every delta, and cancel at the one that crosses it;
5. at the end of the body, or at an error, a stall or a dropped connection,
   retry by phase (`attempts`) or give up with every attempt's error kept;
6. wait for the tools, build the next request from the state
   (`turn.next_request`) and go on to the next step, until a step asks for no
   tool, the turn fails, or `max_steps`.

`cancel()` (a Stop button) cancels the HTTP read and every running tool: open
blocks end synthesised, tools end ``interrupted``, the turn ends
``cancelled``, and nothing that arrived is lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..breaks.budget import token_estimate
from ..turn import TurnStream
from ..turn.adapters import Counter
from ..turn.closing import closing_events
from ..turn.events import (
    ErrorReported,
    StepFinished,
    TurnEvent,
    TurnFinished,
    TurnStarted,
)
from ..turn.next_request import next_request
from ..turn.outcome import outcome_of_step
from ..turn.reduce import TurnState, initial, reduce
from .attempts import Attempt, RetryPolicy, retry_wait
from .requests import PATHS as PATHS  # lesson 6 posts to `url + PATHS[wire]`
from .requests import live_wires, request_body, request_url
from .timings import Timings, timings_of
from .tools import LiveTool, ToolRunner

OnUpdate = Callable[[TurnState], None]


@dataclass
class LiveResult:
    """What a live turn produced: its events and final state, every attempt, and each
    step's timings."""

    events: list[TurnEvent]
    state: TurnState
    attempts: list[Attempt] = field(default_factory=list)
    timings: list[Timings] = field(default_factory=list)

    @property
    def outcome(self) -> str | None:
        return self.state.outcome


class _Stopped(Exception):
    """The loop was told to stop (`cancel()`, or the budget)."""


class LiveTurn:
    """One agent turn over HTTP: `await turn.run()`; `turn.cancel()` from anywhere."""

    def __init__(self, base_url: str, wire: str, request: dict[str, Any],
                 tools: Iterable[LiveTool] | Mapping[str, LiveTool] = (), *,
                 client: httpx.AsyncClient | None = None, retry: RetryPolicy | None = None,
                 budget_tokens: int | None = None, max_steps: int = 8,
                 stall_s: float | None = None, params: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None, on_update: OnUpdate | None = None,
                 turn: str = "turn") -> None:
        if wire not in live_wires():
            raise ValueError(f"no live path for wire {wire!r}; known: {', '.join(live_wires())}")
        self.base_url = base_url
        self.url = request_url(base_url, wire, request)
        self.wire, self.request = wire, request
        self.tools = dict(tools) if isinstance(tools, Mapping) else {t.name: t for t in tools}
        self.client, self.retry = client, retry or RetryPolicy()
        self.budget_tokens, self.max_steps, self.stall_s = budget_tokens, max_steps, stall_s
        self.params, self.headers = params or {}, headers or {}
        self.on_update, self.turn = on_update, turn
        self.seq = Counter()
        self.events: list[TurnEvent] = []
        self.state = initial()
        self.attempts: list[Attempt] = []
        self.timings: list[Timings] = []
        self._stop: str | None = None
        # What the turn waits on now (a step's read, or its tools): what `cancel` stops.
        self._waiting_on: asyncio.Future | None = None
        self._spent = 0

    # -- from outside ----------------------------------------------------------------

    def cancel(self, why: str = "cancelled by the user") -> None:
        """Stop the turn: the read in progress and every running tool are cancelled."""
        if self._stop is None:
            self._stop = why
        if self._waiting_on is not None and not self._waiting_on.done():
            self._waiting_on.cancel()

    async def run(self) -> LiveResult:
        """Run the turn to its end (see the module)."""
        owned = self.client is None
        client = self.client or httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None))
        self._t0 = asyncio.get_running_loop().time()
        self._emit([TurnStarted(self.seq(), turn=self.turn, t=0.0)])
        try:
            outcome = await self._steps(client)
        finally:
            if owned:
                await client.aclose()
        self._emit([TurnFinished(self.seq(), outcome=outcome, t=self._now())])
        return LiveResult(self.events, self.state, self.attempts, self.timings)

    # -- the steps -------------------------------------------------------------------

    async def _steps(self, client: httpx.AsyncClient) -> str:
        request = self.request
        runner = ToolRunner(self.tools, self.seq, self._now)
        for step in range(1, self.max_steps + 1):
            first = len(self.events)
            last = await self._step(client, step, request, runner)
            if last is not None and last.ended != "cancelled":
                await self._wait_for_tools(runner)
            attempt = self.attempts[-1]
            self.timings.append(timings_of(self.events[first:], step, attempt.started_at,
                                           attempt.first_byte))
            if last is None or last.ended == "cancelled" or self._stop is not None:
                return "cancelled"
            outcome = outcome_of_step(last.ended, last.finish.reason)
            if outcome is not None:
                return "failed" if self._gave_up(step) else outcome
            if last.finish.reason != "tool_calls":
                return "completed"
            request = next_request(self.state, request, step)
        return "max_steps"

    def _gave_up(self, step: int) -> bool:
        """Whether the step failed for good: its retries ran out on an error, or the loop
        itself found an error no retry cures (a body that is not an event stream)."""
        mine = [a for a in self.attempts if a.step == step]
        last = mine[-1]
        return last.failed and (len(mine) > 1 or not all(e.retryable for e in last.errors))

    async def _step(self, client: httpx.AsyncClient, step: int, request: dict,
                    runner: ToolRunner) -> StepFinished | None:
        """Attempts of one step until one ends well, or no retry is left. The events of a
        failed attempt that is retried stay on its `Attempt`, not in the turn."""
        number = 0
        while True:
            number += 1
            start = self._now()
            attempt = Attempt(step, number, started_at=start)
            self.attempts.append(attempt)
            stream = TurnStream(self.wire, request=request, step=step, seq=self.seq)
            committed = self.state
            self._waiting_on = asyncio.ensure_future(
                self._read(client, request, stream, attempt, runner, committed, start))
            try:
                headers = await self._waiting_on
            except asyncio.CancelledError:
                if self._stop is None:
                    raise
                headers = None
            finally:
                self._waiting_on = None
            if self._stop is not None:
                await self._close_cancelled(step, attempt, runner)
                return None
            wait = retry_wait(attempt, headers, self.retry)
            if wait is not None:
                attempt.events += await runner.interrupt(self._now(), "the step is retried")
                self.seq.next = len(self.events)    # the retry takes the same numbers
                self.state = committed
                self._notify()
                await asyncio.sleep(wait)
                continue
            self._commit(attempt)
            return next((e for e in reversed(attempt.events) if e.kind == "step_finished"),
                        None)

    async def _read(self, client: httpx.AsyncClient, request: dict, stream: TurnStream,
                    attempt: Attempt, runner: ToolRunner, committed: TurnState,
                    start: float) -> dict[str, str] | None:
        """One attempt: the request, its body chunk by chunk, its end. Returns the
        response's headers (for a retry's wait)."""
        state = committed

        def push(events: list[TurnEvent]) -> None:
            nonlocal state
            ready = []
            for event in events:
                attempt.events.append(event)
                state = reduce(state, event)
                if event.kind == "error_reported":
                    attempt.errors.append(event)
                elif event.kind == "block_delta":
                    attempt.output_seen = True
                    self._spent += token_estimate(event.fragment)
                elif event.kind == "block_started":
                    attempt.output_seen = True
                elif event.kind == "tool_call_ready" and not event.server_side:
                    ready.append(event)
            # Tools start after the chunk's own events, which hold the sequence numbers
            # before theirs.
            started = [runner.start(event, self._now()) for event in ready]
            for event in started + runner.finished():
                attempt.events.append(event)
                state = reduce(state, event)
            self.state = state
            self._notify()
            if self.budget_tokens is not None:
                # The wire's own count where it reports one as it goes, else the estimate.
                reported = sum(step.usage.output for step in state.steps)
                spent = max(self._spent, reported)
                if spent >= self.budget_tokens:
                    self._stop = (f"the budget of {self.budget_tokens} output tokens was "
                                  f"reached (about {spent})")
                    raise _Stopped

        try:
            # A live turn always asks for the stream; the path's own query stays.
            url = request_url(self.base_url, self.wire, request, self.params)
            async with client.stream("POST", url, json=request_body(self.wire, request),
                                     headers=self.headers) as response:
                attempt.status = response.status_code
                if response.status_code >= 300:
                    push(stream.http_error(response.status_code, await response.aread()))
                    return dict(response.headers)
                kind = response.headers.get("content-type", "")
                if kind.split(";")[0].strip() == "application/json":
                    # A whole response where a stream was asked for: nothing to feed.
                    push([ErrorReported(
                        self.seq(), step=attempt.step, scope="protocol", phase="before_output",
                        retryable=False, code="not_an_event_stream", t=self._now(),
                        message=f"the server answered {kind!r}, not an event stream",
                        raw=(await response.aread()).decode("utf-8", "replace")[:2000])])
                    push(stream.finish())
                    return dict(response.headers)
                chunks = response.aiter_raw()
                while True:
                    try:
                        chunk = await asyncio.wait_for(anext(chunks), self.stall_s)
                    except StopAsyncIteration:
                        break
                    if attempt.first_byte is None:
                        attempt.first_byte = self._now() - start
                    push(stream.feed(chunk, self._now()))
                push(stream.finish())
                return dict(response.headers)
        except _Stopped:
            return None
        except TimeoutError:
            push(stream.transport_error(
                f"no byte for {self.stall_s:g} s: the stream stalled; the read was abandoned",
                code="stall", t=self._now()))
        except httpx.TransportError as exc:
            push(stream.transport_error(
                f"the connection broke: {type(exc).__name__}: {exc}".rstrip(": "),
                t=self._now()))
        return None

    async def _close_cancelled(self, step: int, attempt: Attempt,
                               runner: ToolRunner) -> None:
        """Keep what arrived, close what is open, interrupt what runs."""
        self._commit(attempt)
        t = self._now()
        closing = closing_events(self.state, f"the turn stopped: {self._stop}", t=t,
                                 seq=self.seq)
        self._emit(closing)
        self._emit(await runner.interrupt(t, f"the turn stopped: {self._stop}"))
        if not any(e.kind == "step_finished" and e.step == step for e in attempt.events):
            self._emit([StepFinished(self.seq(), step=step, ended="cancelled", t=t)])

    async def _wait_for_tools(self, runner: ToolRunner) -> None:
        waiter = asyncio.ensure_future(runner.wait_all())
        self._waiting_on = waiter
        try:
            await waiter
        except asyncio.CancelledError:
            if self._stop is None:
                raise
        finally:
            self._waiting_on = None
        if self._stop is not None:
            self._emit(await runner.interrupt(self._now(), f"the turn stopped: {self._stop}"))
        else:
            self._emit(runner.finished())

    # -- plumbing --------------------------------------------------------------------

    def _now(self) -> float:
        return (asyncio.get_running_loop().time() - self._t0) * 1000.0

    def _emit(self, events: Iterable[TurnEvent]) -> None:
        """New events of the turn: kept, and reduced into the state."""
        for event in events:
            self.events.append(event)
            self.state = reduce(self.state, event)
        self._notify()

    def _commit(self, attempt: Attempt) -> None:
        """An attempt's events join the turn (the state has them already)."""
        self.events.extend(attempt.events)

    def _notify(self) -> None:
        if self.on_update is not None:
            self.on_update(self.state)


async def run_live(base_url: str, wire: str, request: dict[str, Any],
                   tools: Iterable[LiveTool] = (), **options: Any) -> LiveResult:
    """Run one live turn to its end (`LiveTurn` with `options`)."""
    return await LiveTurn(base_url, wire, request, tools, **options).run()
