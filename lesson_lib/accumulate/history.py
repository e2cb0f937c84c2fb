"""Time travel over one stream: the accumulator's state after any event index.

The player's slider asks for "the state after event k" in any order. Copying
the whole state at every event would cost time proportional to everything
so far at each step, so the history keeps:

- the changes each event caused (`changes_of`), kept the first time the
  walk feeds that event, so a view reads what an event did without parsing
  its payload again (``None`` for an accumulator whose `feed` returns none);
- checkpoints: a read-only copy of the accumulator after every `every`-th
  event, taken the first time the walk passes that index; it shares the
  append-only fragment logs (text, raw arguments) with the accumulator it
  was taken from, keeping only their lengths (`lesson_lib.tool_calls.checkpoints`), so
  a checkpoint costs O(1) per log, not O(fragments so far);
- a cursor: the live accumulator at the last index reached;
- the ended accumulator (a copy of the last state, `finish`ed), made once.

Reaching k feeds forward from the cursor when k is ahead of it, otherwise
from a copy of the nearest checkpoint at or before k. Stepping forward by
one costs one `feed`; any jump costs at most one copy plus `every` feeds.

A copy (`Accumulator.__deepcopy__`) shares what can no longer change: an
ended tool call's value, the settled parts of a forming one (see "Sharing"
in `lesson_lib.tool_calls`). What still changes is copied without recursion.
A forming call's parser shares its open containers and its open string with
the copy, which keeps their sizes and makes its own only when it is fed or
read (`PartialJSON.copy`): a checkpoint is never either, so it costs the
state's bookkeeping plus the depth of the open arguments, however long the
array or string being built (a 300 KB file's text) and however deep they
nest (a tool input 100,000 levels deep is fine), never a walk of every value.
A cursor restored from a checkpoint makes its own copies once, on its first feed.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from ..capture.captures import Capture
from ..diagnostics import Diagnostic
from ..tool_calls import ToolCallView
from ..tool_calls.checkpoints import checkpoint
from ..wires.wire_events import WireEvent, parse_all
from . import accumulator_for, http_error
from .base import Accumulator, Slot


@dataclass(frozen=True)
class Snapshot:
    """The accumulator's state after the first `index` events (`ended`: after
    the end of the stream too). `event` is the last event fed, if any.
    `tool_calls` are the calls at that index as immutable views (what
    `Accumulator.tool_calls()` gives; ended: what `accumulate` ends with).
    Values that can no longer change are shared: read, don't modify."""

    index: int
    ended: bool
    event: WireEvent | None
    slots: list[Slot]
    final: dict | None
    diagnostics: list[Diagnostic]
    complete: bool
    tool_calls: tuple[ToolCallView, ...] = ()
    changes: tuple = ()        # what `event` changed (ended: and what `finish` did)


class History:
    """The states of one capture's accumulator, reachable at any event index."""

    def __init__(self, capture: Capture, *, every: int = 64,
                 chunk_size: int | None = None) -> None:
        if every < 1:
            raise ValueError("every must be at least 1")
        self.capture = capture
        self.every = every
        self.http_error: Diagnostic | None = None
        if capture.status >= 300:
            self.http_error = http_error(capture)
            raw, self.sse_diagnostics = [], []
        elif chunk_size is None:
            raw, self.sse_diagnostics = capture.events, capture.sse_diagnostics
        else:
            raw, self.sse_diagnostics = capture.decode(chunk_size)
        self.events: list[WireEvent] = parse_all(raw)
        self.feeds = 0   # how many times an event was fed: the cost the tests measure
        self.copies = 0  # how many deep copies were made
        self._cursor: Accumulator | None = None
        self._cursor_at = 0
        self._checkpoints: dict[int, Accumulator] = {}
        self._ended: Accumulator | None = None   # after the whole stream and its end
        self._changes: list[list] = []     # per event index: what feeding it changed
        self.end_changes: list | None = None      # what `finish` changed at the end
        if self.http_error is None:
            self._cursor = accumulator_for(capture.wire, capture.request)
            self._checkpoints[0] = self._checkpoint(self._cursor)

    def __len__(self) -> int:
        return len(self.events)

    def accumulator_at(self, k: int) -> Accumulator:
        """The live accumulator after the first `k` events (read it, don't feed it)."""
        if not 0 <= k <= len(self.events):
            raise IndexError(f"event index {k} outside 0..{len(self.events)}")
        if self._cursor is None:
            raise ValueError(f"{self.capture.key}: no events (the request failed)")
        if k < self._cursor_at:
            base = max(c for c in self._checkpoints if c <= k)
            self._cursor = self._copy(self._checkpoints[base])
            self._cursor_at = base
        elif k > self._cursor_at:
            # Jump ahead to a checkpoint when one is closer than the cursor.
            base = max(c for c in self._checkpoints if c <= k)
            if base > self._cursor_at:
                self._cursor = self._copy(self._checkpoints[base])
                self._cursor_at = base
        acc = self._cursor
        while self._cursor_at < k:
            changes = acc.feed(self.events[self._cursor_at])
            if self._cursor_at == len(self._changes):
                self._changes.append(changes)
            self.feeds += 1
            self._cursor_at += 1
            if self._cursor_at % self.every == 0 and self._cursor_at not in self._checkpoints:
                self._checkpoints[self._cursor_at] = self._checkpoint(acc)
        return acc

    def at(self, k: int, *, ended: bool = False) -> Snapshot:
        """The state after the first `k` events; with `ended`, also after `finish`."""
        if self.http_error is not None:
            if k != 0:
                raise IndexError(f"event index {k} outside 0..0")
            return Snapshot(0, ended, None, [], None, [self.http_error], False)
        end: list = []
        if ended and k == len(self.events):
            acc = self.ended_accumulator()
            end = self.end_changes
        else:
            acc = self.accumulator_at(k)
            if ended:
                acc = self._copy(acc)
                end = acc.finish(())
        event = self.events[k - 1] if k else None
        changes = self.changes_of(k - 1) if k else []
        return Snapshot(k, ended, event, acc.slots(), acc.final(), list(acc.diagnostics),
                        acc.complete, tuple(acc.tool_calls()), (*changes, *(end or ())))

    def changes_of(self, i: int) -> list:
        """The changes event `i` (0-based) caused when fed. Feeds up to it the first
        time it is asked."""
        if not 0 <= i < len(self.events):
            raise IndexError(f"event {i} outside 0..{len(self.events) - 1}")
        if i >= len(self._changes):
            self.accumulator_at(i + 1)
        return self._changes[i]

    def ended_accumulator(self) -> Accumulator:
        """The accumulator after the whole stream and its end (made once; read, don't feed)."""
        if self._ended is None:
            if self._cursor is None:
                raise ValueError(f"{self.capture.key}: no events (the request failed)")
            acc = self._copy(self.accumulator_at(len(self.events)))
            self.end_changes = acc.finish(self.sse_diagnostics)
            self._ended = acc
        return self._ended

    def end(self) -> Snapshot:
        """The state after the whole stream and its end."""
        return self.at(len(self.events), ended=True)

    def _copy(self, acc: Any) -> Accumulator:
        self.copies += 1
        return copy.deepcopy(acc)

    def _checkpoint(self, acc: Accumulator) -> Accumulator:
        self.copies += 1
        return checkpoint(acc)
