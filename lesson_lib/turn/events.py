"""The turn's own vocabulary: one typed union for an agent turn, whatever the wire.

A provider's events describe one API response. A view needs to describe an
agent *turn*: several model calls (steps), several tools, a failure that can
land anywhere. So this union is deliberately not one-to-one with any
provider: each wire (and each SDK) has an adapter that speaks it, and every
view reads only this.

Rules the events keep (checked by `lesson_lib.turn.order`):

- every event has a `kind` (a literal) and a `seq`, its position in the turn;
- identity is announced once, by a start event (`StepStarted`,
  `BlockStarted`); later events reference it (`step`, `block`);
- identity fields (`turn`, `step`, `block`, a call's `name` and `call_id`,
  an error's `scope` and `phase`, a step's `ended`, ...) have no default:
  every field after `seq` is keyword-only, and an event built without its
  identity is a `TypeError`, never a legal value with an empty id;
- block ids are unique across the whole turn (step-qualified: ``s1.b0``);
- every `BlockStarted` has exactly one `BlockEnded`; an end that no wire
  event caused (after an error, a cut or a cancel) says ``synthesised``;
- a tool call becomes `ToolCallReady` only when its whole input parsed
  strictly, else `ToolCallInvalid` with the raw text: never because a
  prefix happened to parse.

`t` (arrival time, ms, on the capture's clock or the loop's virtual one) and `at` (the wire event index) are where an
event came from. Only the wire route knows them, so comparisons between the
wire route and the SDK route leave them out (`comparable`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass, field, fields
from typing import Any, ClassVar, Literal

from ..accumulate.changes import Channel
from ..wires.common import FinishReason
from .ends import OUTCOMES as ENDS_OUTCOMES

Outcome = Literal["completed", "failed", "truncated", "paused", "cancelled", "max_steps",
                  "budget_reached", "unknown"]
BlockKind = Literal["text", "reasoning", "tool_call", "tool_result", "other"]
CallState = Literal["forming", "complete", "invalid", "cut"]
ExecutionState = Literal["running", "done", "failed", "held"]
ExecutionStatus = Literal["ok", "error", "denied", "interrupted"]
ErrorScope = Literal["transport", "provider", "protocol", "parse", "tool"]
ErrorPhase = Literal["before_output", "after_output"]

OUTCOMES: tuple[str, ...] = ENDS_OUTCOMES     # each with its reasons: `lesson_lib.turn.ends`
FINISH_REASONS: tuple[str, ...] = ("stop", "length", "tool_calls", "content_filter",
                                   "refusal", "pause", "error", "other")


class LazyPaths(Sequence):
    """Paths (tuples of keys) built only when first read, then kept.

    A settled path is as long as its value is deep: every path of an input
    nested 100,000 levels, built at once, would cost the square of its depth.
    The turn keeps the partial-JSON changes and builds their paths on demand.
    """

    __slots__ = ("_source", "_paths")

    def __init__(self, source: Callable[[], Iterable[tuple]] | Iterable[tuple] = ()) -> None:
        self._source = source
        self._paths: tuple | None = None

    def _all(self) -> tuple:
        if self._paths is None:
            source = self._source
            self._paths = tuple(source() if callable(source) else source)
            self._source = ()
        return self._paths

    def __iter__(self) -> Iterator[tuple]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __contains__(self, path: object) -> bool:
        return path in self._all()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyPaths | tuple | list):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return repr(self._all())


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of one step (or a turn's totals), with the provider's own object.

    `input` counts all input, cache reads and writes included; a count the
    wire does not report is 0; `raw` is the wire's usage object as it came. `hops` is the
    usage of each model call where one step made several (Anthropic's ``usage.iterations``:
    a fallback model, an advisor, a compaction); the counts are then their sum.
    """

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int = 0
    raw: Any = None
    hops: tuple[Usage, ...] = ()

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input + other.input, self.output + other.output,
                     self.cache_read + other.cache_read, self.cache_write + other.cache_write,
                     self.reasoning + other.reasoning, None)


