"""How often the block still forming is drawn again: after every delta while it is short,
then each time it grew by an eighth.

Drawing the forming block (the tail) parses and renders all of it, so drawing
it after every delta costs its length at each delta: a 10,000-character list
arriving 4 characters at a time is rendered 2,500 times. Instead the tail is
drawn whole at *frames*: every delta while it is at most `EVERY_DELTA_UP_TO`
characters long (as every answer's usual blocks are), then once it has grown
by an eighth of what it was at the last frame beyond that. Between two frames
the drawing is the last frame and, after it, the text that arrived since, as
plain escaped text (shown as it arrives, nothing in it interpreted yet). So
each character is rendered a bounded number of times, whatever the block's
length: the cost of a delta does not grow with the block (amortised).

Frames are counted on the tail's length at each delta, never on a clock or on
when a drawing is asked for: the same state is always drawn the same.
"""

from __future__ import annotations

EVERY_DELTA_UP_TO = 1_000
GROWTH = 8


def frame_due(length: int, last: int) -> bool:
    """Whether a tail now `length` characters long, drawn whole at `last`, is drawn whole
    again."""
    return length > last and length - last >= max(0, last - EVERY_DELTA_UP_TO) // GROWTH
