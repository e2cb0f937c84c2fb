"""Solutions to lesson 5's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

import math

from lesson_lib import wires


def retry_action(error: dict) -> str:
    """What to do about one error: ``"retry"``, ``"not_plain_retry"`` or ``"no_retry"``.

    `error` has ``wire``, ``status`` (the HTTP status, 200 for an in-band
    error), ``error_type`` (or None) and ``output_arrived``. A transient
    failure (a retryable status, or an error type the wire calls transient)
    is sent again as is only while nothing has arrived; once output was
    shown, a plain retry would show it twice and run its tools again.
    """
    status, kind = error["status"], error["error_type"]
    transient = (status is not None and status != 200 and wires.retryable_status(status)) or (
        kind is not None and wires.for_wire(error["wire"]).retryable_error(kind))
    if not transient:
        return "no_retry"
    return "not_plain_retry" if error["output_arrived"] else "retry"


def cancel_at(texts: list[str], max_tokens: int) -> int | None:
    """The index of the first delta at which the output-token estimate reaches `max_tokens`.

    Each delta counts ``ceil(len(text) / 4)`` tokens (an estimate: no
    tokenizer offline); the running total is checked after every delta, so
    the turn stops on the delta that crosses, not one later. None when the
    budget is never reached.
    """
    total = 0
    for i, text in enumerate(texts):
        total += math.ceil(len(text) / 4)
        if total >= max_tokens:
            return i
    return None


def join_resumed(first: list[dict], resumed: list[dict]) -> list[dict]:
    """The first stream's events, then the resumed stream's events not already received.

    Events are payloads with a ``sequence_number``. The resumed stream may
    repeat events the first one delivered (the resume point is the last
    number received whole); those are dropped, so no delta is shown twice.
    An event without a number is kept: nothing says it was seen.
    """
    numbers = [e["sequence_number"] for e in first if isinstance(e.get("sequence_number"), int)]
    last = max(numbers) if numbers else None
    out = list(first)
    for event in resumed:
        seq = event.get("sequence_number")
        if isinstance(seq, int) and last is not None and seq <= last:
            continue
        out.append(event)
        if isinstance(seq, int):
            last = seq
    return out