@dataclass(frozen=True, slots=True)
class Finish:
    """Why a step stopped: the unified `reason` and the provider's `raw` value."""

    reason: FinishReason
    raw: Any = None


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """What every turn event has: its sequence number, and where it came from."""

    kind: ClassVar[str] = "event"
    seq: int
    _: KW_ONLY
    t: float | None = None
    at: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted(TurnEvent):
    """The turn began."""

    kind: ClassVar[str] = "turn_started"
    turn: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnFinished(TurnEvent):
    """The turn ended: its `outcome`, the `reason` why (one of the outcome's reasons in
    `lesson_lib.turn.ends`; None reads as the outcome's first) and the `detail` the reason
    needs (a dict: the vendor's raw value, who cancelled, what was arriving or running)."""

    kind: ClassVar[str] = "turn_finished"
    outcome: Outcome
    reason: str | None = None
    detail: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepStarted(TurnEvent):
    """One model call began: its number in the turn, its wire, what the wire says of it."""

    kind: ClassVar[str] = "step_started"
    step: int
    wire: str
    model: str | None = None
    response_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StepFinished(TurnEvent):
    """One model call ended: its finish reason and usage, and how its stream ended.

    `ended` is ``proper`` (its own terminal), ``cut`` (no terminal: the
    outcome will be `truncated`), ``error`` (an in-band error, a failed
    request, a parse or protocol error) or ``cancelled`` (the loop stopped it).
    """

    kind: ClassVar[str] = "step_finished"
    step: int
    finish: Finish = Finish("other")
    usage: Usage = Usage()
    ended: Literal["proper", "cut", "error", "cancelled"]
    model: str | None = None
    response_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockStarted(TurnEvent):
    """A block began (text, reasoning, a tool call's input, a tool result, other).

    `block` is its id, unique in the turn; `wire_kind` the wire's own type
    for it; `channel` says a text block is a refusal; `name` and `call_id`
    are a tool call's identity; `server_side` marks a provider-side tool (web
    search, code execution) and its result; `content` is text the start
    already carries; `data` the wire's own object for a block that arrives
    whole (a ``redacted_thinking`` block, a server tool's result); `redacted`
    marks reasoning the provider sent only encrypted (no text to show).
    """

    kind: ClassVar[str] = "block_started"
    block: str
    step: int
    block_kind: BlockKind
    wire_kind: str = ""
    choice: int = 0
    channel: Channel = "text"
    name: str | None = None
    call_id: str | None = None
    item_id: str | None = None
    server_side: bool = False
    content: str = ""
    data: Any = None
    redacted: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockDelta(TurnEvent):
    """Text or tool input arrived for a block: the fragment only.

    For tool input, `json_changes` are the partial value's changes (lesson 3)
    and `settled` the paths that became final with this fragment (built when read).
    """

    kind: ClassVar[str] = "block_delta"
    block: str
    fragment: str
    channel: Channel = "text"
    json_changes: tuple = ()
    settled: Sequence = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SignatureAdded(TurnEvent):
    """A reasoning block's signature (kept: the next request sends it back)."""

    kind: ClassVar[str] = "signature_added"
    block: str
    signature: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceAdded(TurnEvent):
    """A citation or source attached to a block, as the wire gave it."""

    kind: ClassVar[str] = "source_added"
    block: str
    source: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockEnded(TurnEvent):
    """A block ended. `complete` is false when a cut, an error or a cancel closed it;
    `synthesised` when no wire event closed it; `reason` what closed it; `data` the
    wire's final object for the block where it states one at the end (a Responses
    item at ``output_item.done``: a reasoning item's ``encrypted_content``);
    `restated` the server's statement of the block's whole text where it differs
    from the deltas (Responses ``*.done``): it replaces them, and an error says so."""

    kind: ClassVar[str] = "block_ended"
    block: str
    complete: bool = True
    synthesised: bool = False
    reason: str | None = None
    data: Any = None
    restated: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallReady(TurnEvent):
    """A tool call's input parsed strictly: the call can run."""

    kind: ClassVar[str] = "tool_call_ready"
    block: str
    name: str | None
    call_id: str | None
    input: Any = None
    server_side: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallInvalid(TurnEvent):
    """A tool call that will never run: its input is not JSON (`invalid`) or the
    stream ended inside it (`cut`). `raw` is the text that arrived, `partial`
    the partial value, `error` why."""

    kind: ClassVar[str] = "tool_call_invalid"
    block: str
    name: str | None
    call_id: str | None
    state: Literal["invalid", "cut"]
    raw: str = ""
    partial: Any = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallHeld(TurnEvent):
    """A ready call the application held instead of running (its approval hook said not
    now): it waits for an answer, and the turn ends asking for it. `reason` is the
    hook's word, when it gave one."""

    kind: ClassVar[str] = "tool_call_held"
    block: str
    call_id: str | None
    name: str | None
    reason: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionStarted(TurnEvent):
    """The application started running a ready call."""

    kind: ClassVar[str] = "tool_execution_started"
    block: str
    call_id: str | None
    name: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecutionFinished(TurnEvent):
    """A tool run ended: `ok` with its result, `error`, `denied`, or `interrupted`.

    `reused`: the tool did not run again; this is the result it gave the same call (same
    name, same input) in an earlier attempt of the step that a retry replaced."""

    kind: ClassVar[str] = "tool_execution_finished"
    block: str
    call_id: str | None
    status: ExecutionStatus
    result: Any = None
    error: str | None = None
    reused: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorReported(TurnEvent):
    """An error, in-band: where it came from (`scope`), whether output had arrived in
    its step (`phase`), whether a retry can cure it, and the raw error."""

    kind: ClassVar[str] = "error_reported"
    step: int
    scope: ErrorScope
    phase: ErrorPhase
    retryable: bool = False
    message: str
    code: str | None = None
    raw: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class WireEventPassed(TurnEvent):
    """A wire event the vocabulary does not know, passed through as data."""

    kind: ClassVar[str] = "wire_event_passed"
    step: int
    event_type: str | None
    payload: Any = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Noted(TurnEvent):
    """A diagnostic from upstream that is not an error of the turn (a warning)."""

    kind: ClassVar[str] = "noted"
    step: int
    code: str
    message: str
    diagnostic: Any = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageReported(TurnEvent):
    """The step's usage as far as the wire has reported it (cumulative, like the wire's):
    Anthropic's ``message_start`` input tokens at once, a running count where the wire
    sends one. `StepFinished.usage` is the step's final word."""

    kind: ClassVar[str] = "usage_reported"
    step: int
    usage: Usage


