"""Panes: plain renderer functions ``pane(capture, index) -> HTML`` for the player.

A pane is anything with a `name` and a ``__call__(capture, index)`` returning
an HTML fragment; it may also have ``text(capture, index)`` returning plain
text (for ``print`` and the ``text/plain`` fallback). Wrap a bare function
with `Pane`. Two panes come with lesson 1:

- `TablePane`: the event table around the current event. Only a window of
  rows is rendered, from cells prepared once per capture (kept on its shared
  `replays.Replay`), so a step costs the same on a 10-event and a 10,000-event
  capture.
- `RawBytesPane`: the current event's bytes exactly as sent: CR and LF made
  visible, runs of padding spaces underlined, network read boundaries marked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..capture.captures import Capture
from .event_table import block_address, event_kind
from .html import esc, kind_badge, section
from .replays import event_place, replay_for

Renderer = Callable[[Capture, int], str]


@dataclass(frozen=True)
class Pane:
    """A named renderer ``(capture, index) -> HTML``, with an optional plain-text twin."""

    name: str
    render: Renderer
    text: Callable[[Capture, int], str] | None = None

    def __call__(self, capture: Capture, index: int) -> str:
        return self.render(capture, index)


# -- the table, read from the capture's shared replay ----------------------------


def table_for(capture: Capture) -> pd.DataFrame:
    """The capture's event table, computed once and shared with every view (`Replay.table`)."""
    return replay_for(capture).table


def clamp(index: int, capture: Capture) -> int:
    """`index` brought into the capture's range of events (0 when it has none)."""
    return max(0, min(int(index), len(capture.events) - 1)) if capture.events else 0


def default_labeller(capture: Capture, index: int) -> str:
    """``event 12 of 0-47 · content_block_delta``: the event index (from 0, like `seq`),
    the range of indexes, and the event's type."""
    n = len(capture.events)
    if n == 0:
        return f"no events · HTTP {capture.status}: the request failed before any event"
    i = clamp(index, capture)
    kind = table_for(capture)["type"].iat[i]
    return f"{event_place(i, n)} · {kind if kind is not None else '(no type)'}"


# -- the event table pane ---------------------------------------------------------

# The event table's address columns, in its own order: the pane shows those a stream fills
# (a wire leaves the others empty), so it needs no word about any wire.
ADDRESS_COLUMNS = ("index", "sequence_number", "output_index", "content_index", "summary_index",
                   "choice", "choices", "tool_call")
_HEADINGS = {"sequence_number": "seq_no", "output_index": "output", "content_index": "content",
             "summary_index": "summary"}


@dataclass
class _Prepared:
    header: str
    rows: list[str]           # each row's cells, escaped, without the marker cell
    texts: list[str]          # each row as one line of plain text


class TablePane:
    """The event table, a window of `window` rows centred on the current event.

    The current row is marked three ways: an arrow and the word "now" in
    its first cell, bold text with heavy borders, and the CSS class
    ``rtw-current-row``.
    """

    def __init__(self, window: int = 15, name: str = "Event table") -> None:
        self.window = window
        self.name = name

    def prepared(self, capture: Capture) -> _Prepared:
        """The capture's rows as escaped cells, built once per capture and shared by every
        table pane (they differ only in how many rows they show)."""
        replay = replay_for(capture)
        return replay.kept("table rows", lambda: _prepare(capture, replay.table))

    def bounds(self, capture: Capture, index: int) -> tuple[int, int]:
        """The [first, last) rows shown around `index`."""
        n = len(capture.events)
        half = self.window // 2
        lo = max(0, min(index - half, n - self.window))
        return lo, min(n, lo + self.window)

    def __call__(self, capture: Capture, index: int) -> str:
        if not capture.events:
            return section(self.name, '<p class="rtw-note">No events: the response was '
                                      f'HTTP {capture.status} before any event.</p>')
        i = clamp(index, capture)
        prep = self.prepared(capture)
        lo, hi = self.bounds(capture, i)
        out = ['<table class="rtw-table">', prep.header, "<tbody>"]
        if lo > 0:
            out.append(_note_row(f"… {lo} earlier event{'s' if lo != 1 else ''}"))
        for r in range(lo, hi):
            if r == i:
                out.append(f'<tr class="rtw-row rtw-current-row" data-seq="{r}" '
                           f'aria-current="true" style="font-weight:bold">'
                           f'<td class="rtw-marker">▶ now</td>{prep.rows[r]}</tr>')
            else:
                out.append(f'<tr class="rtw-row" data-seq="{r}"><td class="rtw-marker"></td>'
                           f'{prep.rows[r]}</tr>')
        later = len(prep.rows) - hi
        if later > 0:
            out.append(_note_row(f"… {later} later event{'s' if later != 1 else ''}"))
        out.append("</tbody></table>")
        return section(self.name, "".join(out))

    def text(self, capture: Capture, index: int) -> str:
        """The current row as one line of plain text."""
        if not capture.events:
            return f"(no events: HTTP {capture.status})"
        i = clamp(index, capture)
        return "▶ " + self.prepared(capture).texts[i]


