"""Checkers for lesson 6, "The live turn".

1. `check_split_blocks`: the tail-block Markdown drawer. The learner's
   ``split_blocks(text) -> (settled, tail)`` is called on the text so far after
   every delta of several answers; a settled block that later changes (a
   flicker), one settled before the text decides it, or one kept in the tail
   after it can no longer change, is the first mismatch.
2. `check_live_turn`: the live loop. The learner's
   ``async live_turn(url, wire, request, tools) -> TurnState`` runs against the
   course's server on 127.0.0.1 on all three wires, then under ``cut``,
   ``error-after`` and ``stall``; its outcome and blocks are held to the
   course's own loop (`lesson_lib.live`) on the same server.
3. `check_stop`: Stop. ``async live_turn_with_stop(url, wire, request, tools,
   stop)`` is stopped while a tool runs: the tool must see its cancellation,
   the turn must end ``cancelled``, and what arrived must still be there.

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
from ..turn.order import check
from ..turn.run import turn_events
from ..turn.weather import result_for
from . import Case, Verdict, corpus_capture, exercise, grade

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


def _run(coro_fn: Callable[[], Any]) -> Any:
    """Run a coroutine to its end under the deadline, in a thread of its own (a notebook's
    kernel already runs an event loop)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(asyncio.wait_for(coro_fn(), DEADLINE_S))
        except BaseException as exc:    # reported to the learner, never raised here
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(DEADLINE_S + 5)
    if "error" in box:
        error = box["error"]
        if isinstance(error, TimeoutError):
            raise TimeoutError(f"your loop did not end within {DEADLINE_S:g} s") from None
        raise error
    return box.get("value")


async def _weather(arguments: Any) -> Any:
    await asyncio.sleep(0.01)
    return result_for(arguments.get("location")) if isinstance(arguments, dict) else None


def _shape(state: Any) -> tuple:
    return (state.outcome, [(b.step, b.kind, b.name, b.text if b.kind != "tool_call"
                             else b.input) for b in state.blocks])


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
                expected = _shape(course.state)
                try:
                    got = _run(lambda wire=wire, request=request: fn(
                        url, wire, request, {"get_weather": _weather}))
                except NotImplementedError:
                    got = NotImplemented
                except Exception as exc:
                    got = exc
                cases.append(Case(f"{wire}, {words}", (got,), expected, _explain_turn))
    return grade(LOOP, _replay, cases)


def _replay(got: Any) -> Any:
    """The learner's result, run earlier under the server; raised again here so `grade`
    reports it in its own words."""
    if got is NotImplemented:
        raise NotImplementedError
    if isinstance(got, BaseException):
        raise got
    return got


def check_stop(fn: Callable[..., Any]) -> Verdict:
    """Grade ``async fn(url, wire, request, tools, stop) -> TurnState``: Stop while a tool
    runs."""
    cases = []
    with serving(speed="instant") as url:
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

            try:
                got = _run(attempt)
            except NotImplementedError:
                got = NotImplemented
            except Exception as exc:
                got = exc
            cases.append(Case(f"{wire}, Stop while get_weather runs", (got,), None,
                              _explain_stop(seen)))
    return grade(STOP, _replay, cases)


def _explain_stop(seen: list[str]) -> Callable[[Any, Any], str | None]:
    def explain(expected: Any, got: Any) -> str | None:
        if not hasattr(got, "outcome"):
            return f"return the turn's final TurnState, not {type(got).__name__}"
        until_return = seen[:seen.index("returned")] if "returned" in seen else seen
        if "cancelled" not in until_return:
            return ("the running tool never saw asyncio.CancelledError: cancel every "
                    "running tool's task when Stop is pressed")
        if got.outcome != "cancelled":
            return f"your loop reported {got.outcome!r}; after Stop it must be 'cancelled'"
        problems = check(got.events)
        if problems:
            return f"the events break the turn's order: {problems[0].message}"
        if any(b.open for b in got.blocks):
            return "a block is still open: end every open block (complete=False)"
        if not any(b.kind == "tool_call" and b.input for b in got.blocks):
            return "what arrived before Stop is gone: keep every block that arrived"
        statuses = {b.execution_status for b in got.blocks if b.kind == "tool_call"}
        if "interrupted" not in statuses:
            return "the stopped tool's execution must end 'interrupted'"
        return None
    return explain
