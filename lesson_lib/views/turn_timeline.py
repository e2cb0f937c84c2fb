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


def tool_timeline_figure(result: Any, *, title: str | None = None,
                         figsize: tuple[float, float] = (9.0, 3.6)) -> Figure:
    """The arrival timeline of the loop's stream(s), with each tool's run as a bar over it.

    `result` is the agent loop's `LoopResult` (`lesson_lib.turn.loop.run_turn`).
    """
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    kinds = _block_kinds(result.events)
    runs = result.head_start()
    lanes: list[str] = []
    y_of_step: dict[int, int] = {}
    for step, _, _ in result.streams:
        y_of_step[step] = len(lanes)
        lanes.append(f"step {step} stream")
    first_run_lane = len(lanes)
    lanes += [run_label(run) for run, _ in runs]
    # Top to bottom in reading order: the first lane is drawn highest.
    top = len(lanes) - 1

    def y(lane: int) -> int:
        return top - lane

    for step, start, end in result.streams:
        ax.broken_barh([(start, max(end - start, 1.0))], (y(y_of_step[step]) - 0.3, 0.6),
                       facecolors="#dddddd", edgecolor="#777777", linewidth=0.6, zorder=1)
        ax.axvline(end, color="#444444", linestyle="--", linewidth=0.8, zorder=2)
    used: set[str] = set()
    for kind_name in ("text delta", "reasoning delta", "tool-args delta"):
        xs, ys = [], []
        for e in result.events:
            if e.kind == "block_delta" and e.t is not None and \
                    _DELTA_KIND.get(kinds.get(e.block, ""), "") == kind_name:
                step = int(e.block[1:].split(".", 1)[0]) if e.block.startswith("s") else 1
                if step in y_of_step:
                    xs.append(e.t)
                    ys.append(y(y_of_step[step]))
        if xs:
            style = KIND_STYLES[kind_name]
            ax.scatter(xs, ys, marker=style.marker, s=22, facecolor=style.colour,
                       edgecolor="black", linewidth=0.4, zorder=3)
            used.add(kind_name)
    ready = [(e.t, e.block) for e in result.events if e.kind == "tool_call_ready"
             and e.t is not None]
    for t, block in ready:
        step = int(block[1:].split(".", 1)[0]) if block.startswith("s") else 1
        if step in y_of_step:
            ax.plot([t, t], [y(y_of_step[step]) - 0.42, y(y_of_step[step]) + 0.42],
                    color="black", linewidth=1.6, zorder=4)
    for n, (run, head) in enumerate(runs):
        colour, hatch, word = RUN_STYLES.get(run.status, RUN_STYLES["ok"])
        lane = y(first_run_lane + n)
        ax.broken_barh([(run.start, max(run.end - run.start, 1.0))], (lane - 0.3, 0.6),
                       facecolors=colour, edgecolor="black", hatch=hatch or None,
                       linewidth=0.8, zorder=3)
        if run.step in y_of_step:       # from the stream, where the call became ready
            ax.plot([run.start, run.start], [lane + 0.3, y(y_of_step[run.step]) - 0.3],
                    color="#444444", linestyle=":", linewidth=1.0, zorder=2)
        ax.text(run.end, lane, f"  {word}, {head_start_words(head)}", va="center",
                ha="left", fontsize=8, parse_math=False, zorder=5)
    # Lane names as plain texts (tick labels are remade at draw time, with mathtext on).
    ax.set_yticks([y(i) for i in range(len(lanes))], [""] * len(lanes))
    for i, name in enumerate(lanes):
        ax.text(-0.01, y(i), name, transform=ax.get_yaxis_transform(), ha="right",
                va="center", fontsize=10, parse_math=False)
    ax.set_ylim(-0.7, top + 0.7)
    ends = [end for _, _, end in result.streams] + [r.end for r, _ in runs]
    if ends:
        ax.set_xlim(0, max(ends) * 1.35 + 1)
    ax.set_xlabel("time on the loop's virtual clock (ms from the turn's start)")
    ax.grid(axis="x", linestyle=":", linewidth=0.6)
    handles = [Patch(facecolor="#dddddd", edgecolor="#777777", label="stream (dashed line: "
                     "its end)")]
    handles += [Patch(facecolor=KIND_STYLES[k].colour, edgecolor="black", label=k)
                for k in ("text delta", "reasoning delta", "tool-args delta") if k in used]
    statuses = {r.status for r, _ in runs}
    handles += [Patch(facecolor=c, edgecolor="black", hatch=h or None, label=f"tool {w}")
                for s, (c, h, w) in RUN_STYLES.items() if s in statuses]
    if ready:
        handles.append(Patch(facecolor="black", label="call ready (tick)"))
    fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    if title:
        ax.set_title(title, fontsize=10, loc="left").set_parse_math(False)
    if not lanes:
        ax.text(0.5, 0.5, "no stream was played", transform=ax.transAxes, ha="center",
                va="center")
    _show_as_png()
    return fig
