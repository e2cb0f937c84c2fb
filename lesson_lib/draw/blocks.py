"""The Markdown form of settled paths: which blocks of a text can no longer change.

Markdown is parsed block by block, line by line, and a block once closed is
never reopened: a later line can continue only the last open block, or start
a new one. So when the *complete* lines of a text hold two or more top-level
blocks, every block but the last is final (Textual's streaming Markdown reads
text the same way). The line still arriving is never used to decide: ``Foo``
then ``#`` looks like a heading starting, until ``#x`` makes it part of the
paragraph again.

`MarkdownBlocks` keeps only the tail (the last open block and the line still
arriving). `feed` costs the fragment, plus, when a line completes, a
block-level parse of a *window*: the work grows neither with the settled text
before the tail nor with the tail itself. Reference definitions are off (see
`markdown`), the one Markdown feature where a later line changes an earlier
block. While the tail is one open code fence, a completed line is only
checked for the closing fence (`fences`): a long code block costs each new
line, not a parse of itself.

The window: a long block (a list, a table, a paragraph of many lines) would
cost a parse of itself at each of its lines. But whether the next lines go
on with it depends only on a little of it, so they are parsed after a stand-in
for that little (`_Window`): a list from its last item; a paragraph after one
line of text (``x``) and its last line (which a table's delimiter row may
turn into a header); a table after its header and delimiter rows. Only when
the window shows a second block is the whole tail parsed (once per block
that settles), and that parse decides: the window only saves parses whose
answer is "still one block". Any other block is parsed whole at each line.
"""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it.token import Token

from .fences import OpenFence
from .markdown import block_starts, block_tokens

Block = tuple[int, str]      # (offset of the block's first character in the text, its source)

_LISTS = ("bullet_list_open", "ordered_list_open")


@dataclass(slots=True)
class _Window:
    """Where a fresh parse of the tail's one block starts: `lead` (a stand-in for what
    came before), then the tail from `start`. `kind`: the block's first token type."""

    kind: str
    lead: str
    start: int


class MarkdownBlocks:
    """A text arriving in fragments, as settled blocks and the tail still forming."""

    def __init__(self) -> None:
        self.offset = 0            # where the tail starts in the (normalised) text
        self.tail = ""
        self._carry_cr = False     # a CR ended the last fragment: an LF next is the same break
        self.finished = False
        self._fence: OpenFence | None = None     # the fence the tail opens with, if any
        self._fence_looked = False
        self._window: _Window | None = None     # how to check new lines without a whole parse

    @property
    def open_fence(self) -> OpenFence | None:
        """The fence the tail opens with, while it is still open (else None)."""
        if not self._fence_looked and "\n" in self.tail.lstrip():
            # the first line that is not blank is complete: it opens a fence or it does not
            self._fence = OpenFence.at_start(self.tail)
            self._fence_looked = True
        fence = self._fence
        if fence is None or not fence.still_open(self.tail, self.tail.rfind("\n") + 1):
            return None
        return fence

    @property
    def fence(self) -> OpenFence | None:
        """The fence the tail opens with, open or closed since (else None)."""
        _ = self.open_fence          # looks it up, and whether it closed
        return self._fence

    def feed(self, fragment: str) -> list[Block]:
        """Append `fragment`; return the blocks that became settled with it, in order."""
        fragment = self._normalise(fragment)
        if not fragment:
            return []
        self.tail += fragment
        if "\n" not in fragment:
            return []
        if self.open_fence is not None:
            return []                    # the tail is one open code block: nothing settles
        complete = self.tail[:self.tail.rfind("\n") + 1]
        if self._window is not None and self._still_one_block(complete):
            return []
        tokens = block_tokens(complete)
        starts = block_starts(complete, tokens)
        if len(starts) < 2:
            self._window = _window_of(complete, tokens)
            return []
        line_offsets = _line_offsets(complete, starts)
        out = []
        line_offsets[0] = 0        # blank lines before the first block belong to it
        for begin, end in zip(line_offsets, line_offsets[1:], strict=False):
            out.append((self.offset + begin, self.tail[begin:end]))
        self._cut(line_offsets[-1])
        return out

    def _still_one_block(self, complete: str) -> bool:
        """Whether the window says the new complete lines go on with the tail's one block
        (and move the window up to them)."""
        window = self._window
        assert window is not None
        source = window.lead + complete[window.start:]
        tokens = block_tokens(source)
        if len(block_starts(source, tokens)) >= 2:
            return False
        if window.kind in _LISTS:           # from its last item on
            items = [t.map[0] for t in tokens if t.type == "list_item_open" and t.level == 1
                     and t.map]
            if items:
                window.start += _line_offsets(source, [items[-1]])[0]
        else:                               # from its last complete line on
            window.start = complete.rfind("\n", 0, len(complete) - 1) + 1
        return True

    def _cut(self, cut: int) -> None:
        self.offset += cut
        self.tail = self.tail[cut:]
        self._fence, self._fence_looked = None, False
        self._window = None

    def finish(self) -> list[Block]:
        """The text has ended: every block left is settled (idempotent)."""
        if self.finished:
            return []
        self.finished = True
        if not self.tail:
            return []
        starts = block_starts(self.tail)
        offsets = _line_offsets(self.tail, starts) if starts else [0]
        offsets[0] = 0
        ends = offsets[1:] + [len(self.tail)]
        out = [(self.offset + a, self.tail[a:b]) for a, b in zip(offsets, ends, strict=True)]
        self._cut(len(self.tail))
        return out

    def _normalise(self, fragment: str) -> str:
        # markdown-it reads CRLF and a lone CR as LF; do it here so line numbers agree.
        if self._carry_cr and fragment.startswith("\n"):
            fragment = fragment[1:]
        self._carry_cr = fragment.endswith("\r")
        if "\r" in fragment:
            fragment = fragment.replace("\r\n", "\n").replace("\r", "\n")
        return fragment.replace("\0", "\ufffd")


def _window_of(complete: str, tokens: list[Token]) -> _Window | None:
    """The window for the one block `complete` holds (None: parse it whole each line)."""
    first = next((t for t in tokens if t.level == 0 and t.nesting >= 0 and t.map), None)
    if first is None or first.map is None:
        return None
    last_line = complete.rfind("\n", 0, len(complete) - 1) + 1
    if first.type == "paragraph_open":
        return _Window(first.type, "x\n", last_line)
    if first.type == "table_open":
        lines = complete.split("\n", first.map[0] + 2)
        return _Window(first.type, "\n".join(lines[first.map[0]:first.map[0] + 2]) + "\n",
                       last_line)
    if first.type in _LISTS:
        items = [t.map[0] for t in tokens if t.type == "list_item_open" and t.level == 1
                 and t.map]
        return _Window(first.type, "", _line_offsets(complete, items[-1:])[0] if items else 0)
    return None


def _line_offsets(text: str, lines: list[int]) -> list[int]:
    """The character offsets where the given (ascending) line numbers begin in `text`."""
    out, line, pos = [], 0, 0
    for target in lines:
        while line < target:
            pos = text.index("\n", pos) + 1
            line += 1
        out.append(pos)
    return out
