"""The events that build the parts of an item: content parts and reasoning summary parts.

A message or reasoning item holds parts by ``content_index``
(``output_text``, ``refusal``, ``reasoning_text``), and a reasoning item
summary parts by ``summary_index``. Each part is announced
(``*_part.added``), streamed into (``*.delta``), stated whole (``*.done``)
and closed (``*_part.done``); the done statements are compared with what
the deltas built, and the server's value is kept. A part met first through
its deltas is assumed (``event_before_start``), and announced later if the
announcement comes.
"""

from __future__ import annotations

from ...wires.wire_events import WireEvent
from ..changes import CitationAdded
from .compare import ServerComparison
from .objects import ASSUMED_PARTS, PART_HOSTS, Item, Part
from .registry import Items
from .shown import ShownSlots
from .tools import ToolCallEvents
from .vocabulary import (
    PART_DELTAS,
    PART_DONES,
    Malformed,
    index_of,
    is_index,
    string_delta,
)


class PartEvents:
    """The handlers for parts and summary parts.

    Composed of the stream's `items`, the `compare` checks, the `tools`
    (which make a structured-output part's call) and the `shown` slots (which
    report a delta as a change).
    """

    def __init__(self, items: Items, compare: ServerComparison, tools: ToolCallEvents,
                 shown: ShownSlots) -> None:
        self.items = items
        self.note = items.note
        self.compare = compare
        self.tools = tools
        self.shown = shown

    # -- finding a part ------------------------------------------------------

    def part_for(self, ev: WireEvent, p: dict, item: Item, kind: str) -> Part:
        """The part (or, for a ``summary_text``, the summary part) an event addresses (slow
        path): checked, or assumed."""
        self.items.touch(item)
        summary = kind == "summary_text"
        key = "summary_index" if summary else "content_index"
        n = index_of(p, key)
        parts = item.summary if summary else item.parts
        part = parts.get(n)
        address = (item.index, "summary", n) if summary else (item.index, n)
        if part is None:
            if not summary and item.type not in PART_HOSTS.get(kind, (item.type,)):
                self.items.once_note(("host", address), "delta_mismatch",
                                f"{ev.type}: a {item.type} item has no {kind} parts; kept as its "
                                f"content[{n}]", event=ev, slot=address)
            part = parts[n] = Part(dict(ASSUMED_PARTS[kind]), assumed=True)
            announcer = "reasoning_summary_part.added" if summary else "content_part.added"
            self.note("event_before_start", f"{ev.type} for {key} {n} of "
                      f"{item.label()}, never announced by {announcer}: assumed an "
                      f"empty {kind} part", severity="warning", event=ev, slot=address)
        elif part.state != "open":
            if item.state == "open":              # else said once for the whole item
                what = f"summary part {n} of {item.label()}" if summary else f"part {address}"
                self.items.once_note(("late", address), "delta_after_stop",
                                f"{ev.type} after {what} was done: accumulated "
                                "anyway", severity="warning", event=ev, slot=address)
        elif part.type != kind and not summary:
            self.items.once_note(("kind", address, kind), "delta_mismatch",
                            f"{ev.type} addresses a {part.type} part at {address}; "
                            "accumulated anyway", event=ev, slot=address)
        return part

    # -- parts (content_index) ---------------------------------------------

    def part_event(self, ev: WireEvent, p: dict) -> tuple[Item, int, dict]:
        """A content_part.added or .done: its item, content_index and part object."""
        data, ci = p.get("part"), p.get("content_index")
        if not isinstance(data, dict) or not is_index(ci):
            raise Malformed("needs a content_index and a part object")
        kind = data.get("type")
        item = self.items.item_for(ev, p, "reasoning" if kind == "reasoning_text" else "message")
        return item, ci, data

    def on_part_added(self, ev: WireEvent, p: dict, *, summary: bool = False) -> None:
        """A part (or, `summary`, a summary part) announced."""
        key = "summary_index" if summary else "content_index"
        data, n = p.get("part"), p.get(key)
        if not isinstance(data, dict) or not is_index(n):
            raise Malformed(f"needs a {key} and a part object")
        reasoning = summary or data.get("type") == "reasoning_text"
        item = self.items.item_for(ev, p, "reasoning" if reasoning else "message")
        parts = item.summary if summary else item.parts
        part = parts.get(n)
        if part is None:
            part = parts[n] = Part(data)
            if not summary:
                self.tools.structured_call(ev, item, n, part)
        elif part.assumed:
            part.announce(data)
        else:
            self.note("duplicate_start", f"{key} {n} of {item.label()} announced "
                      "again; the first announcement is kept", severity="warning", event=ev,
                      slot=(item.index, "summary", n) if summary else (item.index, n))

    def on_part_done(self, ev: WireEvent, p: dict) -> None:
        item, ci, data = self.part_event(ev, p)
        part = item.parts.get(ci)
        if part is None:
            self.note("event_before_start", f"content_part.done for content_index {ci} of "
                      f"{item.label()}, never announced: the server's part is taken",
                      severity="warning", event=ev, slot=(item.index, ci))
            part = item.parts[ci] = Part(data)
        else:
            self.said_again(ev, item, part, "part", (item.index, ci))
            self.settle_part(ev, item, ("content", ci), part, data)
        if part.call is not None:
            part.call.end(part.text, t=ev.t, event=ev.index)
        part.state = "closed"

    def said_again(self, ev: WireEvent, item: Item, part: Part, what: str,
                   address: tuple) -> None:
        """A part's done event (its text's, or the part's own) seen a second time: a
        ``duplicate_stop`` (the later statement is kept)."""
        if what in part.said_done:
            self.note("duplicate_stop", f"{ev.type} again for part {address} of "
                      f"{item.label()}; the later statement is kept", severity="warning",
                      event=ev, slot=address)
        part.said_done.add(what)

    def settle_part(self, ev: WireEvent, item: Item, path: tuple, part: Part,
                     data: dict) -> None:
        """A part's done statement: compare what the deltas built, keep the server's."""
        if part.key is None:                      # a part of an unknown type: kept raw
            part.data = data
            return
        theirs = data.get(part.key)
        if isinstance(theirs, str):
            if theirs != part.text:
                self.compare.differs(ev, (item.index, *path, part.key), part.text, theirs)
            part.adopt_text(theirs)
        ann = data.get("annotations")
        if isinstance(ann, list):
            if part.annotations is not None and ann != part.annotations:
                self.compare.differs(ev, (item.index, *path, "annotations"), part.annotations, ann)
            part.annotations = list(ann)
        part.adopt_logprobs(data.get("logprobs"))  # the recorded part.done says [] at times

    def on_part_delta(self, ev: WireEvent, p: dict) -> None:
        """A delta into a part or a summary part. The hot path: a dict lookup for the
        item, one for the part, an append."""
        kind, host = PART_DELTAS[ev.type]
        summary = kind == "summary_text"
        item = self.items.open_item(ev, p, host)
        n = p.get("summary_index" if summary else "content_index")
        part = (item.summary if summary else item.parts).get(n) if type(n) is int else None
        if part is None or part.state != "open" or (part.type != kind and not summary):
            part = self.part_for(ev, p, item, kind)
        delta = string_delta(p)
        part.frags.append(delta)
        self.shown.part_grew(item, part, delta, ev.index)
        if summary:
            return
        call = part.call
        if call is None and self.tools.structured is not None:
            call = self.tools.structured_call(ev, item, n, part, delta)
        if call is not None:
            call.feed(delta, t=ev.t, event=ev.index)
        logprobs = p.get("logprobs")
        if type(logprobs) is list and logprobs:
            if part.logprobs is None:
                part.logprobs = []
            part.logprobs.extend(logprobs)

    def on_part_text_done(self, ev: WireEvent, p: dict) -> None:
        """A part's (or summary part's) text stated whole: compared, the server's kept."""
        kind, host, field = PART_DONES[ev.type]
        summary = kind == "summary_text"
        item = self.items.item_for(ev, p, host)
        part = self.part_for(ev, p, item, kind)
        theirs = p.get(field)
        if not isinstance(theirs, str):
            raise Malformed(f"{field} is not a string")
        n = p["summary_index" if summary else "content_index"]
        self.said_again(ev, item, part, "text",
                        (item.index, "summary", n) if summary else (item.index, n))
        if theirs != part.text:
            pos = sorted(item.summary if summary else item.parts).index(n)
            self.compare.differs(ev, (item.index, "summary" if summary else "content", pos,
                                      part.key or field), part.text, theirs)
        part.adopt_text(theirs)
        if summary:
            return
        call = part.call
        if call is None and self.tools.structured is not None:
            call = self.tools.structured_call(ev, item, n, part)
        if call is not None:
            call.end(theirs, t=ev.t, event=ev.index)
        part.adopt_logprobs(p.get("logprobs"))

    def on_annotation(self, ev: WireEvent, p: dict) -> None:
        item = self.items.item_for(ev, p, "message")
        part = self.part_for(ev, p, item, "output_text")
        annotation, n = p.get("annotation"), p.get("annotation_index")
        if part.annotations is None:
            part.annotations = []
        if is_index(n) and n < len(part.annotations):
            self.note("duplicate_start", f"annotation_index {n} of part "
                      f"({item.index}, {p['content_index']}) again; replaced",
                      severity="warning", event=ev, slot=(item.index, p["content_index"]))
            part.annotations[n] = annotation
        else:
            part.annotations.append(annotation)
            self.shown.emit(CitationAdded(ev.index, (item.index, p["content_index"]),
                                          annotation))

    # -- reasoning summaries (summary_index) -------------------------------

    def on_summary_part_done(self, ev: WireEvent, p: dict) -> None:
        data = p.get("part")
        if not isinstance(data, dict):
            raise Malformed("no part object")
        item = self.items.item_for(ev, p, "reasoning")
        part = self.part_for(ev, p, item, "summary_text")
        pos = sorted(item.summary).index(p["summary_index"])
        self.settle_part(ev, item, ("summary", pos), part, data)
        part.state = "closed"
