"""`lesson-lib record`: one live streamed request through the official SDK, kept as a capture.

The request goes through the SDK's raw streaming response
(``with_streaming_response.create(..., stream=True)``, then ``iter_bytes()``),
so the body is exactly what arrived, read by read, each read's end offset
and arrival time noted. Only allowlisted response headers and a scrubbed
request reach disk (`lesson_lib.capture.capture_writer`); the key never does.

Exit codes: 0 recorded and the stream ended properly; 3 recorded, but the
stream did not end properly or the request failed (kept as a failed-request
capture); 2 could not start (no key, bad options, cannot connect, and a
rejected key unless ``--keep-failed``, and a key-shaped string or a piece of the
key, raw or encoded, that would have reached disk: `lesson_lib.capture.redact`
first clears every echo of the whole key, then checks).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from ..wires import ENTRIES
from ..wires.entry import RecordRoute, resolve
from ..wires.stream_end import how_it_ended
from ..wires.wire_events import parse_all
from . import captures as captures_mod
from .capture_writer import allowed_headers, chunk_record, scrub_request, write_capture
from .redact import KeyOnDisk, check_no_key, redact_bytes, redact_headers, redact_text
from .refused import Refused, refusal

OK, CANNOT_START, NOT_PROPER = 0, 2, 3

DEFAULT_OUT = Path("recordings")


def recordable() -> dict[str, RecordRoute]:
    """The wires `record` offers, each with its route: every registered wire whose registry
    entry names one (`lesson_lib.wires.entry.RecordRoute`)."""
    return {wire: entry.record for wire, entry in ENTRIES.items() if entry.record is not None}


@dataclass(frozen=True)
class Recorded:
    """What `record` did: the exit code, one line to print, and the capture's path."""

    code: int
    message: str
    path: Path | None = None


def request_for(wire: str, prompt: str, model: str, max_tokens: int = 1024) -> dict[str, Any]:
    """The SDK ``create`` arguments for one user prompt on `wire`, streaming (the wire's
    record route builds them)."""
    return resolve(recordable()[wire].request)(prompt, model, max_tokens)


