"""The tool-call card: a tool call drawn as it forms, at any event of a stream (lesson 3).

What a UI can show while a model writes a tool call ("Searching flights…"
the moment the name arrives, "Austin to Tokyo, March" as the arguments fill
in), drawn from the `ToolCallView`s an accumulator keeps:

- the tool's name first, with a state badge: ``⋯ forming…``, ``✓ complete``,
  ``✗ invalid`` or ``✂ cut`` (a glyph, a word and a border style each:
  colour is never the only cue);
- the arguments so far, pretty-printed and HTML-escaped; each value marked
  ``✓ settled`` (solid underline) once it can no longer change, or
  ``… forming`` (dashed underline) while it may; a container's closing
  bracket appears only when it has closed;
- long strings as their last `string_tail` characters with a count of the
  hidden ones, long arrays and objects as their last `max_items` entries, so
  drawing a step costs the same at event 10 and at event 10,000;
- a pause line when the call has had no fragment for more than `PAUSE_MS`
  by the time the next event arrives (times from the capture, never a
  clock): silence while the model works on the next key is the documented
  behaviour of a working system, not a hang;
- for an invalid call, the position and the message, under an excerpt of
  the raw text with a caret; for a cut call, what arrived.
- under a server-side call (a web search, a code run, an MCP tool), what the
  server's tool wrote back once it arrived (``↳``: kind, size, first
  characters); an output that answers no call (a container upload, an MCP
  tool listing) on its own (``◆``).

Pieces: `card_text` / `card_html` render one view; `ToolCardPane` is a pane
for the replay `Player` (one `History` per capture, so a step costs one
``feed``); `tool_call_labeller` is the player's counter (``event 12 / 48 ·
block [1] tool_use get_weather · input_json_delta · 3 fields settled``);
`show_tool_calls(capture, at)` is the same state for a notebook to print.
Each reads an accumulator's `History` (`tool_calls_in`); given a capture, the
capture's one shared history (`replays.history_for`) is the one read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..accumulate.base import Slot
from ..accumulate.history import History
from ..accumulate.labels import address_text
from ..capture.captures import Capture
from ..partial_json import NOTHING
from ..tool_calls import ToolCallView
from .html import BG_ALT, FG, FG_MUTED, MONO, esc, page, section
from .palette import OKABE_ITO
from .replays import event_counter, event_place, history_for, labels_of

PAUSE_MS = 300.0      # a silence longer than this gets the pause line
STRING_TAIL = 120     # characters of a long string shown (its end)
MAX_ITEMS = 12        # entries of an array or object shown (the last ones)
MAX_DEPTH = 8         # deeper containers are summarised
MARK_COLUMN = 44      # where the settled / forming marks line up in plain text


@dataclass(frozen=True)
class StateStyle:
    """How a call's state looks: glyph, word, colour and border style."""

    glyph: str
    word: str
    colour: str
    border: str


STATE_STYLES = {
    "forming": StateStyle("⋯", "forming…", OKABE_ITO["orange"], "dashed"),
    "complete": StateStyle("✓", "complete", OKABE_ITO["bluish green"], "solid"),
    "invalid": StateStyle("✗", "invalid", OKABE_ITO["vermillion"], "double"),
    "cut": StateStyle("✂", "cut", OKABE_ITO["reddish purple"], "dotted"),
}
# What a value that is not settled is called, by the call's state.
UNSETTLED_WORDS = {"forming": "… forming", "cut": "✂ cut off", "invalid": "✗ never settled",
                   "complete": "… forming"}
SETTLED_WORD = "✓ settled"


# -- the arguments as lines ------------------------------------------------------------


@dataclass(frozen=True)
class ValueLine:
    """One line of the pretty arguments: indent depth, text, and its mark (or None)."""

    depth: int
    text: str
    settled: bool | None = None     # None: a line with no mark (a bracket, a note)
    note: str = ""


