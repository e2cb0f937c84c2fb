"""What a turn stopped from outside says about what was still open.

A turn is cancelled, or stopped by its budget, while blocks stream: what arrived is kept,
and each open part is closed honestly. This is the one place that says how, for the
simulated agent loop (`turn.loop`) and the live one (`live.loop`) alike.
"""

from __future__ import annotations

from collections.abc import Callable

from .events import BlockEnded, ToolCallInvalid, TurnEvent
from .reduce import TurnState


def closing_events(state: TurnState, why: str, *, t: float | None = None,
                   seq: Callable[[], int] = lambda: 0) -> list[TurnEvent]:
    """The events that close what `state` has open when the turn stops (`why`).

    Each open block ends incomplete and synthesised, with reason ``cancelled``; a
    tool call that was still forming is also marked invalid (``cut``), keeping the
    raw arguments that arrived, so it is never run. Running tools are the caller's
    to interrupt. `seq` numbers the events (the simulated loop numbers them later).
    """
    closing: list[TurnEvent] = []
    for block in state.blocks:
        if not block.open:
            continue
        closing.append(BlockEnded(seq(), block=block.id, complete=False, synthesised=True,
                                  reason="cancelled", t=t))
        if block.kind == "tool_call" and block.call_state != "complete":
            closing.append(ToolCallInvalid(seq(), block=block.id, name=block.name,
                                           call_id=block.call_id, state="cut",
                                           raw=block.raw_input or "", error=why, t=t))
    return closing
