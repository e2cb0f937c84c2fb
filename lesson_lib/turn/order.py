"""The order checker: which turn event may come after which, as transition tables.

Two machines, in the manner of a protocol state machine: one for the turn
(between steps, inside a step, finished), one for each block (open, ended,
then for a tool call: ready or invalid, running, executed). An event is
legal when the table has an entry for (the current state, its kind); the
entry is the next state. Anything else is a violation, reported as a
`Diagnostic` (never raised) whose message says what broke and what to do
about it, and the checker goes on from its best guess.

Also checked: `seq` counts up by one, block ids are unique in the turn,
every block of a step ended (and every call resolved) by the step's end,
no tool still running when the turn finishes, and the turn's end is one the
vocabulary has (`lesson_lib.turn.ends`: an outcome, one of its reasons) and
never success over a step that did not end properly or ended for a reason the
reader does not know.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..capture.diagnostics import Diagnostic
from .ends import OUTCOMES, REASONS, is_reason
from .events import TurnEvent

# -- the turn ----------------------------------------------------------------------

IDLE, BETWEEN, IN_STEP, FINISHED = "idle", "between steps", "in a step", "finished"

_IN_STEP_KINDS = ("block_started", "block_delta", "signature_added", "source_added",
                  "block_ended", "tool_call_ready", "tool_call_invalid", "tool_call_held",
                  "tool_execution_started", "tool_execution_finished", "error_reported",
                  "wire_event_passed", "noted", "usage_reported")
_BETWEEN_KINDS = ("tool_call_held", "tool_execution_started", "tool_execution_finished", "error_reported",
                  "noted")

TURN_TABLE: dict[tuple[str, str], str] = {
    (IDLE, "turn_started"): BETWEEN,
    (BETWEEN, "step_started"): IN_STEP,
    (IN_STEP, "step_finished"): BETWEEN,
    (BETWEEN, "turn_finished"): FINISHED,
    **{(IN_STEP, k): IN_STEP for k in _IN_STEP_KINDS},
    **{(BETWEEN, k): BETWEEN for k in _BETWEEN_KINDS},
}

# -- one block ---------------------------------------------------------------------

NEW, OPEN, ENDED, READY, INVALID, HELD, RUNNING, EXECUTED = (
    "not started", "open", "ended", "ready", "invalid", "held", "running", "executed")

BLOCK_TABLE: dict[tuple[str, str], str] = {
    (NEW, "block_started"): OPEN,
    (OPEN, "block_delta"): OPEN,
    (OPEN, "signature_added"): OPEN,
    (OPEN, "source_added"): OPEN,
    (OPEN, "block_ended"): ENDED,
    (ENDED, "tool_call_ready"): READY,
    (ENDED, "tool_call_invalid"): INVALID,
    (READY, "tool_execution_started"): RUNNING,
    (READY, "tool_call_held"): HELD,      # the application holds it for approval
    (RUNNING, "tool_execution_finished"): EXECUTED,
}
_SETTLED = (ENDED, READY, INVALID, HELD, RUNNING, EXECUTED)
# The event that brings a block into each state (what a fix has to send first).
_BROUGHT_BY = {nxt: kind for (_, kind), nxt in BLOCK_TABLE.items()}


class OrderChecker:
    """Feed turn events one by one; `feed` returns the violations each one makes.

    `whole_turn=False` checks the events of steps without the turn's own
    start and finish (one adapter's output).
    """

    def __init__(self, *, whole_turn: bool = True) -> None:
        self.state = IDLE if whole_turn else BETWEEN
        self.blocks: dict[str, str] = {}
        self.tool_blocks: set[str] = set()
        self.step_blocks: list[str] = []
        self.step: int | None = None
        self.next_seq: int | None = None
        self.last_step: TurnEvent | None = None     # the last `step_finished`
        self.violations: list[Diagnostic] = []

    def _bad(self, code: str, message: str, event: TurnEvent, out: list) -> None:
        d = Diagnostic(code=code, message=message, index=event.seq,
                       extra={"kind": event.kind})
        out.append(d)
        self.violations.append(d)

    def feed(self, event: TurnEvent) -> list[Diagnostic]:
        """Check one event against the tables; return its violations."""
        out: list[Diagnostic] = []
        kind = event.kind
        if self.next_seq is not None and event.seq != self.next_seq:
            self._bad("seq_order", f"seq {event.seq} where {self.next_seq} was next: number "
                      "the turn's events in order (share one `Counter` across the steps' "
                      "adapters, or `renumber` them)", event, out)
        self.next_seq = event.seq + 1
        if kind == "step_finished":
            self._close_step(event, out)
            self.last_step = event
        if kind == "turn_finished":
            self._end(event, out)
            running = [b for b, s in self.blocks.items() if s == RUNNING]
            if running:
                self._bad("tool_still_running", f"`turn_finished` while {', '.join(running)} "
                          "still ran: finish each tool (`tool_execution_finished`, "
                          "`interrupted` on a cancel) before the turn ends", event, out)
        nxt = TURN_TABLE.get((self.state, kind))
        if nxt is None:
            self._bad("event_out_of_turn", _out_of_turn(self.state, kind), event, out)
        else:
            self.state = nxt
        if kind == "step_started":
            self.step = event.step          # type: ignore[attr-defined]
            self.step_blocks = []
        block = getattr(event, "block", None)
        if block is not None:
            self._block(event, block, out)
        return out

    def _block(self, event: TurnEvent, block: str, out: list) -> None:
        kind = event.kind
        state = self.blocks.get(block, NEW)
        if kind == "block_started":
            if state != NEW:
                self._bad("duplicate_block", f"`block_started` for {block} twice: give each "
                          "block a new id, unique in the turn (check the adapter's block ids)",
                          event, out)
                return
            if self.step is not None and event.step != self.step:   # type: ignore[attr-defined]
                self._bad("block_in_wrong_step", f"block {block} of step {event.step} "  # type: ignore[attr-defined]
                          f"started inside step {self.step}: start it with the number of the "
                          "step it belongs to", event, out)
            if event.block_kind == "tool_call":                        # type: ignore[attr-defined]
                self.tool_blocks.add(block)
            self.step_blocks.append(block)
        nxt = BLOCK_TABLE.get((state, kind))
        if kind.startswith("tool_") and block not in self.tool_blocks and state != NEW:
            self._bad("not_a_tool_call", f"`{kind}` for {block}, which is no tool call: only a "
                      "block started with block_kind tool_call has a call to ready or run",
                      event, out)
            return
        if nxt is None:
            if state == NEW:
                self._bad("outside_block", f"`{kind}` for {block} before its `block_started`: "
                          "start the block first, or check the adapter's block ids", event, out)
            elif kind == "block_ended":
                self._bad("second_end", f"`block_ended` for {block} twice: end each block "
                          "once (after a cut, the synthesised end is its only end)", event, out)
            elif kind in ("block_delta", "signature_added", "source_added"):
                self._bad("outside_block", f"`{kind}` for {block} after its `block_ended`: "
                          "send it before the block ends, or start a new block", event, out)
            else:
                self._bad("bad_transition", f"`{kind}` for {block} while it is {state}: "
                          f"{_needs(kind)}", event, out)
            return
        self.blocks[block] = nxt

    def _end(self, event: TurnEvent, out: list) -> None:
        """The turn's end: a known outcome and reason, and no success that is not one."""
        outcome, reason = getattr(event, "outcome", None), getattr(event, "reason", None)
        if outcome not in OUTCOMES:
            self._bad("unknown_outcome", f"`turn_finished` with outcome {outcome!r}: say one "
                      f"of {', '.join(OUTCOMES)} (an end you cannot name is `unknown`)",
                      event, out)
            return
        if reason is not None and not is_reason(outcome, reason):
            self._bad("unknown_reason", f"`turn_finished` {outcome} with reason {reason!r}: "
                      f"a {outcome} turn's reason is one of {', '.join(REASONS[outcome])}",
                      event, out)
        last = self.last_step
        if outcome != "completed" or last is None:
            return
        ended = getattr(last, "ended", None)
        finish = getattr(getattr(last, "finish", None), "reason", None)
        if ended != "proper":
            self._bad("completed_over_bad_end", f"`turn_finished` completed after step "
                      f"{last.step} ended {ended}: a turn whose last step did not end "  # type: ignore[attr-defined]
                      "properly is failed, truncated or cancelled, never completed",
                      event, out)
        elif finish not in REASONS["completed"]:
            self._bad("completed_over_unknown_end", f"`turn_finished` completed after step "
                      f"{last.step} finished {finish!r}: a finish the reader has no word "  # type: ignore[attr-defined]
                      "for is `unknown`, a pause is `paused`: never success", event, out)

    def _close_step(self, event: TurnEvent, out: list) -> None:
        for block in self.step_blocks:
            state = self.blocks.get(block)
            if state == OPEN:
                self._bad("unended_block", f"`step_finished` with block {block} still open: "
                          "end every block of the step first (`block_ended`, synthesised "
                          "when no wire event closed it)", event, out)
            elif state == ENDED and block in self.tool_blocks:
                self._bad("unresolved_call", f"`step_finished` with call {block} neither ready "
                          "nor invalid: after its `block_ended`, say `tool_call_ready` or "
                          "`tool_call_invalid`", event, out)


def check(events: Iterable[TurnEvent], *, whole_turn: bool = True) -> list[Diagnostic]:
    """Every order violation in `events` (an empty list: the order is legal)."""
    checker = OrderChecker(whole_turn=whole_turn)
    for event in events:
        checker.feed(event)
    if whole_turn and checker.state != FINISHED:
        checker.violations.append(Diagnostic(
            code="turn_not_finished", message=f"the events end {checker.state}: "
            + ("finish the step (`step_finished`), then " if checker.state == IN_STEP else "")
            + "finish the turn with `turn_finished`"))
    return checker.violations


def _out_of_turn(state: str, kind: str) -> str:
    """The message for `kind` where the turn's table has no entry, with what to do."""
    if state == FINISHED:
        return f"`{kind}` after `turn_finished`: the turn's last event is its finish"
    if state == IDLE:
        return f"`{kind}` before `turn_started`: start the turn first"
    if state == IN_STEP:
        return (f"`{kind}` inside a step: finish the step first (`step_finished`)"
                if kind in ("step_started", "turn_finished")
                else f"`{kind}` inside a step: it belongs to the turn, not to a step")
    return (f"`{kind}` between steps: start a step first (`step_started`)"
            if kind in _IN_STEP_KINDS or kind == "step_finished"
            else f"`{kind}` between steps: the turn has already started")


def _needs(kind: str) -> str:
    """What a block must have been through before `kind` (a fix for a bad transition)."""
    before = [state for (state, k) in BLOCK_TABLE if k == kind]
    if not before:
        return "no block state takes it"
    brought_by = _BROUGHT_BY.get(before[0])
    return (f"it must be {before[0]} first" +
            (f" (`{brought_by}`)" if brought_by is not None else ""))