def messages_request(prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
    """Anthropic Messages: one user message."""
    return {"model": model, "max_tokens": max_tokens,
            "messages": [{"role": "user", "content": prompt}], "stream": True}


def responses_request(prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
    """Responses: the prompt as the input."""
    return {"model": model, "input": prompt, "stream": True}


def chat_request(prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
    """Chat: one user message, and the usage chunk asked for."""
    return {"model": model, "messages": [{"role": "user", "content": prompt}], "stream": True,
            "stream_options": {"include_usage": True}}


def anthropic_create(key: str, base_url: str | None, on_request: Any) -> tuple[Any, Any]:
    """The anthropic SDK's raw streaming ``messages.create``, and the SDK (its errors)."""
    import anthropic as sdk
    http = sdk.DefaultHttpxClient(event_hooks={"request": [on_request]})
    client = sdk.Anthropic(api_key=key, base_url=base_url, max_retries=0, http_client=http)
    return client.messages.with_streaming_response.create, sdk


def _openai(key: str, base_url: str | None, on_request: Any) -> Any:
    import openai as sdk
    http = sdk.DefaultHttpxClient(event_hooks={"request": [on_request]})
    return sdk.OpenAI(api_key=key, base_url=base_url, max_retries=0, http_client=http), sdk


def responses_create(key: str, base_url: str | None, on_request: Any) -> tuple[Any, Any]:
    """The openai SDK's raw streaming ``responses.create``, and the SDK (its errors)."""
    client, sdk = _openai(key, base_url, on_request)
    return client.responses.with_streaming_response.create, sdk


def chat_create(key: str, base_url: str | None, on_request: Any) -> tuple[Any, Any]:
    """The openai SDK's raw streaming ``chat.completions.create``, and the SDK (its errors)."""
    client, sdk = _openai(key, base_url, on_request)
    return client.chat.completions.with_streaming_response.create, sdk


def record(wire: str, prompt: str, *, model: str | None = None, base_url: str | None = None,
           out: Path = DEFAULT_OUT, name: str | None = None, keep_failed: bool = False,
           env: Mapping[str, str] | None = None) -> Recorded:
    """Send one streamed request and write what came back as a capture under ``out/wire/``."""
    env = os.environ if env is None else env
    route = recordable().get(wire)
    if route is None:
        return Recorded(CANNOT_START, f"unknown wire {wire!r}; say one of "
                                      f"{', '.join(recordable())}")
    variable = next((name for name in route.keys if env.get(name)), route.keys[0])
    key = env.get(variable)
    if not key:
        return Recorded(CANNOT_START, f"no key: set {variable} to record on the {wire} wire")
    kwargs = request_for(wire, prompt, model or route.model)
    try:
        status, headers, reads, failure = _send(route, key, base_url, kwargs)
    except _CannotConnect as exc:
        return Recorded(CANNOT_START, f"cannot connect: {exc}")
    if status in (401, 403) and not keep_failed:
        return Recorded(CANNOT_START, f"the server rejected the key in {variable} "
                                      f"(HTTP {status}); --keep-failed records it anyway")
    failure = redact_text(failure, key) if failure else failure
    # A server may echo the key: cleared in place (same length, so chunk ends hold).
    body = redact_bytes(b"".join(chunk for chunk, _ in reads), key)
    kept_headers = redact_headers(allowed_headers(headers), key)
    request = scrub_request(kwargs)
    ends, offset = [], 0
    for chunk, t in reads:
        offset += len(chunk)
        ends.append((offset, t))
    sidecar = {
        "wire": wire,
        "demonstrates": f"Recorded: {_one_line(prompt)}",
        "request": request,
        "response": {"status": status, "headers": kept_headers},
        "provenance": {"kind": "recorded",
                       "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                       "sdk": {pkg: _version(pkg) for pkg in _sdk_packages()},
                       "via": route.via},
        "chunks": chunk_record(ends),
    }
    if failure:
        sidecar["provenance"]["transport_error"] = failure
    try:
        # Nothing of the key, raw or encoded, whole or a 12-character piece, anywhere.
        check_no_key(body, kept_headers, sidecar, key=key)
    except KeyOnDisk as exc:
        return Recorded(CANNOT_START, str(exc))
    name = name or "recorded-" + dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    path = write_capture(Path(out) / wire, name, body, sidecar, ENTRIES[wire].suffix)
    cap = captures_mod.load(path)
    ending = how_it_ended(wire, parse_all(cap.events), cap.sse_diagnostics, cap.status)
    what = f"{path}: {len(body)} bytes in {len(reads)} reads, HTTP {status}, {ending.reason}"
    if failure:
        what += f" ({failure})"
    return Recorded(OK if ending.proper and not failure else NOT_PROPER, what, path)


class _CannotConnect(Exception):
    pass


class _RequestClock:
    """Milliseconds since the request was sent: started by the HTTP client's request hook,
    so importing the SDK and building its client (over a second) are not counted."""

    def __init__(self) -> None:
        self.started: float | None = None

    def start(self, request: Any) -> None:
        self.started = time.monotonic()

    def ms(self) -> float:
        if self.started is None:     # no request went out (it failed before sending)
            self.started = time.monotonic()
        return (time.monotonic() - self.started) * 1000.0


def gemini_request(prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
    """Gemini: the prompt as the contents (google-genai makes it one user turn)."""
    return {"model": model, "contents": prompt}


def gemini_create(key: str, base_url: str | None, on_request: Any) -> tuple[Any, Any]:
    """google-genai's ``models.generate_content_stream``, read as a raw streaming response.

    The SDK has no raw response of its own, so its HTTP client's transport
    notes each piece of the body as the SDK reads it (`_Tee`), and the pieces
    are handed on as the SDK's records arrive. Its errors come as the raw
    route's: a refused request with its status, headers and body.
    """
    return _genai_create(key, base_url, on_request,
                         lambda client, kwargs: client.models.generate_content_stream(**kwargs))


def interactions_request(prompt: str, model: str, max_tokens: int) -> dict[str, Any]:
    """Gemini Interactions: the prompt as the input (the server makes it one user turn)."""
    return {"model": model, "input": prompt}


def interactions_create(key: str, base_url: str | None, on_request: Any) -> tuple[Any, Any]:
    """google-genai's ``interactions.create(..., stream=True)``, read as a raw streaming
    response the way `gemini_create` reads Gemini's (one SDK event per piece handed on)."""
    return _genai_create(key, base_url, on_request,
                         lambda client, kwargs: client.interactions.create(stream=True, **kwargs))


def _genai_create(key: str, base_url: str | None, on_request: Any,
                  stream: Callable[[Any, dict[str, Any]], Iterator[Any]]) -> tuple[Any, Any]:
    import httpx2
    from google import genai
    from google.genai import types

    tee = _Tee(httpx2.HTTPTransport())
    http = httpx2.Client(transport=tee, event_hooks={"request": [on_request]}, timeout=600)
    options = types.HttpOptions(base_url=base_url, httpx_client=http) if base_url else \
        types.HttpOptions(httpx_client=http)
    client = genai.Client(api_key=key, http_options=options)

    @contextlib.contextmanager
    def create(**kwargs: Any) -> Iterator[_Streamed]:
        yield _Streamed(tee, iter(stream(client, kwargs)))

    return create, SimpleNamespace(APIStatusError=Refused, APIConnectionError=httpx2.TransportError)


class _Tee:
    """An HTTP transport that notes each piece of a response body as its reader takes it
    (asking for the body as it is sent: no content encoding to undo)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.status, self.headers = inner, 0, {}
        self.pieces: list[bytes] = []

    def handle_request(self, request: Any) -> Any:
        import httpx2
        request.headers["accept-encoding"] = "identity"
        response = self.inner.handle_request(request)
        self.status, self.headers = response.status_code, dict(response.headers)
        tee = self

        class _Body(httpx2.SyncByteStream):
            def __iter__(self) -> Iterator[bytes]:
                for piece in response.stream:
                    if piece:
                        tee.pieces.append(piece)
                    yield piece

            def close(self) -> None:
                response.stream.close()

        return httpx2.Response(response.status_code, headers=response.headers, stream=_Body(),
                               extensions=response.extensions)

    def take(self) -> list[bytes]:
        """The pieces noted since the last take."""
        out, self.pieces = self.pieces, []
        return out

    def close(self) -> None:
        self.inner.close()


class _Streamed:
    """The SDK's stream as a raw streaming response: the status and headers once the
    request is answered, then the body's pieces as the SDK reads each record."""

    def __init__(self, tee: _Tee, records: Iterator[Any]) -> None:
        self._tee, self._records, self._done = tee, records, False
        try:
            next(records)                       # sends the request
        except StopIteration:
            self._done = True
        except Exception as exc:
            refused = refusal(tee)
            if refused is None:
                raise
            raise refused from exc
        self.status_code, self.headers = tee.status, tee.headers

    def iter_bytes(self) -> Iterator[bytes]:
        yield from self._tee.take()
        if not self._done:
            for _ in self._records:
                yield from self._tee.take()
        yield from self._tee.take()


def _sdk_packages() -> tuple[str, ...]:
    """The official SDKs `record` goes through (their versions go in the provenance)."""
    return tuple(dict.fromkeys(entry.sdk.package for wire, entry in ENTRIES.items()
                               if wire in recordable() and entry.sdk is not None))


def _send(route: RecordRoute, key: str, base_url: str | None, kwargs: dict[str, Any]):
    """Make the request; (status, headers, [(read, ms)], transport error or None)."""
    clock = _RequestClock()
    create, sdk = resolve(route.create)(key, base_url, clock.start)
    reads: list[tuple[bytes, float]] = []
    now = clock.ms

    try:
        with create(**kwargs) as response:
            status, headers = response.status_code, dict(response.headers)
            try:
                for chunk in response.iter_bytes():
                    if chunk:
                        reads.append((chunk, now()))
            except Exception as exc:  # the stream broke in transit: keep what arrived
                return status, headers, reads, f"{type(exc).__name__}: {exc}"
    except sdk.APIStatusError as exc:
        body = exc.response.content
        return exc.status_code, dict(exc.response.headers), [(body, now())] if body else [], None
    except sdk.APIConnectionError as exc:
        raise _CannotConnect(f"{type(exc).__name__}: {exc}") from None
    return status, headers, reads, None


def _one_line(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


# -- the ``record`` subcommand -------------------------------------------------------


def add_command(sub) -> None:
    """Add ``record`` to the CLI's subparsers."""
    parser = sub.add_parser(
        "record", help="record one live streamed request into a capture",
        description="Record one streamed request through the official SDK into a capture "
                    "under DIR/WIRE/NAME.sse (.eventstream on Bedrock; + .json). The key comes from " + ", ".join(
                        dict.fromkeys(k for r in recordable().values() for k in r.keys)) +
                    " and never reaches disk. Exit 0: recorded, the stream "
                    "ended properly; 3: recorded, but it did not end properly or the request "
                    "failed; 2: could not start (no key, bad options, cannot connect).")
    parser.add_argument("--wire", required=True, choices=sorted(recordable()))
    parser.add_argument("--model", default=None, help="default: per wire, " + ", ".join(
        f"{w} {r.model}" for w, r in recordable().items()))
    parser.add_argument("--base-url", default=None, help="a compatible server (or lesson-lib "
                        "serve): its root URL, plus " + ", ".join(
                            f"{r.base_path} on {w}" for w, r in recordable().items()
                            if r.base_path))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT,
                        help=f"where to write (default {DEFAULT_OUT}/)")
    parser.add_argument("--name", default=None, help="the capture's name (default: recorded-TIME)")
    parser.add_argument("--keep-failed", action="store_true",
                        help="also keep a request the server refused for its key (401/403)")
    parser.add_argument("prompt")
    parser.set_defaults(run=_run)


def _run(args) -> int:
    import sys

    result = record(args.wire, args.prompt, model=args.model, base_url=args.base_url,
                    out=args.out, name=args.name, keep_failed=args.keep_failed)
    print(f"lesson-lib: record: {result.message}",
          file=sys.stderr if result.code else sys.stdout)
    return result.code
