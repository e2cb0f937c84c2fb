"""Path-addressed arguments (Gemini's ``partialArgs``) written out as JSON text.

The other wires stream a call's arguments as JSON text; Gemini streams them as
values at JSON paths, each with the vendor's own "this may go on" flag::

    {"jsonPath": "$.location", "stringValue": "Bos", "willContinue": true}
    {"jsonPath": "$.location", "stringValue": "ton", "willContinue": true}
    {"jsonPath": "$.location", "stringValue": ""}         # the string ends
    {"jsonPath": "$.days", "numberValue": 3}               # a whole number

`PathArguments` turns each entry into the JSON text it stands for
(``{"location":"Bos``, ``ton``, ``"``, ``,"days":3``) and `close` writes the
closing brackets, so the call goes through lesson 3's parser like any other.
It also keeps the paths the *vendor* says are final (`settled`): a string when
its entry does not continue, any other value as it arrives, a container when
the paths move out of it, the root at the close.

The text can only grow forward, so the paths must too: a path that goes back
into a value already written (a name given twice, an earlier array index) or
skips an index is refused (`PathError`), the text unchanged.

A path is read to at most `MAX_DEPTH` steps, the course's depth rule for a
payload (`lesson_lib.sse.strict_json`): deeper is refused (`PathTooDeep`),
never a crash. Memory stays linear in the entries at any depth: an open
container keeps its own step and a link to its parent, not its whole path,
and a settled container's path is made into a tuple only when read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..sse.strict_json import MAX_DEPTH

Path = tuple[str | int, ...]

_STEP = re.compile(r"""\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")
_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")


class PathError(ValueError):
    """An entry that cannot extend the text: its path, or its value, does not fit."""


class PathTooDeep(PathError):
    """A ``jsonPath`` with more than `MAX_DEPTH` steps: deeper than the course reads."""


def parse_path(text: Any) -> Path:
    """A ``jsonPath`` (``$.a.b[0]['c d']``) as a tuple of names and indices."""
    if not isinstance(text, str) or not text.startswith("$"):
        raise PathError(f"jsonPath {_start(text)} does not start at the root ($)")
    steps: list[str | int] = []
    at = 1
    while at < len(text):
        found = _STEP.match(text, at)
        if found is None:
            raise PathError(f"jsonPath {_start(text)} cannot be read at character {at}")
        if len(steps) == MAX_DEPTH:
            raise PathTooDeep(f"jsonPath {_start(text)} nests deeper than {MAX_DEPTH} levels, "
                              "the deepest a payload is read")
        name, index, single, double = found.groups()
        if index is not None:
            steps.append(int(index))
        elif double is not None:
            steps.append(_json_string(double, text))
        else:
            steps.append(name if single is None else re.sub(r"\\(.)", r"\1", single))
        at = found.end()
    return tuple(steps)


def _json_string(quoted: str, path: str) -> str:
    try:
        return json.loads(f'"{quoted}"')
    except ValueError:
        raise PathError(f"jsonPath {_start(path)} has a name that is not a JSON string"
                        ) from None


def _start(text: Any, limit: int = 80) -> str:
    """`text` quoted for a message, cut to `limit` characters (a path may be 200 KB)."""
    shown = repr(text)
    return shown if len(shown) <= limit else shown[:limit - 1] + "…"


class _Node:
    """A path as a link to its parent's: shared, so N nested containers cost N nodes."""

    __slots__ = ("parent", "step", "depth")

    def __init__(self, parent: _Node | None, step: str | int | None) -> None:
        self.parent, self.step = parent, step
        self.depth = 0 if parent is None else parent.depth + 1

    def path(self) -> Path:
        steps: list[str | int] = []
        node: _Node | None = self
        while node is not None and node.parent is not None:
            steps.append(node.step)     # type: ignore[arg-type]
            node = node.parent
        return tuple(reversed(steps))


_ROOT = _Node(None, None)


class SettledPaths(Sequence):
    """The settled paths in the order they settled; each made into a tuple when read."""

    def __init__(self, items: list[Path | _Node]) -> None:
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):  # type: ignore[override]
        if isinstance(index, slice):
            return [_as_path(item) for item in self._items[index]]
        return _as_path(self._items[index])

    def __iter__(self) -> Iterator[Path]:
        return (_as_path(item) for item in self._items)

    def __repr__(self) -> str:
        return f"SettledPaths({len(self)} paths)"


def _as_path(item: Path | _Node) -> Path:
    return item if type(item) is tuple else item.path()   # type: ignore[union-attr]


def entry_value(entry: dict) -> tuple[str, Any]:
    """The kind and value of one ``partialArgs`` entry (exactly one value key)."""
    kinds = [key for key in _VALUE_KEYS if key in entry]
    if len(kinds) != 1:
        raise PathError(f"an argument entry needs exactly one of {', '.join(_VALUE_KEYS)}; "
                        f"this one has {len(kinds)}")
    kind, value = kinds[0], entry[kinds[0]]
    if kind == "stringValue" and not isinstance(value, str):
        raise PathError("stringValue is not a string")
    if kind == "numberValue" and (type(value) not in (int, float)):
        raise PathError("numberValue is not a number")
    if kind == "boolValue" and type(value) is not bool:
        raise PathError("boolValue is not true or false")
    return kind, value


