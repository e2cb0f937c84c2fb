"""Checkers for lesson 6, "The live turn".

1. `check_split_blocks`: the tail-block Markdown drawer. The learner's
   ``split_blocks(text) -> (settled, tail)`` is called on the text so far after
   every delta of several answers; a settled block that later changes (a
   flicker), one settled before the text decides it, or one kept in the tail
   after it can no longer change, is the first mismatch.
2. `check_live_turn`: the live loop. The learner's
   ``async live_turn(url, wire, request, tools) -> TurnState`` runs against the
   course's server on 127.0.0.1 on Anthropic Messages, OpenAI Responses and OpenAI
   Chat (`WIRES`), then under ``cut``,
   ``error-after`` and ``stall``; its outcome and blocks are held to the
   course's own loop (`lesson_lib.live`) on the same server. Then the lesson's
   point: on a paced capture, each tool whose call is ready well before the
   step's stream ends must start before the step's last byte reaches the loop
   (a loop that starts every tool after the stream ended gives the same
   blocks, and fails here).
3. `check_stop`: Stop. ``async live_turn_with_stop(url, wire, request, tools,
   stop)`` is stopped before the first byte, in the middle of the text, and
   while a tool runs: the tool must see its cancellation, the turn must end
   ``cancelled``, what arrived must still be there, and the events must keep
   the course's order (`lesson_lib.turn.order`).

Every run has a deadline, so a loop that never ends fails with a message
instead of hanging the kernel.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from ..cli.serve.background import serving
from ..draw import MarkdownBlocks
from ..live import LiveTool, LiveTurn, RetryPolicy
from ..turn.events import TurnStarted
from ..turn.order import check
from ..turn.outcome import outcome_of_step
from ..turn.reduce import initial, reduce
from ..turn.run import turn_events
from ..turn.stream import TurnStream
from ..turn.weather import result_for
from . import Case, Verdict, corpus_capture, exercise, grade
from .lesson06_relay import Relay

SPLIT = exercise("06", 1, "Settled Markdown blocks and the tail",
                 solution="lesson_lib.solutions.lesson06:split_blocks")
LOOP = exercise("06", 2, "The live loop", solution="lesson_lib.solutions.lesson06:live_turn")
STOP = exercise("06", 3, "Stop", solution="lesson_lib.solutions.lesson06:live_turn_with_stop")

WIRES = ("anthropic-messages", "openai-responses", "openai-chat")
DEADLINE_S = 30.0

# -- exercise 1: settled blocks ---------------------------------------------------------

HAND_MADE = {
    "a heading, a list and a paragraph":
        "# Weather\n\n- Paris: 18 °C, light rain\n- Tokyo: 24 °C, clear\n\nPack an umbrella.\n",
    "a code fence that stays open a while":
        "Run this:\n\n```python\nprint('a')\n\nprint('b')\n```\n\nThat prints two lines.\n",
    "a table that grows row by row":
        "| city | °C |\n|---|---|\n| Paris | 18 |\n| Tokyo | 24 |\n\nBoth mild.\n",
    "a paragraph that becomes a heading's neighbour":
        "Foo\n# bar\nbaz **bold** and *it*\n\n> quoted\n> still quoted\n\nend",
}


def _pieces(text: str, size: int = 7) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)]


def answer_deltas(key: str) -> list[str]:
    """The text deltas of a capture's answer, in order (every text block, joined)."""
    return [e.fragment for e in turn_events(corpus_capture(key))
            if e.kind == "block_delta" and e.channel == "text"]


def _reference(deltas: list[str]) -> list[list[str]]:
    blocks = MarkdownBlocks()
    settled: list[str] = []
    out = []
    for fragment in deltas:
        settled += [source for _, source in blocks.feed(fragment)]
        out.append(list(settled))
    return out


def _trace(fn: Callable, deltas: list[str]) -> list[Any]:
    text, out = "", []
    for fragment in deltas:
        text += fragment
        out.append((text, fn(text)))
    return out


