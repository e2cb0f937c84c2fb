"""The slot view: one box per addressed slot, as the accumulator holds it at any event.

Lesson 2's picture of a stream. Every delta names the place it goes (a
*slot*: Anthropic's block ``index``, a Responses item and part, a Chat
choice's text or ``tool_calls[n]``); the slot view shows those places
filling up, one box each:

- the address as a badge (``[1]``, ``item [0] · part [0]``,
  ``choice 0 · tool_calls[1]``), the block type as a word, the tool's name
  and call id;
- a border style per kind of block, so colour is never the only cue:
  solid for text, dashed for tool calls, dotted for thinking, double for
  results and anything unknown (`FAMILY_STYLES`);
- the content so far, HTML-escaped, cut to its last `tail` characters with
  a note of how much is hidden, so a step costs the same at event 10 and at
  event 10,000;
- the slot's state as a word: ``open``, ``closed`` or ``never closed``.

Pieces:

- `slots_html` / `slots_text`: render a list of `Slot` (HTML, or plain
  deterministic text for ``print``);
- `show_slots(capture, at=None)`: the slots after event `at` (or after the
  whole stream) as an object a notebook displays (HTML, with a plain-text
  fallback);
- `SlotPane`: the same as a pane for the replay `Player`, reading the state
  from a `History`, so stepping costs one ``feed``;
- `slot_labeller`: the player's counter, ``event 12 / 48 · block [1]
  tool_use · input_json_delta``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..accumulate.base import Slot
from ..accumulate.history import History
from ..accumulate.labels import address_text
from ..capture.captures import Capture
from ..capture.json_text import one_line
from ..diagnostics import Diagnostic
from .html import BG_ALT, FG, FG_MUTED, MONO, esc, page, section
from .palette import NEUTRAL, OKABE_ITO
from .replays import event_counter, history_for, labels_of

TAIL = 400           # characters of content shown per slot (the end of it)
INPUT_PREVIEW = 300  # characters of a parsed tool input shown
DIAGNOSTICS_SHOWN = 6


# -- kinds of slot, and how each looks ------------------------------------------------


@dataclass(frozen=True)
class SlotStyle:
    """How one family of slots looks: a word, a glyph, a colour and a border style."""

    word: str
    glyph: str
    colour: str
    border: str


FAMILY_STYLES: dict[str, SlotStyle] = {
    "text": SlotStyle("text", "●", OKABE_ITO["bluish green"], "solid"),
    "tool": SlotStyle("tool call", "▲", OKABE_ITO["orange"], "dashed"),
    "thinking": SlotStyle("thinking", "▼", OKABE_ITO["reddish purple"], "dotted"),
    "result": SlotStyle("result", "◆", OKABE_ITO["sky blue"], "double"),
    "other": SlotStyle("other", "✚", NEUTRAL, "double"),
}

TEXT_KINDS = frozenset({"text", "output_text", "content", "refusal", "compaction"})
TOOL_KINDS = frozenset({
    "tool_use", "server_tool_use", "mcp_tool_use", "function_call", "custom_tool_call",
    "mcp_call", "code_interpreter_call", "web_search_call", "file_search_call",
    "image_generation_call", "shell_call", "apply_patch_call", "local_shell_call",
    "computer_call", "function", "functionCall", "toolUse", "executableCode", "toolCall",
})
THINKING_KINDS = frozenset({"thinking", "redacted_thinking", "reasoning", "reasoning_text",
                            "summary_text", "thought", "reasoningContent"})
RESULT_KINDS = frozenset({"container_upload", "mcp_list_tools", "mcp_tool_listing",
                          "codeExecutionResult",
                          "toolResponse", "functionResponse", "toolResult"})


def family(kind: str) -> str:
    """The family of a slot kind: text, tool, thinking, result or other."""
    if kind in TEXT_KINDS:
        return "text"
    if kind in TOOL_KINDS:
        return "tool"
    if kind in THINKING_KINDS:
        return "thinking"
    if kind.endswith(("_result", "_output")) or kind in RESULT_KINDS:
        return "result"
    return "other"


STATE_WORDS = {"open": "open", "closed": "closed", "never closed": "⚠ never closed"}


def tail_of(text: str, tail: int = TAIL) -> tuple[str, int]:
    """The last `tail` characters of `text`, and how many characters are not shown."""
    if len(text) <= tail:
        return text, 0
    return text[-tail:], len(text) - tail


def _head_of(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def _is_tool(slot: Slot) -> bool:
    return slot.raw_input is not None or family(slot.kind) == "tool"


def _input_text(slot: Slot) -> str | None:
    """The parsed input of a tool slot that ended (None while it is open or for non-tools)."""
    if not _is_tool(slot) or slot.state == "open" or slot.input is None:
        return None
    return _head_of(one_line(slot.input), INPUT_PREVIEW)


def _title(slot: Slot) -> str:
    """``tool_use get_weather · id toolu_01…``: the kind, then the tool's name and call id."""
    title = f"{slot.kind} {slot.name}" if slot.name else slot.kind
    return f"{title} · id {slot.call_id}" if slot.call_id else title