def value_lines(view: ToolCallView, *, string_tail: int = STRING_TAIL,
                max_items: int = MAX_ITEMS, max_depth: int = MAX_DEPTH) -> list[ValueLine]:
    """The call's value as pretty lines with marks; bounded by the limits, not by its size."""
    value = view.value
    if value is NOTHING:
        return []
    out: list[ValueLine] = []
    # Work items: ("value", prefix, node, path, depth, comma) or ("close", text, path, depth),
    # taken from the end of `todo`: an explicit stack, so deep nesting needs no recursion.
    todo: list[tuple] = [("value", "", value, (), 0, "")]
    while todo:
        item = todo.pop()
        if item[0] == "close":
            _, text, path, depth = item
            out.append(ValueLine(depth, text, True))
            continue
        _, prefix, node, path, depth, comma = item
        settled = view.is_settled(path)
        kind = type(node)
        if kind not in (dict, list) or not node:
            text, note = _scalar(node, string_tail)
            if kind is str and not settled:
                text = text[:-1]              # an open string has no closing quote yet
            if kind in (dict, list) and not settled:
                text = "{" if kind is dict else "["
            out.append(ValueLine(depth, prefix + text + (comma if settled or kind not in
                                                         (dict, list) else ""), settled, note))
            continue
        opener, closer = ("{", "}") if kind is dict else ("[", "]")
        if depth >= max_depth:
            out.append(ValueLine(depth, f"{prefix}{opener}… {len(node)} entries"
                                 f"{closer if settled else ''}{comma if settled else ''}",
                                 settled))
            continue
        out.append(ValueLine(depth, prefix + opener, None if settled else False))
        if settled:
            todo.append(("close", closer + comma, path, depth))
        keys = _last_keys(node, max_items)
        children = []
        for n, key in enumerate(keys):
            child_prefix = json.dumps(key, ensure_ascii=False) + ": " if kind is dict else ""
            last = n == len(keys) - 1
            children.append(("value", child_prefix, node[key], (*path, key), depth + 1,
                             "" if last else ","))
        hidden = len(node) - len(keys)
        if hidden:
            out.append(ValueLine(depth + 1, f"… {hidden:,} earlier "
                                 f"entr{'ies' if hidden != 1 else 'y'} not shown", None))
        todo.extend(reversed(children))
    return out


def _last_keys(node: dict | list, limit: int) -> list:
    """The last `limit` keys (or indices), without walking the rest."""
    if type(node) is list:
        return list(range(max(0, len(node) - limit), len(node)))
    keys = []
    for key in reversed(node):
        if len(keys) == limit:
            break
        keys.append(key)
    keys.reverse()
    return keys


def _scalar(node: Any, string_tail: int) -> tuple[str, str]:
    """A scalar as JSON text (a long string: its tail), and a note of what is hidden."""
    if isinstance(node, str) and len(node) > string_tail:
        hidden = len(node) - string_tail
        return ('"…' + json.dumps(node[-string_tail:], ensure_ascii=False)[1:],
                f"{hidden:,} earlier characters not shown")
    return json.dumps(node, ensure_ascii=False), ""


# -- facts around a card -------------------------------------------------------------


def where(view: ToolCallView) -> str:
    """The call's address in its wire's words: ``block [1]``, ``item [0]``,
    ``item [0] · part [0]``, ``choice 0 · tool_calls[1]``."""
    if isinstance(view.address, int):
        return f"block [{view.address}]"
    return address_text(view.address)


def settled_phrase(view: ToolCallView) -> str:
    """``3 fields settled`` (object), ``2 items settled`` (array), or a word for the rest."""
    value = view.value
    if value is NOTHING:
        return "no arguments yet"
    if type(value) in (dict, list):
        n = len(view.settled_keys())
        noun = "field" if type(value) is dict else "item"
        return f"{n} {noun}{'s' if n != 1 else ''} settled"
    return "settled" if view.is_settled(()) else "not settled"


