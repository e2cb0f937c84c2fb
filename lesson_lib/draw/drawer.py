"""`Drawer`: a turn's drawing, read from the reducer's state; `draw`, the pure function.

The rule is lesson 6's: ``draw(state) -> Drawing``. The drawing decides no
fact of the turn: what began and in what order, a block's text, sources and
status, the tools running, the calls forming, the steps, the errors, what a
cancel stopped and the outcome are the reducer's (`lesson_lib.turn.reduce`),
and the drawing reads them from the state. It decides only how they look.

Why an object: `draw(state)` must cost what the last delta changed, not what
the whole answer holds, and a `TurnState` joins a block's text only when
read (the whole text, every time). So a `Drawer` remembers how far into the
state it has drawn (`count`) and the drawers of the blocks it drew; for a
later state of the same turn it reads only what the state gained since
(`TurnState.blocks_changed_since`, `block_news`, `outline_since`: the
states of one turn share one append-only log). Drawing a state older than
the last one drawn (a slider moved back), or a state of another turn,
starts again from its start: the result is the same, only the cost differs.

`draw` is the pure function over that: the same state and options always
give the same drawing. It memoises one `Drawer` per turn (held weakly, so a
turn that is dropped takes its drawer with it) and so is incremental too.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from ..turn.reduce import TurnState
from .banner import banner, turn_status
from .other import OtherDrawer
from .parts import Drawing, Part, Segment
from .reasoning import ReasoningDrawer
from .safety import esc, normal_origins
from .text import TextDrawer
from .tool_call import ToolCallDrawer, call_name


class _Fixed:
    """A part that is settled the moment it is drawn (a step's start, an error)."""

    def __init__(self, part: Part) -> None:
        self.part = part

    def segments(self) -> list[Segment]:
        return [((self.part,), 1, ())]


class Drawer:
    """A turn's drawing, kept up to date from its states (see the module).

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
        self.count = 0                         # the events of the turn drawn so far
        self.items: list[Any] = []             # what is drawn, in reading order
        self.blocks: dict[str, Any] = {}       # block id -> its drawer (a run's blocks share one)
        self.errors = 0
        self.read_to = -1                      # the index of the last outline event read
        self._window: list[tuple[int, Any]] = []   # the outline events this drawing reads
        # The text run the next text block may go on with, and where its last block ended:
        self.run: tuple[TextDrawer, int] | None = None

    # -- reading the state -----------------------------------------------------------------

    def draw(self, state: TurnState, *, now_ms: float | None = None) -> Drawing:
        """The drawing of `state` (at `now_ms` on the events' clock, for the stall)."""
        if state.turn is not self._turn or state.count < self.count:
            self._reset(state.turn)
        seen = self.count
        self._window = state.outline_since(seen)
        for block in state.blocks_changed_since(seen):   # what arrived for blocks drawn before
            self._catch_up(state, block, seen)
        for index, event in self._window:               # then what began or ended, in order
            self._outline(state, index, event)
        self.count = state.count
        segments: list[Segment] = []
        for item in self.items:
            segments.extend(item.segments())
        status = turn_status(state)
        segments.append(((), 0, (banner(status, now_ms=now_ms,
                                        stalled_after_ms=self.stalled_after_ms),))
                        if status.outcome is None else ((banner(status),), 1, ()))
        return Drawing(segments)

    def _outline(self, state: TurnState, index: int, event: Any) -> None:
        """A step, a block or an error began, or a step or the turn ended."""
        kind = event.kind
        if kind == "block_started":
            self._begin(state, index, event)
        else:
            self._end_run(index)
        if kind == "step_started" and event.step > 1:
            words = f"Step {event.step}" + (f" · {event.model}" if event.model else "")
            self.items.append(_Fixed(Part(f"step{event.step}", "step",
                                          f'<div class="draw-step">{esc(words)}</div>',
                                          words, True)))
        elif kind == "error_reported":
            self.errors += 1
            where = f"{event.scope}, {event.phase.replace('_', ' ')}"
            words = f"✖ error ({where}): {event.message}"
            self.items.append(_Fixed(Part(f"error{self.errors}", "error",
                                          f'<div class="draw-error" role="alert">{esc(words)}'
                                          "</div>", words, True)))
        elif kind == "turn_finished":
            for item in self.items:
                finished = getattr(item, "turn_finished", None)
                if finished is not None:
                    finished(event.outcome == "completed")
        self.read_to = index

    def _end_run(self, index: int) -> None:
        """Something began or ended after the run's last block: the run is over."""
        if self.run is not None and self.run[1] < index:
            self.run[0].end()
            self.run = None

    def _end_run_before(self, index: int) -> None:
        """The run before ends if anything began or ended between its end and `index`."""
        if self.run is not None and any(self.run[1] < i < index for i, _ in self._window):
            self._end_run(index)

    def _begin(self, state: TurnState, index: int, e: Any) -> None:
        """Block `e` began: it goes on the text run before it, or gets a drawer of its own."""
        kind = "refusal" if e.channel == "refusal" else "text"
        run = self.run
        if (e.block_kind == "text" and run is not None and run[0] is self.items[-1]
                and self.read_to < run[1] < index
                and (run[0].kind, run[0].step, run[0].choice) == (kind, e.step, e.choice)):
            run[0].continue_with(e.block)
            run[0].feed(e.content)
            self.blocks[e.block] = run[0]
            self.run = None
        else:
            self._end_run(index)
            item: Any
            if e.block_kind == "text":
                item = TextDrawer(e.block, kind, self.origins, e.step, e.choice)
                item.feed(e.content)
            elif e.block_kind == "reasoning":
                item = ReasoningDrawer(e.block, e.redacted, e.content)
            elif e.block_kind == "tool_call":
                item = ToolCallDrawer(e.block, call_name(e), e.call_id, e.server_side, e.content)
            else:
                item = OtherDrawer(e.block, e.block_kind, e.wire_kind, e.server_side, e.data,
                                   e.content)
            self.blocks[e.block] = item
            self.items.append(item)
        self._catch_up(state, e.block, index + 1)

    def _catch_up(self, state: TurnState, block: str, since: int) -> None:
        """Hand a block's drawer what the block gained after the first `since` events."""
        item = self.blocks.get(block)
        if item is None:
            return                           # begun after `since`: drawn when it begins
        news = state.block_news(block, since)
        for fragment in news.fragments:
            item.feed(fragment)
        if isinstance(item, TextDrawer):
            for source, at, number in news.sources:
                item.cite(block, number, source, at)
        for e in news.status:
            self._status(state, item, e)

    def _status(self, state: TurnState, item: Any, e: Any) -> None:
        """The block's status moved on: ended, its call ready, held, run, signed."""
        kind = e.kind
        if kind == "block_ended":
            if isinstance(item, TextDrawer):
                item.block_ended(e.block)
                ended = state.ended_at(e.block)
                if ended is not None and (self.run is None or self.run[1] < ended):
                    self._end_run_before(ended)
                    self.run = (item, ended)   # the next text block of the step may go on
            elif isinstance(item, ToolCallDrawer):
                item.end()
            elif isinstance(item, ReasoningDrawer):
                item.end(e.complete)
            elif isinstance(item, OtherDrawer):
                item.end(e.complete, e.data)
        elif kind == "signature_added" and isinstance(item, ReasoningDrawer):
            item.sign()
        elif isinstance(item, ToolCallDrawer):
            if kind == "tool_call_ready":
                item.ready(e.input)
            elif kind == "tool_call_invalid":
                item.invalid(e.state, e.raw, e.error)
            elif kind == "tool_call_held":
                item.held()
            elif kind == "tool_execution_started":
                item.started()
            elif kind == "tool_execution_finished":
                item.finished(e.status, e.result, e.error)


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
