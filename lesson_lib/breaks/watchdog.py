"""The stall watchdog: a documented pause, or a dead stream?

Streams go quiet for good reasons: before the first token the model is
reading (and thinking), between the keys of tool arguments it is planning
the next value, and Anthropic sends ``ping`` events to keep an idle
connection open. A watchdog that fires on any silence of a second cries
wolf; one that never fires leaves a dead connection spinning forever.

So the thresholds are read from the captures' own arrival times, not
guessed: `gap_profile` collects, per wire, the silence that followed each
kind of event (`kind_of`), and `thresholds` keeps, per wire and kind, a
percentile of those gaps (nearest rank; `PERCENTILE` is 100, the longest
such pause a good stream showed, since the long pauses between argument
keys are few among many quick fragments) as the longest *expected*
pause, and three times the longest gap seen anywhere on that wire as the
point where the connection is taken as lost (the factor is the one policy
choice here; the gaps are measured). `corpus_thresholds` computes them
over the project's corpus.

`ui_state(silence_ms, last_kind, limits)` is the pure function a view
calls on every tick of its virtual clock: ``still working`` within the
expected pause, ``no data for N s`` beyond it, ``connection lost`` past the
lost limit, and ``done`` after the terminal.

The course's captures are constructed: their arrival times are modelled
(``"timing": "synthetic"`` in every sidecar), drawn by the corpus builders
from ranges modelled on live recordings, so the thresholds measured on them
show the method, not a production figure: measure on recordings of your own.

Some silences are long by nature and the stream says so: a server-side tool
is running (Anthropic's ``server_tool_use`` block has ended and its result
block has not started; a Responses ``web_search_call`` item is open) or the
model is thinking (a thinking block or a reasoning item is open). A web search
takes seconds, thinking can take minutes; no threshold taken from text gaps
fits them. `activity` names what the stream says is going on, and `waiting`
is what a UI shows then: the activity and the seconds it has taken
(``searching the web · 12 s``), with Stop still offered, and ``connection
lost`` left to the transport's read timeout (`READ_TIMEOUT_MS`, the official
SDKs' default) rather than to a text gap.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from ..accumulate import accumulator_for
from ..capture.captures import Capture, corpus
from ..turn.events import BlockEnded, BlockStarted
from ..turn.stream import TurnStream
from ..wires import WIRES, responses
from ..wires.wire_events import WireEvent, parse_all

STILL_WORKING = "still working"
LOST = "connection lost"
DONE = "done"
PERCENTILE = 100
LOST_FACTOR = 3.0
READ_TIMEOUT_MS = 600_000.0    # the anthropic and openai SDKs' default timeout: 10 minutes

# The kinds of event a silence can follow.
KINDS = ("start", "text", "tool_arguments", "ping", "other", "end")


# The accumulator's changes that say output arrived, and those that say the stream ended.
_OUTPUT = frozenset({"slot_opened", "text_appended", "tool_input_grew"})
_ENDS = frozenset({"terminal_reached", "in_band_error"})


def kinds(events: Sequence[WireEvent], wire: str) -> list[str]:
    """What a silence after each event means (see `KINDS`), in one pass.

    Read from what the wire's accumulator says each event changed, so every
    wire is read the same way and no payload is read here: ``end`` for the
    wire's terminal or an in-band error, ``tool_arguments`` for tool input
    (or a call announced, its arguments to come), ``text`` for text or
    reasoning, ``ping`` for a keep-alive the wire names (`KEEPALIVES`),
    ``start`` before any output, ``other`` for the rest. Events are taken as
    the stream's from its first (``start`` needs to know that nothing came
    before).
    """
    module = WIRES.get(wire)
    if module is None:
        return ["other"] * len(events)
    accumulator = accumulator_for(wire)
    out, begun = [], False
    for position, ev in enumerate(events):
        changes = accumulator.feed(ev)
        begun = begun or any(c.kind in _OUTPUT for c in changes)
        out.append(_kind(ev, changes, module.KEEPALIVES,
                         fresh=not begun and ev.index == position))
    return out


def _kind(ev: WireEvent, changes: list, keepalives: frozenset[str], *, fresh: bool) -> str:
    """One event's kind, from its changes (see `kinds`)."""
    found = {c.kind for c in changes}
    if not found.isdisjoint(_ENDS):
        return "end"
    if "tool_input_grew" in found or any(c.kind == "slot_opened" and c.takes_input
                                         for c in changes):
        return "tool_arguments"
    if any((c.kind == "text_appended" and c.fragment)
           or (c.kind == "slot_opened" and c.content) for c in changes):
        return "text"
    if ev.type in keepalives:
        return "ping"
    return "start" if fresh else "other"


def kind_of(ev: WireEvent, wire: str, before: Sequence[WireEvent] = ()) -> str:
    """What a silence after `ev` means (see `kinds`); `before` are the stream's events
    before it, which say what was open (without them, a later event is read alone)."""
    return kinds([*before, ev], wire)[-1]


def gap_profile(captures: Iterable[Capture]) -> dict[str, dict[str, list[float]]]:
    """Per wire and kind: every silence (ms) that followed such an event, in the captures."""
    out: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for cap in captures:
        if cap.status >= 300 or not cap.wire:
            continue
        events = parse_all(cap.events)
        for a, b, kind in zip(events, events[1:], kinds(events, cap.wire), strict=False):
            if a.t is not None and b.t is not None:
                out[cap.wire][kind].append(b.t - a.t)
    return {w: dict(k) for w, k in out.items()}