def end_event(view: ToolCallView) -> str:
    """The wire's event that ends this call, as its accumulator said it (`ended_by`)."""
    return view.ended_by or "the end of the call"


def text_is_whole(view: ToolCallView) -> bool:
    """The arguments already form one whole JSON value (the call may still be forming)."""
    return view.value is not NOTHING and view.open_path is None


@dataclass(frozen=True)
class Pause:
    """A silence in one call: `gap_ms` from its last fragment (or its start) to the next event.

    `waiting_for` is ``key`` (between two keys), ``fragment`` (inside a value)
    or the name of the event that will end the call (its text is whole).
    """

    gap_ms: float
    waiting_for: str

    def text(self) -> str:
        if self.waiting_for in ("key", "fragment"):
            return (f"‖ waiting {self.gap_ms:,.0f} ms for the next {self.waiting_for} — the "
                    "model emits one key and value at a time")
        return (f"‖ waiting {self.gap_ms:,.0f} ms for {self.waiting_for}: the text is whole, "
                "the call is not final yet")


def pause_of(view: ToolCallView, next_t: float | None, threshold: float = PAUSE_MS
             ) -> Pause | None:
    """The pause line for a forming call, given the next event's arrival time."""
    since = view.last_t if view.last_t is not None else view.start_t
    if view.state != "forming" or next_t is None or since is None:
        return None
    gap = next_t - since
    if gap <= threshold:
        return None
    open_path = view.open_path
    if text_is_whole(view):
        return Pause(gap, end_event(view))
    between_keys = view.value is NOTHING or open_path == ()
    return Pause(gap, "key" if between_keys else "fragment")


# -- one card ---------------------------------------------------------------------------


def _header(view: ToolCallView) -> tuple[str, str]:
    name = view.name or "(name not known yet)"
    detail = f"{view.kind} · {where(view)}"
    if view.call_id:
        detail += f" · id {view.call_id}"
    return name, detail


def _mark(line: ValueLine, state: str) -> str:
    if line.settled is None:
        return ""
    word = SETTLED_WORD if line.settled else UNSETTLED_WORDS[state]
    return f"{word} ({line.note})" if line.note else word


def _facts(view: ToolCallView) -> str:
    return (f"{settled_phrase(view)} · {view.raw_length:,} characters in "
            f"{view.fragments:,} fragment{'s' if view.fragments != 1 else ''}")


def _problem_lines(view: ToolCallView) -> list[str]:
    if view.state == "invalid" and view.error is not None:
        excerpt, caret = _excerpt(view.raw, view.error.position)
        lines = [f"✗ not JSON at character {view.error.position}: {view.error.message}",
                 f"raw: {excerpt}", "     " + " " * caret + "^"]
        if view.was_cut:
            lines.append("✂ and the stream ended before the call's end")
        return lines
    if view.state == "cut":
        return ["✂ the stream ended before the call's end: this is what arrived; values not "
                "settled may be incomplete"]
    if view.value is NOTHING and view.state == "forming":
        return ["(no arguments yet: the name arrives first)"]
    if view.state == "forming" and text_is_whole(view):
        return [f"the text parses now, but only {end_event(view)} makes the call final"]
    return []


def _excerpt(raw: str, position: int, before: int = 40, after: int = 20) -> tuple[str, int]:
    """The raw text around `position` (line breaks and tabs made visible), and the caret column."""
    start = max(0, position - before)
    text = raw[start:position + after]
    lead = "…" if start else ""
    shown = lead + text.replace("\n", "⏎").replace("\r", "‹CR›").replace("\t", "→")
    return shown + ("…" if position + after < len(raw) else ""), len(lead) + position - start


