"""The benchmark's deterministic instrument: characters scanned, re-parse against incremental."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
try:
    from scan_counts import reparse_scan_counts
finally:
    sys.path.pop(0)


def test_reparse_scan_counts_against_ours():
    rows = reparse_scan_counts(['{"a": ', '"xy', 'z"}'])
    assert rows == [(6, 6, 6), (9, 9, 3), (12, 12, 3)]
    assert sum(r[1] for r in rows) == 27 and sum(r[2] for r in rows) == 12


def test_a_fragment_inside_a_long_string_is_scanned_once():
    fragments = ['{"text": "'] + ["abcd"] * 50 + ['"}']
    rows = reparse_scan_counts(fragments)
    assert [r[2] for r in rows] == [len(f) for f in fragments]
    assert rows[-1][1] == sum(map(len, fragments))
