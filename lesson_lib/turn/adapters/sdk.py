"""The SDK adapter: the official SDKs' own stream events, said in the turn's vocabulary.

With an SDK put back in front of the wire (``messages.stream``,
``responses.stream``, ``chat.completions.stream``, Gemini's
``generate_content_stream``: `gemini_sdk`), the application no longer
sees bytes, only the SDK's event objects. This adapter reads those objects
by their ``type`` and attributes (no SDK is imported here), turns them into
the same change records an accumulator returns, and hands them to the
wire's own adapter: so the SDK is one more source, and nothing downstream
changes.

It reads the SDK's *raw* events (Anthropic ``content_block_*``, Responses
``response.*``, Chat ``chunk``) and ignores the helpers' derived ones
(``text``, ``input_json``, ``content.delta``, ``...arguments.done``): those
repeat the raw events, and Chat's ``arguments.done`` can come early for
interleaved calls.

One reading of each wire where the SDK allows it. A Chat chunk's JSON dump
(``to_dict()``) is the wire's payload on every capture the SDK accepts, so
Chat chunks go to the Chat accumulator itself, as the wire route's do. The
other SDKs' events do not give their wire payload back, so they keep a
translator here:

- Anthropic: the helper adds ``content_block`` to every ``content_block_stop``
  and ``message`` to ``message_stop``, writes a container's ``expires_at`` in
  another date format, never yields ``ping``, and raises at an ``error``;
- Responses: the helper adds ``snapshot`` to text and argument deltas,
  ``parsed`` and ``parsed_arguments`` to done statements and the terminal
  response, drops ``obfuscation``, turns integers into floats (``created_at``,
  ``completed_at``, ``temperature``, ``top_p``), adds ``sequence_number`` and
  ``logprobs`` to a stream that had none, and raises on an ``error``, on a
  stream that starts with anything but ``response.created`` and on a
  ``call_id`` restated at an item's done;
- Gemini: the dump adds ``sdkHttpResponse``, drops ``createTime`` and
  ``serviceTier``, re-encodes ``thoughtSignature`` (URL-safe base64) and turns
  integers into floats.

What the SDK does not let it see, whatever the adapter does:

- where and when anything arrived (byte offsets, arrival times, event
  indexes): the SDK events carry none;
- a stream cut in the middle of an event (the SDK drops the partial bytes
  silently) is a cut at the last whole event;
- Chat's ``[DONE]``: the SDK never yields it, so a Chat step counts as ended
  properly once every choice has its finish reason and the usage chunk came if
  one was owed: the wire route's rule for a body without ``[DONE]``
  (`wires.chat.ended_without_done`), with the body taken as whole;
- what an in-band Chat error chunk carries beside its error (OpenRouter's usage):
  the SDK raises with the error object alone;
- anything after the Responses helper's own check fails (an item whose
  ``call_id`` the ``output_item.done`` restates, as a client tool search does:
  ``RuntimeError``), or after it refuses a stream that begins with anything but
  ``response.created`` (``response.queued``: a background response read from its
  start; a resumed stream): where the wire ended properly, the step fails with
  the SDK's refusal (``sdk_refused``, its exception's message), not as a cut
  stream; where the wire did not (a stream that is only ``response.failed`` or
  an ``error``), the step is cut there (``sdk_broke``) and the failure is not
  seen;
- an in-band error ends the SDK's iteration with an exception (Anthropic:
  an ``APIStatusError`` whose status is 200): the events after it are lost.
"""

from __future__ import annotations

import json
from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ...accumulate.responses.objects import get_path
from ...accumulate.responses.vocabulary import (
    AUDIO,
    AUDIO_EVENTS,
    CHANNELS,
    PART_TEXT_KEY,
    TOOL_ITEMS,
)
from ...diagnostics import Diagnostic
from ...sse.decoder import ServerSentEvent
from ...tool_calls import ToolCall
from ...wires.wire_events import parse_payload
from ..events import TurnEvent
from . import adapter_for
from .base import Counter, WireAdapter


def _data(obj: Any) -> Any:
    """An SDK model as plain data (its own `model_dump`), anything else as it is."""
    dump = getattr(obj, "model_dump", None)
    if not callable(dump):
        return obj
    try:
        return dump(warnings=False)      # an unknown delta type is data, not a warning
    except TypeError:
        return dump()


