"""Lesson 6, station draw: the partial answer, as a person sees a turn while it arrives.

Station: downstream of the reducer (lesson 4) and of what breaks (lesson 5),
upstream of the views. ``draw(state) -> Drawing``: a pure function from a
`TurnState` to parts in reading order, each with a stable `key`, its `kind`,
its `html` (escaped, nothing fetched from model text while the answer
forms), its `text` (the same content, for print, nbval and screen readers)
and `settled`. A settled part never changes and is never removed; only the
parts still live are drawn again, so a delta costs what it changed.

- `blocks`: which Markdown blocks can no longer change (lesson 3's settled
  paths, for prose), and the tail still forming;
- `tail`: the half-arrived tail drawn for what it will be; `fences`: an
  open code block at the tail's start, read and drawn without a parse;
  `chunks`: a long code block drawn as settled chunks of whole lines and a
  small live rest;
- `markdown`: markdown-it-py under the drawing's rules; `safety`: escaping,
  links and the image allowlist;
- `text`, `reasoning`, `tool_call` (with `labels` and `values`),
  `citations`, `other`: one drawer per kind of block;
- `banner`: how the turn stands (streaming, running tools, stalled, and its
  outcome, never done for a dead stream);
- `parts`: `Part` and `Drawing`; `drawer`: `Drawer`, which reads the
  reducer's state (only what it gained since the last drawing), and `draw`.

The drawing folds nothing: every fact of the turn is the reducer's, read from
the state; the drawing decides only how it looks.
"""

from __future__ import annotations

from .blocks import MarkdownBlocks
from .drawer import Drawer, draw
from .labels import TOOL_LABELS, tool_label
from .parts import Drawing, Part
from .tail import hold_back

__all__ = ["Drawer", "Drawing", "MarkdownBlocks", "Part", "TOOL_LABELS", "draw", "hold_back",
           "tool_label"]
