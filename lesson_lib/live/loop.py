"""The live loop: an agent turn over a real HTTP connection, drawn as it arrives.

The loop's rule (ask, stream a step, run its tools, ask again) is `turn.agent.run_agent_turn`,
the same one lesson 4's simulated loop runs; `LiveTurn` is its transport over HTTP and its
clock, the event loop's. One step, one attempt at a time:

1. send the step's request and read the body chunk by chunk, as it arrives;
2. push each chunk through `TurnStream` and each turn event through the
   reducer (`on_update` sees the state after every chunk: draw it there);
3. start each tool the moment its call is ready (`tools.ToolRunner`): by default when
   its arguments settle, or, with ``tool_start="moved_on"``, when the model has moved on
   from it (`lesson_lib.turn.tool_start`); an approval hook (`approve`) may hold a call
   instead, and a turn with a held call ends asking (``paused``) once its step is done;
4. check the budget at every delta, and cancel at the one that crosses it;
5. at the end of the body, or at an error, a stall (no headers, or no progress:
   `patience`) or a dropped connection, retry by phase (`attempts`) or give up
   with every attempt's error kept; where the wire resumes (`resuming`) and the
   stream broke before its end, the next attempt is the wire's resume request
   instead, after the last point received, and the step goes on from what
   arrived, every character once;
6. wait for the tools; the rule builds the next request from the state
   (`turn.next_request`) and goes on to the next step, until a step asks for no
   tool, the turn fails, or `max_steps`.

`cancel()` (a Stop button) cancels the HTTP read and every running tool: open
blocks end synthesised, tools end ``interrupted``, the turn ends
``cancelled``, and nothing that arrived is lost. A turn's deadline does the same. The end
says who stopped it (reason ``user``, ``deadline``) and where it found the turn
(`turn.outcome.where_stopped`); the budget's end is ``budget_reached``
(``application_budget``), never ``completed``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..breaks.budget import delta_of, token_estimate
from ..turn import TurnStream
from ..turn.adapters import Counter
from ..turn.agent import run_agent_turn
from ..turn.closing import closing_events
from ..turn.ends import TurnEnd
from ..turn.events import (
    ErrorReported,
    StepFinished,
    StepStarted,
    ToolCallHeld,
    ToolCallReady,
    TurnEvent,
)
from ..turn.next_request import next_request as build_next_request
from ..turn.outcome import where_stopped
from ..turn.reduce import BlockView, TurnState, initial, reduce
from ..turn.tool_start import Rule, ToolStarter
from .attempts import Attempt, RetryPolicy, retry_wait
from .patience import HEADERS_S, PROGRESS_S, Progress, unreadable_encoding, watchdog_end
from .requests import PATHS as PATHS  # lesson 6 posts to `url + PATHS[wire]`
from .requests import live_wires, request_body, request_url
from .resuming import Resuming
from .timings import Timings, timings_of
from .tools import LiveTool, ToolRunner

OnUpdate = Callable[[TurnState], None]
# The approval hook: given a ready call, True runs it now, False holds it for an answer.
Approve = Callable[[ToolCallReady], bool]

# The loop reads the body as it arrives: a compressed one cannot be fed until decoded, so
# it asks for none (and decodes gzip or deflate if a server sends them anyway).
_IDENTITY = {"accept-encoding": "identity"}


@dataclass
class LiveResult:
    """What a live turn produced: its events and final state, every attempt, and each
    step's timings."""

    events: list[TurnEvent]
    state: TurnState
    attempts: list[Attempt] = field(default_factory=list)
    timings: list[Timings] = field(default_factory=list)
    stopped: str | None = None      # why a cancelled (or budget-ended) turn stopped: who, or
                                    # which limit; `state.end` has it as data

    @property
    def outcome(self) -> str | None:
        return self.state.outcome

    @property
    def held(self) -> list[BlockView]:
        """The calls the approval hook held: what the turn, ended asking, waits on."""
        return [b for b in self.state.calls if b.execution == "held"]


class _Stopped(Exception):
    """The loop was told to stop (`cancel()`, or the budget)."""


