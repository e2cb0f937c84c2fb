"""How a step's end becomes the turn's outcome: the one place that maps them.

Lessons 1 to 3 and the CLI call a stream without its terminal event *cut*.
For the turn, a cut stream is the outcome ``truncated``: the partial content
is kept and marked incomplete, and the turn never says "completed" for it.

| the step's stream                         | outcome     |
|-------------------------------------------|-------------|
| ended with its own terminal               | `completed` (`paused` for a pause stop) |
| no terminal event (cut)                   | `truncated` |
| an in-band error, a failed request, a payload that does not parse, a protocol violation | `failed` |
"""

from __future__ import annotations

from ..wires.common import FinishReason
from .events import Outcome

CUT_STREAM_OUTCOME: Outcome = "truncated"
"""What lessons 1-3 call a cut stream, in the turn's vocabulary."""


def step_ending(*, terminal: bool, failed: bool) -> str:
    """How one step's stream ended: ``error`` wins over ``cut``, ``proper`` otherwise."""
    if failed:
        return "error"
    return "proper" if terminal else "cut"


def outcome_of_step(ended: str, finish: FinishReason) -> Outcome | None:
    """The turn's outcome if it stops after this step, or None when the turn may go on.

    `ended` is `StepFinished.ended`. A properly ended step that asks for tools
    returns None (the loop runs them, or the turn ends ``completed``).
    """
    if ended == "error":
        return "failed"
    if ended == "cancelled":
        return "cancelled"
    if ended == "cut":
        return CUT_STREAM_OUTCOME
    if finish == "pause":
        return "paused"
    return None
