"""Stopping a stream with the official SDK in front: what closing leaves behind.

A stop button, a budget or a cancel ends the turn mid-stream (lesson 5's
`lesson_lib.breaks.budget`); with an SDK's streaming helper the way to stop is to
close the stream, by leaving its ``with`` block or by calling ``close()``.
`close_early` replays a capture offline (`lesson_lib.capture.replay`) through the
helper, reads `n` of the helper's events, stops one of three ways, and
records what is left:

- ``with``: leave the ``with`` block (its exit calls the stream's
  ``close()``), then use the stream object kept from it;
- ``close``: call ``stream.close()`` inside the block;
- ``none``: stop reading but close nothing (what a loop that merely
  ``break``\\s does), for comparison.

What the installed SDKs (anthropic 2.17, openai 3.63) do, read from their
source (``lib/streaming``) and observed here, offline and over a real socket
(``lesson-lib serve``, in the tests), alike:

- ``close()`` and the ``with`` exit do the same thing: they close the HTTP
  response (``response.is_closed`` becomes true), and nothing else. The
  helper's event iterator is not told; the snapshot so far stays readable
  (Anthropic ``current_message_snapshot``, Chat
  ``current_completion_snapshot``: the partial object, ``stop_reason`` /
  ``finish_reason`` ``None``; Responses' ``ResponseStream`` has no public
  snapshot, only the events already handed out, whose text deltas carry a
  ``snapshot`` of their part's text).
- The ``get_final_*()`` methods first read the stream to its end. Bytes
  the client had already received are still decoded (events go on
  arriving into the snapshot); the first read from the closed connection
  fails, and every helper raises ``APIConnectionError`` with the transport's
  ``httpx2.ReadError`` as its cause: Anthropic's ``get_final_message()``,
  OpenAI's ``get_final_response()`` and ``get_final_completion()`` (anthropic
  2.16 and earlier let the ``httpx2.ReadError`` itself through). So what a close
  leaves depends on how much had arrived: had the whole body already come
  in (a fast server, a small answer), the final call returns it all.
- Called a second time, the read is over (the failed iterator is
  finished), so Anthropic's ``get_final_message()`` and Chat's
  ``get_final_completion()`` return the partial object as if it were final,
  with no error and a ``None`` stop or finish reason; Responses'
  ``get_final_response()`` raises ``RuntimeError`` (no ``response.completed``).
- Without a close, ``get_final_*()`` just reads on to the end of the stream
  and returns the whole answer: stopping the reading stops nothing.

The offline replay delivers the capture's recorded network chunks and
answers a read after ``close()`` as a closed socket does
(`lesson_lib.capture.replay`): the chunk already delivered is decoded to its end,
the next one never comes. Without that, a mock transport would go on
handing out the rest of the capture.

Which helper a capture's wire has is its registry entry's to say (its SDK
route's `close`, a `Helper`): the helpers of Anthropic Messages, OpenAI Responses and
OpenAI Chat are below, and a wire
whose route names none is refused with a `ValueError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from .. import wires
from ..capture import replay
from ..capture.captures import Capture
from ..wires import responses
from ..wires.entry import resolve

HOWS = ("with", "close", "none")


@dataclass(frozen=True)
class Call:
    """One call on the stream after the stop: what it returned (summarised) or raised."""

    name: str
    raised: str | None = None        # the exception's type name
    message: str = ""                # the exception's message
    cause: str | None = None         # the type name of what it was raised from
    text: str | None = None          # a returned object's text
    stop: str | None = None          # a returned object's stop / finish reason or status

    def __str__(self) -> str:
        if self.raised:
            cause = f" (from {self.cause})" if self.cause else ""
            return f"raises {self.raised}{cause}"
        return (f"returns {len(self.text or '')} characters, "
                f"{_STOP_WORD.get(self.name, 'stop')} {self.stop}")


@dataclass(frozen=True)
class LeftBehind:
    """What a stream closed after `events_read` events leaves behind."""

    key: str
    wire: str
    how: str
    events_read: int
    open_when_stopped: bool          # the response was still open when reading stopped
    closed: bool                     # ...and closed after the stop (before any final call)
    snapshot_from: str               # where the snapshot comes from
    snapshot_text: str | None        # the text so far, as the SDK holds it
    snapshot_stop: str | None
    final: Call                      # the first get_final_*() after the stop
    final_again: Call                # the same call once more
    next_event: str                  # what next(stream) does afterwards

    def row(self) -> dict[str, Any]:
        """One table row (the notebook's table)."""
        return {"wire": self.wire, "stopped by": self.how, "closed": self.closed,
                "snapshot text": self.snapshot_text, "first final call": str(self.final),
                "second final call": str(self.final_again)}


_STOP_WORD = {"get_final_message": "stop_reason", "get_final_completion": "finish_reason",
              "get_final_response": "status"}


def _anthropic_text(message: Any) -> str:
    return "".join(b.text for b in message.content if getattr(b, "type", "") == "text")


def _chat_text(completion: Any) -> str:
    choices = completion.choices or []
    return (choices[0].message.content or "") if choices else ""


@dataclass(frozen=True)
class Helper:
    """One SDK's streaming helper, as `close_early` drives it (a wire's `SDKRoute.close`):
    `final`, the final-object method; `snapshot(stream, events) -> (source, text, stop)`,
    what the stream shows so far; `summary(final) -> (text, stop)`; `open(capture, client,
    chunk_size)`, the helper's stream over the capture (`client` the caller's, else an
    offline one)."""

    final: str
    snapshot: Callable[[Any, list[Any]], tuple[str, str | None, str | None]]
    summary: Callable[[Any], tuple[str, str | None]]
    open: Callable[[Capture, Any, int | None], Any]


def _anthropic_snapshot(stream: Any, _events: list[Any]) -> tuple[str, str | None, str | None]:
    try:
        snap = stream.current_message_snapshot
    except AssertionError:                   # before message_start there is none
        return "current_message_snapshot", None, None
    return "current_message_snapshot", _anthropic_text(snap), snap.stop_reason


def _chat_snapshot(stream: Any, _events: list[Any]) -> tuple[str, str | None, str | None]:
    try:
        snap = stream.current_completion_snapshot
    except AssertionError:                   # before the first chunk there is none
        return "current_completion_snapshot", None, None
    choices = snap.choices or []
    return ("current_completion_snapshot", _chat_text(snap),
            choices[0].finish_reason if choices else None)


def _responses_snapshot(_stream: Any, events: list[Any]) -> tuple[str, str | None, str | None]:
    deltas = [e for e in events if e.type == responses.TEXT_DELTA]
    return ("the last text delta event's snapshot (no public snapshot)",
            deltas[-1].snapshot if deltas else None, None)


def _messages_stream(capture: Capture, client: Any, chunk_size: int | None) -> Any:
    client = client or replay.anthropic_client(capture, chunk_size)
    return client.messages.stream(**replay.request_kwargs(capture))


def _responses_stream(capture: Capture, client: Any, chunk_size: int | None) -> Any:
    client = client or replay.openai_client(capture, chunk_size)
    return client.responses.stream(**replay.request_kwargs(capture))


def _chat_stream(capture: Capture, client: Any, chunk_size: int | None) -> Any:
    client = client or replay.openai_client(capture, chunk_size)
    return client.chat.completions.stream(**replay.request_kwargs(capture))


# The SDK helpers lesson 5 stops early (Messages, Responses, Chat), each named by its
# wire's SDK route (`close`).
MESSAGES = Helper("get_final_message", _anthropic_snapshot,
                  lambda m: (_anthropic_text(m), m.stop_reason), _messages_stream)
RESPONSES = Helper("get_final_response", _responses_snapshot,
                   lambda r: (r.output_text, r.status), _responses_stream)
CHAT = Helper("get_final_completion", _chat_snapshot,
              lambda c: (_chat_text(c), (c.choices[0].finish_reason if c.choices else None)),
              _chat_stream)


def _call(stream: Any, helper: Helper) -> Call:
    try:
        value = getattr(stream, helper.final)()
    except Exception as exc:                 # what the SDK raises is the finding
        cause = None if exc.__cause__ is None else type(exc.__cause__).__name__
        return Call(helper.final, type(exc).__name__, str(exc), cause)
    text, stop = helper.summary(value)
    return Call(helper.final, text=text, stop=stop)


def _next(stream: Any) -> str:
    try:
        event = next(stream)
    except StopIteration:
        return "StopIteration (the iterator is finished)"
    except Exception as exc:
        return f"raises {type(exc).__name__}"
    return f"yields {event.type}"


def _response(stream: Any) -> Any:
    return stream.response if hasattr(stream, "response") else stream._response


def close_early(capture: Capture, n: int, how: str = "with", *, client: Any = None,
                chunk_size: int | None = None) -> LeftBehind:
    """Read `n` of the SDK helper's events from `capture`, stop `how`, and report what is left.

    `how` is ``with``, ``close`` or ``none`` (see the module). The body
    arrives in its recorded network chunks, or in `chunk_size`-byte ones
    (``len(capture.body)``: all of it had arrived before the stop). `client`
    replaces the offline client (the tests point one at ``lesson-lib serve``).
    No network is used otherwise.
    """
    if how not in HOWS:
        raise ValueError(f"how must be one of {', '.join(HOWS)}, not {how!r}")
    wire = capture.wire or ""
    entry = wires.ENTRIES.get(wire)
    helper = entry.sdk.close if entry is not None and entry.sdk is not None else None
    if helper is None:
        raise ValueError(f"{capture.key}: no SDK streaming helper for wire {wire!r}")
    helper = resolve(helper)
    events: list[Any] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)   # model-deprecation notices
        with helper.open(capture, client, chunk_size) as stream:
            while len(events) < n:
                event = next(stream, None)
                if event is None:
                    break
                events.append(event)
            open_when_stopped = not _response(stream).is_closed
            if how == "close":
                stream.close()
            if how != "with":
                return _report(capture, how, stream, helper, events, open_when_stopped)
        return _report(capture, how, stream, helper, events, open_when_stopped)


def _report(capture: Capture, how: str, stream: Any, helper: Helper, events: list[Any],
            open_when_stopped: bool) -> LeftBehind:
    closed = _response(stream).is_closed
    source, text, stop = helper.snapshot(stream, events)
    first = _call(stream, helper)
    again = _call(stream, helper)
    return LeftBehind(capture.key, capture.wire or "", how, len(events), open_when_stopped,
                      closed, source, text, stop, first, again, _next(stream))


def left_behind(captures: Iterable[Capture], n: int, hows: Iterable[str] = HOWS
                ) -> list[LeftBehind]:
    """`close_early` for each capture and each way of stopping, in order."""
    hows = tuple(hows)
    return [close_early(c, n, how) for c in captures for how in hows]


__all__ = ["CHAT", "HOWS", "MESSAGES", "RESPONSES", "Call", "Helper", "LeftBehind", "close_early",
           "left_behind"]
