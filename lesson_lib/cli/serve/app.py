"""The HTTP app (Starlette): the only part of the server that does I/O.

Everything it decides comes from the pure modules beside it: `matching`
(which capture), `fault_spec` (what to break), `streaming` (when each chunk
is due, which headers), `errors` (the provider's error shape), `resumes`
(what a resume request is sent).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ...breaks import faults
from ...capture.captures import Capture
from ...wires import ENTRIES
from . import BODY_TIMEOUT_S, MAX_BODY, fault_spec, matching, streaming
from .errors import error_body, error_headers, not_found
from .page import index_html
from .resumes import Stored, stored_streams

_COOKIE = "rtw-stream"
_LOG = logging.getLogger("uvicorn.error")


@dataclass
class Settings:
    """What the server was started with."""

    corpus: Sequence[Capture]
    speed: float = 1.0
    faults: tuple[fault_spec.FaultSpec, ...] = ()
    capture: str | None = None          # answer requests that name none with this one
    max_body: int = MAX_BODY            # a larger request body gets 413
    body_timeout: float = BODY_TIMEOUT_S   # a body slower than this gets 408, then a close
    finished: set[str] = field(default_factory=set)   # EventSource streams that ended
    first: fault_spec.FirstRequests = field(default_factory=fault_spec.FirstRequests)
    stored: dict[str, dict[str, Stored]] = field(default_factory=dict)   # by wire, then id

    def stored_stream(self, wire: str, stream_id: str) -> Stored | None:
        """The corpus's stream of `wire` with id `stream_id` (read once per wire)."""
        if wire not in self.stored:
            how = ENTRIES[wire].resume
            self.stored[wire] = {} if how is None else stored_streams(self.corpus, wire, how)
        return self.stored[wire].get(stream_id)

    def stream_ended(self, token: str) -> None:
        """Remember a finished EventSource stream (a bounded memory: curl never comes back)."""
        if len(self.finished) >= 4096:
            self.finished.pop()
        self.finished.add(token)


class _Endpoints:
    """The server's endpoints, all reading one `Settings`."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def provider_for(self, wire: str) -> Any:
        """The endpoint at one provider's path (POST; GET for a session's stream)."""
        async def endpoint(request: Request) -> Response:
            return await self.provider(request, wire)
        return endpoint

    async def provider(self, request: Request, wire: str) -> Response:
        """A provider's request: read it, find the capture it asks for, serve it."""
        settings = self.settings
        if request.method == "GET":      # a session's stream: its path says what is asked
            return self._serve_asked(request, wire, dict(request.path_params))
        try:
            body = await _body(request, settings.max_body, settings.body_timeout)
        except TimeoutError:
            # A half-sent body would hold the connection and its descriptor for good.
            response = _error(wire, 408, f"the request body did not arrive within "
                                         f"{settings.body_timeout:g} s")
            response.headers["connection"] = "close"
            return response
        except ClientDisconnect:
            _LOG.info("%s %s: the client left before its request body was complete",
                      request.method, request.url.path)
            return Response(status_code=400)     # nobody is left to read it
        if body is None:
            return _error(wire, 413, f"the request body is larger than {settings.max_body:,} "
                                     "bytes (serve --max-body raises the limit)")
        try:
            payload = json.loads(body or b"{}")
        except ValueError:
            return _error(wire, 400, "the request body is not valid JSON")
        except RecursionError:
            return _error(wire, 400, "the request body nests too deeply to be read")
        if not isinstance(payload, dict):
            return _error(wire, 400, "the request body must be a JSON object")
        if "tools" in payload and not isinstance(payload["tools"], list | type(None)):
            return _error(wire, 400, "tools must be an array of tool definitions")
        if ENTRIES[wire].method == "GET":   # (a session named in the path, its events posted)
            payload = {**request.path_params, **payload}
        return self._serve_asked(request, wire, payload)

    def _serve_asked(self, request: Request, wire: str, payload: dict[str, Any]) -> Response:
        """Find the capture a request (as data) asks for, and serve it."""
        settings = self.settings
        name = (request.query_params.get("capture") or request.headers.get("capture")
                or settings.capture)
        found = matching.find(settings.corpus, wire, payload, name)
        if isinstance(found, matching.Miss):
            return _error(wire, found.status, found.message)
        stream = wire in matching.STREAMING_PATHS or streaming.is_streaming(payload)
        return self.serve(request, found, wire, stream=stream)

    def resume_for(self, wire: str) -> Any:
        """The GET endpoint of one provider's resume request."""
        async def endpoint(request: Request) -> Response:
            return await self.resume(request, wire)
        return endpoint

    async def resume(self, request: Request, wire: str) -> Response:
        """A resume request (``GET .../{id}?stream=true&<after>=<point>``): the stored
        stream's events after the point, or its final object when no stream is asked."""
        how = ENTRIES[wire].resume
        stream_id = request.path_params["id"]
        stored = self.settings.stored_stream(wire, stream_id)
        if stored is None:
            return _error(wire, 404, f"no stored {wire} stream {stream_id!r} in the corpus "
                                     "(only a stream whose events name its id can be resumed)")
        if request.query_params.get("stream", "").lower() != "true":
            return self.serve(request, stored.whole(), wire, stream=False)
        text = request.query_params.get(how.after)
        after = how.read_point(text)
        if after is None or not stored.knows(after):
            return _error(wire, 400, f"{how.after}={text!r} is no point of stream "
                                     f"{stream_id!r}: resume after a {how.point_field} "
                                     "the stream carried")
        return self.serve(request, stored.after(after), wire, stream=True)

    async def stream_get(self, request: Request) -> Response:
        """``GET /stream/<wire>/<name>``, for EventSource: 204 on a reconnect after the end."""
        settings = self.settings
        wire, name = request.path_params["wire"], request.path_params["name"]
        found = matching.by_name(settings.corpus, wire, f"{wire}/{name}")
        if isinstance(found, matching.Miss):
            return _error(wire, found.status, found.message)
        token = request.cookies.get(_COOKIE)
        if token and token in settings.finished:
            # A reconnect after the stream ended: 204 tells EventSource to stop.
            settings.finished.discard(token)
            response = Response(status_code=204)
            response.delete_cookie(_COOKIE, path=_browser_path(request))
            return response
        token = secrets.token_hex(8)
        response = self.serve(request, found, wire, stream=True, on_end=settings.stream_ended,
                              token=token)
        response.set_cookie(_COOKIE, token, path=_browser_path(request), httponly=True)
        return response

    def serve(self, request: Request, cap: Capture, wire: str, *, stream: bool,
              on_end: Any = None, token: str = "") -> Response:
        """A capture as the provider's response: faults applied, paced at its recorded timing."""
        settings = self.settings
        try:
            specs = (fault_spec.parse_all(request.query_params.getlist("fault"))
                     or list(settings.faults))
            client = request.client.host if request.client else ""
            cap = fault_spec.apply(cap, settings.first.select(specs, client, cap.key))
            speed = streaming.parse_speed(request.query_params.get("speed", settings.speed))
        except (fault_spec.FaultSpecError, streaming.SpeedError) as exc:
            return _error(wire, 400, str(exc))
        headers = streaming.response_headers(cap)
        if not stream and cap.status < 300:
            return _final(cap, wire, headers)
        media = headers.pop("content-type")
        body = _paced(streaming.schedule(cap, speed), lambda: on_end and on_end(token),
                      broken=faults.ends_broken(cap))
        return StreamingResponse(body, status_code=cap.status, headers=headers,
                                 media_type=media)

    async def listing(self, request: Request) -> Response:
        """``GET /captures``: every capture served, with what it demonstrates."""
        return JSONResponse([{"name": c.key, "wire": c.wire, "demonstrates": c.demonstrates}
                             for c in self.settings.corpus])

    async def home(self, request: Request) -> Response:
        """``GET /``: the index page."""
        return HTMLResponse(index_html(self.settings.corpus))

    async def unknown(self, request: Request, exc: Exception) -> Response:
        """Any other path: a 404 in the shape of the provider it looks like."""
        wire, message = not_found(request.url.path, matching.PATHS)
        return _error(wire, 404, message)


