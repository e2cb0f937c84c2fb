"""The SSE decoder against the WHATWG event-stream rules, one rule per test."""

from __future__ import annotations

import pytest

from lesson_lib.sse.decoder import SSEDecoder, decode


def events(body: bytes, size: int | None = None):
    chunks = [body] if size is None else [body[i:i + size] for i in range(0, len(body), size)]
    return decode(chunks)


def test_data_lines_join_with_lf_and_final_lf_is_dropped():
    (ev,), diags = events(b"data: a\ndata: b\n\n")
    assert ev.data == "a\nb" and ev.event is None and not diags


def test_one_leading_space_is_stripped_only_once():
    (ev,), _ = events(b"data:  two spaces\n\n")
    assert ev.data == " two spaces"


def test_field_without_colon_is_a_name_with_empty_value():
    (ev,), _ = events(b"data\n\n")
    assert ev.data == ""


def test_comments_are_ignored_but_belong_to_the_event_range():
    (ev,), _ = events(b": keep-alive\ndata: x\n\n")
    assert (ev.data, ev.start, ev.end) == ("x", 0, 22)


def test_blank_line_without_data_dispatches_nothing():
    evs, _ = events(b"event: ping\n\nid: 1\n\n: c\n\n")
    assert evs == []


def test_event_type_resets_after_dispatch():
    evs, _ = events(b"event: a\ndata: 1\n\ndata: 2\n\n")
    assert [e.event for e in evs] == ["a", None]


@pytest.mark.parametrize("sep", [b"\n", b"\r", b"\r\n"])
def test_cr_lf_and_crlf_all_end_lines(sep):
    body = b"event: e" + sep + b"data: x" + sep + sep
    (ev,), _ = events(body)
    # A CRLF blank line dispatches at its CR: the final LF belongs to no event.
    assert (ev.event, ev.data, ev.end) == ("e", "x", len(body) - (sep == b"\r\n"))


def test_cr_ending_one_chunk_and_lf_starting_the_next_are_one_line_end():
    body = b"data: a\r\n\r\ndata: b\r\n\r\n"
    whole, _ = events(body)
    for cut in range(1, len(body)):
        split, _ = decode([body[:cut], body[cut:]])
        assert split == whole, cut
    assert [e.end for e in whole] == [10, 21]  # each stops after the CR of its CRLF blank line


def test_id_persists_and_is_ignored_when_it_contains_nul():
    evs, _ = events(b"id: 7\ndata: a\n\ndata: b\n\nid: x\x00y\ndata: c\n\nid\ndata: d\n\n")
    assert [e.id for e in evs] == ["7", "7", "7", ""]


def test_retry_counts_only_when_all_digits():
    evs, _ = events(b"retry: 1500\ndata: a\n\nretry: 15s\ndata: b\n\n")
    assert [e.retry for e in evs] == [1500, None]


def test_one_leading_bom_is_stripped_and_excluded_from_offsets():
    body = b"\xef\xbb\xbfdata: a\n\n"
    for size in (1, 2, 3, None):
        (ev,), _ = events(body, size)
        assert (ev.data, ev.start, ev.end) == ("a", 3, len(body))


def test_only_one_bom_is_stripped():
    # The second BOM stays: the field name becomes "\ufeffdata", which is ignored.
    evs, _ = events(b"\xef\xbb\xbf\xef\xbb\xbfdata: a\n\n")
    assert evs == []
    (ev,), _ = events(b"\xef\xbb\xbf\xef\xbb\xbf\ndata: a\n\n")
    assert ev.start == 3  # the line holding the second BOM is the event's first line


def test_invalid_utf8_becomes_replacement_characters():
    (ev,), _ = events(b"data: caf\xc3\n\n")
    assert ev.data == "caf\ufffd"


def test_a_character_split_across_chunks_is_decoded_whole():
    body = "data: é🙂\n\n".encode()
    for size in range(1, 6):
        (ev,), _ = events(body, size)
        assert ev.data == "é🙂"


