"""The chat pane: a turn as its user sees it, drawn by `lesson_lib.draw` (lesson 6).

A thin view. `draw` decides every word and escapes every character; this
module adds a stylesheet and puts the drawing where it is seen:

- `ChatPane`: a pane over a state (``render(state)``, ``render_text(state)``:
  what `TurnPlayer` shows), and a player pane (``pane(capture, index) -> HTML``,
  and ``text(capture, index)``): the capture as a one-step turn, drawn after the
  slider's event, so lessons 1-5's captures can be watched as a user would
  see them. One `Drawer` per capture, kept on its shared replay: stepping
  forward costs what the new events changed.
- `ChatView`: an ``ipywidgets.HTML`` for a live loop: ``view.show(state)``
  after each event; ``text/plain`` where no widget can be shown.
- `chat_html`, `chat_text`: a drawing as one HTML fragment, or plain text.

A long code block is drawn in several parts (`lesson_lib.draw.chunks`), each its own
``<pre>``: the stylesheet joins them (no margin or padding where one goes on in the next),
so they read as one block.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from ..capture.captures import Capture
from ..draw import Drawer, Drawing, draw
from ..turn.reduce import TurnState
from .html import BG_ALT, BORDER, FG_MUTED, MONO, esc, section
from .replays import replay_for

CHAT_STYLE = f"""<style>
.draw {{ max-width: 46em; line-height: 1.45; }}
.draw pre {{ font-family: {MONO}; background: {BG_ALT}; padding: 4px 8px; overflow-x: auto; }}
.draw pre.draw-code-more {{ margin-bottom: 0; padding-bottom: 0; }}
.draw pre.draw-code-rest {{ margin-top: 0; padding-top: 0; }}
.draw table {{ border-collapse: collapse; }}
.draw th, .draw td {{ border: 1px solid {BORDER}; padding: 1px 6px; }}
.draw-pending, .draw-still, .draw-cursor {{ color: {FG_MUTED}; font-style: italic; }}
.draw-call, .draw-other {{ border-left: 3px solid {BORDER}; padding-left: 8px; }}
.draw-server {{ border: 1px solid {BORDER}; border-radius: 3px; padding: 0 4px;
  font-size: 85%; }}
.draw-reasoning summary {{ color: {FG_MUTED}; cursor: pointer; }}
.draw-cite {{ color: {FG_MUTED}; font-size: 90%; margin-left: 1em; }}
.draw-image-blocked {{ border: 1px dashed {BORDER}; padding: 0 4px; }}
.draw-link {{ text-decoration: underline dotted; }}
.draw-banner, .draw-error, .draw-step {{ font-weight: bold; margin-top: 6px; }}
</style>"""


def chat_html(drawing: Drawing) -> str:
    """A drawing as one HTML fragment, with the pane's stylesheet."""
    return CHAT_STYLE + drawing.html


def chat_text(drawing: Drawing) -> str:
    """A drawing as plain text."""
    return drawing.text


class ChatPane:
    """The chat as a pane: a state drawn (`render`), or, in the replay `Player`, the
    capture as a one-step turn, drawn after each event (the capture's state is built
    once and handed to the same drawing)."""

    def __init__(self, name: str = "Chat", route: str | None = None) -> None:
        self.name = name
        self.route = route

    def render(self, state: TurnState) -> str:
        """`state` drawn, as an HTML region titled with the pane's name."""
        return section(self.name, chat_html(draw(state)))

    def render_text(self, state: TurnState) -> str:
        """`state` drawn, as plain text."""
        return chat_text(draw(state))

    def drawing(self, capture: Capture, index: int) -> Drawing | str:
        """The drawing after wire event `index`, or why there is none."""
        from .turn_view import replay_turn
        route = self.route or "auto"
        replay = replay_for(capture)
        try:
            trace = replay.kept(("turn", route), lambda: replay_turn(capture, route))
        except Exception as error:      # a view degrades; the CLI reports the same turn
            return f"no drawing for this capture: {type(error).__name__}: {error}"
        drawer = replay.kept(("draw", route), Drawer)
        state = trace.state
        if trace.marks:
            state = state.at(trace.marks[max(0, min(int(index), len(trace.marks) - 1))])
        return drawer.draw(state)

    def __call__(self, capture: Capture, index: int) -> str:
        """The chat after event `index`, as an HTML region titled with the pane's name."""
        found = self.drawing(capture, index)
        body = (chat_html(found) if isinstance(found, Drawing)
                else f'<p class="rtw-note">{esc(found)}</p>')
        return section(self.name, body)

    def text(self, capture: Capture, index: int) -> str:
        """The chat after event `index`, as plain text."""
        found = self.drawing(capture, index)
        return chat_text(found) if isinstance(found, Drawing) else found


class ChatView(widgets.HTML):
    """A live chat pane: call `show` with each new state (and the time, for a stall)."""

    def __init__(self, *, stalled_after_ms: float | None = None,
                 image_origins: tuple[str, ...] = (), **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.drawer = Drawer(image_origins=image_origins, stalled_after_ms=stalled_after_ms)
        self.last: Drawing | None = None
        self.add_class("rtw-chat")

    def show(self, state: TurnState, now_ms: float | None = None) -> Drawing:
        """Draw `state` and show it; return the drawing."""
        self.last = self.drawer.draw(state, now_ms=now_ms)
        self.value = chat_html(self.last)
        return self.last

    @property
    def text(self) -> str:
        """What is shown, as plain text."""
        return chat_text(self.last) if self.last is not None else ""

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data["text/plain"] = self.text or "(nothing drawn yet)"
        data.setdefault("text/html", self.value)
        return bundle
