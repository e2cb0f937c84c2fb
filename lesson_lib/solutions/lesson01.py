"""Solutions to lesson 1's exercises: the code the notebook shows, tested by the checkers."""

from __future__ import annotations

import pandas as pd


def split_events(text: str) -> list[tuple[str | None, str]]:
    """Split a simple event stream into (event name or None, data) pairs.

    Blocks end at a blank line; ``:`` starts a comment; one space after a
    field's colon is dropped; several ``data:`` lines join with a newline; a
    block with no data (or never ended by a blank line) is not an event.
    """
    events = []
    name, data = None, []
    for line in text.split("\n"):
        if line == "":                      # a blank line ends the block
            if data:
                events.append((name, "\n".join(data)))
            name, data = None, []
            continue
        if line.startswith(":"):            # a comment
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    return events                           # an unfinished last block is dropped


TEXT_DELTA_TYPES = {"text_delta", "output_text", "content"}   # Anthropic, Responses, Chat


def first_text_ms(table: pd.DataFrame) -> float | None:
    """Arrival time (ms) of the first text fragment, or None if the stream has none."""
    text = table[table["delta_type"].isin(TEXT_DELTA_TYPES)]
    times = text["t_ms"].dropna()
    if times.empty:
        return None
    return float(times.iloc[0])


PROPER_ENDINGS = {"message_stop", "response.completed", "response.incomplete", "[DONE]"}


def where_it_died(table: pd.DataFrame) -> int | None:
    """The seq of the row where the response died, or None if it ended properly.

    The first error wins (an ``error`` event, a Chat error payload,
    ``response.failed``). Without one, a stream whose last row is not its
    wire's proper ending was cut: it died at its last row.
    """
    errors = table[table["error"]]
    if not errors.empty:
        return int(errors["seq"].iloc[0])
    if table.empty or table["type"].iloc[-1] in PROPER_ENDINGS:
        return None
    return int(table["seq"].iloc[-1])
