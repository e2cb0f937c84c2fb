"""Lesson 5's fault lab: pick a capture and a fault, move one slider, watch every layer.

The lab breaks a good capture with `lesson_lib.breaks.faults` (where the slider
says: a byte, an event, a chunk) and shows, side by side, the event table,
the slots and the turn state with its outcome banner, all after the last
event that arrived. `fault_lab_html` and `fault_lab_text` are the plain
renderers; `FaultLab` is the thin widget over them, with the same reprs.
Its "Save as capture" button keeps the broken stream as a capture of its
own (`lesson_lib.breaks.save`: ``my-work/captures/`` in the learner's folder).

The lab is given captures because a fault breaks bytes; past the fault, the
turn is reduced once and its pane is handed the state (`TurnPane.render`).

`honesty` is the lab's promise as data: for each capture and each fault that
kills the stream, the outcome the turn gets; none of them may say ``completed``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape

from ..breaks import budget, faults
from ..breaks import save as fault_save
from ..capture.captures import Capture
from ..turn.run import turn_state
from ..turn.summary import outcome_line
from ..wires.wire_events import parse_all
from . import SlotPane  # through the package: views do not import each other's modules
from .html import counter_html
from .panes import TablePane
from .turn_view import TurnPane

SLIDER_MAX = 100    # the slider is a position through the stream, in percent


def _event_at(capture: Capture, percent: int) -> int:
    n = len(parse_all(capture.events))
    return max(0, min(n - 1, (n - 1) * percent // SLIDER_MAX))


def _content_event_at(capture: Capture, percent: int) -> int:
    """Among the events that carry content characters, the one at `percent`."""
    found = sorted({d.event for d in budget.deltas(parse_all(capture.events), capture.wire or "")
                    if d.text})
    if not found:
        raise faults.FaultError(f"{capture.key}: no event carries content to corrupt")
    return found[(len(found) - 1) * percent // SLIDER_MAX]


def _chunk_at(capture: Capture, percent: int) -> int | None:
    n = len(capture.sidecar.get("chunks") or [])
    return max(0, (n - 1) * percent // SLIDER_MAX) if n else None


# fault name -> (what the slider means, how to apply it at a percent)
FAULTS: dict[str, tuple[str, Callable[[Capture, int], Capture]]] = {
    "none": ("nothing", lambda c, p: c),
    "cut_at": ("the byte the connection dies at",
               lambda c, p: faults.cut_at(c, max(0, len(c.body) - 1) * p // SLIDER_MAX)),
    "inject_error": ("the event the in-band error follows",
                     lambda c, p: faults.inject_error(c, _event_at(c, p))),
    "drop_terminal": ("nothing (the terminal event is dropped)",
                      lambda c, p: faults.drop_terminal(c)),
    "corrupt_json": ("the content event whose JSON is damaged",
                     lambda c, p: faults.corrupt_json(c, _content_event_at(c, p))),
    "split_character": ("nothing (the first multi-byte character is split)",
                        lambda c, p: faults.split_character(c)),
    "stall": ("the chunk after which the stream goes silent for 25 s",
              lambda c, p: faults.stall(c, 25_000, _chunk_at(c, p))),
    "duplicate": ("the event that arrives twice",
                  lambda c, p: faults.duplicate(c, _event_at(c, p))),
    "swap": ("the event swapped with the next",
             lambda c, p: faults.swap(c, min(_event_at(c, p), max(0, len(c.events) - 2)))),
}

# The faults after which the stream is dead: the turn must never say completed.
DEADLY = ("cut_at", "inject_error", "drop_terminal", "corrupt_json")


@dataclass(frozen=True)
class Broken:
    """A capture after a fault: the faulted capture, or why the fault does not apply."""

    capture: Capture
    fault: str
    percent: int
    refused: str | None = None


def apply_fault(capture: Capture, fault: str, percent: int) -> Broken:
    """The capture broken by `fault` at `percent` of the stream (the original if it refuses)."""
    if fault not in FAULTS:
        return Broken(capture, fault, percent, refused=f"no fault named {fault!r}")
    percent = max(0, min(SLIDER_MAX, int(percent)))
    try:
        return Broken(FAULTS[fault][1](capture, percent), fault, percent)
    except faults.FaultError as error:
        return Broken(capture, fault, percent, refused=str(error))


_TABLE, _SLOTS, _TURN = TablePane(window=9), SlotPane(), TurnPane()


def _last(capture: Capture) -> int:
    return max(0, len(capture.events) - 1)


def _headline(capture: Capture, broken: Broken) -> str:
    what = FAULTS.get(broken.fault, ("?",))[0]
    head = f"{capture.key} · fault {broken.fault} at {broken.percent}% ({what})"
    if broken.refused:
        return f"{head} · not applied: {broken.refused}"
    demo = broken.capture.sidecar.get("demonstrates") if broken.fault != "none" else None
    return f"{head} · {demo}" if demo else head


def fault_lab_text(capture: Capture, fault: str, percent: int) -> str:
    """The lab as plain text: the fault, the events that arrived, and the outcome line."""
    broken = apply_fault(capture, fault, percent)
    state = turn_state(broken.capture, route="auto")
    return "\n".join([_headline(capture, broken),
                      f"{len(broken.capture.events)} events arrived "
                      f"(of {len(capture.events)})",
                      outcome_line(state, glyph=False)])


# How each pane takes the width: the event table gets a row of its own (its columns
# need it); the slots and the turn share the next row, and stack when it is narrow.
# `min-width:0` lets a pane be narrower than its widest line (which then wraps or
# scrolls inside the pane): the lab never grows wider than the output area.
_PANE_STYLE = ("flex:1 1 100%;min-width:0;max-width:100%;overflow-x:auto",
               "flex:1 1 320px;min-width:0;max-width:100%;overflow-x:auto",
               "flex:1 1 320px;min-width:0;max-width:100%;overflow-x:auto")


def fault_lab_html(capture: Capture, fault: str, percent: int) -> str:
    """The lab as HTML: headline, then the event table, slots and turn, wrapping to fit.

    The root says what it shows (``data-capture``, ``data-fault``,
    ``data-percent``), so a test can check that the view follows the controls.
    """
    broken = apply_fault(capture, fault, percent)
    faulted, last = broken.capture, _last(broken.capture)
    panes = [_TABLE(faulted, last), _SLOTS(faulted, last),
             _TURN.render(turn_state(faulted, route="auto"))]
    cells = "".join(f'<div class="rtw-fault-lab-pane" style="{style}">{p}</div>'
                    for style, p in zip(_PANE_STYLE, panes, strict=True))
    return (f'<div class="rtw-fault-lab" data-capture="{escape(capture.key)}" '
            f'data-fault="{escape(fault)}" data-percent="{broken.percent}" '
            f'style="max-width:100%;min-width:0">{counter_html(_headline(capture, broken))}'
            f'<div style="display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start">'
            f'{cells}</div></div>')


class FaultLab:
    """The fault lab widget: a capture picker, a fault picker and one slider, never autoplayed."""

    def __init__(self, captures: Iterable[Capture], fault: str = "cut_at",
                 percent: int = 50, folder=None) -> None:
        import ipywidgets as w
        self.folder = folder            # None: fault_save.default_folder()
        self.captures = {c.key: c for c in captures}
        if not self.captures:
            raise ValueError("the fault lab needs at least one capture")
        self.capture = w.Dropdown(options=list(self.captures), description="Capture",
                                  tooltip="the good capture to break")
        self.fault = w.Dropdown(options=list(FAULTS), value=fault, description="Fault",
                                tooltip="what goes wrong in transit")
        self.slider = w.IntSlider(value=percent, min=0, max=SLIDER_MAX,
                                  description="Where (%)",
                                  tooltip="where in the stream the fault strikes")
        self.view = w.HTML(self._html(), layout=w.Layout(max_width="100%"))
        for control in (self.capture, self.fault, self.slider):
            control.observe(self._update, names="value")
        self.name = w.Text(value="", placeholder="name (default: from the fault)",
                           description="Name", tooltip="the saved capture's file name")
        self.overwrite = w.Checkbox(value=False, description="Overwrite",
                                    tooltip="replace a saved capture of the same name")
        self.save_button = w.Button(description="Save as capture", icon="save",
                                    tooltip="write the broken stream as a capture of its own")
        self.saved = w.HTML("", layout=w.Layout(min_height="1.5em"))
        self.save_button.on_click(lambda _button: self.save())
        wrap = w.Layout(flex_flow="row wrap", max_width="100%")   # controls wrap, never clip
        self.widget = w.VBox([w.HBox([self.capture, self.fault, self.slider], layout=wrap),
                              self.view,
                              w.HBox([self.name, self.overwrite, self.save_button],
                                     layout=w.Layout(flex_flow="row wrap", max_width="100%")),
                              self.saved], layout=w.Layout(max_width="100%"))

    def _current(self) -> tuple[Capture, str, int]:
        return self.captures[self.capture.value], self.fault.value, self.slider.value

    def _html(self) -> str:
        return fault_lab_html(*self._current())

    def _update(self, _change=None) -> None:
        """Redraw from the controls' values now (not the change's), so that however
        quickly they move, the view ends on what they say; a failure to draw is shown
        in the view, never left behind a stale one."""
        try:
            self.view.value = self._html()
        except Exception as error:      # noqa: BLE001 - shown to the learner, not swallowed
            capture, fault, percent = self._current()
            self.view.value = (
                f'<div class="rtw-fault-lab" data-capture="{escape(capture.key)}" '
                f'data-fault="{escape(fault)}" data-percent="{percent}">'
                + counter_html(f"{capture.key} · fault {fault} at {percent}%: the lab could "
                               f"not draw this: {type(error).__name__}: {error}") + "</div>")

    def state(self):
        """The turn state the lab shows now."""
        capture, fault, percent = self._current()
        return turn_state(apply_fault(capture, fault, percent).capture, route="auto")

    def save(self, name: str | None = None, overwrite: bool | None = None):
        """Save what the lab shows now as a capture of its own; the `fault_save.Saved`.

        `name` and `overwrite` default to the widget's own fields; the result
        is shown under the button (where it went, or why it did not).
        """
        capture, fault, percent = self._current()
        broken = apply_fault(capture, fault, percent)
        name = name if name is not None else (self.name.value.strip() or None)
        overwrite = self.overwrite.value if overwrite is None else overwrite
        saved = fault_save.save(capture, broken.capture, name, folder=self.folder,
                                overwrite=overwrite)
        self.saved.value = (f'<span role="status" aria-live="polite">'
                            f'{"✔" if saved.ok else "✖"} {escape(str(saved))}</span>')
        return saved

    def text(self) -> str:
        """What the lab shows now, as plain text."""
        return fault_lab_text(*self._current())

    def __repr__(self) -> str:
        return self.text()

    def _repr_html_(self) -> str:
        return self._html()

    def _repr_mimebundle_(self, **kwargs):
        """The live widget where a frontend runs it; its text and HTML everywhere else."""
        data = self.widget._repr_mimebundle_(**kwargs) or {}
        data["text/plain"] = self.text()
        data["text/html"] = self._html()
        return data


def honesty(captures: Iterable[Capture], percents: Iterable[int] = (25, 50, 90)
            ) -> dict[str, dict[str, int]]:
    """For each deadly fault, how often each outcome came out over `captures` and `percents`."""
    out: dict[str, dict[str, int]] = {name: {} for name in DEADLY}
    for capture in captures:
        for name in DEADLY:
            for percent in percents:
                broken = apply_fault(capture, name, percent)
                if broken.refused:
                    continue
                outcome = turn_state(broken.capture, route="auto").outcome or "none"
                out[name][outcome] = out[name].get(outcome, 0) + 1
    return out


__all__ = ["DEADLY", "FAULTS", "FaultLab", "apply_fault", "fault_lab_html", "fault_lab_text",
           "honesty"]
