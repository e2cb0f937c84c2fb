"""Event-stream decoding, the first station for AWS Bedrock: bytes -> binary frames.

Bedrock does not speak SSE. Its streaming responses
(``application/vnd.amazon.eventstream``) are a sequence of binary frames,
each one laid out as::

    offset 0    uint32 BE   total length of the frame (all of it, CRCs included)
    offset 4    uint32 BE   length of the headers block
    offset 8    uint32 BE   CRC32 of bytes 0..7            (the prelude CRC)
    offset 12   headers     repeated: uint8 name length, name,
                            uint8 value type, value (see HEADER_TYPES)
                payload     total - headers - 16 bytes
    last 4      uint32 BE   CRC32 of every byte before it  (the message CRC)

A frame says its own length up front, so no byte of it needs scanning: the
decoder waits until the whole frame has arrived, checks both CRCs, reads
the headers and hands the frame over with its byte range in the body.

Like `lesson_lib.sse.decoder`, this is sans-IO: `feed` takes network chunks as they
come and returns the frames they completed, `finish` says what was left.
Where the chunks fall changes nothing (each frame is read only once it is
whole), and the bytes are scanned once, so decoding stays linear however
small the chunks are.

Bad input is a typed `Diagnostic` with its byte offset, never an exception:
a wrong CRC, a length no frame can have, a header that runs past its block,
a frame cut short by the end of the stream. Once a frame is wrong the lengths
after it cannot be trusted (there is no way to find the next frame), so the
decoder stops reading there; every frame before it is kept. botocore's own
parser (`botocore.eventstream.EventStreamBuffer`) reads the same bytes the
same way and raises where this decoder reports (`tests/test_eventstream.py`).

`encode_frame` writes frames (the course's constructed captures and the
server use it): the same layout, read backwards.
"""

from __future__ import annotations

import struct
import uuid
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from ..diagnostics import Diagnostic

CONTENT_TYPE = "application/vnd.amazon.eventstream"

PRELUDE_LENGTH = 12          # total length, headers length, prelude CRC
CRC_LENGTH = 4               # the message CRC at the end
MIN_FRAME_LENGTH = PRELUDE_LENGTH + CRC_LENGTH   # a frame with no headers and no payload
# The limits botocore enforces: a frame past them is not one the service sends.
MAX_HEADERS_LENGTH = 128 * 1024
MAX_PAYLOAD_LENGTH = 24 * 1024 * 1024

# The value types a header can have: the type byte, its name, and how its value is stored.
# ``bool`` has no value bytes at all: the type byte itself says true (0) or false (1).
HEADER_TYPES: dict[int, str] = {
    0: "bool",        # true
    1: "bool",        # false
    2: "byte",        # int8
    3: "short",       # int16 BE
    4: "int",         # int32 BE
    5: "long",        # int64 BE
    6: "bytes",       # uint16 BE length, then the bytes
    7: "string",      # uint16 BE length, then UTF-8
    8: "timestamp",   # int64 BE, milliseconds since the epoch
    9: "uuid",        # 16 bytes
}
# The diagnostic codes of a frame that cannot be read: each one stops the decoding. (A
# frame the stream's end cut short is ``truncated_frame``: a cut, not a broken frame.)
FRAMING_ERRORS = frozenset({"bad_prelude_crc", "bad_message_crc", "bad_length", "bad_header",
                            "duplicate_header"})
_FIXED = {"byte": struct.Struct(">b"), "short": struct.Struct(">h"),
          "int": struct.Struct(">i"), "long": struct.Struct(">q"),
          "timestamp": struct.Struct(">q")}
_PRELUDE = struct.Struct(">III")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")


class Header(NamedTuple):
    """One header of a frame: its name, its value type (a name from `HEADER_TYPES`) and
    its value (``bool``, ``int`` for the integer types and the timestamp in ms,
    ``bytes``, ``str``, or ``uuid.UUID``)."""

    name: str
    type: str
    value: Any


