"""The event-stream decoder against botocore's own parser, on the recordings and on
random frames: the same frames whatever the chunking, an error where botocore raises,
and every frame before it kept."""

from __future__ import annotations

import struct
import uuid
import zlib
from pathlib import Path

import pytest
from botocore.eventstream import EventStreamBuffer, ParserError
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lesson_lib.capture.captures import reference_dir
from lesson_lib.sse.eventstream import (
    FRAMING_ERRORS,
    MAX_PAYLOAD_LENGTH,
    EventStreamDecoder,
    Header,
    decode,
    encode_frame,
)

RECORDINGS = sorted((reference_dir() / "aws-bedrock").glob("*.eventstream"))
CHUNK_SIZES = (1, 2, 3, 5, 7, 12, 13, 64, 100, 1000, 1 << 20)


def ours(chunks: list[bytes]) -> tuple[list, list]:
    """(headers, payload) of each frame, and the diagnostics, fed `chunks`."""
    decoder = EventStreamDecoder()
    frames = []
    for chunk in chunks:
        frames += decoder.feed(chunk)
    frames += decoder.finish()
    return [(_plain(f.header_values()), f.payload) for f in frames], decoder.diagnostics


def botocore_frames(chunks: list[bytes]) -> tuple[list, Exception | None]:
    """(headers, payload) of each frame botocore's parser yields, and what it raised."""
    buffer = EventStreamBuffer()
    out = []
    try:
        for chunk in chunks:
            buffer.add_data(chunk)
            for message in buffer:
                out.append((message.headers, message.payload))
    except (ParserError, UnicodeDecodeError, KeyError, struct.error) as exc:
        return out, exc
    return out, None


def _plain(headers: dict) -> dict:
    """Our header values as botocore gives them (a UUID as its 16 bytes)."""
    return {k: v.bytes if isinstance(v, uuid.UUID) else v for k, v in headers.items()}


def split(body: bytes, size: int) -> list[bytes]:
    return [body[i:i + size] for i in range(0, len(body), size)] or [b""]


def frame_bytes(headers: dict, payload: bytes) -> bytes:
    return encode_frame(headers, payload)


# -- the recordings ----------------------------------------------------------------------


def test_the_recordings_are_there_or_the_reason_is_said():
    if not reference_dir().exists():
        pytest.skip(f"no reference captures at {reference_dir()}")
    assert len(RECORDINGS) == 3


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
@pytest.mark.parametrize("size", CHUNK_SIZES)
def test_every_recording_decodes_as_botocore_reads_it_at_every_chunking(path: Path, size: int):
    body = path.read_bytes()
    chunks = split(body, size)
    frames, diagnostics = ours(chunks)
    expected, raised = botocore_frames(chunks)
    assert raised is None and diagnostics == []
    assert frames == expected and len(frames) > 5


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_frames_sit_end_to_end_and_cover_the_body(path: Path):
    body = path.read_bytes()
    frames, _ = decode(body)
    assert frames[0].start == 0 and frames[-1].end == len(body)
    assert all(a.end == b.start for a, b in zip(frames, frames[1:], strict=False))
    for frame in frames:
        assert frame.header(":message-type") == "event"
        assert frame.header(":content-type") == "application/json"
        assert [h.type for h in frame.headers] == ["string"] * 3


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_a_recording_cut_anywhere_keeps_every_whole_frame_and_says_where(path: Path):
    body = path.read_bytes()
    ends = [f.end for f in decode(body)[0]]
    for cut in range(1, len(body), 37):
        frames, diagnostics = decode(body[:cut])
        whole = [e for e in ends if e <= cut]
        assert [f.end for f in frames] == whole
        if cut in ends:
            assert diagnostics == []
        else:
            (diag,) = diagnostics
            assert diag.code == "truncated_frame" and diag.offset == (whole or [0])[-1]


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.stem)
def test_a_flipped_byte_is_an_error_where_botocore_raises(path: Path):
    body = path.read_bytes()
    ends = [0] + [f.end for f in decode(body)[0]]
    for at in range(0, len(body), 11):
        broken = body[:at] + bytes([body[at] ^ 0x20]) + body[at + 1:]
        frames, diagnostics = ours([broken])
        expected, raised = botocore_frames([broken])
        assert raised is not None
        assert frames == expected
        (diag,) = diagnostics
        assert diag.code in ("bad_prelude_crc", "bad_message_crc")
        frame_start = max(e for e in ends if e <= at)
        assert diag.offset == frame_start and len(frames) == ends.index(frame_start)


