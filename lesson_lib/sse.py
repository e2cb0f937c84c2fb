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

Lines are split on the raw bytes (CR and LF never occur inside a multi-byte
UTF-8 sequence), and each complete line is decoded on its own, so a chunk
boundary inside a character changes nothing and every event knows its exact
byte range. Each chunk is scanned once: decoding is linear in the body size
whatever the chunking, including one huge event in tiny chunks.

Two paths give the same events. A stream whose line ends are all of one
kind (LF, CRLF or a lone CR: what servers send) is read a block at a time:
the bytes since the last blank line wait unread until a chunk brings the
next blank line (``\n\n``, ``\r\n\r``, ``\r\r``), and then every block it
completed is split out at once and its lines read together. A CRLF blank
line dispatches at its CR, so a chunk that ends there completes its block
at once, and the LF due next is taken as the start of the next chunk; a
CR that ends a chunk inside a block waits for the next chunk to say whether
an LF joins it. A chunk that does not fit the stream's kind (a lone CR in a
CRLF stream, an LF in a CR one, any mix), the first bytes and their BOM, and
a block begun there go line by line; the decoder hands back to the block
path at the first blank line it meets, guessing the kind from the bytes it
has just read (each chunk is checked as it comes: in a CRLF stream no CR
or LF may be left once its CRLFs are taken out, in a CR one no LF may
appear; so a wrong guess costs one look at the chunk).

At end of stream, the bytes of an unfinished event are not dispatched (the
standard says so) but reported by `finish()` as a diagnostic with their
count and offset.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from .diagnostics import Diagnostic

BOM = b"\xef\xbb\xbf"
_CR, _LF = 0x0D, 0x0A
_LF_ONLY, _CRLF, _CR_ONLY = "\n", "\r\n", "\r"   # the line end of a block-path stream
# For each: the bytes that end a block, a line end's size, a block's step, an event's end.
_SHAPES = {ends: (ends.encode() * 2, len(ends), 2 * len(ends), len(ends) - 1)
           for ends in (_LF_ONLY, _CRLF, _CR_ONLY)}


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
# of ServerSentEvent's own __new__ (the block path makes one per event).
_new_event = tuple.__new__


