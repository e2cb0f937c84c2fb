"""Checkers for lesson 1, "Reading the raw events".

1. `check_split_events`: split the text of a simple stream into
   ``(event name or None, data)`` pairs, the way a browser's EventSource would.
2. `check_first_text_ms`: from an event table, the arrival time of the first
   *text* fragment, whatever the wire calls it.
3. `check_where_it_died`: from an event table, the row where the response
   died: its first error, or the last row of a stream cut before its proper
   end; None for a stream that ended properly.

Each runs the learner's function on captures from Anthropic Messages, OpenAI
Responses and OpenAI Chat, the wires of lessons 1 to 4 (and a few small hand-made
streams), offline, and explains the first mismatch.
"""

from __future__ import annotations

import math
import numbers
from functools import cache
from typing import Any

import pandas as pd

from .. import wires
from ..capture.captures import Capture, from_bytes
from ..views.event_table import TEXT_DELTAS, event_table, time_to_first_token
from . import Case, Verdict, corpus_capture, exercise, grade

SPLIT = exercise("01", 1, "Split a stream into events",
                 solution="lesson_lib.solutions.lesson01:split_events")
FIRST_TEXT = exercise("01", 2, "Time to the first text fragment",
                      solution="lesson_lib.solutions.lesson01:first_text_ms")
DIED = exercise("01", 3, "Where did the response die?",
                solution="lesson_lib.solutions.lesson01:where_it_died")


# -- exercise 1 ----------------------------------------------------------------------

HANDMADE = {
    "a comment, a ping, and one event with two data lines":
        ': this line is a comment\n\n'
        'event: ping\ndata: {"type": "ping"}\n\n'
        'data: first line\ndata: second line\n\n',
    "no space after the colon":
        'event:message_stop\ndata:{"type":"message_stop"}\n\n',
    "two spaces after the colon: only the first is dropped":
        'data:  two\n\n',
    "a stream cut inside its last event":
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":0}\n\n'
        'event: content_block_delta\ndata: {"type":"content_blo',
}

SPLIT_CAPTURES = ("anthropic-messages/hello", "openai-responses/text", "openai-chat/text-usage",
                  "anthropic-messages/cut-in-tool-json")


def expected_events(capture: Capture) -> list[tuple[str | None, str]]:
    """What the course's WHATWG decoder dispatches: ``(event, data)`` per event."""
    return [(ev.event, ev.data) for ev in capture.decode()[0]]


def _explain_split(expected: list, got: Any) -> str | None:
    if not isinstance(got, list):
        return f"return a list of (event, data) pairs; you returned a {type(got).__name__}"
    for i, (want, have) in enumerate(zip(expected, got, strict=False)):
        if not isinstance(have, tuple | list) or len(have) != 2:
            return f"event {i}: expected a pair (event, data), got {have!r}"
        have = tuple(have)
        if have == want:
            continue
        if have[0] != want[0]:
            hint = (" (a block without an `event:` line has no name: use None)"
                    if want[0] is None else "")
            return f"event {i}: expected the name {want[0]!r}, got {have[0]!r}{hint}"
        return (f"event {i} ({want[0] or 'no name'}): expected data {_short(want[1])}, "
                f"got {_short(have[1])}" + _data_hint(want[1], have[1]))
    if len(got) > len(expected):
        return (f"you found {len(got)} events, the stream dispatches {len(expected)}: "
                f"the extra one starts with {tuple(got[len(expected)])!r}. A block is an event "
                "only when a blank line ends it and it has at least one data line.")
    if len(got) < len(expected):
        return (f"you found {len(got)} events, the stream has {len(expected)}: the first one "
                f"missing is event {len(got)}, {expected[len(got)]!r}")
    return None


def _data_hint(want: str, have: Any) -> str:
    if isinstance(have, str) and have == " " + want:
        return " (drop the one space after the colon)"
    if isinstance(have, str) and want.startswith(" ") and have == want.lstrip(" "):
        return (" (drop only the first space after the colon: the rest belongs to the data, "
                "so strip() is too much)")
    if isinstance(have, str) and "\n" in want and want.replace("\n", "") == have:
        return " (several data lines are joined with a newline)"
    return ""


