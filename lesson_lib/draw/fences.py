"""A fenced code block still open at the start of the tail: read and drawn without a re-parse.

A long code block is the one Markdown block that keeps growing for hundreds
of lines. Parsing and rendering it again after every delta would cost its
whole length each time. While the tail is one open fence, nothing about
it can change except its end, so:

- `OpenFence` says whether the tail starts with a fence that is still open,
  checking only the lines completed since it last looked (a new line can
  only close it, never change how it opened);
- `draw_open_fence` draws it as markdown-it draws an unclosed fence (the
  code to the end of the text), with one escape of its text: the same HTML,
  with no parse. A last line that may be the closing fence arriving
  (`` ` ``, ``~~``) is not drawn yet. `DrawnFence` draws the same, escaping
  each line once as it completes instead of the whole code at every delta.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.common.utils import escapeHtml, unescapeAll

_OPENING = re.compile(r"(?:[ \t]*\n)*( {0,3})(`{3,}|~{3,})([^\n]*)\n")


@dataclass(slots=True)
class OpenFence:
    """The fence opening the tail: its marker, indent, info, where its code begins."""

    char: str
    length: int
    indent: int
    info: str
    code_start: int          # offset in the tail of the first character of the code
    checked: int             # the tail up to here has no closing line
    closing: re.Pattern
    closed: bool = False
    closed_at: int = -1      # offset in the tail of the closing line, once it arrived

    @classmethod
    def at_start(cls, tail: str) -> OpenFence | None:
        """The fence the tail opens with, once its opening line is complete (else None)."""
        m = _OPENING.match(tail)
        if m is None or (m.group(2)[0] == "`" and "`" in m.group(3)):
            return None
        char, length = m.group(2)[0], len(m.group(2))
        closing = re.compile(rf"^ {{0,3}}{re.escape(char)}{{{length},}}[ \t]*$", re.M)
        return cls(char, length, len(m.group(1)), m.group(3), m.end(), m.end(), closing)

    def still_open(self, tail: str, end: int) -> bool:
        """Whether no complete line up to `end` closes the fence (reads only new lines)."""
        if self.closed:
            return False
        found = self.closing.search(tail, self.checked, end)
        if found:
            self.closed, self.closed_at = True, found.start()
            return False
        self.checked = end
        return True


def draw_open_fence(fence: OpenFence, tail: str) -> str:
    """The open fence as markdown-it draws it, without parsing: its code, escaped."""
    code = tail[fence.code_start:]
    last = code.rfind("\n") + 1
    partial = code[last:]
    if may_close(partial, fence.char) or not partial.strip(" \t"):
        code = code[:last]              # the closing fence arriving, or nothing yet
    if fence.indent:
        code = "".join(_dedent(line, fence.indent) for line in code.splitlines(keepends=True))
    return f"<pre><code{code_class(fence.info)}>{escapeHtml(code)}</code></pre>\n"


def code_class(info: str) -> str:
    """The class attribute markdown-it gives the ``<code>`` of a fence with this info."""
    info = unescapeAll(info).strip()
    lang = info.split(maxsplit=1)[0] if info else ""
    return f' class="language-{escapeHtml(lang)}"' if lang else ""


class DrawnFence:
    """`draw_open_fence` of one open fence as its tail grows: each complete line of code is
    escaped once, so a delta costs its own line (and the joining of what is escaped)."""

    def __init__(self, fence: OpenFence) -> None:
        self.fence = fence
        self.head = f"<pre><code{code_class(fence.info)}>"
        self.escaped: list[str] = []
        self.start = self.upto = fence.code_start       # the tail from start to upto is escaped

    def restart(self, at: int, head: str) -> None:
        """Draw only the code from `at` on (a line's start), under `head`: what comes before
        is drawn elsewhere (a settled chunk, see `chunks`)."""
        self.head, self.escaped, self.start, self.upto = head, [], at, at

    def html(self, tail: str) -> str:
        """The open fence of `tail` (the tail it opens, grown since the last call)."""
        fence = self.fence
        last = max(tail.rfind("\n") + 1, fence.code_start)
        if last > self.upto:
            lines = tail[self.upto:last]
            if fence.indent:
                lines = "".join(_dedent(line, fence.indent)
                                for line in lines.splitlines(keepends=True))
            self.escaped.append(escapeHtml(lines))
            self.upto = last
        partial = tail[last:]
        if may_close(partial, fence.char) or not partial.strip(" \t"):
            partial = ""
        elif fence.indent:
            partial = _dedent(partial, fence.indent)
        return f"{self.head}{''.join(self.escaped)}{escapeHtml(partial)}</code></pre>\n"


def may_close(line: str, char: str) -> bool:
    """Whether a line still arriving may become the closing fence of a `char` fence."""
    stripped = line.lstrip(" ")
    return (len(line) - len(stripped) <= 3 and bool(stripped.rstrip(" \t"))
            and not stripped.rstrip(" \t").strip(char))


def _dedent(line: str, indent: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, indent):]
