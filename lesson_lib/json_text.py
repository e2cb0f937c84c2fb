"""JSON text for the CLI's output: always valid JSON, always printable.

`json.dumps` alone fails three ways on values a stream can produce: it
recurses (a tool argument nested 1,000 levels deep raises
`RecursionError`), it writes ``NaN`` and ``Infinity`` (not JSON), and it
passes lone UTF-16 surrogates through (a pair split across two deltas
arrives as two lone halves, which no UTF-8 stdout can encode).

`dumps` keeps `json.dumps`'s output exactly where that works and falls back
to an explicit-stack writer of the same layout otherwise; a float that is
not finite is written as ``null``. In the text, the two halves of a
surrogate pair are joined into their character and a lone half is written
as its ``\\uXXXX`` escape, which is valid JSON and prints anywhere.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")


def dumps(value: Any, indent: int = 1) -> str:
    """`value` as JSON text (`indent` spaces per level, UTF-8 characters kept)."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
    except (RecursionError, ValueError):
        text = "".join(_pieces(value, indent))
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


def _pieces(value: Any, indent: int):
    """The layout of ``json.dumps(indent=...)``, with a stack instead of recursion."""
    # Each stack entry: (iterator over the container's items, is_dict, depth, first?).
    stack: list[list[Any]] = []
    pending: Any = value
    have_pending = True
    while True:
        if have_pending:
            have_pending = False
            if isinstance(pending, dict | list | tuple) and len(pending) > 0:
                is_dict = isinstance(pending, dict)
                yield "{" if is_dict else "["
                items = iter(pending.items()) if is_dict else iter(pending)
                stack.append([items, is_dict, True])
            elif isinstance(pending, dict):
                yield "{}"
            elif isinstance(pending, list | tuple):
                yield "[]"
            else:
                yield _scalar(pending)
        if not stack:
            return
        frame = stack[-1]
        items, is_dict, first = frame
        pad = "\n" + " " * (indent * len(stack))
        try:
            item = next(items)
        except StopIteration:
            stack.pop()
            yield "\n" + " " * (indent * len(stack)) + ("}" if is_dict else "]")
            continue
        yield pad if first else "," + pad
        frame[2] = False
        if is_dict:
            name, pending = item
            yield json.dumps(name if isinstance(name, str) else str(name),
                             ensure_ascii=False) + ": "
        else:
            pending = item
        have_pending = True