class LiveTurn:
    """One agent turn over HTTP: `await turn.run()`; `turn.cancel()` from anywhere.

    Every wait ends (`patience`): `headers_s` for the response's headers, `stall_s`
    between two pieces of progress in the body (keep-alive pings are not progress),
    both 60 s by default, each a retryable ``stall`` error; `deadline_s` (none by
    default) for the whole turn, past which it is cancelled (`LiveResult.stopped` says
    why). None for any of them waits without limit.

    `tool_start` is when a call starts while the reply streams: ``settled`` (its
    arguments settled, the default) or ``moved_on`` (the model moved on from it, the
    anthropic SDK's eager rule); a call neither starts early starts when its step ends.
    `approve`, given each call as it would start, runs it (True) or holds it (False): a
    held call is shown (`ToolCallHeld`, `LiveResult.held`), and the turn ends ``paused``
    after that step, asking for an answer, instead of sending the next request.
    """

    def __init__(self, base_url: str, wire: str, request: dict[str, Any],
                 tools: Iterable[LiveTool] | Mapping[str, LiveTool] = (), *,
                 client: httpx.AsyncClient | None = None, retry: RetryPolicy | None = None,
                 budget_tokens: int | None = None, max_steps: int = 8,
                 stall_s: float | None = PROGRESS_S, headers_s: float | None = HEADERS_S,
                 deadline_s: float | None = None, params: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None, on_update: OnUpdate | None = None,
                 turn: str = "turn", tool_start: Rule = "settled",
                 approve: Approve | None = None) -> None:
        if wire not in live_wires():
            raise ValueError(f"no live path for wire {wire!r}; known: {', '.join(live_wires())}")
        self.base_url = base_url
        self.url = request_url(base_url, wire, request)
        self.wire, self.request = wire, request
        self.tools = dict(tools) if isinstance(tools, Mapping) else {t.name: t for t in tools}
        self.client, self.retry = client, retry or RetryPolicy()
        self.budget_tokens, self.max_steps = budget_tokens, max_steps
        # How long a read waits (`patience`): None is no limit.
        self.stall_s, self.headers_s, self.deadline_s = stall_s, headers_s, deadline_s
        self.params, self.headers = params or {}, headers or {}
        self.on_update, self.turn = on_update, turn
        ToolStarter(tool_start)             # an unknown rule is refused here, not mid-turn
        self.tool_start, self.approve = tool_start, approve
        self.seq = Counter()
        self.events: list[TurnEvent] = []
        self.state = initial()
        self.attempts: list[Attempt] = []
        self.timings: list[Timings] = []
        self._stop: str | None = None
        self._stop_end: TurnEnd | None = None     # who stopped the turn, and where
        # What the turn waits on now (a step's read, or its tools): what `cancel` stops.
        self._waiting_on: asyncio.Future | None = None
        self._spent = 0

    # -- from outside ----------------------------------------------------------------

    def cancel(self, why: str = "cancelled by the user", *,
               reason: str = "user") -> None:
        """Stop the turn: the read in progress and every running tool are cancelled. The
        turn ends ``cancelled`` with `reason` (`lesson_lib.turn.ends`: ``user`` for Stop)."""
        self._halt(TurnEnd("cancelled", reason, {"by": why}), why)

    def _halt(self, end: TurnEnd, why: str) -> None:
        """Stop the turn as `end` says (the first stop wins), with where it found the turn."""
        if self._stop is None:
            self._stop = why
            step = self.state.steps[-1] if self.state.steps else None
            in_step = step is not None and not step.finished
            attempt = self.attempts[-1] if self.attempts else None
            first_byte = attempt is not None and attempt.first_byte is not None
            if attempt is not None and not in_step and attempt.step > len(self.state.steps):
                in_step = True       # the request is out, its step has not begun
            where = where_stopped(self.state, in_step=in_step, first_byte=first_byte)
            self._stop_end = TurnEnd(end.outcome, end.reason, {**(end.detail or {}), **where})
        if self._waiting_on is not None and not self._waiting_on.done():
            self._waiting_on.cancel()

    async def run(self) -> LiveResult:
        """Run the turn to its end (see the module)."""
        owned = self.client is None
        client = self.client or httpx.AsyncClient(timeout=httpx.Timeout(60.0, read=None))
        loop = asyncio.get_running_loop()
        self._t0 = loop.time()
        deadline = None if self.deadline_s is None else loop.call_later(
            self.deadline_s, lambda: self.cancel(
                f"the turn's deadline of {self.deadline_s:g} s passed", reason="deadline"))
        self._client = client
        self._runner = ToolRunner(self.tools, self.seq, self._now)
        try:
            end = await run_agent_turn(self, self.request, max_steps=self.max_steps,
                                       turn=self.turn)
        finally:
            if deadline is not None:
                deadline.cancel()
            if owned:
                await client.aclose()
        return LiveResult(self.events, self.state, self.attempts, self.timings,
                          self._stop if end is self._stop_end else None)

    # -- the transport the loop's rule runs over (`turn.agent.Transport`) ---------------

    async def stream(self, step: int, request: dict) -> StepFinished | None:
        """One step over HTTP: its attempts (retried or resumed) until one ends well, or
        none is left; tools start as their calls are ready. None: the turn was stopped."""
        self._runner.new_step()
        self._first = len(self.events)
        return await self._step(self._client, step, request, self._runner)

    async def run_tools(self, step: int, last: StepFinished | None) -> None:
        """Start the calls the tool-start rule left waiting, wait for every tool (or
        interrupt them, once stopped), and keep the step's timings."""
        if last is not None and last.ended == "proper" and last.finish.reason == "tool_calls":
            self.emit(self._start_or_hold(self._not_started(step), self._runner))
        if last is not None and last.ended != "cancelled":
            await self._wait_for_tools(self._runner)
        attempt = self.attempts[-1]
        self.timings.append(timings_of(self.events[self._first:], step, attempt.started_at,
                                       attempt.first_byte))

    def stopped(self) -> TurnEnd | None:
        """How `cancel()`, the budget, the deadline or the stall watchdog ended the turn
        (None: none did)."""
        stalled = watchdog_end(self.attempts[-1], self.state) if self.attempts else None
        if self._stop is None and stalled is not None:
            self._stop, self._stop_end = stalled.detail["by"], stalled
        return self._stop_end if self._stop is not None else None

    def next_request(self, request: dict, step: int) -> dict:
        """The request after `step`, built from the turn so far (`turn.next_request`)."""
        return build_next_request(self.state, request, step)

    def gave_up(self, step: int) -> bool:
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
        # Where the step began: a retry from the start goes back there (a resumed
        # attempt's events joined the turn before it).
        base_events, base_state = len(self.events), self.state
        stream: TurnStream | None = None
        resuming: Resuming | None = None
        while True:
            number += 1
            start = self._now()
            attempt = Attempt(step, number, started_at=start)
            broke = self.attempts[-1] if number > 1 else None
            self.attempts.append(attempt)
            if stream is not None and resuming is not None and broke is not None \
                    and broke.resume_at is not None:
                attempt.resumed_after = broke.resume_at
                stream.resume(resuming.joiner.take)
            else:
                stream = TurnStream(self.wire, request=request, step=step, seq=self.seq)
                resuming = Resuming.for_step(self.wire, request)
            committed = self.state
            self._waiting_on = asyncio.ensure_future(
                self._read(client, request, stream, attempt, runner, committed, start,
                           resuming))
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
            if attempt.resume_at is not None:
                # What arrived stays: the resume request's body goes on from it, and the
                # tools it started run on.
                self._commit(attempt)
                self.seq.next = len(self.events)
                if wait is not None and await self._pause(wait):
                    continue
                # No resume after all (stopped meanwhile, or a wait too long): the break
                # ends the step as it would have.
                self.emit(stream.transport_error(attempt.errors[-1].message,
                                                 code=attempt.errors[-1].code or "transport",
                                                 t=self._now()))
                return next((e for e in reversed(self.events) if e.kind == "step_finished"
                             and e.step == step), None)
            if wait is not None:
                attempt.events += await runner.interrupt(self._now(), "the step is retried")
                # What finished is not run again (in a resumed attempt's events too, if any).
                runner.carry(self.events[base_events:] + attempt.events)
                del self.events[base_events:]
                self.seq.next = len(self.events)    # the retry takes the same numbers
                self.state = base_state
                self._notify()
                if await self._pause(wait):
                    continue
                # Stopped while waiting to retry: this attempt stays the step's last.
                self.emit(attempt.events)
                self.seq.next = len(self.events)
                return next((e for e in reversed(attempt.events)
                             if e.kind == "step_finished"), None)
            self._commit(attempt)
            return next((e for e in reversed(attempt.events) if e.kind == "step_finished"),
                        None)

    async def _read(self, client: httpx.AsyncClient, request: dict, stream: TurnStream,
                    attempt: Attempt, runner: ToolRunner, committed: TurnState,
                    start: float, resuming: Resuming | None = None) -> dict[str, str] | None:
        """One attempt: the request (the resume request, on an attempt that resumes), its
        body chunk by chunk, its end. Returns the response's headers (for a retry's
        wait)."""
        state = committed
        starter = ToolStarter(self.tool_start)

        def push(events: list[TurnEvent]) -> None:
            nonlocal state
            ready = []
            for event in events:
                attempt.events.append(event)
                state = reduce(state, event)
                if event.kind == "error_reported":
                    attempt.errors.append(event)
                elif event.kind in ("block_delta", "block_started"):
                    attempt.output_seen = True
                # The budget counts what lesson 5's does: every piece of output a turn
                # event carries (`budget.delta_of`), a block's first text too.
                delta = delta_of(event)
                if delta is not None:
                    self._spent += token_estimate(delta.text)
                ready += [c for c in starter.feed(event) if isinstance(c, ToolCallReady)]
            # Tools start after the chunk's own events, which hold the sequence numbers
            # before theirs.
            started = self._start_or_hold(ready, runner)
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
                    why = (f"the budget of {self.budget_tokens} output tokens was reached "
                           f"(about {spent})")
                    self._halt(TurnEnd("budget_reached", "application_budget",
                                       {"by": why, "limit": "output_tokens",
                                        "budget": self.budget_tokens, "spent": spent}), why)
                    raise _Stopped

        def broke(message: str, code: str) -> bool:
            """The stream broke before its end: where it can be resumed, the attempt
            says so (its error stays on it) and the step stays open."""
            if resuming is None or not resuming.ready or attempt.number >= self.retry.attempts:
                return False
            attempt.errors.append(ErrorReported(
                self.seq.next, step=attempt.step, scope="transport", retryable=True,
                phase="after_output" if any(b.step == attempt.step for b in state.blocks)
                else "before_output", code=code,
                t=self._now(), message=message))
            attempt.resume_at = resuming.joiner.last
            return True

        loop = asyncio.get_running_loop()
        try:
            if attempt.resumed_after is not None and resuming is not None:
                method, url, body = "GET", resuming.url(self.base_url, self.params), None
            else:
                # A live turn always asks for the stream; the path's own query stays.
                method, url = "POST", request_url(self.base_url, self.wire, request, self.params)
                body = request_body(self.wire, request)
            async with asyncio.timeout_at(_after(loop, self.headers_s)) as clock, \
                    client.stream(method, url, json=body,
                                  headers={**_IDENTITY, **self.headers}) as response:
                attempt.status = response.status_code
                # The headers are in; what is left of the body must move on.
                clock.reschedule(_after(loop, self.stall_s))
                if response.status_code >= 300 and attempt.resumed_after is not None:
                    text = (await response.aread()).decode("utf-8", "replace")[:2000]
                    push(stream.transport_error(
                        f"the resume request failed with HTTP {response.status_code}: {text}",
                        code="resume_refused", t=self._now()))
                    return dict(response.headers)
                if response.status_code >= 300:
                    push(stream.http_error(response.status_code, await response.aread()))
                    return dict(response.headers)
                refused = _refused(response)
                if refused is not None:
                    code, message = refused
                    push([ErrorReported(
                        self.seq(), step=attempt.step, scope="protocol", phase="before_output",
                        retryable=False, code=code, t=self._now(), message=message,
                        raw=(await response.aread()).decode("utf-8", "replace")[:2000])])
                    push(stream.finish())
                    return dict(response.headers)
                clock.reschedule(None)
                gave_up = await self._body(response, stream, attempt, start, push, resuming)
                if gave_up is not None:
                    if not broke(gave_up, "stall"):
                        push(stream.transport_error(gave_up, code="stall", t=self._now()))
                    return None
                if not broke("the body ended before the wire's end", "cut"):
                    push(stream.finish())
                return dict(response.headers)
        except _Stopped:
            return None
        except TimeoutError:
            waited = "response headers" if attempt.status is None else "response body"
            limit = self.headers_s if attempt.status is None else self.stall_s
            message = (f"no {waited} within {limit:g} s: the server stalled; the request "
                       "was abandoned")
            if not broke(message, "stall"):
                push(stream.transport_error(message, code="stall", t=self._now()))
        except httpx.TransportError as exc:
            message = f"the connection broke: {type(exc).__name__}: {exc}".rstrip(": ")
            if not broke(message, "transport"):
                push(stream.transport_error(message, t=self._now()))
        except httpx.DecodingError as exc:
            push(stream.transport_error(
                f"the body's content encoding did not decode: {exc}", code="decoding",
                t=self._now()))
        return None

    async def _body(self, response: httpx.Response, stream: TurnStream, attempt: Attempt,
                    start: float, push: Callable[[list[TurnEvent]], None],
                    resuming: Resuming | None = None) -> str | None:
        """Feed the body chunk by chunk (decoded, if the server encoded it anyway) until
        it ends (None) or no progress came in time (why the read gave up)."""
        loop = asyncio.get_running_loop()
        progress = Progress(self.wire, self.stall_s, loop.time())
        chunks = response.aiter_bytes()
        pending: asyncio.Future | None = None
        try:
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(anext(chunks))
                due = progress.due()
                timeout = None if due is None else max(0.0, due - loop.time())
                done, _ = await asyncio.wait({pending}, timeout=timeout)
                if not done:
                    why = progress.expired(loop.time())
                    if why is not None:
                        return why
                    continue
                try:
                    chunk = pending.result()
                except StopAsyncIteration:
                    return None
                finally:
                    pending = None
                if attempt.first_byte is None:
                    attempt.first_byte = self._now() - start
                batches = stream.feed_batches(chunk, self._now())
                seen = [wire for wire, _ in batches if wire is not None]
                progress.saw(seen, loop.time())
                for wire in seen if resuming is not None else ():
                    resuming.saw(wire)
                push([event for _, events in batches for event in events])
        finally:
            if pending is not None:
                pending.cancel()
                await asyncio.wait({pending})
            await chunks.aclose()

    async def _close_cancelled(self, step: int, attempt: Attempt,
                               runner: ToolRunner) -> None:
        """Keep what arrived, close what is open, interrupt what runs."""
        self._commit(attempt)
        t = self._now()
        if not any(e.kind == "step_started" and e.step == step for e in self.events):
            # Stopped before the step's first byte: the step still begins before it ends.
            self.emit([StepStarted(self.seq(), step=step, wire=self.wire, t=t)])
        closing = closing_events(self.state, f"the turn stopped: {self._stop}", t=t,
                                 seq=self.seq)
        self.emit(closing)
        self.emit(await runner.interrupt(t, f"the turn stopped: {self._stop}"))
        if not any(e.kind == "step_finished" and e.step == step for e in attempt.events):
            self.emit([StepFinished(self.seq(), step=step, ended="cancelled", t=t)])

    async def _pause(self, seconds: float) -> bool:
        """Wait before a retry; False when the turn was stopped meanwhile."""
        if self._stop is None:
            self._waiting_on = asyncio.ensure_future(asyncio.sleep(seconds))
            try:
                await self._waiting_on
            except asyncio.CancelledError:
                if self._stop is None:
                    raise
            finally:
                self._waiting_on = None
        return self._stop is None

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
            self.emit(await runner.interrupt(self._now(), f"the turn stopped: {self._stop}"))
        else:
            self.emit(runner.finished())

    # -- the tools ---------------------------------------------------------------------

    def _start_or_hold(self, ready: list[ToolCallReady], runner: ToolRunner
                       ) -> list[TurnEvent]:
        """Start each ready call, or hold it where the approval hook says so."""
        out: list[TurnEvent] = []
        for call in ready:
            if self.approve is not None and not self.approve(call):
                out.append(ToolCallHeld(self.seq(), block=call.block, call_id=call.call_id,
                                        name=call.name, reason="held for approval",
                                        t=self._now()))
            else:
                out.append(runner.start(call, self._now()))
        return out

    def _not_started(self, step: int) -> list[ToolCallReady]:
        """The step's ready calls of the application that neither started nor were held
        while it streamed (the ``moved_on`` rule leaves those after a fallback)."""
        waiting = {b.id for b in self.state.calls
                   if b.step == step and not b.server_side and b.call_state == "complete"
                   and b.execution is None}
        return [e for e in self.events if isinstance(e, ToolCallReady) and e.block in waiting]

    # -- plumbing --------------------------------------------------------------------

    def _now(self) -> float:
        return (asyncio.get_running_loop().time() - self._t0) * 1000.0

    def now_ms(self) -> float:
        """The time on the turn's own clock (ms since it started): the clock its events'
        times are on, so a view can tell how long the wire has been silent."""
        return self._now()

    def emit(self, events: Iterable[TurnEvent]) -> None:
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


def _after(loop: asyncio.AbstractEventLoop, seconds: float | None) -> float | None:
    """The loop time `seconds` from now (None: never), for `asyncio.timeout_at`."""
    return None if seconds is None else loop.time() + seconds


def _refused(response: httpx.Response) -> tuple[str, str] | None:
    """Why a 2xx response's body cannot be fed as a stream (its code and message), or
    None when it can."""
    kind = response.headers.get("content-type", "")
    if kind.split(";")[0].strip() == "application/json":
        # A whole response where a stream was asked for: nothing to feed.
        return "not_an_event_stream", f"the server answered {kind!r}, not an event stream"
    coding = unreadable_encoding(response.headers.get("content-encoding", ""))
    if coding is not None:
        return ("unreadable_encoding",
                f"the body is encoded as {coding!r}, which this loop cannot decode")
    return None


async def run_live(base_url: str, wire: str, request: dict[str, Any],
                   tools: Iterable[LiveTool] = (), **options: Any) -> LiveResult:
    """Run one live turn to its end (`LiveTurn` with `options`)."""
    return await LiveTurn(base_url, wire, request, tools, **options).run()
