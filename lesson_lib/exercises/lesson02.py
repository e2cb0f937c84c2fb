"""Checkers for lesson 2, "Block addressing".

1. `check_anthropic_content`: from an Anthropic stream's payloads, build the
   message's ``content`` list (text and tool_use blocks); graded against the
   course's accumulator, the first difference named by event and block.
2. `check_keyed_loop`: fix the naive handler's pending-tools loop so each
   event goes to the call its `key` names; graded against the tool calls in
   the accumulator's slots, on parallel calls of Anthropic Messages, OpenAI Responses
   and OpenAI Chat.
3. `check_trusted_at`: the index of the Chat chunk from which the tool calls
   can be trusted (None when the stream never gets there).

Every case is a capture from the corpus, so the checks run offline and give
the same verdict every time.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from ..accumulate import accumulate
from ..accumulate.history import History
from ..accumulate.labels import labels_for
from ..accumulate.naive_handler import interleave_tool_blocks, normalise, slot_calls
from ..capture.captures import Capture
from ..wires import anthropic
from ..wires.wire_events import DONE, parse_all
from . import Case, Verdict, corpus_capture, exercise, grade

CONTENT = exercise("02", 1, "Accumulate Anthropic content blocks by index",
                   solution="lesson_lib.solutions.lesson02:accumulate_content")
KEYED = exercise("02", 2, "Fix the pending-tools loop",
                 solution="lesson_lib.solutions.lesson02:keyed_loop")
TRUSTED = exercise("02", 3, "When can a Chat tool call be trusted?",
                   solution="lesson_lib.solutions.lesson02:trusted_at")



# A hand-made case for exercises 1 and 2: parallel-tools with its two tool blocks'
# deltas alternating. Servers send one block at a time; a solution that follows
# the addresses does not depend on it, one that follows "the latest" does.
HAND_MADE_FROM = "anthropic-messages/parallel-tools"
HAND_MADE_LABEL = "hand-made: parallel-tools with its two tool blocks interleaved"


@cache
def hand_made() -> Capture:
    """The hand-made interleaved stream the checkers add to the corpus cases."""
    return interleave_tool_blocks(corpus_capture(HAND_MADE_FROM))


def payloads(capture: Capture | str) -> list:
    """A stream's events as the exercises take them: each payload parsed from JSON,
    in order (pings included); Chat's end sentinel is the string ``"[DONE]"``."""
    cap = corpus_capture(capture) if isinstance(capture, str) else capture
    return [DONE if ev.type == DONE else ev.payload for ev in parse_all(cap.events)]


def _short(value: Any, limit: int = 90) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -- exercise 1: Anthropic content by index -----------------------------------------------

CONTENT_CAPTURES = (
    "anthropic-messages/hello",
    "anthropic-messages/html-in-text",
    "anthropic-messages/get-weather",
    "anthropic-messages/text-then-tool",
    "anthropic-messages/parallel-tools",
    "anthropic-messages/weather-turn-step1",
    "anthropic-messages/tool-no-params",
)


def expected_content(capture: Capture) -> list[dict]:
    """The accumulator's final content, cut down to what the exercise asks for."""
    out = []
    for block in accumulate(capture).final["content"]:
        if block["type"] == "text":
            out.append({"type": "text", "text": block["text"]})
        else:
            out.append({key: block[key] for key in ("type", "id", "name", "input")})
    return out


def _event_of(stream: list, kind: str, index: int) -> int | None:
    for i, p in enumerate(stream):
        if isinstance(p, dict) and p.get("type") == kind and p.get("index") == index:
            return i
    return None


def _text_difference(stream: list, index: int, want: str, have: Any) -> str:
    if not isinstance(have, str):
        start = _event_of(stream, anthropic.CONTENT_BLOCK_START, index)
        return (f"event {start}, block [{index}]: "
                f"expected text {_short(want)}, got {_short(have)}")
    so_far = ""
    for i, p in enumerate(stream):
        if not (isinstance(p, dict) and p.get("type") == anthropic.CONTENT_BLOCK_DELTA
                and p.get("index") == index):
            continue
        fragment = (p.get("delta") or {}).get("text", "")
        so_far += fragment
        if not have.startswith(so_far):
            found = have[len(so_far) - len(fragment):][: len(fragment) + 10]
            return (f"event {i}, block [{index}]: this text_delta adds {fragment!r}, "
                    f"but your text has {found!r} there (expected {len(want)} characters "
                    f"in all, you have {len(have)})")
    stop = _event_of(stream, anthropic.CONTENT_BLOCK_STOP, index)
    return (f"event {stop}, block [{index}]: the block's text ends here after {len(want)} "
            f"characters; yours goes on with {_short(have[len(want):], 50)}")