def build_app(settings: Settings) -> Starlette:
    """The Starlette app serving `settings.corpus` at the providers' paths."""
    endpoints = _Endpoints(settings)
    # Read from the registry now, not at import: every wire registered is served.
    routes = [Route(entry.route, endpoints.provider_for(wire),
                    methods=sorted({"POST", entry.method}))
              for wire, entry in ENTRIES.items()]
    routes += [Route(entry.resume.route, endpoints.resume_for(wire), methods=["GET"])
               for wire, entry in ENTRIES.items() if entry.resume is not None]
    routes += [Route("/stream/{wire}/{name}", endpoints.stream_get, methods=["GET"]),
               Route("/captures", endpoints.listing, methods=["GET"]),
               Route("/", endpoints.home, methods=["GET"])]
    _quiet_about_drops(logging.getLogger("uvicorn.error"))
    app = Starlette(routes=routes, exception_handlers={404: endpoints.unknown})
    app.state.settings = settings
    return app


class ConnectionDropped(Exception):
    """Raised after a `drop` fault's last byte: the server then abandons the connection
    without ending the HTTP body (uvicorn closes a response that fails mid-body)."""


class _NotDrops(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ConnectionDropped))


def _quiet_about_drops(logger: logging.Logger) -> None:
    """A drop is on purpose: keep its traceback out of the server's log."""
    if not any(isinstance(f, _NotDrops) for f in logger.filters):
        logger.addFilter(_NotDrops())


async def _body(request: Request, limit: int, timeout: float) -> bytes | None:
    """The request body, or None when it is larger than `limit` bytes (read no further).

    TimeoutError when the whole body has not arrived within `timeout` seconds (one
    deadline for all of it, so a byte now and then does not keep it open);
    ClientDisconnect when the client leaves first.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    parts, size = [], 0
    async with asyncio.timeout(timeout):
        async for part in request.stream():
            size += len(part)
            if size > limit:
                return None
            parts.append(part)
    return b"".join(parts)


async def _paced(plan: list[tuple[float, bytes]], ended, *,
                 broken: bool = False) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    for due, chunk in plan:
        delay = start + due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        yield chunk
    ended()
    if broken:
        raise ConnectionDropped("the drop fault: the connection breaks here")


def _final(cap: Capture, wire: str, headers: dict[str, str]) -> Response:
    from ...accumulate import accumulate

    final = accumulate(cap).final
    if final is None:
        return _error(wire, 500, f"capture {cap.key} has no final object to answer with")
    headers = {k: v for k, v in headers.items() if k != "content-type"}
    return JSONResponse(final, headers=headers)


def _error(wire: str | None, status: int, message: str) -> JSONResponse:
    return JSONResponse(error_body(wire, status, message), status_code=status,
                        headers=error_headers(wire, status))


def _browser_path(request: Request) -> str:
    """The path the browser asked for: behind a proxy that strips a prefix (a JupyterHub's
    ``/user/<name>/proxy/<port>``, which jupyter-server-proxy sends as
    ``X-Forwarded-Prefix``), the prefix comes first, so the stream's cookie comes back."""
    prefix = request.headers.get("x-forwarded-prefix", "").rstrip("/")
    return prefix + request.url.path if prefix.startswith("/") else request.url.path