def _explain_split(deltas: list[str]) -> Callable[[Any, Any], str | None]:
    def explain(expected: list[list[str]], got: list[Any]) -> str | None:
        before: list[str] = []
        for k, ((text, answer), want) in enumerate(zip(got, expected, strict=True), 1):
            if not (isinstance(answer, tuple) and len(answer) == 2
                    and isinstance(answer[0], list) and isinstance(answer[1], str)):
                return f"return (settled blocks: list of str, tail: str), not {answer!r:.60}"
            settled, tail = answer
            if "".join(settled) + tail != text:
                return (f"after delta {k}, the settled blocks and the tail are not the text "
                        f"so far: nothing may be lost or added")
            for i, block in enumerate(before):
                if i >= len(settled) or settled[i] != block:
                    return (f"after delta {k}, settled block {i} ({block!r:.40}) changed or "
                            "went away: a settled block must never change (a flicker)")
            if len(settled) > len(want):
                extra = settled[len(want)]
                return (f"after delta {k}, you settled {extra!r:.50} too early: the line "
                        "still arriving, or the next complete line, can still continue it")
            if settled != want:
                missing = want[len(settled)]
                return (f"after delta {k}, {missing!r:.50} can no longer change (the next "
                        "block has begun on a complete line), but you kept it in the tail")
            before = settled
        return None
    return explain


def check_split_blocks(fn: Callable[[str], tuple[list[str], str]]) -> Verdict:
    """Grade ``fn(text) -> (settled, tail)`` after every delta of several answers."""
    cases = []
    for key in ("anthropic-messages/weather-turn-step2", "openai-chat/weather-turn-step2"):
        deltas = answer_deltas(key)
        cases.append(Case(f"{key}, every delta", (deltas,), _reference(deltas),
                          _explain_split(deltas)))
    for label, text in HAND_MADE.items():
        deltas = _pieces(text)
        cases.append(Case(label, (deltas,), _reference(deltas), _explain_split(deltas)))
    return grade(SPLIT, lambda deltas: _trace(fn, deltas), cases)


# -- exercises 2 and 3: over a real socket ------------------------------------------------


def _run(coro_fn: Callable[[], Any], deadline: float = DEADLINE_S,
         late: str = "") -> Any:
    """Run a coroutine to its end under the deadline, in a thread of its own (a notebook's
    kernel already runs an event loop)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(asyncio.wait_for(coro_fn(), deadline))
        except BaseException as exc:    # reported to the learner, never raised here
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(deadline + 5)
    if "error" in box:
        error = box["error"]
        if isinstance(error, TimeoutError):
            raise TimeoutError(f"your loop did not end within {deadline:g} s{late}") from None
        raise error
    return box.get("value")


async def _weather(arguments: Any) -> Any:
    await asyncio.sleep(0.01)
    return result_for(arguments.get("location")) if isinstance(arguments, dict) else None


def _shape(state: Any) -> tuple:
    return (state.outcome, [(b.step, b.kind, b.name, b.text if b.kind != "tool_call"
                             else b.input) for b in state.blocks])


def _expected(state: Any) -> tuple:
    """What the learner's loop must give, from the course's: the same blocks, and the
    outcome. The exercise's loop has no stall watchdog of its own: a read it gives up on
    ends the step with a transport error, which `outcome_of_step` reads as the turn's end;
    the course's loop says its watchdog cancelled the turn (`live.patience.watchdog_end`)."""
    outcome, blocks = _shape(state)
    end = state.end
    if end is not None and end.reason == "watchdog" and state.steps:
        last = state.steps[-1]
        outcome = outcome_of_step(last.ended, last.finish.reason) or outcome
    return outcome, blocks


FAULTS = {"": "as recorded", "cut:2400": "cut after 2400 bytes",
          "error-after:4": "an error after 4 events", "stall:3000": "a 3 s stall"}
