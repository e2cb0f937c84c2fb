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

from ..wires import ENTRIES
from ..wires.entry import resolve
from .captures import Capture

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
    """Arguments for the SDK's create/stream call, from the sidecar's request (the wire's SDK
    route builds them: `lesson_lib.wires.entry.SDKRoute.request`)."""
    entry = ENTRIES.get(capture.wire or "")
    route = entry.sdk if entry is not None else None
    if route is None or route.request is None:
        return dict(capture.request)
    req = dict(capture.request)
    return resolve(route.request)(req, req.get("model") or route.model)


_HI = [{"role": "user", "content": "Hi"}]


def messages_kwargs(req: dict[str, Any], model: str) -> dict[str, Any]:
    """Anthropic's ``messages.stream`` arguments."""
    return {"model": model, "max_tokens": req.get("max_tokens", 1024),
            "messages": req.get("messages") or _HI}


def responses_kwargs(req: dict[str, Any], model: str) -> dict[str, Any]:
    """The Responses ``responses.stream`` arguments."""
    return {"model": model, "input": req.get("input") or "Hi"}


def chat_kwargs(req: dict[str, Any], model: str) -> dict[str, Any]:
    """The Chat ``chat.completions.stream`` arguments."""
    return {"model": model, "messages": req.get("messages") or _HI}


def gemini_kwargs(req: dict[str, Any], model: str) -> dict[str, Any]:
    """google-genai's ``models.generate_content_stream`` arguments."""
    return {"model": model, "contents": req.get("contents") or "Hi"}


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
    record and assembles nothing (`final` stays None). Gemini Interactions:
    ``interactions.create(..., stream=True)``, whose ``interaction.completed``
    event reports the interaction without its steps (`final`). `client`
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


def _drive(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
           out: SDKOutcome, texts: list[str], keep_events: bool,
           client: Any = None, on_event: OnEvent | None = None) -> None:
    entry = ENTRIES.get(capture.wire or "")
    route = entry.sdk if entry is not None else None
    try:
        if route is None or route.replay is None:
            raise ValueError(f"{capture.key}: no official SDK route, cannot replay through an SDK")

        def take(event: Any, text: str) -> None:
            if event is not None:         # None: text that came with no event of its own
                _take(event, out, keep_events, on_event)
            texts.append(text)

        out.final = resolve(route.replay)(capture, chunk_size, kwargs, client, take)
    except _OnEventFailed:
        raise
    except Exception as exc:  # the outcome *is* the exception: recorded, not hidden
        out.error = exc


Take = Callable[[Any, str], None]


def _stream(stream: Any, take: Take, kind: str, key: str) -> None:
    """Each of a helper's events to `take`, with the new text its `kind` events carry."""
    for event in stream:
        take(event, text_of(getattr(event, key)) if event.type == kind else "")


def replay_messages(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
                    client: Any, take: Take) -> Any:
    """Anthropic: ``messages.stream``, its ``text`` events, then ``get_final_message()``."""
    client = client or anthropic_client(capture, chunk_size)
    with client.messages.stream(**kwargs) as stream:
        _stream(stream, take, "text", "text")
        return stream.get_final_message()


def replay_responses(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
                     client: Any, take: Take) -> Any:
    """Responses: ``responses.stream``, its text deltas, then ``get_final_response()``."""
    client = client or openai_client(capture, chunk_size)
    with client.responses.stream(**kwargs) as stream:
        _stream(stream, take, "response.output_text.delta", "delta")
        return stream.get_final_response()


def replay_chat(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
                client: Any, take: Take) -> Any:
    """Chat: ``chat.completions.stream``, its ``content.delta`` events, then
    ``get_final_completion()``."""
    client = client or openai_client(capture, chunk_size)
    with client.chat.completions.stream(**kwargs) as stream:
        _stream(stream, take, "content.delta", "delta")
        return stream.get_final_completion()


def replay_gemini(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
                  client: Any, take: Take) -> Any:
    """Gemini: ``models.generate_content_stream``, one response object per record; it
    assembles nothing (no final object)."""
    client = client or gemini_client(capture, chunk_size)
    for event in client.models.generate_content_stream(**kwargs):
        take(event, gemini_text(event))
    return None


def interactions_kwargs(req: dict[str, Any], model: str) -> dict[str, Any]:
    """Gemini Interactions: ``interactions.create``'s arguments, the stream asked for."""
    return {"model": model, "input": req.get("input") or "Hi", "stream": True}


