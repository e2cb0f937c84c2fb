"""Property: the same bytes give the same events, whatever the network chunking.

Run over every capture in captures/ and every reference capture, with
hypothesis choosing the split points (1-byte chunks and splits inside a
multi-byte character included), plus random bodies built from the
characters that matter to the grammar.
"""

from __future__ import annotations

import bisect
import re

import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib.capture import captures
from lesson_lib.sse.decoder import BOM, decode

ALL = captures.corpus() + captures.reference_corpus()


def split(body: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(body) + 1) for c in cuts})
    edges = [0, *points, len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@pytest.mark.skipif(not ALL, reason="no captures found (captures/ empty, reference folder absent)")
@pytest.mark.parametrize("cap", ALL, ids=lambda c: c.key)
@settings(max_examples=examples(15), deadline=None, suppress_health_check=[HealthCheck.too_slow])
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


@settings(max_examples=examples(400), deadline=None)
@given(body=GRAMMAR, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_random_grammar_bodies_are_chunking_invariant(body, cuts):
    assert decode(split(body, cuts)) == decode([body])


@settings(max_examples=examples(200), deadline=None)
@given(body=GRAMMAR)
def test_event_ranges_are_ordered_and_inside_the_body(body):
    evs, diags = decode([body])
    last = 0
    for ev in evs:
        assert last <= ev.start < ev.end <= len(body)
        last = ev.end
    for diag in diags:
        assert last <= diag.offset and diag.offset + diag.extra["count"] == len(body)


# -- against the standard, read literally ---------------------------------------------


LINE_END = re.compile(rb"\r\n|\r|\n")


def reference(body: bytes) -> list[tuple]:
    """The events of a whole body by the standard's rules, one line at a time:
    (event, data, id, retry, start, end). `end` is just past the first byte of
    the blank line's end, the byte that dispatches it."""
    at = len(BOM) if body.startswith(BOM) else 0
    out: list[tuple] = []
    data: list[str] = []
    kind, last_id, retry, first = None, "", None, None
    for match in LINE_END.finditer(body, at):
        line = body[at:match.start()]
        line_start, at = at, match.end()
        if not line:
            if data:
                out.append((kind, "\n".join(data), last_id, retry, first,
                            line_start + 1))
            data, kind, retry, first = [], None, None, None
            continue
        if first is None:
            first = line_start
        text = line.decode("utf-8", "replace")
        if text.startswith(":"):
            continue
        name, colon, value = text.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            data.append(value)
        elif name == "event":
            kind = value
        elif name == "id" and "\x00" not in value:
            last_id = value
        elif name == "retry" and value.isascii() and value.isdigit():
            retry = int(value)
    return out


def timed(body: bytes, chunks: list[bytes]) -> list[tuple]:
    """Decode `chunks` (chunk i arriving at time i); each event with its time."""
    events, _ = decode([(chunk, float(i)) for i, chunk in enumerate(chunks)])
    return [(e.event, e.data, e.id, e.retry, e.start, e.end, e.t) for e in events]


def expected(body: bytes, chunks: list[bytes]) -> list[tuple]:
    """`reference`, each event timed by the chunk that holds its dispatching byte."""
    ends, edge = [], 0
    for chunk in chunks:
        edge += len(chunk)
        ends.append(edge)
    return [(*event, float(bisect.bisect_right(ends, event[-1] - 1)))
            for event in reference(body)]


LINES = st.lists(st.sampled_from([
    b"data: x", b"data:\xc3\xa9", b"data", b"data: ", b"event: e", b"event:f", b"id: 1",
    b"id: \x00", b": comment", b":", b"retry: 12", b"retry: x", b"x", "🙂".encode(),
    b"data: \xc3", b"", b"", b"",
]), max_size=30)
ONE_KIND = st.builds(
    lambda lines, ends, bom, last: (BOM if bom else b"") + ends.join(lines) + (ends if last else b""),
    LINES, st.sampled_from([b"\r\n", b"\r", b"\n"]), st.booleans(), st.booleans())


@settings(max_examples=examples(150), deadline=None, derandomize=True, database=None)
@given(body=ONE_KIND)
def test_one_kind_of_line_end_split_at_every_boundary_is_the_standard(body):
    # CRLF, CR or LF throughout: what the block paths read. A CR that ends the first
    # chunk may be the first half of a CRLF; a blank line's CR dispatches in its chunk.
    for cut in range(len(body) + 1):
        chunks = [body[:cut], body[cut:]]
        assert timed(body, chunks) == expected(body, chunks), cut
    ones = [body[i:i + 1] for i in range(len(body))]
    assert timed(body, ones) == expected(body, ones)
    assert decode(ones)[1] == decode([body])[1]


@settings(max_examples=examples(150), deadline=None, derandomize=True, database=None)
@given(body=ONE_KIND, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_one_kind_of_line_end_in_any_chunks_is_the_standard(body, cuts):
    chunks = split(body, cuts)
    assert timed(body, chunks) == expected(body, chunks)
    assert decode(chunks)[1] == decode([body])[1]


@settings(max_examples=examples(300), deadline=None, derandomize=True, database=None)
@given(head=ONE_KIND, tail=ONE_KIND, cuts=st.lists(st.integers(min_value=0, max_value=800),
                                                     max_size=20))
def test_a_stream_that_changes_its_line_end_is_the_standard(head, tail, cuts):
    # The block path guessed one kind, then a chunk of another comes: it hands back.
    body = head + tail.removeprefix(BOM)
    chunks = split(body, cuts)
    assert timed(body, chunks) == expected(body, chunks)


@settings(max_examples=examples(300), deadline=None, derandomize=True, database=None)
@given(body=GRAMMAR, cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20))
def test_random_grammar_bodies_are_the_standard(body, cuts):
    chunks = split(body, cuts)
    assert timed(body, chunks) == expected(body, chunks)