class Frame(NamedTuple):
    """One whole, checked frame: its headers in order, its payload, where it sat in the
    body (`start` to `end`, the frame's own bytes) and when it arrived (`t`, ms: the
    arrival of the chunk that completed it)."""

    headers: tuple[Header, ...]
    payload: bytes
    start: int
    end: int
    t: float | None = None

    def header(self, name: str, default: Any = None) -> Any:
        """The value of the header called `name` (`default` when the frame has none)."""
        for header in self.headers:
            if header.name == name:
                return header.value
        return default

    def header_values(self) -> dict[str, Any]:
        """The headers as a dict, name -> value (what botocore's parser gives)."""
        return {h.name: h.value for h in self.headers}


class _Broken(Exception):
    """A frame that cannot be read: the diagnostic's code, message and byte offset."""

    def __init__(self, code: str, message: str, offset: int, **extra: Any) -> None:
        super().__init__(message)
        self.code, self.message, self.offset, self.extra = code, message, offset, extra


class EventStreamDecoder:
    """Incremental frame decoder: `feed` chunks, then `finish` once.

    >>> body = encode_frame({":event-type": "messageStop"}, b'{"stopReason":"end_turn"}')
    >>> d = EventStreamDecoder()
    >>> d.feed(body[:20]), [f.header(":event-type") for f in d.feed(body[20:])]
    ([], ['messageStop'])
    """

    def __init__(self) -> None:
        self._buffer = bytearray()   # bytes of frames not yet whole
        self._offset = 0             # body offset of _buffer[0]
        # How many bytes the buffer must hold before there is anything to read: a prelude,
        # or the whole frame whose prelude was read already.
        self._wanted = PRELUDE_LENGTH
        self._stopped = False        # a broken frame was met: nothing after it is read
        # Header blocks already read, by their bytes: a stream repeats the same few (the
        # same three strings on every text delta), so each is read once, then looked up.
        self._known: dict[bytes, tuple[Header, ...]] = {}
        self._finished = False
        self.diagnostics: list[Diagnostic] = []

    @property
    def stopped(self) -> bool:
        """True once a broken frame stopped the decoding (see `diagnostics`)."""
        return self._stopped

    def feed(self, chunk: bytes, t: float | None = None) -> list[Frame]:
        """Consume one network chunk; return the frames it completed, in order."""
        if self._stopped or self._finished or not chunk:
            return []
        buffer = self._buffer
        buffer += chunk
        if len(buffer) < self._wanted:
            return []                           # a large frame still on its way: wait
        # The bytes as they stand, read as one `bytes` (a slice of it is already the
        # headers block or the payload); copied only when something can be read, so a
        # large frame in small chunks is copied once, when whole.
        data = bytes(buffer)
        frames: list[Frame] = []
        pos, have = 0, len(data)
        self._wanted = PRELUDE_LENGTH
        try:
            while have - pos >= PRELUDE_LENGTH:
                total, headers_length, prelude_crc = _prelude(data, pos, self._offset + pos)
                if have - pos < total:
                    self._wanted = total        # the rest of this frame is still on its way
                    break
                frames.append(_read_frame(data, pos, total, headers_length, prelude_crc,
                                          self._offset, t, self._known))
                pos += total
        except _Broken as broken:
            self._stop(broken)
            return frames
        del buffer[:pos]
        self._offset += pos
        return frames

    def finish(self) -> list[Frame]:
        """End of stream: a frame still incomplete is reported (``truncated_frame``). No
        frame can complete here (a frame is whole or it is not), so this returns []."""
        if self._finished:
            return []
        self._finished = True
        if self._stopped or not self._buffer:
            return []
        have = len(self._buffer)
        if have < PRELUDE_LENGTH:
            need = f"not even the {PRELUDE_LENGTH}-byte prelude that says its length"
            total = None
        else:
            total = _PRELUDE.unpack_from(self._buffer, 0)[0]
            need = f"{total - have} of its {total} bytes never came"
        self.diagnostics.append(Diagnostic(
            "truncated_frame", f"the stream ended inside a frame: {have} bytes arrived, {need}",
            offset=self._offset, extra={"bytes": have, "frame_length": total}))
        self._buffer = bytearray()
        return []

    def _stop(self, broken: _Broken) -> None:
        self._stopped = True
        self._buffer = bytearray()
        self.diagnostics.append(Diagnostic(
            broken.code, f"{broken.message}; the frames after it cannot be found, so "
            "decoding stops here (the frames before it are kept)",
            offset=broken.offset, extra=broken.extra))


