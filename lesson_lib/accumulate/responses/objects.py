"""The pieces a Responses stream builds: output items and their parts.

An OpenAI Responses stream addresses what it builds at two levels:

- an **output item** (``output_index``, and its ``item_id``): a message, a
  reasoning item, a function call, a web search, an MCP call, ...;
- inside a message or reasoning item, a **part** (``content_index``): an
  ``output_text``, a ``refusal``, a ``reasoning_text``; and inside a
  reasoning item a **summary part** (``summary_index``).

Text arrives as deltas addressed to a part, or to one string field of an
item (a function call's ``arguments``, a code interpreter's ``code``, an
apply-patch ``operation.diff``...). Every such string is kept as
`Fragments` and joined only when read. The item as announced by
``response.output_item.added`` is kept untouched (it is the event's payload,
shared with every other reader of the stream); the final item is built from
it on demand, and once ``response.output_item.done`` has arrived the server's
own item is the item.

`clone`, `get_path` and `set_path` copy, read and write JSON values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ...partial_json import NOTHING
from ...wires import responses as r
from ..base import Fragments, Slot
from .vocabulary import MAIN_FIELD, PART_TEXT_KEY


class _Absent:
    """The marker for "no such key or index" (shown as ``<absent>`` in diagnostics)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<absent>"


ABSENT: Any = _Absent()


def clone(value: Any) -> Any:
    """A copy of a JSON value that shares no container with the original."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def get_path(value: Any, path: tuple) -> Any:
    """The value at `path` (keys and indices) inside `value`, or `ABSENT`."""
    for step in path:
        if isinstance(step, int) and isinstance(value, list) and 0 <= step < len(value):
            value = value[step]
        elif isinstance(step, str) and isinstance(value, dict) and step in value:
            value = value[step]
        else:
            return ABSENT
    return value


def set_path(target: dict, path: tuple, value: Any) -> None:
    """Set `value` at `path` in `target`, copying (never mutating) the containers on the way.

    `target` itself must be a fresh dict; nested containers met on the way are
    shallow-copied first, missing ones created (a list for an integer step).
    """
    node: Any = target
    for depth, step in enumerate(path[:-1]):
        nxt = path[depth + 1]
        child = get_path(node, (step,))
        if isinstance(nxt, int):
            child = list(child) if isinstance(child, list) else []
            child.extend(None for _ in range(nxt + 1 - len(child)))
        else:
            child = dict(child) if isinstance(child, dict) else {}
        node[step] = child
        node = child
    last = path[-1]
    if isinstance(node, list):
        node.extend(None for _ in range(last + 1 - len(node)))
    node[last] = value


class Part:
    """One part of an item: announced (or assumed), text appended, closed."""

    __slots__ = ("data", "type", "key", "frags", "annotations", "logprobs", "state", "assumed",
                 "call", "said_done")

    def __init__(self, data: dict, *, assumed: bool = False) -> None:
        self.annotations: list | None = None
        self.logprobs: list | None = None
        self.announce(data)
        first = data.get(self.key) if self.key else None
        self.frags = Fragments(first if isinstance(first, str) else "")
        self.state = "open"
        self.assumed = assumed
        self.call: Any = None                # structured output: its ToolCall (lesson 3)
        self.said_done: set[str] = set()     # the done events that ended it (text, part)

    def announce(self, data: dict) -> None:
        """The part's announcement (or the real one of a part first met through its
        deltas: text kept)."""
        self.data = data                     # the part as announced (never mutated)
        kind = data.get("type")
        self.type = kind if isinstance(kind, str) else "unknown"
        self.key = PART_TEXT_KEY.get(kind) if isinstance(kind, str) else None
        if self.annotations is None and isinstance(data.get("annotations"), list):
            self.annotations = list(data["annotations"])
        if self.logprobs is None and isinstance(data.get("logprobs"), list):
            self.logprobs = list(data["logprobs"])
        self.assumed = False

    @property
    def text(self) -> str:
        return self.frags.text

    def adopt_text(self, text: str) -> None:
        """Replace what the deltas built with the server's statement of the text."""
        self.frags = Fragments(text)

    def adopt_logprobs(self, logprobs: Any) -> None:
        """Take the server's logprobs when it states some (an empty list is no statement)."""
        if isinstance(logprobs, list) and logprobs:
            self.logprobs = list(logprobs)

    def build(self) -> dict:
        """The part as the non-streaming API returns it."""
        out = clone(self.data)
        if self.key is not None:
            out[self.key] = self.frags.text
        elif self.frags:
            out["text"] = self.frags.text          # deltas for a part of an unknown type
        if self.annotations is not None:
            out["annotations"] = clone(self.annotations)
        if self.logprobs is not None:
            out["logprobs"] = clone(self.logprobs)
        return out


