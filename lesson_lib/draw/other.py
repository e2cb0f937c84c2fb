"""Blocks that are neither text, reasoning nor a call: a tool's result, a wire's own block.

One part per block, ``<block>/block``: its wire kind, a server-side mark for
a provider-side tool's result, and a short preview of what it carries. Live
while the block is open, settled when it ends.
"""

from __future__ import annotations

from typing import Any

from .parts import Part, Segment
from .safety import esc
from .values import preview


class OtherDrawer:
    """A tool-result or other block of the turn."""

    def __init__(self, block: str, kind: str, wire_kind: str, server_side: bool,
                 data: Any = None, content: str = "") -> None:
        self.block = block
        self.kind = kind
        self.wire_kind = wire_kind
        self.server_side = server_side
        self.data = data
        self.length = 0
        self.recent = ""
        self._final: Part | None = None
        self.feed(content)

    def feed(self, fragment: str) -> None:
        """Content arrived."""
        if fragment:
            self.length += len(fragment)
            self.recent = (self.recent + fragment)[-200:]

    def end(self, complete: bool, data: Any = None) -> None:
        """The block ended: its part settles."""
        self._final = self._draw(complete, data if data is not None else self.data, True)

    def segments(self) -> list[Segment]:
        """The one part."""
        if self._final is not None:
            return [((self._final,), 1, ())]
        return [((), 0, (self._draw(None, self.data, False),))]

    def _draw(self, complete: bool | None, data: Any, settled: bool) -> Part:
        what = "tool result" if self.kind == "tool_result" else "block"
        where = " (server-side)" if self.server_side else ""
        state = "arriving" if complete is None else ("complete" if complete else "incomplete")
        shown = preview(data) if data is not None else ""
        if self.length:
            shown = (shown + " " if shown else "") + preview(self.recent)
        title = f"{what} {self.wire_kind}{where} [{state}]"
        server = ' <span class="draw-server">server-side</span>' if self.server_side else ""
        html = (f'<div class="draw-other"><span class="draw-label">{esc(what)}</span> '
                f"<code>{esc(self.wire_kind)}</code>{server} "
                f'<span class="draw-state">{esc(state)}</span>'
                + (f"<pre>{esc(shown)}</pre>" if shown else "") + "</div>")
        return Part(f"{self.block}/block", self.kind, html,
                    title + (f" {shown}" if shown else ""), settled)
