"""What a person sees: `Part` (one piece, settled or not) and `Drawing` (all of them, in order).

A `Drawing` is built after every event, so it must not copy what is already
final. It holds *segments*: each a shared, append-only list of settled parts
(with how many of them this drawing sees) followed by the parts still live.
Building one costs the number of segments (about one per block of the turn),
not the number of parts; `parts` joins them on read, like `TurnState.blocks`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of the drawing.

    `key` is stable across the states of one turn; `kind` says what it draws
    (``text``, ``reasoning``, ``tool_call``, ``tool_input``, ``citation``,
    ``banner``...); `html` is escaped and fetches nothing; `text` is the same
    content as plain text; a `settled` part never changes and is never removed.
    `follows`: the part goes on with the one before it (a long code block drawn
    in chunks, see `chunks`): its text joins that one's with one line break.
    """

    key: str
    kind: str
    html: str
    text: str
    settled: bool
    follows: bool = False


# (settled parts shared with later drawings, how many of them this drawing sees, live parts)
Segment = tuple[Sequence[Part], int, tuple[Part, ...]]


class Drawing:
    """A turn drawn at one moment: `parts` in reading order (see the module)."""

    __slots__ = ("_segments", "_parts")

    def __init__(self, segments: Sequence[Segment]) -> None:
        self._segments = tuple(segments)
        self._parts: tuple[Part, ...] | None = None

    @property
    def parts(self) -> tuple[Part, ...]:
        """Every part, in reading order (joined on first read)."""
        if self._parts is None:
            out: list[Part] = []
            for settled, count, live in self._segments:
                out.extend(settled[:count])
                out.extend(live)
            self._parts = tuple(out)
        return self._parts

    @property
    def live(self) -> tuple[Part, ...]:
        """The parts that may still change (cheap: no settled part is visited)."""
        return tuple(p for _, _, live in self._segments for p in live)

    def __iter__(self) -> Iterator[Part]:
        return iter(self.parts)

    def __len__(self) -> int:
        return sum(count + len(live) for _, count, live in self._segments)

    def part(self, key: str) -> Part | None:
        """The part with this key, or None."""
        return next((p for p in self.parts if p.key == key), None)

    @property
    def html(self) -> str:
        """The whole drawing as one HTML fragment."""
        body = "\n".join(f'<div class="draw-part draw-{p.kind}" data-key="{_attr(p.key)}">'
                         f"{p.html}</div>" for p in self.parts)
        return f'<div class="draw">{body}</div>'

    @property
    def text(self) -> str:
        """The whole drawing as plain text (for print, nbval and screen readers)."""
        out: list[str] = []
        for p in self.parts:
            if p.text:
                out += ("\n" if p.follows else "\n\n", p.text) if out else (p.text,)
        return "".join(out)


def _attr(value: str) -> str:
    from .safety import esc
    return esc(value)