def _get(obj: Any, name: str, default: Any = None) -> Any:
    if isinstance(obj, dict):
        return obj.get(name, default)
    return getattr(obj, name, default)


class _Calls:
    """The tool calls one SDK stream forms, checked with lesson 3's `ToolCall`."""

    def __init__(self) -> None:
        self.calls: dict[Any, ToolCall] = {}

    def open(self, address: Any, name: str | None, call_id: str | None,
             given: Any = None, free_text: bool = False) -> None:
        # A call whose start already carries its whole input (no fragment follows); a
        # custom tool's input is free text, not JSON (no partial JSON, no settled paths).
        if free_text:
            self.calls[address] = ToolCall(name, call_id, kind="custom_tool_call",
                                           json_arguments=False)
        else:
            self.calls[address] = (ToolCall(name, call_id, given=given) if given
                                   else ToolCall(name, call_id))

    def grow(self, address: Any, fragment: str) -> ch.ToolInputGrew | None:
        call = self.calls.get(address)
        if call is None or call.ended:
            return None
        return ch.ToolInputGrew(None, address, fragment, tuple(call.feed(fragment)))

    def close(self, address: Any, how: str, *, reason: str | None = None,
              final_text: str | None = None, cut: bool = False) -> ch.SlotClosed:
        call = self.calls.get(address)
        if call is None:
            return ch.SlotClosed(None, address, how, synthesised=cut, reason=reason)
        if cut:
            call.cut()
        else:
            call.end(final_text)
        return ch.SlotClosed(None, address, how, synthesised=cut, reason=reason,
                             call_state=call.state, input=call.input)


class _Translator:
    """SDK events of one wire -> change records."""

    def __init__(self) -> None:
        self.calls = _Calls()
        self.open: dict[Any, bool] = {}     # address -> takes input
        self.terminal = False

    def opened(self, change: ch.SlotOpened) -> ch.SlotOpened:
        self.open[change.address] = change.takes_input
        if change.takes_input:
            given = change.data.get("input") if isinstance(change.data, dict) else None
            self.calls.open(change.address, change.name, change.call_id, given,
                            free_text=change.slot_kind == "custom_tool_call")
        return change

    def closed(self, address: Any, how: str, **kw: Any) -> list[ch.SlotClosed]:
        if address not in self.open:
            return []
        takes_input = self.open.pop(address)
        if takes_input:
            return [self.calls.close(address, how, **kw)]
        return [ch.SlotClosed(None, address, how, synthesised=kw.get("cut", False),
                              reason=kw.get("reason"))]

    def close_all(self) -> list[ch.SlotClosed]:
        out: list[ch.SlotClosed] = []
        for address in list(self.open):
            out += self.closed(address, "end_of_stream", cut=True)
        return out

    def changes(self, ev: Any) -> list:
        raise NotImplementedError