def _explain_content(stream: list) -> Callable[[list, Any], str | None]:
    def explain(expected: list, got: Any) -> str | None:
        if not isinstance(got, list):
            return f"return a list of content blocks (dicts), not a {type(got).__name__}"
        for i, want in enumerate(expected):
            start = _event_of(stream, anthropic.CONTENT_BLOCK_START, i)
            if i >= len(got):
                return (f"block [{i}] ({want['type']}, started at event {start}) is missing: "
                        f"your list has {len(got)} block{'s' if len(got) != 1 else ''}")
            have = got[i]
            if not isinstance(have, dict):
                return f"block [{i}]: expected a dict, got {_short(have)}"
            if have.get("type") != want["type"]:
                return (f"event {start}, block [{i}]: expected a {want['type']} block, "
                        f"got type {have.get('type')!r}")
            if want["type"] == "text":
                if have.get("text") != want["text"]:
                    return _text_difference(stream, i, want["text"], have.get("text"))
                continue
            for key in ("id", "name"):
                if have.get(key) != want[key]:
                    return (f"event {start}, block [{i}]: expected tool {key} {want[key]!r}, "
                            f"got {have.get(key)!r}")
            if have.get("input") != want["input"]:
                stop = _event_of(stream, anthropic.CONTENT_BLOCK_STOP, i)
                return (f"event {stop}, block [{i}]: expected tool input {want['input']!r}, "
                        f"got {_short(have.get('input'))}")
        if len(got) > len(expected):
            return (f"your list has {len(got)} blocks, the message has {len(expected)}: "
                    f"the extra one is {_short(got[len(expected)])}")
        return None
    return explain


def check_anthropic_content(fn) -> Verdict:
    """Grade ``fn(payloads) -> content list`` on Anthropic captures with text and tool_use."""
    cases = []
    for label, cap in [(key, corpus_capture(key)) for key in CONTENT_CAPTURES] + [
            (HAND_MADE_LABEL, hand_made())]:
        stream = payloads(cap)
        cases.append(Case(label, (payloads(cap),), expected_content(cap),
                          _explain_content(stream)))
    return grade(CONTENT, fn, cases)


# -- exercise 2: the keyed pending-tools loop ----------------------------------------------

KEYED_CAPTURES = (
    "anthropic-messages/parallel-tools",
    "openai-responses/parallel-function-calls",
    "openai-chat/weather-turn-step1",
    "openai-chat/parallel-tools-sequential",
    "openai-chat/parallel-tools-interleaved",
    "anthropic-messages/tool-no-params",
)


def _field(call: Any, *names: str) -> Any:
    for name in names:
        if isinstance(call, dict) and name in call:
            return call[name]
        if hasattr(call, name):
            return getattr(call, name)
    return None


def _explain_calls(expected: list, got: Any) -> str | None:
    if not isinstance(got, list):
        return f"return a list of executed calls (Executed), not a {type(got).__name__}"
    for i, want in enumerate(expected):
        if i >= len(got):
            missing = ", ".join(f"{c.name} ({c.call_id})" for c in expected[i:])
            return (f"the stream has {len(expected)} tool calls, your loop executed "
                    f"{len(got)}: never executed: {missing}")
        have = got[i]
        name, call_id = _field(have, "name"), _field(have, "call_id", "id")
        if (name, call_id) != (want.name, want.call_id):
            return (f"call {i}: expected {want.name} ({want.call_id}), "
                    f"got {name} ({call_id})")
        error = _field(have, "error")
        arguments = _field(have, "arguments")
        if error:
            hint = ""
            if (isinstance(arguments, str) and arguments.startswith(want.arguments)
                    and len(arguments) > len(want.arguments)):
                hint = ": fragments of another call got into its arguments"
            elif isinstance(arguments, str) and arguments != want.arguments:
                hint = ": its arguments are not the fragments addressed to it"
            elif not want.arguments.strip():
                hint = ": a tool with no parameters sends no arguments at all; that means {}"
            return (f"call {i} ({want.name}, {want.call_id}): expected input "
                    f"{_short(want.input)}, but parsing its arguments "
                    f"{_short(arguments, 70)} raised {error}{hint}")
        value = _field(have, "input")
        if value != want.input:
            return (f"call {i} ({want.name}, {want.call_id}): expected input "
                    f"{_short(want.input)}, got {_short(value)}")
    if len(got) > len(expected):
        extra = got[len(expected)]
        return (f"the stream has {len(expected)} tool calls, your loop executed {len(got)}: "
                f"the extra one is {_field(extra, 'name')} ({_field(extra, 'call_id', 'id')})")
    return None


