"""Solutions to lesson 3's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

from lesson_lib.partial_json import PartialJSON, PartialJSONError


def settled_keys(fragments: list[str]) -> list[set[str]]:
    """After each fragment of a tool call's arguments, the top-level keys whose values
    can no longer change.

    The parser says what each fragment changed; a ``settle`` change at a path
    of length one is a top-level value becoming final (a string at its
    closing quote, a number or literal at the delimiter after it, an object
    or array when it closes). Settled keys stay settled.
    """
    parser = PartialJSON()
    settled: set[str] = set()
    after_each = []
    for fragment in fragments:
        for change in parser.feed(fragment):
            if change.op == "settle" and len(change.path) == 1:
                settled.add(change.path[0])
        after_each.append(set(settled))
    return after_each


def scan_string(text: str, start: int) -> tuple[int, str]:
    """From `start`, inside a JSON string, find the end of the run of plain characters.

    Returns ``(end, stop)``: `end` is the index of the first ``"`` or ``\\``
    at or after `start` (``stop`` is ``"quote"`` or ``"backslash"``), or
    ``len(text)`` when the fragment ends first (``stop`` is ``"end"``). The
    run ``text[start:end]`` is taken as it is, in one slice: nothing in it
    needs decoding.
    """
    i = start
    while i < len(text):
        char = text[i]
        if char == '"':
            return i, "quote"
        if char == "\\":
            return i, "backslash"
        i += 1
    return len(text), "end"


def call_state(events: list[dict]) -> str:
    """A tool call's state after all its wire events: complete, invalid or cut.

    Events are ``{"type": "fragment", "text": ...}`` and ``{"type": "end"}``
    (the wire's explicit end of the call); a list without an end is a stream
    that stopped first. Text that can never be JSON is invalid at once, even
    if the stream then stops; an ended call is checked strictly (empty text
    means ``{}``); a call the wire never ended is cut, whatever its text.
    """
    parser = PartialJSON()
    text = []
    ended = failed = False
    for event in events:
        if event["type"] == "end":
            ended = True
            break
        text.append(event["text"])
        if not failed:
            try:
                parser.feed(event["text"])
            except PartialJSONError:
                failed = True
    if failed:
        return "invalid"
    if not ended:
        return "cut"
    if not "".join(text).strip():
        return "complete"
    try:
        parser.finish()
    except PartialJSONError:
        return "invalid"
    return "complete"
