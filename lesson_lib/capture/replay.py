"""Replay: the official SDKs, put back in front of a capture, fully offline.

The `anthropic`, `openai` and `google-genai` clients are given an HTTP
transport (all three speak `httpx2`) that answers every request with the
capture's bytes, in its recorded network chunks, with the recorded status and
``content-type``. No key, no network: what the SDK returns or raises is
exactly what it would do with those bytes live.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx2

from .captures import Capture

MANAGED_AGENTS = "anthropic-managed-agents"   # a session stream: no model in the request
_DEFAULT_MODEL = {"anthropic-messages": "claude-sonnet-4-6",
                  "openai-responses": "gpt-4.1", "openai-chat": "gpt-4.1",
                  "google-gemini": "gemini-2.5-flash"}


CLOSED_MESSAGE = "the connection was closed (offline replay)"


class _ChunkStream(httpx2.SyncByteStream):
    """The capture's chunks as a response body that, once closed, reads like a closed socket.

    Over a real connection, a read after ``response.close()`` fails (both SDKs
    then raise ``APIConnectionError`` wrapping an ``httpx2.ReadError``; anthropic
    2.16 let the ``ReadError`` through; `tests/test_sdk_close.py` checks the
    same over ``lesson-lib serve``). A list of chunks would go on yielding, so
    a read after `close` raises `httpx2.ReadError` here too, unless every
    chunk had already been delivered (the whole body had arrived).
    """

    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._chunks:
            if self._closed:    # the next chunk was still on its way: it never comes
                raise httpx2.ReadError(CLOSED_MESSAGE)
            yield chunk
        # After the last chunk the body is whole: nothing more to read, closed or not.

    def close(self) -> None:
        self._closed = True


def transport(capture: Capture, chunk_size: int | None = None) -> httpx2.MockTransport:
    """A mock transport answering any request with the capture's response."""
    chunks = [c for c, _ in capture.chunks(chunk_size)]
    ok = capture.status < 300
    headers = dict(capture.sidecar.get("response", {}).get("headers", {}))
    headers = {k: v for k, v in headers.items() if k.lower() != "content-length"}
    headers["content-type"] = "text/event-stream" if ok else "application/json"

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(capture.status, headers=headers,
                               stream=_ChunkStream(chunks), request=request)

    return httpx2.MockTransport(handler)


def anthropic_client(capture: Capture, chunk_size: int | None = None):
    """An `anthropic.Anthropic` client whose every response is this capture."""
    import anthropic
    return anthropic.Anthropic(api_key="offline-replay", max_retries=0,
                               http_client=httpx2.Client(transport=transport(capture, chunk_size)))


def openai_client(capture: Capture, chunk_size: int | None = None):
    """An `openai.OpenAI` client whose every response is this capture."""
    import openai
    return openai.OpenAI(api_key="offline-replay", max_retries=0,
                         http_client=httpx2.Client(transport=transport(capture, chunk_size)))


def gemini_client(capture: Capture, chunk_size: int | None = None):
    """A `google.genai.Client` whose every response is this capture (no retries)."""
    from google import genai
    from google.genai import types
    http = httpx2.Client(transport=transport(capture, chunk_size))
    return genai.Client(api_key="offline-replay",
                        http_options=types.HttpOptions(httpx_client=http))


def request_kwargs(capture: Capture) -> dict[str, Any]:
    """Arguments for the SDK's create/stream call, from the sidecar's request."""
    req = dict(capture.request)
    wire = capture.wire
    model = req.get("model") or _DEFAULT_MODEL.get(wire or "", "model")
    if wire == "anthropic-messages":
        return {"model": model, "max_tokens": req.get("max_tokens", 1024),
                "messages": req.get("messages") or [{"role": "user", "content": "Hi"}]}
    if wire == "openai-responses":
        return {"model": model, "input": req.get("input") or "Hi"}
    if wire == "google-gemini":
        return {"model": model, "contents": req.get("contents") or "Hi"}
    if wire == MANAGED_AGENTS:
        kwargs = {"session_id": req.get("session_id") or "sesn_offline"}
        return kwargs | ({"event_deltas": req["event_deltas"]} if req.get("event_deltas") else {})
    return {"model": model, "messages": req.get("messages") or [{"role": "user", "content": "Hi"}]}


def strict_tools(capture: Capture) -> list[dict[str, Any]]:
    """The request's function tools marked ``strict: true`` (Chat wire).

    With strict tools, the Chat streaming helper parses each call's arguments
    itself, so its idea of when a call is done is put to the test.
    """
    tools = capture.request.get("tools") or []
    return [dict(t, function=dict(t["function"], strict=True)) for t in tools
            if t.get("type") == "function" and "function" in t]


@dataclass
class SDKOutcome:
    """What the SDK's streaming helper did with a capture.

    `events` are the helper's events in order (empty when the run did not keep
    them: an Anthropic ``text`` event carries the whole text so far, so keeping
    every event costs memory quadratic in the stream); `event_count` counts them
    either way.
    """

    final: Any = None                 # the SDK's final object, when it returned one
    error: BaseException | None = None
    events: list[Any] = field(default_factory=list)   # the helper's events, in order
    text: str = ""                    # what the `text` projection printed
    event_count: int = 0

    @property
    def raised(self) -> str | None:
        return type(self.error).__name__ if self.error is not None else None


OnEvent = Callable[[Any], None]


class _OnEventFailed(Exception):
    """The caller's `on_event` raised: its error is the caller's, not the SDK's."""


