"""Text drawn as Markdown: settled blocks rendered once, the tail again per delta.

A `TextDrawer` draws one *run* of text: the consecutive text blocks of one
step (Anthropic splits an answer into several blocks around each citation;
they are pieces of one Markdown text, so one paragraph can span them). It
feeds the fragments to `MarkdownBlocks`. Each Markdown block that settles is
rendered once into a settled `Part` (key ``<first block>/md<offset>``, the
offset of its first character in the run, so the key never moves) and kept
in an append-only list that every later drawing shares. The tail is one live
part, rendered from its held-back source (`tail.hold_back`) at the frames
`frames` schedules (every delta while it is short), and between them drawn
as the last frame and the text arrived since. The run ends when something else begins (a tool call, the
step's end): then its last block settles.

A long code fence is cut into settled chunks of whole lines as they
complete, and only the code after the last chunk is drawn again (`chunks`):
its cost per delta does not grow with the fence.

Citations: a block whose sources arrived before its text (Anthropic) is the
cited span, so a mark ``[n]`` is written into the run where it ends; every
source is also one settled part after the run (see `citations`).

Images: a settled block whose drawing would differ if images were allowed
(an image whose origin is on the allowlist) cannot be final before the turn
completes, so it waits, live, and every block after it waits behind it
(settled parts are a prefix). When the turn ends they settle: with the
images if it completed, as text otherwise.
"""

from __future__ import annotations

import re

from . import chunks as code_chunks
from .blocks import MarkdownBlocks
from .chunks import CodeChunks, as_rest
from .citations import citation_part
from .fences import DrawnFence
from .frames import frame_due
from .markdown import render
from .parts import Part, Segment
from .safety import esc
from .tail import hold_back

_OPEN, _CLOSE = "\ue000", "\ue001"      # a citation mark in the run's source: \ue000 1,2 \ue001
_MARK = re.compile(f"{_OPEN}([0-9,]*){_CLOSE}")
_PRIVATE = str.maketrans({_OPEN: "\ufffd", _CLOSE: "\ufffd"})