class _AnthropicSDK(_Translator):
    _INPUT = wires.anthropic.CALL_BLOCKS
    _STREAMED = frozenset({wires.anthropic.TEXT_BLOCK, wires.anthropic.THINKING_BLOCK,
                           wires.anthropic.COMPACTION_BLOCK}) | _INPUT

    def changes(self, ev: Any) -> list:
        kind = ev.type
        if kind == wires.anthropic.MESSAGE_START:
            msg = ev.message
            # (A resumed response's start may already say why it stopped.)
            out: list = [ch.ResponseChanged(None, {"id": msg.id, "model": msg.model,
                                                   "stop_reason": msg.stop_reason,
                                                   "usage": _data(msg.usage)})]
            # Blocks a resumed response's start already holds: each as if it had streamed.
            for i, block in enumerate(_get(msg, "content") or ()):
                start, deltas = wires.anthropic.as_streamed(_data(block))
                out += self._started(i, start)
                for delta in deltas:
                    out += self._delta(i, delta, ev)
                out += self.closed(i, "stop")
            return out
        if kind == wires.anthropic.CONTENT_BLOCK_START:
            return self._started(ev.index, ev.content_block)
        if kind == wires.anthropic.CONTENT_BLOCK_DELTA:
            return self._delta(ev.index, ev.delta, ev)
        if kind == wires.anthropic.CONTENT_BLOCK_STOP:
            return self.closed(ev.index, "stop")
        if kind == wires.anthropic.MESSAGE_DELTA:
            return [ch.ResponseChanged(None, {"stop_reason": ev.delta.stop_reason,
                                              "usage": _data(ev.usage)})]
        if kind == wires.anthropic.MESSAGE_STOP:
            self.terminal = True
            return [ch.TerminalReached(None, wires.anthropic.MESSAGE_STOP)]
        if kind in ("text", "thinking", "signature", "input_json", "citation"):
            return []       # the helper's projections of the raw deltas above
        if kind == wires.anthropic.PING:
            return []
        return [ch.UnknownEvent(None, kind, _data(ev))]

    def _started(self, index: int, block: Any) -> list:
        """A block's start (an SDK object, or the data of one a start stated whole)."""
        btype = _get(block, "type")
        data = _data(block)
        opened = [self.opened(ch.SlotOpened(
            None, index, btype, btype, name=_get(block, "name"),
            call_id=_get(block, "id"), content=_get(block, "text") or "",
            whole=btype not in self._STREAMED, takes_input=btype in self._INPUT,
            data=data))]
        to = data.get("to") if btype == "fallback" else None
        if isinstance(to, dict) and isinstance(to.get("model"), str):
            # The event names the model that serves the rest, as on the wire route.
            opened.append(ch.ResponseChanged(None, {"model": to["model"]}))
        return opened

    def _delta(self, i: int, delta: Any, ev: Any) -> list:
        """A block's delta (an SDK object, or the data of one a start stated whole)."""
        dtype = _get(delta, "type")
        if dtype == "text_delta":
            return [ch.TextAppended(None, i, "text", _get(delta, "text"))]
        if dtype == "thinking_delta":
            return [ch.TextAppended(None, i, "reasoning", _get(delta, "thinking"), "thinking")]
        if dtype == "signature_delta":
            return [ch.SlotSigned(None, i, _get(delta, "signature"))]
        if dtype == "input_json_delta":
            grew = self.calls.grow(i, _get(delta, "partial_json"))
            return [grew] if grew else []
        if dtype == "citations_delta":
            return [ch.CitationAdded(None, i, _data(_get(delta, "citation")))]
        if dtype == "compaction_delta":   # beta: the stable SDK builds it loosely
            content = _data(delta).get("content")
            return [ch.TextAppended(None, i, "other", content, "content")
                    ] if isinstance(content, str) and content else []
        return [ch.UnknownEvent(None, dtype, _data(ev))]


# Responses events that grow or end a call's input, and other streamed fields of items.
_CALL_DELTAS = frozenset({wires.responses.ARGUMENTS_DELTA,
                          wires.responses.CUSTOM_TOOL_CALL_INPUT_DELTA,
                          wires.responses.MCP_CALL_ARGUMENTS_DELTA})
_CALL_DONES = {wires.responses.FUNCTION_CALL_ARGUMENTS_DONE: "arguments",
               wires.responses.CUSTOM_TOOL_CALL_INPUT_DONE: "input",
               wires.responses.MCP_CALL_ARGUMENTS_DONE: "arguments"}
_FIELD_DELTAS = {wires.responses.CODE_INTERPRETER_CALL_CODE_DELTA: "code",
                 "response.apply_patch_call_operation_diff.delta": "diff"}


