"""Checkers for lesson 3, "Partial-JSON tool calls".

1. `check_settled_keys`: after each fragment of a tool call's arguments, the
   top-level keys whose values can no longer change; graded against the
   course's parser on tool calls from Anthropic Messages, OpenAI Responses and
   OpenAI Chat (the wires of lessons 1 to 4) and a few hand-made ones (a number split between fragments, a quote and a brace inside a
   string, a nested object, a key split in two).
2. `check_scan_string`: the string-scanning step of the parser: from a
   position inside a JSON string, the end of the run of plain characters and
   what stopped it (``quote``, ``backslash`` or ``end``).
3. `check_call_state`: a tool call's state from its wire events (fragments,
   then the wire's end or nothing): ``complete``, ``invalid`` or ``cut``.

Every case is built from the corpus or written here, so the checks run
offline and give the same verdict every time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from typing import Any

from ..accumulate import accumulator_for
from ..partial_json import PartialJSON, PartialJSONError
from ..tool_calls import ToolCall, ToolCallView
from ..wires.wire_events import parse_all
from . import Case, Verdict, corpus_capture, exercise, grade

SETTLED = exercise("03", 1, "Which keys are settled?",
                   solution="lesson_lib.solutions.lesson03:settled_keys")
SCAN = exercise("03", 2, "Scan a run of string text",
                solution="lesson_lib.solutions.lesson03:scan_string")
STATE = exercise("03", 3, "Complete, invalid or cut?",
                 solution="lesson_lib.solutions.lesson03:call_state")



@cache
def _calls(key: str) -> tuple[ToolCallView, ...]:
    capture = corpus_capture(key)
    acc = accumulator_for(capture.wire)
    for event in parse_all(capture.events):
        acc.feed(event)
    acc.finish(capture.sse_diagnostics)
    return tuple(acc.tool_calls())


def fragments(capture: str, call: int = 0) -> list[str]:
    """The argument fragments of a capture's `call`-th tool call, as they arrived."""
    return _calls(capture)[call].raw_fragments()


def call_events(capture: str, call: int = 0) -> list[dict]:
    """A tool call's wire events as exercise 3 takes them: one ``{"type": "fragment",
    "text": ...}`` per fragment, then ``{"type": "end"}`` if the wire ended the call."""
    view = _calls(capture)[call]
    events = [{"type": "fragment", "text": f} for f in view.raw_fragments()]
    if view.ended and not view.was_cut:
        events.append({"type": "end"})
    return events


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _keys(keys: Any) -> str:
    return "{" + ", ".join(repr(k) for k in sorted(keys, key=str)) + "}" if keys else "none"


# -- exercise 1: settled keys --------------------------------------------------------------

SETTLED_CALLS = (
    ("anthropic-messages/text-then-tool", 0),
    ("anthropic-messages/weather-turn-step1", 1),
    ("openai-responses/function-call", 0),
    ("openai-responses/parallel-function-calls", 1),
    ("openai-chat/parallel-tools-interleaved", 1),
    ("openai-responses/structured-output", 0),
    ("anthropic-messages/max-tokens-in-tool-json", 0),
)

SETTLED_HAND_MADE = {
    "hand-made: a number split between fragments": ['{"count": 1', "2", ', "ok": true', "}"],
    "hand-made: a quote and a brace inside a string":
        ['{"q": "say \\"hi', '\\" {not: a key}"', ', "n": null}'],
    "hand-made: nested values settle when they close":
        ['{"a": {"b": 1}', ', "c": [1, {"d": 2}', "]}"],
    "hand-made: a key split in two": ['{"ci', 'ty": "Par', 'is"', "}"],
}


def expected_settled(pieces: list[str]) -> list[set]:
    """After each fragment, the settled top-level keys, from the course's parser."""
    parser = PartialJSON()
    out = []
    for piece in pieces:
        try:
            parser.feed(piece)
        except PartialJSONError:
            pass
        value = parser.value
        keys = value if type(value) is dict else ()
        out.append({k for k in keys if (k,) in parser.settled})
    return out


_PENDING = "a number or literal settles only at the delimiter after it"


def _why(value: Any, key: Any, settled: bool, text: str) -> str:
    """Why a key is (or is not yet) settled, in the learner's terms (`text`: so far)."""
    if type(value) is not dict or key not in value:
        name = re.escape(json.dumps(key, ensure_ascii=False)) if isinstance(key, str) else ""
        if name and re.search(name + r"\s*:\s*[-+.0-9eEa-z]+$", text):
            return f"{_PENDING} (its digits or letters so far may still grow)"
        return "its value has not even begun (a key appears when its value begins)"
    inner = value[key]
    if settled:
        if isinstance(inner, str):
            return "its string's closing quote has arrived"
        if isinstance(inner, (dict, list)):
            return "its value closed"
        return "the delimiter after its value has arrived"
    if isinstance(inner, str):
        return "its string's closing quote has not arrived yet"
    if isinstance(inner, (dict, list)):
        return "its value is still open"
    return _PENDING