class SSEDecoder:
    """Incremental event-stream decoder: `feed` chunks, then `finish` once.

    >>> d = SSEDecoder()
    >>> [e.data for e in d.feed(b"data: hel")], [e.data for e in d.feed(b"lo\\n\\n")]
    ([], ['hello'])
    """

    def __init__(self) -> None:
        self._pending = bytearray()   # bytes of the current, unfinished line
        self._pos = 0                 # body offset of the next byte to arrive
        self._line_start = 0          # body offset of the first byte in _pending
        self._skip_lf = False         # the last line ended with CR: a leading LF belongs to it
        self._bom_checked = False
        self._event_start: int | None = None  # offset of the current block's first line
        self._data: list[str] = []
        self._has_data = False
        self._type: str | None = None
        self._last_id = ""
        self._retry: int | None = None
        self._finished = False
        # The block path is on: no BOM question, and _pending holds unread bytes
        # from a block start (offset _pending_start), which may hold complete
        # lines but never a whole block. _ends is the stream's line end there.
        # CRLF: _lf_due, the last blank line's LF has not arrived yet (it is
        # counted in _pending_start); _crlf_edge, that or _pending ends with a CR.
        self._plain = False
        self._lf_plain = False        # the block path of an LF stream (the hot case)
        self._ends = _LF_ONLY
        self._lf_due = False
        self._crlf_edge = False
        self._pending_start = 0
        self._reconnection_time: int | None = None
        self.diagnostics: list[Diagnostic] = []

    @property
    def reconnection_time(self) -> int | None:
        """The last valid ``retry:`` value read so far (``None`` before any)."""
        self._settle()  # a retry line may wait unread in the block path
        return self._reconnection_time

    # -- feeding -----------------------------------------------------------

    def feed(self, chunk: bytes, t: float | None = None) -> list[ServerSentEvent]:
        """Consume one network chunk; return the events it completed."""
        if type(chunk) is not bytes:
            chunk = bytes(chunk)
        if self._lf_plain:
            if b"\r" not in chunk:
                pending = self._pending
                k = len(pending)
                pending += chunk
                # Only a new "\n\n" completes a block; it may straddle the old end.
                if pending.find(b"\n\n", k and k - 1) < 0:
                    return []
                return self._blocks(t, _LF_ONLY)
        elif self._plain:
            if self._ends is _CRLF:
                if not self._crlf_edge:
                    rest = chunk.replace(b"\r\n", b"")
                    if b"\r" not in rest and b"\n" not in rest:
                        # The common chunk: whole CRLFs only, none cut at either end.
                        pending = self._pending
                        k = len(pending)
                        pending += chunk
                        if pending.find(b"\r\n\r", k - 2 if k > 2 else 0) < 0:
                            return []
                        return self._blocks(t, _CRLF)
                out = self._crlf_blocks(chunk, t)
            else:
                out = self._cr_blocks(chunk, t)
            if out is not None:
                return out
        return self._feed_any(chunk, t)

    def _block_path(self, chunk: bytes, t: float | None) -> list[ServerSentEvent] | None:
        """The events of a chunk on the block path; None (nothing taken) when the
        chunk has a line end of another kind than the stream's."""
        ends = self._ends
        if ends is _LF_ONLY:
            if b"\r" in chunk:
                return None
            self._pending += chunk
            return self._blocks(t, _LF_ONLY)
        if ends is _CRLF:
            return self._crlf_blocks(chunk, t)   # (the edge path reads any CRLF chunk)
        return self._cr_blocks(chunk, t)

    def _crlf_blocks(self, chunk: bytes, t: float | None) -> list[ServerSentEvent] | None:
        """The block path of a CRLF stream; None (nothing taken) when the chunk has
        another line end: a CR without its LF, or an LF without its CR."""
        pending = self._pending
        body = chunk
        if self._lf_due and chunk:
            if chunk[0] != _LF:
                return None
            body = chunk[1:]
        if body:
            cr_before = pending[-1:] == b"\r"     # its LF must open this chunk
            if cr_before and body[0] != _LF:
                return None
            pairs = body.count(b"\r\n")
            if (body.count(b"\n") != pairs + cr_before
                    or body.count(b"\r") != pairs + (body[-1] == _CR)):
                return None
        if chunk:
            self._lf_due = False
        k = len(pending)
        pending += body
        # Only a new blank line (its CR) completes a block; it may straddle the old end.
        if pending.find(b"\r\n\r", k - 2 if k > 2 else 0) < 0:
            self._crlf_edge = self._lf_due or pending.endswith(b"\r")
            return []
        if pending.endswith(b"\r\n\r"):
            # The chunk ends at a blank line's CR: dispatch now, its LF is due next.
            pending += b"\n"
            self._lf_due = True
        out = self._blocks(t, _CRLF)
        self._crlf_edge = self._lf_due or self._pending.endswith(b"\r")
        return out

    def _cr_blocks(self, chunk: bytes, t: float | None) -> list[ServerSentEvent] | None:
        """The block path of a stream whose lines end with a lone CR; None (nothing
        taken) when the chunk holds an LF."""
        if b"\n" in chunk:
            return None
        if not chunk:
            return []
        pending = self._pending
        k = len(pending)
        pending += chunk
        if pending.find(b"\r\r", k and k - 1) < 0:
            return []
        return self._blocks(t, _CR_ONLY)

    def _blocks(self, t: float | None, ends: str) -> list[ServerSentEvent]:
        """The block path: read every block that _pending completes, its lines
        ending with `ends`."""
        # An event ends just past the first byte of its blank line's end: `back` bytes
        # before the next block.
        blank, size, step, back = _SHAPES[ends]
        blocks = self._pending.split(blank)
        self._pending = blocks.pop()
        offset = self._pending_start
        out: list[ServerSentEvent] = []
        for block in blocks:
            start = offset
            offset += len(block) + step
            if not block:
                continue  # a blank line after a blank line
            text = block.decode("utf-8", "replace")
            if text[:size] == ends:  # a blank line (no block) opens the run
                text = text[size:]
                start += size
            event = None
            data: list[str] | None = None
            retry = None
            for line in text.split(ends):
                if line[:6] == "data: ":
                    if data is None:
                        data = [line[6:]]
                    else:
                        data.append(line[6:])
                elif line[:7] == "event: ":
                    event = line[7:]
                elif line[:1] == ":":
                    continue
                else:
                    name, colon, value = line.partition(":")
                    if colon and value[:1] == " ":
                        value = value[1:]
                    if name == "data":
                        if data is None:
                            data = [value]
                        else:
                            data.append(value)
                    elif name == "event":
                        event = value
                    elif name == "id":
                        if "\x00" not in value:
                            self._last_id = value
                    elif name == "retry":
                        if value and value.isascii() and value.isdigit():
                            retry = self._reconnection_time = int(value)
            if data is not None:
                out.append(_new_event(ServerSentEvent, (
                    event, data[0] if len(data) == 1 else "\n".join(data),
                    self._last_id, retry, start, offset - back, t)))
        self._pending_start = offset
        return out

    def _settle(self) -> None:
        """Leave the block path: read the complete lines waiting in _pending
        one by one, so the line-by-line state holds them."""
        if not self._plain:
            return
        self._plain = self._lf_plain = False
        self._crlf_edge = False
        if self._lf_due:
            # The last blank line ended at its CR: its LF, if it comes, belongs to it.
            self._lf_due = False
            self._pending_start -= 1
            self._skip_lf = True
        pending = self._pending
        self._pos = self._pending_start + len(pending)
        self._pending = bytearray()
        out: list[ServerSentEvent] = []
        if self._ends is _LF_ONLY:
            i = self._feed_lf_only(bytes(pending), 0, self._pending_start, None, out)
        else:
            i = self._feed_general(bytes(pending), 0, self._pending_start, None, out)
        # _pending holds no whole block, so no event can be dispatched here.
        assert not out
        if i < len(pending):
            self._line_start = self._pending_start + i
            self._pending = pending[i:]

    def _feed_any(self, data: bytes, t: float | None) -> list[ServerSentEvent]:
        if self._finished:
            raise RuntimeError("feed() after finish()")
        self._settle()
        out: list[ServerSentEvent] = []
        base = self._pos
        self._pos += len(data)
        start = 0
        if not self._bom_checked:
            # Hold back up to three bytes until we know whether they are a BOM.
            head = bytes(self._pending) + data
            if len(head) < len(BOM) and BOM.startswith(head):
                self._pending = bytearray(head)
                return out
            self._bom_checked = True
            if head.startswith(BOM):
                skip = len(BOM) - len(self._pending)
                self._pending.clear()
                self._line_start = len(BOM)
                start = skip
            else:
                data = head
                base -= len(self._pending)
                self._pending.clear()
        if self._skip_lf and start < len(data):
            if data[start] == _LF:
                start += 1
            self._skip_lf = False
        n = len(data)
        if data.find(b"\r", start) >= 0:
            i = self._feed_general(data, start, base, t, out, stop=True)
            if i < n and self._event_start is None and not self._skip_lf:
                # Past the first blank line: the rest of the chunk may take the block path.
                self._pos = base + i
                rest = data[i:]
                self._enter_blocks(rest)
                more = self._block_path(rest, t)
                if more is not None:
                    out += more
                    return out
                self._settle()          # it did not fit: nothing was taken
                self._pos = base + n
                i = self._feed_general(data, i, base, t, out)
        else:
            last_blank = data.rfind(b"\n\n", start)
            if last_blank >= 0 and not self._skip_lf:
                # Lines up to the last blank line here, then the block path.
                self._feed_lf_only(data[:last_blank + 2], start, base, t, out)
                self._pending = bytearray(data[last_blank + 2:])
                self._pending_start = base + last_blank + 2
                self._plain = self._lf_plain = True
                self._ends = _LF_ONLY
                return out
            i = self._feed_lf_only(data, start, base, t, out)
        if i < n:
            if not self._pending:
                self._line_start = base + i
            self._pending += data[i:]
        if self._bom_checked and self._event_start is None:
            # Between blocks: what is left is the start of the next one.
            self._enter_blocks(data)
        return out

    def _enter_blocks(self, seen: bytes) -> None:
        """Take the block path between two blocks, for a stream whose line ends are
        guessed from the bytes just `seen` (each chunk is checked as it comes)."""
        if b"\r" not in seen:
            if self._skip_lf:
                return          # an LF may still join the last CR: the LF path cannot say
            ends = _LF_ONLY
        elif b"\n" not in seen:
            ends = _CR_ONLY
        else:
            ends = _CRLF
        self._pending_start = self._pos - len(self._pending)
        self._ends = ends
        self._lf_due = self._crlf_edge = False
        if self._skip_lf:
            # The last line was a blank one ended by a CR at the end of the chunk.
            self._skip_lf = False
            if ends is _CRLF:
                self._lf_due = self._crlf_edge = True   # counted as if it came
                self._pending_start += 1
            # (In a CR stream an LF that then joins that CR could only end one more
            # blank line, which changes nothing.)
        self._plain = True
        self._lf_plain = ends is _LF_ONLY

    def _feed_lf_only(self, data: bytes, i: int, base: int, t: float | None,
                      out: list[ServerSentEvent]) -> int:
        """The common case, a chunk with no CR: split on LF once, handle the
        frequent lines (``data: ``, ``event: ``, blank) inline."""
        lines = data[i:].split(b"\n") if i else data.split(b"\n")
        lines.pop()  # the bytes after the last LF: an unfinished line (maybe empty)
        if self._pending and lines:
            # The first line began in the bytes just before this chunk: count from there.
            i -= len(self._pending)
            lines[0] = bytes(self._pending + lines[0])
            self._pending.clear()
        for raw in lines:
            line_start = i
            i += len(raw) + 1
            if not raw:
                if self._has_data:
                    out.append(ServerSentEvent(
                        self._type, "\n".join(self._data), self._last_id, self._retry,
                        self._event_start, base + i, t))
                    self._data = []
                    self._has_data = False
                self._type = None
                self._retry = None
                self._event_start = None
                continue
            if self._event_start is None:
                self._event_start = base + line_start
            if raw.startswith(b"data: "):
                self._data.append(raw[6:].decode("utf-8", "replace"))
                self._has_data = True
            elif raw.startswith(b"event: "):
                self._type = raw[7:].decode("utf-8", "replace")
            else:
                self._field(raw)
        return i

    def _feed_general(self, data: bytes, i: int, base: int, t: float | None,
                      out: list[ServerSentEvent], stop: bool = False) -> int:
        """Any mix of CR, LF and CRLF, including a CR that ends the chunk; with
        `stop`, only up to the end of the first blank line."""
        n = len(data)
        while i < n:
            cr = data.find(b"\r", i)
            lf = data.find(b"\n", i)
            if cr < 0 and lf < 0:
                break
            end = lf if cr < 0 or (0 <= lf < cr) else cr
            if self._pending:
                self._pending += data[i:end]
                line = bytes(self._pending)
                self._pending.clear()
            else:
                line = data[i:end]
                self._line_start = base + i
            nxt = end + 1
            if data[end] == _CR:
                if nxt < n:
                    if data[nxt] == _LF:
                        nxt += 1
                else:
                    self._skip_lf = True
            # A line's end is taken after its first end byte: for a CRLF blank
            # line that is the CR, whether or not the LF is in this chunk.
            event = self._line(line, self._line_start, base + end + 1, t)
            if event is not None:
                out.append(event)
            i = nxt
            self._line_start = base + i
            if stop and not line:
                break
        return i

    def _line(self, raw: bytes, line_start: int, line_end: int,
              t: float | None) -> ServerSentEvent | None:
        if not raw:
            return self._blank_line(line_end, t)
        if self._event_start is None:
            self._event_start = line_start
        self._field(raw)
        return None

    def _field(self, raw: bytes) -> None:
        """One non-blank line: a comment or a field."""
        line = raw.decode("utf-8", "replace")
        if line[0] == ":":
            return None
        name, colon, value = line.partition(":")
        if colon and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._has_data = True
        elif name == "event":
            self._type = value
        elif name == "id":
            if "\x00" not in value:
                self._last_id = value
        elif name == "retry":
            if value and value.isascii() and value.isdigit():
                self._retry = int(value)
                self._reconnection_time = self._retry
        return None

    def _blank_line(self, line_end: int, t: float | None) -> ServerSentEvent | None:
        start = self._event_start if self._event_start is not None else line_end
        event = None
        if self._has_data:
            event = ServerSentEvent(event=self._type, data="\n".join(self._data),
                                    id=self._last_id, retry=self._retry,
                                    start=start, end=line_end, t=t)
        self._data = []
        self._has_data = False
        self._type = None
        self._retry = None
        self._event_start = None
        return event

    # -- ending ------------------------------------------------------------

    def finish(self) -> list[ServerSentEvent]:
        """End of stream: report (never dispatch) the bytes of an unfinished
        event in `diagnostics`. Returns no event (kept for symmetry with `feed`)."""
        if self._finished:
            return []
        self._settle()
        self._finished = True
        self.diagnostics.extend(self._undispatched())
        return []

    def _undispatched(self) -> list[Diagnostic]:
        if not self._bom_checked and self._pending:
            self._bom_checked = True  # fewer than three bytes, all a BOM prefix
        starts = [s for s in (self._event_start,) if s is not None]
        if self._pending:
            starts.append(self._line_start)
        if not starts:
            return []
        offset = min(starts)
        count = self._pos - offset
        has_data = self._has_data or self._pending.lstrip().startswith(b"data")
        what = "an event with data" if has_data else "lines that never formed an event"
        return [Diagnostic(
            code="undispatched_bytes",
            message=(f"stream ended inside {what}: {count} bytes from offset {offset} "
                     "were never followed by a blank line, so they were not dispatched"),
            severity="error" if has_data else "warning",
            offset=offset,
            extra={"count": count, "has_data": bool(has_data)},
        )]


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
