"""Comparing two runs of `make bench`: rows matched by what they measure, moves judged by
which way is better."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
try:
    import compare
finally:
    sys.path.pop(0)

COMMITTED = Path(__file__).resolve().parent.parent / "bench" / "results.json"


def _run(sse_ratio: float, turn_ratio: float, growth: float) -> dict:
    return {"benches": {
        "sse": [
            {"bench": "sse", "case": "small events CRLF", "size": "50000", "impl": "lesson_lib",
             "seconds": 0.3, "ratio_to_ours": 1.0},
            {"bench": "sse", "case": "small events CRLF", "size": "50000",
             "impl": "anthropic SDK", "seconds": 0.3 * sse_ratio, "ratio_to_ours": sse_ratio}],
        "turn": [
            {"bench": "turn", "case": "anthropic text deltas", "size": 8000, "route": "wire",
             "ours_s": 0.1, "sdk_s": 0.1 * turn_ratio, "ratio": turn_ratio,
             "ours_x2": growth}]}}


def _verdicts(before: dict, after: dict) -> dict[tuple[str, str], str]:
    changes, _, _ = compare.compare(before, after)
    return {(c.row, c.figure): c.verdict for c in changes}


def test_a_ratio_that_fell_is_worse_and_a_growth_that_fell_is_better():
    verdicts = _verdicts(_run(1.30, 3.2, 2.10), _run(0.90, 3.3, 1.70))
    assert verdicts == {
        ("sse: small events CRLF, anthropic SDK, 50000", "ratio_to_ours"): "worse",
        ("turn: anthropic text deltas, wire, 8000", "ratio"): "same",
        ("turn: anthropic text deltas, wire, 8000", "ours_x2"): "better"}


def test_our_own_row_is_left_out_and_rows_in_one_run_only_are_named():
    before, after = _run(1.0, 3.0, 2.0), _run(1.0, 3.0, 2.0)
    after["benches"]["turn"][0]["size"] = 16000
    changes, only_before, only_after = compare.compare(before, after)
    assert [c.row for c in changes] == ["sse: small events CRLF, anthropic SDK, 50000"]
    assert only_before == ["turn: anthropic text deltas, wire, 8000"]
    assert only_after == ["turn: anthropic text deltas, wire, 16000"]


def test_the_exit_status_says_whether_any_figure_got_worse(tmp_path, capsys):
    before, after = tmp_path / "before.json", tmp_path / "after.json"
    before.write_text(json.dumps(_run(1.3, 3.0, 2.0)))
    after.write_text(json.dumps(_run(1.25, 3.0, 2.0)))
    assert compare.main([str(before), str(after)]) == 0
    after.write_text(json.dumps(_run(1.0, 3.0, 2.0)))
    assert compare.main([str(before), str(after)]) == 1
    assert "1 worse" in capsys.readouterr().out


def test_the_committed_results_compare_with_themselves_as_unchanged():
    results = json.loads(COMMITTED.read_text())
    changes, only_before, only_after = compare.compare(results, copy.deepcopy(results))
    assert changes and not only_before and not only_after
    assert {c.verdict for c in changes} == {"same"}
    # every bench that records a figure is read
    assert {c.row.split(":")[0] for c in changes} >= {
        "sse", "eventstream", "accumulate", "partial_json", "turn", "turn_wires", "scaling"}


def test_the_live_loops_ratio_is_its_overhead_so_a_rise_is_worse():
    def live(ratio):
        return {"benches": {"live": [{"case": "live loop vs raw httpx", "size": 8000,
                                      "raw_s": 0.1, "ours_s": 0.1 * ratio, "ratio": ratio,
                                      "us_per_delta": 20.0}]}}
    changes, _, _ = compare.compare(live(2.5), live(3.2))
    assert [(c.row, c.verdict) for c in changes] == [("live: live loop vs raw httpx, 8000", "worse")]


def test_with_several_implementations_ours_is_judged_by_growth_and_the_others_by_ratio():
    def run(ours_growth, jiter_growth, jiter_ratio):
        rows = [{"bench": "partial_json", "case": "many records", "implementation": name,
                 "size_kb": 160, "seconds": 1.0, "ratio": ratio, "growth": growth}
                for name, ratio, growth in (("lesson_lib", 1.0, ours_growth),
                                            ("jiter", jiter_ratio, jiter_growth))]
        return {"benches": {"partial_json": rows}}
    changes, _, _ = compare.compare(run(2.0, 4.0, 60.0), run(2.5, 5.0, 60.0))
    assert {(c.row, c.figure, c.verdict) for c in changes} == {
        ("partial_json: many records, lesson_lib, 160", "growth", "worse"),
        ("partial_json: many records, jiter, 160", "ratio", "same")}