def test_unfinished_event_is_reported_not_dispatched():
    evs, diags = events(b"data: a\n\ndata: half")
    assert [e.data for e in evs] == ["a"]
    (diag,) = diags
    assert diag.code == "undispatched_bytes"
    assert diag.offset == 9 and diag.extra["count"] == 10 and diag.extra["has_data"]


def test_complete_lines_without_the_blank_line_are_also_reported():
    evs, diags = events(b"data: a\n\nevent: message_stop\ndata: {}\n")
    assert len(evs) == 1 and diags[0].offset == 9 and diags[0].extra["count"] == 29


def test_trailing_blank_lines_leave_nothing_behind():
    _, diags = events(b"data: a\n\n\n\n")
    assert diags == []


def test_times_come_from_the_chunk_that_completed_the_event():
    dec = SSEDecoder()
    assert dec.feed(b"data: a\n", t=10.0) == []
    (ev,) = dec.feed(b"\ndata: b", t=25.0)
    assert ev.t == 25.0


def test_feed_after_finish_is_refused():
    dec = SSEDecoder()
    dec.finish()
    with pytest.raises(RuntimeError):
        dec.feed(b"data: x\n\n")


def test_a_huge_single_event_in_tiny_chunks_is_decoded_once():
    payload = "x" * 200_000
    body = f"data: {payload}\n\n".encode()
    (ev,), _ = events(body, 64)
    assert ev.data == payload and ev.end == len(body)


def test_a_cr_ending_a_blank_line_at_the_end_of_a_chunk_dispatches_there():
    decoder = SSEDecoder()
    (ev,) = decoder.feed(b"data: a\r\r")
    assert (ev.data, ev.end) == ("a", 9)
    # The LF that follows completes that line end: it starts no line and no event.
    assert decoder.feed(b"\ndata: b\n\n")[0].start == 10
    assert decoder.finish() == [] and decoder.diagnostics == []


def test_a_crlf_blank_line_split_after_its_cr_dispatches_at_the_cr():
    decoder = SSEDecoder()
    (ev,) = decoder.feed(b"data: a\r\n\r")
    assert ev.end == 10
    assert decoder.feed(b"\n") == []


def test_a_crlf_stream_is_read_by_blocks_and_hands_back_at_a_lone_cr():
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data: a\r\n\r\n")] == ["a"]
    assert decoder.feed(b"data: b\r") == []      # the CR may be half of a CRLF
    # It was not: the CR ended "data: b", an LF ends "data: c", a CRLF the block.
    (ev,) = decoder.feed(b"data: c\n\r\n\r")
    assert (ev.data, ev.start, ev.end) == ("b\nc", 11, 28)


def test_a_cr_that_ends_a_chunk_of_a_crlf_stream_is_remembered():
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data: a\r\n\r\n")] == ["a"]
    assert decoder.feed(b"data: b\r") == []
    # Whole CRLFs follow, but not at once: the CR before them ended "data: b".
    (ev,) = decoder.feed(b"data: c\r\n\r\n")
    assert (ev.data, ev.start, ev.end) == ("b\nc", 11, 29)


def test_a_crlf_stream_hands_back_when_no_lf_follows_a_blank_lines_cr():
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data: a\r\n\r\n")] == ["a"]
    assert [e.end for e in decoder.feed(b"data: b\r\n\r")] == [21]
    # A lone CR ended that blank line: "data: c" starts right after it.
    (ev,) = decoder.feed(b"data: c\r\n\r\n")
    assert (ev.data, ev.start, ev.end) == ("c", 21, 31)


def test_a_cr_stream_is_read_by_blocks_and_hands_back_at_an_lf():
    decoder = SSEDecoder()
    assert [e.data for e in decoder.feed(b"data: a\r\r")] == ["a"]
    assert [e.data for e in decoder.feed(b"data: b\r\rdata: c\r")] == ["b"]
    # The LF joins the CR before it (one line end), then ends a blank line.
    (ev,) = decoder.feed(b"\n\n")
    assert (ev.data, ev.start, ev.end) == ("c", 18, 28)