def percentile(values: list[float], pct: float) -> float:
    """The nearest-rank percentile of `values` (non-empty)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(pct / 100 * len(ordered)) - 1)]


@dataclass(frozen=True)
class Limits:
    """One wire's thresholds: the expected pause per kind of event, and the lost limit (ms)."""

    pause_ms: dict[str, float]
    lost_ms: float

    def expected(self, kind: str) -> float:
        """The longest expected pause after `kind` (the longest of all, for a kind unseen)."""
        return self.pause_ms.get(kind, max(self.pause_ms.values(), default=self.lost_ms))


def thresholds(profile: dict[str, dict[str, list[float]]]) -> dict[str, Limits]:
    """Per wire: the `PERCENTILE` gap per kind, and `LOST_FACTOR` times the longest gap."""
    out = {}
    for wire, kinds in profile.items():
        pauses = {k: percentile(v, PERCENTILE) for k, v in kinds.items() if v}
        longest = max((max(v) for v in kinds.values() if v), default=0.0)
        out[wire] = Limits(pauses, LOST_FACTOR * longest)
    return out


@cache
def corpus_thresholds() -> dict[str, Limits]:
    """The thresholds measured over the project's own corpus."""
    return thresholds(gap_profile(corpus()))


def ui_state(silence_ms: float, last_kind: str, limits: Limits) -> str:
    """What the UI says after `silence_ms` without a byte, the last event being `last_kind`."""
    if last_kind == "end":
        return DONE
    if silence_ms >= limits.lost_ms:
        return LOST
    if silence_ms <= limits.expected(last_kind):
        return STILL_WORKING
    return f"no data for {int(silence_ms // 1000)} s"


# What a UI says while a server-side tool runs, by the tool's name or item type.
# (Anthropic names the tool in its ``server_tool_use`` block; Responses by the item type.)
_SERVER_TOOL_WORDS = {"web_search": "searching the web", "web_fetch": "fetching a page",
                      "code_execution": "running code",
                      responses.WEB_SEARCH_CALL_ITEM: "searching the web",
                      responses.FILE_SEARCH_CALL_ITEM: "searching files",
                      responses.CODE_INTERPRETER_CALL_ITEM: "running code"}
THINKING = "thinking"


def _server_tool_words(name: str) -> str:
    return _SERVER_TOOL_WORDS.get(name, f"running the server tool {name}")


def activity(events: list[WireEvent], wire: str) -> str | None:
    """What the stream says is going on during a silence after `events`, or None.

    Read from the turn events the wire's accumulator and adapter make of
    `events` (no payload is read here), the same way on every wire:
    ``thinking`` while a reasoning block is open (Anthropic's thinking block,
    a Responses reasoning item, ...); the server tool's own words
    (``searching the web``) while a call the provider runs itself is at work.
    Where the wire sends a server tool's result as a block of its own
    (`SERVER_RESULTS_APART`: Anthropic) the tool runs after its call's block
    ended, until a result block starts and while no other block is open;
    elsewhere (Responses) it runs while its call's block is open. None
    otherwise, and on the wires that say neither.
    """
    module = WIRES.get(wire)
    if module is None or not events:
        return None
    apart = module.SERVER_RESULTS_APART
    open_blocks: dict[str, BlockStarted] = {}
    waiting_for: list[str] = []       # server calls that ended, their results to come
    for event in TurnStream(wire).feed_events(events):
        if isinstance(event, BlockStarted):
            open_blocks[event.block] = event
            if event.server_side and event.block_kind == "tool_result" and waiting_for:
                waiting_for.pop(0)
        elif isinstance(event, BlockEnded):
            ended = open_blocks.pop(event.block, None)
            if apart and ended is not None and _server_call(ended):
                waiting_for.append(ended.name or ended.wire_kind or "?")
    if any(b.block_kind == "reasoning" for b in open_blocks.values()):
        return THINKING
    if not apart:
        running = [b for b in open_blocks.values() if _server_call(b)]
        return _server_tool_words(running[-1].wire_kind or "?") if running else None
    if waiting_for and not open_blocks:
        return _server_tool_words(waiting_for[-1])
    return None


def _server_call(block: BlockStarted) -> bool:
    return block.server_side and block.block_kind == "tool_call"


def waiting(silence_ms: float, events: list[WireEvent], wire: str, limits: Limits,
            read_timeout_ms: float = READ_TIMEOUT_MS) -> str:
    """What a UI says after `silence_ms` without a byte, having received `events`.

    During a named `activity` the UI says it and counts the seconds
    (``searching the web · 12 s``), and only the transport's read timeout
    makes it ``connection lost``; otherwise `ui_state` decides, from the
    last event's kind and the measured thresholds.
    """
    last = kinds(events, wire)[-1] if events else "start"
    if last == "end":
        return DONE
    doing = activity(events, wire)
    if doing is None:
        return ui_state(silence_ms, last, limits)
    if silence_ms >= read_timeout_ms:
        return LOST
    return f"{doing} · {int(silence_ms // 1000)} s"
