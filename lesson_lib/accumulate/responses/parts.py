"""The events that build the parts of an item: content parts and reasoning summary parts.

A message or reasoning item holds parts by ``content_index``
(``output_text``, ``refusal``, ``reasoning_text``), and a reasoning item
summary parts by ``summary_index``. Both kinds live the same life, so one
handler serves each step of it, told which kind by the event:

- announced (``content_part.added``, ``reasoning_summary_part.added``): the
  part's slot opens, and the item's own slot gives way to it;
- streamed into (``*.delta``): the fragment is appended, and said;
- stated whole (``*.done`` with the text): compared with what the deltas
  built; the server's text is kept, and said as the new tail or restated;
- closed (``content_part.done``, ``reasoning_summary_part.done``).

A part met first through its deltas is assumed (``event_before_start``), and
announced later if the announcement comes.
"""

from __future__ import annotations

from ...wires import responses as r
from ...wires.wire_events import WireEvent
from ..changes import CitationAdded, TextAppended
from .items import Handlers
from .objects import Item, Part
from .slots import _new
from .vocabulary import (
    ASSUMED_PARTS,
    CHANNELS,
    PART_TEXTS,
    PARTS,
    Malformed,
    index_of,
    is_index,
    string_field,
)


class PartEvents(Handlers):
    """The handlers for parts and summary parts (the `tools` make a structured-output
    part's call)."""

    # -- a part's beginning -------------------------------------------------------

    def new_part(self, ev: WireEvent, item: Item, n: int, part: Part, summary: bool) -> Part:
        """Put a part at `n` and open its slot. In an item already done, the parts after
        it move one place on in the server's item: their slots say their new text."""
        parts = item.parts_of(summary)
        after = [i for i in parts if i > n] if item.done is not None else []
        before = {i: item.part_text(i, summary) for i in after}
        parts[n] = part
        if not summary:
            self.tools.structured_call(ev, item, n, part)
        self.slot_changes.open_part(item, item.part_address(n, summary), part, ev.index,
                                    summary=summary)
        for i in after:
            self.slot_changes.part_stated(item, i, summary, before[i], ev.index)
        return part

    def part_for(self, ev: WireEvent, p: dict, item: Item, kind: str) -> Part:
        """The part (or, for a ``summary_text``, the summary part) an event addresses:
        checked, or assumed."""
        summary = kind == r.SUMMARY_TEXT_PART
        key = "summary_index" if summary else "content_index"
        n = index_of(p, key)
        part = item.parts_of(summary).get(n)
        address = item.part_address(n, summary)
        if part is None:
            if not summary and item.type != PARTS[kind][0]:
                self.items.once_note(("host", address), "delta_mismatch",
                                     f"{ev.type}: a {item.type} item has no {kind} parts; kept "
                                     f"as its content[{n}]", event=ev, slot=address)
            announcer = "reasoning_summary_part.added" if summary else "content_part.added"
            self.note("event_before_start", f"{ev.type} for {key} {n} of "
                      f"{item.label()}, never announced by {announcer}: assumed an "
                      f"empty {kind} part", severity="warning", event=ev, slot=address)
            part = self.new_part(ev, item, n, Part(dict(ASSUMED_PARTS[kind]), assumed=True),
                                 summary)
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

    def _announced(self, ev: WireEvent, p: dict, summary: bool, done: bool) -> tuple:
        """A part's ``*.added`` or (`done`) ``*.done``: its item, index, key and part object.
        A summary part's done may lack its index (then `part_for` says so)."""
        key = "summary_index" if summary else "content_index"
        data, n = p.get("part"), p.get(key)
        if not isinstance(data, dict) or not (is_index(n) or done and summary):
            raise Malformed("no part object" if done and summary
                            else f"needs a {key} and a part object")
        reasoning = summary or data.get("type") == r.REASONING_TEXT_PART
        item = self.items.item_for(ev, p, r.REASONING_ITEM if reasoning else r.MESSAGE_ITEM)
        return item, n, key, data

    def on_part_added(self, ev: WireEvent, p: dict, *, summary: bool = False) -> None:
        """A part (or, `summary`, a summary part) announced."""
        item, n, key, data = self._announced(ev, p, summary, False)
        part = item.parts_of(summary).get(n)
        address = item.part_address(n, summary)
        if part is None:
            self.new_part(ev, item, n, Part(data), summary)
        elif part.assumed:
            kind, shown = part.type, item.part_text(n, summary)
            part.announce(data)
            self.slot_changes.part_renamed(item, address, part, kind, ev.index)
            self.slot_changes.part_stated(item, n, summary, shown, ev.index)
        else:
            self.note("duplicate_start", f"{key} {n} of {item.label()} announced "
                      "again; the first announcement is kept", severity="warning", event=ev,
                      slot=address)

    # -- a part's text ------------------------------------------------------------

    def on_part_text(self, ev: WireEvent, p: dict) -> None:
        """A delta into a part's text, or (``*.done``) the text stated whole."""
        kind, host, field, summary = PART_TEXTS[ev.type]
        item = self.items.item_for(ev, p, host)
        n = p.get("summary_index" if summary else "content_index")
        part = (item.summary if summary else item.parts).get(n) if type(n) is int else None
        if part is None or part.state != "open" or part.type != kind and not summary:
            part = self.part_for(ev, p, item, kind)       # checked, or assumed
        address = (item.index, "summary", n) if summary else (item.index, n)
        if field is not None:
            self._stated(ev, p, item, part, n, address, summary, field)
            return
        delta = string_field(p)
        # The slot shows the part's own text (the usual case), or the server's finished
        # item, or (a part of another type) another field of it.
        plain = part.key is not None and (not summary or part.key == "text")
        shown = None if plain or item.done is not None else item.part_text(n, summary)
        part.frags.append(delta)
        late = self.tools.structured is not None and self._made_late(ev, item, n, part,
                                                                     address, summary, delta)
        if late or item.done is not None:
            pass
        elif shown is None:
            self.slot_changes.growing.append(_new(TextAppended, (
                ev.index, address, CHANNELS.get(part.type, "other"), delta, part.type)))
        else:
            self.slot_changes.part_stated(item, n, summary, shown, ev.index)
        call = part.call
        if call is not None:
            call.feed(delta, t=ev.t, event=ev.index)
        logprobs = p.get("logprobs")
        if type(logprobs) is list and logprobs:
            if part.logprobs is None:
                part.logprobs = []
            part.logprobs.extend(logprobs)

    def _stated(self, ev: WireEvent, p: dict, item: Item, part: Part, n: int, address: tuple,
                summary: bool, field: str) -> None:
        theirs = string_field(p, field)
        self.said_again(ev, item, part, "text", address)
        shown = item.part_text(n, summary)
        self._adopt(ev, part, (*item.part_path(n, summary), part.key or field), theirs)
        if not self._made_late(ev, item, n, part, address, summary):
            self.slot_changes.part_stated(item, n, summary, shown, ev.index)
        call = part.call
        if call is not None and not call.ended:
            call.end(theirs, t=ev.t, event=ev.index)
            self.slot_changes.call_ended(address, call, ev.index)
        if not summary:
            part.adopt_logprobs(p.get("logprobs"))

    def _made_late(self, ev: WireEvent, item: Item, n: int, part: Part, address: tuple,
                   summary: bool, skip: str | None = None) -> bool:
        """Whether the part turns out to be structured output only now (its call made
        late, fed its text but `skip`): its slot is then said again, with its whole text."""
        if part.call is not None or summary or self.tools.structured is None:
            return False
        if self.tools.structured_call(ev, item, n, part, skip) is None:
            return False
        self.slot_changes.reopen_part(item, address, part, ev.index)
        return True

    def said_again(self, ev: WireEvent, item: Item, part: Part, what: str,
                   address: tuple) -> None:
        """A part's done event (its text's, or the part's own) seen a second time: a
        ``duplicate_stop`` (the later statement is kept)."""
        if what in part.said_done:
            self.note("duplicate_stop", f"{ev.type} again for part {address} of "
                      f"{item.label()}; the later statement is kept", severity="warning",
                      event=ev, slot=address)
        part.said_done.add(what)

    # -- a part's end -------------------------------------------------------------

    def on_part_done(self, ev: WireEvent, p: dict, *, summary: bool = False) -> None:
        """A part (or, `summary`, a summary part) done: the server's part settles ours."""
        item, n, _, data = self._announced(ev, p, summary, True)
        part = item.parts_of(summary).get(n) if is_index(n) else None
        if part is None and not summary:
            self.note("event_before_start", f"content_part.done for content_index {n} of "
                      f"{item.label()}, never announced: the server's part is taken",
                      severity="warning", event=ev, slot=(item.index, n))
            part = self.new_part(ev, item, n, Part(data), summary)
        else:
            if summary:
                part = self.part_for(ev, p, item, r.SUMMARY_TEXT_PART)
            else:
                self.said_again(ev, item, part, "part", (item.index, n))
            shown = item.part_text(n, summary)
            self.settle(ev, item, summary, n, part, data)
            self.slot_changes.part_stated(item, n, summary, shown, ev.index)
        call = part.call
        ended = call is not None and not call.ended
        if ended:
            call.end(part.text, t=ev.t, event=ev.index)
        self.slot_changes.done(item.part_address(n, summary), part.state == "open", call, ended,
                      ev.index)
        part.state = "closed"

    def _adopt(self, ev: WireEvent, part: Part, path: tuple, theirs: str) -> None:
        """The server's statement of a part's text (at `path` in ``output``): checked
        against what the deltas built, and kept."""
        if theirs != part.text:
            self.compare.differs(ev, path, part.text, theirs)
        part.adopt_text(theirs)

    def settle(self, ev: WireEvent, item: Item, summary: bool, n: int, part: Part,
               data: dict) -> None:
        """A part's done statement: compare what the deltas built, keep the server's."""
        if part.key is None:                      # a part of an unknown type: kept raw
            part.data = data
            return
        path = item.part_path(n, summary)
        theirs = data.get(part.key)
        if isinstance(theirs, str):
            self._adopt(ev, part, (*path, part.key), theirs)
        ann = data.get("annotations")
        if isinstance(ann, list):
            if part.annotations is not None and ann != part.annotations:
                self.compare.differs(ev, (*path, "annotations"), part.annotations, ann)
            part.annotations = list(ann)
        part.adopt_logprobs(data.get("logprobs"))  # the recorded part.done says [] at times

    def on_annotation(self, ev: WireEvent, p: dict) -> None:
        """A citation added to an ``output_text`` part."""
        item = self.items.item_for(ev, p, r.MESSAGE_ITEM)
        part = self.part_for(ev, p, item, r.OUTPUT_TEXT_PART)
        annotation, n = p.get("annotation"), p.get("annotation_index")
        address = (item.index, p["content_index"])
        if part.annotations is None:
            part.annotations = []
        if is_index(n) and n < len(part.annotations):
            self.note("duplicate_start", f"annotation_index {n} of part {address} again; "
                      "replaced", severity="warning", event=ev, slot=address)
            part.annotations[n] = annotation
        else:
            part.annotations.append(annotation)
            self.slot_changes.growing.append(CitationAdded(ev.index, address, annotation))
