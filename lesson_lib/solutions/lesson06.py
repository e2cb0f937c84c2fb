"""Solutions to lesson 6's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

import asyncio

import httpx
from markdown_it import MarkdownIt

from lesson_lib.live.loop import PATHS
from lesson_lib.turn import TurnStream
from lesson_lib.turn.adapters import Counter
from lesson_lib.turn.closing import closing_events
from lesson_lib.turn.events import (
    StepFinished,
    StepStarted,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnFinished,
    TurnStarted,
)
from lesson_lib.turn.next_request import next_request
from lesson_lib.turn.outcome import outcome_of_step
from lesson_lib.turn.reduce import TurnState, initial, reduce

_BLOCKS = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("reference")


def split_blocks(text: str) -> tuple[list[str], str]:
    """The Markdown text so far as (settled blocks, tail).

    Only complete lines decide: the line still arriving may yet turn into
    anything. Among them, markdown-it's block parser says where each
    top-level block starts (``token.map``); a later line can only continue
    the last block or start a new one, so every block but the last is
    settled. The settled blocks and the tail together are the whole text.
    """
    complete = text[:text.rfind("\n") + 1]
    tokens: list = []
    _BLOCKS.block.parse(complete, _BLOCKS, {}, tokens)
    starts = [t.map[0] for t in tokens if t.level == 0 and t.nesting >= 0 and t.map]
    if len(starts) < 2:
        return [], text
    line_starts = [0]
    for line in complete.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    cuts = [0] + [line_starts[n] for n in starts[1:]]
    settled = [text[a:b] for a, b in zip(cuts, cuts[1:], strict=False)]
    return settled, text[cuts[-1]:]


async def live_turn(url: str, wire: str, request: dict, tools: dict,
                    stall_s: float = 1.0) -> TurnState:
    """An agent turn over HTTP: stream each step, start tools as their calls become
    ready, and go on with the next request until a step asks for no tool."""
    seq = Counter()
    state = reduce(initial(), TurnStarted(seq(), turn="turn"))
    outcome = "max_steps"
    async with httpx.AsyncClient(timeout=None) as client:
        for step in range(1, 6):
            stream = TurnStream(wire, request=request, step=step, seq=seq)
            running: dict = {}                       # block id -> (call, task)
            async with client.stream("POST", url + PATHS[wire], json=request) as response:
                if response.status_code >= 300:
                    events = stream.http_error(response.status_code, await response.aread())
                else:
                    chunks = response.aiter_raw()
                    while True:
                        try:
                            chunk = await asyncio.wait_for(anext(chunks), stall_s)
                        except StopAsyncIteration:   # the end: finish() says how it ended
                            events = stream.finish()
                            break
                        except TimeoutError:         # a stall: we abandon the read
                            events = stream.transport_error(f"no byte for {stall_s} s",
                                                            code="stall")
                            break
                        ready = []
                        for event in stream.feed(chunk):
                            state = reduce(state, event)
                            if event.kind == "tool_call_ready" and not event.server_side:
                                ready.append(event)
                        for call in ready:               # after the chunk's own events
                            task = asyncio.ensure_future(tools[call.name](call.input))
                            running[call.block] = (call, task)
                            state = reduce(state, ToolExecutionStarted(
                                seq(), block=call.block, call_id=call.call_id, name=call.name))
            for event in events:
                state = reduce(state, event)
            for block, (call, task) in running.items():
                try:
                    result, status = await task, "ok"
                except Exception as exc:
                    result, status = f"{type(exc).__name__}: {exc}", "error"
                state = reduce(state, ToolExecutionFinished(seq(), block=block,
                                                            call_id=call.call_id,
                                                            status=status, result=result))
            last = state.steps[-1]
            outcome = outcome_of_step(last.ended, last.finish.reason)
            if outcome is not None or last.finish.reason != "tool_calls":
                break
            request = next_request(state, request, step)
    return reduce(state, TurnFinished(seq(), outcome=outcome or "completed"))


async def live_turn_with_stop(url: str, wire: str, request: dict, tools: dict,
                              stop: asyncio.Event) -> TurnState:
    """One step of a live turn that `stop` can interrupt at any moment: the read and
    every running tool are cancelled, open blocks end, and what arrived is kept."""
    seq = Counter()
    state = reduce(initial(), TurnStarted(seq(), turn="turn"))
    stream = TurnStream(wire, request=request, seq=seq)
    running: dict = {}                               # block id -> (call, task)

    async def read() -> None:
        nonlocal state
        async with httpx.AsyncClient(timeout=None) as client:
            async with client.stream("POST", url + PATHS[wire], json=request) as response:
                async for chunk in response.aiter_raw():
                    ready = []
                    for event in stream.feed(chunk):
                        state = reduce(state, event)
                        if event.kind == "tool_call_ready" and not event.server_side:
                            ready.append(event)
                    for call in ready:
                        task = asyncio.ensure_future(tools[call.name](call.input))
                        running[call.block] = (call, task)
                        state = reduce(state, ToolExecutionStarted(
                            seq(), block=call.block, call_id=call.call_id, name=call.name))
        for event in stream.finish():
            state = reduce(state, event)
        await asyncio.gather(*(task for _, task in running.values()), return_exceptions=True)

    reader = asyncio.ensure_future(read())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait([reader, stopping], return_when=asyncio.FIRST_COMPLETED)
    stopped = stop.is_set()
    stopping.cancel()
    reader.cancel()
    for _, task in running.values():
        task.cancel()
    await asyncio.gather(reader, *(task for _, task in running.values()),
                         return_exceptions=True)
    for block, (call, task) in running.items():
        if task.cancelled():
            status, result = "interrupted", None
        elif task.exception() is not None:
            status, result = "error", str(task.exception())
        else:
            status, result = "ok", task.result()
        state = reduce(state, ToolExecutionFinished(seq(), block=block, call_id=call.call_id,
                                                    status=status, result=result))
    if not stopped:
        last = state.steps[-1]
        outcome = outcome_of_step(last.ended, last.finish.reason)
        return reduce(state, TurnFinished(seq(), outcome=outcome or "completed"))
    for event in closing_events(state, "stopped", seq=seq):   # open blocks end, cut
        state = reduce(state, event)
    if not state.steps:                  # stopped before the first byte: no step began
        state = reduce(state, StepStarted(seq(), step=1, wire=wire))
    if not state.steps[-1].finished:
        state = reduce(state, StepFinished(seq(), step=1, ended="cancelled"))
    return reduce(state, TurnFinished(seq(), outcome="cancelled"))