# -- random frames -----------------------------------------------------------------------

_names = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                 max_size=20).filter(lambda n: len(n.encode()) < 256)
_values = st.one_of(
    st.booleans().map(lambda v: ("bool", v)),
    st.integers(-2**7, 2**7 - 1).map(lambda v: ("byte", v)),
    st.integers(-2**15, 2**15 - 1).map(lambda v: ("short", v)),
    st.integers(-2**31, 2**31 - 1).map(lambda v: ("int", v)),
    st.integers(-2**63, 2**63 - 1).map(lambda v: ("long", v)),
    st.binary(max_size=300).map(lambda v: ("bytes", v)),
    st.text(max_size=100).map(lambda v: ("string", v)),
    st.integers(-2**63, 2**63 - 1).map(lambda v: ("timestamp", v)),
    st.uuids().map(lambda v: ("uuid", v)),
)
_headers = st.dictionaries(_names, _values, max_size=6).map(
    lambda d: [Header(name, kind, value) for name, (kind, value) in d.items()])
_frames = st.lists(st.tuples(_headers, st.binary(max_size=500)), min_size=1, max_size=6)


def _body(frames: list) -> bytes:
    return b"".join(encode_frame(headers, payload) for headers, payload in frames)


def _cuts(body: bytes, points: list[int]) -> list[bytes]:
    points = sorted({p % (len(body) + 1) for p in points})
    edges = [0, *points, len(body)]
    return [body[a:b] for a, b in zip(edges, edges[1:], strict=False)]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_frames, st.lists(st.integers(0, 10_000), max_size=12))
def test_random_frames_decode_to_what_was_written_and_to_what_botocore_reads(frames, points):
    body = _body(frames)
    chunks = _cuts(body, points)
    got, diagnostics = ours(chunks)
    assert diagnostics == []
    assert got == [({h.name: (h.value.bytes if h.type == "uuid" else h.value) for h in headers},
                    payload) for headers, payload in frames]
    assert got == botocore_frames(chunks)[0]
    whole = decode(body)[0]
    assert [[(h.name, h.type) for h in f.headers] for f in whole] == [
        [(h.name, h.type) for h in headers] for headers, _ in frames]


@settings(max_examples=examples(200), deadline=None)
@given(_frames, st.integers(0, 10**6), st.integers(1, 255),
       st.lists(st.integers(0, 10_000), max_size=6))
def test_a_random_corruption_is_reported_where_botocore_raises(frames, where, mask, points):
    body = bytearray(_body(frames))
    at = where % len(body)
    body[at] ^= mask
    chunks = _cuts(bytes(body), points)
    got, diagnostics = ours(chunks)
    expected, raised = botocore_frames(chunks)
    assert raised is not None
    assert got == expected
    assert len(diagnostics) == 1 and diagnostics[0].code in FRAMING_ERRORS
    assert diagnostics[0].offset <= at


@settings(max_examples=examples(100), deadline=None)
@given(_frames, st.integers(0, 10**6))
def test_a_random_cut_keeps_the_frames_before_it(frames, where):
    body = _body(frames)
    cut = where % (len(body) + 1)
    got, diagnostics = ours(split(body[:cut], 9))
    expected, raised = botocore_frames([body[:cut]])
    assert raised is None and got == expected
    ends = [f.end for f in decode(body)[0]]
    assert (diagnostics == []) == (cut in ends or cut == 0)


# -- what no frame can be ----------------------------------------------------------------


def _prelude(total: int, headers_length: int) -> bytes:
    head = struct.pack(">II", total, headers_length)
    return head + struct.pack(">I", zlib.crc32(head))