def decode(body: bytes) -> tuple[list[Frame], list[Diagnostic]]:
    """Every frame of a whole body, and the diagnostics: one `feed` and `finish`."""
    decoder = EventStreamDecoder()
    frames = decoder.feed(body)
    frames += decoder.finish()
    return frames, decoder.diagnostics


# -- reading one frame ------------------------------------------------------------------


def _prelude(data: bytes, pos: int, offset: int) -> tuple[int, int, int]:
    """The frame at `pos`: its total length, its headers' length and its prelude CRC, once
    that CRC and the lengths are checked."""
    total, headers_length, crc = _PRELUDE.unpack_from(data, pos)
    actual = zlib.crc32(data[pos:pos + 8])
    if actual != crc:
        raise _Broken("bad_prelude_crc", f"the prelude CRC is {crc:#010x}, the bytes give "
                      f"{actual:#010x}: the frame's lengths cannot be trusted", offset,
                      expected=crc, actual=actual)
    payload_length = total - headers_length - MIN_FRAME_LENGTH
    if total < MIN_FRAME_LENGTH or payload_length < 0:
        raise _Broken("bad_length", f"a frame of {total} bytes cannot hold a prelude, "
                      f"{headers_length} bytes of headers and a CRC", offset,
                      frame_length=total, headers_length=headers_length)
    if headers_length > MAX_HEADERS_LENGTH or payload_length > MAX_PAYLOAD_LENGTH:
        raise _Broken("bad_length", f"a frame announcing {headers_length} bytes of headers "
                      f"and {payload_length} of payload (at most {MAX_HEADERS_LENGTH} and "
                      f"{MAX_PAYLOAD_LENGTH})", offset,
                      frame_length=total, headers_length=headers_length)
    return total, headers_length, crc


_KNOWN_LIMIT = 256    # header blocks remembered per stream (a bound for hostile input)


def _read_frame(data: bytes, pos: int, total: int, headers_length: int,
                prelude_crc: int, base: int, t: float | None,
                known: dict[bytes, tuple[Header, ...]]) -> Frame:
    """The whole frame at `pos` in `data` (body offset `base + pos`), whose prelude is
    checked; `known` holds the header blocks read before.

    The message CRC covers the whole frame but its own 4 bytes. A CRC can go on from
    where another stopped, so it goes on from the prelude's: the prelude is not read
    twice."""
    end = pos + total - CRC_LENGTH
    (crc,) = _U32.unpack_from(data, end)
    actual = zlib.crc32(data[pos + 8:end], prelude_crc)
    offset = base + pos
    if actual != crc:
        raise _Broken("bad_message_crc", f"the message CRC is {crc:#010x}, the frame's bytes "
                      f"give {actual:#010x}: the frame was damaged", offset,
                      expected=crc, actual=actual)
    headers_end = pos + PRELUDE_LENGTH + headers_length
    block = data[pos + PRELUDE_LENGTH:headers_end]
    headers = known.get(block)
    if headers is None:
        headers = _read_headers(block, 0, headers_length, offset + PRELUDE_LENGTH)
        if len(known) < _KNOWN_LIMIT:
            known[block] = headers
    return Frame(headers, data[headers_end:end], offset, offset + total, t)