STALL_S = 1.0


def _explain_turn(expected: tuple, got: Any) -> str | None:
    if not hasattr(got, "outcome") or not hasattr(got, "blocks"):
        return f"return the turn's final TurnState, not {type(got).__name__}"
    if got.outcome is None:
        return "your turn never finished: end it with a TurnFinished event"
    problems = check(got.events)
    if problems:
        return f"the events break the turn's order: {problems[0].message}"
    outcome, blocks = _shape(got)
    if outcome != expected[0]:
        return f"your loop reported {outcome!r}; the right outcome is {expected[0]!r}"
    if blocks != expected[1]:
        for i, (a, b) in enumerate(zip(blocks, expected[1], strict=False)):
            if a != b:
                return f"block {i}: expected {b!r:.80}, got {a!r:.80}"
        return f"expected {len(expected[1])} blocks, got {len(blocks)}"
    return None


# The point of the loop: a tool starts when its call is ready, not when the stream ends.
PACED_KEY = "anthropic-messages/weather-turn-step1"
PACED_SPEED = 3.0
MIN_LEAD_S = 0.3        # only a call ready this long before the end is held to it


def ready_leads(key: str, speed: float) -> dict[str, float]:
    """For each tool call of a capture: how long (s, at `speed`) before the stream's last
    byte its call was ready, by the capture's own timing. Keyed by the call's location."""
    cap = corpus_capture(key)
    stream = TurnStream(cap.wire, request=cap.request)
    end = cap.chunk_times[-1]
    leads = {}
    for chunk, t in cap.chunks():
        for event in stream.feed(chunk, t):
            if event.kind == "tool_call_ready" and isinstance(event.input, dict):
                leads[str(event.input.get("location"))] = (end - t) / 1000 / speed
    return leads


async def _paced_run(fn: Callable[..., Any], url: str, wire: str, request: dict) -> Any:
    """The learner's loop through a relay that sees its socket; each tool's start noted."""
    loop = asyncio.get_running_loop()
    starts: dict[str, float] = {}

    async def timed(arguments: Any) -> Any:
        where = arguments.get("location") if isinstance(arguments, dict) else None
        starts.setdefault(str(where), loop.time())
        return await _weather(arguments)

    relay = Relay(url)
    async with relay as via:
        state = await fn(via, wire, request, {"get_weather": timed})
    first = relay.responses[0] if relay.responses else None
    return state, starts, first.last_byte if first else None


def _explain_early(expected: dict[str, float], got: Any) -> str | None:
    state, starts, last_byte = got
    if not hasattr(state, "outcome"):
        return f"return the turn's final TurnState, not {type(state).__name__}"
    if last_byte is None:
        return "step 1's stream never reached your loop: POST the request to url + PATHS[wire]"
    for where, lead in expected.items():
        if lead < MIN_LEAD_S:
            continue
        if where not in starts:
            return f"the tool for {where} never ran: start each ready call's tool"
        before = last_byte - starts[where]
        if before < lead / 2:
            when = (f"{-before:.2f} s after" if before < 0 else f"only {before:.2f} s before")
            return (f"the tool for {where} started {when} step 1's last byte, but its call "
                    f"was ready {lead:.2f} s before the stream ended: start each tool the "
                    "moment its call is ready (tool_call_ready), not after the stream ends")
    return None


