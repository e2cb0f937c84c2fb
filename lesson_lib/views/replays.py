"""One replay per capture, shared by every pane and counter that shows it.

A player with a table, a slot pane, a tool-call pane and a turn pane shows one
stream four times. They all read the same `Replay` (`replay_for`): the event
table is computed once, the accumulator's `History` is fed once, the turn is
reduced once, whichever pane asks first. A `Replay` builds each piece lazily,
on the first request, and keeps it for as long as the replay lives.

The last `KEPT` replays are kept, most recently used last; an older one is
dropped and rebuilt if its capture is shown again. The list holds each
capture, and finds it by identity (``is``), not by equality: two loads of one
file are two captures, each with its own replay.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Sequence
from typing import Any, TypeVar

import pandas as pd

from ..accumulate.history import History
from ..accumulate.labels import WIRES, EventLabels, labels_for
from ..capture.captures import Capture
from .event_table import event_table

KEPT = 16
T = TypeVar("T")

_REPLAYS: list[Replay] = []
_LOCK = threading.Lock()    # the player renders from its playback thread too


class Replay:
    """Everything the views derive from one capture, each piece built on first use.

    `table` (the event table), `history(every)` (the accumulator over the
    event index) and `labels` (what each event addresses) are the pieces more
    than one view reads; a view keeps a piece of its own with `kept`.
    """

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self._pieces: dict[Hashable, Any] = {}
        self._building = threading.RLock()   # a piece may ask for another while it builds

    def kept(self, key: Hashable, build: Callable[[], T]) -> T:
        """The piece called `key`, built by ``build()`` the first time it is asked for."""
        with self._building:
            if key not in self._pieces:
                self._pieces[key] = build()
            return self._pieces[key]

    @property
    def table(self) -> pd.DataFrame:
        """The capture's event table (`event_table`)."""
        return self.kept("table", lambda: event_table(self.capture))

    def history(self, every: int = 64) -> History:
        """The capture's `History`, with a snapshot every `every` events."""
        return self.kept(("history", every), lambda: History(self.capture, every=every))

    @property
    def labels(self) -> Sequence[str]:
        """What each event addresses (`accumulate.labels`), read from the shared
        history's changes as far as asked (a label never feeds past its event)."""
        return self.kept("labels", self._labels)

    def _labels(self) -> Sequence[str]:
        capture = self.capture
        if capture.wire in WIRES and capture.status < 300:
            return EventLabels(self.history())
        return labels_for(capture)


def replay_for(capture: Capture) -> Replay:
    """The capture's one `Replay`, shared by every view (the last `KEPT` kept)."""
    with _LOCK:
        for i, replay in enumerate(_REPLAYS):
            if replay.capture is capture:
                if i != len(_REPLAYS) - 1:
                    _REPLAYS.append(_REPLAYS.pop(i))
                return replay
        replay = Replay(capture)
        _REPLAYS.append(replay)
        del _REPLAYS[:-KEPT]
        return replay


def history_for(capture: Capture, every: int = 64) -> History:
    """The capture's `History`, built once and shared (`Replay.history`)."""
    return replay_for(capture).history(every)


def labels_of(capture: Capture) -> Sequence[str]:
    """What each event of the capture addresses, read once and shared (`Replay.labels`)."""
    return replay_for(capture).labels


def event_place(index: int, count: int) -> str:
    """Where an event is among `count`: ``event 12 of 0-47``. Events are numbered from 0,
    like the table's ``seq`` and the slider, so the last of 48 is "event 47 of 0-47"."""
    return f"event {index} of 0-{count - 1}"


def event_counter(capture: Capture, index: int) -> str:
    """The player's counter: the event, then the slot it addresses and what it carries
    (``event 12 of 0-47 · block [1] tool_use · input_json_delta``)."""
    n = len(capture.events)
    if n == 0:
        return f"no events · HTTP {capture.status}: the request failed before any event"
    i = max(0, min(int(index), n - 1))
    return f"{event_place(i, n)} · {labels_of(capture)[i]}"