def _explain_settled(pieces: list[str]) -> Callable[[list, Any], str | None]:
    def explain(expected: list[set], got: Any) -> str | None:
        if not isinstance(got, list):
            return f"return a list (one set per fragment), not a {type(got).__name__}"
        if len(got) != len(expected):
            return f"return one set per fragment: {len(expected)} fragments, {len(got)} sets"
        parser = PartialJSON()
        so_far = ""
        for i, (want, have) in enumerate(zip(expected, got, strict=True)):
            so_far += pieces[i]
            try:
                parser.feed(pieces[i])
            except PartialJSONError:
                pass
            try:
                have_set = set(have)
            except TypeError:
                return f"after fragment {i}: expected a set of keys, got {_short(have)}"
            if have_set == want:
                continue
            where = (f"after fragment {i} ({pieces[i]!r}; the text so far ends with "
                     f"{so_far[-40:]!r})")
            missing, extra = want - have_set, have_set - want
            value = parser.value
            if missing:
                key = sorted(missing, key=str)[0]
                return (f"{where}: expected settled {_keys(want)}, got {_keys(have_set)}: "
                        f"{key!r} is settled: {_why(value, key, True, so_far)}")
            key = sorted(extra, key=str)[0]
            return (f"{where}: expected settled {_keys(want)}, got {_keys(have_set)}: "
                    f"{key!r} is not settled yet: {_why(value, key, False, so_far)}")
        return None
    return explain


def check_settled_keys(fn) -> Verdict:
    """Grade ``fn(fragments) -> list of sets`` on tool calls of every wire and hand-made ones."""
    cases = []
    for key, n in SETTLED_CALLS:
        pieces = fragments(key, n)
        cases.append(Case(f"{key}, call {_calls(key)[n].name}", (list(pieces),),
                          expected_settled(pieces), _explain_settled(pieces)))
    for label, pieces in SETTLED_HAND_MADE.items():
        cases.append(Case(label, (list(pieces),), expected_settled(pieces),
                          _explain_settled(pieces)))
    return grade(SETTLED, fn, cases)


# -- exercise 2: the string-scanning step ---------------------------------------------------

SCAN_CASES = (
    ("plain text to the end of the fragment", "Paris, Fran", 0),
    ("stops at the closing quote", 'Paris", "unit": "c', 0),
    ("starts in the middle", '{"city": "Lyon", "n": 1}', 10),
    ("stops at a backslash", 'say \\"hi\\"', 0),
    ("after an escape, from the next character", 'say \\"hi\\" now"', 6),
    ("a quote before the start is not looked at", 'ab"cd', 3),
    ("an empty run: the start is a quote", 'x"', 1),
    ("the start is the end of the fragment", "abc", 3),
    ("non-ASCII text is plain text", 'naïve café — ✓"', 0),
    ("a backslash as the last character", "C:\\", 0),
    ("a long run", "lorem ipsum " * 500 + '"', 0),
)


def expected_scan(text: str, start: int) -> tuple[int, str]:
    """The end of the plain run from `start`, and what stopped it."""
    quote, backslash = text.find('"', start), text.find("\\", start)
    found = [(i, stop) for i, stop in ((quote, "quote"), (backslash, "backslash")) if i >= 0]
    return min(found) if found else (len(text), "end")


def _explain_scan(text: str, start: int) -> Callable[[tuple, Any], str | None]:
    def explain(expected: tuple[int, str], got: Any) -> str | None:
        shown = _short(text, 50)
        if (not isinstance(got, (tuple, list)) or len(got) != 2
                or not isinstance(got[0], int) or isinstance(got[0], bool)):
            return f"return a pair (end index, stop word), not {_short(got)}"
        end, stop = got
        if (end, stop) == tuple(expected):
            return None
        call = f"scan_string({shown}, {start}): expected {tuple(expected)!r}, got {(end, stop)!r}"
        if end < start:
            return f"{call}: the run begins at `start`; nothing before it is looked at"
        if stop not in ("quote", "backslash", "end"):
            return f"{call}: the stop word is one of 'quote', 'backslash', 'end'"
        what = {"quote": 'the quote " at', "backslash": "the backslash at",
                "end": "the end of the fragment at"}[expected[1]]
        if stop != expected[1] and end > expected[0]:
            missed = ("; a backslash ends the plain run too (the escape is the next step's job)"
                      if expected[1] == "backslash" else "")
            return f"{call}: your scan went past {what} {expected[0]}{missed}"
        if stop == expected[1] and abs(end - expected[0]) == 1:
            return f"{call}: off by one (the end is the index of the stopping character)"
        return f"{call}: the first character that is not plain text is {what} {expected[0]}"
    return explain