def _note_row(text: str) -> str:
    return f'<tr class="rtw-note-row"><td></td><td colspan="20" class="rtw-note">{esc(text)}</td></tr>'


def _columns(capture: Capture, table: pd.DataFrame) -> list[str]:
    address = [c for c in ADDRESS_COLUMNS if table[c].notna().any()]
    return ["seq", "t_ms", "kind", "type", *address, "delta_type", "preview", "flags"]


def _prepare(capture: Capture, table: pd.DataFrame) -> _Prepared:
    columns = _columns(capture, table)
    heads = "".join(f'<th scope="col">{esc(_HEADINGS.get(c, c))}</th>' for c in columns)
    hidden = "position:absolute;left:-10000px"     # read by screen readers, not drawn
    header = (f'<thead><tr><th scope="col"><span style="{hidden}">current</span></th>'
              f"{heads}</tr></thead>")
    rows, texts = [], []
    for row in table.itertuples(index=False):
        kind = event_kind(row)
        cells, words = [], []
        for c in columns:
            if c == "kind":
                cells.append(f"<td>{kind_badge(kind)}</td>")
                continue
            value = _cell(row, c)
            cells.append(f"<td>{esc(value)}</td>")
            if c not in ("seq",) and value != "":
                words.append(_word(c, value))
        rows.append("".join(cells))
        address = block_address(row)
        where = f" {address}" if address else ""
        texts.append(f"event {row.seq} · {kind}{where} · " + " · ".join(words))
    return _Prepared(header, rows, texts)





def _cell(row: Any, column: str) -> str:
    if column == "flags":
        flags = [name for name, on in (("error", row.error), ("unknown", row.unknown),
                                       ("parse error", row.parse_error is not None)) if on]
        return ", ".join(flags)
    value = getattr(row, column)
    if value is None or value is pd.NA:
        return ""
    if column == "t_ms":
        return "" if math.isnan(value) else f"{value:.1f}"
    if column == "preview":
        return value
    return str(value)


# -- the raw bytes pane -----------------------------------------------------------

_TOKENS = re.compile(r"\r\n|\r|\n| {2,}|[^\r\n ]+| ")


