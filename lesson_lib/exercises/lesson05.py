"""Checkers for lesson 5, "When the stream breaks".

1. `check_retry_action`: an error classified by its phase: ``retry`` (before
   any output, transient), ``not_plain_retry`` (transient, but output already
   arrived) or ``no_retry`` (the request itself is wrong); graded against
   `lesson_lib.breaks.retry.classify` on the corpus's failures and a few hand-made ones.
2. `check_cancel_at`: the budget check that names the delta at which the
   output-token estimate reaches the budget, on deltas from Anthropic Messages, OpenAI
   Responses and OpenAI Chat.
3. `check_join_resumed`: a background-mode Responses stream joined to its
   resumed continuation by sequence number, with no delta missing or twice.

Every case is built from the corpus or written here: offline, and the same
verdict every time.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..breaks import budget, resume, retry
from ..wires import responses
from ..wires.wire_events import WireEvent, parse_all
from . import Case, Verdict, corpus_capture, exercise, grade

RETRY = exercise("05", 1, "Retry, or not a plain retry?",
                 solution="lesson_lib.solutions.lesson05:retry_action")
CANCEL = exercise("05", 2, "Cancel at the delta that crosses the budget",
                  solution="lesson_lib.solutions.lesson05:cancel_at")
JOIN = exercise("05", 3, "Join a resumed stream by sequence number",
                solution="lesson_lib.solutions.lesson05:join_resumed")

ACTIONS = (retry.RETRY, retry.NOT_PLAIN_RETRY, retry.NO_RETRY)


def _error(wire: str, status: int | None, error_type: str | None, output: bool) -> dict:
    return {"wire": wire, "status": status, "error_type": error_type, "output_arrived": output}


RETRY_CASES: dict[str, dict] = {
    "anthropic-messages/http-429-rate-limited: HTTP 429 before the stream":
        _error("anthropic-messages", 429, "rate_limit_error", False),
    "anthropic-messages/overloaded-first: overloaded_error as the first event":
        _error("anthropic-messages", 200, "overloaded_error", False),
    "anthropic-messages: overloaded_error after text":
        _error("anthropic-messages", 200, "overloaded_error", True),
    "anthropic-messages: HTTP 529 before the stream":
        _error("anthropic-messages", 529, "overloaded_error", False),
    "anthropic-messages: HTTP 400 invalid_request_error":
        _error("anthropic-messages", 400, "invalid_request_error", False),
    "openai-responses/http-429-retry-after: HTTP 429 before the stream":
        _error("openai-responses", 429, "rate_limit_exceeded", False),
    "openai-responses: response.failed with server_error after text":
        _error("openai-responses", 200, "server_error", True),
    "openai-responses: HTTP 401 invalid_api_key":
        _error("openai-responses", 401, "invalid_api_key", False),
    "openai-chat: error payload with server_error mid-stream":
        _error("openai-chat", 200, "server_error", True),
    "openai-chat: HTTP 503 before the stream":
        _error("openai-chat", 503, None, False),
    "openai-chat: context_length_exceeded before the stream":
        _error("openai-chat", 400, "context_length_exceeded", False),
}


def expected_action(error: dict) -> str:
    """The course's verdict on one error."""
    return retry.classify(wire=error["wire"], status=error["status"],
                          error_type=error["error_type"],
                          output_arrived=error["output_arrived"]).action


def _explain_action(error: dict) -> Callable[[str, Any], str | None]:
    def explain(expected: str, got: Any) -> str | None:
        if got not in ACTIONS:
            return f"return one of {', '.join(map(repr, ACTIONS))}, not {got!r}"
        if got == expected:
            return None
        why = retry.classify(wire=error["wire"], status=error["status"],
                             error_type=error["error_type"],
                             output_arrived=error["output_arrived"]).reason
        return f"expected {expected!r}, got {got!r}: {why}"
    return explain


def check_retry_action(fn) -> Verdict:
    """Grade ``fn(error) -> action`` on the corpus's failures and hand-made ones."""
    cases = [Case(label, (dict(error),), expected_action(error), _explain_action(error))
             for label, error in RETRY_CASES.items()]
    return grade(RETRY, fn, cases)


# -- exercise 2: the budget check ---------------------------------------------------------

CANCEL_CASES: tuple[tuple[str, int], ...] = (
    ("anthropic-messages/hello", 3),
    ("anthropic-messages/text-then-tool", 20),
    ("openai-responses/text", 5),
    ("openai-chat/text-usage", 4),
    ("openai-chat/text-usage", 10_000),
)
CANCEL_HAND_MADE: dict[str, tuple[list[str], int]] = {
    "hand-made: the first delta alone reaches the budget": (["abcdefghijkl", "x"], 3),
    "hand-made: reaching the budget exactly counts": (["abcd", "abcd", "abcd"], 2),
    "hand-made: an empty delta adds nothing": (["", "", "abcde"], 2),
}


def delta_texts(key: str) -> list[str]:
    """The output deltas' characters of a corpus capture, in order."""
    capture = corpus_capture(key)
    return [d.text for d in budget.deltas(parse_all(capture.events), capture.wire or "")]


