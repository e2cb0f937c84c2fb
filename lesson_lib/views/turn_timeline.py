"""The agent loop on one clock: the streams' arrival timeline with the tools' runs over it.

Lesson 4's point drawn: a tool starts the moment its call is ready, while
the stream goes on, so its bar overlaps the stream's. Each step's stream is
a lane whose marks are its fragments as they arrived (text, reasoning, tool
input: the same shapes as the event table's glyphs) with a tick where each
call became ready; each tool run is a bar in its own lane, from its start to
its end on the loop's virtual clock, labelled literally with the call
(``get_weather(Paris, France)``) and how long before its stream ended it
started. A bar's status is said by its hatching and its label, not only its
colour. Labels are data: they are drawn as text, never as mathtext, so a
``$`` in a tool's input is a dollar sign.

`tool_timeline_figure` returns a plain `matplotlib.figure.Figure` (not
registered with pyplot; same pixels every run); `tool_timeline_text` says
the same in words, for readers who cannot see the image and for tests.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .html import KIND_STYLES
from .palette import OKABE_ITO
from .timeline_plot import _show_as_png

# How each tool outcome looks: colour, hatching (the non-colour cue), word.
RUN_STYLES: dict[str, tuple[str, str, str]] = {
    "ok": (OKABE_ITO["blue"], "", "done"),
    "error": (OKABE_ITO["vermillion"], "xx", "failed"),
    "denied": (OKABE_ITO["reddish purple"], "..", "denied"),
    "interrupted": (OKABE_ITO["yellow"], "//", "interrupted"),
}
_DELTA_KIND = {"text": "text delta", "reasoning": "reasoning delta", "tool_call": "tool-args delta"}
LABEL_LIMIT = 40      # characters of a call's label


def run_label(run: Any, limit: int = LABEL_LIMIT) -> str:
    """A tool run as a call: ``get_weather(Paris, France)`` (its first input value)."""
    value = run.input
    if isinstance(value, dict):
        first = next((v for v in value.values() if isinstance(v, (str, int, float))), None)
        inner = "" if first is None else str(first)
    else:
        inner = "" if value is None else str(value)
    label = f"{run.name or '(no name)'}({inner})"
    return label if len(label) <= limit else label[:limit - 2] + "…)"


def _seconds(ms: float) -> str:
    return f"{ms / 1000:.1f} s" if ms >= 100 else f"{ms:.0f} ms"


def head_start_words(head: float) -> str:
    """How long before its stream ended a tool started, in words."""
    if head > 0.5:
        return f"started {_seconds(head)} before the stream ended"
    if head < -0.5:
        return f"started {_seconds(-head)} after the stream ended"
    return "started as the stream ended"


def _block_kinds(events: list) -> dict[str, str]:
    return {e.block: e.block_kind for e in events if e.kind == "block_started"}


def tool_timeline_text(result: Any) -> str:
    """The figure in words: each stream's span, each tool's run and its head start."""
    lines = []
    for step, start, end in result.streams:
        lines.append(f"step {step}: stream from {start:,.0f} ms to {end:,.0f} ms")
    for run, head in result.head_start():
        _, _, word = RUN_STYLES.get(run.status, RUN_STYLES["ok"])
        lines.append(f"  {run_label(run)}: step {run.step}, {run.start:,.0f}–{run.end:,.0f} ms, "
                     f"{word}, {head_start_words(head)}")
    return "\n".join(lines) if lines else "No stream was played."


class _Lanes:
    """The figure's rows, top to bottom in reading order: each step's stream, then each run."""

    def __init__(self, result: Any, runs: list) -> None:
        self.names: list[str] = []
        self.of_step: dict[int, int] = {}
        for step, _, _ in result.streams:
            self.of_step[step] = len(self.names)
            self.names.append(f"step {step} stream")
        self.first_run = len(self.names)
        self.names += [run_label(run) for run, _ in runs]
        self.top = len(self.names) - 1

    def y(self, lane: int) -> int:
        """The lane's height on the axes: the first lane is drawn highest."""
        return self.top - lane

    def y_of_block(self, block: str) -> int | None:
        """The height of the stream lane a block's step is drawn in (None: no such lane)."""
        step = int(block[1:].split(".", 1)[0]) if block.startswith("s") else 1
        return self.y(self.of_step[step]) if step in self.of_step else None


def _draw_streams(ax: Any, result: Any, lanes: _Lanes) -> None:
    for step, start, end in result.streams:
        ax.broken_barh([(start, max(end - start, 1.0))], (lanes.y(lanes.of_step[step]) - 0.3, 0.6),
                       facecolors="#dddddd", edgecolor="#777777", linewidth=0.6, zorder=1)
        ax.axvline(end, color="#444444", linestyle="--", linewidth=0.8, zorder=2)


