"""The timeline: when each event arrived, one mark per event, pauses labelled.

Each kind of event sits in its own lane and has its own marker shape and
colour (the same shapes as the glyphs in the event table), so the plot
reads without colour. Silences longer than `pause_ms` are hatched; the
longest few are also spanned by a double-headed arrow and labelled with their
length, written as `timeline_text` writes it (`pause_label`), so the figure
and the text never disagree: the point is to see that a pause while
tool arguments form is normal, not a failure.

The figure is a plain `matplotlib.figure.Figure` (not registered with pyplot,
so nothing is left open and nothing is shown twice); a notebook displays it
as a PNG.
"""

from __future__ import annotations

import io

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..capture.captures import Capture
from .event_table import KINDS, event_table, gaps, kinds, time_to_first_token
from .html import KIND_STYLES


def timeline_figure(source: Capture | pd.DataFrame, *, pause_ms: float = 500.0,
                    max_labels: int = 6, title: str | None = None,
                    figsize: tuple[float, float] = (9.0, 3.4)) -> Figure:
    """Plot arrival time (ms) of every event, by kind; label pauses over `pause_ms`.

    `source` is a capture or its event table. Without recorded timing the x
    axis is the event index instead (and the title says so). At most
    `max_labels` pauses get an arrow and a label (the longest); every one is hatched.
    """
    if isinstance(source, Capture):
        table = event_table(source)
        title = title if title is not None else source.key
    else:
        table = source
    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.add_subplot()
    timed = len(table) > 0 and table["t_ms"].notna().all()
    x = table["t_ms"] if timed else table["seq"].astype(float)
    kind = kinds(table)
    present = [k for k in KINDS if (kind == k).any()]
    lane = {k: i for i, k in enumerate(reversed(present))}

    for k in present:
        style = KIND_STYLES[k]
        mask = kind == k
        ax.scatter(x[mask], [lane[k]] * int(mask.sum()), marker=style.marker, s=36,
                   facecolor=style.colour, edgecolor="black", linewidth=0.5, zorder=3)
    ax.set_yticks(list(lane.values()), list(lane.keys()))
    top = max(len(present), 1) - 0.4
    ax.set_ylim(-0.7, top + (1.1 if timed else 0.3))

    if timed:
        _shade_pauses(ax, table, pause_ms, max_labels, top=top)
    ax.set_xlabel("arrival time (ms from the request)" if timed
                  else "event index (this capture has no recorded timing)")
    ax.grid(axis="x", linestyle=":", linewidth=0.6)
    handles = [Line2D([], [], linestyle="none", marker=KIND_STYLES[k].marker,
                      markerfacecolor=KIND_STYLES[k].colour, markeredgecolor="black",
                      markersize=7, label=f"{k} ({int((kind == k).sum())})") for k in present]
    if handles:
        fig.legend(handles=handles, loc="outside right upper", fontsize=8, frameon=False)
    if title:
        # A title comes from data (a capture's name): `$` in it is a dollar, not mathtext.
        ax.set_title(title, fontsize=10, loc="left", parse_math=False)
    if len(table) == 0:
        ax.text(0.5, 0.5, "no events", transform=ax.transAxes, ha="center", va="center")
    _show_as_png()
    return fig


def figure_png(fig: Figure) -> bytes:
    """The figure as PNG bytes, without a timestamp or software tag (same bytes every run)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", metadata={"Software": None})
    return buffer.getvalue()


def _show_as_png() -> None:
    """Let IPython display a bare `Figure` as a PNG (pyplot's inline backend may be absent)."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.display_formatter.formatters["image/png"].for_type(Figure, figure_png)


def timeline_text(source: Capture | pd.DataFrame, *, pause_ms: float = 500.0) -> str:
    """The timeline in words (the figure's text equivalent): span, first output, pauses.

    Deterministic, so a notebook can print it under the figure for readers who
    cannot see the image.
    """
    table = event_table(source) if isinstance(source, Capture) else source
    if table.empty:
        return "No events."
    times = table["t_ms"]
    if times.isna().any():
        return f"{len(table)} events; this capture has no recorded timing."
    kind = kinds(table)
    counts = kind.value_counts()
    mix = ", ".join(f"{int(counts[k])} {k}" for k in KINDS if k in counts)
    lines = [f"{len(table)} events ({mix}), from {times.iloc[0]:,.0f} ms to "
             f"{times.iloc[-1]:,.0f} ms after the request."]
    first = time_to_first_token(table)
    if first is not None:
        lines.append(f"First output fragment at {first:,.0f} ms.")
    g = gaps(table)
    long = g[g["gap_ms"] > pause_ms]
    if long.empty:
        lines.append(f"No pause longer than {pause_ms:g} ms.")
    else:
        lines.append(f"{len(long)} pause{'s' if len(long) != 1 else ''} longer than "
                     f"{pause_ms:g} ms:")
        for at, row in long.iterrows():
            where = f" in {row['block']}" if row["block"] else ""
            lines.append(f"  {pause_label(row['gap_ms'])} before event {row['seq']} "
                         f"({kind.loc[at]}{where})")
    return "\n".join(lines)


def _shade_pauses(ax, table: pd.DataFrame, pause_ms: float, max_labels: int,
                  top: float) -> None:
    """Each long pause: a hatched band; the longest few also get a double-headed arrow
    across it and their length (never an arrow without a label); labels alternate
    between two heights so neighbours don't collide."""
    g = gaps(table)
    long = g[g["gap_ms"] > pause_ms]
    labelled = set(long["gap_ms"].nlargest(max_labels).index) if max_labels else set()
    for n, (at, row) in enumerate(long.iterrows()):
        end = float(row["t_ms"])
        start = end - float(row["gap_ms"])
        y = top + (0.45 if n % 2 else 0.0)
        ax.axvspan(start, end, facecolor="#e4e4e4", edgecolor="#9a9a9a", hatch="///",
                   linewidth=0, zorder=1)
        if at not in labelled:
            continue
        ax.annotate("", xy=(start, y), xytext=(end, y), zorder=4,
                    arrowprops={"arrowstyle": "<->", "color": "#444444", "linewidth": 1.0,
                                "shrinkA": 0, "shrinkB": 0})
        ax.text((start + end) / 2, y + 0.08, f"{pause_label(float(row['gap_ms']))} pause",
                ha="center", va="bottom", fontsize=8, color="#222222", zorder=5)


def pause_label(ms: float) -> str:
    """A pause's length as the figure and `timeline_text` both write it ("520 ms")."""
    return f"{ms:,.0f} ms"
