"""The stall fault: only the arrival times after one chunk move; bytes and chunking stay."""

from __future__ import annotations

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.breaks import faults
from lesson_lib.capture.captures import corpus, load


@pytest.mark.parametrize("cap", [c for c in corpus() if len(c.chunk_ends) > 2],
                         ids=lambda c: c.key)
def test_stall_delays_every_chunk_after_the_middle_one(cap):
    stalled = faults.stall(cap, 3000)
    middle = (len(cap.chunk_ends) - 1) // 2
    assert stalled.body == cap.body
    assert stalled.chunk_ends == cap.chunk_ends
    for i, (before, after) in enumerate(zip(cap.chunk_times, stalled.chunk_times, strict=True)):
        assert after == pytest.approx(before + (3000 if i > middle else 0), abs=0.06)
    assert stalled.sidecar["fault"] == {"kind": "stall", "at": middle, "ms": 3000}
    assert [e.data for e in stalled.events] == [e.data for e in cap.events]
    assert accumulate(stalled).final == accumulate(cap).final
    assert stalled.sidecar.get("sdk") == cap.sidecar.get("sdk")


def test_stall_after_a_chosen_chunk_and_the_gap_it_leaves():
    cap = load("anthropic-messages/hello")
    stalled = faults.stall(cap, 250, after_chunk=0)
    gaps = [b - a for a, b in zip(stalled.chunk_times, stalled.chunk_times[1:], strict=False)]
    original = [b - a for a, b in zip(cap.chunk_times, cap.chunk_times[1:], strict=False)]
    assert gaps[0] == pytest.approx(original[0] + 250, abs=0.06)
    assert gaps[1:] == pytest.approx(original[1:], abs=0.11)
    assert "silent for 250 ms" in stalled.demonstrates
    assert cap.chunk_times != stalled.chunk_times   # the original is left alone
    assert load("anthropic-messages/hello").chunk_times == cap.chunk_times


@pytest.mark.parametrize("ms, after", [(-1, None), (100, 10_000), (100, -1)])
def test_stall_refuses_what_cannot_be(ms, after):
    with pytest.raises(faults.FaultError):
        faults.stall(load("anthropic-messages/hello"), ms, after_chunk=after)