def check_scan_string(fn) -> Verdict:
    """Grade ``fn(text, start) -> (end, stop)`` on runs that end every way."""
    cases = [Case(label, (text, start), expected_scan(text, start), _explain_scan(text, start))
             for label, text, start in SCAN_CASES]
    return grade(SCAN, fn, cases)


# -- exercise 3: complete, invalid or cut ------------------------------------------------------

STATE_CALLS = (
    ("anthropic-messages/text-then-tool", 0),
    ("anthropic-messages/tool-no-params", 0),
    ("anthropic-messages/cut-in-tool-json", 0),
    ("anthropic-messages/max-tokens-in-tool-json", 0),
    ("openai-chat/parallel-tools-interleaved", 0),
    ("openai-chat/cut-in-arguments", 0),
    ("openai-responses/function-call", 0),
)


def _events(pieces: list[str], end: bool) -> list[dict]:
    return [{"type": "fragment", "text": p} for p in pieces] + ([{"type": "end"}] if end else [])


STATE_HAND_MADE = {
    "hand-made: two calls' arguments glued together, then the end":
        _events(['{"a": 1}', '{"b": 2}'], True),
    "hand-made: two calls' arguments glued together, then the stream stops":
        _events(['{"a": 1}', '{"b": 2'], False),
    "hand-made: text that parses, but the wire never ended the call":
        _events(['{"city": "Paris"', "}"], False),
    "hand-made: the end comes while a number is unfinished": _events(['{"n": 1.'], True),
    "hand-made: only whitespace, then the end": _events([" ", "\n"], True),
    "hand-made: NaN (json.loads accepts it; JSON does not)": _events(['{"x": NaN}'], True),
    "hand-made: a name twice (a settled value would change)":
        _events(['{"a": 1, "a": 2}'], True),
}


def expected_state(events: list[dict]) -> str:
    """The course's `ToolCall` fed these events: its state at the end."""
    call = ToolCall("f")
    for event in events:
        if event["type"] == "end":
            call.end()
            break
        call.feed(event["text"])
    call.cut()
    return call.state


def _explain_state(events: list[dict]) -> Callable[[str, Any], str | None]:
    def explain(expected: str, got: Any) -> str | None:
        if got not in ("complete", "invalid", "cut", "forming"):
            return f"return 'complete', 'invalid' or 'cut', not {_short(got)}"
        if got == expected:
            return None
        text = "".join(e.get("text", "") for e in events)
        ended = any(e["type"] == "end" for e in events)
        head = f"expected {expected!r}, got {got!r} (text {_short(text, 50)}, " + \
            ("then the wire's end" if ended else "and no end") + ")"
        if expected == "cut":
            return f"{head}: the wire never ended this call; whatever its text, it was cut"
        if expected == "complete":
            if not text.strip():
                return f"{head}: empty arguments (a tool with no parameters) mean {{}}"
            return f"{head}: the wire ended the call and its text is one valid JSON value"
        parser = PartialJSON()
        try:
            parser.feed(text)
        except PartialJSONError as error:
            return (f"{head}: the text can never be JSON, whatever comes next: "
                    f"{error.message} (at character {error.position})")
        try:
            parser.finish()
        except PartialJSONError as error:
            return f"{head}: the wire ended the call, but {error.message}"
        return f"{head}: the text is not strict JSON"
    return explain


def check_call_state(fn) -> Verdict:
    """Grade ``fn(events) -> state`` on calls from the corpus and hand-made ones."""
    cases = []
    for key, n in STATE_CALLS:
        events = call_events(key, n)
        cases.append(Case(f"{key}, call {_calls(key)[n].name}", (events,),
                          expected_state(events), _explain_state(events)))
    for label, events in STATE_HAND_MADE.items():
        cases.append(Case(label, (events,), expected_state(events), _explain_state(events)))
    return grade(STATE, fn, cases)


__all__ = ["call_events", "check_call_state", "check_scan_string",
           "check_settled_keys", "expected_scan", "expected_settled", "expected_state",
           "fragments"]