class RawBytesPane:
    """The current event's bytes exactly as they were sent.

    Line ends are shown as ``‹CR›`` and ``‹LF›`` before the line break they
    make (markers that common monospace fonts can draw); runs of two or more spaces (the padding real streams put in
    their JSON) are underlined when `show_padding`; ``┊`` marks where one
    network read ended and the next began. Longer events are cut at
    `max_bytes`, saying how much is not shown.
    """

    def __init__(self, max_bytes: int = 3000, show_padding: bool = True,
                 name: str = "Raw bytes") -> None:
        self.max_bytes = max_bytes
        self.show_padding = show_padding
        self.name = name

    def span(self, capture: Capture, index: int) -> tuple[int, int]:
        """The byte range shown for `index` (the whole body when there are no events)."""
        if not capture.events:
            return 0, len(capture.body)
        ev = capture.events[clamp(index, capture)]
        return ev.start, ev.end

    def __call__(self, capture: Capture, index: int) -> str:
        start, end = self.span(capture, index)
        parts = [f'<p class="rtw-note">{esc(self._caption(capture, index, start, end))}</p>',
                 self._pre(capture, start, end)]
        tail = self._undispatched(capture, index)
        if tail is not None:
            parts.append(f'<p class="rtw-note">{esc(_tail_caption(tail, capture))}</p>')
            parts.append(self._pre(capture, tail, len(capture.body)))
        legend = ("‹CR› and ‹LF› mark the line-end bytes CR and LF; "
                  "┊ = a network read ended here"
                  + ("; underlined = runs of padding spaces" if self.show_padding else ""))
        parts.append(f'<p class="rtw-note">{esc(legend)}</p>')
        return section(self.name, "".join(parts))

    def text(self, capture: Capture, index: int) -> str:
        """The bytes as plain text, with ‹CR› and ‹LF› before each line break."""
        start, end = self.span(capture, index)
        shown = capture.body[start:min(end, start + self.max_bytes)].decode("utf-8", "replace")
        lines = [self._caption(capture, index, start, end), visible_line_ends(shown)]
        tail = self._undispatched(capture, index)
        if tail is not None:
            lines += [_tail_caption(tail, capture),
                      visible_line_ends(capture.body[tail:].decode("utf-8", "replace"))]
        return "\n".join(line.rstrip("\n") for line in lines)

    def _caption(self, capture: Capture, index: int, start: int, end: int) -> str:
        if not capture.events:
            return (f"HTTP {capture.status}: the whole body ({len(capture.body)} bytes) "
                    "is an error document, not an event stream")
        ev = capture.events[clamp(index, capture)]
        when = f", complete at t = {ev.t:.1f} ms" if ev.t is not None else ""
        cut = (f"; showing the first {self.max_bytes}" if end - start > self.max_bytes else "")
        return f"bytes {start}–{end} ({end - start} bytes{cut}){when}"

    def _undispatched(self, capture: Capture, index: int) -> int | None:
        if not capture.events or clamp(index, capture) != len(capture.events) - 1:
            return None
        last = capture.events[-1].end
        if capture.body[last - 1:last + 1] == b"\r\n":
            last += 1  # the LF of the last CRLF blank line: part of a line end, not left over
        return last if last < len(capture.body) else None

    def _pre(self, capture: Capture, start: int, end: int) -> str:
        stop = min(end, start + self.max_bytes)
        breaks = [b for b in capture.chunk_ends if start < b < stop]
        body = capture.body
        pieces, cursor = [], start
        for b in [*breaks, stop]:
            inside_char = False
            aligned = b
            while aligned < stop and (body[aligned] & 0xC0) == 0x80:
                aligned += 1
                inside_char = True
            if aligned > cursor:
                pieces.append(self._render_text(body[cursor:aligned].decode("utf-8", "replace")))
                cursor = aligned
            if b != stop:
                title = ("a network read ended inside a UTF-8 character here" if inside_char
                         else "a network read ended here")
                pieces.append(f'<span class="rtw-chunk-break" title="{title}" '
                              f'aria-label="{title}">┊</span>')
        more = end - stop
        if more > 0:
            pieces.append(f'<span class="rtw-note">… {more} more bytes not shown</span>')
        return f'<pre class="rtw-raw">{"".join(pieces)}</pre>'

    def _render_text(self, text: str) -> str:
        out = []
        for token in _TOKENS.findall(text):
            if token == "\r\n":
                out.append('<span class="rtw-eol" title="CR LF">‹CR›‹LF›</span>\n')
            elif token == "\r":
                out.append('<span class="rtw-eol" title="CR">‹CR›</span>\n')
            elif token == "\n":
                out.append('<span class="rtw-eol" title="LF">‹LF›</span>\n')
            elif token.startswith("  ") and self.show_padding:
                out.append(f'<span class="rtw-pad" title="{len(token)} spaces" '
                           f'style="text-decoration:underline dotted">{token}</span>')
            else:
                out.append(esc(token))
        return "".join(out)


def visible_line_ends(text: str) -> str:
    """`text` with ‹CR› / ‹LF› written before each CR / LF, so line ends can be seen."""
    out = []
    for token in re.findall(r"\r\n|\r|\n|[^\r\n]+", text):
        out.append({"\r\n": "‹CR›‹LF›\n", "\r": "‹CR›\n", "\n": "‹LF›\n"}.get(token, token))
    return "".join(out)


def _tail_caption(tail: int, capture: Capture) -> str:
    count = len(capture.body) - tail
    return (f"after the last event: {count} bytes from offset {tail} that were never "
            "dispatched (no blank line ended them)")


def _word(column: str, value: str) -> str:
    if column == "t_ms":
        return f"t={value} ms"
    return f"{column}={value}" if column in ADDRESS_COLUMNS else value
