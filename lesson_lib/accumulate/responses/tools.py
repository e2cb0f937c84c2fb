"""Lesson 3 on the Responses wire: the string fields of items, and the tool calls they feed.

Some items are built by deltas into one string field (a function call's
``arguments``, a custom tool's ``input``, a code interpreter's ``code``, an
apply-patch ``operation.diff``), stated whole by the matching ``*.done``.
Each ``function_call``, ``custom_tool_call`` and ``mcp_call`` item has a
`ToolCall` fed every argument delta and ended by its ``*_arguments.done``
(or ``output_item.done``); with ``text.format`` ``json_schema`` each
``output_text`` part is a structured-output `ToolCall` too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...tool_calls import ToolCall
from ...wires.wire_events import WireEvent
from ..base import Fragments
from .compare import ServerComparison
from .objects import Item, Part, get_path
from .registry import Items
from .shown import ShownSlots
from .vocabulary import FIELD_DELTAS, FIELD_DONES, TOOL_ITEMS, Malformed, string_delta


def structured_name(resp: dict) -> str | None:
    """The name of a ``json_schema`` text format (structured output), else None."""
    text = resp.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        name = fmt.get("name")
        return name if isinstance(name, str) and name else "structured output"
    return None


def _before(text: Any, skip: str | None) -> Any:
    """`text` without its tail `skip` (the delta being fed right now), if it ends with it."""
    if skip is not None and isinstance(text, str) and text.endswith(skip):
        return text[:len(text) - len(skip)]
    return text


class ToolCallEvents:
    """The handlers for string fields of items, and the tool calls they feed.

    Composed of the stream's `items`, the `compare` checks, the accumulator's
    `end_tool_call` (the strict check and its diagnostics) and the `shown`
    slots (which report a delta as a change). `structured` is the
    ``json_schema`` text format's name while the response asks for one.
    """

    def __init__(self, items: Items, compare: ServerComparison,
                 end_tool_call: Callable[..., Any], shown: ShownSlots) -> None:
        self.items = items
        self.compare = compare
        self.end_tool_call = end_tool_call
        self.shown = shown
        self.structured: str | None = None

    # -- string fields of items (arguments, code, diff, input) -------------

    def on_field_delta(self, ev: WireEvent, p: dict) -> None:
        kind, path = FIELD_DELTAS[ev.type]
        item = self.items.open_item(ev, p, kind)
        delta = string_delta(p)
        frags = item.texts.get(path)
        if frags is None:
            if item.type != kind:
                self.items.item_for(ev, p, kind)       # says so, once
            frags = item.text_field(path)
        frags.append(delta)
        grew: tuple = ()
        # The call is fed what its own field gets, whichever delta type brought it (a
        # mismatch was said above): the call's text and the item's stay one text.
        if TOOL_ITEMS.get(item.type) == path:
            call = item.call
            if call is None:
                call = self.call_of(item, ev, skip=delta)
                self.items.touch(item)
            grew = tuple(call.feed(delta, t=ev.t, event=ev.index))
        self.shown.field_grew(item, path, delta, grew, ev.index)

    def on_field_done(self, ev: WireEvent, p: dict) -> None:
        kind, path, field = FIELD_DONES[ev.type]
        item = self.items.item_for(ev, p, kind)
        theirs = p.get(field)
        if not isinstance(theirs, str):
            raise Malformed(f"{field} is not a string")
        frags = item.texts.get(path)
        if frags is not None and frags.text != theirs:
            self.compare.differs(ev, (item.index, *path), frags.text, theirs)
        item.texts[path] = Fragments(theirs)
        if kind == "function_call" and item.type == "function_call":
            self.parse_input(ev, item, theirs)
        elif kind in TOOL_ITEMS and item.type == kind:
            self.call_of(item, ev).end(theirs, t=ev.t, event=ev.index)

    def parse_input(self, ev: WireEvent, item: Item, raw: str) -> None:
        """A function call's arguments ended: check them strictly, once."""
        item.input = self.end_tool_call(self.call_of(item, ev), cut=False, slot=(item.index,),
                                        event=ev, final_text=raw,
                                        what=f"function_call {item.name or '?'} "
                                             f"(output_index {item.index})")
        item.input_done = True

    # -- tool calls (lesson 3) ---------------------------------------------

    def call_of(self, item: Item, ev: WireEvent | None, skip: str | None = None) -> ToolCall:
        """The item's tool call (made on first need, seeded with the announced text);
        its name and call id follow the item's announcement."""
        call = item.call
        if call is None:
            if item.type not in TOOL_ITEMS:
                return None  # type: ignore[return-value]
            call = item.call = ToolCall(item.name, item.call_id, kind=item.type,
                                        address=(item.index,),
                                        json_arguments=item.type != "custom_tool_call",
                                        t=ev.t if ev is not None else None,
                                        event=ev.index if ev is not None else None)
            frags = item.texts.get(TOOL_ITEMS[item.type])
            first = frags.text if frags is not None else get_path(item.data,
                                                                  TOOL_ITEMS[item.type])
            first = _before(first, skip)
            if isinstance(first, str) and first:
                call.feed(first, t=call.start_t, event=call.start_event)
        else:
            call.name = call.name or item.name or ""
            call.call_id = call.call_id or item.call_id
        return call

    def structured_call(self, ev: WireEvent, item: Item, ci: Any, part: Part,
                         skip: str | None = None) -> ToolCall | None:
        """With text.format json_schema, an output_text part is structured output: a
        pseudo tool call named after the format."""
        if self.structured is None or part.type != "output_text" or item.type != "message":
            return None
        part.call = ToolCall(self.structured, item.id, kind="structured output",
                             address=(item.index, ci), structured=True, t=ev.t, event=ev.index)
        self.items.touch(item)
        first = _before(part.text, skip)
        if first:
            part.call.feed(first, t=ev.t, event=ev.index)
        return part.call

    def live_tool_calls(self) -> list[ToolCall]:
        """Tool call items and structured-output parts, in output_index order."""
        out = []
        for item in self.items:
            if item.call is not None:
                out.append(item.call)
            out += [item.parts[ci].call for ci in sorted(item.parts)
                    if item.parts[ci].call is not None]
        return out