def run_sdk(capture: Capture, chunk_size: int | None = None, *, client: Any = None,
            keep_events: bool = True, on_event: OnEvent | None = None) -> SDKOutcome:
    """Stream the capture through its wire's official helper and record the outcome.

    Anthropic: ``messages.stream`` then ``get_final_message()``. Responses:
    ``responses.stream`` then ``get_final_response()``. Chat:
    ``chat.completions.stream`` then ``get_final_completion()``. Gemini:
    ``models.generate_content_stream``, which yields one response object per
    record and assembles nothing (`final` stays None). `client`
    replaces the offline one (e.g. a client pointed at ``lesson-lib serve``).
    Without `keep_events`, only what `check` compares is kept (text, final,
    error, the count of events), so memory stays linear in the stream.
    `on_event` is called with each of the helper's events as it arrives (a
    reader that needs every event without keeping them all); what it raises
    is raised from here, never recorded as the SDK's error.
    """
    out = SDKOutcome()
    kwargs = request_kwargs(capture)
    texts: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # model-deprecation notices
        try:
            _drive(capture, chunk_size, kwargs, out, texts, keep_events, client, on_event)
        except _OnEventFailed as failed:
            raise failed.__cause__ from None    # type: ignore[misc]
    out.text = "".join(texts)
    return out


# Per wire: the event type of the text projection, and its field holding the new text.
_TEXT_EVENT = {"anthropic-messages": ("text", "text"),
               "openai-responses": ("response.output_text.delta", "delta"),
               "openai-chat": ("content.delta", "delta"),
               "google-gemini": (None, None)}   # every response object: `gemini_text`


def _drive(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
           out: SDKOutcome, texts: list[str], keep_events: bool,
           client: Any = None, on_event: OnEvent | None = None) -> None:
    try:
        if capture.wire == "anthropic-messages":
            client = client or anthropic_client(capture, chunk_size)
            with client.messages.stream(**kwargs) as stream:
                _collect(stream, capture.wire, out, texts, keep_events, on_event)
                out.final = stream.get_final_message()
        elif capture.wire == "openai-responses":
            client = client or openai_client(capture, chunk_size)
            with client.responses.stream(**kwargs) as stream:
                _collect(stream, capture.wire, out, texts, keep_events, on_event)
                out.final = stream.get_final_response()
        elif capture.wire == "openai-chat":
            client = client or openai_client(capture, chunk_size)
            with client.chat.completions.stream(**kwargs) as stream:
                _collect(stream, capture.wire, out, texts, keep_events, on_event)
                out.final = stream.get_final_completion()
        elif capture.wire == "google-gemini":
            client = client or gemini_client(capture, chunk_size)
            stream = client.models.generate_content_stream(**kwargs)
            _collect(stream, capture.wire, out, texts, keep_events, on_event)
        elif capture.wire == MANAGED_AGENTS:
            _drive_session(client or anthropic_client(capture, chunk_size), kwargs, out,
                           texts, keep_events, on_event)
        elif capture.wire in ("aws-bedrock-converse", "aws-bedrock-invoke"):
            # boto3 yields plain dicts and assembles no final object (`bedrock_replay`).
            from .bedrock_replay import boto3_events, text_of_event
            for event in boto3_events(capture, chunk_size, client):
                _take(event, out, keep_events, on_event)
                texts.append(text_of_event(event))
        else:
            raise ValueError(f"{capture.key}: unknown wire, cannot replay through an SDK")
    except _OnEventFailed:
        raise
    except Exception as exc:  # the outcome *is* the exception: recorded, not hidden
        out.error = exc


def _drive_session(client: Any, kwargs: dict[str, Any], out: SDKOutcome, texts: list[str],
                   keep_events: bool, on_event: OnEvent | None) -> None:
    """A Managed Agents session stream through ``beta.sessions.events.stream``, each event
    folded with the SDK's own ``accumulate_managed_agents_event``: its last snapshot (the
    latest agent message) is the final object, and its text the text."""
    from anthropic.lib.sessions import accumulate_managed_agents_event
    for event in client.beta.sessions.events.stream(**kwargs):
        _take(event, out, keep_events, on_event)
        out.final = accumulate_managed_agents_event(out.final, event)
    if out.final is not None:
        texts.append("".join(getattr(c, "text", "") for c in out.final.content))


def _take(event: Any, out: SDKOutcome, keep_events: bool, on_event: OnEvent | None) -> None:
    """Count one SDK event, keep it if asked, and hand it to `on_event`."""
    out.event_count += 1
    if keep_events:
        out.events.append(event)
    if on_event is not None:
        try:
            on_event(event)
        except Exception as exc:
            raise _OnEventFailed() from exc


def _collect(stream: Any, wire: str, out: SDKOutcome, texts: list[str],
             keep_events: bool, on_event: OnEvent | None = None) -> None:
    kind, key = _TEXT_EVENT[wire]
    for event in stream:
        _take(event, out, keep_events, on_event)
        if kind is None:
            texts.append(gemini_text(event))
        elif event.type == kind:
            texts.append(text_of(getattr(event, key)))


def text_of(delta: Any) -> str:
    """The text of a content delta as the SDK hands it over: a string, or (Mistral) a list
    of typed parts whose ``text`` parts are the answer (its ``thinking`` parts are not)."""
    if isinstance(delta, str):
        return delta
    if isinstance(delta, list):
        return "".join(part["text"] for part in delta if isinstance(part, dict)
                       and part.get("type") == "text" and isinstance(part.get("text"), str))
    return ""


def gemini_text(response: Any) -> str:
    """The answer text one Gemini response object carries: its first candidate's text
    parts that are not thoughts (the SDK's ``.text``, without its warning about other parts)."""
    candidates = getattr(response, "candidates", None) or []
    content = getattr(candidates[0], "content", None) if candidates else None
    return "".join(part.text for part in getattr(content, "parts", None) or []
                   if isinstance(getattr(part, "text", None), str) and not part.thought)