class _ResponsesSDK(_Translator):
    def __init__(self) -> None:
        super().__init__()
        self.audio: dict[str, list[str]] | None = None   # the spoken output's pieces
        self.audio_done: set[str] = set()
        self.items: set[int] = set()     # output indexes whose item was met

    def _audio(self, ev: Any, kind: str) -> list:
        """Spoken output, as the accumulator says it: a slot of its own, opened by the
        first audio event, its transcript the text, closed when sound and transcript are
        done."""
        out: list = []
        if self.audio is None:
            self.audio = {"data": [], "transcript": []}
            out.append(self.opened(ch.SlotOpened(None, AUDIO, "audio", "audio")))
        stream, is_delta = AUDIO_EVENTS[kind]
        if is_delta:
            self.audio[stream].append(ev.delta)
            if stream == "transcript":
                out.append(ch.TextAppended(None, AUDIO, "other", ev.delta, "transcript"))
            return out
        self.audio_done.add(stream)
        if len(self.audio_done) == 2 and self.open.pop(AUDIO, None) is not None:
            out.append(ch.SlotClosed(None, AUDIO, "done", data={
                key: "".join(pieces) for key, pieces in self.audio.items()}))
        return out

    def changes(self, ev: Any) -> list:
        kind = ev.type
        if kind in AUDIO_EVENTS:
            return self._audio(ev, kind)
        if kind in (wires.responses.CREATED, wires.responses.IN_PROGRESS, wires.responses.QUEUED):
            r = ev.response
            return [ch.ResponseChanged(None, {"id": r.id, "model": r.model,
                                              "status": r.status}), *self._stated(r)]
        if kind == wires.responses.ITEM_ADDED:
            return [self._added(ev.output_index, ev.item)]
        if kind == wires.responses.CONTENT_PART_ADDED:
            part = ev.part
            return [self.opened(ch.SlotOpened(None, (ev.output_index, ev.content_index),
                                              part.type, part.type,
                                              content=_get(part, "text") or ""))]
        if kind == wires.responses.REASONING_SUMMARY_PART_ADDED:
            return [self.opened(ch.SlotOpened(None, (ev.output_index, "summary",
                                                     ev.summary_index), "summary_text",
                                              "summary_text"))]
        if kind in (wires.responses.TEXT_DELTA, wires.responses.REFUSAL_DELTA):
            channel = "refusal" if kind == wires.responses.REFUSAL_DELTA else "text"
            return [ch.TextAppended(None, (ev.output_index, ev.content_index), channel,
                                    ev.delta)]
        if kind in (wires.responses.REASONING_SUMMARY_TEXT_DELTA,
                    wires.responses.REASONING_TEXT_DELTA):
            index = _get(ev, "summary_index", _get(ev, "content_index", 0))
            return [ch.TextAppended(None, (ev.output_index, "summary", index), "reasoning",
                                    ev.delta, "summary_text")]
        if kind in _CALL_DELTAS:
            grew = self.calls.grow((ev.output_index,), ev.delta)
            return [grew] if grew else []
        if kind in _CALL_DONES:
            return self.closed((ev.output_index,), "arguments_done",
                               final_text=_get(ev, _CALL_DONES[kind]))
        if kind in _FIELD_DELTAS:
            # (The SDK types the diff delta of apply_patch as an audio delta: read by type.)
            return [ch.TextAppended(None, (_get(ev, "output_index"),), "other", ev.delta,
                                    _FIELD_DELTAS[kind])]
        if kind == wires.responses.OUTPUT_TEXT_ANNOTATION_ADDED:
            return [ch.CitationAdded(None, (ev.output_index, ev.content_index),
                                     _data(ev.annotation))]
        if kind == wires.responses.CONTENT_PART_DONE:
            return self.closed((ev.output_index, ev.content_index), "done")
        if kind == wires.responses.REASONING_SUMMARY_PART_DONE:
            return self.closed((ev.output_index, "summary", ev.summary_index), "done")
        if kind == wires.responses.ITEM_DONE:
            return self._done(ev.output_index, ev.item)
        if kind in wires.responses.TERMINAL_STATUS:
            self.terminal = True
            r = ev.response
            return [ch.ResponseChanged(None, {"status": r.status, "usage": _data(r.usage),
                                              "incomplete_details":
                                                  _data(r.incomplete_details)}),
                    ch.TerminalReached(None, kind)]
        if kind == "error":
            return [ch.InBandError(None, _get(ev, "message") or "error", _data(ev),
                                   _get(ev, "code"))]
        if kind.endswith(".delta") or kind.endswith(".done") or kind.endswith(".added"):
            return []       # text / arguments repeated whole at their end
        return [ch.UnknownEvent(None, kind, _data(ev))]

    def _added(self, oi: int, item: Any) -> ch.SlotOpened:
        """An item announced (an SDK object, or the data of one a lifecycle event holds)."""
        self.items.add(oi)
        itype = _get(item, "type")
        return self.opened(ch.SlotOpened(
            None, (oi,), itype, itype, name=_get(item, "name"), call_id=_get(item, "call_id"),
            item_id=_get(item, "id"), data=_data(item), takes_input=itype in TOOL_ITEMS))

    def _done(self, oi: int, item: Any) -> list:
        """An item ended (an SDK object, or the data of one a lifecycle event holds)."""
        ends = self.closed((oi,), "done")
        if not ends and _get(item, "type") == wires.responses.FUNCTION_CALL_ITEM:
            return []
        data = _data(item)
        if ends:
            end = ends[0]
            return [ch.SlotClosed(None, end.address, end.how, end.synthesised, end.reason,
                                  end.call_state, end.input, data)]
        return [ch.SlotClosed(None, (oi,), "done", data=data)]

    def _stated(self, response: Any) -> list:
        """The items a lifecycle event already holds finished (a response read from its
        start after output began), each as if it had streamed: announced, its parts' text
        or its call's input grown, its parts, its call and itself done."""
        out: list = []
        for oi, item in enumerate(_get(response, "output") or ()):
            if oi in self.items:
                continue
            data = _data(item)
            out.append(self._added(oi, data))
            for key, prefix in (("content", (oi,)), ("summary", (oi, "summary"))):
                parts = data.get(key)
                for n, part in enumerate(parts if isinstance(parts, list) else ()):
                    ptype = part.get("type") if isinstance(part, dict) else None
                    if ptype not in PART_TEXT_KEY:
                        continue
                    address = (*prefix, n)
                    out.append(self.opened(ch.SlotOpened(None, address, ptype, ptype)))
                    text = part.get(PART_TEXT_KEY[ptype])
                    if isinstance(text, str) and text:
                        out.append(ch.TextAppended(None, address, CHANNELS[ptype], text, ptype))
                    out += self.closed(address, "done")
            path = TOOL_ITEMS.get(data.get("type"))
            text = get_path(data, path) if path is not None else None
            if isinstance(text, str):
                grew = self.calls.grow((oi,), text) if text else None
                out += [grew] if grew else []
                out += self.closed((oi,), "arguments_done", final_text=text)
            out += self._done(oi, data)
        return out


