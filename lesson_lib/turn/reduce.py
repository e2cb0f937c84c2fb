"""The reducer: `reduce(state, event) -> state`, pure, on a frozen `TurnState`.

A turn can have tens of thousands of deltas, so a state must not copy
everything so far at every event. The states of one turn share append-only
logs (every fragment, every status change, tagged with the index of the
event that wrote it); a `TurnState` is those logs plus *how many events it
has seen*. Reducing appends at the end of the logs and makes a new state
object: constant work per event, plus the fragment itself. Text is joined
only when read.

Purity holds because a state only reads the entries written before its own
count: a later state's entries are invisible to it. Reducing an *older*
state again (a branch) first copies the logs up to that state: that is the
only copy, and the linear path never takes it.

The same sharing gives the state at any event index for free:
``final.at(i)`` is the state after the first `i` events, without replaying
(the player's slider).

It also lets a reader that follows the turn as it forms (the drawing, lesson
6) read only what a state gained since a count: what began or ended
(`outline_since`), which blocks changed (`blocks_changed_since`) and what
each gained (`block_news`), and the turn's standing (`tools_running`,
`calls_forming`, `between_steps`, `interruptions`, `finished`, `last_t`),
each kept as a log entry when it changes. So the reducer is the turn's one
fold over its events; the drawing reads it and never folds them again.

One fold per layer: lesson 2's fold over an accumulator's changes
(`lesson_lib.accumulate.fold`) stays apart from this one. It rebuilds a
*wire's* slots from the accumulator's changes, to check that the changes say
everything the provider's final object says; this one builds the *turn*,
across wires and steps, from the turn events. Neither can read the other's
input.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .ends import TurnEnd, default_reason, is_reason
from .events import (
    BlockEnded,
    BlockStarted,
    ErrorReported,
    Finish,
    LazyPaths,
    SignatureAdded,
    StepFinished,
    ToolCallHeld,
    ToolCallInvalid,
    ToolCallReady,
    ToolExecutionFinished,
    ToolExecutionStarted,
    TurnEvent,
    TurnFinished,
    Usage,
)


class _Log:
    """Entries tagged with the index of the event that wrote them, in tag order."""

    __slots__ = ("tags", "items")

    def __init__(self) -> None:
        self.tags: list[int] = []
        self.items: list[Any] = []

    def add(self, tag: int, item: Any) -> None:
        self.tags.append(tag)
        self.items.append(item)

    def upto(self, n: int) -> list[Any]:
        """The entries written by the first `n` events."""
        return self.items[:bisect_left(self.tags, n)]

    def last(self, n: int, default: Any = None) -> Any:
        k = bisect_left(self.tags, n)
        return self.items[k - 1] if k else default

    def last_tag(self, n: int) -> int:
        """The index of the event that wrote the last entry before `n` (-1: none)."""
        k = bisect_left(self.tags, n)
        return self.tags[k - 1] if k else -1

    def between(self, start: int, n: int) -> list[Any]:
        """The entries written by events `start` to `n - 1`."""
        return self.items[bisect_left(self.tags, start):bisect_left(self.tags, n)]

    def tagged(self, start: int, n: int) -> list[tuple[int, Any]]:
        """The same, each with the index of the event that wrote it."""
        lo, hi = bisect_left(self.tags, start), bisect_left(self.tags, n)
        return list(zip(self.tags[lo:hi], self.items[lo:hi], strict=True))


@dataclass(slots=True)
class _BlockLog:
    start: BlockStarted
    tag: int
    fragments: _Log = field(default_factory=_Log)
    status: _Log = field(default_factory=_Log)       # (what, event) entries
    sources: _Log = field(default_factory=_Log)      # (event, the block's length, number)
    length: int = 0                                  # characters arrived, with the start's
    end: int = -1                                    # the index of its first BlockEnded


class _Logs:
    """The append-only logs every state of one turn shares (see the module)."""

    def __init__(self) -> None:
        self.count = 0                       # events appended so far
        self.events: list[TurnEvent] = []
        self.blocks: list[_BlockLog] = []
        self.block_tags: list[int] = []
        self.by_id: dict[str, _BlockLog] = {}
        self.by_call: dict[str, _BlockLog] = {}
        self.steps = _Log()                  # StepStarted
        self.finishes = _Log()               # StepFinished
        self.errors = _Log()
        self.passed = _Log()                 # WireEventPassed and Noted
        self.outcome = _Log()
        self.usages: dict[int, _Log] = {}    # UsageReported, by step
        # What a reader of the turn as it forms needs without reading every event again:
        self.outline = _Log()                # what begins or ends a step, a block's run, the turn
        self.touched = _Log()                # the block each later block entry was written to
        self.clock = _Log()                  # the latest arrival time so far, when it grows
        self.tools = _Log()                  # (tools running, calls forming), when they change
        self.interruptions = _Log()          # what a cancel stopped (see `interruptions`)
        self.sources = 0                     # sources added so far, every block's
        self._running: set[str] = set()
        self._forming: set[str] = set()
        self._started_steps: set[int] = set()
        self.work = 0                        # entries written: the linearity test counts it
        self.copies = 0                      # branches taken (each copies the logs once)

    def append(self, event: TurnEvent) -> None:
        tag = self.count
        self.count += 1
        self.events.append(event)
        self.work += 1
        kind = event.kind
        t = event.t
        if t is not None and (not self.clock.items or t > self.clock.items[-1]):
            self.clock.add(tag, t)
        if kind in _OUTLINE:
            self.outline.add(tag, event)
        if kind == "block_started":
            log = _BlockLog(event, tag)      # type: ignore[arg-type]
            log.length = len(event.content)  # type: ignore[attr-defined]
            self.blocks.append(log)
            self.block_tags.append(tag)
            self.by_id[event.block] = log    # type: ignore[attr-defined]
            if event.call_id:                # type: ignore[attr-defined]
                self.by_call[event.call_id] = log   # type: ignore[attr-defined]
            if event.block_kind == "tool_call":     # type: ignore[attr-defined]
                self._tally(tag, forming=event.block)   # type: ignore[attr-defined]
            return
        block = getattr(event, "block", None)
        if block is not None:
            log = self.by_id.get(block)
            if log is None:                  # the order checker reports it
                self._status(tag, None, event)
                return
            self.touched.add(tag, block)
            if kind == "block_delta":
                log.fragments.add(tag, event)
                log.length += len(event.fragment)          # type: ignore[attr-defined]
            elif kind == "source_added":
                self.sources += 1
                log.sources.add(tag, (event, log.length, self.sources))
            else:
                log.status.add(tag, event)
                self._status(tag, log, event)
            return
        if kind == "step_started":
            self._started_steps.add(event.step)            # type: ignore[attr-defined]
        elif kind == "step_finished":
            if event.ended == "cancelled" and event.step not in self._started_steps:  # type: ignore[attr-defined]
                self.interruptions.add(tag, event)
        elif kind == "turn_finished" and self._forming:
            self._forming.clear()
            self.tools.add(tag, (len(self._running), 0))
        target = {"step_started": self.steps, "step_finished": self.finishes,
                  "error_reported": self.errors, "wire_event_passed": self.passed,
                  "noted": self.passed, "turn_finished": self.outcome}.get(kind)
        if kind == "usage_reported":
            target = self.usages.setdefault(event.step, _Log())   # type: ignore[attr-defined]
        if target is not None:
            target.add(tag, event)

    def _status(self, tag: int, log: _BlockLog | None, event: TurnEvent) -> None:
        """A block's status changed: its end, what a cancel stopped, the tool tallies."""
        kind, block = event.kind, event.block           # type: ignore[attr-defined]
        if kind == "block_ended" and log is not None:
            if log.end < 0:
                log.end = tag
            if event.reason == "cancelled":                # type: ignore[attr-defined]
                self.interruptions.add(tag, event)
        elif (kind == "tool_execution_finished"
              and event.status == "interrupted"):          # type: ignore[attr-defined]
            self.interruptions.add(tag, event)
        if kind in ("block_ended", "tool_call_ready", "tool_call_invalid"):
            self._tally(tag, settled=block)
        elif kind == "tool_execution_started":
            self._tally(tag, running=block)
        elif kind == "tool_execution_finished":
            self._tally(tag, ran=block)

    def _tally(self, tag: int, *, forming: str | None = None, settled: str | None = None,
               running: str | None = None, ran: str | None = None) -> None:
        """Keep the count of tools running and of calls whose arguments are arriving."""
        before = (len(self._running), len(self._forming))
        if forming is not None:
            self._forming.add(forming)
        if settled is not None:
            self._forming.discard(settled)
        if running is not None:
            self._running.add(running)
        if ran is not None:
            self._running.discard(ran)
        after = (len(self._running), len(self._forming))
        if after != before:
            self.tools.add(tag, after)

    def copy_upto(self, n: int) -> _Logs:
        twin = _Logs()
        twin.copies = self.copies + 1
        for event in self.events[:n]:
            twin.append(event)
        return twin


