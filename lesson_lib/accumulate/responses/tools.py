"""Lesson 3 on the Responses wire: the string fields of items, and the tool calls they feed.

Some items are built by deltas into one string field (a function call's
``arguments``, a custom tool's ``input``, a code interpreter's ``code``, an
apply-patch ``operation.diff``), stated whole by the matching ``*.done``: one
handler serves both (`on_field_text`). The item's own slot shows that field
while the item forms: a delta is said as its fragment (`ToolInputGrew` for a
call, with the partial-JSON changes it caused), a statement as the new tail
or the whole text restated.
Each ``function_call``, ``custom_tool_call`` and ``mcp_call`` item has a
`ToolCall` fed every argument delta and ended by its ``*_arguments.done``
(or ``output_item.done``); with ``text.format`` ``json_schema`` each
``output_text`` part is a structured-output `ToolCall` too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...tool_calls import ToolCall
from ...wires import responses as r
from ...wires.wire_events import WireEvent
from .compare import ServerComparison
from .items import Handlers, Items
from .objects import Item, Part, get_path
from .slots import SlotChanges, own_shown
from .vocabulary import FIELD_TEXTS, MAIN_FIELD, TOOL_ITEMS, string_field


def structured_name(resp: dict) -> str | None:
    """The name of a ``json_schema`` text format (structured output), else None."""
    text = resp.get("text")
    fmt = text.get("format") if isinstance(text, dict) else None
    if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
        name = fmt.get("name")
        return name if isinstance(name, str) and name else "structured output"
    return None


def _seed(call: ToolCall, text: Any, skip: str | None, t: float | None,
          event: int | None) -> None:
    """Feed a call made late the text its field holds so far, but its tail `skip` (the
    delta being fed right now)."""
    if skip is not None and isinstance(text, str) and text.endswith(skip):
        text = text[:len(text) - len(skip)]
    if isinstance(text, str) and text:
        call.feed(text, t=t, event=event)


class ToolCallEvents(Handlers):
    """The handlers for string fields of items, and the tool calls they feed.

    Besides what every `Handlers` has, the accumulator's `end_tool_call` (the
    strict check and its diagnostics). `structured` is the ``json_schema`` text
    format's name while the response asks for one.
    """

    def __init__(self, items: Items, compare: ServerComparison,
                 end_tool_call: Callable[..., Any], slot_changes: SlotChanges) -> None:
        super().__init__(items, compare, self, slot_changes)
        self.end_tool_call = end_tool_call
        self.structured: str | None = None

    # -- string fields of items (arguments, code, diff, input) -------------

    def on_field_text(self, ev: WireEvent, p: dict) -> None:
        """A delta into one string field of an item, or (``*.done``) the field stated whole."""
        kind, path, field = FIELD_TEXTS[ev.type]
        # (An item assumed for a delta is a call that delta feeds: made with the item.)
        item = self.items.item_for(ev, p, kind, call=field is None
                                   and type(p.get("delta")) is str)
        if field is None:
            self._delta(ev, p, item, path)
        else:
            self._stated(ev, p, item, kind, path, field)

    def _delta(self, ev: WireEvent, p: dict, item: Item, path: tuple) -> None:
        delta = string_field(p)
        item.text_field(path).append(delta)
        own = (item.index,)
        if TOOL_ITEMS.get(item.type) != path:
            if MAIN_FIELD.get(item.type) == path and item.done is None and not item.hidden:
                self.slot_changes.grew(own, "other", delta, path[-1], ev.index)
            return
        # The call is fed what its own field gets, whichever delta type brought it (a
        # mismatch was said by `item_for`): the call's text and the item's stay one text.
        call = item.call
        if call is None:                  # a call made late says its slot again, whole
            self.call_of(item, ev, skip=delta).feed(delta, t=ev.t, event=ev.index)
            self.slot_changes.reopen_item(item, ev.index)
            return
        fed = not call.ended
        grew = tuple(call.feed(delta, t=ev.t, event=ev.index))
        # The slot shows the field while the item forms; given way to parts, the call.
        if fed if item.hidden else item.done is None:
            self.slot_changes.call_grew(own, delta, grew, ev.index)

    def _stated(self, ev: WireEvent, p: dict, item: Item, kind: str, path: tuple,
                field: str) -> None:
        theirs = string_field(p, field)
        shown, item_call = own_shown(item), item.call
        self.compare.field_stated(ev, item, path, theirs)
        call = self.call_of(item, ev) if kind in TOOL_ITEMS and item.type == kind else None
        ended = call is not None and not call.ended
        if call is not None and kind == r.FUNCTION_CALL_ITEM:
            self.parse_input(ev, item, theirs)
        elif call is not None:
            call.end(theirs, t=ev.t, event=ev.index)
        if call is not item_call:                 # a call made late says its slot again
            self.slot_changes.reopen_item(item, ev.index)
            if item.state != "open":
                return                            # (closed, its call with it)
        else:
            self.slot_changes.own_stated(item, shown, ev.index)
        if ended:
            self.slot_changes.call_ended((item.index,), call, ev.index)

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
                                        json_arguments=item.type != r.CUSTOM_TOOL_CALL_ITEM,
                                        ended_by=r.CALL_ENDED_BY.get(item.type),
                                        t=ev.t if ev is not None else None,
                                        event=ev.index if ev is not None else None)
            frags = item.texts.get(TOOL_ITEMS[item.type])
            first = frags.text if frags is not None else get_path(item.data,
                                                                  TOOL_ITEMS[item.type])
            _seed(call, first, skip, call.start_t, call.start_event)
        else:
            call.name = call.name or item.name or ""
            call.call_id = call.call_id or item.call_id
        return call

    def structured_call(self, ev: WireEvent, item: Item, ci: Any, part: Part,
                        skip: str | None = None) -> ToolCall | None:
        """With text.format json_schema, an output_text part is structured output: a
        pseudo tool call named after the format."""
        if self.structured is None or part.type != r.OUTPUT_TEXT_PART or item.type != r.MESSAGE_ITEM:
            return None
        part.call = ToolCall(self.structured, item.id, kind="structured output",
                             address=(item.index, ci), structured=True, t=ev.t, event=ev.index,
                             ended_by=r.STRUCTURED_OUTPUT_ENDED_BY)
        _seed(part.call, part.text, skip, ev.t, ev.index)
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