class _ChatSDK:
    """Chat chunks, read by the wire's own accumulator: each chunk's JSON dump is the
    wire's payload (measured on every capture the SDK accepts), so the SDK route and the
    wire route are one reading of the wire. The SDK never yields ``[DONE]``: the
    accumulator's rule for a body without it (`wires.chat.ended_without_done`, the body
    taken as whole) says whether the step ended properly."""

    WIRE = wires.chat.WIRE      # the wire whose accumulator reads the payloads

    def __init__(self) -> None:
        from ...accumulate import accumulator_for
        self.acc = accumulator_for(self.WIRE)
        self.count = 0
        self._end: list | None = None

    def _read(self, name: str | None, data: str) -> list:
        """One payload (`data`, the SSE event's `name`) read as the wire route reads it:
        parsed, numbered in its turn, and fed to the accumulator."""
        event = parse_payload(ServerSentEvent(name, data), self.count)
        self.count += 1
        return self.acc.feed(event)

    def changes(self, ev: Any) -> list:
        if ev.type != "chunk":
            return []       # content.delta, tool_calls.*: projections of the chunks
        # The dump, as the wire would have carried it, parsed as the wire route parses it.
        return self._read(None, json.dumps(ev.chunk.to_dict(warnings=False)))

    def error(self, body: Any, message: str) -> list:
        """The in-band error the SDK raised instead of yielding its chunk: read as the
        wire route reads that chunk."""
        error = body if isinstance(body, dict) and body else {"message": message}
        return self._read(None, json.dumps({"error": error}))

    def _finished(self) -> list:
        if self._end is None:
            self._end = [c for c in self.acc.finish() if not isinstance(c, ch.StreamEnded)]
        return self._end

    @property
    def terminal(self) -> bool:
        """Whether the chunks so far end the step properly."""
        self._finished()
        return self.acc.complete

    def close_all(self) -> list:
        """What the end of the chunks closes and notes (the accumulator's `finish`)."""
        return self._finished()


