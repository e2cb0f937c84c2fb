"""Property: the same bytes give the same events, whatever the network chunking.

Run over every capture in captures/ and every reference capture, with
hypothesis choosing the split points (1-byte chunks and splits inside a
multi-byte character included), plus random bodies built from the
characters that matter to the grammar.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib import captures
from lesson_lib.sse import decode

ALL = captures.corpus() + captures.reference_corpus()


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    edges = [0, *points, len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@pytest.mark.skipif(not ALL, reason="no captures found (captures/ empty, reference folder absent)")
@pytest.mark.parametrize("cap", ALL, ids=lambda c: c.key)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cuts=st.lists(st.integers(min_value=0, max_value=10**9), max_size=40))
def test_chunking_never_changes_the_events(cap, cuts):
    whole = decode([cap.body])
    assert decode(split(cap.body, cuts)) == whole


@pytest.mark.skipif(not ALL, reason="no captures found")
@pytest.mark.parametrize("cap", ALL, ids=lambda c: c.key)
def test_one_byte_chunks_give_the_same_events(cap):
    body = cap.body[:60_000]
    assert decode([body[i:i + 1] for i in range(len(body))]) == decode([body])


GRAMMAR = st.lists(st.sampled_from([
    b"data", b"data:", b": ", b"event: e", b"id: 1", b"id: \x00", b"retry: 12", b"retry: x",
    b"\n", b"\r", b"\r\n", b"\n\n", b"\xef\xbb\xbf", "é".encode(), "🙂".encode(), b"\xc3",
    b"x", b" ", b":",
]), max_size=60).map(b"".join)


@settings(max_examples=400, deadline=None)
@given(body=GRAMMAR, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_random_grammar_bodies_are_chunking_invariant(body, cuts):
    assert decode(split(body, cuts)) == decode([body])


@settings(max_examples=200, deadline=None)
@given(body=GRAMMAR)
def test_event_ranges_are_ordered_and_inside_the_body(body):
    evs, diags = decode([body])
    last = 0
    for ev in evs:
        assert last <= ev.start < ev.end <= len(body)
        last = ev.end
    for diag in diags:
        assert last <= diag.offset and diag.offset + diag.extra["count"] == len(body)
