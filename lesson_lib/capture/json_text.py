"""JSON text for the CLI's output: always valid JSON, always printable.

`json.dumps` alone fails three ways on values a stream can produce: it
recurses (a tool argument nested 1,000 levels deep raises
`RecursionError`), it writes ``NaN`` and ``Infinity`` (not JSON), and it
passes lone UTF-16 surrogates through (a pair split across two deltas
arrives as two lone halves, which no UTF-8 stdout can encode).

Indentation is itself a fourth: one line per value, each indented by its
depth, makes the text grow with the square of the nesting (a 20 KB tool
input nested 10,000 deep would print 100 MB). So only the first
`INDENT_DEPTH` levels are indented; a container deeper than that is written
on one line, and the text stays linear in the value at any depth.

`dumps` keeps `json.dumps`'s output exactly where that works (nothing
deeper than `INDENT_DEPTH`) and uses an explicit-stack writer of the same
layout otherwise; a float that is not finite is written as ``null``.
`one_line` is the same text without indentation, for a line of a summary. In the text, the two halves of a
surrogate pair are joined into their character and a lone half is written
as its ``\\uXXXX`` escape, which is valid JSON and prints anywhere.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
INDENT_DEPTH = 16     # levels laid out one value per line; deeper containers take one line


def dumps(value: Any, indent: int = 1) -> str:
    """`value` as JSON text (`indent` spaces per level down to `INDENT_DEPTH`, one line
    below it; UTF-8 characters kept): linear in the value at any depth."""
    text = None
    if _depth_at_most(value, INDENT_DEPTH):
        try:
            text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
        except (ValueError, TypeError):     # not finite, or not JSON: written by hand
            pass
    if text is None:
        text = "".join(_pieces(value, indent, INDENT_DEPTH))
    return printable(text)


def one_line(value: Any) -> str:
    """`value` as JSON text on one line, at any depth (what is not JSON becomes its
    ``str``)."""
    text = None
    if _depth_at_most(value, 200):
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False, default=str)
        except ValueError:
            pass
    if text is None:
        text = "".join(_pieces(value, 0, 0))
    return printable(text)


def printable(text: str) -> str:
    """`text` with surrogate pairs joined and lone surrogates escaped as ``\\uXXXX``."""
    if _SURROGATE.search(text) is None:
        return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", joined)


def _scalar(value: Any) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "null"
    try:
        return json.dumps(value, ensure_ascii=False)
    except TypeError:
        return json.dumps(str(value), ensure_ascii=False)


def _depth_at_most(value: Any, limit: int) -> bool:
    """Whether `value` nests no deeper than `limit` containers (stops at the first deeper)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, dict):
            item = item.values()
        elif not isinstance(item, list | tuple):
            continue
        if depth > limit:
            return False
        todo.extend((child, depth + 1) for child in item
                    if isinstance(child, dict | list | tuple))
    return True


def _pieces(value: Any, indent: int, indent_depth: int):
    """The layout of ``json.dumps(indent=...)`` down to `indent_depth` levels and of
    ``json.dumps()`` (one line) below, with a stack instead of recursion."""
    # Each stack entry: [iterator over the container's items, is_dict, first?, id].
    stack: list[list[Any]] = []
    open_ids: set[int] = set()
    pending: Any = value
    have_pending = True
    while True:
        if have_pending:
            have_pending = False
            if isinstance(pending, dict | list | tuple) and len(pending) > 0:
                if id(pending) in open_ids:
                    raise ValueError("a circular value has no JSON text")
                is_dict = isinstance(pending, dict)
                yield "{" if is_dict else "["
                items = iter(pending.items()) if is_dict else iter(pending)
                stack.append([items, is_dict, True, id(pending)])
                open_ids.add(id(pending))
            elif isinstance(pending, dict):
                yield "{}"
            elif isinstance(pending, list | tuple):
                yield "[]"
            else:
                yield _scalar(pending)
        if not stack:
            return
        frame = stack[-1]
        items, is_dict, first, ident = frame
        laid_out = len(stack) <= indent_depth
        try:
            item = next(items)
        except StopIteration:
            stack.pop()
            open_ids.discard(ident)
            close = "}" if is_dict else "]"
            yield "\n" + " " * (indent * len(stack)) + close if laid_out else close
            continue
        if laid_out:
            pad = "\n" + " " * (indent * len(stack))
            yield pad if first else "," + pad
        elif not first:
            yield ", "
        frame[2] = False
        if is_dict:
            name, pending = item
            yield json.dumps(name if isinstance(name, str) else str(name),
                             ensure_ascii=False) + ": "
        else:
            pending = item
        have_pending = True
