"""A tool call drawn as it forms: its label at once, its fields as they settle, then its run.

Parts, in reading order (``<block>`` is the call's block id):

- ``<block>/call``: the per-tool label (`labels`), the tool's name, whether
  it runs at the provider (server-side), and its state: forming, ready,
  running, done, failed, invalid, cut, interrupted. Live until the state can
  no longer change (a run finished, the call is invalid or cut, or the turn
  ended).
- ``<block>/arg/<name>``: one per top-level field of the arguments, in
  order. A field is drawn final only once its path settled (lesson 3): a
  string still arriving is drawn pending, and a number is absent until the
  delimiter after it (``12`` may become ``123``), so the call shows
  "more arriving" instead. A top-level value that is not an object is one
  part, ``<block>/input``.
- ``<block>/raw``: for a call that can never run (invalid or cut), the text
  that arrived and why.
- ``<block>/result``: the run's result, or its error.

The call keeps its own `PartialJSON` over the fragments (the reducer's
state joins text only on read); reading it costs the new fragments.
"""

from __future__ import annotations

from itertools import islice
from typing import Any

from ..partial_json import NOTHING, PartialJSON, PartialJSONError
from ..turn.summary import TOOL_STATE_WORDS
from .labels import tool_label
from .parts import Part, Segment
from .safety import esc
from .values import growing, preview

RAW_TAIL = 600
FINAL_STATES = frozenset({"done", "failed", "invalid", "cut", "interrupted"})


def call_name(start: Any) -> str | None:
    """A call's name as drawn: a provider's tool may come with no name, only its kind
    (``x_call``)."""
    return start.name or (start.wire_kind or "").removesuffix("_call") or None


