"""The README's table of wires, rendered from the registry (`lesson_lib.wires.ENTRIES`).

One row per registered wire: its title, its name in the course, the path a client posts
to, its framing and content type, and the suffix of its capture files. ``make cheat-sheet``
writes it into ``README.md`` between the two markers, and a test keeps the committed README
equal to what the registry renders, so a new wire appears on the page with its entry.
"""

from __future__ import annotations

from .. import wires
from .markers import replace_between

START = "<!-- wires: generated from lesson_lib.wires.ENTRIES by `make cheat-sheet` -->"
END = "<!-- wires: end -->"


def markdown() -> str:
    """The table of every registered wire, as Markdown between the markers."""
    lines = [START, "| Wire | In the course | Path | Framing | Capture files |",
             "|---|---|---|---|---|"]
    for entry in wires.ENTRIES.values():
        lines.append(f"| {entry.title} | `{entry.wire}` | `{entry.method} {entry.route}` | "
                     f"{entry.framing} (`{entry.content_type}`) | `captures/{entry.wire}/"
                     f"*{entry.suffix}` |")
    return "\n".join([*lines, END])


def replace_in(text: str) -> str:
    """`text` with the table between the markers rendered anew (ValueError without them)."""
    return replace_between(text, START, END, markdown())