def check_live_turn(fn: Callable[..., Any]) -> Verdict:
    """Grade ``async fn(url, wire, request, tools) -> TurnState`` against the server."""
    cases = []
    for fault, words in FAULTS.items():
        with serving(speed="instant", faults=[fault] if fault else ()) as url:
            for wire in (WIRES if not fault else ("anthropic-messages",)):
                request = corpus_capture(f"{wire}/weather-turn-step1").request
                course = _run(lambda wire=wire, request=request: LiveTurn(
                    url, wire, request, [LiveTool("get_weather", _weather)],
                    retry=RetryPolicy(attempts=1), stall_s=STALL_S).run())
                expected = _expected(course.state)
                got = _attempt(lambda wire=wire, request=request: fn(
                    url, wire, request, {"get_weather": _weather}))
                cases.append(Case(f"{wire}, {words}", (got,), expected, _explain_turn))
    wire = PACED_KEY.split("/")[0]
    with serving(speed=PACED_SPEED) as url:
        request = corpus_capture(PACED_KEY).request
        got = _attempt(lambda: _paced_run(fn, url, wire, request))
        cases.append(Case(f"{wire} at {PACED_SPEED:g}x the recorded pace, tools start early",
                          (got,), ready_leads(PACED_KEY, PACED_SPEED), _explain_early))
    return grade(LOOP, _replay, cases)


def _attempt(coro_fn: Callable[[], Any], **run: Any) -> Any:
    """The learner's coroutine run under the deadline: its result, or what it raised (kept
    for `_replay`, so that `grade` reports it at the case's turn)."""
    try:
        return _run(coro_fn, **run)
    except NotImplementedError:
        return NotImplemented
    except Exception as exc:
        return exc


def _replay(got: Any) -> Any:
    """The learner's result, run earlier under the server; raised again here so `grade`
    reports it in its own words."""
    if got is NotImplemented:
        raise NotImplementedError
    if isinstance(got, BaseException):
        raise got
    return got


# -- exercise 3: Stop ----------------------------------------------------------------------

STOP_DEADLINE_S = 10.0


def mid_block(key: str) -> tuple[int, str]:
    """The end of the first chunk after which a block of the capture has content and is
    still open, and that block's kind: Stop pressed there is Stop in the middle of the text
    (or of a tool call's arguments)."""
    cap = corpus_capture(key)
    stream = TurnStream(cap.wire, request=cap.request)
    state = reduce(initial(), TurnStarted(0, turn="turn"))
    for (chunk, t), end in zip(cap.chunks(), cap.chunk_ends, strict=True):
        for event in stream.feed(chunk, t):
            state = reduce(state, event)
        for block in state.blocks:
            if block.open and (block.text or block.raw_input):
                return end, block.kind
    raise ValueError(f"{key}: no block is open with content after any chunk")


def arrived_blocks(key: str, offset: int) -> list[tuple[str, str]]:
    """The blocks of a capture's first `offset` body bytes, as the turn's stations read
    them: (kind, the text or raw arguments that arrived)."""
    cap = corpus_capture(key)
    stream = TurnStream(cap.wire, request=cap.request)
    state = reduce(initial(), TurnStarted(0, turn="turn"))
    for event in stream.feed(cap.body[:offset]):
        state = reduce(state, event)
    return [_content(b) for b in state.blocks]


def _content(block: Any) -> tuple[str, str]:
    return (block.kind, block.text if block.kind != "tool_call" else block.raw_input or "")


async def _stopped_by_the_relay(fn: Callable[..., Any], url: str, wire: str, request: dict,
                                hold_after: int) -> Any:
    """Stop pressed when the relay has let `hold_after` body bytes through (0: none) and
    the stream has gone silent."""
    stop = asyncio.Event()
    async with Relay(url, hold_after=hold_after, on_hold=stop.set) as via:
        return await fn(via, wire, request, {"get_weather": _weather}, stop)


