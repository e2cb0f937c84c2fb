"""Lesson 1's raw event table: one row per server-sent event, the same columns on every wire.

`event_table(capture)` lays out for pandas the rows `lesson_lib.wires.event_rows`
reads from each event in its wire's vocabulary (the columns and what they mean
are in that module's docstring); where a wire has no such thing the cell is
empty (``None``, ``NaN`` or ``<NA>`` in the nullable ``Int64`` columns). The
rest are the questions the lesson asks of a table: time to first token, the
silences between events, the output rate, where each row's fragment goes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from ..capture.captures import Capture
from ..wires.event_rows import (
    BOOKKEEPING_DELTAS,
    COLUMNS,
    KINDS,
    PREVIEW_CHARS,
    REASONING_DELTAS,
    TEXT_DELTAS,
    TOOL_ARGUMENT_DELTAS,
    event_row,
    preview_text,
    row_kind,
)
from ..wires.wire_events import WireEvent, parse_all

__all__ = ["BOOKKEEPING_DELTAS", "COLUMNS", "INT_COLUMNS", "KINDS", "PREVIEW_CHARS",
           "REASONING_DELTAS", "TEXT_COLUMNS", "TEXT_DELTAS", "TOOL_ARGUMENT_DELTAS", "Silence",
           "block_address", "blocks", "event_kind", "event_table", "final_output_tokens",
           "gaps", "is_output_delta", "kinds", "longest_silence", "output_tokens_per_second",
           "preview_text", "table_from_events", "time_to_first_token"]

# Cells hold text from the stream; a table shown through its Styler
# (``event_table(cap).style``) must show ``<script>`` as text, never run it.
pd.set_option("styler.format.escape", "html")

INT_COLUMNS = ("index", "sequence_number", "output_index", "content_index", "summary_index",
               "choice", "choices", "tool_call", "output_tokens")
TEXT_COLUMNS = ("sse_event", "type", "item_id", "delta_type", "preview", "parse_error")


# -- the table -----------------------------------------------------------------


def event_table(capture: Capture) -> pd.DataFrame:
    """One row per server-sent event of `capture`, with the columns of `COLUMNS`.

    A capture of a failed request (non-2xx status) has no events: the table
    is empty but has every column.
    """
    return table_from_events(parse_all(capture.events), capture.wire)


def table_from_events(events: list[WireEvent], wire: str | None) -> pd.DataFrame:
    """The event table of already parsed wire events (see `event_table`)."""
    rows = [event_row(ev, wire) for ev in events]
    columns: dict[str, Any] = {}
    for name in COLUMNS:
        values = [row.get(name) for row in rows]
        if name in INT_COLUMNS:
            columns[name] = pd.array(values, dtype="Int64")
        elif name in TEXT_COLUMNS:
            columns[name] = pd.Series(values, dtype=object)
        elif name == "t_ms":
            columns[name] = pd.Series([math.nan if v is None else float(v) for v in values],
                                      dtype="float64")
        elif name in ("unknown", "error"):
            columns[name] = pd.Series([bool(v) for v in values], dtype=bool)
        else:
            columns[name] = pd.Series(values, dtype="int64")
    return pd.DataFrame(columns)


# -- questions the lesson asks of a table ---------------------------------------


def is_output_delta(table: pd.DataFrame) -> pd.Series:
    """True on rows that carry a fragment of output (text, reasoning, tool arguments...)."""
    return table["delta_type"].notna() & ~table["delta_type"].isin(BOOKKEEPING_DELTAS)


def time_to_first_token(table: pd.DataFrame, delta_types: set[str] | None = None
                        ) -> float | None:
    """Arrival time (ms from the request) of the first output delta; None if none or untimed.

    `delta_types` narrows what counts (for example `TEXT_DELTAS`).
    """
    rows = table[is_output_delta(table)]
    if delta_types is not None:
        rows = rows[rows["delta_type"].isin(delta_types)]
    times = rows["t_ms"].dropna()
    return float(times.iloc[0]) if len(times) else None


def block_address(row: Any, wire: str | None = None) -> str | None:
    """Where a row's fragment goes in the final object: ``content[1]``,
    ``output[0].content[0]``, ``choices[0].tool_calls[1]``; None for message-level rows.

    `row` is a table row (a Series or a namedtuple from ``itertuples``).
    """
    def get(name: str) -> Any:
        value = getattr(row, name, None) if not isinstance(row, pd.Series) else row.get(name)
        return None if value is None or value is pd.NA else value
    index = get("index")
    if index is not None:
        return f"content[{index}]"
    output_index = get("output_index")
    if output_index is not None:
        address = f"output[{output_index}]"
        if get("content_index") is not None:
            address += f".content[{get('content_index')}]"
        if get("summary_index") is not None:
            address += f".summary[{get('summary_index')}]"
        return address
    choice = get("choice")
    if choice is not None:
        tool_call = get("tool_call")
        if tool_call is not None:
            return f"choices[{choice}].tool_calls[{tool_call}]"
        return f"choices[{choice}]"
    return None


def blocks(table: pd.DataFrame) -> pd.Series:
    """The `block_address` of every row, as a Series aligned with the table."""
    return pd.Series([block_address(r) for r in table.itertuples(index=False)],
                     index=table.index, dtype=object, name="block")


def gaps(table: pd.DataFrame) -> pd.DataFrame:
    """Silence before each event: since the previous event, and since the previous one
    addressed to the same block.

    Columns: seq, type, delta_type, block, t_ms, gap_ms (NaN on the first row or
    without timing), block_gap_ms (NaN on a block's first row and on
    message-level rows).
    """
    out = table[["seq", "type", "delta_type"]].copy()
    out["block"] = blocks(table)
    out["t_ms"] = table["t_ms"]
    out["gap_ms"] = table["t_ms"].diff()
    out["block_gap_ms"] = out.groupby("block", dropna=True)["t_ms"].diff()
    return out


@dataclass(frozen=True)
class Silence:
    """The longest wait between two consecutive events: how long, and what broke it."""

    ms: float
    seq: int                 # the row that ended the silence
    after_seq: int           # the row before it
    type: str | None
    delta_type: str | None
    block: str | None

    def __str__(self) -> str:
        what = self.type if not self.delta_type else f"{self.type} ({self.delta_type})"
        where = f" in {self.block}" if self.block else ""
        ms = f"{self.ms:.1f}".removesuffix(".0")
        return (f"{ms} ms of silence between events {self.after_seq} and {self.seq}; "
                f"it ended with {what}{where}")


def longest_silence(table: pd.DataFrame) -> Silence | None:
    """The longest gap between consecutive events (the first, on a tie); None without timing."""
    g = gaps(table)
    valid = g["gap_ms"].dropna()
    if valid.empty:
        return None
    at = valid.idxmax()
    row = g.loc[at]
    return Silence(ms=float(row["gap_ms"]), seq=int(row["seq"]), after_seq=int(row["seq"]) - 1,
                   type=row["type"], delta_type=row["delta_type"], block=row["block"])


def final_output_tokens(table: pd.DataFrame) -> int | None:
    """The last output-token count the stream reported (usage is cumulative), or None."""
    counts = table["output_tokens"].dropna()
    return int(counts.iloc[-1]) if len(counts) else None


def output_tokens_per_second(table: pd.DataFrame) -> float | None:
    """Output tokens divided by the time from the first to the last output delta.

    The count is the last one reported after the output began (a start
    event's count is a placeholder). None when the stream reported no such
    usage (a stream that died early), has no timing, or its output arrived
    all at once.
    """
    output = is_output_delta(table)
    times = table.loc[output, "t_ms"].dropna()
    if len(times) < 2:
        return None
    first = output.to_numpy().argmax()
    reported = table["output_tokens"].iloc[first:].dropna()
    if reported.empty:   # only the placeholder count of the start event: no real usage
        return None
    tokens = int(reported.iloc[-1])
    span = float(times.iloc[-1] - times.iloc[0])
    return tokens / (span / 1000) if span > 0 else None


def event_kind(row: Any) -> str:
    """What a row is, in the words the timeline and the player use (`KINDS`): start/stop,
    text delta, tool-args delta, reasoning delta, ping, error, other (`row_kind`).
    """
    def get(name: str) -> Any:
        value = row[name] if isinstance(row, pd.Series | dict) else getattr(row, name)
        return None if value is None or value is pd.NA else value
    return row_kind(get("type"), get("delta_type"), bool(get("error")))


def kinds(table: pd.DataFrame) -> pd.Series:
    """The `event_kind` of every row, as a Series aligned with the table."""
    return pd.Series([event_kind(r) for r in table.itertuples(index=False)],
                     index=table.index, dtype=object, name="kind")
