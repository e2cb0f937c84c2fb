"""Paths in a partial value: the deepest one still open, which are present, which settled.

A path is a tuple of object names and array indices (``()`` for the whole
value), as in `lesson_lib.partial_json`. Only the containers on one chain
from the root can still be open, so "settled" is "present and not on the
open chain": these helpers need the value and that chain's end, no set.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..partial_json import NOTHING


def open_path_of(value: Any, settled: Any) -> tuple | None:
    """The deepest path still open in a partial value, given its settled paths.

    Only the last child of an open container can itself be open, so the
    open paths are a prefix of the chain of last children; a binary search
    along that chain finds where it ends. None when the whole value is
    settled or none has begun.
    """
    if value is NOTHING or () in settled:
        return None
    chain: list = []                   # the keys of the last-children chain
    node = value
    while True:
        if type(node) is dict and node:
            key: Any = next(reversed(node))
        elif type(node) is list and node:
            key = len(node) - 1
        else:
            break
        chain.append(key)
        node = node[key]
    low, high = 0, len(chain)          # chain[:low] is open; chain[:high + 1] is settled
    while low < high:
        middle = (low + high + 1) // 2
        if tuple(chain[:middle]) in settled:
            high = middle - 1
        else:
            low = middle
    return tuple(chain[:low])


def copy_open_chain(value: Any, open_path: tuple | None) -> Any:
    """`value` with every container on the open chain copied (one level each)."""
    if open_path is None or type(value) not in (dict, list):
        return value
    root = copy_one = dict(value) if type(value) is dict else list(value)
    for key in open_path:
        child = copy_one[key]
        if type(child) is dict:
            child = dict(child)
        elif type(child) is list:
            child = list(child)
        else:
            break
        copy_one[key] = child
        copy_one = child
    return root


def is_present(value: Any, path: tuple) -> bool:
    """Whether `path` names a value present in `value` (NOTHING: none)."""
    if value is NOTHING:
        return False
    node = value
    for key in path:
        if type(node) is dict and type(key) is str and key in node:
            node = node[key]
        elif type(node) is list and type(key) is int and 0 <= key < len(node):
            node = node[key]
        else:
            return False
    return True


def settled_paths(value: Any, open_path: tuple | None) -> Iterator[tuple]:
    """Every path of `value` (document order) not on the open chain."""
    if value is NOTHING:
        return
    todo: list[tuple[tuple, Any]] = [((), value)]
    while todo:
        path, node = todo.pop()
        if open_path is None or path != open_path[:len(path)]:
            yield path
        if type(node) is dict:
            children: Iterable = node.items()
        elif type(node) is list:
            children = enumerate(node)
        else:
            continue
        todo.extend(((*path, k), v) for k, v in reversed(list(children)))