class ToolCallDrawer:
    """One tool-call block of the turn (see the module)."""

    def __init__(self, block: str, name: str | None, call_id: str | None, server_side: bool,
                 content: str = "") -> None:
        self.block = block
        self.name = name
        self.call_id = call_id
        self.server_side = server_side
        self.parser: PartialJSON | None = PartialJSON()
        self.parse_error: str | None = None
        self.raw_tail = ""
        self.raw_length = 0
        self.state = "forming"
        self.ended = False
        self.turn_over = False
        self.args: list[Part] = []               # settled fields, in order
        self._arg_keys: set[Any] = set()
        self._input_settled = False
        self.extra: list[Part] = []              # raw text, result: settled when drawn
        self._header: Part | None = None
        self._header_live: Part | None = None
        self._live_arg: Part | None = None
        self._dirty = True
        self.feed(content)

    # -- what arrives --------------------------------------------------------------------

    def feed(self, fragment: str) -> None:
        """Argument text arrived."""
        if not fragment:
            return
        self.raw_length += len(fragment)
        self.raw_tail = (self.raw_tail + fragment)[-RAW_TAIL:]
        if self.parser is not None:
            try:
                self.parser.feed(fragment)
            except PartialJSONError as error:
                self.parse_error = str(error)
                self.parser = None
        self._dirty = True

    def ready(self, value: Any) -> None:
        """The call's input parsed strictly: every field is final."""
        self.state = "ready"
        self._settle_input(value)
        self._dirty = True

    def invalid(self, state: str, raw: str, error: str | None) -> None:
        """The call will never run: its input is not JSON, or the stream ended inside it."""
        self._catch_up()
        self.state = state
        if not raw:               # an empty box would read as arguments lost in the drawing
            why = error or ("the stream ended inside the call" if state == "cut" else "")
            html = (f'<div class="draw-raw"><span class="draw-why">{esc(state)}: {esc(why)}'
                    '</span> <span class="draw-none">no argument arrived</span></div>')
            text = f"{state}: {why}; no argument arrived"
        else:
            why = error or ("the stream ended inside the arguments" if state == "cut" else "")
            shown = raw[-RAW_TAIL:]
            lead = f"… ({len(raw) - RAW_TAIL} characters before) " if len(raw) > RAW_TAIL else ""
            html = (f'<div class="draw-raw"><span class="draw-why">{esc(state)}: {esc(why)}'
                    f"</span><pre>{esc(lead + shown)}</pre></div>")
            text = f"{state}: {why}\n{lead}{shown}"
        self.extra.append(Part(f"{self.block}/raw", "tool_input", html, text, True))
        self._live_arg = None
        self._dirty = True

    def held(self) -> None:
        """The application held the call for approval: it waits for an answer."""
        self.state = "held"
        self._dirty = True

    def started(self) -> None:
        """The application started running the call."""
        self.state = "running"
        self._dirty = True

    def finished(self, status: str, result: Any, error: str | None) -> None:
        """The run ended: ok with a result, or error, denied, interrupted."""
        self.state = {"ok": "done", "interrupted": "interrupted"}.get(status, "failed")
        what = preview(result) if status == "ok" else f"{status}: {error or preview(result)}"
        html = (f'<div class="draw-result draw-{esc(status)}"><span class="draw-label">'
                f'result</span> <code>{esc(what)}</code></div>')
        self.extra.append(Part(f"{self.block}/result", "tool_result", html,
                               f"result: {what}", True))
        self._dirty = True

    def end(self) -> None:
        """The call's block ended."""
        self.ended = True
        self._dirty = True

    def turn_finished(self, completed: bool) -> None:
        """The turn ended: whatever state the call is in is its last."""
        self._catch_up()
        self._live_arg = None
        self.turn_over = True
        self._dirty = True

    # -- drawing -------------------------------------------------------------------------

    def segments(self) -> list[Segment]:
        """The header, the fields (settled ones shared), then the raw text and the result."""
        if self._dirty:
            self._redraw()
            self._dirty = False
        header = self._header
        head: Segment = ((header,), 1, ()) if header else ((), 0, (self._header_live,))
        live_arg = (self._live_arg,) if self._live_arg is not None else ()
        return [head, (self.args, len(self.args), live_arg), (self.extra, len(self.extra), ())]

    def _catch_up(self) -> None:
        """Draw the fields settled so far, before the call's state moves on."""
        if self.parser is not None and not self._input_settled and self.state == "forming":
            self._draw_forming_input()

    def _redraw(self) -> None:
        if self._header is None:
            final = self.state in FINAL_STATES or self.turn_over
            part = self._draw_header(final)
            if final:
                self._header, self._header_live = part, None
            else:
                self._header_live = part
        if self.parser is not None and not self._input_settled and self.state == "forming":
            self._draw_forming_input()
        elif self.parse_error and self.state == "forming":
            self._live_arg = Part(f"{self.block}/pending", "tool_input",
                                  '<div class="draw-pending">arguments arriving (not valid JSON '
                                  f"so far: {esc(self.parse_error)})</div>",
                                  f"arguments arriving (not valid JSON so far: {self.parse_error})",
                                  False)

    def _draw_header(self, final: bool) -> Part:
        glyph, word = TOOL_STATE_WORDS.get(self.state, ("?", self.state))
        label = tool_label(self.name, self.server_side)
        where = ' <span class="draw-server">server-side</span>' if self.server_side else ""
        still = ""
        if self.state == "forming":
            still = f' <span class="draw-still">still working… {self.raw_length} chars</span>'
        html = (f'<div class="draw-call draw-{esc(self.state)}">'
                f'<span class="draw-label">{esc(label)}</span> <code>{esc(self.name or "?")}'
                f'</code>{where} <span class="draw-state">{glyph} {esc(word)}</span>{still}</div>')
        text = (f"{label} {self.name or '?'}{' (server-side)' if self.server_side else ''}"
                f" [{glyph} {word}]")
        return Part(f"{self.block}/call", "tool_call", html, text, final)

    def _draw_forming_input(self) -> None:
        parser = self.parser
        assert parser is not None
        value = parser.value
        settled = parser.settled
        if value is NOTHING:
            self._live_arg = _pending(self.block, "arg", "arguments arriving…")
            return
        if type(value) is not dict:
            if () in settled:
                self._settle_input(value)
            else:
                self._live_arg = _field(self.block, "input", None, value, settled=False)
            return
        open_key = None
        for key in _new_keys(value, self._arg_keys):
            if (key,) in settled:
                self.args.append(_field(self.block, f"arg/{key}", key, value[key], settled=True))
                self._arg_keys.add(key)
            else:
                open_key = key
                break
        if open_key is not None:
            self._live_arg = _field(self.block, f"arg/{open_key}", open_key, value[open_key],
                                    settled=False)
        else:
            self._live_arg = _pending(self.block, "more", "more arriving…")
        if () in settled:
            self._input_settled = True
            self._live_arg = None

    def _settle_input(self, value: Any) -> None:
        if self._input_settled:
            return
        self._input_settled = True
        self._live_arg = None
        if type(value) is dict:
            for key in _new_keys(value, self._arg_keys):
                self.args.append(_field(self.block, f"arg/{key}", key, value[key], settled=True))
                self._arg_keys.add(key)
        elif not self.args:
            self.args.append(_field(self.block, "input", None, value, settled=True))


def _new_keys(value: dict, seen: set) -> list:
    """The keys of `value` not drawn yet, in order: fields arrive (and are drawn) in order."""
    return list(islice(value, len(seen), None))


def _field(block: str, suffix: str, key: Any, value: Any, *, settled: bool) -> Part:
    if settled:
        shown = preview(value)
    elif isinstance(value, str):
        shown = growing(value) + "…"
    elif isinstance(value, dict):        # still filling: its size, not its whole text
        shown = f"{{… {len(value)} fields so far"
    elif isinstance(value, list):
        shown = f"[… {len(value)} items so far"
    else:
        shown = preview(value) + " …"
    name = f'<span class="draw-name">{esc(key)}</span> ' if key is not None else ""
    cls = "draw-arg" if settled else "draw-arg draw-pending"
    html = f'<div class="{cls}">{name}<code>{esc(shown)}</code></div>'
    text = (f"{key}: " if key is not None else "") + shown + ("" if settled else " (pending)")
    return Part(f"{block}/{suffix}", "tool_input", html, text, settled)


def _pending(block: str, suffix: str, words: str) -> Part:
    return Part(f"{block}/{suffix}", "tool_input",
                f'<div class="draw-pending">{esc(words)}</div>', words, False)
