"""The HTTP app (Starlette): the only part of the server that does I/O.

Everything it decides comes from the pure modules beside it: `matching`
(which capture), `fault_spec` (what to break), `streaming` (when each chunk
is due, which headers), `errors` (the provider's error shape).
"""

from __future__ import annotations

import asyncio
import json
import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..captures import Capture
from . import fault_spec, matching, streaming
from .errors import error_body
from .page import index_html

_COOKIE = "rtw-stream"


@dataclass
class Settings:
    """What the server was started with."""

    corpus: Sequence[Capture]
    speed: float = 1.0
    faults: tuple[fault_spec.FaultSpec, ...] = ()
    capture: str | None = None          # answer requests that name none with this one
    finished: set[str] = field(default_factory=set)   # EventSource streams that ended

    def stream_ended(self, token: str) -> None:
        """Remember a finished EventSource stream (a bounded memory: curl never comes back)."""
        if len(self.finished) >= 4096:
            self.finished.pop()
        self.finished.add(token)


def build_app(settings: Settings) -> Starlette:
    """The Starlette app serving `settings.corpus` at the providers' paths."""

    def provider_for(wire: str) -> Any:
        async def endpoint(request: Request) -> Response:
            return await provider(request, wire)
        return endpoint

    async def provider(request: Request, wire: str) -> Response:
        try:
            payload = json.loads(await request.body() or b"{}")
        except ValueError:
            return _error(wire, 400, "the request body is not valid JSON")
        if not isinstance(payload, dict):
            return _error(wire, 400, "the request body must be a JSON object")
        name = (request.query_params.get("capture") or request.headers.get("capture")
                or settings.capture)
        found = matching.find(settings.corpus, wire, payload, name)
        if isinstance(found, matching.Miss):
            return _error(wire, found.status, found.message)
        stream = wire in matching.STREAMING_PATHS or streaming.is_streaming(payload)
        return _serve(request, found, wire, stream=stream)

    async def stream_get(request: Request) -> Response:
        wire, name = request.path_params["wire"], request.path_params["name"]
        found = matching.by_name(settings.corpus, wire, f"{wire}/{name}")
        if isinstance(found, matching.Miss):
            return _error(wire, found.status, found.message)
        token = request.cookies.get(_COOKIE)
        if token and token in settings.finished:
            # A reconnect after the stream ended: 204 tells EventSource to stop.
            settings.finished.discard(token)
            response = Response(status_code=204)
            response.delete_cookie(_COOKIE, path=request.url.path)
            return response
        token = secrets.token_hex(8)
        response = _serve(request, found, wire, stream=True, on_end=settings.stream_ended,
                          token=token)
        response.set_cookie(_COOKIE, token, path=request.url.path, httponly=True)
        return response

    def _serve(request: Request, cap: Capture, wire: str, *, stream: bool,
               on_end: Any = None, token: str = "") -> Response:
        try:
            specs = (fault_spec.parse_all(request.query_params.getlist("fault"))
                     or list(settings.faults))
            cap = fault_spec.apply(cap, specs)
            speed = streaming.parse_speed(request.query_params.get("speed", settings.speed))
        except (fault_spec.FaultSpecError, streaming.SpeedError) as exc:
            return _error(wire, 400, str(exc))
        headers = streaming.response_headers(cap)
        if not stream and cap.status < 300:
            return _final(cap, wire, headers)
        media = headers.pop("content-type")
        body = _paced(streaming.schedule(cap, speed), lambda: on_end and on_end(token))
        return StreamingResponse(body, status_code=cap.status, headers=headers,
                                 media_type=media)

    async def listing(request: Request) -> Response:
        return JSONResponse([{"name": c.key, "wire": c.wire, "demonstrates": c.demonstrates}
                             for c in settings.corpus])

    async def home(request: Request) -> Response:
        return HTMLResponse(index_html(settings.corpus))

    routes = [Route(path, provider_for(wire), methods=["POST"])
              for wire, path in matching.PATHS.items()]
    routes += [Route("/stream/{wire}/{name}", stream_get, methods=["GET"]),
               Route("/captures", listing, methods=["GET"]),
               Route("/", home, methods=["GET"])]
    app = Starlette(routes=routes)
    app.state.settings = settings
    return app


async def _paced(plan: list[tuple[float, bytes]], ended) -> AsyncIterator[bytes]:
    loop = asyncio.get_running_loop()
    start = loop.time()
    for due, chunk in plan:
        delay = start + due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        yield chunk
    ended()


def _final(cap: Capture, wire: str, headers: dict[str, str]) -> Response:
    from ..accumulate import accumulate

    final = accumulate(cap).final
    if final is None:
        return _error(wire, 500, f"capture {cap.key} has no final object to answer with")
    headers = {k: v for k, v in headers.items() if k != "content-type"}
    return JSONResponse(final, headers=headers)


def _error(wire: str | None, status: int, message: str) -> JSONResponse:
    return JSONResponse(error_body(wire, status, message), status_code=status)