# The translators each wire's registry entry names (`Entry.sdk`), by the names it uses.
class _SessionEventsSDK(_ChatSDK):
    """A session's events, read by the wire's own accumulator: each event's dump (the
    fields the server sent) is the wire's payload, named by its type."""

    def changes(self, ev: Any) -> list:
        return self._read(ev.type, json.dumps(ev.to_dict(mode="json")))


class _SessionSDK(_SessionEventsSDK):
    """A Managed Agents session's events, read by the wire's own accumulator: each event's
    dump (the fields the server sent) is the wire's payload, named by its type, so the SDK
    route and the wire route are one reading (previews, duplicates and all). The SDK yields
    every event it reads and raises at an SSE ``error`` event, read as the wire reads it."""

    WIRE = wires.managed_agents.WIRE

    def error(self, body: Any, message: str) -> list:
        """The ``error`` event the SDK raised at instead of yielding it."""
        error = body if isinstance(body, dict) and body else {"message": message}
        return self._read(wires.managed_agents.ERROR,
                          json.dumps({"type": wires.managed_agents.ERROR, "error": error}))


class _OpenAISessionSDK(_SessionEventsSDK):
    """An OpenAI Agents session's events (``beta.agents.sessions.events.stream``), read by
    the wire's own accumulator: each event's dump (the fields the server sent) is the
    wire's payload, so the SDK route and the wire route are one reading (duplicates and
    all). The stream yields ``error`` events as values: read as the wire reads them."""

    WIRE = wires.openai_sessions.WIRE


AnthropicSDK, ResponsesSDK, ChatSDK = _AnthropicSDK, _ResponsesSDK, _ChatSDK
SessionSDK, OpenAISessionSDK = _SessionSDK, _OpenAISessionSDK


