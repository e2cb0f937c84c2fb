"""A Responses stream's ``sequence_number``: checked when present, never required.

Every event of a recent Responses stream carries a ``sequence_number`` that
counts up by one. `SequenceNumbers` follows it and says what breaks the
count: ``sequence_gap`` (events missing), ``sequence_duplicate`` (an exact
repeat is skipped) and ``sequence_out_of_order`` (a late event, which says so
when it fills a gap reported earlier). Older streams carry none, and that is
fine: an event without a number is not checked.

A gap is an error: the numbers prove that events were lost (or came out of
order, which opens a gap first), so what was built from the rest may differ
from what the server sent (a transcript missing a word, with no done text to
set it right), and the stream did not end cleanly whatever its terminal says.
A repeat is a warning: nothing was lost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...wires.wire_events import WireEvent

# Gaps up to this size are remembered, so that a late event can say which gap it fills.
GAP_MEMORY = 10_000


class SequenceNumbers:
    """The sequence numbers seen so far; `skip` checks the next one.

    `note` is the accumulator's ``note`` (diagnostics are said through it).
    """

    __slots__ = ("note", "last", "seen", "missing")

    def __init__(self, note: Callable[..., Any]) -> None:
        self.note = note
        self.last: int | None = None
        self.seen: dict[int, str] = {}    # sequence_number -> the event's data
        self.missing: set[int] = set()

    def skip(self, event: WireEvent, seq: Any) -> bool:
        """Check `seq`, the event's sequence_number; True when the event must be skipped."""
        if type(seq) is not int:
            self.note("malformed_event", f"{event.type}: sequence_number {seq!r} is not an "
                      "integer; not checked", severity="warning", event=event)
            return False
        last = self.last
        if last is not None and seq == last + 1:    # the next number (never seen yet)
            self.last = seq
            self.seen[seq] = event.sse.data
            return False
        data = event.sse.data
        earlier = self.seen.get(seq)
        if earlier is not None:
            same = earlier == data
            self.note("sequence_duplicate",
                      f"sequence_number {seq} arrives again; "
                      + ("an exact repeat of the earlier event, skipped" if same else
                         "a different event from the first with that number, accumulated"),
                      severity="warning", event=event, sequence_number=seq, repeat=same)
            return same
        self.seen[seq] = data
        if last is None:
            self.last = seq      # a stream may start anywhere (resumed): nothing to check
        elif seq < last:
            late = seq in self.missing
            self.missing.discard(seq)
            self.note("sequence_out_of_order",
                      f"sequence_number {seq} arrives after {last}"
                      + ("; it fills part of a gap reported earlier" if late else "")
                      + "; accumulated where it arrived", severity="warning", event=event,
                      sequence_number=seq, after=last)
        else:
            missing = seq - last - 1
            if missing <= GAP_MEMORY:
                self.missing.update(range(last + 1, seq))
            self.note("sequence_gap",
                      f"sequence_number jumps from {last} to {seq}: {missing} event"
                      f"{'s' if missing != 1 else ''} missing", event=event,
                      sequence_number=seq, after=last, missing=missing)
            self.last = seq
        return False
