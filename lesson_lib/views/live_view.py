"""The live turn on screen (lesson 6): the chat pane, a Stop button and a status line.

A thin view over `lesson_lib.live.LiveTurn`: every state the loop reaches is
drawn in a `ChatView`; **Stop** calls the turn's `cancel()`. While the wire is
silent no new state comes, so the view also redraws on a timer (`tick_s`) at the
turn's current time: that is what makes the stall banner appear once the
silence passes `stalled_after_ms`, with nothing new having arrived. `start()` runs
the turn as a task on the kernel's event loop and returns at once, so the
cell ends and the kernel stays free to hear the button (a cell that awaits
the turn would hold the kernel, and a click would wait for it to finish);
`await view.done()` in a later cell waits for the result.
"""

from __future__ import annotations

import asyncio
from typing import Any

import ipywidgets as widgets

from ..live import LiveResult, LiveTurn
from ..turn.reduce import TurnState
from .chat_pane import ChatView
from .html import esc


class LiveView(widgets.VBox):
    """A live turn with its chat pane and a Stop button."""

    def __init__(self, turn: LiveTurn, *, stalled_after_ms: float | None = 3000.0,
                 tick_s: float = 0.5, **kwargs: Any) -> None:
        self.turn = turn
        self.tick_s = tick_s
        self.chat = ChatView(stalled_after_ms=stalled_after_ms)
        self._ticker: asyncio.Future | None = None
        self.stop = widgets.Button(description="Stop", icon="stop", button_style="danger",
                                   tooltip="Cancel the stream and every running tool; "
                                           "what arrived is kept")
        self.status = widgets.HTML('<span class="rtw-live-status" aria-live="polite">ready</span>')
        self.stop.on_click(lambda _: self.press_stop())
        self._task: asyncio.Future | None = None
        earlier = turn.on_update
        turn.on_update = lambda state: (self._update(state), earlier and earlier(state))
        super().__init__([widgets.HBox([self.stop, self.status]), self.chat], **kwargs)
        self.add_class("rtw-live")

    def start(self) -> asyncio.Future:
        """Run the turn as a task on the running event loop; return the task."""
        if self._task is None:
            self._task = asyncio.ensure_future(self.turn.run())
            self._ticker = asyncio.ensure_future(self._tick())
            self._say("streaming…")
            self._task.add_done_callback(self._finished)
        return self._task

    async def _tick(self) -> None:
        """Redraw at the turn's current time while it runs (the stall banner's clock)."""
        while self._task is not None and not self._task.done():
            await asyncio.sleep(self.tick_s)
            if self._task.done():
                break
            try:
                self.chat.show(self.turn.state, now_ms=self.turn.now_ms())
            except AttributeError:          # the turn's clock has not started yet
                continue

    async def done(self) -> LiveResult:
        """The turn's result, once it has ended."""
        return await self.start()

    def press_stop(self) -> None:
        """What the Stop button does: cancel the turn."""
        self.turn.cancel("stopped by the user (Stop)")
        self.stop.disabled = True
        self._say("stopping…")

    def _update(self, state: TurnState) -> None:
        self.chat.show(state, now_ms=self.turn.now_ms())
        retrying = retry_words(self.turn.attempts)
        if retrying:
            self._say(retrying)

    def _finished(self, task: asyncio.Future) -> None:
        self.stop.disabled = True
        if self._ticker is not None:
            self._ticker.cancel()
        if task.cancelled() or task.exception() is not None:
            self._say(f"the loop itself failed: {task.exception()!r}")
        else:
            self._say(f"ended: {task.result().outcome}")

    def _say(self, words: str) -> None:
        self.status.value = f'<span class="rtw-live-status" aria-live="polite">{esc(words)}</span>'

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_(**kwargs) or {}
        data = bundle[0] if isinstance(bundle, tuple) else bundle
        data["text/plain"] = self.chat.text or "(the live turn: nothing drawn yet)"
        return bundle


def retry_words(attempts: list[Any]) -> str | None:
    """The status line while a step is retried or resumed: which attempt, why the last one
    ended, and what the user sees of it (None when the current attempt is a step's first)."""
    if not attempts or attempts[-1].number == 1:
        return None
    current = attempts[-1]
    failed = next((a for a in reversed(attempts[:-1]) if a.step == current.step), None)
    why = failed.summary().split(": ", 1)[1] if failed is not None else "it failed"
    if current.resumed_after is not None:
        # A resume asks for the rest of the same stream: nothing is drawn again.
        why = why.partition("; resumed after ")[0]
        return (f"resuming step {current.step} after {current.resumed_after} (attempt "
                f"{current.number}): the last attempt ended with {why}. What it drew "
                "stays; the rest of the stream is drawn after it, nothing twice")
    return (f"retrying step {current.step} (attempt {current.number}): the last attempt "
            f"ended with {why}. What it drew is drawn again as the retry arrives; a tool "
            "that had finished is not run again")
