"""The half-arrived tail, drawn for what it will be.

Only the tail of a text (its last open block and the line still arriving)
is drawn again after each delta, and it is drawn from a *held back* copy of
its source, so that nothing appears that a later delta takes away:

- a line that can only be the start of a code fence (one or two backticks
  or tildes) is not drawn yet; an open fence is drawn as code (markdown-it
  already draws an unclosed fence to the end of the text as code), without
  a last line that may be its closing fence arriving;
- a table's delimiter row still arriving (``|--``) is drawn whole, so the
  header is drawn as a table at once instead of a paragraph first;
- in the current paragraph, an unclosed inline code span is closed (it will
  be code); emphasis markers with no partner yet (``**bo``), or with a
  partner of another length (``**bold*``), or still growing at the very end,
  are not drawn: the words show plain, then emphasised once the closer
  arrives, and never emphasised first and plain after;
- a link or image still arriving (``[text](https://exa``) shows its text only.

None of this touches a settled block: a block is drawn from its own source
once it settles.
"""

from __future__ import annotations

import re

from .fences import may_close

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_FENCE_START = re.compile(r"^ {0,3}(`{1,2}|~{1,2})$")
_DELIMITER_ROW = re.compile(r"^ {0,3}\|?[ :\-|]*$")
_EMPHASIS = "*_~"
_FORMING_LINK = re.compile(r"\[([^\[\]]*)(\]\([^()\s]*)?$")


def hold_back(tail: str) -> str:
    """The tail's source as it should be drawn now (see the module)."""
    lines = tail.split("\n")
    fence, after_fence = _open_fence(lines)
    if fence is not None:                 # drawn as code up to the end: what it will be
        if len(lines) > 1 and may_close(lines[-1], fence[0]):
            return "\n".join(lines[:-1]) + "\n"     # the closing fence arriving
        return tail
    last = lines[-1]
    if _FENCE_START.match(last):
        return "\n".join(lines[:-1])
    if len(lines) >= 2 and _is_header_row(lines[-2]) and last and _DELIMITER_ROW.match(last):
        lines[-1] = _delimiter_for(lines[-2])
        return "\n".join(lines)
    start = max(_paragraph_start(lines), after_fence)    # a closed fence's lines are code
    head = "\n".join(lines[:start])
    para = "\n".join(lines[start:])
    held = _hold_inline(para)
    return f"{head}\n{held}" if start else held


def _open_fence(lines: list[str]) -> tuple[str | None, int]:
    """The marker of a fence left open at the end of `lines` (if any), and the index of the
    line after the last fence that closed."""
    marker, after = None, 0
    for i, line in enumerate(lines):
        m = _FENCE.match(line)
        if marker is None:
            if m:
                marker = m.group(1)
        elif m and m.group(1)[0] == marker[0] and len(m.group(1)) >= len(marker) \
                and not line.strip().strip(marker[0]):
            marker, after = None, i + 1
    return marker, after


def _is_header_row(line: str) -> bool:
    return "|" in line and not _DELIMITER_ROW.match(line)


def _delimiter_for(header: str) -> str:
    cells = header.strip().strip("|").split("|")
    return "|" + "|".join(" --- " for _ in cells) + "|"


def _paragraph_start(lines: list[str]) -> int:
    """The index of the first line of the paragraph at the end (after the last blank line)."""
    for i in range(len(lines) - 1, -1, -1):
        if not lines[i].strip():
            return i + 1
    return 0


def _hold_inline(text: str) -> str:
    """`text` with unclosed inline code closed and unpartnered emphasis markers left out."""
    text = _cut_forming_link(text)
    spans, closing = _code_spans(text)
    runs = _delimiter_runs(text, spans)
    hidden: set[int] = set()
    stack: list[tuple[str, int, int]] = []         # (char, length, start)
    for char, length, start, can_open, can_close in runs:
        at_end = start + length == len(text)
        if at_end:
            hidden.update(range(start, start + length))     # may still grow
            continue
        opener = next((i for i in range(len(stack) - 1, -1, -1) if stack[i][0] == char), None)
        if can_close and opener is not None:
            o_char, o_len, o_start = stack[opener]
            del stack[opener:]
            if o_len != length:
                hidden.update(range(o_start, o_start + o_len))
                hidden.update(range(start, start + length))
            continue
        if can_open:
            stack.append((char, length, start))
    for _, length, start in stack:
        hidden.update(range(start, start + length))
    if hidden:
        text = "".join(c for i, c in enumerate(text) if i not in hidden)
    return text + closing


def _cut_forming_link(text: str) -> str:
    """A link or image still arriving at the end, replaced by its text so far."""
    at = text.rfind("[")                 # only the last bracket can open a link still arriving
    m = _FORMING_LINK.match(text, at) if at >= 0 else None
    if m is None or _escaped(text, at):
        return text
    start = at - 1 if at and text[at - 1] == "!" else at
    return text[:start] + m.group(1)


def _code_spans(text: str) -> tuple[list[tuple[int, int]], str]:
    """The [start, end) ranges of inline code, and the closer an unclosed span needs."""
    spans: list[tuple[int, int]] = []
    runs = [(m.start(), m.end()) for m in re.finditer(r"`+", text)]
    i = 0
    while i < len(runs):
        start, end = runs[i]
        if _escaped(text, start):
            i += 1
            continue
        width = end - start
        j = next((k for k in range(i + 1, len(runs)) if runs[k][1] - runs[k][0] == width), None)
        if j is None:
            spans.append((start, len(text)))
            return spans, "`" * width
        spans.append((start, runs[j][1]))
        i = j + 1
    return spans, ""


def _delimiter_runs(text: str, spans: list[tuple[int, int]]):
    """Emphasis delimiter runs outside code: (char, length, start, can_open, can_close)."""
    out = []
    i, n, s = 0, len(text), 0
    while i < n:
        while s < len(spans) and spans[s][1] <= i:
            s += 1
        if s < len(spans) and spans[s][0] <= i:
            i = spans[s][1]
            continue
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char not in _EMPHASIS:
            i += 1
            continue
        j = i
        while j < n and text[j] == char:
            j += 1
        before = text[i - 1] if i else " "
        after = text[j] if j < n else " "
        can_open = not after.isspace()
        can_close = not before.isspace()
        if char == "_":
            can_open = can_open and not before.isalnum()
            can_close = can_close and not after.isalnum()
        if char == "~" and j - i < 2:
            i = j
            continue
        out.append((char, j - i, i, can_open, can_close))
        i = j
    return out


def _escaped(text: str, at: int) -> bool:
    slashes = 0
    while at - slashes - 1 >= 0 and text[at - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1
