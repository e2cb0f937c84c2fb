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
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

Path = tuple[str | int, ...]

_STEP = re.compile(r"""\.([^.\[\]]+)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\]""")
_VALUE_KEYS = ("stringValue", "numberValue", "boolValue", "nullValue")


class PathError(ValueError):
    """An entry that cannot extend the text: its path, or its value, does not fit."""


def parse_path(text: Any) -> Path:
    """A ``jsonPath`` (``$.a.b[0]['c d']``) as a tuple of names and indices."""
    if not isinstance(text, str) or not text.startswith("$"):
        raise PathError(f"jsonPath {text!r} does not start at the root ($)")
    steps: list[str | int] = []
    at = 1
    while at < len(text):
        found = _STEP.match(text, at)
        if found is None:
            raise PathError(f"jsonPath {text!r} cannot be read at character {at}")
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
        raise PathError(f"jsonPath {path!r} has a name that is not a JSON string") from None


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
    path: Path
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
        self.settled: list[Path] = []       # in the order the vendor made them final
        self.closed = False
        self.unterminated: Path | None = None   # a string the entries never ended

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
        self.settled.append(path)
        return text + literal

    def close(self) -> str:
        """The text that ends the arguments: an unended string's quote, every bracket."""
        if self.closed:
            return ""
        self.closed = True
        text = ""
        if self._open_string is not None:
            self.unterminated = self._open_string
            self.settled.append(self._open_string)
            self._open_string = None
            text = '"'
        while self._stack:
            frame = self._stack.pop()
            text += "]" if frame.is_array else "}"
            self.settled.append(frame.path)
        return text

    # -- inside ------------------------------------------------------------------

    def _string_text(self, path: Path, value: str, goes_on: bool, *, opening: bool) -> str:
        text = ('"' if opening else "") + json.dumps(value, ensure_ascii=False)[1:-1]
        if goes_on:
            self._open_string = path
        else:
            self._open_string = None
            self.settled.append(path)
            text += '"'
        return text

    def _move_to(self, path: Path) -> str:
        """Close the containers the path leaves, open the ones it enters, and write the
        member that holds its value; checked before anything is written."""
        if not self._stack:
            self._stack.append(_Frame((), False))
            text = "{"
        else:
            text = ""
        keep = max(k for k, frame in enumerate(self._stack)
                   if path[:len(frame.path)] == frame.path and len(frame.path) < len(path))
        frame = self._stack[keep]
        why = frame.accepts(path[len(frame.path)])
        if why is not None:
            if text:
                self._stack.pop()       # nothing was written: the first "{" waits too
            raise PathError(f"{_show(path)}: {why}")
        while len(self._stack) > keep + 1:
            closing = self._stack.pop()
            text += "]" if closing.is_array else "}"
            self.settled.append(closing.path)
        for depth in range(len(frame.path), len(path) - 1):
            step = path[depth]
            top = self._stack[-1]
            inner = _Frame(path[:depth + 1], type(path[depth + 1]) is int)
            text += top.member(step) + ("[" if inner.is_array else "{")
            self._stack.append(inner)
        return text + self._stack[-1].member(path[-1])


def _show(path: Path) -> str:
    return "$" + "".join(f"[{s}]" if type(s) is int else f".{s}" for s in path)