class SDKAdapter:
    """Turn events for one step from an SDK's stream events (see the module)."""

    def __init__(self, wire: str, step: int = 1, seq: Counter | None = None, *,
                 model: str | None = None, block_start: int = 0,
                 dialect: str | None = None) -> None:
        entry = wires.ENTRIES.get(wire)
        if entry is None or entry.sdk is None:
            raise ValueError(f"no SDK adapter for wire {wire!r}")
        self.wire = wire
        self.translator = entry.new_translator()
        self.adapter: WireAdapter = adapter_for(wire, step, seq, model=model,
                                                block_start=block_start, dialect=dialect)
        self.seen = 0

    def begin(self) -> list[TurnEvent]:
        """The step's start."""
        return self.adapter.begin()

    def feed(self, event: Any) -> list[TurnEvent]:
        """The turn events one SDK event means."""
        self.seen += 1
        return self.adapter.feed(self.translator.changes(event))

    def end(self, error: BaseException | None = None, *,
            wire_ended: bool = False, tail_cut: str | None = None) -> list[TurnEvent]:
        """The SDK's iteration is over: returned (`error` None) or raised `error`.

        A status error before any event is a failed request; one during the
        stream is an in-band error. An error the helper raises only while
        building its final object, after the stream's own terminal
        (Responses ``incomplete``, Chat ``length`` / ``content_filter``), is
        the helper's opinion of a proper stream, not the turn's error.
        `wire_ended` says the bytes the SDK read ended properly: a helper that
        raised before it let the terminal through then refused a whole stream
        (``sdk_refused``, its exception's message: the step fails), where
        without it the stream was cut under it (``sdk_broke``). `tail_cut`: the SDK
        returned at the stream's terminal, but the bytes went on with what makes no whole
        event (a frame cut short, junk after the end), which its reader drops without a
        word: the stream did not end properly, and the step says so (``sdk_missed_tail``).
        """
        status = getattr(error, "status_code", None)
        body = getattr(error, "body", None)
        if status is None and type(getattr(error, "code", None)) is int and hasattr(
                error, "details"):      # google-genai's APIError: `code` and `details`
            status, body = error.code, error.details
        info = body.get("error", body) if isinstance(body, dict) else {}
        etype = ((info.get("type") or info.get("status") or info.get("code"))
                 if isinstance(info, dict) else None)
        if error is not None and self.seen == 0 and status is not None and status >= 300:
            message = info.get("message") if isinstance(info, dict) else None
            return self.adapter.http_error(status, f"HTTP {status} before any event: "
                                           f"{message or error}", body, error_type=etype)
        changes: list = []
        out: list[TurnEvent] = []
        if error is not None and _is_connection_error(error):
            out = self.adapter.transport_error(f"the connection failed: {error}")
        elif error is not None and _exception_frame(error) is not None:
            code, message = _exception_frame(error)   # type: ignore[misc]
            changes.append(ch.InBandError(None, f"{code}: {message}",
                                          {"type": code, "message": message}, code))
        elif error is not None and (hasattr(error, "body") or status is not None):
            # The API's own error, in the stream (Chat: even after every finish reason).
            message = info.get("message") if isinstance(info, dict) else None
            if isinstance(self.translator, _ChatSDK):
                changes += self.translator.error(info, message or str(error))
            else:
                changes.append(ch.InBandError(None, message or str(error), body, etype))
        elif error is not None and wire_ended and not self.translator.terminal:
            # The bytes arrived whole (ended properly, or with an in-band error the helper
            # never reached), and the helper refused them before its terminal (a Responses
            # stream that begins with response.queued, ids that rotate): what the
            # application got is the SDK's refusal, not a cut stream.
            changes.append(ch.DiagnosticNoted(None, Diagnostic(
                "sdk_refused", "the SDK's helper refused a stream that arrived whole on "
                f"the wire: {type(error).__name__}: {error}", severity="error",
                raw=str(error))))
        elif error is not None:
            # The helper itself raised: on a cut stream (``sdk_broke``: it can fail an
            # assertion), or on a proper one it does not like (``sdk_raised``: length,
            # content filter, incomplete).
            # The stream is what it is; the raise is noted.
            code = "sdk_raised" if self.translator.terminal else "sdk_broke"
            changes.append(ch.DiagnosticNoted(None, Diagnostic(
                code, f"the SDK's helper raised {type(error).__name__}: {error}",
                severity="warning")))
        if error is None and tail_cut is not None and self.translator.terminal:
            changes.append(ch.DiagnosticNoted(None, Diagnostic(
                "sdk_missed_tail", "the SDK returned at the stream's terminal event, but the "
                f"body did not end properly after it: {tail_cut}", severity="warning")))
        changes += self.translator.close_all()
        proper = self.translator.terminal and tail_cut is None and not any(
            isinstance(c, ch.InBandError) for c in changes)
        refused = any(isinstance(c, ch.DiagnosticNoted) and c.diagnostic.code == "sdk_refused"
                      for c in changes)
        missed_tail = error is None and tail_cut is not None and self.translator.terminal
        changes.append(ch.StreamEnded(None, proper, None if proper else
                                      "tail_cut" if missed_tail else
                                      "sdk_refused" if refused else "cut"))
        return out + self.adapter.feed(changes)


def _exception_frame(error: BaseException) -> tuple[str, str] | None:
    """(code, message) of botocore's ``EventStreamError``: boto3 raises it at a Bedrock
    exception frame, an in-band error. Known by name and shape: the core imports no SDK."""
    response = getattr(error, "response", None)
    if type(error).__name__ != "EventStreamError" or not isinstance(response, dict):
        return None
    err = response.get("Error") or {}
    return str(err.get("Code") or "error"), str(err.get("Message") or error)


def _is_connection_error(error: BaseException) -> bool:
    """The SDKs' connection and timeout errors (``APIConnectionError``, ``APITimeoutError``),
    known by name: the core imports no SDK."""
    return any(cls.__name__ in ("APIConnectionError", "APITimeoutError")
               for cls in type(error).__mro__)


def turn_events_from_sdk(wire: str, events: list[Any], error: BaseException | None = None,
                         *, step: int = 1, seq: Counter | None = None,
                         model: str | None = None, dialect: str | None = None,
                         wire_ended: bool = False) -> list[TurnEvent]:
    """One step's turn events from what an SDK's streaming helper yielded (and raised);
    `wire_ended`: the bytes it read ended properly (see `SDKAdapter.end`)."""
    adapter = SDKAdapter(wire, step, seq, model=model, dialect=dialect)
    out = adapter.begin()
    for event in events:
        out += adapter.feed(event)
    out += adapter.end(error, wire_ended=wire_ended)
    return out