def _read_headers(data: bytes, pos: int, end: int, offset: int) -> tuple[Header, ...]:
    headers: list[Header] = []
    names: set[str] = set()
    while pos < end:
        at = offset + pos
        name_length = data[pos]
        name = _text(data, pos + 1, name_length, end, at, "name")
        pos += 1 + name_length
        if pos >= end:
            raise _Broken("bad_header", f"header {name!r} has no value type", at)
        type_byte = data[pos]
        kind = HEADER_TYPES.get(type_byte)
        if kind is None:
            raise _Broken("bad_header", f"header {name!r} has value type {type_byte}, "
                          "which no frame uses (0 to 9)", at)
        value, pos = _header_value(data, pos + 1, end, type_byte, kind, name, at)
        if name in names:
            raise _Broken("duplicate_header", f"header {name!r} appears twice in one frame",
                          at)
        names.add(name)
        headers.append(Header(name, kind, value))
    return tuple(headers)


def _header_value(data: bytes, pos: int, end: int, type_byte: int, kind: str, name: str,
                  at: int) -> tuple[Any, int]:
    """A header's value read from `pos`, and the position after it."""
    if kind == "bool":
        return type_byte == 0, pos
    if kind in _FIXED:
        layout = _FIXED[kind]
        _need(pos + layout.size, end, name, at)
        return layout.unpack_from(data, pos)[0], pos + layout.size
    if kind == "uuid":
        _need(pos + 16, end, name, at)
        return uuid.UUID(bytes=data[pos:pos + 16]), pos + 16
    _need(pos + 2, end, name, at)
    (length,) = _U16.unpack_from(data, pos)
    if kind == "string":
        return _text(data, pos + 2, length, end, at, f"{name!r}'s value"), pos + 2 + length
    _need(pos + 2 + length, end, name, at)
    return data[pos + 2:pos + 2 + length], pos + 2 + length


def _need(upto: int, end: int, name: str, at: int) -> None:
    if upto > end:
        raise _Broken("bad_header", f"header {name!r} runs {upto - end} bytes past the end "
                      "of the headers block", at)


def _text(data: bytes, pos: int, length: int, end: int, at: int, what: str) -> str:
    _need(pos + length, end, what, at)
    try:
        return data[pos:pos + length].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Broken("bad_header", f"a header {what} is not UTF-8 ({exc.reason})", at
                      ) from None


# -- writing frames -----------------------------------------------------------------------

_TYPE_BYTES = {"byte": 2, "short": 3, "int": 4, "long": 5, "bytes": 6, "string": 7,
               "timestamp": 8, "uuid": 9}


def encode_header(header: Header) -> bytes:
    """One header's bytes: name length, name, value type, value."""
    name = header.name.encode("utf-8")
    if header.type == "bool":
        return bytes([len(name)]) + name + bytes([0 if header.value else 1])
    type_byte = bytes([_TYPE_BYTES[header.type]])
    if header.type in _FIXED:
        value = _FIXED[header.type].pack(header.value)
    elif header.type == "uuid":
        value = header.value.bytes
    else:
        raw = header.value.encode("utf-8") if header.type == "string" else bytes(header.value)
        value = _U16.pack(len(raw)) + raw
    return bytes([len(name)]) + name + type_byte + value


def encode_frame(headers: Mapping[str, str] | Iterable[Header], payload: bytes) -> bytes:
    """One frame's bytes: `headers` (a dict of string headers, or `Header`s of any type)
    and `payload`, with both CRCs computed."""
    if isinstance(headers, Mapping):
        headers = [Header(name, "string", value) for name, value in headers.items()]
    block = b"".join(encode_header(h) for h in headers)
    total = MIN_FRAME_LENGTH + len(block) + len(payload)
    prelude = _U32.pack(total) + _U32.pack(len(block))
    prelude += _U32.pack(zlib.crc32(prelude))
    message = prelude + block + payload
    return message + _U32.pack(zlib.crc32(message))


def is_eventstream(body: bytes) -> bool:
    """Whether `body` starts with a binary event-stream frame (a prelude whose CRC holds)."""
    if len(body) < PRELUDE_LENGTH:
        return False
    return zlib.crc32(body[:8]) == int.from_bytes(body[8:12], "big")