def check_keyed_loop(fn) -> Verdict:
    """Grade ``fn(events: list[StreamEvent]) -> list[Executed]`` on parallel tool calls."""
    pairs = [(key, corpus_capture(key)) for key in KEYED_CAPTURES] + [(HAND_MADE_LABEL, hand_made())]
    cases = [Case(label, (normalise(cap),), slot_calls(cap), _explain_calls)
             for label, cap in pairs]
    return grade(KEYED, fn, cases)


# -- exercise 3: when can a Chat tool call be trusted? -------------------------------------

TRUSTED_CAPTURES = (
    "openai-chat/tool-call",
    "openai-chat/weather-turn-step1",
    "openai-chat/parallel-tools-sequential",
    "openai-chat/parallel-tools-interleaved",
    "openai-chat/index-reused-new-id",
    "openai-chat/cut-in-arguments",      # cut: never
    "openai-chat/finish-length",         # finish_reason length: never
    "openai-chat/error-mid-stream",      # an in-band error: never
    "openai-chat/text-usage",            # no tool call at all: never
)


def expected_trusted_at(capture: Capture) -> int | None:
    """From the accumulator's states: the first event after which choice 0 has
    finished with ``tool_calls`` (None when it never does)."""
    history = History(capture)
    for k in range(1, len(history) + 1):
        choices = history.accumulator_at(k).final()["choices"]
        if choices and choices[0]["finish_reason"] == "tool_calls":
            return k - 1
    return None


def _finish_of(capture: Capture) -> str:
    final = accumulate(capture)
    choices = (final.final or {}).get("choices") or []
    reason = choices[0]["finish_reason"] if choices else None
    codes = {d.code for d in final.diagnostics}
    if "in_band_error" in codes:
        return "it fails with an in-band error"
    if reason is None:
        return "it is cut before any finish_reason"
    return f"it finishes with {reason!r}"


def _explain_trusted(capture: Capture) -> Callable[[Any, Any], str | None]:
    labels = labels_for(capture)

    def what(i: int) -> str:
        return labels[i] if 0 <= i < len(labels) else "no event at all"

    def explain(expected: int | None, got: Any) -> str | None:
        if got is not None and (not isinstance(got, int) or isinstance(got, bool)):
            return f"return an event index (an int) or None, not {_short(got)}"
        if expected == got:
            return None
        if expected is None:
            return (f"the tool calls here can never be trusted ({_finish_of(capture)}): "
                    f"the answer is None; you returned event {got} ({what(got)})")
        if got is None:
            return (f"expected event {expected} ({what(expected)}); you returned None, "
                    "but this stream does complete its tool calls")
        if got < expected:
            return (f"expected event {expected} ({what(expected)}); at event {got} "
                    f"({what(got)}) nothing on the wire says the calls are complete yet")
        return (f"expected event {expected} ({what(expected)}); by event {got} ({what(got)}) "
                "the calls had already been complete for "
                f"{got - expected} event{'s' if got - expected != 1 else ''}")
    return explain


def check_trusted_at(fn) -> Verdict:
    """Grade ``fn(payloads) -> int | None`` on Chat captures that end in every way."""
    cases = []
    for key in TRUSTED_CAPTURES:
        cap = corpus_capture(key)
        cases.append(Case(key, (payloads(cap),), expected_trusted_at(cap),
                          _explain_trusted(cap)))
    return grade(TRUSTED, fn, cases)

from . import lesson02_more  # noqa: E402,F401  (registers exercises 4 to 6)
