"""The turn view: a `TurnState` drawn for a learner (lesson 4).

What a UI for an agent turn shows, read only from the turn's own vocabulary
(never from a wire, so a new provider changes nothing here):

- an outcome banner first. It says ``completed`` only for a turn whose every
  stream ended properly; a stream that died says ``truncated`` (or
  ``failed`` with the error's scope and phase), and a turn still under way
  says ``in progress``: never "done" for a stream that did not finish;
- each step (one model call): its wire, model, finish reason next to the
  provider's raw value, how its stream ended, and its usage;
- each block in order, with its id as an index badge (``s1.b0``): text and
  reasoning as they arrived, a tool call as a card whose state is one of
  `TOOL_STATES` (``forming``, ``ready``, ``held``, ``running``, ``done``, ``failed``,
  ``invalid``, ``cut``, ``interrupted``);
- the turn's usage totals and its errors.

Every state has a glyph, a word and a border style besides its colour
(the palette's Okabe-Ito hues, each behind a CSS variable with the hex as fallback, so a theme
may override it): colour is never the only cue. All model text, tool names,
inputs, results and error messages are HTML-escaped.

Pieces: `render_turn(state)` (HTML) and `turn_text(state)` (plain text, also
what the CLI prints: it lives with the turn's words in `lesson_lib.turn.summary`);
`show_turn(...)` for a notebook; `TurnPane`, a pane over a state (`render`,
for `TurnPlayer`) and for the replay `Player` (the turn at the slider's event),
and `turn_labeller`, the player's counter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..capture.captures import Capture
from ..capture.json_text import dumps
from ..turn.reduce import BlockView, TurnState, reduce_all
from ..turn.summary import (
    BLOCK_STATE_WORDS,
    ENDED_SAYS,
    INPUT_TAIL,
    OUTCOME_WORDS,
    TEXT_TAIL,
    TOOL_STATE_WORDS,
    block_state,
    error_words,
    finish_words,
    forming_fields,
    outcome_line,
    shown_outcome,
    tail,
    tool_state,
    turn_text,
    warnings_of,
)
from .html import BG_ALT, FG, FG_MUTED, MONO, esc, page, section
from .palette import OKABE_ITO
from .panes import default_labeller
from .replays import replay_for


@dataclass(frozen=True)
class Look:
    """How one state looks: glyph, word, colour (a CSS variable with its fallback), border."""

    glyph: str
    word: str
    colour: str
    border: str


def _colour(name: str, okabe: str) -> str:
    return f"var(--rtw-{name}, {OKABE_ITO[okabe]})"


def _looks(words: dict, styles: dict) -> dict:
    return {state: Look(*words[state], _colour(*styles[state][:2]), styles[state][2])
            for state in words}


# Colour (its CSS variable and Okabe-Ito fallback) and border of each state; the glyphs
# and words are the turn's own (`lesson_lib.turn.summary`).
TOOL_STATES: dict[str, Look] = _looks(TOOL_STATE_WORDS, {
    "forming": ("forming", "orange", "dashed"), "ready": ("ready", "sky blue", "solid"),
    "running": ("running", "blue", "dotted"), "done": ("done", "bluish green", "solid"),
    "failed": ("failed", "vermillion", "double"), "invalid": ("invalid", "vermillion", "groove"),
    "cut": ("cut", "reddish purple", "dotted"),
    "interrupted": ("interrupted", "yellow", "dashed"),
    "held": ("interrupted", "yellow", "double"),      # waits for the application's answer
})
BLOCK_STATES: dict[str, Look] = _looks(BLOCK_STATE_WORDS, {
    "arriving": ("forming", "orange", "dashed"), "complete": ("done", "bluish green", "solid"),
    "incomplete": ("cut", "reddish purple", "dotted"),
})
OUTCOMES: dict[str | None, Look] = _looks(OUTCOME_WORDS, {
    None: ("running", "blue", "dashed"), "completed": ("done", "bluish green", "solid"),
    "paused": ("forming", "orange", "dashed"), "failed": ("failed", "vermillion", "double"),
    "truncated": ("cut", "reddish purple", "dotted"),
    "cancelled": ("interrupted", "yellow", "dashed"),
    "max_steps": ("forming", "orange", "dashed"),
    "budget_reached": ("interrupted", "yellow", "dashed"),
    "unknown": ("invalid", "vermillion", "groove"),
    "tools_to_run": ("ready", "sky blue", "solid"), "next_step": ("running", "blue", "dashed"),
})


def _json(value: Any) -> str:
    try:
        return dumps(value)     # linear and without recursion at any depth
    except ValueError:          # a circular value: say it as Python would
        return repr(value)



# -- HTML -----------------------------------------------------------------------------------

CSS = f"""<style>
.rtw-turn {{ font-family: var(--jp-ui-font-family, system-ui, sans-serif); color: {FG};
  font-size: 13px; }}
