"""What the two session wires share (lesson 7): events read once each, by their ids, and a
stream that can end with a slot still open.

Managed Agents and OpenAI Agents sessions both deliver an event at least once, each with
its id; both put each entry of the session in a slot by arrival, and both end a step on a
session event rather than on a slot's stop. `SessionAccumulator` is the reading they
share: the payload of an event (`payload_of`, an unreadable one leaving the turn
incomplete), an event delivered again (`delivered_again`), an event type the session
stream does not know (`unknown_event`), and the end of the stream (`finish_session`: each
slot still open closed as never stopped, and a missing end noted). What an open slot and
a missing end are called stays with each wire: it passes the words in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..diagnostics import Diagnostic
from ..wires.wire_events import DONE, WireEvent
from .indexed import IndexedAccumulator


class SessionAccumulator(IndexedAccumulator):
    """A session's accumulator: slots by arrival, its end a session event. The wire's
    `_close(slot, None, synthesised=True)` closes a slot the stream left open."""

    _close: Callable[..., None]

    def __init__(self) -> None:
        super().__init__()
        self.stopped = False         # the session ended its step
        self.errored = False         # an in-band error
        self.damaged = False         # an event that could not be read

    def payload_of(self, event: WireEvent) -> dict | None:
        """The JSON object `event` carries, to read; None for the stream's end marker and
        for an event that does not parse (noted: the turn cannot be whole)."""
        if event.type == DONE:
            return None
        if self.unreadable(event):
            self.damaged = True
            self.complete = False
            return None
        return event.payload

    def delivered_again(self, kind: Any, event_id: Any, event: WireEvent) -> None:
        """Note an event whose id was seen already: the same event again, dropped
        (``duplicate_event``, a warning)."""
        self.note("duplicate_event", f"{kind} {event_id} delivered again; dropped (the "
                  "stream delivers at least once)", event=event, severity="warning",
                  raw=event.sse.data)

    def finish_session(self, sse_diagnostics: Iterable[Diagnostic], *,
                       named: Callable[[Any], str], still: str, ended_by: str) -> list:
        """The end of the stream: each slot still open closed as never stopped (noted
        ``block_never_stopped``, the slot `named` and what it was `still`: an error unless
        the turn is otherwise whole), and, where no session event ended the step, a
        ``no_terminal`` naming what should have (`ended_by`); return what that changed."""
        if not self.begin_finish(sse_diagnostics):
            return []
        for entry in self.ordered_blocks():
            if entry.state == "open":
                self.note("block_never_stopped", f"slot {entry.index} ({named(entry)}) was "
                          f"still {still} when the stream ended", slot=entry.index,
                          severity="warning" if self.complete else "error")
                self._close(entry, None, synthesised=True)
        if not self.stopped and not self.errored:
            self.note("no_terminal", f"the stream ended before {ended_by}: what arrived is "
                      "kept, but the turn is incomplete")
        return self.end_changes("in_band_error" if self.errored else "cut")