def card_text(view: ToolCallView, *, pause: Pause | None = None, current: bool = False,
              string_tail: int = STRING_TAIL, max_items: int = MAX_ITEMS) -> str:
    """One call as plain text (deterministic: what a notebook prints)."""
    style = STATE_STYLES[view.state]
    name, detail = _header(view)
    head = f"{name} — {style.glyph} {style.word}" + ("   ◀ this event" if current else "")
    lines = [head, f"  {detail}"]
    for line in value_lines(view, string_tail=string_tail, max_items=max_items):
        text = "  " + "  " * line.depth + line.text
        mark = _mark(line, view.state)
        lines.append(f"{text:<{MARK_COLUMN}}  {mark}".rstrip() if mark else text)
    lines += ["  " + p for p in _problem_lines(view)]
    lines.append("  " + _facts(view))
    if pause is not None:
        lines.append("  " + pause.text())
    return "\n".join(lines)


def card_html(view: ToolCallView, *, pause: Pause | None = None, current: bool = False,
              string_tail: int = STRING_TAIL, max_items: int = MAX_ITEMS) -> str:
    """One call as a card: name and state badge first, then the arguments, marked."""
    style = STATE_STYLES[view.state]
    name, detail = _header(view)
    label = f"tool call {name}, {style.word}" + (", addressed by this event" if current else "")
    out = [f'<div class="rtw-tool-card" role="group" aria-label="{esc(label)}" '
           f'data-state="{esc(view.state)}" style="border:3px {style.border} {style.colour};'
           f'border-radius:4px;padding:4px 8px;margin:6px 0;color:{FG}">',
           f'<div class="rtw-tool-card-head" style="font-family:{MONO};font-size:13px">'
           f'<b class="rtw-tool-name">{esc(name)}</b> '
           f'<span class="rtw-tool-state" style="border:2px {style.border} {style.colour};'
           f'padding:0 4px;border-radius:3px;white-space:nowrap">'
           f'<span aria-hidden="true">{style.glyph}</span> {esc(style.word)}</span>'
           + (' <span class="rtw-tool-current" style="font-weight:bold">◀ this event</span>'
              if current else "") + "</div>",
           f'<div class="rtw-note" style="color:{FG_MUTED};font-size:12px;font-family:{MONO}">'
           f'{esc(detail)}</div>']
    rows = []
    for line in value_lines(view, string_tail=string_tail, max_items=max_items):
        indent = "  " * line.depth
        mark = _mark(line, view.state)
        if line.settled is None:
            rows.append(f"{indent}{esc(line.text)}")
            continue
        kind = "settled" if line.settled else "open"
        underline = "solid" if line.settled else "dashed"
        rows.append(f'{indent}<span class="rtw-value-{kind}" style="text-decoration:underline '
                    f'{underline};text-underline-offset:3px">{esc(line.text)}</span>'
                    f'  <span class="rtw-mark rtw-mark-{kind}" style="color:{FG_MUTED}">'
                    f'{esc(mark)}</span>')
    if rows:
        out.append(f'<pre class="rtw-tool-args" style="font-family:{MONO};font-size:12px;'
                   f'margin:2px 0;white-space:pre-wrap;word-break:break-all;background:{BG_ALT};'
                   f'padding:4px">' + "\n".join(rows) + "</pre>")
    for problem in _problem_lines(view):
        out.append(f'<div class="rtw-tool-problem" style="font-family:{MONO};font-size:12px;'
                   f'white-space:pre">{esc(problem)}</div>')
    out.append(f'<div class="rtw-note" style="color:{FG_MUTED};font-size:12px">'
               f'{esc(_facts(view))}</div>')
    if pause is not None:
        out.append(f'<div class="rtw-tool-pause" style="font-size:12px;font-style:italic">'
                   f'{esc(pause.text())}</div>')
    out.append("</div>")
    return "".join(out)


# -- what a server-side tool wrote -------------------------------------------------------

OUTPUT_EXCERPT = 160  # characters of a server output shown


