"""What a wire's reader of event rows writes with: a cell's preview text, an error's words.

Lesson 1's table (`event_rows`) reads each event into a row; a wire whose
module carries its own reader (``read_row``) writes its cells with these, as
the table's readers of the first wires do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PREVIEW_CHARS = 40

_VISIBLE = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def preview_text(text: str, limit: int = PREVIEW_CHARS) -> str:
    """A one-line preview: control characters made visible, cut to `limit` chars with '…'.

    This is plain text for a table cell; HTML renderers escape it again.
    """
    out = []
    for ch in text:
        if ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
        if len(out) > limit:
            break
    visible = "".join(out)
    return visible if len(visible) <= limit else visible[: limit - 1] + "…"


def error_text(read_error: Callable[[str | None, Any], Any], kind: str | None, p: dict) -> str:
    """``name: message`` of an in-band error, read the way its wire writes it (its module's
    `read_error`): the name is the error object's type (else code), or the code of
    ``response.error`` or of a flat payload."""
    err = read_error(kind, p)
    if err is None:
        return ""
    name = (err.type or err.code) if err.where == "error" else (err.code or err.type)
    return ": ".join(x for x in (name, err.message) if x)


def as_dict(value: Any) -> dict:
    """`value` where it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """`value` where it is an int (not a bool), else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
