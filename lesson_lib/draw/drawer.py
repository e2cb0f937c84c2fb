"""`Drawer`: a turn's drawing kept up to date, event by event; `draw`, the pure function.

Why an object: `draw(state)` must cost what the last delta changed, not
what the whole answer holds, and a `TurnState` joins a block's text only
when read (the whole text, every time). So a `Drawer` reads the events a
state has that it has not seen yet (the states of one turn share one
append-only log; see `lesson_lib.turn.reduce`), hands each to the drawer of
its block, and keeps what settled. Drawing a state older than the last one
drawn (a slider moved back), or a state of another turn, starts again from
its first event: the result is the same, only the cost differs.

`draw` is the pure function over that: the same state and options always
give the same drawing. It memoises one `Drawer` per turn (held weakly, so a
turn that is dropped takes its drawer with it) and so is incremental too.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from ..turn.reduce import TurnState
from .banner import TurnStatus, banner
from .other import OtherDrawer
from .parts import Drawing, Part, Segment
from .reasoning import ReasoningDrawer
from .safety import esc, normal_origins
from .text import TextDrawer
from .tool_call import ToolCallDrawer


class _Fixed:
    """A part that is settled the moment it is drawn (a step's start, an error)."""

    def __init__(self, part: Part) -> None:
        self.part = part

    def segments(self) -> list[Segment]:
        return [((self.part,), 1, ())]


class Drawer:
    """A turn's drawing, kept up to date (see the module).

    `image_origins`: origins whose images may be drawn (once their block
    settled and the turn completed); `stalled_after_ms`: the silence after
    which the banner says stalled (None: never).
    """

    def __init__(self, *, image_origins: Iterable[str] = (),
                 stalled_after_ms: float | None = None) -> None:
        self.origins = normal_origins(image_origins)
        self.stalled_after_ms = stalled_after_ms
        self._reset(None)

    def _reset(self, turn: object) -> None:
        self._turn = turn
        self.count = 0
        self.items: list[Any] = []
        self.blocks: dict[str, Any] = {}
        self.running: set[str] = set()
        self.forming: set[str] = set()
        self.errors = 0
        self.first_error: str | None = None
        self.outcome: str | None = None
        self.reason: str | None = None         # why the turn ended (`turn.ends`)
        self.detail: Any = None
        self.asked_for_tools = False
        self.finish: str | None = None
        self.between_steps = False
        self.run: TextDrawer | None = None     # the text run the next text block may go on
        self.sources = 0
        self.last_t: float | None = None
        self.started_steps: set[int] = set()
        self.stopped: list[str] = []           # what a cancel interrupted, in words, in order

    # -- reading the turn ------------------------------------------------------------------

    def draw(self, state: TurnState, *, now_ms: float | None = None) -> Drawing:
        """The drawing of `state` (at `now_ms` on the events' clock, for the stall)."""
        if state.turn is not self._turn or state.count < self.count:
            self._reset(state.turn)
        for event in state.events_since(self.count):   # reading new events costs only them
            self.apply(event)
        self.count = state.count
        segments: list[Segment] = []
        for item in self.items:
            segments.extend(item.segments())
        segments.append(((), 0, (banner(self.status(), now_ms=now_ms,
                                        stalled_after_ms=self.stalled_after_ms),))
                        if self.outcome is None else
                        ((banner(self.status()),), 1, ()))
        return Drawing(segments)

    def status(self) -> TurnStatus:
        """What the banner says the turn is doing."""
        return TurnStatus(started=self.count > 0, outcome=self.outcome,
                          asked_for_tools=self.asked_for_tools, finish=self.finish,
                          between_steps=self.between_steps, running=len(self.running),
                          forming_calls=len(self.forming), last_t=self.last_t,
                          first_error=self.first_error, interrupted=_joined(self.stopped),
                          reason=self.reason, detail=self.detail)

    def apply(self, event: Any) -> None:
        """Take one turn event into the drawing."""
        if event.t is not None:
            self.last_t = event.t if self.last_t is None else max(self.last_t, event.t)
        handler = getattr(self, "_on_" + event.kind, None)
        if handler is not None:
            handler(event)

    # -- one handler per kind of event -----------------------------------------------------

    def _end_run(self) -> None:
        if self.run is not None:
            self.run.end()
            self.run = None

    def _on_step_started(self, e: Any) -> None:
        self._end_run()
        self.started_steps.add(e.step)
        self.between_steps = False
        self.asked_for_tools = False
        if e.step > 1:
            words = f"Step {e.step}" + (f" · {e.model}" if e.model else "")
            self.items.append(_Fixed(Part(f"step{e.step}", "step",
                                          f'<div class="draw-step">{esc(words)}</div>',
                                          words, True)))

    def _on_step_finished(self, e: Any) -> None:
        self._end_run()
        if e.ended == "cancelled" and e.step not in self.started_steps:
            self.stopped.append(f"the request for step {e.step} before its first byte")
        self.between_steps = True
        self.asked_for_tools = e.finish.reason == "tool_calls"
        self.finish = e.finish.reason

    def _on_block_started(self, e: Any) -> None:
        kind = "refusal" if e.channel == "refusal" else "text"
        run = self.run
        if (e.block_kind == "text" and run is not None and run is self.items[-1]
                and (run.kind, run.step, run.choice) == (kind, e.step, e.choice)):
            run.continue_with(e.block)
            run.feed(e.content)
            self.blocks[e.block] = run
            self.run = None
            return
        self._end_run()
        if e.block_kind == "text":
            item: Any = TextDrawer(e.block, kind, self.origins, e.step, e.choice)
            item.feed(e.content)
        elif e.block_kind == "reasoning":
            item = ReasoningDrawer(e.block, e.redacted, e.content)
        elif e.block_kind == "tool_call":
            # A provider's tool may come with no name, only its kind (``x_call``).
            name = e.name or (e.wire_kind or "").removesuffix("_call") or None
            item = ToolCallDrawer(e.block, name, e.call_id, e.server_side, e.content)
            self.forming.add(e.block)
        else:
            item = OtherDrawer(e.block, e.block_kind, e.wire_kind, e.server_side, e.data,
                               e.content)
        self.blocks[e.block] = item
        self.items.append(item)

    def _on_block_delta(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        if item is not None:
            item.feed(e.fragment)

    def _on_signature_added(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        if isinstance(item, ReasoningDrawer):
            item.sign()

    def _on_source_added(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        if isinstance(item, TextDrawer):
            self.sources += 1
            item.cite(e.block, self.sources, e.source)

    def _on_block_ended(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        if e.reason == "cancelled" and item is not None:     # closed by a cancel, still open
            self.stopped.append(_arriving(item))
        self.forming.discard(e.block)
        if isinstance(item, TextDrawer):
            item.block_ended(e.block)
            self.run = item            # the next text block of the step may go on with it
        elif isinstance(item, ToolCallDrawer):
            item.end()
        elif isinstance(item, ReasoningDrawer):
            item.end(e.complete)
        elif isinstance(item, OtherDrawer):
            item.end(e.complete, e.data)

    def _on_tool_call_ready(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        self.forming.discard(e.block)
        if isinstance(item, ToolCallDrawer):
            item.ready(e.input)

    def _on_tool_call_invalid(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        self.forming.discard(e.block)
        if isinstance(item, ToolCallDrawer):
            item.invalid(e.state, e.raw, e.error)

    def _on_tool_call_held(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        if isinstance(item, ToolCallDrawer):
            item.held()

    def _on_tool_execution_started(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        self.running.add(e.block)
        if isinstance(item, ToolCallDrawer):
            item.started()

    def _on_tool_execution_finished(self, e: Any) -> None:
        item = self.blocks.get(e.block)
        self.running.discard(e.block)
        if e.status == "interrupted":
            name = getattr(item, "name", None) or "?"
            self.stopped.append(f"the tool {name} running")
        if isinstance(item, ToolCallDrawer):
            item.finished(e.status, e.result, e.error)

    def _on_error_reported(self, e: Any) -> None:
        self._end_run()
        self.errors += 1
        where = f"{e.scope}, {e.phase.replace('_', ' ')}"
        words = f"✖ error ({where}): {e.message}"
        if self.first_error is None:
            self.first_error = e.message or e.scope
        self.items.append(_Fixed(Part(f"error{self.errors}", "error",
                                      f'<div class="draw-error" role="alert">{esc(words)}</div>',
                                      words, True)))

    def _on_turn_finished(self, e: Any) -> None:
        self._end_run()
        self.outcome = e.outcome
        self.reason, self.detail = e.reason, e.detail
        self.forming.clear()
        for item in self.items:
            finished = getattr(item, "turn_finished", None)
            if finished is not None:
                finished(e.outcome == "completed")


def _arriving(item: Any) -> str:
    """What a block closed by a cancel was doing, in words."""
    if isinstance(item, TextDrawer):
        return "the refusal arriving" if item.kind == "refusal" else "the text arriving"
    if isinstance(item, ReasoningDrawer):
        return "the reasoning arriving"
    if isinstance(item, ToolCallDrawer):
        return f"the arguments of {item.name or '?'} arriving"
    return f"a {item.kind} block arriving"


def _joined(phrases: list[str]) -> tuple[str, ...]:
    """The phrases once each, in order, a repeated one counted (``the tool x running ×2``)."""
    counts: dict[str, int] = {}
    for phrase in phrases:
        counts[phrase] = counts.get(phrase, 0) + 1
    return tuple(p if n == 1 else f"{p} ×{n}" for p, n in counts.items())


_DRAWERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def draw(state: TurnState, *, now_ms: float | None = None,
         stalled_after_ms: float | None = None, image_origins: Iterable[str] = ()) -> Drawing:
    """What a person sees of `state`: its parts, each settled or not (see the module).

    `now_ms` is the time on the events' clock (the stall banner needs it);
    `stalled_after_ms` the silence that counts as a stall; `image_origins`
    the origins whose images may be drawn once their block settled and the
    turn completed (default none: no image is ever fetched).
    """
    origins = normal_origins(image_origins)
    drawer = _DRAWERS.get(state.turn)
    if drawer is None or drawer.origins != origins:
        drawer = Drawer(image_origins=origins)
        _DRAWERS[state.turn] = drawer
    drawer.stalled_after_ms = stalled_after_ms
    return drawer.draw(state, now_ms=now_ms)