def _draw_deltas(ax: Any, result: Any, lanes: _Lanes) -> set[str]:
    """Each fragment as a mark on its step's lane; returns the kinds drawn (for the legend)."""
    kinds = _block_kinds(result.events)
    used: set[str] = set()
    for kind_name in ("text delta", "reasoning delta", "tool-args delta"):
        xs, ys = [], []
        for e in result.events:
            if e.kind == "block_delta" and e.t is not None and \
                    _DELTA_KIND.get(kinds.get(e.block, ""), "") == kind_name:
                y = lanes.y_of_block(e.block)
                if y is not None:
                    xs.append(e.t)
                    ys.append(y)
        if xs:
            style = KIND_STYLES[kind_name]
            ax.scatter(xs, ys, marker=style.marker, s=22, facecolor=style.colour,
                       edgecolor="black", linewidth=0.4, zorder=3)
            used.add(kind_name)
    return used


def _draw_ready_ticks(ax: Any, result: Any, lanes: _Lanes) -> bool:
    """A tick where each call became ready; returns whether any was drawn."""
    ready = [(e.t, e.block) for e in result.events if e.kind == "tool_call_ready"
             and e.t is not None]
    for t, block in ready:
        y = lanes.y_of_block(block)
        if y is not None:
            ax.plot([t, t], [y - 0.42, y + 0.42], color="black", linewidth=1.6, zorder=4)
    return bool(ready)


def _draw_runs(ax: Any, runs: list, lanes: _Lanes) -> None:
    for n, (run, head) in enumerate(runs):
        colour, hatch, word = RUN_STYLES.get(run.status, RUN_STYLES["ok"])
        lane = lanes.y(lanes.first_run + n)
        ax.broken_barh([(run.start, max(run.end - run.start, 1.0))], (lane - 0.3, 0.6),
                       facecolors=colour, edgecolor="black", hatch=hatch or None,
                       linewidth=0.8, zorder=3)
        if run.step in lanes.of_step:       # from the stream, where the call became ready
            ax.plot([run.start, run.start], [lane + 0.3, lanes.y(lanes.of_step[run.step]) - 0.3],
                    color="#444444", linestyle=":", linewidth=1.0, zorder=2)
        ax.text(run.end, lane, f"  {word}, {head_start_words(head)}", va="center",
                ha="left", fontsize=8, parse_math=False, zorder=5)


def _name_lanes(ax: Any, lanes: _Lanes) -> None:
    # Lane names as plain texts (tick labels are remade at draw time, with mathtext on).
    ax.set_yticks([lanes.y(i) for i in range(len(lanes.names))], [""] * len(lanes.names))
    for i, name in enumerate(lanes.names):
        ax.text(-0.01, lanes.y(i), name, transform=ax.get_yaxis_transform(), ha="right",
                va="center", fontsize=10, parse_math=False)
    ax.set_ylim(-0.7, lanes.top + 0.7)


def _legend(fig: Figure, runs: list, used: set[str], any_ready: bool) -> None:
    handles = [Patch(facecolor="#dddddd", edgecolor="#777777", label="stream (dashed line: "
                     "its end)")]
    handles += [Patch(facecolor=KIND_STYLES[k].colour, edgecolor="black", label=k)
                for k in ("text delta", "reasoning delta", "tool-args delta") if k in used]
    statuses = {r.status for r, _ in runs}
    handles += [Patch(facecolor=c, edgecolor="black", hatch=h or None, label=f"tool {w}")
                for s, (c, h, w) in RUN_STYLES.items() if s in statuses]
    if any_ready:
        handles.append(Patch(facecolor="black", label="call ready (tick)"))
    fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)


def tool_timeline_figure(result: Any, *, title: str | None = None,
                         figsize: tuple[float, float] = (9.0, 3.6)) -> Figure:
    """The arrival timeline of the loop's stream(s), with each tool's run as a bar over it.

    `result` is the agent loop's `LoopResult` (`lesson_lib.turn.loop.run_turn`).
    """
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    runs = result.head_start()
    lanes = _Lanes(result, runs)
    _draw_streams(ax, result, lanes)
    used = _draw_deltas(ax, result, lanes)
    any_ready = _draw_ready_ticks(ax, result, lanes)
    _draw_runs(ax, runs, lanes)
    _name_lanes(ax, lanes)
    ends = [end for _, _, end in result.streams] + [r.end for r, _ in runs]
    if ends:
        ax.set_xlim(0, max(ends) * 1.35 + 1)
    ax.set_xlabel("time on the loop's virtual clock (ms from the turn's start)")
    ax.grid(axis="x", linestyle=":", linewidth=0.6)
    _legend(fig, runs, used, any_ready)
    if title:
        ax.set_title(title, fontsize=10, loc="left").set_parse_math(False)
    if not lanes.names:
        ax.text(0.5, 0.5, "no stream was played", transform=ax.transAxes, ha="center",
                va="center")
    _show_as_png()
    return fig
