"""The order checker: which turn event may come after which, as transition tables.

Two machines, in the manner of a protocol state machine: one for the turn
(between steps, inside a step, finished), one for each block (open, ended,
then for a tool call: ready or invalid, running, executed). An event is
legal when the table has an entry for (the current state, its kind); the
entry is the next state. Anything else is a violation, reported as a
`Diagnostic` (never raised), and the checker goes on from its best guess.

Also checked: `seq` counts up by one, block ids are unique in the turn,
every block of a step ended (and every call resolved) by the step's end,
no tool still running when the turn finishes.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..diagnostics import Diagnostic
from .events import TurnEvent

# -- the turn ----------------------------------------------------------------------

IDLE, BETWEEN, IN_STEP, FINISHED = "idle", "between steps", "in a step", "finished"

_IN_STEP_KINDS = ("block_started", "block_delta", "signature_added", "source_added",
                  "block_ended", "tool_call_ready", "tool_call_invalid",
                  "tool_execution_started", "tool_execution_finished", "error_reported",
                  "wire_event_passed", "noted")
_BETWEEN_KINDS = ("tool_execution_started", "tool_execution_finished", "error_reported",
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

NEW, OPEN, ENDED, READY, INVALID, RUNNING, EXECUTED = (
    "not started", "open", "ended", "ready", "invalid", "running", "executed")

BLOCK_TABLE: dict[tuple[str, str], str] = {
    (NEW, "block_started"): OPEN,
    (OPEN, "block_delta"): OPEN,
    (OPEN, "signature_added"): OPEN,
    (OPEN, "source_added"): OPEN,
    (OPEN, "block_ended"): ENDED,
    (ENDED, "tool_call_ready"): READY,
    (ENDED, "tool_call_invalid"): INVALID,
    (READY, "tool_execution_started"): RUNNING,
    (RUNNING, "tool_execution_finished"): EXECUTED,
}
_SETTLED = (ENDED, READY, INVALID, RUNNING, EXECUTED)


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
            self._bad("seq_order", f"seq {event.seq} where {self.next_seq} was next", event, out)
        self.next_seq = event.seq + 1
        if kind == "step_finished":
            self._close_step(event, out)
        if kind == "turn_finished":
            running = [b for b, s in self.blocks.items() if s == RUNNING]
            if running:
                self._bad("tool_still_running", f"the turn finished while {running} ran",
                          event, out)
        nxt = TURN_TABLE.get((self.state, kind))
        if nxt is None:
            what = ("after the turn finished" if self.state == FINISHED
                    else "before the turn started" if self.state == IDLE
                    else f"{self.state}")
            self._bad("event_out_of_turn", f"{kind} {what}", event, out)
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
                self._bad("duplicate_block", f"block {block} started twice", event, out)
                return
            if self.step is not None and event.step != self.step:   # type: ignore[attr-defined]
                self._bad("block_in_wrong_step", f"block {block} of step {event.step} "  # type: ignore[attr-defined]
                          f"inside step {self.step}", event, out)
            if event.block_kind == "tool_call":                        # type: ignore[attr-defined]
                self.tool_blocks.add(block)
            self.step_blocks.append(block)
        nxt = BLOCK_TABLE.get((state, kind))
        if kind.startswith("tool_") and block not in self.tool_blocks and state != NEW:
            self._bad("not_a_tool_call", f"{kind} for block {block}, which is no tool call",
                      event, out)
            return
        if nxt is None:
            if state == NEW:
                self._bad("outside_block", f"{kind} for block {block}, which never started",
                          event, out)
            elif kind == "block_ended":
                self._bad("second_end", f"block {block} ended twice", event, out)
            elif kind in ("block_delta", "signature_added", "source_added"):
                self._bad("outside_block", f"{kind} for block {block} after it ended",
                          event, out)
            else:
                self._bad("bad_transition", f"{kind} for block {block} while it is {state}",
                          event, out)
            return
        self.blocks[block] = nxt

    def _close_step(self, event: TurnEvent, out: list) -> None:
        for block in self.step_blocks:
            state = self.blocks.get(block)
            if state == OPEN:
                self._bad("unended_block", f"step ended with block {block} open", event, out)
            elif state == ENDED and block in self.tool_blocks:
                self._bad("unresolved_call", f"step ended with call {block} neither ready "
                          "nor invalid", event, out)


def check(events: Iterable[TurnEvent], *, whole_turn: bool = True) -> list[Diagnostic]:
    """Every order violation in `events` (an empty list: the order is legal)."""
    checker = OrderChecker(whole_turn=whole_turn)
    for event in events:
        checker.feed(event)
    if whole_turn and checker.state != FINISHED:
        checker.violations.append(Diagnostic(code="turn_not_finished",
                                             message=f"the events end {checker.state}"))
    return checker.violations
