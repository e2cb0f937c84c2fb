"""The small values the partial-JSON parser hands out: changes, paths, errors, NOTHING.

A path names a place in the value: a tuple of object names (str) and array
indices (int), ``()`` for the whole value. Inside the parser a place is a
pair ``(parent_place, key)`` with ``()`` for the root, so a child costs one
pair however deep it sits, and the tuple is only built when someone reads
``Change.path``. That keeps a fragment's cost proportional to its length,
not to length times depth, even 10,000 levels down.
"""

from __future__ import annotations

from typing import Any

__all__ = ["NOTHING", "Change", "PartialJSONError", "path_of"]


class _Nothing:
    """The type of NOTHING: no value has begun yet (JSON null is None)."""

    __slots__ = ()
    _instance: _Nothing | None = None

    def __new__(cls) -> _Nothing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NOTHING"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "NOTHING"


NOTHING = _Nothing()


def path_of(place: tuple) -> tuple:
    """The path (a tuple of keys) of an internal place ``(parent_place, key)``."""
    keys = []
    while place:
        place, key = place
        keys.append(key)
    keys.reverse()
    return tuple(keys)


class Change:
    """One thing a fragment changed: where (`path`), what (`op`) and with what (`value`).

    ``op`` is one of:

    - ``"set"``: a value began at `path`. `value` is its first state: ``""``
      for a string, a new empty ``{}`` or ``[]`` for a container (not the
      parser's live one), the value itself for a number, true, false or null.
    - ``"append"``: text was added to the string at `path`; `value` is the
      decoded text (escapes resolved).
    - ``"settle"``: the value at `path` can no longer change; `value` is its
      final value (for a container, the parser's own object, which nothing
      will touch again).

    It behaves like a frozen dataclass with the fields path, op and value:
    compared, hashed and printed by them, and read-only.
    """

    __slots__ = ("_place", "_path", "_op", "_value")

    def __init__(self, path: tuple, op: str, value: Any = None) -> None:
        self._place = None
        self._path = tuple(path)
        self._op = op
        self._value = value

    @property
    def path(self) -> tuple:
        """Where: object names and array indices from the root, ``()`` for the root."""
        path = self._path
        if path is None:
            path = self._path = path_of(self._place)
        return path

    @property
    def op(self) -> str:
        """What happened: ``"set"``, ``"append"`` or ``"settle"``."""
        return self._op

    @property
    def value(self) -> Any:
        """With what: the first value, the appended text, or the final value."""
        return self._value

    def _fields(self) -> tuple:
        return (self.path, self._op, self._value)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Change):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Change(path={self.path!r}, op={self._op!r}, value={self._value!r})"

    def __reduce__(self) -> tuple:
        return (Change, self._fields())


_new = object.__new__


def make_change(place: tuple, op: str, value: Any) -> Change:
    """A Change at an internal place; its path tuple is built when first read."""
    change = _new(Change)
    change._place = place
    change._path = None
    change._op = op
    change._value = value
    return change


class PartialJSONError(ValueError):
    """The text can never become the JSON value it was meant to be.

    `position` is the 0-based offset, in characters of all the text fed so
    far, of the first character that made it impossible (for text that simply
    stopped, the end). `message` says what was expected there. `changes` holds
    what the failing fragment changed before that character (the value and
    the settled paths include them).
    """

    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} (at character {position})")
        self.message = message
        self.position = position
        self.changes: list[Change] = []

    def __reduce__(self):
        # Rebuild from (message, position) so that copy and pickle work.
        return (PartialJSONError, (self.message, self.position), {"changes": self.changes})

    def again(self) -> PartialJSONError:
        """The same error, raised anew for a parser that already failed."""
        return PartialJSONError(f"this parser already failed: {self.message}", self.position)