def output_line(slot: Slot, limit: int = OUTPUT_EXCERPT) -> str:
    """A server tool's output in one line: its kind, whether it is whole, its size and its
    first characters (it arrives whole, in its block's start). ``↳`` under the call it
    answers; ``◆`` for one that answers no call shown (an upload, a tool listing)."""
    whole = "✓ arrived" if slot.state == "closed" else "⋯ arriving"
    text = " ".join(slot.content.split())
    excerpt = text if len(text) <= limit else text[:limit - 1] + "…"
    glyph = "↳" if slot.answers is not None else "◆"
    return f"{glyph} {slot.kind} · {whole} · {len(slot.content):,} characters: {excerpt}"


def output_html(slot: Slot, limit: int = OUTPUT_EXCERPT) -> str:
    """`output_line` as a block under its call's card (or on its own)."""
    return (f'<div class="rtw-tool-output" role="note" style="font-family:{MONO};font-size:12px;'
            f'color:{FG};border-left:3px solid {FG_MUTED};padding:2px 6px;margin:2px 0 6px 12px;'
            f'white-space:pre-wrap;word-break:break-all">{esc(output_line(slot, limit))}</div>')


def _answering(outputs: list[Slot], call_id: str | None) -> list[Slot]:
    return [s for s in outputs if call_id is not None and s.answers == call_id]


def _unanswered(outputs: list[Slot], calls: list[ToolCallView]) -> list[Slot]:
    ids = {v.call_id for v in calls}
    return [s for s in outputs if s.answers is None or s.answers not in ids]


# -- the state at an event ----------------------------------------------------------------


@dataclass(frozen=True)
class ToolCallsAt:
    """Every tool call after one event (the player's index), with pauses and which
    calls the event addressed."""

    capture: str
    index: int
    events: int
    ended: bool
    calls: list[ToolCallView]
    pauses: list[Pause | None] = field(default_factory=list)
    current: list[bool] = field(default_factory=list)
    outputs: list[Slot] = field(default_factory=list)   # what server-side tools wrote

    @property
    def caption(self) -> str:
        """Where in the stream this state is."""
        if self.events == 0:
            return f"{self.capture}: no events"
        end = " (the end of the stream)" if self.ended else ""
        return f"{self.capture}: after event {self.index} of {self.events}{end}"

    def text(self) -> str:
        """The caption, then every card (with what server tools wrote for it), as plain
        text."""
        cards = ["\n".join([card_text(v, pause=p, current=c),
                            *("  " + output_line(s) for s in _answering(self.outputs, v.call_id))])
                 for v, p, c in zip(self.calls, self.pauses, self.current, strict=True)]
        cards += [output_line(s) for s in _unanswered(self.outputs, self.calls)]
        return "\n".join([self.caption, *(cards or ["(no tool calls yet)"])])

    def html(self) -> str:
        """The cards, with the caption."""
        cards = [card_html(v, pause=p, current=c)
                 + "".join(output_html(s) for s in _answering(self.outputs, v.call_id))
                 for v, p, c in zip(self.calls, self.pauses, self.current, strict=True)]
        cards += [output_html(s) for s in _unanswered(self.outputs, self.calls)]
        if not cards:
            cards = [f'<p class="rtw-note" style="color:{FG_MUTED}">No tool calls yet.</p>']
        return (f'<div class="rtw-tool-cards"><p class="rtw-note" style="color:{FG_MUTED};'
                f'font-size:12px;margin:2px 0">{esc(self.caption)}</p>{"".join(cards)}</div>')


def timeline_for(capture: Capture, every: int = 64) -> History:
    """The capture's history, shared by the panes and the labeller (`replays.history_for`)."""
    return history_for(capture, every)


def tool_calls_at(capture: Capture, index: int | None, *, every: int = 64,
                  pause_ms: float = PAUSE_MS) -> ToolCallsAt:
    """The tool calls of `capture` after event `index`: `tool_calls_in` its shared history
    (`timeline_for`)."""
    return tool_calls_in(timeline_for(capture, every), index, pause_ms=pause_ms)