def check_split_events(fn) -> Verdict:
    """Grade ``fn(text) -> [(event name or None, data), ...]`` on streams of Anthropic
    Messages, OpenAI Responses and OpenAI Chat."""
    cases = [Case(label, (text,), expected_events(from_bytes(text.encode())), _explain_split)
             for label, text in HANDMADE.items()]
    for key in SPLIT_CAPTURES:
        cap = corpus_capture(key)
        cases.append(Case(key, (cap.body.decode("utf-8"),), expected_events(cap),
                          _explain_split))
    return grade(SPLIT, fn, cases)


# -- exercise 2 ----------------------------------------------------------------------

FIRST_TEXT_CAPTURES = (
    "anthropic-messages/hello",
    "anthropic-messages/thinking-signature",     # thinking first: not text
    "openai-responses/text",
    "openai-responses/reasoning-summary",
    "openai-chat/text-usage",
    "openai-chat/tool-call",                     # no text at all: None
    "anthropic-messages/tool-no-params",         # no text at all: None
)


def _explain_first_text(expected: float | None, got: Any) -> str | None:
    if expected is None:
        if got is None:
            return None
        return (f"this stream has no text fragment, so the answer is None; you returned "
                f"{got!r}")
    if got is None or (isinstance(got, float) and math.isnan(got)):
        return f"expected {expected:g} ms, got {got!r}: this stream does have text"
    if not isinstance(got, numbers.Real) or isinstance(got, bool):
        return f"return a number of milliseconds (or None), not a {type(got).__name__}"
    if abs(float(got) - expected) <= 1e-6:
        return None
    return f"expected {expected:g} ms (the first text fragment), got {float(got):g} ms"


def check_first_text_ms(fn) -> Verdict:
    """Grade ``fn(table) -> float | None``: the first text fragment's arrival time (ms)."""
    cases = []
    for key in FIRST_TEXT_CAPTURES:
        table = _table(key)
        cases.append(Case(key, (table.copy(),), time_to_first_token(table, set(TEXT_DELTAS)),
                          _explain_first_text))
    return grade(FIRST_TEXT, fn, cases)


# -- exercise 3 ----------------------------------------------------------------------

DIED_CAPTURES = (
    "anthropic-messages/hello",                    # ended properly
    "anthropic-messages/overloaded-after-text",    # error event after text
    "anthropic-messages/cut-in-tool-json",         # cut: no message_stop
    "anthropic-messages/max-tokens-in-tool-json",  # max_tokens, but a proper end
    "openai-responses/error-then-failed",          # error, then response.failed
    "openai-responses/incomplete",                 # response.incomplete is a proper end
    "openai-chat/error-mid-stream",                # a Chat error payload
    "openai-chat/cut-in-arguments",                # cut: no [DONE]
    "openai-chat/finish-length",                   # finish_reason length, then [DONE]
)


def where_it_died_answer(table: pd.DataFrame, wire: str) -> tuple[int | None, str]:
    """The row where the stream died and why: its first error, or its last row when the
    wire's terminal event never came; (None, ...) when it ended properly."""
    errors = table.index[table["error"]]
    if len(errors):
        seq = int(table.loc[errors[0], "seq"])
        return seq, f"its first error row, type {table.loc[errors[0], 'type']!r}"
    terminal = wires.for_wire(wire).TERMINALS
    if len(table) and table["type"].iloc[-1] in terminal:
        return None, f"it ended properly with {table['type'].iloc[-1]}"
    if not len(table):
        return None, "no events at all"
    return int(table["seq"].iloc[-1]), (
        f"the last row: the stream was cut, no {' / '.join(sorted(terminal))} came")


def _explain_died(reason: str):
    def explain(expected: int | None, got: Any) -> str | None:
        if got is not None and isinstance(got, numbers.Integral) and not isinstance(got, bool):
            got = int(got)
        if got == expected and type(got) is type(expected):
            return None
        want = "None" if expected is None else f"row {expected}"
        return f"expected {want} ({reason}), got {got!r}"
    return explain


def check_where_it_died(fn) -> Verdict:
    """Grade ``fn(table) -> int | None``: the seq of the row where the response died."""
    cases = []
    for key in DIED_CAPTURES:
        table = _table(key)
        answer, reason = where_it_died_answer(table, corpus_capture(key).wire)
        cases.append(Case(key, (table.copy(),), answer, _explain_died(reason)))
    return grade(DIED, fn, cases)


# -- shared -----------------------------------------------------------------------------



@cache
def _table(key: str) -> pd.DataFrame:
    return event_table(corpus_capture(key))


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