# The events that begin or end a step, a block's run or the turn (`TurnState.outline_since`).
_OUTLINE = frozenset({"step_started", "step_finished", "block_started", "error_reported",
                      "turn_finished"})


@dataclass(frozen=True, slots=True)
class BlockNews:
    """What a block gained between two states: the text, sources and status that arrived.

    `sources`: each source, the block's length when it arrived (0: before any of its
    text, so the whole block is the span it cites) and its number among the turn's
    sources (from 1, every block's, in the order they came); `status` holds the
    block's other entries (its end, its call's readiness and execution, a
    signature) in the order they came.
    """

    fragments: list[str]
    sources: list[tuple[Any, int, int]]
    status: list[TurnEvent]


@dataclass(frozen=True, slots=True)
class BlockView:
    """One block of the turn as it stands in a state (materialised on read)."""

    id: str
    step: int
    kind: str
    wire_kind: str
    choice: int
    channel: str
    text: str
    open: bool
    complete: bool
    synthesised: bool
    name: str | None = None
    call_id: str | None = None
    item_id: str | None = None
    server_side: bool = False
    raw_input: str | None = None
    input: Any = None
    call_state: str | None = None
    execution: str | None = None
    execution_status: str | None = None
    result: Any = None
    reused: bool = False            # the result an earlier, retried attempt already had
    signature: str | None = None
    data: Any = None
    end_data: Any = None
    sources: tuple = ()
    settled: Sequence = ()          # paths, built when read (see `LazyPaths`)
    restated: bool = False
    redacted: bool = False