def expected_cancel(texts: list[str], max_tokens: int) -> int | None:
    """The course's answer: `lesson_lib.breaks.budget.first_crossing` on the output-token budget."""
    run = [budget.Delta(event=i, t=None, text=t) for i, t in enumerate(texts)]
    found = budget.first_crossing(run, budget.Budget(output_tokens=max_tokens))
    return None if found is None else found.delta


def _explain_cancel(texts: list[str], max_tokens: int) -> Callable[[Any, Any], str | None]:
    def explain(expected: int | None, got: Any) -> str | None:
        if got == expected and (got is None or type(got) is int):
            return None
        if got is not None and type(got) is not int:
            return f"return a delta's index (an int) or None, not {got!r}"
        totals = budget.running_estimate(
            [budget.Delta(event=i, t=None, text=t) for i, t in enumerate(texts)])
        if expected is None:
            return (f"expected None: the estimate only reaches {totals[-1] if totals else 0} "
                    f"of {max_tokens} tokens, got {got}")
        at = f"the estimate is {totals[expected]} tokens after delta {expected}"
        if got is None:
            return f"expected {expected}, got None: {at}, which reaches {max_tokens}"
        if got > expected:
            return f"expected {expected}, got {got}: {at}; stopping later streams too much"
        return (f"expected {expected}, got {got}: after delta {got} the estimate is only "
                f"{totals[got]} of {max_tokens}")
    return explain


def check_cancel_at(fn) -> Verdict:
    """Grade ``fn(texts, max_tokens) -> index or None`` on deltas from Anthropic Messages,
    OpenAI Responses and OpenAI Chat."""
    cases = []
    for key, limit in CANCEL_CASES:
        texts = delta_texts(key)
        cases.append(Case(f"{key}, budget {limit} tokens", (list(texts), limit),
                          expected_cancel(texts, limit), _explain_cancel(texts, limit)))
    for label, (texts, limit) in CANCEL_HAND_MADE.items():
        cases.append(Case(label, (list(texts), limit), expected_cancel(texts, limit),
                          _explain_cancel(texts, limit)))
    return grade(CANCEL, fn, cases)


# -- exercise 3: join a resumed stream ----------------------------------------------------


def payloads(key: str) -> list[dict]:
    """A capture's event payloads (the dicts exercise 3 takes)."""
    return [e.payload for e in parse_all(corpus_capture(key).events)
            if isinstance(e.payload, dict)]


def _events(items: list[dict]) -> list[WireEvent]:
    return [WireEvent(index=i, sse=None, type=p.get("type"), payload=p)
            for i, p in enumerate(items)]


def expected_join(first: list[dict], resumed: list[dict]) -> list[dict]:
    """The course's answer: `lesson_lib.breaks.resume.join`."""
    return [e.payload for e in resume.join(_events(first), _events(resumed)).events]


def _seq(events: list[Any]) -> list[Any]:
    return [e.get("sequence_number") if isinstance(e, dict) else e for e in events]


def _explain_join(expected: list[dict], got: Any) -> str | None:
    if not isinstance(got, list):
        return f"return a list of events, not {type(got).__name__}"
    if got == expected:
        return None
    want, have = _seq(expected), _seq(got)
    for i, (a, b) in enumerate(zip(want, have, strict=False)):
        if a != b:
            return f"event {i}: expected sequence_number {a}, got {b}"
        if expected[i] != got[i]:
            return f"event {i} (sequence_number {a}): its payload was changed"
    if len(have) > len(want):
        return (f"{len(have) - len(want)} event(s) too many, from sequence_number "
                f"{have[len(want)]}: an event the first stream delivered is shown twice")
    return (f"{len(want) - len(have)} event(s) missing, from sequence_number "
            f"{want[len(have)]}")


def _numbered(numbers: list[int | None]) -> list[dict]:
    return [{"type": responses.TEXT_DELTA, "delta": f"[{n}]"} if n is None else
            {"type": responses.TEXT_DELTA, "sequence_number": n, "delta": f"<{n}>"}
            for n in numbers]


JOIN_HAND_MADE: dict[str, tuple[list[dict], list[dict]]] = {
    "hand-made: the resumed stream repeats three events":
        (_numbered([0, 1, 2, 3, 4]), _numbered([2, 3, 4, 5, 6])),
    "hand-made: the resumed stream starts right after": (_numbered([0, 1]), _numbered([2, 3])),
    "hand-made: an event without a number is kept": (_numbered([0, 1]), _numbered([1, None, 2])),
}


def check_join_resumed(fn) -> Verdict:
    """Grade ``fn(first, resumed) -> events`` on the corpus's background pair and hand-made ones."""
    first, resumed = (payloads("openai-responses/background-cut"),
                      payloads("openai-responses/background-resumed"))
    pairs = {"openai-responses/background-cut + background-resumed": (first, resumed),
             **JOIN_HAND_MADE}
    cases = [Case(label, ([dict(e) for e in a], [dict(e) for e in b]), expected_join(a, b),
                  _explain_join) for label, (a, b) in pairs.items()]
    return grade(JOIN, fn, cases)


__all__ = ["check_cancel_at", "check_join_resumed", "check_retry_action", "delta_texts",
           "expected_action", "expected_cancel", "expected_join", "payloads"]
