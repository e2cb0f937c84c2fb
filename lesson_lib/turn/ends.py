"""Why a turn ended: the closed vocabulary of outcomes and their reasons, in one place.

A turn's end is data: `TurnFinished(outcome=..., reason=..., detail=...)`. The
`outcome` says how the turn stands (is the answer done, and what can the
application do next); the `reason` says why, from a closed list per outcome;
the `detail` (a dict, or None) carries what the reason needs: the vendor's raw
value, who cancelled, what was arriving or running, which limit was reached.

| outcome          | reasons | what the application does next |
|------------------|---------|--------------------------------|
| `completed`      | `stop`, `tool_calls`, `length`, `content_filter`, `refusal` (the last step's finish) | read the answer (a `length` end may be cut short) |
| `paused`         | `provider_pause` (the provider paused: send the turn back as it is), `requires_action` (the vendor waits for the application to act on a call), `approval` (a call held for the application's approval) | answer, then carry on: never a success |
| `budget_reached` | `application_budget` (the application's own limit, lesson 5's `Budget` or the live loop's), `vendor_budget` (the vendor stopped at a budget it keeps) | raise the budget, or keep what arrived |
| `cancelled`      | `user` (Stop: `LiveTurn.cancel`), `application` (a cancel the application scheduled: `cancel_at`), `deadline` (the turn's deadline), `watchdog` (the stall watchdog), `vendor` (the vendor reports it cancelled) | keep what arrived |
| `failed`         | `error` (an in-band error, a failed request, a parse or protocol error), `gave_up` (the retries ran out) | read the errors |
| `truncated`      | `cut` (a stream ended before its terminal, no error) | retry, or keep what arrived |
| `max_steps`      | `step_limit` | raise the limit, or stop |
| `unknown`        | `unrecognised` (a stop reason or status the reader has no word for; `detail["raw"]` keeps it) | never read it as success |

A cancel's and a budget's detail say where the turn was: `where` is
``before_first_byte``, ``text``, ``reasoning``, ``tool_arguments`` (what was arriving),
``tools`` (only tools ran), ``streaming`` (between two blocks) or ``between_steps``;
`tools` names the tools it interrupted; `by` says who, in words.

This module names no wire: each wire's raw values are mapped to these words in
its own module (`lesson_lib.wires`), and `lesson_lib.turn.outcome` applies them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# Each outcome's reasons, in order; the first is what a finish without a reason means.
REASONS: dict[str, tuple[str, ...]] = {
    "completed": ("stop", "tool_calls", "length", "content_filter", "refusal"),
    "failed": ("error", "gave_up"),
    "truncated": ("cut",),
    "paused": ("provider_pause", "requires_action", "approval"),
    "cancelled": ("user", "application", "deadline", "watchdog", "vendor"),
    "max_steps": ("step_limit",),
    "budget_reached": ("application_budget", "vendor_budget"),
    "unknown": ("unrecognised",),
}
OUTCOMES: tuple[str, ...] = tuple(REASONS)
# Where a cancel or a budget found the turn.
WHERE: tuple[str, ...] = ("before_first_byte", "text", "reasoning", "tool_arguments", "tools",
                          "streaming", "between_steps")

# Each reason in a sentence a learner can act on (the summary and the banner say them).
REASON_SAYS: dict[str, str] = {
    "stop": "the model finished its answer",
    "tool_calls": "the last step asked for tools",
    "length": "the model stopped at its token limit: the answer may be cut short",
    "content_filter": "a content filter stopped the answer",
    "refusal": "the model refused",
    "error": "an error ended the turn; what arrived before it is kept",
    "gave_up": "the step failed and its retries ran out; every attempt's error is kept",
    "cut": ("a stream was cut before its terminal event, so the turn is not done; what "
            "arrived is kept and marked incomplete"),
    "provider_pause": ("the provider paused the turn: send it back as it is to continue; "
                       "it is not done"),
    "requires_action": ("the vendor stopped to ask the application: a call waits for its "
                        "answer; answer it to carry on, it is not done"),
    "approval": ("a call is held for the application's approval: approve or deny it to "
                 "carry on, it is not done"),
    "user": "the user pressed Stop",
    "application": "the application cancelled the turn",
    "deadline": "the turn's deadline passed",
    "watchdog": "the watchdog stopped a stream that had gone silent",
    "vendor": "the vendor cancelled the response",
    "step_limit": "the turn reached its step limit before the model finished",
    "application_budget": "the application's budget was reached",
    "vendor_budget": "the vendor stopped the turn at its budget",
    "unrecognised": ("the turn ended with a reason this reader does not know, so it is not "
                     "read as success"),
}
WHERE_SAYS: dict[str, str] = {
    "before_first_byte": "before the first byte of the response",
    "text": "while text was arriving", "reasoning": "while reasoning was arriving",
    "tool_arguments": "while a tool's arguments were arriving",
    "tools": "while tools ran", "streaming": "while the response streamed, between blocks",
    "between_steps": "between steps, with nothing arriving or running",
}


@dataclass(frozen=True, slots=True)
class TurnEnd:
    """A turn's end as data: its outcome, the reason from `REASONS`, and the detail."""

    outcome: str
    reason: str
    detail: Any = None


def default_reason(outcome: str) -> str | None:
    """The reason a `TurnFinished` without one is read with (None for an outcome that is
    not in the vocabulary)."""
    reasons = REASONS.get(outcome)
    return reasons[0] if reasons else None


def is_reason(outcome: str, reason: str | None) -> bool:
    """Whether `reason` is one of `outcome`'s reasons."""
    return reason in REASONS.get(outcome, ())


def never_success(outcome: str | None) -> bool:
    """Whether a turn with `outcome` must not be read as done (everything but
    ``completed``; an unfinished turn too)."""
    return outcome != "completed"


def end_sentence(end: TurnEnd) -> str:
    """The end in one sentence: the reason's words, then who and where from the detail."""
    detail = end.detail if isinstance(end.detail, dict) else {}
    says = REASON_SAYS.get(end.reason, end.reason)
    by = detail.get("by")
    if by and end.outcome in ("cancelled", "budget_reached"):
        says = f"{says} ({by})"
    where, tools = detail.get("where"), detail.get("tools")
    if where == "tools" and tools:
        says += f", interrupting {_as_they_ran(tools)}"
    elif where in WHERE_SAYS:
        says += f", {WHERE_SAYS[where]}"
        if tools:
            says += f", interrupting {_as_they_ran(tools)}"
    if detail.get("held"):
        says += f" (held: {_joined(detail['held'])})"
    if end.outcome in ("cancelled", "budget_reached"):
        says += "; what arrived is kept"
    raw = detail.get("raw")
    if raw is not None and end.outcome in ("unknown", "paused", "budget_reached"):
        says += f" (raw: {raw!r})"
    return says


def _as_they_ran(names: Any) -> str:
    names = [str(n) for n in names]
    return f"{_joined(names)} as {'it' if len(names) == 1 else 'they'} ran"


def _joined(names: Any) -> str:
    names = [str(n) for n in names]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
