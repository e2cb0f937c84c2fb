"""Running the server: on a socket we bind ourselves, in the foreground or in a thread."""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import uvicorn

from ...capture import captures as captures_mod
from . import BODY_TIMEOUT_S, DEFAULT_HOST, MAX_BODY, fault_spec, matching, streaming
from .app import Settings, build_app


class StartError(Exception):
    """The server cannot start: bad option, unknown capture, bad fault spec, port in use."""


def settings_for(*, speed: str | float = 1.0, faults: Sequence[str] = (),
                 capture: str | None = None, root: Path | None = None,
                 max_body: int = MAX_BODY, body_timeout: float = BODY_TIMEOUT_S) -> Settings:
    """Check the start-up options and build the server's settings; StartError if bad."""
    try:
        corpus = captures_mod.corpus(root)
    except captures_mod.CaptureError as exc:
        raise StartError(str(exc)) from None
    if not corpus:
        raise StartError(f"no captures in {root or captures_mod.CAPTURES_DIR}")
    try:
        parsed_speed = streaming.parse_speed(speed)
        specs = tuple(fault_spec.parse_all(faults))
    except (streaming.SpeedError, fault_spec.FaultSpecError) as exc:
        raise StartError(str(exc)) from None
    if capture:
        found = matching.by_name(corpus, None, capture)
        if isinstance(found, matching.Miss):
            raise StartError(found.message)
        capture = found.key
    if max_body < 1:
        raise StartError(f"--max-body must be at least 1 byte, not {max_body}")
    if not 0 < body_timeout <= 3600:
        raise StartError(f"--body-timeout must be above 0 and at most 3600 seconds, "
                         f"not {body_timeout:g}")
    return Settings(corpus=corpus, speed=parsed_speed, faults=specs, capture=capture,
                    max_body=max_body, body_timeout=body_timeout)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on host:port; StartError (one line) when it is taken."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise StartError(f"cannot resolve host {host!r}: {exc.strerror}") from None
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        reason = "port in use" if exc.errno in (98, 48) else (exc.strerror or str(exc))
        raise StartError(f"cannot listen on {host}:{port}: {reason}") from None
    sock.listen(512)
    return sock


def base_url(sock: socket.socket) -> str:
    """The URL a listening socket answers at: its real port (``--port 0`` picked one),
    an IPv6 address in brackets."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _server(settings: Settings, *, quiet: bool) -> uvicorn.Server:
    config = uvicorn.Config(build_app(settings), log_level="warning" if quiet else "info",
                            access_log=not quiet, timeout_graceful_shutdown=2, server_header=False, date_header=False,
                            lifespan="off")
    return uvicorn.Server(config)


def run(settings: Settings, sock: socket.socket) -> None:
    """Serve in the foreground until Ctrl-C."""
    _server(settings, quiet=False).run(sockets=[sock])


THREAD_NAME = "lesson-lib-serve"


class _ClientLeft(logging.Filter):
    """asyncio says "socket.send() raised exception." when a client closes the connection
    while the server still writes (a Stop, a budget, a retry): normal for this server, so
    it is not printed into the learner's notebook. Only the server's own thread is hushed."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.threadName == THREAD_NAME
                    and record.getMessage().startswith("socket.send() raised exception"))


def _hush_clients_leaving() -> None:
    logger = logging.getLogger("asyncio")
    if not any(isinstance(f, _ClientLeft) for f in logger.filters):
        logger.addFilter(_ClientLeft())


@contextlib.contextmanager
def serving(*, host: str = DEFAULT_HOST, port: int = 0, speed: str | float = 1.0,
            faults: Sequence[str] = (), capture: str | None = None,
            root: Path | None = None, max_body: int = MAX_BODY,
            body_timeout: float = BODY_TIMEOUT_S) -> Iterator[str]:
    """Run the server in a background thread (from a notebook cell); yields its base URL.

    ``port=0`` picks a free port. The server stops when the block ends::

        with serving(speed="instant") as url:
            client = anthropic.Anthropic(base_url=url, api_key="unused")
    """
    settings = settings_for(speed=speed, faults=faults, capture=capture, root=root,
                            max_body=max_body, body_timeout=body_timeout)
    sock = bind(host, port)
    server = _server(settings, quiet=True)
    _hush_clients_leaving()
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True,
                              name=THREAD_NAME)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    if not server.started:
        server.should_exit = True
        sock.close()
        raise StartError("the server did not start")
    try:
        yield base_url(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