class TextDrawer:
    """One run of text (or refusal) blocks of the turn, drawn as Markdown parts."""

    def __init__(self, block: str, kind: str = "text", origins: frozenset[str] = frozenset(),
                 step: int = 1, choice: int = 0):
        self.block = block
        self.kind = kind
        self.origins = origins
        self.step, self.choice = step, choice
        self.blocks = MarkdownBlocks()
        self.settled: list[Part] = []
        self.waiting: list[tuple[int, str]] = []     # settled source held for the turn's end
        self._waiting_parts: tuple[Part, ...] = ()
        self._tail_part: Part | None = None
        self._dirty = False
        self._frame_at = (0, 0)        # (the tail's offset, its length) at the last frame
        self._fenced = False           # the tail was an open fence at the last delta
        self._frame: tuple[tuple[int, int], str, str] | None = None   # its source and html
        self._drawn_fence: DrawnFence | None = None
        self._chunks: CodeChunks | None = None        # the tail's fence, cut in chunks
        self.chunk_chars = code_chunks.CODE_CHUNK
        self.length = 0
        self.fragments: list[str] = []               # the run's text, joined only for a citation
        self.starts: dict[str, int] = {block: 0}     # where each block begins in it
        self.marks: dict[str, list[int]] = {}        # the sources of blocks still open
        self.cites: list[Part] = []
        self.ended = False

    def feed(self, fragment: str) -> None:
        """A delta arrived."""
        if not fragment:
            return
        fragment = fragment.translate(_PRIVATE)
        self.length += len(fragment)
        self.fragments.append(fragment)
        self._feed_markdown(fragment)

    def continue_with(self, block: str) -> None:
        """The next text block of the same step goes on the same Markdown text."""
        self.starts[block] = self.length

    def cite(self, block: str, number: int, source: object, at: int | None = None) -> None:
        """Source number `number` of `block`, drawn after the run (and marked in it).

        `at`: the block's length when the source arrived (default: all fed so far).
        """
        start = self.starts.get(block, 0)
        text = "".join(self.fragments)[start:]
        if at is not None:
            text = text[:at]
        self.cites.append(citation_part(block, number, source, text))
        if not text:                                     # before its text: the block is the span
            self.marks.setdefault(block, []).append(number)

    def block_ended(self, block: str) -> None:
        """One block of the run ended: its citation mark, if it has one, goes in."""
        numbers = self.marks.pop(block, None)
        if numbers:
            self._feed_markdown(_OPEN + ",".join(map(str, numbers)) + _CLOSE)

    def end(self) -> None:
        """The run ended: what arrived is all there will be (idempotent)."""
        if self.ended:
            return
        self.ended = True
        self._settle(self.blocks.finish())
        self._tail_part = None
        self._dirty = False

    def turn_finished(self, completed: bool) -> None:
        """The turn ended: blocks waiting on images settle, with images only if it completed."""
        self.end()
        for offset, source in self.waiting:
            self.settled.append(self._part(offset, source, images=completed))
        self.waiting = []
        self._waiting_parts = ()

    def segments(self) -> list[Segment]:
        """This run's parts: the settled ones shared, then what is still live, then sources."""
        if self._dirty:
            self._tail_part = self._draw_tail()
            self._dirty = False
        live = self._waiting_parts
        if self._tail_part is not None:
            live = live + (self._tail_part,)
        return [(self.settled, len(self.settled), live), (self.cites, len(self.cites), ())]

    def _feed_markdown(self, source: str) -> None:
        self._settle(self.blocks.feed(source))
        self._dirty = True
        blocks = self.blocks
        length = len(blocks.tail)
        fenced = blocks.open_fence is not None      # drawn without a parse: always a frame
        offset, last = self._frame_at
        if fenced or self._fenced or blocks.offset != offset or frame_due(length, last):
            self._frame_at = (blocks.offset, length)
        self._fenced = fenced
        self._cut_chunks()

    def _chunks_of(self, offset: int, text: str, fence=None) -> CodeChunks | None:
        """The chunks of the fence opening the block at `offset` (None: drawn whole)."""
        chunks = self._chunks
        if chunks is not None and chunks.offset == offset:
            return chunks
        if self.waiting:              # settled parts are a prefix: nothing settles past a wait
            return None
        self._chunks = CodeChunks.of(text, offset, self.chunk_chars, fence)
        return self._chunks

    def _cut_chunks(self) -> None:
        """Settle the chunks the tail's fence completed (its complete lines of code)."""
        blocks = self.blocks
        fence = blocks.fence
        if fence is None:
            return
        chunks = self._chunks_of(blocks.offset, blocks.tail, fence)
        if chunks is not None:
            tail = blocks.tail
            self._add_chunks(chunks, tail, fence.closed_at if fence.closed
                             else tail.rfind("\n") + 1)

    def _add_chunks(self, chunks: CodeChunks, text: str, end: int) -> None:
        for n, html, shown in chunks.take(text, end):
            self.settled.append(Part(f"{self.block}/md{chunks.offset}/code{n}", self.kind,
                                     _marks_html(html), _marks_text(shown), True, n > 1))

    def _settle(self, blocks: list[tuple[int, str]]) -> None:
        for offset, source in blocks:
            chunks = self._chunks_of(offset, source)
            if chunks is not None:
                self._add_chunks(chunks, source, chunks.code_end(source))
                if chunks.count:          # the rest of a fence cut in chunks
                    html = as_rest(render(chunks.rest(source), forming=False))
                    self.settled.append(Part(f"{self.block}/md{offset}", self.kind,
                                             _marks_html(html),
                                             _marks_text(source[chunks.code_from:].rstrip("\n")),
                                             True, True))
                    continue
            if self.waiting or self._waits(source):
                self.waiting.append((offset, source))
                self._waiting_parts += (self._part(offset, source, settled=False),)
            else:
                self.settled.append(self._part(offset, source))

    def _waits(self, source: str) -> bool:
        if not self.origins or "![" not in source:
            return False
        return (render(source, forming=False, images=True, origins=self.origins)
                != render(source, forming=False))

    def _part(self, offset: int, source: str, *, images: bool = False,
              settled: bool = True) -> Part:
        html = render(source, forming=False, images=images, origins=self.origins)
        return Part(f"{self.block}/md{offset}", self.kind, _marks_html(html),
                    _marks_text(source.strip("\n")), settled)

    def _draw_tail(self) -> Part | None:
        tail = self.blocks.tail
        if not tail or tail.isspace():       # stops at the first letter, unlike strip()
            return None
        chunks = self._chunks
        if chunks is None or chunks.offset != self.blocks.offset or not chunks.count:
            chunks = None              # drawn whole; else only what follows the last chunk
        fence = self.blocks.open_fence
        if fence is not None:
            if self._drawn_fence is None or self._drawn_fence.fence is not fence:
                self._drawn_fence = DrawnFence(fence)
            if chunks is not None and self._drawn_fence.start != chunks.code_from:
                self._drawn_fence.restart(chunks.code_from, code_chunks.REST + "<code"
                                          + chunks.cls + ">")
            shown, html = tail, self._drawn_fence.html(tail)
            if chunks is not None:
                shown = tail[chunks.code_from:]
        else:
            frame = self._frame
            if frame is None or frame[0] != self._frame_at:
                if chunks is None:
                    shown = hold_back(tail[:self._frame_at[1]])
                    html = render(shown, forming=True)
                else:              # the closed fence's rest, and what arrived after it
                    shown = hold_back(chunks.rest(tail[:self._frame_at[1]]))
                    html = as_rest(render(shown, forming=True))
                    shown = shown[len(chunks.opening):]
                frame = self._frame = (self._frame_at, shown, html)
            _, shown, html = frame
            arrived = tail[self._frame_at[1]:]      # since the last frame: shown, not parsed
            if arrived:
                shown += arrived
                html += f'<span class="draw-arriving">{esc(arrived)}</span>'
        html += '<span class="draw-cursor" aria-hidden="true">▍</span>'
        text = shown.strip("\n") if chunks is None else shown.rstrip("\n")
        return Part(f"{self.block}/md{self.blocks.offset}", self.kind, _marks_html(html),
                    _marks_text(text), False, chunks is not None)


def _marks_html(html: str) -> str:
    if _OPEN not in html:
        return html
    return _MARK.sub(lambda m: '<sup class="draw-cite-mark">['
                     + m.group(1).replace(",", "][") + "]</sup>", html)


def _marks_text(text: str) -> str:
    if _OPEN not in text:
        return text
    return _MARK.sub(lambda m: "[" + m.group(1).replace(",", "][") + "]", text)
