"""A long code fence drawn as settled chunks of whole lines, then one small part for the rest.

A code fence is the one Markdown block that keeps growing for hundreds of
lines. Drawn as one part, it would be copied whole into that part at every
delta, however little of it changed. But a complete line of a fence is code
for good (only a closing line ends the fence, and each line is checked for
that as it completes), so its drawing can never change. So once the complete
lines since the last cut hold `CODE_CHUNK` characters of code, they become a
settled part of their own, drawn once; only the code after them is drawn
again, and a delta costs the same at the fence's end as at its start.

Where a chunk ends depends only on the code (the end of the first line that
is not empty and reaches `CODE_CHUNK` characters since the last cut), never
on how the deltas cut the text or on when a drawing is asked for: drawing a
state at once or delta by delta gives the same parts. A fence shorter than
one chunk is one part, drawn as before. (Never after an empty line: a fence's
text is drawn without the empty lines at its end, and a chunk cannot know
whether code follows them.)

The parts of a fence cut in chunks, in reading order:

- each chunk (key ``<block>/md<offset>/code<n>``), settled:
  ``<pre class="draw-code-more"><code class="language-…">its lines</code></pre>``;
  the first chunk's `text` starts with the fence's opening line;
- the rest (key ``<block>/md<offset>``, as the whole block would have), live
  while the fence forms, settled with the block: ``<pre class="draw-code-rest">``
  and the code after the last chunk, then the closing line once it arrived
  (and, until the block settles, what was drawn after it).

Chunks after the first carry both classes. The chat pane's stylesheet draws
``draw-code-more`` without its bottom margin and padding and
``draw-code-rest`` without its top ones, so the parts read as one code block;
their `text` joins with one line break (`Part.follows`) into the fence's text.
The code of the parts, joined, is the code markdown-it draws for the fence.
A view that keeps parts by key puts each new one where `Drawing.parts` has
it: a chunk settles *before* the live rest of its fence, already on screen.

Only fences that are not indented are cut (their code is their lines,
verbatim); an indented fence is drawn whole, as before.
"""

from __future__ import annotations

from markdown_it.common.utils import escapeHtml

from .fences import OpenFence, code_class

CODE_CHUNK = 1_000
MORE = '<pre class="draw-code-more">'
REST = '<pre class="draw-code-rest">'
REST_MORE = '<pre class="draw-code-rest draw-code-more">'


class CodeChunks:
    """The chunks of one fence, the block at `offset` of its run (see the module)."""

    def __init__(self, fence: OpenFence, text: str, offset: int, size: int) -> None:
        self.fence = fence
        self.offset = offset
        self.size = max(1, size)
        self.cls = code_class(fence.info)
        start = text.rfind("\n", 0, fence.code_start - 1) + 1
        self.opening = text[start:fence.code_start]     # the opening line, with its break
        self.code_from = fence.code_start     # the code not in a chunk yet starts here
        self.scanned = 0                      # no chunk ends before here
        self.count = 0

    @classmethod
    def of(cls, text: str, offset: int, size: int,
           fence: OpenFence | None = None) -> CodeChunks | None:
        """The chunks of the fence `text` (a block, or the tail) opens with; None when it
        opens none, or an indented one."""
        if fence is None:
            fence = OpenFence.at_start(text)
        if fence is None or fence.indent:
            return None
        return cls(fence, text, offset, size)

    def code_end(self, text: str) -> int:
        """Where the fence's code ends in `text` (the whole block): its closing line, or the
        end of the text."""
        if self.fence.closed_at >= 0:
            return self.fence.closed_at
        found = self.fence.closing.search(text, self.code_from)
        return found.start() if found else len(text)

    def take(self, text: str, end: int) -> list[tuple[int, str, str]]:
        """The chunks that the code of `text` up to `end` (complete lines, all code)
        finishes: (number, html, text) each, from 1."""
        out = []
        while True:
            cut = max(self.code_from + self.size - 1, self.scanned)
            while (cut := text.find("\n", cut, end) + 1) and text[cut - 2] == "\n":
                pass                                  # an empty line: the chunk goes on
            if not cut:
                self.scanned = max(self.scanned, end)
                return out
            head = REST_MORE if self.count else MORE
            html = f"{head}<code{self.cls}>{escapeHtml(text[self.code_from:cut])}</code></pre>\n"
            shown = (text[self.code_from:cut - 1] if self.count
                     else text[:cut - 1].lstrip("\n"))
            self.count += 1
            self.code_from = cut
            out.append((self.count, html, shown))

    def rest(self, source: str) -> str:
        """The Markdown source that draws the rest: the opening line, then the code after
        the last chunk and what follows it."""
        return self.opening + source[self.code_from:]


def as_rest(html: str) -> str:
    """The HTML of `rest` (markdown-it's), its fence marked as the rest of a cut one."""
    if not html.startswith("<pre><code"):     # `rest` always opens a fence: never so
        return html
    return REST + html[len("<pre>"):]
