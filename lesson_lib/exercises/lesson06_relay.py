"""Lesson 6's checkers see the learner's socket: a relay between the learner's loop and the
course's server.

The learner's loop opens its own connection, so only a relay in the middle can say when a
step's stream really ended for it (the time the response's last byte was handed over), or
hold an answer after a known number of body bytes (to press Stop at a known place: before
the first byte, in the middle of the text). It runs on the learner's own event loop, so its
times and the checker's tools share one clock.

Only what the checks need is read: the response head, then the chunked body frame by frame
(the server always streams chunked); anything else passes through untouched.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit


@dataclass
class Response:
    """One response as the learner received it: when each body frame went through."""

    frames: list[tuple[float, int]] = field(default_factory=list)   # (time, body bytes)
    ended: float | None = None          # when the closing frame went through

    @property
    def last_byte(self) -> float | None:
        """When the learner got the response's last byte (its end, or the last frame)."""
        return self.ended if self.ended is not None else (
            self.frames[-1][0] if self.frames else None)


class Relay:
    """``async with Relay(url) as via:`` the learner's loop talks to `via`, the relay to `url`.

    `hold_after`: after that many body bytes of the first response have gone through (0:
    none, only the head), nothing more is forwarded and `on_hold` is called: the stream
    goes silent at a known place, for as long as the learner's loop keeps waiting.
    """

    def __init__(self, url: str, *, hold_after: int | None = None,
                 on_hold: Callable[[], None] = lambda: None) -> None:
        parts = urlsplit(url)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.hold_after = hold_after
        self.on_hold = on_hold
        self.responses: list[Response] = []
        self.held = False
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task] = set()
        self._writers: list[asyncio.StreamWriter] = []

    async def __aenter__(self) -> str:
        self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader,
                          writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        try:
            up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        except OSError:
            writer.close()
            return
        self._writers.append(up_writer)
        pumps = [asyncio.ensure_future(self._requests(reader, up_writer)),
                 asyncio.ensure_future(self._responses(up_reader, writer))]
        self._tasks.update(pumps)
        await asyncio.gather(*pumps, return_exceptions=True)
        for w in (writer, up_writer):
            w.close()

    async def _requests(self, reader: asyncio.StreamReader,
                        writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        with contextlib.suppress(OSError):
            writer.write_eof()

    async def _responses(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> None:
        loop = asyncio.get_running_loop()
        buffer = b""
        response: Response | None = None
        chunked = True
        body = 0

        async def send(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

        while True:
            data = await reader.read(65536)
            if not data:
                if buffer:
                    await send(buffer)
                return
            buffer += data
            while True:
                if response is None or not chunked:
                    if not chunked:             # not ours to read: pass it through
                        await send(buffer)
                        buffer = b""
                        break
                    head_end = buffer.find(b"\r\n\r\n")
                    if head_end < 0:
                        break
                    head, buffer = buffer[:head_end + 4], buffer[head_end + 4:]
                    response, body = Response(), 0
                    self.responses.append(response)
                    chunked = b"transfer-encoding: chunked" in head.lower()
                    await send(head)
                    if await self._hold(response, body):
                        return
                    continue
                line_end = buffer.find(b"\r\n")
                if line_end < 0:
                    break
                size = int(buffer[:line_end].split(b";")[0] or b"0", 16)
                frame_end = line_end + 2 + size + 2
                if len(buffer) < frame_end:
                    break
                frame, buffer = buffer[:frame_end], buffer[frame_end:]
                await send(frame)
                if size == 0:                   # the closing frame: the response ended
                    response.ended = loop.time()
                    response = None
                    continue
                body += size
                response.frames.append((loop.time(), size))
                if await self._hold(response, body):
                    return

    async def _hold(self, response: Response, body: int) -> bool:
        """At the first response's `hold_after` bytes: go silent (until closed)."""
        if (self.hold_after is None or self.held or response is not self.responses[0]
                or body < self.hold_after):
            return False
        self.held = True
        self.on_hold()
        await asyncio.Event().wait()        # silent until the learner's loop gives up
        return True
