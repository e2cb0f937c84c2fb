"""SSE decoding, the first station: bytes in network chunks -> server-sent events.

A sans-IO decoder that follows the WHATWG "event stream interpretation"
(HTML Living Standard, section 9.2.6):

- the body is UTF-8; invalid bytes become U+FFFD; one leading BOM is dropped;
- a line ends at CR, LF or CRLF, also when the CR ends one chunk and the LF
  starts the next;
- a line starting with ``:`` is a comment; a line without a colon is a field
  name with an empty value; one space after the colon is dropped;
- ``data`` lines are joined with LF; ``id`` persists across events and is
  ignored when it contains NUL; ``retry`` counts only when all ASCII digits;
- an event is dispatched at a blank line, and only when its data buffer is
  not empty. A blank line ended by a CR dispatches at the CR, also when the
  CR is the last byte of a chunk (an idle stream never holds an event back);
  an LF that then follows completes that line end and starts no line.

How it reads, in three steps (one section of `SSEDecoder` each):

1. Feeding (`feed`). The bytes since the last blank line wait in a buffer
   until a chunk completes a blank line: a line end right after another
   (``\n\n``, ``\n\r`` or ``\r\r``; a CRLF counts as one line end, and
   ``\r\n\r`` holds ``\n\r``). Only the chunk's new bytes are searched, so
   decoding is linear in the body size whatever the chunking, including one
   huge event in tiny chunks.
2. Lines (`_read_blocks`, `_read_lines`). The buffer is cut into blocks (the
   lines between two blank lines) and each block into lines, on the raw
   bytes (CR and LF never occur inside a multi-byte UTF-8 sequence), so a
   chunk boundary inside a character changes nothing and every event knows
   its exact byte range. A buffer whose lines all end alike (LF, CRLF or a
   lone CR: what servers send) is cut with ``bytes.split``; any mix of line
   ends is cut one line at a time. Both hand each block's lines to step 3.
3. Fields (`_event`): the one place that reads a field (``data``, ``event``,
   ``id``, ``retry``, comments) and builds the event a block dispatches.

At end of stream, the bytes of an unfinished event are not dispatched (the
standard says so) but reported by `finish()` as a diagnostic with their
count and offset.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from ..diagnostics import Diagnostic

BOM = b"\xef\xbb\xbf"
_CR, _LF = 0x0D, 0x0A


class ServerSentEvent(NamedTuple):
    """One dispatched event, with where it sat in the body and when it arrived.

    `event` is the event type as the stream set it (``None`` when no
    ``event:`` field was given); `data` is the data buffer without its final
    LF; `id` is the last event ID at dispatch; `retry` the value of a valid
    ``retry:`` field in this event's lines; `start`/`end` the byte range in
    the body, from the event's first line to just past the blank line that
    dispatched it (for a CRLF blank line, just past its CR: the event is
    dispatched there, whatever the chunking, and the LF belongs to no event,
    so ranges may leave gaps); `t` the arrival time (ms) of the chunk that
    completed it.
    """

    event: str | None
    data: str
    id: str = ""
    retry: int | None = None
    start: int = 0
    end: int = 0
    t: float | None = None

    def as_dict(self) -> dict:
        """The fields printed by ``lesson-lib events --json``."""
        return {"event": self.event, "data": self.data, "id": self.id,
                "retry": self.retry, "start": self.start, "end": self.end, "t": self.t}


# Builds an event from its seven fields in order, without the keyword handling
# of ServerSentEvent's own __new__ (one is made per event).
_new_event = tuple.__new__


# -- the line ends a buffer is cut at ------------------------------------------


class _Ends(NamedTuple):
    """One kind of line end, as `_read_blocks` cuts with it."""

    raw: bytes      # the line end
    blank: bytes    # a line end then a blank line: where blocks are cut
    text: str       # the line end in the decoded text
    size: int


_LF_ENDS, _CRLF_ENDS, _CR_ENDS = (_Ends(e, e + e, e.decode(), len(e)) for e in (b"\n", b"\r\n", b"\r"))


class SSEDecoder:
    """Incremental event-stream decoder: `feed` chunks, then `finish` once.

    >>> d = SSEDecoder()
    >>> [e.data for e in d.feed(b"data: hel")], [e.data for e in d.feed(b"lo\\n\\n")]
    ([], ['hello'])
    """

    def __init__(self) -> None:
        # The bytes after the last blank line (an unfinished block, whose lines may
        # be complete; it may open with blank lines), from body offset _buffer_at.
        self._buffer = bytearray()
        self._buffer_at = 0
        self._at_start = True      # a BOM may still come: the first bytes wait in _buffer
        self._lf_owed = False      # the buffer is empty after a CR: an LF next belongs to it
        self._finished = False
        self._unusual = True       # any of the three above: the next chunk takes `_begin`
        self._last_id = ""
        self._reconnection_time: int | None = None
        self.diagnostics: list[Diagnostic] = []

    @property
    def reconnection_time(self) -> int | None:
        """The last valid ``retry:`` value read so far (``None`` before any)."""
        lines, _ = self._waiting_lines()
        self._event(lines, 0, 0, None)   # a retry line may wait in the buffer
        return self._reconnection_time

    # -- 1. feeding -------------------------------------------------------------

    def feed(self, chunk: bytes, t: float | None = None) -> list[ServerSentEvent]:
        """Consume one network chunk; return the events it completed."""
        if type(chunk) is not bytes:
            chunk = bytes(chunk)
        if self._unusual:
            chunk = self._begin(chunk)
        buffer = self._buffer
        since = len(buffer) - 1 if buffer else 0
        buffer += chunk
        # A blank line is a line end right after another: LF LF, LF CR or CR CR (a
        # CRLF is one line end, and CRLF CR holds LF CR). Only the new bytes can
        # complete one: the buffer never holds one, but for blank lines that open
        # it, which dispatch nothing.
        if chunk.find(b"\r") < 0:
            if buffer.find(b"\n\n", since) < 0:
                return []
        elif (buffer.find(b"\n\r", since) < 0 and buffer.find(b"\r\r", since) < 0
                and buffer.find(b"\n\n", since) < 0):
            return []
        return self._read_blocks(t)

    def _begin(self, chunk: bytes) -> bytes:
        """The bytes of `chunk` to read after the stream's first bytes, or after a CR
        that ended the buffer (its LF may open this chunk)."""
        if self._finished:
            raise RuntimeError("feed() after finish()")
        if self._at_start:
            # Hold back up to three bytes until we know whether they are a BOM.
            head = bytes(self._buffer) + chunk
            if len(head) < len(BOM) and BOM.startswith(head):
                self._buffer = bytearray(head)
                return b""
            self._at_start = False
            self._buffer = bytearray()
            chunk = head
            if head.startswith(BOM):
                chunk = head[len(BOM):]
                self._buffer_at = len(BOM)
        if self._lf_owed and chunk:
            self._lf_owed = False
            if chunk[0] == _LF:
                chunk = chunk[1:]
                self._buffer_at += 1
        self._unusual = self._at_start or self._lf_owed
        return chunk

    # -- 2. lines ---------------------------------------------------------------

    def _read_blocks(self, t: float | None) -> list[ServerSentEvent]:
        """Dispatch the blocks the buffer completes: when its lines all end alike,
        split it at each blank line, then each block at its line ends."""
        buffer = self._buffer
        lf_owed = False
        crs = buffer.count(b"\r")
        if not crs:
            ends = _LF_ENDS
        else:
            lfs = buffer.count(b"\n")
            if not lfs:
                ends = _CR_ENDS
            else:
                # CRLF only, but a CR that ends the buffer may be the first half of one.
                cr_last = buffer[-1] == _CR
                if lfs != crs - cr_last or buffer.count(b"\r\n") != lfs:
                    return self._read_lines(t)
                ends = _CRLF_ENDS
                lf_owed = cr_last and buffer.endswith(b"\r\n\r")
        if lf_owed:
            buffer += b"\n"   # cut as if the blank line's LF were here (it is owed below)
        _, blank, line_end, size = ends
        blocks = buffer.split(blank)
        rest = blocks.pop()       # after the last blank line: no blank line in it
        at = self._buffer_at
        out: list[ServerSentEvent] = []
        for block in blocks:
            start = at
            at += len(block) + 2 * size
            if not block:
                continue  # a blank line after a blank line
            text = block.decode("utf-8", "replace")
            if text[:size] == line_end:  # a blank line (no block) opens the run
                text = text[size:]
                start += size
            # The event ends just past the first byte of its blank line's end.
            event = self._event(text.split(line_end), start, at - size + 1, t)
            if event is not None:
                out.append(event)
        if lf_owed:   # take back the LF added above: the next chunk owes it
            if rest:    # (a blank line after the last block keeps its CR waiting)
                rest = bytearray(b"\r")
            else:
                at -= 1
        self._buffer = rest
        self._buffer_at = at
        if not rest and (lf_owed or ends is _CR_ENDS):
            self._owe_lf()
        return out

    def _read_lines(self, t: float | None) -> list[ServerSentEvent]:
        """Dispatch the blocks a buffer of mixed line ends completes, one line at a time."""
        buffer = self._buffer
        at = self._buffer_at
        out: list[ServerSentEvent] = []
        lines: list[str] = []
        first = pos = read = 0
        for raw in buffer.splitlines(keepends=True):
            if raw[-1] != _LF and raw[-1] != _CR:
                break   # the last line, not ended yet
            line = raw.rstrip(b"\r\n")
            if line:
                if not lines:
                    first = pos
                lines.append(line.decode("utf-8", "replace"))
            else:
                # A blank line: the block dispatches at the first byte of its line end.
                event = self._event(lines, at + first, at + pos + 1, t)
                if event is not None:
                    out.append(event)
                lines = []
                read = pos + len(raw)
            pos += len(raw)
        ends_with_cr = 0 < read == len(buffer) and buffer[-1] == _CR
        del buffer[:read]
        self._buffer_at = at + read
        if ends_with_cr:
            self._owe_lf()
        return out

    def _owe_lf(self) -> None:
        """The buffer is empty after a CR that ended a blank line: if the next chunk
        opens with an LF, it completes that line end (it starts no line)."""
        self._lf_owed = self._unusual = True

    # -- 3. fields ---------------------------------------------------------------

    def _event(self, lines: list[str], start: int, end: int,
               t: float | None) -> ServerSentEvent | None:
        """Read the fields of one block's lines; the event they dispatch (None when
        the data buffer stays empty). An ``id`` or ``retry`` among them takes effect."""
        event_type = None
        data: list[str] = []
        retry = None
        for line in lines:
            # The two most common lines are read without partitioning them.
            if line[:6] == "data: ":
                name, value = "data", line[6:]
            elif line[:7] == "event: ":
                name, value = "event", line[7:]
            else:
                name, colon, value = line.partition(":")   # a comment's name is ""
                if colon and value[:1] == " ":
                    value = value[1:]
            if name == "data":
                data.append(value)
            elif name == "event":
                event_type = value
            elif name == "id":
                if "\x00" not in value:
                    self._last_id = value
            elif name == "retry":
                if value.isascii() and value.isdigit():
                    retry = self._reconnection_time = int(value)
        if not data:
            return None
        return _new_event(ServerSentEvent, (
            event_type, data[0] if len(data) == 1 else "\n".join(data),
            self._last_id, retry, start, end, t))

    # -- ending ------------------------------------------------------------------

    def _waiting_lines(self) -> tuple[list[str], bytes]:
        """The complete lines waiting in the buffer (blank lines that open it left
        out), and the bytes of the unfinished line after them."""
        waiting = self._buffer.lstrip(b"\r\n")
        lines = waiting.splitlines()
        unfinished = b"" if not waiting or waiting[-1] in b"\r\n" else bytes(lines.pop())
        return [line.decode("utf-8", "replace") for line in lines], unfinished

    def finish(self) -> list[ServerSentEvent]:
        """End of stream: report (never dispatch) the bytes of an unfinished
        event in `diagnostics`. Returns no event (kept for symmetry with `feed`)."""
        if self._finished:
            return []
        self._finished = self._unusual = True
        waiting = self._buffer.lstrip(b"\r\n")
        if not waiting:
            return []
        offset = self._buffer_at + len(self._buffer) - len(waiting)
        count = len(waiting)
        lines, unfinished = self._waiting_lines()
        # Read as the standard would (an id or retry takes effect), but not dispatched.
        has_data = (self._event(lines, 0, 0, None) is not None
                    or unfinished.lstrip().startswith(b"data"))
        what = "an event with data" if has_data else "lines that never formed an event"
        self.diagnostics.append(Diagnostic(
            code="undispatched_bytes",
            message=(f"stream ended inside {what}: {count} bytes from offset {offset} "
                     "were never followed by a blank line, so they were not dispatched"),
            severity="error" if has_data else "warning",
            offset=offset,
            extra={"count": count, "has_data": has_data},
        ))
        return []


def decode(chunks: Iterable[bytes | tuple[bytes, float | None]]
           ) -> tuple[list[ServerSentEvent], list[Diagnostic]]:
    """Decode a whole body given as chunks (or (chunk, arrival ms) pairs)."""
    decoder = SSEDecoder()
    events: list[ServerSentEvent] = []
    for item in chunks:
        chunk, t = item if isinstance(item, tuple) else (item, None)
        events.extend(decoder.feed(chunk, t))
    events.extend(decoder.finish())
    return events, decoder.diagnostics


def event_end(body: bytes, end: int) -> int:
    """Where an event of `body` that the decoder reported as ending at `end` really ends:
    a CRLF blank line dispatches at its CR, so its LF, right after, is the event's too."""
    return end + 1 if body[end - 1:end] == b"\r" and body[end:end + 1] == b"\n" else end