def test_an_absurd_length_is_a_typed_error_at_its_offset_and_frames_before_are_kept():
    good = frame_bytes({":event-type": "messageStart"}, b"{}")
    for total, headers_length in ((MAX_PAYLOAD_LENGTH + 100, 0), (10, 0), (40, 30),
                                  (300_000, 200_000)):
        body = good + _prelude(total, headers_length) + b"x" * 40
        frames, diagnostics = decode(body)
        assert [f.header(":event-type") for f in frames] == ["messageStart"]
        (diag,) = diagnostics
        assert diag.code == "bad_length" and diag.offset == len(good)
        assert diag.severity == "error" and "decoding stops here" in diag.message


def test_botocore_refuses_the_lengths_this_decoder_calls_absurd():
    body = _prelude(MAX_PAYLOAD_LENGTH + 100, 0) + b"x" * 40
    assert botocore_frames([body])[1] is not None


def _raw_frame(header_block: bytes, payload: bytes = b"") -> bytes:
    """A frame with these exact header bytes, both CRCs right."""
    total = 16 + len(header_block) + len(payload)
    message = _prelude(total, len(header_block)) + header_block + payload
    return message + struct.pack(">I", zlib.crc32(message))


@pytest.mark.parametrize(("block", "code", "at"), [
    (b"\x03abc\x0a", "bad_header", 0),                       # value type 10
    (b"\x03abc\x07\x00\x09xy", "bad_header", 0),             # string past the block
    (b"\x03abc\x04\x00\x01", "bad_header", 0),               # int32 with 2 bytes
    (b"\x03abc\x07\x00\x02\xff\xfe", "bad_header", 0),       # not UTF-8
    (b"\x03abc\x00\x03abc\x01", "duplicate_header", 5),      # the second header
    (b"\x05ab", "bad_header", 0),                            # name past the block
])
def test_a_bad_header_is_a_typed_error_never_an_exception(block: bytes, code: str, at: int):
    good = frame_bytes({"x": "y"}, b"1")
    body = good + _raw_frame(block, b"{}") + good
    frames, diagnostics = decode(body)
    assert len(frames) == 1
    assert [(d.code, d.offset) for d in diagnostics] == [(code, len(good) + 12 + at)]


def test_after_an_error_the_decoder_reads_nothing_more_and_finish_adds_nothing():
    decoder = EventStreamDecoder()
    good = frame_bytes({"a": "b"}, b"")
    bad = bytearray(good)
    bad[-1] ^= 1
    assert len(decoder.feed(good + bytes(bad))) == 1
    assert decoder.stopped
    assert decoder.feed(good) == [] and decoder.finish() == []
    assert [d.code for d in decoder.diagnostics] == ["bad_message_crc"]


def test_every_header_type_round_trips():
    headers = [Header("t", "bool", True), Header("f", "bool", False), Header("b", "byte", -5),
               Header("s", "short", -300), Header("i", "int", 70_000),
               Header("l", "long", -2**40), Header("y", "bytes", b"\x00\xff"),
               Header("str", "string", "héllo"), Header("ts", "timestamp", 1_700_000_000_000),
               Header("u", "uuid", uuid.UUID(int=12345))]
    (frame,), diagnostics = decode(encode_frame(headers, b"payload"))
    assert diagnostics == [] and frame.headers == tuple(headers)
    assert frame.payload == b"payload" and frame.header("missing", 7) == 7


def test_a_large_frame_in_tiny_chunks_arrives_once_whole():
    body = frame_bytes({":event-type": "chunk"}, b"z" * 200_000)
    decoder = EventStreamDecoder()
    counts = [len(decoder.feed(chunk, t=float(i))) for i, chunk in enumerate(split(body, 3))]
    assert sum(counts) == 1 and counts[-1] == 1
    assert decoder.finish() == [] and decoder.diagnostics == []


def test_the_bench_inputs_decode_the_same_with_both_parsers():
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import bench_eventstream

    rows = bench_eventstream.run(quick=True)     # asserts both decoders count the same frames
    assert {r["impl"] for r in rows} == {"lesson_lib", "botocore"} and len(rows) == 6


def test_a_header_block_read_once_is_shared_not_read_again():
    body = frame_bytes({"a": "b"}, b"1") + frame_bytes({"a": "b"}, b"2")
    first, second = decode(body)[0]
    assert first.headers is second.headers and first.payload != second.payload
