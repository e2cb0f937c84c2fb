"""The scaling bench's Gemini ``partialArgs`` rows: their streams carry the arguments they say
(one path as deep as the depth rule allows; many rows side by side), read clean."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.sse.strict_json import MAX_DEPTH

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
try:
    import bench_scaling as bench
finally:
    sys.path.pop(0)


def _args(result) -> object:
    call = result.final["candidates"][0]["content"]["parts"][0]["functionCall"]
    return call["args"]


@pytest.mark.parametrize("depth", bench.SIZES["gemini deep"])
def test_the_deep_stream_holds_one_path_that_deep(depth):
    assert depth <= MAX_DEPTH                        # read, not refused
    capture = bench.gemini_paths_stream([{"jsonPath": "$" + ".a" * depth, "numberValue": 1}])
    result = accumulate(capture)
    assert not [d for d in result.diagnostics if d.severity == "error"]
    value, levels = _args(result), 0
    while isinstance(value, dict):
        assert list(value) == ["a"]
        value, levels = value["a"], levels + 1
    assert (levels, value) == (depth, 1)
    assert bench.gemini_deep_job(depth)() is not None      # the job's own checks hold


def test_the_wide_stream_holds_its_rows_side_by_side():
    job = bench.gemini_wide_job(120)
    result = job()
    assert _args(result) == {"rows": [{"name": f"item {i} café", "qty": i} for i in range(120)]}
    records = bench.gemini_paths_stream([{"jsonPath": "$.x", "numberValue": 1}] * 120).body
    assert records.count(b"data: ") == 2 + -(-120 // bench.PATHS_PER_RECORD)


def test_the_bench_runs_only_the_jobs_asked(capsys):
    rows = bench.main(quick=True, only=("gemini deep",))
    assert [r["job"] for r in rows] == ["gemini deep"] and rows[0]["sizes"] == [256, 512]
    assert "gemini deep" in capsys.readouterr().out
    assert json.dumps(rows)                          # as bench/run.py writes them