def _heading(slot: Slot) -> str:
    """The address, then the title (the kind is left out where the address already says it)."""
    address = address_text(slot.address)
    title = _title(slot)
    if address.endswith(f"· {slot.kind}"):
        title = title[len(slot.kind):].lstrip()
    return f"{address} {title}".rstrip()


def _input_label(slot: Slot) -> str:
    return "input (partial)" if slot.state == "never closed" else "input"


# -- plain text ----------------------------------------------------------------------------


def slot_text(slot: Slot, *, tail: int = TAIL) -> str:
    """One slot as plain text: a header line, then its content indented."""
    head = f"{_heading(slot)} · {slot.state}"
    shown, hidden = tail_of(slot.content, tail)
    lines = [head]
    if hidden:
        lines.append(f"    … {hidden:,} earlier characters not shown")
    if shown:
        lines += ["    " + line for line in shown.split("\n")]
    else:
        lines.append("    (empty)")
    parsed = _input_text(slot)
    if parsed is not None:
        lines.append(f"    {_input_label(slot)}: {parsed}")
    return "\n".join(lines)


def slots_text(slots: Sequence[Slot], *, tail: int = TAIL,
               diagnostics: Iterable[Diagnostic] = ()) -> str:
    """Every slot as plain text (deterministic: what a notebook prints and nbval compares)."""
    if not slots:
        out = ["(no slots: nothing has been addressed yet)"]
    else:
        out = [slot_text(s, tail=tail) for s in slots]
    diags = list(diagnostics)
    if diags:
        out.append("diagnostics:")
        out += [f"  {d.code}: {d.message}" for d in diags[:DIAGNOSTICS_SHOWN]]
        if len(diags) > DIAGNOSTICS_SHOWN:
            out.append(f"  … and {len(diags) - DIAGNOSTICS_SHOWN} more")
    return "\n".join(out)


# -- HTML ----------------------------------------------------------------------------------


def slot_html(slot: Slot, *, tail: int = TAIL) -> str:
    """One slot as a box: badge, kind word and glyph, border style, escaped content, state."""
    fam = family(slot.kind)
    style = FAMILY_STYLES[fam]
    address = address_text(slot.address)
    title = _title(slot)
    state = STATE_WORDS.get(slot.state, slot.state)
    label = f"{_heading(slot)}, {style.word}, {slot.state}"
    shown, hidden = tail_of(slot.content, tail)
    width = "4px" if style.border == "double" else "3px"
    out = [f'<div class="rtw-slot rtw-slot-{fam}" role="group" aria-label="{esc(label)}" '
           f'data-kind="{esc(slot.kind)}" data-family="{fam}" data-state="{esc(slot.state)}" '
           f'style="border:{width} {style.border} {style.colour};border-radius:4px;'
           f'padding:4px 8px;margin:6px 0;color:{FG}">',
           f'<div class="rtw-slot-head" style="font-family:{MONO};font-size:12px">'
           f'<span class="rtw-slot-badge" style="font-weight:bold;background:{BG_ALT};'
           f'padding:0 4px;border-radius:3px">{esc(address)}</span> '
           f'<span aria-hidden="true" style="color:{style.colour}">{style.glyph}</span> '
           f'<span class="rtw-slot-family">{esc(style.word)}</span>: '
           f'<b class="rtw-slot-kind">{esc(title)}</b> · '
           f'<span class="rtw-slot-state" style="font-weight:'
           f'{"bold" if slot.state == "never closed" else "normal"}">{esc(state)}</span></div>']
    if hidden:
        out.append(f'<div class="rtw-note" style="color:{FG_MUTED};font-size:12px">'
                   f'… {hidden:,} earlier characters not shown</div>')
    if shown:
        out.append(f'<pre class="rtw-slot-content" style="font-family:{MONO};font-size:12px;'
                   f'margin:2px 0;white-space:pre-wrap;word-break:break-all">{esc(shown)}</pre>')
    else:
        out.append(f'<div class="rtw-note" style="color:{FG_MUTED};font-size:12px">'
                   '(empty)</div>')
    parsed = _input_text(slot)
    if parsed is not None:
        out.append(f'<div class="rtw-slot-input" style="font-family:{MONO};font-size:12px">'
                   f'{_input_label(slot)}: {esc(parsed)}</div>')
    out.append("</div>")
    return "".join(out)


def slots_html(slots: Sequence[Slot], *, tail: int = TAIL, caption: str | None = None,
               diagnostics: Iterable[Diagnostic] = ()) -> str:
    """Every slot as a box, in address order, with an optional caption and the diagnostics."""
    out = []
    if caption:
        out.append(f'<p class="rtw-note" style="color:{FG_MUTED};font-size:12px;margin:2px 0">'
                   f'{esc(caption)}</p>')
    if not slots:
        out.append(f'<p class="rtw-note" style="color:{FG_MUTED}">No slots yet: nothing has '
                   'been addressed.</p>')
    out += [slot_html(s, tail=tail) for s in slots]
    diags = list(diagnostics)
    if diags:
        items = "".join(f"<li><code>{esc(d.code)}</code>: {esc(d.message)}</li>"
                        for d in diags[:DIAGNOSTICS_SHOWN])
        more = (f"<li>… and {len(diags) - DIAGNOSTICS_SHOWN} more</li>"
                if len(diags) > DIAGNOSTICS_SHOWN else "")
        out.append(f'<div class="rtw-slot-diagnostics" style="font-size:12px;color:{FG}">'
                   f'Diagnostics:<ul style="margin:2px 0">{items}{more}</ul></div>')
    return f'<div class="rtw-slots">{"".join(out)}</div>'