def tool_calls_in(timeline: History, index: int | None, *,
                  pause_ms: float = PAUSE_MS) -> ToolCallsAt:
    """The tool calls after event `index` of one stream's accumulator history (None or the
    last index: after the end too).

    The last index shows the history's ended snapshot (what `accumulate`
    ends with); any other index the live accumulator's views, so a step
    costs one ``feed`` and views of the calls, not the whole message. The
    calls marked as this event's are those whose slot its changes addressed.
    """
    n = len(timeline)
    name = timeline.capture.key
    if n == 0 or timeline.http_error is not None:
        return ToolCallsAt(name, -1, 0, True, [], [], [])
    i = n - 1 if index is None else max(0, min(int(index), n - 1))
    ended = i == n - 1
    if ended:
        calls = list(timeline.end().tool_calls)
        outputs = [s for s in timeline.end().slots if s.from_server]
    else:
        live = timeline.accumulator_at(i + 1)
        calls, outputs = live.tool_calls(), live.server_outputs()
    next_t = timeline.events[i + 1].t if i + 1 < n else None
    pauses = [pause_of(v, next_t, pause_ms) for v in calls]
    # The calls whose slot this event's changes addressed.
    touched = {getattr(change, "address", None) for change in timeline.changes_of(i)}
    current = [v.address in touched for v in calls]
    return ToolCallsAt(name, i, n, ended, calls, pauses, current, outputs)


class ToolCallsView:
    """The tool calls at one event, for a notebook: HTML in a browser, text anywhere else."""

    def __init__(self, state: ToolCallsAt) -> None:
        self.state = state

    def _repr_html_(self) -> str:
        return page(section("Tool calls", self.state.html()))

    def __repr__(self) -> str:
        return self.state.text()

    __str__ = __repr__


def show_tool_calls(source: Capture | History, at: int | None = None) -> ToolCallsView:
    """The tool-call cards after event `at` (None: after the whole stream) of an accumulator
    `History`, or of a capture (its shared history)."""
    if isinstance(source, History):
        return ToolCallsView(tool_calls_in(source, at))
    return ToolCallsView(tool_calls_at(source, at))


class ToolCardPane:
    """The tool-call cards as a player pane: ``pane(capture, index) -> HTML`` and ``text``."""

    def __init__(self, name: str = "Tool calls", every: int = 64,
                 pause_ms: float = PAUSE_MS) -> None:
        self.name = name
        self.every = every
        self.pause_ms = pause_ms

    def state(self, capture: Capture, index: int) -> ToolCallsAt:
        """The tool calls after event `index`."""
        return tool_calls_at(capture, index, every=self.every, pause_ms=self.pause_ms)

    def __call__(self, capture: Capture, index: int) -> str:
        """The cards after event `index`, as an HTML region titled with the pane's name."""
        return section(self.name, self.state(capture, index).html())

    def text(self, capture: Capture, index: int) -> str:
        """The cards after event `index`, as plain text."""
        return self.state(capture, index).text()


# -- the counter -----------------------------------------------------------------------------


def tool_call_labeller(capture: Capture, index: int) -> str:
    """The player's counter, naming the tool call the event addresses and what is settled.

    ``event 17 / 38 · block [1] tool_use search_flights · input_json_delta · 1 field
    settled``; an event that addresses no tool call gets the plain counter
    (`replays.event_counter`).
    """
    n = len(capture.events)
    if n == 0:
        return event_counter(capture, index)
    state = tool_calls_at(capture, index)
    i = state.index
    touched = [v for v, c in zip(state.calls, state.current, strict=True) if c]
    if not touched:
        return event_counter(capture, i)
    what = labels_of(capture)[i].rsplit(" · ", 1)[-1]
    if len(touched) == 1:
        view = touched[0]
        tail = settled_phrase(view)
        if view.state != "forming":
            tail += f" · {view.state}"
        return (f"{event_place(i, n)} · {where(view)} {view.kind} {view.name} · {what} · "
                f"{tail}")
    calls = "; ".join(f"{v.name} {v.state}" for v in touched)
    return f"{event_place(i, n)} · {labels_of(capture)[i]} · {calls}"