@dataclass(frozen=True, slots=True)
class StepView:
    """One step (model call) as it stands in a state."""

    step: int
    wire: str
    model: str | None
    finished: bool
    finish: Finish | None
    usage: Usage
    ended: str | None
    response_id: str | None = None


@dataclass(frozen=True, slots=True)
class TurnState:
    """The turn after some number of events: read its parts, never change them."""

    _logs: _Logs
    count: int = 0

    # -- reading -----------------------------------------------------------------

    def at(self, index: int) -> TurnState:
        """The state after the first `index` events of this state (no replay)."""
        return TurnState(self._logs, max(0, min(index, self.count)))

    @property
    def events(self) -> list[TurnEvent]:
        """The events reduced so far."""
        return self._logs.events[:self.count]

    @property
    def turn(self) -> object:
        """What identifies the turn this state is a point of: every state of one turn
        (`at`, or the next `reduce`) shares it, so a reader can tell a new turn apart."""
        return self._logs

    def events_since(self, index: int) -> list[TurnEvent]:
        """The events after the first `index`, up to this state: what a reader that
        already saw `index` of them has not seen yet (costs only those events)."""
        return self._logs.events[index:self.count]

    @property
    def started(self) -> bool:
        """Whether any event was reduced."""
        return self.count > 0

    # -- reading the turn as it forms, at the cost of what changed (the drawing) --------

    def outline_since(self, index: int) -> list[tuple[int, TurnEvent]]:
        """What began or ended a step, a block's run or the turn after the first `index`
        events (steps started and finished, blocks started, errors, the turn's finish),
        each with its event's index: the turn's reading order, without its deltas."""
        return self._logs.outline.tagged(index, self.count)

    def last_outline_index(self) -> int:
        """The index of the last of those events in this state (-1: none yet)."""
        return self._logs.outline.last_tag(self.count)

    def blocks_changed_since(self, index: int) -> list[str]:
        """The blocks begun by the first `index` events that gained text, a source or a
        status since, each once, in the order of their first change."""
        return list(dict.fromkeys(self._logs.touched.between(index, self.count)))

    def block_news(self, block_id: str, index: int) -> BlockNews:
        """What `block_id` gained after the first `index` events, up to this state."""
        log = self._logs.by_id[block_id]
        n = self.count
        return BlockNews([d.fragment for d in log.fragments.between(index, n)],
                         [(e.source, at, number)
                          for e, at, number in log.sources.between(index, n)],
                         log.status.between(index, n))

    def opening(self, block_id: str) -> BlockStarted | None:
        """The event that began `block_id` (None if it has not begun in this state)."""
        log = self._logs.by_id.get(block_id)
        return log.start if log is not None and log.tag < self.count else None

    def ended_at(self, block_id: str) -> int | None:
        """The index of the event that ended `block_id` (None: still open here)."""
        log = self._logs.by_id.get(block_id)
        return log.end if log is not None and 0 <= log.end < self.count else None

    @property
    def last_t(self) -> float | None:
        """The latest arrival time (ms) of any event so far that had one."""
        return self._logs.clock.last(self.count)

    @property
    def tools_running(self) -> int:
        """Tool runs started and not finished."""
        return self._logs.tools.last(self.count, (0, 0))[0]

    @property
    def calls_forming(self) -> int:
        """Tool calls whose arguments are still arriving (none once the turn finished)."""
        return self._logs.tools.last(self.count, (0, 0))[1]

    @property
    def last_finish(self) -> StepFinished | None:
        """The last step's finish so far (a cancelled request's too), else None."""
        return self._logs.finishes.last(self.count)

    @property
    def between_steps(self) -> bool:
        """A step has finished and no new step has begun yet."""
        n = self.count
        return self._logs.finishes.last_tag(n) > self._logs.steps.last_tag(n)

    @property
    def finished(self) -> TurnFinished | None:
        """The turn's finish as it came (its reason None when it named none), else None."""
        return self._logs.outcome.last(self.count)

    @property
    def interruptions(self) -> list[TurnEvent]:
        """What a cancel stopped, in order: a block closed while it arrived (`BlockEnded`,
        reason cancelled), a tool run interrupted (`ToolExecutionFinished`), a step's
        request cancelled before its first byte (`StepFinished`)."""
        return self._logs.interruptions.upto(self.count)

    @property
    def outcome(self) -> str | None:
        """The turn's outcome once it finished, else None."""
        last = self._logs.outcome.last(self.count)
        return last.outcome if last is not None else None

    @property
    def end(self) -> TurnEnd | None:
        """Why the turn ended (`lesson_lib.turn.ends`) once it finished, else None. A
        finish that names no reason reads as its outcome's first (``completed``: as the
        last step's finish reason)."""
        last = self._logs.outcome.last(self.count)
        if last is None:
            return None
        reason = last.reason
        if reason is None:
            step = self._logs.finishes.last(self.count)
            reason = default_reason(last.outcome) or ""
            if (last.outcome == "completed" and step is not None
                    and is_reason("completed", step.finish.reason)):
                reason = step.finish.reason
        return TurnEnd(last.outcome, reason, last.detail)

    @property
    def steps(self) -> list[StepView]:
        """The steps begun so far: their finish once they finished, and their usage (the
        final one, or as far as the wire has reported it while the step streams)."""
        n = self.count
        finishes = {e.step: e for e in self._logs.finishes.upto(n)}
        out = []
        for s in self._logs.steps.upto(n):
            f = finishes.get(s.step)
            out.append(StepView(s.step, s.wire, (f.model if f and f.model else s.model),
                                f is not None, f.finish if f else None,
                                f.usage if f else self._usage_so_far(s.step),
                                f.ended if f else None,
                                f.response_id if f else s.response_id))
        return out

    def _usage_so_far(self, step: int) -> Usage:
        log = self._logs.usages.get(step)
        last = log.last(self.count) if log is not None else None
        return last.usage if last is not None else Usage()

    @property
    def usage(self) -> Usage:
        """The turn's totals (the steps' raw usages stay on the steps)."""
        total = Usage()
        for s in self.steps:
            total = total + s.usage
        return total

    @property
    def errors(self) -> list[ErrorReported]:
        """The errors reported so far, in order."""
        return self._logs.errors.upto(self.count)

    @property
    def passed(self) -> list[TurnEvent]:
        """Unknown wire events and notes, as they came."""
        return self._logs.passed.upto(self.count)

    @property
    def blocks(self) -> list[BlockView]:
        """Every block begun so far, in order, materialised now."""
        logs, n = self._logs, self.count
        return [self._block(log, n) for log in logs.blocks[:bisect_left(logs.block_tags, n)]]

    def block(self, block_id: str) -> BlockView | None:
        """One block by id, as it stands in this state (None if not started yet)."""
        log = self._logs.by_id.get(block_id)
        if log is None or log.tag >= self.count:
            return None
        return self._block(log, self.count)

    @property
    def calls(self) -> list[BlockView]:
        """The tool-call blocks, with their call and execution states."""
        return [b for b in self.blocks if b.kind == "tool_call"]

    @staticmethod
    def _block(log: _BlockLog, n: int) -> BlockView:
        start = log.start
        deltas = log.fragments.upto(n)
        text = start.content + "".join(d.fragment for d in deltas)
        ended = ready = invalid = run = finished = held = None
        signature = None
        for e in log.status.upto(n):
            if isinstance(e, BlockEnded):
                ended = e
            elif isinstance(e, ToolCallReady):
                ready = e
            elif isinstance(e, ToolCallInvalid):
                invalid = e
            elif isinstance(e, SignatureAdded):
                signature = (signature or "") + e.signature
            elif isinstance(e, ToolCallHeld):
                held = e
            elif isinstance(e, ToolExecutionStarted):
                run = e
            elif isinstance(e, ToolExecutionFinished):
                finished = e
        is_call = start.block_kind == "tool_call"
        call_state = None
        if is_call:
            call_state = ("complete" if ready else invalid.state if invalid else "forming")
        execution = None
        if finished is not None:
            execution = "done" if finished.status == "ok" else "failed"
        elif run is not None:
            execution = "running"
        elif held is not None:
            execution = "held"
        restated = ended is not None and ended.restated is not None
        if restated:
            text = ended.restated           # the server's statement wins over the deltas
        settled: Sequence = ()
        if is_call and deltas:
            settled = LazyPaths(lambda: (p for d in deltas for p in d.settled))
        return BlockView(
            id=start.block, step=start.step, kind=start.block_kind, wire_kind=start.wire_kind,
            choice=start.choice, channel=start.channel,
            text="" if is_call else text, open=ended is None,
            complete=ended is not None and ended.complete,
            synthesised=ended is not None and ended.synthesised,
            name=start.name, call_id=start.call_id, item_id=start.item_id,
            server_side=start.server_side, raw_input=text if is_call else None,
            input=ready.input if ready else None, call_state=call_state,
            execution=execution, execution_status=finished.status if finished else None,
            result=finished.result if finished else None,
            reused=finished is not None and finished.reused, signature=signature,
            data=start.data, end_data=getattr(ended, "data", None),
            sources=tuple(s.source for s, _, _ in log.sources.upto(n)), settled=settled,
            restated=restated, redacted=start.redacted)

    # -- JSON --------------------------------------------------------------------

    def as_dict(self) -> dict[str, Any]:
        """The state in the shape of ``turn --json`` (CONTRACTS), JSON-ready."""
        steps = self.steps
        usage = self.usage
        end = self.end
        return {
            "outcome": self.outcome,
            "reason": end.reason if end else None,
            "detail": end.detail if end else None,
            "steps": [{"step": s.step, "wire": s.wire, "model": s.model,
                       "finish": ({"reason": s.finish.reason, "raw": s.finish.raw}
                                  if s.finish else None),
                       "usage": _usage_dict(s.usage) | {"raw": s.usage.raw} | _hops(s.usage)}
                      for s in steps],
            "usage": _usage_dict(usage) | {"raw": [s.usage.raw for s in steps]},
            "blocks": [_block_dict(b) for b in self.blocks],
            "errors": [{"step": e.step, "scope": e.scope, "phase": e.phase,
                        "retryable": e.retryable, "message": e.message, "code": e.code,
                        "raw": e.raw} for e in self.errors],
        }


