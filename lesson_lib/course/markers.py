"""Generated text inside a hand-written page: what lies between two markers is rendered anew.

The README's table of wires and path list and INSTRUCTORS.md's recipes are written from the
registry by ``make cheat-sheet`` between an HTML comment that opens the part and one that
closes it; everything outside them is the page's own prose.
"""

from __future__ import annotations


def replace_between(text: str, start: str, end: str, rendered: str) -> str:
    """`text` with its part from marker `start` to marker `end` replaced by `rendered` (which
    holds both markers); ``ValueError`` naming them when `text` lacks them."""
    first, last = text.find(start), text.find(end)
    if first < 0 or last < first:
        raise ValueError(f"the markers {start!r} and {end!r} are not in the text")
    return text[:first] + rendered + text[last + len(end):]
