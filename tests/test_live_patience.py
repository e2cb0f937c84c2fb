"""Every wait of the live loop ends: small real servers on 127.0.0.1 that never answer,
answer and fall silent, ping forever, drip one byte at a time, or compress the stream.
Each ends in a typed outcome (never ``completed`` over a stall) with what arrived kept."""

from __future__ import annotations

import asyncio
import contextlib
import re
import zlib

import httpx
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.capture.captures import load
from lesson_lib.live import LiveTurn, RetryPolicy, patience
from lesson_lib.turn import TurnStream
from lesson_lib.turn.order import check
from lesson_lib.turn.run import turn_state

HELLO = load("anthropic-messages/hello")
ONCE = RetryPolicy(attempts=1)
FAST = RetryPolicy(attempts=2, initial_s=0.01, max_s=0.05)
SHORT = {"stall_s": 0.3, "headers_s": 0.3}
OUTER_S = 5.0       # the old loop hung here: the test fails instead of hanging
PING = b'event: ping\ndata: {"type": "ping"}\n\n'


def _head(status: int = 200, **extra: str) -> bytes:
    lines = [f"HTTP/1.1 {status} X", "content-type: text/event-stream",
             "transfer-encoding: chunked", *(f"{k.replace('_', '-')}: {v}"
                                             for k, v in extra.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _events(body: bytes) -> list[bytes]:
    """A capture's body split after each event's blank line."""
    return [part + b"\n\n" for part in body.split(b"\n\n") if part]


@contextlib.asynccontextmanager
async def server(answer):
    """A raw HTTP/1.1 server: each request's head is kept, then `answer(writer)` writes
    whatever it likes (or nothing, for as long as it likes)."""
    heads: list[bytes] = []
    handlers: set[asyncio.Task] = set()

    async def handle(reader, writer):
        handlers.add(asyncio.current_task())
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"content-length: *(\d+)", head, re.I)
            await reader.readexactly(int(length.group(1)) if length else 0)
            heads.append(head)
            await answer(writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    listening = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}", heads
    finally:
        listening.close()
        for task in handlers:
            task.cancel()


def run(answer, **options):
    """A hello turn against a server that answers with `answer`; (result, request heads,
    seconds it took)."""
    async def go():
        async with server(answer) as (url, heads):
            loop = asyncio.get_running_loop()
            start = loop.time()
            turn = LiveTurn(url, "anthropic-messages", HELLO.request, **options)
            result = await asyncio.wait_for(turn.run(), OUTER_S)
            return result, heads, loop.time() - start
    return asyncio.run(go())


async def _forever():
    await asyncio.sleep(3600)


def _text(result) -> str:
    return "".join(b.text for b in result.state.blocks if b.kind == "text")


def test_a_server_that_never_sends_its_headers_is_abandoned_and_retried():
    async def silent(writer):
        await _forever()

    result, heads, took = run(silent, retry=FAST, **SHORT)
    assert result.outcome == "failed"
    assert len(heads) == 2 and len(result.attempts) == 2
    for attempt in result.attempts:
        [error] = attempt.errors
        assert (error.code, error.scope, error.retryable) == ("stall", "transport", True)
        assert "response headers within 0.3 s" in error.message
        assert attempt.status is None
    assert check(result.events) == []
    assert took < 2.0


def test_the_defaults_end_every_wait():
    turn = LiveTurn("http://x", "anthropic-messages", HELLO.request)
    assert (turn.headers_s, turn.stall_s) == (patience.HEADERS_S, patience.PROGRESS_S) == (60, 60)
    assert turn.deadline_s is None


def _headers_then(status: int):
    async def answer(writer):
        kind = {} if status < 300 else {"content_type": "application/json"}
        writer.write(_head(status, **kind).replace(b"text/event-stream\r\ncontent-type: ", b""))
        await writer.drain()
        await _forever()
    return answer


def test_headers_then_nothing_is_a_stall_of_the_body():
    result, _, took = run(_headers_then(200), retry=ONCE, **SHORT)
    assert result.outcome == "cancelled"
    end = result.state.end
    assert (end.reason, end.detail["where"]) == ("watchdog", "before_first_byte")
    [attempt] = result.attempts
    assert attempt.status == 200
    [error] = attempt.errors
    assert error.code == "stall" and "no progress for 0.3 s" in error.message
    assert check(result.events) == []
    assert took < 2.0


def test_an_error_status_whose_body_never_comes_is_a_stall_too():
    result, _, took = run(_headers_then(500), retry=ONCE, **SHORT)
    assert result.outcome == "failed"
    [attempt] = result.attempts
    assert attempt.status == 500
    assert [e.code for e in attempt.errors] == ["stall"]
    assert "no response body within 0.3 s" in attempt.errors[0].message
    assert check(result.events) == []
    assert took < 2.0


def _text_then(then):
    """The hello stream up to its first text delta, then `then(writer)`."""
    events = _events(HELLO.body)
    first_delta = next(i for i, e in enumerate(events) if b"text_delta" in e)

    async def answer(writer):
        writer.write(_head() + _chunk(b"".join(events[:first_delta + 1])))
        await writer.drain()
        await then(writer, b"".join(events[first_delta + 1:]))
    return answer


async def _pings(writer, rest):
    while True:
        writer.write(_chunk(PING))
        await writer.drain()
        await asyncio.sleep(0.03)


async def _drip(writer, rest):
    for i in range(len(rest)):
        writer.write(_chunk(rest[i:i + 1]))
        await writer.drain()
        await asyncio.sleep(0.03)
    writer.write(b"0\r\n\r\n")


def test_pings_forever_are_not_progress():
    result, _, took = run(_text_then(_pings), retry=ONCE, **SHORT)
    # The stall watchdog stopped the turn: cancelled, and it says so (never `failed`).
    assert result.outcome == "cancelled"
    end = result.state.end
    assert (end.reason, end.detail["where"], end.detail["attempts"]) == ("watchdog", "text", 1)
    [error] = result.attempts[0].errors
    assert error.code == "stall" and error.phase == "after_output"
    assert "keep-alive pings" in error.message
    assert end.detail["by"] == error.message == result.stopped
    assert _text(result) == "Hello", "what arrived before the pings was lost"
    assert not any(b.open for b in result.state.blocks)
    assert check(result.events) == []
    assert took < 2.0


def test_the_banner_says_the_watchdog_stopped_the_text_arriving():
    from lesson_lib.draw import draw

    result, _, _ = run(_text_then(_pings), retry=ONCE, **SHORT)
    shown = draw(result.state).part("turn/banner").text
    assert shown.startswith("⊘ cancelled: the watchdog stopped a stream that had gone silent")
    assert "while text was arriving" in shown and "between steps" not in shown, shown


def test_one_byte_at_a_time_that_completes_no_event_is_not_progress():
    result, _, took = run(_text_then(_drip), retry=ONCE, **SHORT)
    assert result.outcome == "cancelled" and result.state.end.reason == "watchdog"
    [error] = result.attempts[0].errors
    assert error.code == "stall" and "no progress" in error.message
    assert result.attempts[0].first_byte is not None
    assert _text(result) == "Hello"
    assert check(result.events) == []
    assert took < 2.0


def test_the_deadline_cancels_a_turn_that_keeps_moving_and_says_why():
    # No stall limit at all: only the turn's deadline ends it.
    result, _, took = run(_text_then(_pings), retry=ONCE, stall_s=None, deadline_s=0.4)
    assert result.outcome == "cancelled"
    assert "deadline of 0.4 s" in result.stopped
    # The end says who stopped it and where: the deadline, in the middle of the response.
    end = result.state.end
    assert (end.reason, end.detail["where"]) == ("deadline", "text")
    assert "deadline of 0.4 s" in end.detail["by"]
    assert _text(result) == "Hello"
    assert not any(b.open for b in result.state.blocks)
    assert check(result.events) == []
    assert 0.35 < took < 2.0


def test_the_deadline_also_ends_the_wait_before_a_retry():
    async def busy(writer):
        body = b'{"type":"error","error":{"type":"overloaded_error","message":"busy"}}'
        writer.write(b"HTTP/1.1 529 X\r\ncontent-type: application/json\r\nretry-after: 3\r\n"
                     b"content-length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()

    patient = RetryPolicy(attempts=3, initial_s=0.01, max_s=10)
    result, heads, took = run(busy, retry=patient, deadline_s=0.3)
    assert result.outcome == "cancelled" and "deadline" in result.stopped
    assert len(heads) == 1 and len(result.attempts) == 1
    assert result.attempts[0].errors[0].code is not None
    assert check(result.events) == []
    assert took < 2.0


def _encoded(wbits: int, name: str):
    async def answer(writer):
        packer = zlib.compressobj(wbits=wbits)
        writer.write(_head(content_encoding=name))
        for event in _events(HELLO.body):
            writer.write(_chunk(packer.compress(event) + packer.flush(zlib.Z_SYNC_FLUSH)))
            await writer.drain()
            await asyncio.sleep(0.005)
        writer.write(_chunk(packer.flush()) + b"0\r\n\r\n")
        await writer.drain()
    return answer


def test_a_gzip_or_deflate_stream_is_decoded_as_it_arrives_and_none_is_asked_for():
    offline = turn_state([HELLO])
    for wbits, name in ((31, "gzip"), (15, "deflate")):
        result, heads, _ = run(_encoded(wbits, name), retry=ONCE, **SHORT)
        assert result.outcome == "completed", name
        assert _text(result) == "".join(b.text for b in offline.blocks if b.kind == "text")
        assert re.search(rb"\r\naccept-encoding: identity\r\n", heads[0], re.I)
        assert check(result.events) == []


def test_an_encoding_the_loop_cannot_decode_is_said_not_fed_as_junk():
    async def brotli(writer):
        writer.write(_head(content_encoding="br") + _chunk(b"\x1b\x03\x00\xf8") + b"0\r\n\r\n")
        await writer.drain()

    result, heads, _ = run(brotli, retry=FAST, **SHORT)
    assert result.outcome == "failed"
    assert len(heads) == 1
    assert [e.code for e in result.state.errors] == ["unreadable_encoding"]
    assert check(result.events) == []


def _wire_events(body: bytes) -> list:
    stream = TurnStream("anthropic-messages")
    return [wire for wire, _ in stream.feed_batches(body) if wire is not None]


def test_progress_waits_longer_while_the_stream_says_the_model_thinks():
    thinking = load("anthropic-messages/thinking-signature").body
    opened = b"".join(_events(thinking)[:2])    # message_start, the thinking block's start
    assert b'"thinking"' in opened
    watch = patience.Progress("anthropic-messages", 1.0, 0.0, busy_s=10.0)
    watch.saw(_wire_events(opened + PING), 0.0)
    assert watch.keepalives == 1
    assert watch.expired(1.5) is None and watch.due() == 10.0
    assert "while thinking" in watch.expired(10.0)

    plain = patience.Progress("anthropic-messages", 1.0, 0.0, busy_s=10.0)
    plain.saw(_wire_events(b"".join(_events(HELLO.body)[:2]) + PING + PING), 0.0)
    assert plain.keepalives == 2
    assert "only 2 keep-alive pings" in plain.expired(1.0)


class _Pieces(httpx.AsyncByteStream):
    def __init__(self, pieces):
        self.pieces = pieces

    async def __aiter__(self):
        for piece in self.pieces:
            yield piece


@settings(derandomize=True, max_examples=examples(40), deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=2000), max_size=12),
       st.sampled_from([(31, "gzip"), (15, "deflate"), (-15, "deflate")]))
