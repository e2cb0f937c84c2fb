"""Characters scanned per fragment: re-parsing the buffer against the incremental parser.

A deterministic measure of cost (no clock), for lesson 3's plot and the tests.
"""

from __future__ import annotations

from collections.abc import Iterable

from lesson_lib.tool_calls import ToolCall


def reparse_scan_counts(fragments: Iterable[str]) -> list[tuple[int, int, int]]:
    """Characters scanned per fragment: ``(size so far, re-parse, incremental)``.

    Re-parsing the whole buffer after every fragment (what the SDKs do)
    scans everything so far each time; an incremental parser scans only the
    new fragment. A deterministic measure of cost, for a plot.
    """
    call = ToolCall()
    out, size = [], 0
    for fragment in fragments:
        before = call.scanned
        call.feed(fragment)
        size += len(fragment)
        out.append((size, size, call.scanned - before))
    return out
