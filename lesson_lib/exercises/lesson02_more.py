"""More practice for lesson 2: read the wire directly for what the slots hold.

4. `check_responses_text`: from an OpenAI Responses stream's payloads, the
   text of each message item, keyed by its ``item_id``.
5. `check_thinking_blocks`: from an Anthropic stream's payloads, each
   thinking block as ``(index, thinking, signature)``; a redacted block as
   ``(index, None, None)``.
6. `check_citations`: from an Anthropic stream's payloads, every citation as
   ``(block index, cited_text)``, in arrival order.

Expected answers come from the course's accumulator on corpus captures.
"""

from __future__ import annotations

from typing import Any

from ..accumulate import accumulate
from ..wires.wire_events import DONE, parse_all
from . import Case, Verdict, corpus_capture, exercise, grade

RESPONSES_TEXT = exercise("02", 4, "Message text per item on the Responses wire",
                          solution="lesson_lib.solutions.lesson02_more:responses_text")
THINKING = exercise("02", 5, "Thinking blocks and their signatures",
                    solution="lesson_lib.solutions.lesson02_more:thinking_blocks")
CITATIONS = exercise("02", 6, "Citations, block by block",
                     solution="lesson_lib.solutions.lesson02_more:citations")

RESPONSES_CAPTURES = ("openai-responses/text", "openai-responses/web-search",
                      "openai-responses/reasoning-summary", "openai-responses/incomplete",
                      "openai-responses/error-then-failed",
                      "openai-responses/parallel-function-calls")
THINKING_CAPTURES = ("anthropic-messages/thinking-signature",
                     "anthropic-messages/redacted-thinking", "anthropic-messages/hello")
CITATION_CAPTURES = ("anthropic-messages/citations", "anthropic-messages/hello",
                     "anthropic-messages/thinking-signature")


def _payloads(key: str) -> list:
    """A capture's payloads, as lesson 2's exercises take them (`lesson02.payloads`)."""
    cap = corpus_capture(key)
    return [DONE if ev.type == DONE else ev.payload for ev in parse_all(cap.events)]


def _short(value: Any, limit: int = 70) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def expected_responses_text(key: str) -> dict[str, str]:
    """Each message item's text (its output_text parts joined), by item id."""
    final = accumulate(corpus_capture(key)).final or {}
    return {item["id"]: "".join(part.get("text", "") for part in item.get("content") or []
                                if part.get("type") == "output_text")
            for item in final.get("output") or [] if item.get("type") == "message"}


def _explain_text(expected: dict, got: Any) -> str | None:
    if not isinstance(got, dict):
        return f"return a dict of item_id -> text; you returned a {type(got).__name__}"
    if set(got) != set(expected):
        missing, extra = sorted(set(expected) - set(got)), sorted(set(got) - set(expected))
        return (f"expected the message items {sorted(expected)}, got {sorted(got)}"
                + (f" (missing {missing})" if missing else "")
                + (f"; {extra} is not a message item with output_text: only "
                   "response.output_text.delta events carry message text" if extra else ""))
    for item, want in expected.items():
        if got[item] != want:
            return (f"item {item}: expected text {_short(want)}, got {_short(got[item])}"
                    " (join the output_text deltas of that item_id, in order)")
    return None


def check_responses_text(fn) -> Verdict:
    """Grade ``fn(payloads) -> {item_id: text}`` on Responses streams."""
    return grade(RESPONSES_TEXT, fn, [Case(key, (_payloads(key),), expected_responses_text(key),
                                           _explain_text) for key in RESPONSES_CAPTURES])


def expected_thinking(key: str) -> list[tuple]:
    """``(index, thinking, signature)`` per thinking block; ``(index, None, None)`` redacted."""
    final = accumulate(corpus_capture(key)).final or {}
    out = []
    for index, block in enumerate(final.get("content") or []):
        if block.get("type") == "thinking":
            out.append((index, block.get("thinking", ""), block.get("signature") or None))
        elif block.get("type") == "redacted_thinking":
            out.append((index, None, None))
    return out


def _explain_blocks(what: str) -> Any:
    def explain(expected: list, got: Any) -> str | None:
        if not isinstance(got, list):
            return f"return a list of tuples; you returned a {type(got).__name__}"
        got = [tuple(x) if isinstance(x, list) else x for x in got]
        for i, (want, have) in enumerate(zip(expected, got, strict=False)):
            if have != want:
                hint = ""
                if (what == "thinking" and isinstance(have, tuple) and len(have) == 3
                        and have[:2] == want[:2]):
                    hint = (" (the signature arrives in its own signature_delta, after the "
                            "thinking text, before content_block_stop)")
                return f"{what} {i}: expected {_short(want)}, got {_short(have)}{hint}"
        if len(got) != len(expected):
            return f"expected {len(expected)} {what} entries, got {len(got)}"
        return None
    return explain


def check_thinking_blocks(fn) -> Verdict:
    """Grade ``fn(payloads) -> [(index, thinking, signature), ...]`` on Anthropic streams."""
    return grade(THINKING, fn, [Case(key, (_payloads(key),), expected_thinking(key),
                                     _explain_blocks("thinking")) for key in THINKING_CAPTURES])


def expected_citations(key: str) -> list[tuple[int, str]]:
    """Every citation as ``(block index, cited_text)``, block by block."""
    final = accumulate(corpus_capture(key)).final or {}
    return [(index, c.get("cited_text")) for index, block in enumerate(final.get("content") or [])
            for c in block.get("citations") or []]


def check_citations(fn) -> Verdict:
    """Grade ``fn(payloads) -> [(block index, cited_text), ...]`` on Anthropic streams."""
    return grade(CITATIONS, fn, [Case(key, (_payloads(key),), expected_citations(key),
                                      _explain_blocks("citation")) for key in CITATION_CAPTURES])
