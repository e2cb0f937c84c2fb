"""A Chat message's ``content`` as typed parts, and indexed lists, as some compatible
servers stream them.

Mistral streams ``delta.content`` as an array of parts: ``{"type": "thinking",
"thinking": [{"type": "text", "text": ...}], "closed": ...}`` for reasoning and
``{"type": "text", "text": ...}`` for the answer, and plain strings around them.
Its non-streaming API returns ``message.content`` in the same shape, so the
final message keeps it: consecutive fragments of one part type are one part
(a text part's ``text`` and a thinking part's inner text joined; its other
fields, such as ``closed``, take their latest value), and a plain string
fragment is text. So the final object of such a stream has

    "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "..."}],
                 "closed": true},
                {"type": "text", "text": "..."}]

while the turn sees a reasoning block (the thinking text) and a text block.
A part of another type is kept as it arrived, in its place.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from ...wires.chat import content_part_text
from ...wires.wire_events import WireEvent
from ..fragments import Fragments

if TYPE_CHECKING:
    from .choice import Choice

_MERGED = ("text", "thinking")


class ContentParts:
    """The parts of one message's ``content``, in order (see the module)."""

    __slots__ = ("parts",)

    def __init__(self, before: Fragments | None = None) -> None:
        self.parts: list[list] = []     # [type, the part's other fields, Fragments | None]
        if before is not None and before.text:   # the plain text that came first
            self.add("text", None, before.text)

    def add(self, kind: str, part: Any, text: str) -> None:
        """One part fragment (`part` the wire's object, None for a plain string)."""
        fields = {k: copy.deepcopy(v) for k, v in part.items()
                  if k not in ("type", kind)} if isinstance(part, dict) else {}
        last = self.parts[-1] if self.parts else None
        if kind in _MERGED and last is not None and last[0] == kind:
            last[1].update(fields)
            last[2].append(text)
        elif kind in _MERGED:
            self.parts.append([kind, fields, Fragments(text)])
        else:
            self.parts.append([kind, copy.deepcopy(part), None])

    def build(self) -> list:
        """``message.content``: the parts, each fragment run joined."""
        out: list = []
        for kind, fields, frags in self.parts:
            if kind == "text":
                out.append({"type": "text", "text": frags.text, **copy.deepcopy(fields)})
            elif kind == "thinking":
                out.append({"type": "thinking",
                            "thinking": [{"type": "text", "text": frags.text}],
                            **copy.deepcopy(fields)})
            else:
                out.append(copy.deepcopy(fields))
        return out


def indexed(value: Any) -> bool:
    """Whether a delta field's value is a non-empty list of entries that carry an
    integer ``index`` (merged by index, not replaced)."""
    return (isinstance(value, list) and bool(value) and
            all(isinstance(e, dict) and type(e.get("index")) is int for e in value))


class IndexedEntries:
    """A delta field that streams a list of entries addressed by ``index`` (OpenRouter's
    ``reasoning_details``): an entry's string fields are concatenated, the others take
    their latest value, in the order the indexes first came."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        self.entries: dict[int, dict[str, Any]] = {}

    def add(self, value: list) -> None:
        """One delta's entries."""
        for entry in value:
            have = self.entries.setdefault(entry["index"], {})
            for key, item in entry.items():
                old = have.get(key)
                if isinstance(item, str) and isinstance(old, Fragments):
                    old.append(item)
                elif isinstance(item, str) and key not in ("index", "type"):
                    have[key] = Fragments(item)
                else:
                    have[key] = copy.deepcopy(item)

    def build(self) -> list:
        """The merged entries, each string field joined."""
        return [{k: v.text if isinstance(v, Fragments) else copy.deepcopy(v)
                 for k, v in entry.items()} for entry in self.entries.values()]


class TypedParts:
    """The Chat accumulator's ``content`` as typed parts (mixed into `ChatAccumulator`)."""

    def _content_parts(self, choice: Choice, parts: list, event: WireEvent) -> None:
        """``content`` as an array of typed parts (Mistral): a ``text`` part's text goes
        to the content slot, a ``thinking`` part's text to the reasoning slot, in order;
        the message keeps the parts (`ContentParts`). A part of another type is kept
        on the message as it arrived, with one warning."""
        if choice.parts is None:
            choice.parts = ContentParts(choice.texts.get("content"))
        for part in parts:
            kind, text = content_part_text(part)
            choice.parts.add(kind, part, text)
            if kind == "text":
                self._text(choice, "content", text, event)
            elif kind == "thinking":
                self._text(choice, "thinking", text, event)
            else:
                self._unknown_key(f"content[].type={kind}", event)
