"""A JSON value as a short, escaped line: what a tool's field or result looks like drawn."""

from __future__ import annotations

import json
from typing import Any

PREVIEW = 300      # characters of a value drawn; the rest is counted, not drawn


def preview(value: Any, limit: int = PREVIEW) -> str:
    """`value` as JSON text, cut to `limit` characters with the count of what was left out."""
    if isinstance(value, str):
        text = json.dumps(value[:limit + 1], ensure_ascii=False)
        if len(value) > limit:
            return json.dumps(value[:limit], ensure_ascii=False)[:-1] + f"…\" ({len(value)} chars)"
        return text
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        text = "(a value nested too deep to draw)"
    if len(text) > limit:
        return text[:limit] + f"… ({len(text)} chars)"
    return text


def growing(text: str, limit: int = PREVIEW) -> str:
    """The end of a string still arriving, as JSON text without its closing quote."""
    shown = text[-limit:]
    lead = "…" if len(text) > limit else ""
    return '"' + lead + json.dumps(shown, ensure_ascii=False)[1:-1]
