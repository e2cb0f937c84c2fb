"""A text block drawn as Markdown: settled blocks rendered once, the tail per delta.

`TextDrawer` feeds the block's fragments to `MarkdownBlocks`. Each block that
settles is rendered once into a settled `Part` (key ``<block>/md<offset>``,
its first character's offset in the text, so the key never moves) and kept
in an append-only list that every later drawing shares. The tail is one live
part, rendered from its held-back source (`tail.hold_back`) only when a
delta changed it.

Images: a settled block whose drawing would differ if images were allowed
(an image whose origin is on the allowlist) cannot be final before the turn
completes, so it waits, live, and every block after it waits behind it
(settled parts are a prefix). When the turn ends they settle: with the
images if it completed, as text otherwise.
"""

from __future__ import annotations

from .blocks import MarkdownBlocks
from .citations import citation_part
from .markdown import render
from .parts import Part, Segment
from .safety import esc
from .tail import hold_back


class TextDrawer:
    """One text (or refusal) block of the turn, drawn as Markdown parts."""

    def __init__(self, block: str, kind: str = "text", origins: frozenset[str] = frozenset()):
        self.block = block
        self.kind = kind
        self.origins = origins
        self.blocks = MarkdownBlocks()
        self.settled: list[Part] = []
        self.waiting: list[tuple[int, str]] = []     # settled source held for the turn's end
        self._waiting_parts: tuple[Part, ...] = ()
        self._tail_part: Part | None = None
        self._dirty = False
        self.length = 0
        self.fragments: list[str] = []               # the whole text, joined only for a citation
        self.cites: list[Part] = []

    def feed(self, fragment: str) -> None:
        """A delta arrived."""
        if not fragment:
            return
        self.length += len(fragment)
        self.fragments.append(fragment)
        self._settle(self.blocks.feed(fragment))
        self._dirty = True

    def cite(self, source: object) -> None:
        """A citation or source attached to this block (drawn right after its text)."""
        text = "".join(self.fragments)
        self.cites.append(citation_part(self.block, len(self.cites) + 1, source, text))

    def end(self) -> None:
        """The block ended (completely or not): what arrived is all there will be."""
        self._settle(self.blocks.finish())
        self._tail_part = None
        self._dirty = False

    def turn_finished(self, completed: bool) -> None:
        """The turn ended: blocks waiting on images settle, with images only if it completed."""
        for offset, source in self.waiting:
            self.settled.append(self._part(offset, source, images=completed))
        self.waiting = []
        self._waiting_parts = ()

    def segments(self) -> list[Segment]:
        """This block's parts: the settled ones shared, then what is still live."""
        if self._dirty:
            self._tail_part = self._draw_tail()
            self._dirty = False
        live = self._waiting_parts
        if self._tail_part is not None:
            live = live + (self._tail_part,)
        return [(self.settled, len(self.settled), live), (self.cites, len(self.cites), ())]

    def _settle(self, blocks: list[tuple[int, str]]) -> None:
        for offset, source in blocks:
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
        return Part(f"{self.block}/md{offset}", self.kind, html, source.strip("\n"), settled)

    def _draw_tail(self) -> Part | None:
        tail = self.blocks.tail
        if not tail.strip():
            return None
        shown = hold_back(tail)
        html = render(shown, forming=True) + '<span class="draw-cursor" aria-hidden="true">▍</span>'
        return Part(f"{self.block}/md{self.blocks.offset}", self.kind, html,
                    shown.strip("\n"), False)


def plain_part(key: str, kind: str, text: str, settled: bool) -> Part:
    """A part that is just text, escaped (no Markdown)."""
    return Part(key, kind, f'<div class="draw-plain">{esc(text)}</div>', text, settled)
