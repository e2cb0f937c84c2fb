"""One replay per capture, shared by every pane and counter that shows it.

A player with a slot pane and a tool-call pane shows one stream twice: both
read the same `History` (the accumulator's state over the event index), so
the stream is fed once, not once per pane. `history_for` keeps the histories
of the last `KEPT` captures, keyed by the capture object itself (the entry
holds the capture, so its id cannot be reused while the entry lives), and
`labels_of` the labels read from that same history's changes.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

from ..accumulate.history import History
from ..accumulate.labels import WIRES, EventLabels, labels_for
from ..captures import Capture

KEPT = 16
_HISTORIES: OrderedDict[tuple[int, int], tuple[Capture, History]] = OrderedDict()
_LABELS: OrderedDict[int, tuple[Capture, Sequence[str]]] = OrderedDict()


def history_for(capture: Capture, every: int = 64) -> History:
    """The capture's `History`, built once and shared (the last `KEPT` captures kept)."""
    key = (id(capture), every)
    hit = _HISTORIES.get(key)
    if hit is not None and hit[0] is capture:
        _HISTORIES.move_to_end(key)
        return hit[1]
    history = History(capture, every=every)
    _HISTORIES[key] = (capture, history)
    while len(_HISTORIES) > KEPT:
        _HISTORIES.popitem(last=False)
    return history


def labels_of(capture: Capture) -> Sequence[str]:
    """What each event addresses (`accumulate.labels`), read from the capture's shared
    history's changes as far as asked (a label never feeds past its event)."""
    key = id(capture)
    hit = _LABELS.get(key)
    if hit is not None and hit[0] is capture:
        _LABELS.move_to_end(key)
        return hit[1]
    if capture.wire in WIRES and capture.status < 300:
        labels: Sequence[str] = EventLabels(history_for(capture))
    else:
        labels = labels_for(capture)
    _LABELS[key] = (capture, labels)
    while len(_LABELS) > KEPT:
        _LABELS.popitem(last=False)
    return labels


def event_counter(capture: Capture, index: int) -> str:
    """The player's counter: the event, then the slot it addresses and what it carries
    (``event 12 / 48 · block [1] tool_use · input_json_delta``)."""
    n = len(capture.events)
    if n == 0:
        return f"no events · HTTP {capture.status}: the request failed before any event"
    i = max(0, min(int(index), n - 1))
    return f"event {i} / {n} · {labels_of(capture)[i]}"
