"""`TurnPlayer`: step through one turn's states; a view given a state, never a capture.

A turn's states share one log, so the final state holds every earlier one
(`TurnState.at`): the player is a slider over the turn's events and panes
that each render the state there. Give it a `TurnState`, the turn events
themselves, or anything that carries a ``state`` (a `LiveResult` of lesson
6's live loop, a `LoopResult` of lesson 4's): a turn that came over a real
connection plays the same as one read from a capture.

A pane is anything with ``render(state) -> HTML`` and, for print and nbval,
``render_text(state) -> str`` (`ChatPane` and `TurnPane` are both); by
default the chat as its user sees it (lesson 6) and the turn state (lesson 4).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import ipywidgets as widgets

from ..turn.events import TurnEvent
from ..turn.reduce import TurnState, reduce_all
from .chat_pane import ChatPane
from .html import counter_html, esc, page
from .turn_view import TurnPane


def turn_of(source: TurnState | Iterable[TurnEvent] | Any) -> TurnState:
    """The final state of `source`: a state, turn events, or a result with a ``state``."""
    if isinstance(source, TurnState):
        return source
    state = getattr(source, "state", None)
    if isinstance(state, TurnState):
        return state
    return reduce_all(list(source))


class TurnPlayer(widgets.VBox):
    """Step through a turn's states: back, forward and a slider over its events, and the
    panes of the state there (see the module). `at`: the event count to show first
    (default: the whole turn)."""

    def __init__(self, turn: TurnState | Iterable[TurnEvent] | Any,
                 panes: Sequence[Any] | None = None, *, at: int | None = None,
                 name: str = "Turn") -> None:
        self.final = turn_of(turn)
        self.name = name
        self.panes = list(panes) if panes is not None else [ChatPane(), TurnPane()]
        count = self.final.count
        self.slider = widgets.IntSlider(value=count if at is None else max(0, min(at, count)),
                                        min=0, max=count, description="Event",
                                        continuous_update=True)
        self.back = widgets.Button(description="◀ step", tooltip="one turn event back")
        self.forward = widgets.Button(description="step ▶", tooltip="one turn event on")
        self.counter = widgets.HTML()
        self.pane_views = [widgets.HTML() for _ in self.panes]
        self.back.on_click(lambda _: self.step(-1))
        self.forward.on_click(lambda _: self.step(1))
        self.slider.observe(lambda _: self._render(), names="value")
        super().__init__([widgets.HBox([self.back, self.forward, self.slider]), self.counter,
                          *self.pane_views])
        self.add_class("rtw-turn-player")
        self._render()

    @property
    def index(self) -> int:
        """How many of the turn's events the shown state has seen."""
        return int(self.slider.value)

    @index.setter
    def index(self, value: int) -> None:
        self.slider.value = max(0, min(int(value), self.final.count))

    @property
    def state(self) -> TurnState:
        """The state shown: the turn after its first `index` events."""
        return self.final.at(self.index)

    def step(self, n: int = 1) -> None:
        """Move `n` turn events on (back, if negative)."""
        self.index = self.index + n

    def label(self) -> str:
        """The counter: how far into the turn, and the last event taken in."""
        i, count = self.index, self.final.count
        if i == 0:
            return f"{self.name}: 0 of {count} turn events"
        last = self.final.at(i).events_since(i - 1)[0]
        target = getattr(last, "block", None) or getattr(last, "outcome", None)
        what = f"{last.kind} {target}" if target else last.kind
        return f"{self.name}: {i} of {count} turn events · {what}"

    def render_text(self) -> str:
        """The counter, then each pane's plain text of the state shown."""
        lines = [self.label()]
        state = self.state
        for pane in self.panes:
            text = getattr(pane, "render_text", None)
            if callable(text):
                lines += ["", f"[{getattr(pane, 'name', 'pane')}]", text(state)]
        return "\n".join(lines)

    def render_html(self) -> str:
        """A static HTML copy of the view (what GitHub and nbconvert show)."""
        state = self.state
        body = [f'<div class="rtw-note">Turn player, static copy: {esc(self.name)}. '
                "Run the notebook to use the controls.</div>", counter_html(self.label())]
        body += [pane.render(state) for pane in self.panes]
        return page('<div class="rtw-turn-player" role="group" aria-label="Turn player">'
                    + "".join(body) + "</div>")

    def _render(self) -> None:
        state = self.state
        self.counter.value = counter_html(self.label())
        for view, pane in zip(self.pane_views, self.panes, strict=True):
            view.value = pane.render(state)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = self.render_text()
        data["text/html"] = self.render_html()
        return data