def test_a_compressed_body_split_anywhere_reads_as_the_plain_one(cuts, coding):
    wbits, name = coding
    packer = zlib.compressobj(wbits=wbits)
    packed = packer.compress(HELLO.body) + packer.flush()
    edges = sorted({0, len(packed), *(c % (len(packed) + 1) for c in cuts)})
    pieces = [packed[a:b] for a, b in zip(edges, edges[1:], strict=False)]

    async def handler(request):
        return httpx.Response(200, stream=_Pieces(pieces), headers={
            "content-type": "text/event-stream", "content-encoding": name})

    async def go():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            return await LiveTurn("http://test", "anthropic-messages", HELLO.request,
                                  client=client, retry=ONCE).run()

    result = asyncio.run(go())
    assert result.outcome == "completed"
    assert _text(result) == _text_of(turn_state([HELLO]))


def _text_of(state) -> str:
    return "".join(b.text for b in state.blocks if b.kind == "text")


@settings(derandomize=True, max_examples=examples(100), deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(min_value=0.0, max_value=5.0)),
                max_size=20))
def test_keepalives_never_move_the_progress_clock(arrivals):
    events = _events(HELLO.body)
    ping = _wire_events(b"".join(events[:1]) + PING)[-1]
    text = _wire_events(b"".join(events[:4]))[-1]
    watch = patience.Progress("anthropic-messages", 1.0, 0.0, busy_s=None)
    now, last = 0.0, 0.0
    for is_ping, gap in arrivals:
        now += gap
        watch.saw([ping if is_ping else text], now)
        if not is_ping:
            last = now
    assert watch.due() == last + 1.0
