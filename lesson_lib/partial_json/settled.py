"""Settled paths as a live set view: kept by the parser at no cost per value.

Which paths can still change? Only the open ones: the containers not yet
closed, the string being read, a literal waiting for its delimiter. They
form one chain from the root down (a container's earlier children all
ended before the comma that followed them). So "settled" is "present in the
value and not on that chain", and the parser needs only a count (values
present) and the chain it keeps anyway (its stack), not a set that grows
with every value. Membership costs the path's length, `len` is O(1), and
iterating walks the value once (in document order).
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import Any, Protocol

from .values import NOTHING


class OpenChain(Protocol):
    """What a settled view reads from its parser (`PartialJSON` offers it)."""

    @property
    def value(self) -> Any: ...

    @property
    def open_path(self) -> tuple | None: ...

    @property
    def settled_count(self) -> int: ...


class SettledPaths(Set):
    """The paths of a `PartialJSON` whose values can no longer change.

    A read-only set of path tuples that follows the parser: it answers for
    the parser's current state, not for the moment it was obtained. Keep
    ``set(parser.settled)`` for a snapshot. Do not feed while iterating.
    """

    __slots__ = ("_parser",)

    def __init__(self, parser: OpenChain) -> None:
        self._parser = parser

    def __len__(self) -> int:
        return self._parser.settled_count

    def __contains__(self, path: object) -> bool:
        if not isinstance(path, tuple):
            return False
        node = self._parser.value
        if node is NOTHING:
            return False
        for key in path:
            if type(node) is dict:
                if not isinstance(key, str) or key not in node:
                    return False
                node = node[key]
            elif type(node) is list:
                if not isinstance(key, int) or not 0 <= key < len(node):
                    return False
                node = node[key]
            else:
                return False
        open_path = self._parser.open_path
        return open_path is None or path != open_path[:len(path)]

    def __iter__(self) -> Iterator[tuple]:
        root = self._parser.value
        if root is NOTHING:
            return
        open_path = self._parser.open_path
        # (path, node, on the open chain?)
        todo: list[tuple[tuple, Any, bool]] = [((), root, open_path is not None)]
        while todo:
            path, node, is_open = todo.pop()
            if not is_open:
                yield path
            depth = len(path)
            next_key = open_path[depth] if is_open and depth < len(open_path) else None
            if type(node) is dict:
                children = list(node.items())
            elif type(node) is list:
                children = list(enumerate(node))
            else:
                continue
            for key, child in reversed(children):
                todo.append((path + (key,), child, is_open and key == next_key
                             and type(key) is type(next_key)))

    def __repr__(self) -> str:
        # Document order, so that a notebook prints the same text every run.
        return "SettledPaths({" + ", ".join(map(repr, self)) + "})" if len(self) else "SettledPaths()"
