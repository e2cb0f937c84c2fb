"""Settled paths as a live set view: kept by the parser at no cost per value.

Which paths can still change? Only the open ones: the containers not yet
closed, the string being read, a literal waiting for its delimiter. They
form one chain from the root down (a container's earlier children all
ended before the comma that followed them). So "settled" is "present in the
value and not on that chain", and the parser needs only a count (values
present) and the chain it keeps anyway (its stack), not a set that grows
with every value. Membership costs the path's length, `len` is O(1), and
iterating walks the value once (in document order), building each path:
time proportional to the total length of the paths, which for a value
nested N deep is N squared over 2 (so iterate only when you need the paths).

A still value (a tool call's view, an ended call) gets the same view over a
`FixedChain`: its value, its open path, and a count taken once (by the
parser when it has one, else by one walk of the value, on the first `len`).
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


class FixedChain:
    """A value that no longer changes and its open path, read as an `OpenChain`.

    `count` is how many of its paths are settled, when the maker knows it (a
    parser's `settled_count`); otherwise it is counted on first use, walking
    the value once without building paths.
    """

    __slots__ = ("value", "open_path", "_count")

    def __init__(self, value: Any, open_path: tuple | None, count: int | None = None) -> None:
        self.value, self.open_path, self._count = value, open_path, count

    @property
    def settled_count(self) -> int:
        """How many paths of `value` are settled (counted once)."""
        if self._count is None:
            self._count = _count_settled(self.value, self.open_path)
        return self._count


def _count_settled(value: Any, open_path: tuple | None) -> int:
    if value is NOTHING:
        return 0
    nodes, todo = 0, [value]
    while todo:
        node = todo.pop()
        nodes += 1
        if type(node) is dict:
            todo.extend(node.values())
        elif type(node) is list:
            todo.extend(node)
    if open_path is None:
        return nodes
    # The open chain: the root and each step of `open_path` that is present.
    node, open_nodes = value, 1
    for key in open_path:
        if type(node) is dict and type(key) is str and key in node:
            node = node[key]
        elif type(node) is list and type(key) is int and 0 <= key < len(node):
            node = node[key]
        else:
            break
        open_nodes += 1
    return nodes - open_nodes


class SettledPaths(Set):
    """The paths of a `PartialJSON` whose values can no longer change.

    A read-only set of path tuples that follows the parser: it answers for
    the parser's current state, not for the moment it was obtained. Keep
    ``set(parser.settled)`` for a snapshot. Do not feed while iterating.
    """

    __slots__ = ("_parser",)

    def __init__(self, parser: OpenChain) -> None:
        self._parser = parser

    @classmethod
    def _from_iterable(cls, paths: Any) -> frozenset:
        # What `|`, `&`, `-` and `^` build: a plain snapshot, not another view.
        return frozenset(paths)

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
