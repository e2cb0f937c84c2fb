"""Retry by phase: which failed attempts to try again, after how long, and how many times.

An attempt is one HTTP request for one step. It fails with the errors its
turn events report, or is cut (the body ended before the wire's terminal). A retry is worth it when a retry can cure the error
(`ErrorReported.retryable`: a 429, a 529, an overloaded or rate-limit error, a
dropped connection, a stall). Before output, a retry costs nothing but time;
after output, it redoes the step and pays for its tokens again, which is why
`RetryPolicy.after_output` exists. The wait is the server's hint
(``retry-after``, ``retry-after-ms``) or an exponential backoff
(`lesson_lib.breaks.retry.backoff`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..breaks.retry import backoff
from ..turn.events import ErrorReported


@dataclass(frozen=True)
class RetryPolicy:
    """How many attempts a step gets, and which failures are retried."""

    attempts: int = 3
    after_output: bool = True       # redo a step that failed after output began (a
                                    # resume redoes nothing: it is not held back)
    initial_s: float = 0.5
    max_s: float = 8.0


@dataclass
class Attempt:
    """One request of one step: its status, its errors, and what happened next."""

    step: int
    number: int
    status: int | None = None
    errors: list[ErrorReported] = field(default_factory=list)
    output_seen: bool = False
    started_at: float = 0.0         # ms from the turn's start, when the request was sent
    first_byte: float | None = None     # ms from the request to its first chunk
    waited_s: float | None = None   # the wait before the next attempt, when there was one
    wait_source: str | None = None
    events: list[Any] = field(default_factory=list)
    # Resume (a wire that resumes, `resuming`): the point after which the next attempt
    # asks for the rest of this one's stream, when this one broke; and, on that next
    # attempt, the point it resumed after (its request was the resume request).
    resume_at: int | str | None = None
    resumed_after: int | str | None = None

    @property
    def failed(self) -> bool:
        return bool(self.errors)

    @property
    def cut(self) -> bool:
        """The body ended before the wire's terminal, with no error said."""
        return any(e.kind == "step_finished" and e.ended == "cut" for e in self.events)

    def summary(self) -> str:
        """One line: the attempt and its first error (and a resume, where there was one)."""
        head = f"step {self.step} attempt {self.number}"
        if self.resumed_after is not None:
            head += f" (resumed after {self.resumed_after})"
        if not self.errors:
            ended = "cut (no terminal event)" if self.cut else "ok"
            return f"{head}: {ended}"
        e = self.errors[0]
        tail = f"; resumed after {self.resume_at}" if self.resume_at is not None else ""
        return f"{head}: {e.scope} error {e.phase} ({e.code or 'error'}): {e.message}{tail}"


def retry_wait(attempt: Attempt, headers: dict[str, Any] | None,
               policy: RetryPolicy) -> float | None:
    """Seconds to wait before trying the step again after this attempt, or None for no
    retry (it went well, its error is final, no attempt is left, or the server asks for
    a longer wait than the policy allows). Says why on the attempt (`wait_source`)."""
    if not (attempt.failed or attempt.cut) or attempt.number >= policy.attempts:
        return None
    if not all(e.retryable for e in attempt.errors):
        return None
    if attempt.output_seen and not policy.after_output and attempt.resume_at is None:
        return None
    wait = backoff(attempt.number - 1, headers, initial_s=policy.initial_s, max_s=policy.max_s)
    if wait.seconds > policy.max_s:
        attempt.wait_source = (f"{wait.source} asks for {wait.seconds:g} s, more than this "
                               f"loop waits ({policy.max_s:g} s): not retried")
        return None
    attempt.waited_s, attempt.wait_source = wait.seconds, wait.source
    return wait.seconds