def _hops(u: Usage) -> dict[str, Any]:
    """A step's per-hop usage, where one call made several model calls."""
    return {"hops": [_usage_dict(h) | {k: h.raw[k] for k in ("type", "model")
                                       if isinstance(h.raw, dict) and k in h.raw}
                     for h in u.hops]} if u.hops else {}


def _usage_dict(u: Usage) -> dict[str, Any]:
    return {"input_tokens": u.input, "output_tokens": u.output,
            "cache_read_tokens": u.cache_read, "cache_write_tokens": u.cache_write,
            "reasoning_tokens": u.reasoning}


def _block_dict(b: BlockView) -> dict[str, Any]:
    out: dict[str, Any] = {"id": b.id, "step": b.step, "kind": b.kind,
                           "complete": b.complete, "choice": b.choice}
    if b.kind == "tool_call":
        out |= {"tool_name": b.name, "call_id": b.call_id, "input": b.input,
                "raw_input": b.raw_input, "server_side": b.server_side,
                "state": b.call_state, "execution": b.execution,
                "result": b.result}
    elif b.kind == "reasoning":
        out |= {"text": b.text, "signature": b.signature,
                "redacted": b.redacted}
    else:
        out |= {"text": b.text}
        if b.kind == "other" and b.wire_kind:   # what it is, in the wire's words
            out["wire_kind"] = b.wire_kind
        if b.channel == "refusal":
            out["refusal"] = True
        if b.server_side:
            out["server_side"] = True
        if b.sources:
            out["sources"] = list(b.sources)
    if b.restated:
        out["restated"] = True
    return out


def initial() -> TurnState:
    """The state before any event."""
    return TurnState(_Logs(), 0)


def reduce(state: TurnState, event: TurnEvent) -> TurnState:
    """The state after `event`. Pure: `state` is unchanged and stays readable."""
    logs = _logs_after(state)
    logs.append(event)
    return TurnState(logs, state.count + 1)


def reduce_all(events: list[TurnEvent], state: TurnState | None = None) -> TurnState:
    """The state after all `events` (from `state`, or the start): `reduce` over each,
    without making the states in between."""
    state = initial() if state is None else state
    if not events:
        return state                         # (a branch is copied only when it grows)
    logs, count = _logs_after(state), state.count
    for event in events:
        logs.append(event)
        count += 1
    return TurnState(logs, count)


def _logs_after(state: TurnState) -> _Logs:
    """The logs the events after `state` are written to: its own, or, for a branch from
    an older state, a copy of its part of them."""
    logs = state._logs
    return logs if logs.count == state.count else logs.copy_upto(state.count)


__all__ = ["BlockNews", "BlockView", "StepView", "TurnState", "initial", "reduce", "reduce_all"]
