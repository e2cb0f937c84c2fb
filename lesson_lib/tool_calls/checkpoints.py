"""Checkpoint copies: a read-only copy of a state that shares what is append-only.

`copy.deepcopy` makes a copy that can go on independently, so it must copy
every list that may still grow. A checkpoint (what a `History` keeps every
so many events) is never fed: it is only copied again, later, to go on from
there. So wherever the state keeps an append-only log (text fragments, raw
argument fragments), a checkpoint can keep the log itself and its length
instead of a copy: the log's first entries never change. The objects that
keep such logs read the mode from the `deepcopy` memo (`is_checkpoint_copy`).
"""

from __future__ import annotations

import copy
from typing import Any

_CHECKPOINT = "lesson_lib.tool_calls.checkpoints"   # a memo key: never an object's id


def checkpoint(state: Any) -> Any:
    """A read-only copy of `state` that shares its append-only logs (O(1) each).

    Go on feeding the original; to feed from the checkpoint later, `copy.deepcopy` it.
    """
    return copy.deepcopy(state, {_CHECKPOINT: True})


def is_checkpoint_copy(memo: dict) -> bool:
    """Whether a `__deepcopy__` runs inside `checkpoint` (share the logs, don't copy)."""
    return _CHECKPOINT in memo