Event = (TurnStarted | TurnFinished | StepStarted | StepFinished | BlockStarted | BlockDelta
         | SignatureAdded | SourceAdded | BlockEnded | ToolCallReady | ToolCallInvalid
         | ToolCallHeld | ToolExecutionStarted | ToolExecutionFinished | ErrorReported | WireEventPassed
         | Noted | UsageReported)

ALL_KINDS: tuple[type, ...] = (TurnStarted, TurnFinished, StepStarted, StepFinished,
                               BlockStarted, BlockDelta, SignatureAdded, SourceAdded,
                               BlockEnded, ToolCallReady, ToolCallInvalid, ToolCallHeld,
                               ToolExecutionStarted, ToolExecutionFinished, ErrorReported,
                               WireEventPassed, Noted, UsageReported)

# Fields only the wire route knows (where an event came from), and the wire's own
# objects that the SDK route sees through its models.
_ORIGIN = frozenset({"seq", "t", "at"})


def comparable(event: TurnEvent, *, drop: frozenset[str] = frozenset()) -> tuple:
    """The event as a plain tuple without its origin (`seq`, `t`, `at`) and `drop`:
    what two routes to the same turn must agree on."""
    return (event.kind,) + tuple((f.name, getattr(event, f.name)) for f in fields(event)
                                 if f.name not in _ORIGIN and f.name not in drop)


def renumber(events: list[TurnEvent], start: int = 0) -> list[TurnEvent]:
    """The same events with `seq` set to their position from `start` (adapters emit
    per step; the driver numbers the turn)."""
    from dataclasses import replace
    return [e if e.seq == start + i else replace(e, seq=start + i)
            for i, e in enumerate(events)]
