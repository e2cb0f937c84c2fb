"""Both tool-start rules on every capture and reference recording with a tool call.

    python scripts/tool_start_table.py                 (REFERENCE_CAPTURES for the recordings)

The measuring is `lesson_lib.turn.tool_start_table` (lesson 7 shows it over the corpus);
this prints its two tables as Markdown, and the captures no adapter reads yet.
"""

from __future__ import annotations

import argparse
import sys

from lesson_lib.capture.captures import corpus, reference_corpus
from lesson_lib.turn.tool_start_table import measure, render, table

__all__ = ["main", "measure", "render", "table"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args(argv)
    calls, turns, unread = table(corpus() + reference_corpus())
    print(render(calls, turns))
    if unread:
        print(f"\nNot read (no adapter for their wire yet): {', '.join(unread)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
