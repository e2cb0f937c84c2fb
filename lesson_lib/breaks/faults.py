"""Faults: broken streams derived from good captures, for tests and lesson 5.

Each function takes a `Capture` and returns a new one, leaving the original
alone. The new capture has a new body and a sidecar adjusted to match:

- ``chunks``: chunk ends beyond the new body are dropped or trimmed, ends
  after an edit move with it, and each chunk keeps its arrival time;
- ``fault``: ``{"kind": ..., "at": ...}``, what was broken and where (a byte
  offset, or an event index);
- ``demonstrates``: one line saying what was broken, and in what;
- ``sdk`` (what the official SDK did with the good bytes) is dropped when
  the bytes change, since it no longer describes them.

The faults imitate what really happens to streams in transit:

=====================  ======================================================
`cut_at`               the connection dies at a byte offset
`drop_at`              the same bytes, but the connection is broken, not ended (a socket
                       tells the two apart: see `drop_at`)
`inject_error`         the provider reports an in-band error mid-stream
`drop_terminal`        the stream stops just before its terminal event
`split_character`      a network chunk ends inside a multi-byte character
`corrupt_json`         one event's JSON payload arrives damaged
`duplicate`            one event arrives twice (a retrying proxy, a replayed buffer), or
                       again later (`redeliver`: at-least-once delivery)
`swap`                 two adjacent events arrive in each other's place
`stall`                the stream goes silent for a while, then resumes (timing only)
=====================  ======================================================

A duplicated or swapped event is not always visible: the wire must carry
something that shows the order. `lesson_lib.breaks.visibility` decides, per
capture and event, whether it does; where it does, the accumulator must say
so in a diagnostic. Where no wire can show it:

==================  =============================================================
wire                what a duplicate or a swap leaves no trace of
==================  =============================================================
Anthropic           a repeated ``content_block_delta`` (the text is doubled; a
                    doubled argument fragment usually breaks the tool's JSON,
                    which shows only as invalid input), a
                    repeated ``ping`` or ``message_delta`` (usage is cumulative,
                    the repeat overwrites with the same values); two deltas of one
                    block swapped (the text is scrambled), a ``ping`` swapped with
                    anything, two ``message_delta`` swapped
Responses           nothing, while events carry ``sequence_number``; in older
                    streams without it, a repeated or swapped ``*.delta`` (the
                    text is doubled or scrambled)
Chat                a repeated or swapped content, refusal or arguments chunk:
                    chunks carry no number, so the text is doubled or scrambled;
                    two whole calls' openings swapped at a reused index (they
                    read as the calls made in the other order). A repeated
                    ``finish_reason``, tool-call opening or ``[DONE]``, a delta
                    moved after its choice's ``finish_reason`` and a fragment
                    moved before its call's opening are visible
Managed Agents      a repeated preview fragment (``event_start``, ``event_delta``
                    carry no id of their own); every event with an ``id`` comes
                    again as a noted ``duplicate_event``. A swap: no reader
OpenAI sessions     only a repeated event without an ``event_id`` (every event
                    of the corpus has one, so each repeat is a noted
                    ``duplicate_event``). A swap: no reader
==================  =============================================================

They are pure: bytes and dicts in, a `Capture` out; no file is written.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any

from .. import wires
from ..capture.captures import Capture, from_bytes
from ..sse.decoder import event_end as sse_event_end
from ..wires.wire_events import DONE, WireEvent, parse_all

__all__ = ["FaultError", "corrupt_json", "cut_at", "drop_at", "drop_terminal",
           "duplicate", "ends_broken", "inject_error", "redeliver", "split_character", "stall",
           "swap"]


class FaultError(ValueError):
    """The fault cannot be applied to this capture (no such event, nothing to break)."""


# -- the faults ----------------------------------------------------------------


def cut_at(capture: Capture, offset: int) -> Capture:
    """The connection dies after `offset` bytes of the body.

    Imitates a dropped TCP connection, a proxy or load balancer timing out,
    or a client closing the stream: the body simply stops, wherever that
    falls (inside an event, a line, a JSON string or a UTF-8 character).
    An offset at or past the end leaves the body whole.
    """
    if offset < 0:
        raise FaultError(f"offset must be at least 0, not {offset}")
    offset = min(offset, len(capture.body))
    return _splice(capture, offset, len(capture.body), b"", kind="cut_at", at=offset,
                   what=f"the connection dies after byte {offset} of {len(capture.body)}")


def drop_at(capture: Capture, offset: int) -> Capture:
    """The connection breaks after `offset` bytes of the body.

    The bytes are those of `cut_at`; what differs is how the body ends on a
    socket. A cut ends the HTTP body properly (the last chunk of a chunked
    body is sent), so curl exits 0 and the SDKs raise nothing. A drop
    abandons the connection in the middle of the body, as a crashed server
    or a reset does: curl exits 18 and httpx2 (under both SDKs) raises
    ``RemoteProtocolError``, which both SDKs raise as their ``APIConnectionError``.
    Replayed offline, the two are the same capture;
    `ends_broken` tells the server which one to send.
    """
    if offset < 0:
        raise FaultError(f"offset must be at least 0, not {offset}")
    offset = min(offset, len(capture.body))
    return _splice(capture, offset, len(capture.body), b"", kind="drop_at", at=offset,
                   what=f"the connection breaks after byte {offset} of {len(capture.body)}")


def ends_broken(capture: Capture) -> bool:
    """Whether a server must break the connection after the body (a `drop_at` capture)."""
    return (capture.sidecar.get("fault") or {}).get("kind") == "drop_at"


def inject_error(capture: Capture, after_event: int,
                 payload: dict[str, Any] | None = None) -> Capture:
    """An in-band error event arrives after event `after_event`; nothing follows it.

    Imitates a provider failing mid-stream after HTTP 200 (Anthropic's
    ``overloaded_error``, an OpenAI ``server_error``): the error comes in the
    wire's own shape (Anthropic ``event: error``; Responses ``event: error``
    with a nested ``error`` object; Chat a ``data:`` payload with a
    top-level ``"error"``; Bedrock an exception frame) and the server then
    closes the stream, so every byte after the error is gone. `payload`
    replaces the default error. What it says is the wire's (its module's
    ``ERROR_EXAMPLE``, fitted by its entry's `error_after`); how it is
    written, its framing's (`lesson_lib.wires.in_band`, or its entry's
    `write_error`).
    """
    events = _events(capture)
    ev = _event(events, after_event)
    wire = capture.wire or ""
    module, entry = wires.WIRES.get(wire), wires.ENTRIES.get(wire)
    write = entry.error_writer() if entry is not None else None
    if payload is None:
        example = getattr(module, "ERROR_EXAMPLE", None)
        if entry is None or not isinstance(example, dict):
            raise FaultError(f"no in-band error shape for wire {wire!r}")
        payload = copy.deepcopy(example)
        fit = entry.part("error_after")
        if fit is not None:
            payload = fit(payload, events[:after_event + 1])
    if write is None:
        raise FaultError(f"no way to write an in-band error on wire {wire!r}: its entry "
                         "names no write_error and its framing has none")
    block = write(payload, module, _newline(capture.body, ev))
    return _splice(capture, ev.sse.end, len(capture.body), block, kind="inject_error",
                   at=after_event,
                   what=f"an in-band error after event {after_event}, then the stream ends")


def drop_terminal(capture: Capture) -> Capture:
    """The stream loses its terminal event (``message_stop``,
    ``response.completed`` / ``response.incomplete``, ``[DONE]``).

    Imitates a stream cut exactly between events, just before the end: the
    text may look finished and every block closed, but the wire never said
    it was done, so it must be treated as cut.
    """
    events = _events(capture)
    module = wires.WIRES.get(capture.wire or "")
    if module is None:
        raise FaultError(f"no terminal event is known for wire {capture.wire!r}")
    found = [e for e in events if e.type in module.TERMINALS]
    if not found:
        raise FaultError(f"{capture.key}: has no terminal event to drop")
    result = capture
    # Remove from the last one back, so earlier offsets stay valid.
    for ev in reversed(found):
        result = _splice(result, ev.sse.start, ev.sse.end, b"", kind="drop_terminal",
                         at=ev.index, what=f"the terminal event {ev.type} (event {ev.index}) "
                                            "is missing", original=capture)
    if len(found) > 1:
        result.sidecar["fault"]["at"] = [e.index for e in found]
    return result


def split_character(capture: Capture, occurrence: int = 0) -> Capture:
    """Re-chunk so one network chunk ends inside a multi-byte UTF-8 character.

    Imitates TCP and HTTP chunking, which cut bytes, not characters: an
    emoji or accented letter arrives half in one read and half in the next.
    Only the chunking changes; the body is the same bytes, so a correct
    decoder gives the same events and the same final object. `occurrence`
    picks which multi-byte character (0: the first) is split, after its
    first byte.
    """
    body = capture.body
    # The lead bytes of multi-byte sequences (0b11xxxxxx), in order.
    leads = (pos for pos, byte in enumerate(body) if byte >= 0xC0)
    pos = next(itertools.islice(leads, occurrence, None), None) if occurrence >= 0 else None
    if pos is None:
        raise FaultError(f"{capture.key}: no multi-byte UTF-8 character "
                         f"number {occurrence} to split")
    split = pos + 1
    ends, times = _chunking(capture)
    if split not in ends:
        i = next(i for i, e in enumerate(ends) if e > split)
        ends.insert(i, split)
        times.insert(i, times[i])   # the first half arrives with the chunk it was part of
    sidecar = _sidecar(capture, ends, times, kind="split_character", at=split,
                       what=f"a network chunk ends inside the character at byte {pos}")
    return from_bytes(body, name=_name(capture, "split-character"), sidecar=sidecar)


def corrupt_json(capture: Capture, event_index: int) -> Capture:
    """Event `event_index`'s JSON payload loses its final closing brace.

    Imitates a payload damaged on its way: a buggy proxy or gateway that
    truncates a long line, a server that writes malformed JSON. The event
    is still framed (it dispatches) but its data no longer parses: the
    framing writes the damaged payload again (`lesson_lib.wires.damaged_json`,
    or the wire's entry's `damage_json`), so a binary frame keeps lengths and
    CRCs that hold. A wire whose framing has no such writer is refused: a
    deleted byte there could break the frame rather than the JSON.
    """
    events = _events(capture)
    ev = _event(events, event_index)
    if ev.parse_error is not None or ev.type == DONE or ev.payload is None:
        raise FaultError(f"event {event_index} has no JSON payload to corrupt")
    entry = wires.ENTRIES.get(capture.wire or "")
    damage = entry.json_damager() if entry is not None else None
    if damage is None:
        raise FaultError(f"no way to damage one event's JSON on wire {capture.wire!r}: its "
                         "entry names no damage_json and its framing has none")
    start, stop = ev.sse.start, ev.sse.end
    damaged = damage(capture.body[start:stop])
    if damaged is None:
        raise FaultError(f"event {event_index}'s payload is not a JSON object")
    # Only the bytes that changed are replaced, so chunk ends elsewhere in the event stay.
    old = capture.body[start:stop]
    head = _common(old, damaged)
    tail = _common(old[head:][::-1], damaged[head:][::-1])
    new = damaged[head:len(damaged) - tail]
    where = (f"byte {start + head}" if not new and stop - tail - start - head == 1
             else f"its frame at byte {start} written again around it")
    return _splice(capture, start + head, stop - tail, new, kind="corrupt_json",
                   at=event_index,
                   what=f"event {event_index}'s JSON payload lost its closing brace ({where})")


def stall(capture: Capture, ms: float, after_chunk: int | None = None) -> Capture:
    """The stream goes silent for `ms` milliseconds after chunk `after_chunk`, then resumes.

    Imitates a provider or proxy that stops sending mid-stream (a slow tool
    on the server side, a congested link) while the connection stays open:
    a client without an idle timeout simply waits. Only the timing changes:
    every chunk after `after_chunk` (default: the middle chunk) arrives `ms`
    later; the bytes and their chunking are the same, so the events, the
    final object and the SDK's verdict are too.
    """
    if not ms >= 0:
        raise FaultError(f"a stall lasts at least 0 ms, not {ms}")
    ends, times = _chunking(capture)
    if after_chunk is None:
        after_chunk = (len(ends) - 1) // 2
    if not 0 <= after_chunk < len(ends):
        raise FaultError(f"no chunk {after_chunk}: the body has {len(ends)} chunks")
    if any(t is None for t in times):
        raise FaultError(f"{capture.key}: has no chunk timing to stall")
    times = [t if i <= after_chunk else round(t + ms, 1) for i, t in enumerate(times)]
    sidecar = _sidecar(capture, ends, times, kind="stall", at=after_chunk,
                       what=f"the stream goes silent for {ms:g} ms after chunk {after_chunk}")
    if "sdk" in capture.sidecar:   # same bytes: the SDK's verdict still holds
        sidecar["sdk"] = copy.deepcopy(capture.sidecar["sdk"])
    sidecar["fault"]["ms"] = ms
    return from_bytes(capture.body, name=_name(capture, "stall"), sidecar=sidecar)


def duplicate(capture: Capture, event_index: int, later: int = 0) -> Capture:
    """Event `event_index` arrives twice: an exact copy follows it, or follows the event
    `later` events after it (delivered again, later).

    Imitates a proxy or client that retries a read and replays a buffer it
    had already passed on, a server that re-sends after a hiccup, or a stream
    that delivers at least once (the vendors' agent sessions: after a
    reconnect, events already seen come again). The copy is byte for byte
    the same event (same ``sequence_number``, same ``id``, same index), so
    only what the wire numbers or names can reveal it.
    """
    events = _events(capture)
    ev = _event(events, event_index)
    if later < 0:
        raise FaultError(f"a copy arrives after its event, not {later} events before it")
    after = _event(events, event_index + later)
    end = _ender(capture)
    raw = capture.body[ev.sse.start:end(capture.body, ev.sse.end)]
    at = end(capture.body, after.sse.end)
    when = "twice" if not later else f"again after event {after.index}"
    out = _splice(capture, at, at, raw, kind="duplicate",
                  at=event_index, what=f"event {event_index} ({ev.type}) arrives {when}")
    if later:
        out.sidecar["fault"]["later"] = later
    return out


def redeliver(capture: Capture, event_index: int) -> Capture:
    """Event `event_index` is delivered again just before the stream's last event (the
    at-least-once delivery of a session stream; ``serve``'s ``duplicate:N``); right after
    itself when it is the last but one or the last."""
    events = _events(capture)
    _event(events, event_index)
    return duplicate(capture, event_index, later=max(0, len(events) - 2 - event_index))


def swap(capture: Capture, event_index: int) -> Capture:
    """Events `event_index` and `event_index + 1` arrive in each other's place.

    Imitates a multiplexing proxy or a buggy server that reorders writes:
    both events arrive, whole, in the wrong order. Bytes between the two
    events (the LF of a CRLF blank line) stay where they were.
    """
    events = _events(capture)
    first = _event(events, event_index)
    second = _event(events, event_index + 1)
    body = capture.body
    new = (body[second.sse.start:second.sse.end] + body[first.sse.end:second.sse.start]
           + body[first.sse.start:first.sse.end])
    return _splice(capture, first.sse.start, second.sse.end, new, kind="swap",
                   at=event_index,
                   what=f"events {event_index} ({first.type}) and {event_index + 1} "
                        f"({second.type}) arrive swapped")


# -- the shared plumbing -----------------------------------------------------------


def _events(capture: Capture) -> list[WireEvent]:
    if capture.status >= 300:
        raise FaultError(f"{capture.key}: HTTP {capture.status}, there are no events to break")
    return parse_all(capture.events)


def _event(events: list[WireEvent], index: int) -> WireEvent:
    if not 0 <= index < len(events):
        raise FaultError(f"no event {index}: the stream has {len(events)} events")
    return events[index]


def _newline(body: bytes, ev: WireEvent) -> bytes:
    raw = body[ev.sse.start:ev.sse.end]
    if b"\r\n" in raw:
        return b"\r\n"
    if b"\r" in raw:
        return b"\r"
    return b"\n"


def _ender(capture: Capture):
    """Where an event of this capture really ends, from the end its decoder reported (the
    framing's: an SSE CRLF blank line's LF, nothing after a binary frame)."""
    entry = wires.ENTRIES.get(capture.wire or "")
    return entry.event_ender() if entry is not None else sse_event_end


def _common(a: bytes, b: bytes) -> int:
    """How many leading bytes `a` and `b` share."""
    return next((i for i, (x, y) in enumerate(zip(a, b, strict=False))
                 if x != y), min(len(a), len(b)))


def _chunking(capture: Capture) -> tuple[list[int], list[float | None]]:
    return list(capture.chunk_ends), list(capture.chunk_times)


def _splice(capture: Capture, start: int, stop: int, new: bytes, *, kind: str, at: Any,
            what: str, original: Capture | None = None) -> Capture:
    """Replace ``body[start:stop]`` by `new`, moving the chunk ends with the edit.

    An end before the edit stays; an end after it shifts by the change in
    length; an end inside it moves to the end of the new bytes. When several
    ends land on one offset, the first keeps its time (the chunk that held
    the first changed byte arrived then).
    """
    body = capture.body[:start] + new + capture.body[stop:]
    shift = len(new) - (stop - start)
    ends: list[int] = []
    times: list[float | None] = []
    for end, t in zip(*_chunking(capture), strict=True):
        if end <= start:
            moved = end
        elif end >= stop:
            moved = end + shift
        else:
            moved = start + len(new)
        if moved <= 0 or (ends and moved <= ends[-1]):
            continue
        ends.append(moved)
        times.append(t)
    if body and (not ends or ends[-1] < len(body)):
        ends.append(len(body))
        times.append(times[-1] if times else None)
    sidecar = _sidecar(original or capture, ends, times, kind=kind, at=at, what=what)
    return from_bytes(body, name=_name(original or capture, kind.replace("_", "-")),
                      sidecar=sidecar)


def _sidecar(capture: Capture, ends: list[int], times: list[float | None], *, kind: str,
             at: Any, what: str) -> dict[str, Any]:
    sidecar = copy.deepcopy(capture.sidecar)
    if capture.wire and not sidecar.get("wire"):
        sidecar["wire"] = capture.wire
    chunks = dict(sidecar.get("chunks") or {})
    chunks["ends"] = ends
    if "t_ms" in chunks or any(t is not None for t in times):
        chunks["t_ms"] = times
    sidecar["chunks"] = chunks
    if kind != "split_character":
        # The SDK's verdict was on the good bytes; it says nothing about these.
        sidecar.pop("sdk", None)
    sidecar["fault"] = {"kind": kind, "at": at}
    sidecar["demonstrates"] = f"Broken on purpose ({kind}): {what}, in {capture.key}."
    return sidecar


def _name(capture: Capture, suffix: str) -> str:
    return f"{capture.name}.{suffix}"
