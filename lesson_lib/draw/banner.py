"""The banner under the turn: how it stands, in words that never say done for a dead stream.

While the turn runs (live part ``turn/banner``): streaming; a tool's
arguments arriving (a pause inside them is the model working, drawn as
such); running tools (a step finished asking for tools, or a tool runs);
stalled, once the silence since the last event passes the caller's
threshold (time comes in as data: `now_ms` on the events' clock). When the
turn has finished the banner settles on its outcome: completed; failed,
truncated or cancelled with what arrived kept (a cancel, or a budget reached, says who
stopped it and what that interrupted: the text or reasoning arriving, a tool's arguments
arriving, the tools running by name, or a request before its first byte); a pause, an
unknown end and the step limit say their reason (`lesson_lib.turn.ends`); and a turn whose last step
finished asking for tools is drawn as waiting on tools, never completed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..turn.ends import REASON_SAYS, WHERE_SAYS, TurnEnd, default_reason, end_sentence
from ..turn.reduce import TurnState
from ..turn.summary import OUTCOME_SAYS, OUTCOME_WORDS
from .parts import Part
from .safety import esc
from .tool_call import call_name


@dataclass(frozen=True, slots=True)
class TurnStatus:
    """What the banner needs to know of the turn (`turn_status` reads it from a state)."""

    started: bool = False
    outcome: str | None = None
    asked_for_tools: bool = False      # the last finished step ended asking for tools
    finish: str | None = None          # the last finished step's finish reason
    between_steps: bool = False        # that step finished and no new step began yet
    running: int = 0                   # tool runs started and not finished
    forming_calls: int = 0             # tool calls whose arguments are arriving
    last_t: float | None = None        # arrival time (ms) of the last event that had one
    first_error: str | None = None
    interrupted: tuple[str, ...] = ()  # what a cancel stopped: text, tools by name, a request
    reason: str | None = None          # why the turn ended (`turn.ends`), once it has
    detail: Any = None                 # what the reason needs: who, the raw value, a limit


def turn_status(state: TurnState) -> TurnStatus:
    """How the turn in `state` stands, as the banner says it: every fact is the reducer's."""
    last = state.last_finish
    between = state.between_steps
    finished = state.finished
    errors = state.errors
    return TurnStatus(
        started=state.started, outcome=finished.outcome if finished else None,
        asked_for_tools=between and last is not None and last.finish.reason == "tool_calls",
        finish=last.finish.reason if last is not None else None, between_steps=between,
        running=state.tools_running, forming_calls=state.calls_forming, last_t=state.last_t,
        first_error=(errors[0].message or errors[0].scope) if errors else None,
        interrupted=_joined([_stopped_what(state, e) for e in state.interruptions]),
        reason=finished.reason if finished else None,
        detail=finished.detail if finished else None)


def _stopped_what(state: TurnState, e: Any) -> str:
    """What one interruption stopped, in words."""
    if e.kind == "step_finished":
        return f"the request for step {e.step} before its first byte"
    start = state.opening(e.block)
    if e.kind == "tool_execution_finished":
        name = call_name(start) if start is not None and start.block_kind == "tool_call" else None
        return f"the tool {name or '?'} running"
    if start is None:
        return "a block arriving"
    if start.block_kind == "text":
        return "the refusal arriving" if start.channel == "refusal" else "the text arriving"
    if start.block_kind == "reasoning":
        return "the reasoning arriving"
    if start.block_kind == "tool_call":
        return f"the arguments of {call_name(start) or '?'} arriving"
    return f"a {start.block_kind} block arriving"


def _joined(phrases: list[str]) -> tuple[str, ...]:
    """The phrases once each, in order, a repeated one counted (``the tool x running ×2``)."""
    counts: dict[str, int] = {}
    for phrase in phrases:
        counts[phrase] = counts.get(phrase, 0) + 1
    return tuple(p if n == 1 else f"{p} ×{n}" for p, n in counts.items())


def banner(status: TurnStatus, *, now_ms: float | None = None,
           stalled_after_ms: float | None = None) -> Part:
    """The banner part for `status` at `now_ms` (see the module)."""
    if status.outcome is not None:
        state, words = _finished(status)
        settled = True
    else:
        state, words = _running(status, now_ms, stalled_after_ms)
        settled = False
    html = f'<div class="draw-banner draw-{esc(state)}" role="status">{esc(words)}</div>'
    return Part("turn/banner", "banner", html, words, settled)


def _finished(status: TurnStatus) -> tuple[str, str]:
    outcome = status.outcome
    if outcome == "completed" and status.asked_for_tools:
        return "waiting-on-tools", ("⏸ waiting on tools: the last step finished asking for "
                                    "tools, so the turn goes on once their results are sent")
    glyph, word = OUTCOME_WORDS.get(outcome, ("?", str(outcome)))
    says = OUTCOME_SAYS.get(outcome, "")
    if outcome == "completed" and status.finish in _STOPPED_SHORT:
        says = f"{says}, but the model {_STOPPED_SHORT[status.finish]}"
    if outcome == "failed" and status.first_error:
        says = f"{status.first_error}; what arrived before it is kept"
    reason = status.reason or default_reason(str(outcome))
    if outcome in ("cancelled", "budget_reached"):
        says = _stopped(reason, status.detail, status.interrupted)
    elif outcome in ("paused", "unknown", "max_steps") and reason:
        says = end_sentence(TurnEnd(str(outcome), reason, status.detail))
    return str(outcome), f"{glyph} {word}: {says}"


def _stopped(reason: str | None, detail: Any, interrupted: tuple[str, ...]) -> str:
    """Who stopped the turn and what that interrupted, from the turn's own events (never
    the general sentence)."""
    who = REASON_SAYS.get(reason or "", "the turn was cancelled")
    by = detail.get("by") if isinstance(detail, dict) else None
    if by:
        who = f"{who} ({by})"
    where = detail.get("where") if isinstance(detail, dict) else None
    if not interrupted and where in WHERE_SAYS and where != "between_steps":
        # A stop that closed no block itself (the watchdog: the abandoned read closed them).
        return f"{who}, {WHERE_SAYS[where]}; what arrived is kept"
    if not interrupted:
        return f"{who}, between steps, with nothing arriving or running"
    what = (interrupted[0] if len(interrupted) == 1
            else ", ".join(interrupted[:-1]) + " and " + interrupted[-1])
    return f"{who}, interrupting {what}; what arrived is kept"


_STOPPED_SHORT = {"length": "stopped at its token limit (the answer may be cut short)",
                  "content_filter": "was stopped by a content filter",
                  "refusal": "refused"}


def _running(status: TurnStatus, now_ms: float | None,
             stalled_after_ms: float | None) -> tuple[str, str]:
    if (now_ms is not None and stalled_after_ms is not None and status.last_t is not None
            and now_ms - status.last_t >= stalled_after_ms):
        gap = (now_ms - status.last_t) / 1000
        return "stalled", (f"⚠ stalled: nothing has arrived for {gap:.1f} s "
                           f"(the limit is {stalled_after_ms / 1000:.1f} s); what arrived is kept")
    if status.running or (status.asked_for_tools and status.between_steps):
        return "running-tools", "▶ running tools"
    if status.forming_calls:
        return "working", "⋯ still working: a tool's arguments are arriving"
    if not status.started:
        return "waiting", "⋯ waiting for the first event"
    return "streaming", "⋯ streaming…"