.rtw-turn-banner {{ padding: 6px 10px; margin: 4px 0 8px; border-radius: 4px;
  background: {BG_ALT}; font-weight: bold; }}
.rtw-turn-step {{ border-left: 3px solid {FG_MUTED}; padding: 2px 8px; margin: 6px 0; }}
.rtw-turn-step-head {{ color: {FG_MUTED}; margin: 2px 0 4px; }}
.rtw-turn-block {{ margin: 4px 0; padding: 3px 6px; border-radius: 3px; }}
.rtw-turn-text {{ font-family: {MONO}; white-space: pre-wrap; word-break: break-word;
  margin: 2px 0; }}
.rtw-turn-badge {{ font-family: {MONO}; font-size: 11px; border: 1px solid {FG_MUTED};
  border-radius: 8px; padding: 0 5px; margin-right: 4px; }}
.rtw-turn-state {{ padding: 0 4px; border-radius: 3px; white-space: nowrap; }}
.rtw-turn-usage td, .rtw-turn-usage th {{ padding: 0 6px; text-align: right;
  font-family: {MONO}; font-size: 12px; }}
</style>"""


def _badge(look: Look, state: str) -> str:
    return (f'<span class="rtw-turn-state" data-state="{esc(state)}" '
            f'style="border:2px {look.border} {look.colour}">'
            f'<span aria-hidden="true" style="color:{look.colour}">{look.glyph}</span> '
            f'{esc(look.word)}</span>')


def _banner(state: TurnState) -> str:
    look = OUTCOMES.get(shown_outcome(state), OUTCOMES[None])
    outcome = state.outcome or "in_progress"
    return (f'<div class="rtw-turn-banner" role="status" data-outcome="{esc(outcome)}" '
            f'style="border:3px {look.border} {look.colour}">'
            f'<span aria-hidden="true" style="color:{look.colour}">{look.glyph}</span> '
            f'{esc(outcome_line(state, glyph=False))}</div>')


def _pre(text: str, hidden: int = 0) -> str:
    more = (f'<span class="rtw-note" style="color:{FG_MUTED}">… {hidden} earlier characters '
            "not shown … </span>") if hidden else ""
    return f'<pre class="rtw-turn-text">{more}{esc(text)}</pre>'


def _block_html(block: BlockView) -> str:
    badge = f'<span class="rtw-turn-badge" title="block id">{esc(block.id)}</span>'
    extra = []
    if block.server_side:
        extra.append("server-side")
    if block.choice:
        extra.append(f"choice {block.choice}")
    tags = "".join(f' <span class="rtw-note" style="color:{FG_MUTED}">{esc(t)}</span>'
                   for t in extra)
    if block.kind == "tool_call":
        return _tool_card(block, badge, tags)
    state = block_state(block)
    look = BLOCK_STATES[state]
    label = "refusal" if block.channel == "refusal" else block.kind
    if block.signature:
        tags += f' <span class="rtw-note" style="color:{FG_MUTED}">signed</span>'
    if block.redacted:
        tags += f' <span class="rtw-note" style="color:{FG_MUTED}">redacted</span>'
    text, hidden = tail(block.text, TEXT_TAIL)
    body = _pre(text, hidden) if text or not block.data else _pre(f"({block.wire_kind})")
    return (f'<div class="rtw-turn-block" data-kind="{esc(block.kind)}" '
            f'data-state="{esc(state)}" style="border:1px {look.border} {look.colour}">'
            f'{badge}<b>{esc(label)}</b>{tags} {_badge(look, state)}{body}</div>')


def _tool_card(block: BlockView, badge: str, tags: str) -> str:
    state = tool_state(block)
    look = TOOL_STATES[state]
    parts = [f'{badge}<b>{esc(block.name or "(no name)")}</b>{tags} {_badge(look, state)} '
             f'<span class="rtw-note" style="color:{FG_MUTED}">{esc(block.call_id or "")}</span>']
    if block.input is not None and state not in ("forming", "invalid", "cut"):
        parts.append(_pre(_json(block.input)))
    else:
        raw, hidden = tail(block.raw_input or "", INPUT_TAIL)
        why = {"invalid": "the input is not valid JSON (or the model stopped inside it): "
                          "this call never runs",
               "cut": "the stream ended inside the input: this call never runs"}.get(state)
        if why:
            parts.append(f'<div class="rtw-note">{esc(why)}</div>')
        fields = forming_fields(block) if state == "forming" else []
        if fields:
            rows = "".join(
                f'<li data-settled="{str(settled).lower()}"><code>{esc(_json(key))}: '
                f'{esc(text)}</code> {"✔ settled" if settled else "⋯ forming"}</li>'
                for key, text, settled in fields)
            parts.append('<div class="rtw-note">arguments so far (lesson 3: a field is shown '
                         f'once it begins, and marked when it settles):</div><ul>{rows}</ul>'
                         f'<div class="rtw-note">raw input:</div>')
        parts.append(_pre(raw, hidden))
    if block.execution_status is not None:
        parts.append(f'<div class="rtw-note">result ({esc(block.execution_status)}):</div>'
                     + _pre(_json(block.result)))
    return (f'<div class="rtw-turn-block rtw-tool-card" data-kind="tool_call" '
            f'data-state="{esc(state)}" style="border:2px {look.border} {look.colour}">'
            + "".join(parts) + "</div>")


def _usage_table(state: TurnState) -> str:
    heads = ("", "input", "output", "cache read", "cache write", "reasoning")
    rows = [(f"step {s.step}", s.usage) for s in state.steps if s.finished]
    rows.append(("turn", state.usage))
    body = "".join(
        f'<tr><th scope="row">{esc(name)}</th>'
        + "".join(f"<td>{n}</td>" for n in (u.input, u.output, u.cache_read, u.cache_write,
                                              u.reasoning))
        + "</tr>" for name, u in rows)
    head = "".join(f'<th scope="col">{esc(h)}</th>' for h in heads)
    return (f'<table class="rtw-turn-usage" aria-label="usage"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")


def render_turn(state: TurnState) -> str:
    """The turn as HTML: outcome banner, steps with their blocks and tool cards, usage, errors."""
    out = [CSS, '<div class="rtw-turn">', _banner(state)]
    blocks_by_step: dict[int, list[BlockView]] = {}
    for block in state.blocks:
        blocks_by_step.setdefault(block.step, []).append(block)
    for step in state.steps:
        ended = ENDED_SAYS.get(step.ended, step.ended)
        head = (f'<div class="rtw-turn-step-head"><span class="rtw-turn-badge">step '
                f'{step.step}</span>{esc(step.wire)} · {esc(step.model or "model not named")} · '
                f'finish {esc(finish_words(step))} · {esc(ended)}</div>')
        blocks = "".join(_block_html(b) for b in blocks_by_step.get(step.step, []))
        out.append(f'<div class="rtw-turn-step" data-step="{step.step}">{head}{blocks}</div>')
    if not state.steps:
        out.append(f'<p class="rtw-note" style="color:{FG_MUTED}">No step has started.</p>')
    out.append(_usage_table(state))
    if state.errors:
        items = "".join(f'<li data-scope="{esc(e.scope)}" data-phase="{esc(e.phase)}">'
                        f"{esc(error_words(e))}</li>" for e in state.errors)
        out.append(f'<div class="rtw-turn-errors"><b>Errors</b><ul>{items}</ul></div>')
    warnings = warnings_of(state)
    if warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in warnings)
        out.append('<div class="rtw-turn-notes"><b>Warnings (<code>noted</code> events: what '
                   f"the stations flagged, not errors of the turn)</b><ul>{items}</ul></div>")
    out.append("</div>")
    return "".join(out)


# -- for a notebook -------------------------------------------------------------------------


class TurnView:
    """A turn state for a notebook: HTML in a browser, plain text anywhere else."""

    def __init__(self, state: TurnState, name: str = "Turn") -> None:
        self.state = state
        self.name = name

    def _repr_html_(self) -> str:
        return page(section(self.name, render_turn(self.state)))

    def __repr__(self) -> str:
        return turn_text(self.state)

    __str__ = __repr__


def _state_of(source: Any, route: str | None) -> TurnState:
    if isinstance(source, TurnState):
        return source
    if hasattr(source, "state") and isinstance(source.state, TurnState):
        return source.state          # a `LoopResult`: the loop's tool executions included
    from ..turn.run import turn_state
    caps = [source] if isinstance(source, Capture) else list(source)
    return turn_state(caps, route or "auto")  # type: ignore[arg-type]


def show_turn(source: Capture | Sequence[Capture] | TurnState | Any, at: int | None = None,
              *, route: str | None = None) -> TurnView:
    """The turn of `source` after its first `at` turn events (None: all of them).

    `source` is a capture, the captures of a turn's steps in order, a
    `TurnState`, or the `LoopResult` of the agent loop (whose state has the
    tools' executions).
    """
    state = _state_of(source, route)
    return TurnView(state if at is None else state.at(at))


# -- the pane for the player ----------------------------------------------------------------


@dataclass(frozen=True)
class TurnTrace:
    """One capture's turn: the final state and, per wire event, how many turn events it
    has reached."""

    state: TurnState
    marks: list[int]


def replay_turn(capture: Capture, route: str | None = None) -> TurnTrace:
    """A capture as a one-step turn, with the turn-event count reached after each of its
    wire events (see `lesson_lib.turn.run.turn_by_wire_event`)."""
    from ..turn.run import turn_by_wire_event
    events, marks = turn_by_wire_event(capture, route or "auto")  # type: ignore[arg-type]
    return TurnTrace(reduce_all(events), marks)


class TurnPane:
    """The turn view as a pane: a state rendered (`render`), or, in the replay
    `Player`, the turn state after the slider's event.

    For the player, the capture is one step of a turn. Its turn is reduced once per capture
    and route, and kept on the capture's shared `replays.Replay` (the counter
    `turn_labeller` reads the same one); a state at any index is the final
    state's prefix (`TurnState.at`): a step costs a render, not a replay.
    """

    def __init__(self, name: str = "Turn", route: str | None = None) -> None:
        self.name = name
        self.route = route

    def render(self, state: TurnState) -> str:
        """`state` as an HTML region titled with the pane's name."""
        return section(self.name, render_turn(state))

    def render_text(self, state: TurnState) -> str:
        """`state` as plain text."""
        return turn_text(state)

    def replay(self, capture: Capture) -> TurnTrace:
        """The capture's turn and marks, computed once per capture and route."""
        route = self.route or "auto"
        return replay_for(capture).kept(("turn", route), lambda: replay_turn(capture, route))

    def state(self, capture: Capture, index: int) -> TurnState:
        """The turn after wire event `index` of `capture`."""
        found = self.replay(capture)
        if not found.marks:
            return found.state
        i = max(0, min(int(index), len(found.marks) - 1))
        return found.state.at(found.marks[i])

    def __call__(self, capture: Capture, index: int) -> str:
        """The turn after event `index`, as an HTML region titled with the pane's name."""
        return self.render(self.state(capture, index))

    def text(self, capture: Capture, index: int) -> str:
        """The turn after event `index`, as plain text."""
        return self.render_text(self.state(capture, index))

    def caused(self, capture: Capture, index: int) -> list[Any]:
        """The turn events that wire event `index` caused (the last one: the ends too)."""
        found = self.replay(capture)
        if not found.marks:
            return found.state.events
        i = max(0, min(int(index), len(found.marks) - 1))
        before = found.marks[i - 1] if i else 0
        return found.state.events[before:found.marks[i]]


_LABELLER_PANE = TurnPane()


def turn_labeller(capture: Capture, index: int) -> str:
    """The player's counter, saying what the event meant for the turn:
    ``event 12 of 0-47 · content_block_delta · turn: block_delta, tool_call_ready s1.b1``.

    Consecutive turn events of one block name it once, after the last of them; the
    stations' warnings (``noted`` events) are counted, not listed (the Turn pane says
    what they are), so the counter stays on one line.
    """
    base = default_labeller(capture, index)
    if not capture.events:
        return base
    caused = _LABELLER_PANE.caused(capture, index)
    said: list[str] = []
    previous = None
    for event in caused:
        if event.kind == "noted":
            continue
        target = getattr(event, "block", None) or getattr(event, "outcome", None)
        if target and previous == target and said:
            said[-1] = said[-1].removesuffix(f" {target}") + f", {event.kind} {target}"
        else:
            said.append(f"{event.kind} {target}" if target else event.kind)
        previous = target
    notes = sum(event.kind == "noted" for event in caused)
    line = f"{base} · turn: {', '.join(said) if said else 'nothing new'}"
    if notes:
        line += f" · {notes} warning{'s' if notes > 1 else ''} noted"
    return line