def check_stop(fn: Callable[..., Any]) -> Verdict:
    """Grade ``async fn(url, wire, request, tools, stop) -> TurnState``: Stop before the
    first byte, in the middle of the text, and while a tool runs."""
    cases = []
    late = " after Stop: when stop is set, cancel the read (and every running tool)"
    with serving(speed="instant") as url:
        for wire in WIRES:
            key = f"{wire}/weather-turn-step1"
            request = corpus_capture(key).request
            middle, kind = mid_block(key)
            inside = "the text" if kind == "text" else "a tool call's arguments"
            for words, offset in (("before the first byte", 0),
                                  (f"in the middle of {inside}", middle)):
                got = _attempt(lambda wire=wire, request=request, offset=offset:
                               _stopped_by_the_relay(fn, url, wire, request, offset),
                               deadline=STOP_DEADLINE_S, late=late)
                cases.append(Case(f"{wire}, Stop {words}", (got,),
                                  arrived_blocks(key, offset), _explain_stopped_stream))
        for wire in WIRES:
            request = corpus_capture(f"{wire}/weather-turn-step1").request
            seen: list[str] = []

            async def attempt(seen=seen, wire=wire, request=request) -> Any:
                stop = asyncio.Event()

                async def slow(arguments: Any) -> Any:
                    stop.set()                  # Stop is pressed while this tool runs
                    try:
                        await asyncio.sleep(DEADLINE_S * 2)
                    except asyncio.CancelledError:
                        seen.append("cancelled")
                        raise
                    return None

                state = await fn(url, wire, request, {"get_weather": slow}, stop)
                seen.append("returned")     # what the tool saw by then is what counts
                return state

            got = _attempt(attempt, deadline=STOP_DEADLINE_S, late=late)
            cases.append(Case(f"{wire}, Stop while get_weather runs", (got,), None,
                              _explain_stop(seen)))
    return grade(STOP, _replay, cases)


def _explain_cancelled(got: Any) -> str | None:
    """What every stopped turn must be: cancelled, in order, nothing left open."""
    if not hasattr(got, "outcome") or not hasattr(got, "events"):
        return f"return the turn's final TurnState, not {type(got).__name__}"
    if got.outcome != "cancelled":
        return f"your loop reported {got.outcome!r}; after Stop it must be 'cancelled'"
    problems = check(got.events)
    if problems:
        return f"the events break the turn's order: {problems[0].message}"
    if any(b.open for b in got.blocks):
        return "a block is still open: end every open block (complete=False)"
    return None


def _explain_stopped_stream(expected: list[tuple[str, str]], got: Any) -> str | None:
    problem = _explain_cancelled(got)
    if problem:
        return problem
    blocks = [_content(b) for b in got.blocks]
    for i, (want, have) in enumerate(zip(expected, blocks, strict=False)):
        if want != have:
            return (f"block {i}: {want[0]} {want[1]!r:.50} had arrived before Stop; your turn "
                    f"keeps {have[0]} {have[1]!r:.50}: keep every block as it arrived")
    if len(blocks) != len(expected):
        return (f"{len(expected)} blocks had arrived before Stop; your turn keeps "
                f"{len(blocks)}: keep every block that arrived, and nothing more")
    if expected and all(b.complete for b in got.blocks):
        return (f"a {expected[-1][0]} block was still arriving at Stop: it must end "
                "complete=False")
    forming = [b.id for b in got.blocks if b.kind == "tool_call" and b.call_state != "cut"
               and not b.complete]
    if forming:
        return (f"the call {forming[0]} was cut by Stop: say so with "
                "ToolCallInvalid(state='cut') (closing_events does it)")
    return None


def _explain_stop(seen: list[str]) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if not hasattr(got, "outcome"):
            return f"return the turn's final TurnState, not {type(got).__name__}"
        until_return = seen[:seen.index("returned")] if "returned" in seen else seen
        if "cancelled" not in until_return:
            return ("the running tool never saw asyncio.CancelledError: cancel every "
                    "running tool's task when Stop is pressed")
        problem = _explain_cancelled(got)
        if problem:
            return problem
        if not any(b.kind == "tool_call" and b.input for b in got.blocks):
            return "what arrived before Stop is gone: keep every block that arrived"
        statuses = {b.execution_status for b in got.blocks if b.kind == "tool_call"}
        if "interrupted" not in statuses:
            return "the stopped tool's execution must end 'interrupted'"
        return None
    return explain
