"""Reasoning drawn apart from the answer: collapsed, with its state.

A reasoning block is one part, ``<block>/reasoning``: a closed
``<details>`` whose summary says thinking… (while it arrives), thought,
thought (cut short), or redacted. While it forms only its length and its
last characters are drawn, so a long chain of thought costs the same per
delta at its end as at its start; the whole text is drawn once, when the
block ends and the part settles.
"""

from __future__ import annotations

from .parts import Part, Segment
from .safety import esc

SHOWN_WHILE_FORMING = 400


class ReasoningDrawer:
    """One reasoning block of the turn."""

    def __init__(self, block: str, redacted: bool = False, content: str = "") -> None:
        self.block = block
        self.redacted = redacted
        self.fragments: list[str] = []
        self.length = 0
        self.recent = ""
        self.signed = False
        self._final: Part | None = None
        self._live: Part | None = None
        self._dirty = True
        self.feed(content)

    def feed(self, fragment: str) -> None:
        """Reasoning text arrived."""
        if fragment:
            self.fragments.append(fragment)
            self.length += len(fragment)
            self.recent = (self.recent + fragment)[-SHOWN_WHILE_FORMING:]
            self._dirty = True

    def sign(self) -> None:
        """A signature arrived (it travels back with the next request)."""
        self.signed = True
        self._dirty = True

    def end(self, complete: bool) -> None:
        """The block ended; `complete` is false when a cut or an error closed it."""
        text = "".join(self.fragments)
        if self.redacted:
            summary = "Reasoning (redacted by the provider)"
        else:
            summary = f"Thought ({len(text)} characters)" if complete else \
                f"Thought, cut short ({len(text)} characters)"
        self._final = Part(f"{self.block}/reasoning", "reasoning", _details(summary, text),
                           f"[{summary}]", True)

    def segments(self) -> list[Segment]:
        """The one reasoning part: settled once the block ended."""
        if self._final is not None:
            return [((self._final,), 1, ())]
        if self._dirty:
            lead = "…" if self.length > len(self.recent) else ""
            summary = f"Thinking… ({self.length} characters)"
            self._live = Part(f"{self.block}/reasoning", "reasoning",
                              _details(summary, lead + self.recent), f"[{summary}]", False)
            self._dirty = False
        return [((), 0, (self._live,))]


def _details(summary: str, body: str) -> str:
    return (f'<details class="draw-reasoning"><summary>{esc(summary)}</summary>'
            f'<div class="draw-plain">{esc(body)}</div></details>')
