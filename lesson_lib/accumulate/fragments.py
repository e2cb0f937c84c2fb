"""Text that arrives in fragments: an append-only log, joined only when read.

`Fragments` is where an accumulator keeps a text (or a raw argument text)
while deltas arrive: appending costs O(1), a read joins what arrived since
the last read. A hot path may hold the live list (`parts`) and append to it
directly.

Checkpoints share the log. The log is append-only, so the state after the
first n fragments is "the log's first n entries", whatever is appended
later. A checkpoint copy (`lesson_lib.tool_calls.checkpoints`, which a `History` makes) gives each
`Fragments` a `Prefix` of its log (the log and a length) instead of a copy
of the list: O(1), however long the text. Once its log has been shared, a
`Fragments` no longer joins it in place (that would rewrite the prefixes);
it keeps the joined text beside the log instead. A checkpoint is read-only:
an ordinary `copy.deepcopy` of it makes an accumulator that can be fed again
(each text joined once into a fresh log).
"""

from __future__ import annotations

import copy
from typing import Any

from ..tool_calls.checkpoints import is_checkpoint_copy


class Log(list):
    """The live list of a `Fragments`: append-only, marked once a checkpoint shares it."""

    __slots__ = ("shared",)

    def __init__(self, items: Any = ()) -> None:
        super().__init__(items)
        self.shared = False

    def __deepcopy__(self, memo: dict) -> Log | Prefix:
        if is_checkpoint_copy(memo):
            self.shared = True
            return Prefix(self, len(self))
        return Log(self)


class Prefix:
    """The first `n` entries of a shared `Log`: what a checkpoint holds instead of a list."""

    __slots__ = ("log", "n")

    def __init__(self, log: Log, n: int) -> None:
        self.log, self.n = log, n

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        return iter(self.log[:self.n])

    def append(self, fragment: str) -> None:
        raise TypeError("a checkpoint is read-only: feed a copy.deepcopy of it")

    def __deepcopy__(self, memo: dict) -> Log | Prefix:
        if is_checkpoint_copy(memo):
            return self
        return Log(["".join(self.log[:self.n])] if self.n else [])


class Fragments:
    """An append-only run of text fragments, joined only when read.

    Reading `text` joins what arrived since the last read onto the joined
    text, so appending costs O(1) and a read costs O(text).
    """

    __slots__ = ("_parts", "_joined", "_count")

    def __init__(self, first: str = "") -> None:
        self._parts: Log | Prefix = Log([first] if first else [])
        self._joined = ""    # the first `_count` fragments, joined (once the log is shared)
        self._count = 0

    def append(self, fragment: str) -> None:
        """Add one fragment at the end."""
        self._parts.append(fragment)

    @property
    def text(self) -> str:
        """Everything so far, as one string."""
        parts = self._parts
        if type(parts) is Log and not parts.shared:
            if len(parts) > 1:
                parts[:] = ["".join(parts)]
            return parts[0] if parts else ""
        log = parts.log if type(parts) is Prefix else parts
        n = len(parts)
        if self._count < n:
            self._joined = "".join([self._joined, *log[self._count:n]])
            self._count = n
        return self._joined

    def __len__(self) -> int:
        return len(self.text)

    def __bool__(self) -> bool:
        return any(self._parts)

    @property
    def parts(self) -> Log:
        """The live list of fragments: appending to it is `append` (a hot path may
        hold it). It keeps its identity: reading `text` joins it in place."""
        parts = self._parts
        if type(parts) is Prefix:
            raise TypeError("a checkpoint is read-only: feed a copy.deepcopy of it")
        return parts

    def __deepcopy__(self, memo: dict) -> Fragments:
        twin = Fragments.__new__(Fragments)
        # Through the memo, so that a copied holder of `parts` gets the twin's list
        # (or, in a checkpoint, the same `Prefix`), whichever is copied first.
        twin._parts = copy.deepcopy(self._parts, memo)
        if type(twin._parts) is Prefix:     # the joined text so far is a prefix too
            twin._joined, twin._count = self._joined, self._count
        else:
            twin._joined, twin._count = "", 0
        return twin