def replay_interactions(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
                        client: Any, take: Take) -> Any:
    """Gemini Interactions: ``interactions.create(..., stream=True)``, one typed object per
    event, assembled into nothing: the interaction ``interaction.completed`` reports
    (without its steps) is the final object."""
    client = client or gemini_client(capture, chunk_size)
    final = None
    for event in client.interactions.create(**kwargs):
        take(event, interactions_text(event))
        if getattr(event, "event_type", None) == "interaction.completed":
            final = event.interaction
    return final


def interactions_text(event: Any) -> str:
    """The answer text one Gemini Interactions event carries: a ``text`` delta's text (a
    model output's; thought summaries are other deltas)."""
    delta = getattr(event, "delta", None)
    text = getattr(delta, "text", None)
    return text if getattr(delta, "type", None) == "text" and isinstance(text, str) else ""


def session_kwargs(req: dict[str, Any], model: str) -> dict[str, Any]:
    """A Managed Agents session stream: ``beta.sessions.events.stream``'s arguments (the
    session, and the event types whose deltas were asked for; no model)."""
    kwargs = {"session_id": req.get("session_id") or "sesn_offline"}
    return kwargs | ({"event_deltas": req["event_deltas"]} if req.get("event_deltas") else {})


def replay_session(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
                   client: Any, take: Take) -> Any:
    """A Managed Agents session stream through ``beta.sessions.events.stream``, each event
    folded with the SDK's own ``accumulate_managed_agents_event``: its last snapshot (the
    latest agent message) is the final object, and its text the text."""
    from anthropic.lib.sessions import accumulate_managed_agents_event
    client = client or anthropic_client(capture, chunk_size)
    final = None
    for event in client.beta.sessions.events.stream(**kwargs):
        take(event, "")
        final = accumulate_managed_agents_event(final, event)
    if final is not None:     # the text is the last agent message's, not every event's
        take(None, "".join(getattr(c, "text", "") for c in final.content))
    return final


def openai_session_kwargs(req: dict[str, Any], model: str) -> dict[str, Any]:
    """An OpenAI Agents session stream: ``beta.agents.sessions.events.stream``'s arguments
    (the session; no model)."""
    return {"session_id": req.get("session_id") or "sess_offline"}


class HelperState(dict):
    """What the openai SDK's session stream helper kept, as data (``model_dump`` gives it
    back, as the other SDKs' final objects do)."""

    def model_dump(self, **_: Any) -> dict[str, Any]:
        """The state as JSON data."""
        return dict(self)


def replay_openai_session(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
                          client: Any, take: Take) -> Any:
    """An OpenAI Agents session stream through ``beta.agents.sessions.events.stream``,
    every event it yields taken, and the events the helper (``sessions.stream``) accepts
    (``_TurnState.accept``: each id once in its window) fed to its own state, until it
    stops (``_TurnState.terminal``): the final object is that state (`HelperState`: the
    ``AgentTurnResultCollector``'s turn, messages, required actions and failure, the root
    turn's end, and whether the helper stopped). The helper itself cannot run offline: it
    reads the session and posts the input before it streams."""
    from openai.lib.beta.agents._result import AgentTurnResultCollector
    from openai.lib.streaming.agents._streams import _TurnState
    client = client or openai_client(capture, chunk_size)
    state, collector = _TurnState(), AgentTurnResultCollector(kwargs["session_id"])
    done = False
    for event in client.beta.agents.sessions.events.stream(**kwargs):
        fresh = not done and state.accept(event)
        delta = getattr(event, "delta", "")
        take(event, delta if fresh and event.type == "agent.session.turn.output_text.delta"
             and isinstance(delta, str) else "")
        if fresh:
            collector.accept(event)
            done = state.terminal(event, kwargs["session_id"])

    def dump(model: Any) -> Any:
        return model.to_dict(mode="json") if model is not None else None
    return HelperState(turn=dump(collector.turn), messages=[dump(m) for m in collector.messages()],
                       required_actions=[dump(a) for a in collector.required_actions],
                       session_failed=collector.session_failed, turn_ended=state.turn_ended,
                       done=done)


def replay_boto3(capture: Capture, chunk_size: int | None, kwargs: dict[str, Any],
                 client: Any, take: Take) -> Any:
    """Bedrock: boto3 yields plain dicts and assembles no final object (`bedrock_replay`)."""
    from .bedrock_replay import boto3_events, text_of_event
    for event in boto3_events(capture, chunk_size, client):
        take(event, text_of_event(event))
    return None


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