@dataclass
class _Frame:
    node: _Node
    is_array: bool
    names: set = field(default_factory=set)
    count: int = 0

    def accepts(self, step: str | int) -> str | None:
        """Why `step` cannot be this container's next member (None when it can)."""
        if self.is_array:
            if type(step) is not int:
                return f"name {step!r} inside an array"
            if step < self.count:
                return f"index {step} goes back (the array already has {self.count})"
            if step > self.count:
                return f"index {step} skips ahead (the array has {self.count})"
            return None
        if type(step) is int:
            return f"index {step} inside an object"
        if step in self.names:
            return f"name {step!r} was already written"
        return None

    def member(self, step: str | int) -> str:
        """The text that opens member `step`: a comma after the first, a name in an object."""
        comma = "," if self.count else ""
        self.count += 1
        if self.is_array:
            return comma
        self.names.add(step)
        return comma + json.dumps(step, ensure_ascii=False) + ":"


class PathArguments:
    """One call's ``partialArgs`` entries, written out as JSON text (see the module)."""

    def __init__(self) -> None:
        self._stack: list[_Frame] = []
        self._open_string: Path | None = None
        self._settled: list[Path | _Node] = []
        self.closed = False
        self.unterminated: Path | None = None   # a string the entries never ended

    @property
    def settled(self) -> SettledPaths:
        """The paths the vendor made final, in that order (a read-only sequence)."""
        return SettledPaths(self._settled)

    def add(self, entry: Any) -> str:
        """The JSON text one entry adds (``PathError`` when it does not fit: nothing added)."""
        if self.closed:
            raise PathError("an argument entry after the call closed")
        if not isinstance(entry, dict):
            raise PathError("an argument entry is not an object")
        path = parse_path(entry.get("jsonPath"))
        kind, value = entry_value(entry)
        goes_on = entry.get("willContinue") is True
        if self._open_string is not None:
            if path == self._open_string and kind == "stringValue":
                return self._string_text(path, value, goes_on, opening=False)
            raise PathError(f"{_show(path)} while the string at {_show(self._open_string)} "
                            "is still open")
        if not path:
            raise PathError("a value for the root ($): arguments are an object")
        text = self._move_to(path)
        if kind == "stringValue":
            return text + self._string_text(path, value, goes_on, opening=True)
        literal = "null" if kind == "nullValue" else json.dumps(value)
        self._settled.append(path)
        return text + literal

    def close(self) -> str:
        """The text that ends the arguments: an unended string's quote, every bracket."""
        if self.closed:
            return ""
        self.closed = True
        text = ""
        if self._open_string is not None:
            self.unterminated = self._open_string
            self._settled.append(self._open_string)
            self._open_string = None
            text = '"'
        while self._stack:
            frame = self._stack.pop()
            text += "]" if frame.is_array else "}"
            self._settled.append(frame.node)
        return text

    # -- inside ------------------------------------------------------------------

    def _string_text(self, path: Path, value: str, goes_on: bool, *, opening: bool) -> str:
        text = ('"' if opening else "") + json.dumps(value, ensure_ascii=False)[1:-1]
        if goes_on:
            self._open_string = path
        else:
            self._open_string = None
            self._settled.append(path)
            text += '"'
        return text

    def _move_to(self, path: Path) -> str:
        """Close the containers the path leaves, open the ones it enters, and write the
        member that holds its value; checked before anything is written."""
        if not self._stack:
            self._stack.append(_Frame(_ROOT, False))
            text = "{"
        else:
            text = ""
        # The deepest open container the path is inside: frame k's path is the steps of
        # frames 1..k, so one walk down the shared prefix finds it.
        keep = 0
        while (keep + 1 < len(self._stack) and keep + 1 < len(path)
               and _same_step(self._stack[keep + 1].node.step, path[keep])):
            keep += 1
        frame = self._stack[keep]
        why = frame.accepts(path[keep])
        if why is not None:
            if text:
                self._stack.pop()       # nothing was written: the first "{" waits too
            raise PathError(f"{_show(path)}: {why}")
        while len(self._stack) > keep + 1:
            closing = self._stack.pop()
            text += "]" if closing.is_array else "}"
            self._settled.append(closing.node)
        for depth in range(keep, len(path) - 1):
            step = path[depth]
            top = self._stack[-1]
            inner = _Frame(_Node(top.node, step), type(path[depth + 1]) is int)
            text += top.member(step) + ("[" if inner.is_array else "{")
            self._stack.append(inner)
        return text + self._stack[-1].member(path[-1])


def _same_step(a: str | int | None, b: str | int) -> bool:
    return type(a) is type(b) and a == b


def _show(path: Path) -> str:
    return "$" + "".join(f"[{s}]" if type(s) is int else f".{s}" for s in path)
