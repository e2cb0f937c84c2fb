"""The replay player: step through a capture event by event, or play it in recorded time.

`Player` is core ipywidgets (a Dropdown, buttons, a speed switch, an
IntSlider, HTML) around renderer functions it knows nothing about: each pane
is ``pane(capture, index) -> HTML`` with a name (see `views.panes`). Lesson 1
passes the event table and the raw bytes; later lessons add their own panes
and a richer `labeller` for the counter.

- It never plays on its own: nothing moves until Play is pressed or the
  index is set.
- Playback follows the capture's recorded arrival times: the wait before
  event *i* is ``t[i] - t[i-1]`` (200 ms when the capture has no timing),
  divided by the speed, in a background thread of the kernel. "instant"
  jumps to the last event. Pause stops the thread at once.
- Every control has a description and a tooltip and a stable CSS class
  (``rtw-play``, ``rtw-step-forward``...), so tests and a browser can find it;
  the counter beside the slider is a polite ``aria-live`` region.
- In a notebook, animate by setting ``player.index`` and end with
  ``print(player.render_text())``: that text is deterministic. Where no
  widget can be shown (GitHub, nbconvert, an untrusted notebook), the
  ``text/plain`` and ``text/html`` fallbacks show the current state.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import ipywidgets as widgets

from ..capture import captures as captures_mod
from ..capture.captures import Capture
from .chat_pane import ChatPane
from .html import STYLE, counter_html, esc, page
from .panes import Pane, RawBytesPane, TablePane, clamp, default_labeller

SPEEDS: tuple[tuple[str, float], ...] = (("0.25x", 0.25), ("1x", 1.0), ("4x", 4.0),
                                         ("instant", math.inf))
UNTIMED_GAP_MS = 200.0

Labeller = Callable[[Capture, int], str]
CSS_CLASSES = {
    "player": "rtw-player", "picker": "rtw-picker", "play": "rtw-play",
    "back": "rtw-step-back", "forward": "rtw-step-forward", "reset": "rtw-reset",
    "speed": "rtw-speed", "slider": "rtw-slider", "counter": "rtw-counter",
    "pane": "rtw-pane-view", "current_row": "rtw-current-row",
}


def default_panes() -> list[Pane | Any]:
    """The event table window and the raw bytes of the current event (lesson 1), and the
    chat as its user would see it (lesson 6's drawing)."""
    return [TablePane(), RawBytesPane(), ChatPane()]


# The live widget only (the static HTML has no widget boxes): a pane never grows wider
# than the output area; a table wider than the pane scrolls inside it.
PANE_FIT = ("<style>.rtw-pane-view { max-width: 100%; }"
            " .rtw-pane-view > .widget-html-content { min-width: 0; overflow-x: auto; }</style>")


class Player(widgets.VBox):
    """Replay a capture: pick, play / pause, step, speed, reset, and a slider over events.

    `captures`: capture objects, corpus names, or a mapping of name -> capture;
    by default the project's corpus. `capture`: the one to show first (a
    capture or a name). `panes`: renderers (see `views.panes.Pane`); by default
    the event table and the raw bytes. `labeller(capture, index) -> str`: the
    counter's text. `sleep(seconds)`: how to wait between events (tests pass a
    fake; by default an interruptible wait).
    """

    def __init__(self, captures: Iterable[Capture | str] | Mapping[str, Capture] | None = None,
                 panes: Sequence[Any] | None = None, labeller: Labeller | None = None,
                 capture: Capture | str | None = None, *,
                 sleep: Callable[[float], Any] | None = None) -> None:
        self._captures = _collect(captures)
        first = self._resolve(capture) if capture is not None else next(iter(self._captures), None)
        if first is None:
            raise ValueError("Player needs at least one capture (the corpus is empty)")
        self._capture = self._captures[first]
        self.panes = [_as_pane(p) for p in (default_panes() if panes is None else panes)]
        self.labeller = labeller or default_labeller
        self._sleep = sleep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._quiet = False
        self.steps_rendered = 0   # how many times the panes were rendered (tests read it)

        self.picker = widgets.Dropdown(
            options=list(self._captures), value=first, description="Capture",
            tooltip="Choose the recorded stream to replay",
            layout=widgets.Layout(width="460px"))
        self.play_button = widgets.ToggleButton(
            value=False, description="Play", icon="play",
            tooltip="Play the events with their recorded timing; press again to pause")
        self.back_button = widgets.Button(description="Back", icon="step-backward",
                                          tooltip="Step back one event")
        self.forward_button = widgets.Button(description="Forward", icon="step-forward",
                                             tooltip="Step forward one event")
        self.reset_button = widgets.Button(description="Reset", icon="undo",
                                           tooltip="Stop and go back to the first event")
        self.speed = widgets.ToggleButtons(
            options=list(SPEEDS), value=1.0, description="Speed",
            tooltips=["a quarter of recorded speed", "recorded speed", "four times faster",
                      "jump straight to the last event"])
        self.slider = widgets.IntSlider(
            value=0, min=0, max=max(0, len(self._capture.events) - 1), description="Event",
            tooltip="The event index, from 0 like the table's seq column",
            continuous_update=True,
            # Grows with the room it has (a 1,400-event capture needs the width), and
            # never shrinks below a usable length when the counter is long.
            layout=widgets.Layout(flex="1 1 560px", min_width="360px", width="auto"))
        self.counter = widgets.HTML(tooltip="Where the replay is",
                                    layout=widgets.Layout(flex="0 1 auto", max_width="100%"))
        self.pane_views = [widgets.HTML() for _ in self.panes]

        for widget, name in ((self.picker, "picker"), (self.play_button, "play"),
                             (self.back_button, "back"), (self.forward_button, "forward"),
                             (self.reset_button, "reset"), (self.speed, "speed"),
                             (self.slider, "slider"), (self.counter, "counter")):
            widget.add_class(CSS_CLASSES[name])
        for view, pane in zip(self.pane_views, self.panes, strict=True):
            view.add_class(CSS_CLASSES["pane"])
            view.add_class("rtw-pane-view-" + _slug(pane.name))

        self.picker.observe(self._on_pick, "value")
        self.play_button.observe(self._on_play, "value")
        self.back_button.on_click(lambda _: self.step(-1))
        self.forward_button.on_click(lambda _: self.step(1))
        self.reset_button.on_click(lambda _: self.reset())
        self.speed.observe(self._on_speed, "value")
        self.slider.observe(lambda _: self._render(), "value")

        controls = widgets.HBox([self.back_button, self.play_button, self.forward_button,
                                 self.reset_button])
        super().__init__([widgets.HTML(STYLE + PANE_FIT), self.picker, controls, self.speed,
                          widgets.HBox([self.slider, self.counter],
                                       layout=widgets.Layout(flex_flow="row wrap",
                                                             align_items="center",
                                                             width="100%")),
                          *self.pane_views])
        self.add_class(CSS_CLASSES["player"])
        self._render()

    # -- what is shown ----------------------------------------------------------

    @property
    def capture(self) -> Capture:
        """The capture being replayed."""
        return self._capture

    @property
    def index(self) -> int:
        """The current event index (0-based, like the table's ``seq``)."""
        return int(self.slider.value)

    @index.setter
    def index(self, value: int) -> None:
        self.slider.value = clamp(value, self._capture)

    @property
    def last(self) -> int:
        """The index of the last event (0 when there are none)."""
        return max(0, len(self._capture.events) - 1)

    @property
    def playing(self) -> bool:
        """True while the playback thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def label(self) -> str:
        """The counter's text for the current index."""
        if not self._capture.events:
            return default_labeller(self._capture, 0)
        return self.labeller(self._capture, self.index)

    # -- controls, from code ---------------------------------------------------------

    def select(self, capture: Capture | str) -> None:
        """Show another capture (a name from the picker, or a capture object)."""
        known = len(self._captures)
        key = self._resolve(capture)
        if len(self._captures) != known:
            self.picker.options = list(self._captures)
        self.picker.value = key

    def _resolve(self, capture: Capture | str) -> str:
        """The picker key for a capture or a name, adding it to the picker when new."""
        if isinstance(capture, Capture):
            if self._captures.get(capture.key) is not capture:
                self._captures.setdefault(capture.key, capture)
            return capture.key
        name = str(capture)
        if name in self._captures:
            return name
        matches = [k for k in self._captures if k.rsplit("/", 1)[-1] == name]
        if len(matches) == 1:
            return matches[0]
        cap = captures_mod.load(name)
        self._captures.setdefault(cap.key, cap)
        return cap.key

    def step(self, n: int = 1) -> None:
        """Move `n` events (negative: back), stopping playback first."""
        self.pause()
        self.index = self.index + n

    def reset(self) -> None:
        """Stop and return to the first event."""
        self.pause()
        self.index = 0

    def start(self) -> None:
        """Start playing (the same as pressing Play)."""
        self.play_button.value = True

    def pause(self) -> None:
        """Stop playing (the same as pressing Pause)."""
        self._stop.set()
        self.play_button.value = False

    def join(self, timeout: float | None = 10.0) -> None:
        """Wait for the playback thread to finish (tests use this)."""
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout)

    def pause_before(self, index: int) -> float:
        """The recorded wait before event `index`, in ms (200 ms when untimed), read
        from the events' own arrival times."""
        if index <= 0:
            return 0.0
        events = self._capture.events
        now, before = events[index].t, events[index - 1].t
        if now is None or before is None or math.isnan(now) or math.isnan(before):
            return UNTIMED_GAP_MS
        return max(0.0, float(now - before))

    # -- reading the state --------------------------------------------------------

    def state(self) -> dict[str, Any]:
        """The player's state as plain data (deterministic: safe to print in a notebook)."""
        return {"capture": self._capture.key, "index": self.index,
                "events": len(self._capture.events), "speed": self._speed_label(),
                "playing": self.playing, "label": self.label()}

    def render_text(self) -> str:
        """The counter, then each pane's plain-text view of the current event."""
        lines = [f"{self._capture.key}: {self.label()}"]
        for pane in self.panes:
            text = getattr(pane, "text", None)
            if callable(text):
                lines += ["", f"[{pane.name}]", text(self._capture, self.index)]
        return "\n".join(lines)

    def render_html(self) -> str:
        """A static HTML copy of the current view (what GitHub and nbconvert show)."""
        body = [f'<div class="rtw-note">Replay player, static copy: {esc(self._capture.key)}. '
                "Run the notebook to use the controls.</div>",
                counter_html(self.label())]
        body += [pane(self._capture, self.index) for pane in self.panes]
        return page('<div class="rtw-player" role="group" aria-label="Replay player">'
                    + "".join(body) + "</div>")

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        data = super()._repr_mimebundle_(**kwargs) or {}
        lines = [f"{self._capture.key}: {self.label()}"]
        first = self.panes[0] if self.panes else None
        if first is not None and callable(getattr(first, "text", None)):
            lines.append(first.text(self._capture, self.index))
        data["text/plain"] = "\n".join(lines)
        data["text/html"] = self.render_html()
        return data

    # -- behind the controls ----------------------------------------------------------

    def _render(self) -> None:
        if self._quiet:
            return
        self.counter.value = counter_html(self.label())
        for view, pane in zip(self.pane_views, self.panes, strict=True):
            view.value = pane(self._capture, self.index)
        self.steps_rendered += 1

    def _speed_label(self) -> str:
        return next(label for label, value in SPEEDS if value == self.speed.value)

    def _on_pick(self, change: dict) -> None:
        self.pause()
        self.join(1.0)
        self._capture = self._captures[change["new"]]
        self._quiet = True
        try:
            self.slider.value = 0
            self.slider.max = self.last
        finally:
            self._quiet = False
        self._render()

    def _on_speed(self, change: dict) -> None:
        if math.isinf(change["new"]) and self.play_button.value:
            self.pause()
            self.index = self.last

    def _on_play(self, change: dict) -> None:
        if not change["new"]:
            self._stop.set()
            self.play_button.description, self.play_button.icon = "Play", "play"
            return
        if math.isinf(self.speed.value):
            self.index = self.last
            self.play_button.value = False
            return
        self.play_button.description, self.play_button.icon = "Pause", "pause"
        if self.index >= self.last:
            self.index = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(self._stop, self._capture),
                                        name="rtw-player", daemon=True)
        self._thread.start()

    def _run(self, stop: threading.Event, capture: Capture) -> None:
        while not stop.is_set() and self._capture is capture and self.index < self.last:
            speed = self.speed.value
            if math.isinf(speed):
                self.index = self.last
                break
            wait = self.pause_before(self.index + 1) / 1000.0 / speed
            if self._sleep is not None:
                self._sleep(wait)
            else:
                stop.wait(wait)
            if stop.is_set() or self._capture is not capture:
                return
            self.index = self.index + 1
        if not stop.is_set():
            stop.set()
            self.play_button.value = False


def _collect(captures: Iterable[Capture | str] | Mapping[str, Capture] | None
             ) -> dict[str, Capture]:
    if captures is None:
        items: Iterable[Any] = captures_mod.corpus()
    elif isinstance(captures, Mapping):
        items = list(captures.items())
    else:
        items = captures
    found: dict[str, Capture] = {}
    for item in items:
        if isinstance(item, tuple):
            key, cap = item
        elif isinstance(item, Capture):
            key, cap = item.key, item
        else:
            cap = captures_mod.load(item)
            key = cap.key
        found.setdefault(key, cap)
    return found


def _as_pane(pane: Any) -> Any:
    if isinstance(pane, tuple):
        name, render = pane
        return Pane(name, render)
    if hasattr(pane, "name") and callable(pane):
        return pane
    if callable(pane):
        return Pane(getattr(pane, "__name__", "pane").replace("_", " "), pane)
    raise TypeError(f"a pane is a renderer (capture, index) -> HTML, not {pane!r}")


def _slug(name: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")
