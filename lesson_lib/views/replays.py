"""One replay per capture, shared by every pane and counter that shows it.

A player with a slot pane and a tool-call pane shows one stream twice: both
read the same `History` (the accumulator's state over the event index), so
the stream is fed once, not once per pane. `history_for` keeps the histories
of the last `KEPT` captures, keyed by the capture object itself (the entry
holds the capture, so its id cannot be reused while the entry lives).
"""

from __future__ import annotations

from collections import OrderedDict

from ..accumulate.history import History
from ..captures import Capture

KEPT = 16
_HISTORIES: OrderedDict[tuple[int, int], tuple[Capture, History]] = OrderedDict()


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
