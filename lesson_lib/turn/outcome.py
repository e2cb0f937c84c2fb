"""How a step's end becomes the turn's outcome: the one place that maps them.

Lessons 1 to 3 and the CLI call a stream without its terminal event *cut*.
For the turn, a cut stream is the outcome ``truncated``: the partial content
is kept and marked incomplete, and the turn never says "completed" for it.

| the step's stream                         | outcome (reason)     |
|-------------------------------------------|----------------------|
| ended with its own terminal               | `completed` (the finish: `stop`, `tool_calls`, `length`, ...); `paused` (`provider_pause`) for a pause stop |
| ended with a finish the reader does not know (`other`) | `unknown` (`unrecognised`, the raw value kept) |
| ended with a finish that says it failed (`error`) | `failed` (`error`) |
| no terminal event (cut)                   | `truncated` (`cut`) |
| an in-band error, a failed request, a payload that does not parse, a protocol violation | `failed` (`error`) |
| a raw value its wire maps to an end of its own (`TURN_ENDS` in the wire's module: a vendor's budget, a vendor's cancel, a call that requires action) | that end |

The vocabulary (every outcome, its reasons, what they say) is `lesson_lib.turn.ends`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..wires import WIRES
from ..wires.common import FinishReason
from .ends import TurnEnd
from .events import Outcome, StepFinished, TurnFinished

if TYPE_CHECKING:
    from .reduce import TurnState

CUT_STREAM_OUTCOME: Outcome = "truncated"
"""What lessons 1-3 call a cut stream, in the turn's vocabulary."""


def step_ending(*, terminal: bool, failed: bool) -> str:
    """How one step's stream ended: ``error`` wins over ``cut``, ``proper`` otherwise."""
    if failed:
        return "error"
    return "proper" if terminal else "cut"


def outcome_of_step(ended: str, finish: FinishReason) -> Outcome | None:
    """The turn's outcome if it stops after this step, or None when the turn may go on.

    `ended` is `StepFinished.ended`. A properly ended step that asks for tools, or
    stops, returns None (the loop runs the tools, or the turn ends ``completed``); a
    finish the reader does not know (``other``) is ``unknown``, never success.
    """
    if ended == "error":
        return "failed"
    if ended == "cancelled":
        return "cancelled"
    if ended == "cut":
        return CUT_STREAM_OUTCOME
    if finish == "pause":
        return "paused"
    if finish == "error":
        return "failed"
    if finish == "other":
        return "unknown"
    return None


def end_of_step(last: StepFinished, wire: str | None = None) -> TurnEnd | None:
    """The turn's end if it must stop after the step `last` (of `wire`), or None when it
    may go on: the step ended properly, and asked for tools or finished its answer."""
    raw = {"raw": last.finish.raw} if last.finish.raw is not None else None
    if last.ended == "error":
        return TurnEnd("failed", "error", raw)
    if last.ended == "cancelled":
        return TurnEnd("cancelled", "application", raw)
    if last.ended == "cut":
        return TurnEnd(CUT_STREAM_OUTCOME, "cut", raw)
    if last.finish.reason == "tool_calls":
        return None
    mapped = wire_end(wire, last.finish.raw)
    if mapped is not None and mapped.outcome != "completed":
        return mapped
    if last.finish.reason == "pause":
        return TurnEnd("paused", "provider_pause", raw)
    if last.finish.reason == "error":       # a stream that ended properly, saying it failed
        return TurnEnd("failed", "error", raw)
    if last.finish.reason == "other":
        return TurnEnd("unknown", "unrecognised", {"raw": last.finish.raw})
    return None


def end_of_turn(last: StepFinished | None, wire: str | None = None) -> TurnEnd:
    """The end of a turn whose last step is `last` (None: no step finished, a cut): what
    `end_of_step` says, else the wire's own end for the raw value (a call that requires
    action is a pause), else ``completed`` for the step's finish reason."""
    if last is None:
        return TurnEnd(CUT_STREAM_OUTCOME, "cut")
    found = end_of_step(last, wire) or wire_end(wire, last.finish.raw)
    if found is not None:
        return found
    return TurnEnd("completed", last.finish.reason,
                   {"raw": last.finish.raw} if last.finish.raw is not None else None)


def wire_end(wire: str | None, raw: Any) -> TurnEnd | None:
    """The end `wire` gives its raw finish value `raw` in its module's `TURN_ENDS`
    (raw value, or a status, to ``(outcome, reason)``), else None."""
    table = getattr(WIRES.get(wire or ""), "TURN_ENDS", None)
    if not table:
        return None
    name = raw.get("status") if isinstance(raw, dict) else raw
    found = table.get(name) if isinstance(name, str) else None
    if found is None:
        return None
    outcome, reason = found
    return TurnEnd(outcome, reason, {"raw": raw})


def turn_finished(seq: int, end: TurnEnd, t: float | None = None) -> TurnFinished:
    """The `TurnFinished` event that says `end`."""
    return TurnFinished(seq, outcome=end.outcome, reason=end.reason,   # type: ignore[arg-type]
                        detail=end.detail, t=t)


_ARRIVING = {"tool_call": "tool_arguments", "reasoning": "reasoning"}


def arriving(kind: str) -> str:
    """What was arriving while a block of `kind` was open (one of `ends.WHERE`)."""
    return _ARRIVING.get(kind, "text")


def where_stopped(state: TurnState, *, in_step: bool, first_byte: bool) -> dict[str, Any]:
    """Where a cancel (or a budget) found the turn in `state`, before its open blocks are
    closed: ``{"where": ..., "tools": [the running tools' names]}`` (`ends.WHERE`).
    `in_step`: a step's request was out; `first_byte`: its response had begun."""
    blocks = state.blocks
    running = [b.name or b.call_id or b.id for b in blocks
               if b.kind == "tool_call" and b.execution == "running"]
    arriving = [b for b in blocks if b.open]
    if arriving:
        where = _ARRIVING.get(arriving[-1].kind, "text")
    elif in_step and not first_byte:
        where = "before_first_byte"
    elif in_step:
        where = "streaming" if not running else "tools"
    else:
        where = "tools" if running else "between_steps"
    return {"where": where, "tools": running}