# -- the state at an event -----------------------------------------------------------------


@dataclass(frozen=True)
class SlotsAt:
    """The slots after one event (player index), with the stream's diagnostics so far."""

    capture: str
    index: int            # the player's event index (-1: before any event)
    events: int           # how many events the stream has
    ended: bool           # the state after the end of the stream
    slots: list[Slot]
    diagnostics: list[Diagnostic]

    @property
    def caption(self) -> str:
        """Where in the stream this state is."""
        if self.events == 0:
            return f"{self.capture}: no events"
        if self.ended:
            return (f"{self.capture}: after event {self.index} of {self.events} "
                    "(the end of the stream)")
        return f"{self.capture}: after event {self.index} of {self.events}"

    def text(self, tail: int = TAIL) -> str:
        """The caption, then every slot, as plain text."""
        return self.caption + "\n" + slots_text(self.slots, tail=tail,
                                                diagnostics=self.diagnostics)

    def html(self, tail: int = TAIL) -> str:
        """The slot boxes with the caption and diagnostics."""
        return slots_html(self.slots, tail=tail, caption=self.caption,
                          diagnostics=self.diagnostics)


def state_at(timeline: History, index: int | None) -> SlotsAt:
    """The slots after event `index` (the player's 0-based index); None or the last
    index: after the end of the stream too (so a block never closed shows as such)."""
    n = len(timeline)
    name = timeline.capture.key
    if n == 0:
        snap = timeline.at(0, ended=True) if timeline.http_error is None else timeline.at(0)
        return SlotsAt(name, -1, 0, True, list(snap.slots), list(snap.diagnostics))
    i = n - 1 if index is None else max(0, min(int(index), n - 1))
    if i == n - 1:
        snap = timeline.at(n, ended=True)
        return SlotsAt(name, i, n, True, list(snap.slots), list(snap.diagnostics))
    acc = timeline.accumulator_at(i + 1)
    return SlotsAt(name, i, n, False, acc.slots(), list(acc.diagnostics))


class SlotsView:
    """A slot state a notebook displays: HTML in a browser, plain text anywhere else."""

    def __init__(self, state: SlotsAt, tail: int = TAIL) -> None:
        self.state = state
        self.tail = tail

    @property
    def slots(self) -> list[Slot]:
        """The slots shown, in address order."""
        return self.state.slots

    def _repr_html_(self) -> str:
        return page(section("Slots", self.state.html(self.tail)))

    def __repr__(self) -> str:
        return self.state.text(self.tail)

    __str__ = __repr__


def show_slots(source: Capture | History, at: int | None = None, *,
               tail: int = TAIL) -> SlotsView:
    """The slots after event `at` (None: after the whole stream) of an accumulator
    `History`, or of a capture (a history of its own, made here)."""
    timeline = source if isinstance(source, History) else History(source)
    return SlotsView(state_at(timeline, at), tail)


# -- the pane for the player ---------------------------------------------------------------

class SlotPane:
    """The slot view as a player pane: ``pane(capture, index) -> HTML`` and ``text``.

    The capture's one shared `History` is read (`replays.history_for`), so stepping
    forward costs one ``feed`` and a jump at most `every` feeds plus a copy.
    """

    def __init__(self, tail: int = TAIL, name: str = "Slots", every: int = 64) -> None:
        self.tail = tail
        self.name = name
        self.every = every

    def timeline(self, capture: Capture) -> History:
        """The capture's history, shared with the other panes (`replays.history_for`)."""
        return history_for(capture, self.every)

    def state(self, capture: Capture, index: int) -> SlotsAt:
        """The slots after event `index`."""
        return state_at(self.timeline(capture), index)

    def __call__(self, capture: Capture, index: int) -> str:
        """The slots after event `index`, as an HTML region titled with the pane's name."""
        return section(self.name, self.state(capture, index).html(self.tail))

    def text(self, capture: Capture, index: int) -> str:
        """The slots after event `index`, as plain text."""
        return self.state(capture, index).text(self.tail)


# -- the counter -----------------------------------------------------------------------------

__all__ = ["SlotPane", "address_text", "labels_of", "show_slots", "slot_labeller",
           "slots_html", "slots_text", "state_at"]


def slot_labeller(capture: Capture, index: int) -> str:
    """The player's counter: the event, then the slot it addresses and what it carries.

    ``event 12 / 48 · block [1] tool_use · input_json_delta`` (Anthropic),
    ``event 5 / 29 · item [1] function_call · function_call_arguments.delta``
    (Responses), ``event 7 / 31 · choice 0 · tool_calls[1] · arguments`` (Chat).
    """
    return event_counter(capture, index)