class Item:
    """One output item: announced (or assumed), built by deltas, replaced when done."""

    __slots__ = ("index", "id", "type", "data", "parts", "summary", "texts", "state",
                 "status", "done", "assumed", "input", "input_done", "partial_images", "call")

    def __init__(self, index: int, data: dict, *, assumed: bool = False) -> None:
        self.index = index
        self.id: str | None = None
        self.type = "unknown"
        self.announce(data)
        self.parts: dict[int, Part] = {}      # content_index -> part
        self.summary: dict[int, Part] = {}    # summary_index -> summary part
        self.texts: dict[tuple, Fragments] = {}   # field path -> streamed string
        self.state = "open"
        self.status: str | None = None        # from the item's status events, until done
        self.done: dict | None = None         # the item from response.output_item.done
        self.assumed = assumed
        self.input: Any = None                # function_call: the parsed arguments
        self.input_done = False
        self.partial_images: list[tuple[Any, str]] = []   # (partial_image_index, base64)
        self.call: Any = None                 # a tool call item: its ToolCall (lesson 3)
        for field, parts in (("content", self.parts), ("summary", self.summary)):
            seed = data.get(field)
            if isinstance(seed, list):
                for i, part in enumerate(seed):
                    if isinstance(part, dict):
                        parts[i] = Part(part)

    def announce(self, data: dict) -> None:
        """The item's announcement (or the real one of an item first met through its
        deltas or parts: what it does not say stays as assumed)."""
        self.data = data                      # the item as announced (never mutated)
        item_id = data.get("id")
        if isinstance(item_id, str):
            self.id = item_id
        kind = data.get("type")
        if isinstance(kind, str):
            self.type = kind
        self.assumed = False

    @property
    def name(self) -> str | None:
        """The item's name: the finished item's, else the announced one's."""
        return self._said("name")

    @property
    def call_id(self) -> str | None:
        """The item's call id: the finished item's, else the announced one's."""
        return self._said("call_id")

    def _said(self, key: str) -> str | None:
        for src in (self.done, self.data):
            value = src.get(key) if src is not None else None
            if isinstance(value, str):
                return value
        return None

    def text_field(self, path: tuple) -> Fragments:
        """The streamed string at `path`, started from the announced value."""
        frags = self.texts.get(path)
        if frags is None:
            first = get_path(self.data, path)
            frags = self.texts[path] = Fragments(first if isinstance(first, str) else "")
        return frags

    def built(self) -> dict:
        """The item from what the stream built so far, ignoring ``output_item.done``."""
        out = clone(self.data)
        if self.parts or isinstance(self.data.get("content"), list) or self.type == r.MESSAGE_ITEM:
            out["content"] = [self.parts[i].build() for i in sorted(self.parts)]
        if self.summary or isinstance(self.data.get("summary"), list) or self.type == r.REASONING_ITEM:
            out["summary"] = [self.summary[i].build() for i in sorted(self.summary)]
        for path, frags in self.texts.items():
            set_path(out, path, frags.text)
        if self.status is not None and "status" in out:
            out["status"] = self.status
        return out

    def build(self) -> dict:
        """The item as the non-streaming API returns it: the server's once done."""
        if self.done is not None:
            return clone(self.done)
        return self.built()

    def streamed(self) -> Iterator[tuple[tuple, Any]]:
        """What the deltas built, by path inside the item, to check against the server's item."""
        for pos, ci in enumerate(sorted(self.parts)):
            part = self.parts[ci]
            if part.key is not None:
                yield ("content", pos, part.key), part.text
            if part.annotations:
                yield ("content", pos, "annotations"), part.annotations
        for pos, si in enumerate(sorted(self.summary)):
            yield ("summary", pos, "text"), self.summary[si].text
        for path, frags in self.texts.items():
            yield path, frags.text

    def label(self) -> str:
        name = self.name
        return f"[{self.index}] {self.type}" + (f" {name}" if name else "")

    @property
    def hidden(self) -> bool:
        """Whether the item's own slot gives way to its parts' slots (it has parts)."""
        return bool(self.parts or self.summary)

    def own_text(self, built: dict | None = None) -> str:
        """The text the item's own slot shows: its streamed field, or a description made
        from its data (a web search's query, an image's size, a shell's commands)."""
        built = self.build() if built is None else built
        path = MAIN_FIELD.get(self.type)
        if path is not None:
            text = get_path(built, path)
            return text if isinstance(text, str) else ""
        if self.type == r.SHELL_CALL_ITEM:
            commands = get_path(built, ("action", "commands"))
            if isinstance(commands, list):
                return "\n".join(c for c in commands if isinstance(c, str))
        if self.type == r.IMAGE_GENERATION_CALL_ITEM:
            result = built.get("result")
            if isinstance(result, str) and result:
                return f"image: {len(result)} base64 characters"
            if self.partial_images:
                n, b64 = self.partial_images[-1]
                return f"partial image {n}: {len(b64)} base64 characters"
        if self.type == r.WEB_SEARCH_CALL_ITEM:
            query = get_path(built, ("action", "query"))
            if isinstance(query, str):
                return query
        return ""

    def part_text(self, n: int, summary: bool = False) -> str:
        """The text the slot of part `n` (a summary part's, `summary`) shows: what the
        deltas built, or the server's finished item's once it is done."""
        parts = self.parts_of(summary)
        part = parts[n]
        key = "text" if summary else (part.key or "text")
        if self.done is None:
            if part.key == key:
                return part.text
            text = part.build().get(key)
        else:
            text = get_path(self.done, (*self.part_path(n, summary)[1:], key))
        return text if isinstance(text, str) else ""

    def parts_of(self, summary: bool) -> dict[int, Part]:
        """The item's summary parts (`summary`), else its content parts."""
        return self.summary if summary else self.parts

    def part_address(self, n: int, summary: bool) -> tuple:
        """The slot address of part `n` (a summary part's, `summary`)."""
        return (self.index, "summary", n) if summary else (self.index, n)

    def part_path(self, n: int, summary: bool) -> tuple:
        """Where part `n` is in the item the server states: its position among the parts,
        inside ``output``."""
        pos = sorted(self.parts_of(summary)).index(n)
        return (self.index, "summary" if summary else "content", pos)

    def part_label(self, address: tuple) -> str:
        """The label of a part's slot (a summary part's names its item's type)."""
        if len(address) == 3:
            return f"[{self.index}.s{address[2]}] {self.summary[address[2]].type} of {self.type}"
        return f"[{self.index}.{address[1]}] {self.parts[address[1]].type}"

    def part_slots(self) -> Iterator[tuple[tuple, Part, bool]]:
        """Every part's slot address, the part, and whether it is a summary part."""
        oi = self.index
        for ci in sorted(self.parts):
            yield (oi, ci), self.parts[ci], False
        for si in sorted(self.summary):
            yield (oi, "summary", si), self.summary[si], True

    def slots(self) -> list[Slot]:
        """The item's slots: one per part and summary part, or the item's own when it has
        neither (`Accumulator.slots()` lists every item's)."""
        oi = self.index
        out = [Slot(address, part.type, self.part_label(address),
                    self.part_text(address[-1], summary), part.state)
               for address, part, summary in self.part_slots()]
        if out:
            return out
        text = self.own_text()
        if self.call is None:
            return [Slot((oi,), self.type, self.label(), text, self.state)]
        # A call's slot names the call as the call knows itself.
        call = self.call
        return [Slot((oi,), self.type, self.label(), text, self.state, name=call.name or None,
                     call_id=call.call_id, raw_input=text, input=input_so_far(call))]


def input_so_far(call: Any) -> Any:
    """A call's input as a slot shows it: its value once ended, the partial value while
    it forms, ``{}`` before any argument text."""
    if call.ended:
        return call.input
    if call.raw_length:
        value = call.view().value
        return {} if value is NOTHING else value
    return {}
