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
  ``RuntimeError``): the step is cut there (``sdk_broke``), though the wire
  ended properly;
- a Responses stream that begins with anything but ``response.created``
  (``response.queued``, or a stream that is only ``response.failed`` or an
  ``error``): the helper raises at once, so the step is cut before anything
  and the failure is not seen;
- an in-band error ends the SDK's iteration with an exception (Anthropic:
  an ``APIStatusError`` whose status is 200): the events after it are lost.
"""

from __future__ import annotations

from typing import Any

from ... import wires
from ...accumulate import changes as ch
from ...capture.diagnostics import Diagnostic
from ...tool_calls import ToolCall
from ..events import TurnEvent
from . import adapter_for
from .base import Counter, WireAdapter
from .gemini_sdk import GeminiSDKTranslator


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
    _INPUT = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
    _STREAMED = frozenset({"text", "thinking"}) | _INPUT

    def changes(self, ev: Any) -> list:
        kind = ev.type
        if kind == wires.anthropic.MESSAGE_START:
            msg = ev.message
            return [ch.ResponseChanged(None, {"id": msg.id, "model": msg.model,
                                              "usage": _data(msg.usage)})]
        if kind == wires.anthropic.CONTENT_BLOCK_START:
            block = ev.content_block
            btype = block.type
            return [self.opened(ch.SlotOpened(
                None, ev.index, btype, btype, name=_get(block, "name"),
                call_id=_get(block, "id"), content=_get(block, "text") or "",
                whole=btype not in self._STREAMED, takes_input=btype in self._INPUT,
                data=_data(block)))]
        if kind == wires.anthropic.CONTENT_BLOCK_DELTA:
            delta, i = ev.delta, ev.index
            dtype = delta.type
            if dtype == "text_delta":
                return [ch.TextAppended(None, i, "text", delta.text)]
            if dtype == "thinking_delta":
                return [ch.TextAppended(None, i, "reasoning", delta.thinking, "thinking")]
            if dtype == "signature_delta":
                return [ch.SlotSigned(None, i, delta.signature)]
            if dtype == "input_json_delta":
                grew = self.calls.grow(i, delta.partial_json)
                return [grew] if grew else []
            if dtype == "citations_delta":
                return [ch.CitationAdded(None, i, _data(delta.citation))]
            return [ch.UnknownEvent(None, dtype, _data(ev))]
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
    def changes(self, ev: Any) -> list:
        kind = ev.type
        if kind in (wires.responses.CREATED, wires.responses.IN_PROGRESS, wires.responses.QUEUED):
            r = ev.response
            return [ch.ResponseChanged(None, {"id": r.id, "model": r.model,
                                              "status": r.status})]
        if kind == wires.responses.ITEM_ADDED:
            item = ev.item
            itype = item.type
            return [self.opened(ch.SlotOpened(
                None, (ev.output_index,), itype, itype, name=_get(item, "name"),
                call_id=_get(item, "call_id"), item_id=_get(item, "id"),
                takes_input=itype in ("function_call", "custom_tool_call", "mcp_call")))]
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
            ends = self.closed((ev.output_index,), "done")
            if not ends and ev.item.type == "function_call":
                return []
            item = _data(ev.item)
            if ends:
                end = ends[0]
                return [ch.SlotClosed(None, end.address, end.how, end.synthesised, end.reason,
                                      end.call_state, end.input, item)]
            return [ch.SlotClosed(None, (ev.output_index,), "done", data=item)]
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


class _ChatSDK(_Translator):
    """Chat chunks; calls correlated by id first, then index (as on the wire route)."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[int, set] = {}             # choice -> call ids seen
        self.current: dict[tuple, int] = {}       # (choice, index) -> call number
        self.count: dict[int, int] = {}
        self.unfinished: set[int] = set()
        self.choices: set[int] = set()
        self.usage_owed = self.usage_came = False

    def _call_address(self, choice: int, tc: Any, out: list) -> tuple:
        index, call_id = _get(tc, "index", 0), _get(tc, "id")
        fn = _get(tc, "function")
        name = _get(fn, "name") if fn is not None else None
        key = (choice, index)
        seen = self.ids.setdefault(choice, set())
        if key not in self.current or (call_id and call_id not in seen):
            # A new call, even on a reused index. The old one stays open: a Chat call
            # ends only at its choice's finish reason.
            n = self.count.get(choice, 0)
            self.count[choice] = n + 1
            self.current[key] = n
            if call_id:
                seen.add(call_id)
            out.append(self.opened(ch.SlotOpened(None, (choice, ("tool", n)), "function",
                                                 "function", name=name, call_id=call_id,
                                                 choice=choice, takes_input=True)))
        return (choice, ("tool", self.current[key]))

    def changes(self, ev: Any) -> list:
        if ev.type != "chunk":
            return []       # content.delta, tool_calls.*: projections of the chunks
        chunk = ev.chunk
        out: list = [ch.ResponseChanged(None, {"id": chunk.id, "model": chunk.model})]
        if chunk.usage is not None:
            self.usage_came = True
            out.append(ch.ResponseChanged(None, {"usage": _data(chunk.usage)}))
        elif "usage" in chunk.model_fields_set:     # "usage": null: a usage chunk is owed
            self.usage_owed = True
        for choice in chunk.choices or ():
            c = choice.index
            if c not in self.choices:
                self.choices.add(c)
                self.unfinished.add(c)
            delta = choice.delta
            for part, channel, text in _texts(delta):
                label = "reasoning" if channel == "reasoning" else part
                address = (c, label)
                if address not in self.open:
                    out.append(self.opened(ch.SlotOpened(None, address, label, label,
                                                         choice=c)))
                out.append(ch.TextAppended(None, address, channel, text, part))
            for tc in (_get(delta, "tool_calls") or ()) if delta is not None else ():
                address = self._call_address(c, tc, out)
                fn = _get(tc, "function")
                fragment = _get(fn, "arguments") if fn is not None else None
                if fragment:
                    grew = self.calls.grow(address, fragment)
                    if grew:
                        out.append(grew)
            if choice.finish_reason is not None:
                for address in [a for a in self.open if a[0] == c]:
                    out += self.closed(address, "finish_reason", reason=choice.finish_reason)
                out.append(ch.ResponseChanged(None, {"finish_reason": choice.finish_reason},
                                              choice=c))
                self.unfinished.discard(c)
        # The SDK never yields [DONE]: the step ended once every choice finished and the
        # usage chunk came if owed (`wires.chat.ended_without_done`, the body taken whole).
        self.terminal = wires.chat.ended_without_done(
            every_choice_finished=bool(self.choices) and not self.unfinished,
            usage_owed=self.usage_owed,
            usage_came=self.usage_came, whole=True)
        return out


def _boto_events(wire: str) -> Any:
    from .bedrock import BotoEvents
    return lambda: BotoEvents(wire)


def _texts(delta: Any) -> list[tuple[str, str, str]]:
    """A delta's text fragments as (field, channel, text), in the order the wire route
    reads them: ``reasoning_content`` (or ``reasoning``), then ``content`` (a string, or Mistral's typed
    parts: thinking to reasoning, text to text, in their order), then ``refusal``."""
    if delta is None:
        return []
    out = []
    for field in ("reasoning_content", "reasoning"):   # ``reasoning``: OpenRouter's name
        reasoning = _get(delta, field)
        if isinstance(reasoning, str) and reasoning:
            out.append((field, "reasoning", reasoning))
    content = _get(delta, "content")
    if isinstance(content, list):
        for part in content:
            kind, text = wires.chat.content_part_text(part)
            channel = wires.chat.CONTENT_PART_TEXT.get(kind)
            if text and channel is not None:
                out.append(("thinking" if channel == "reasoning" else "content", channel, text))
    elif content:
        out.append(("content", "text", content))
    refusal = _get(delta, "refusal")
    if refusal:
        out.append(("refusal", "refusal", refusal))
    return out


_TRANSLATORS = {"anthropic-messages": _AnthropicSDK, "openai-responses": _ResponsesSDK,
                "openai-chat": _ChatSDK, "google-gemini": GeminiSDKTranslator,
                "aws-bedrock-converse": _boto_events("aws-bedrock-converse"),
                "aws-bedrock-invoke": _boto_events("aws-bedrock-invoke")}


class SDKAdapter:
    """Turn events for one step from an SDK's stream events (see the module)."""

    def __init__(self, wire: str, step: int = 1, seq: Counter | None = None, *,
                 model: str | None = None, block_start: int = 0,
                 dialect: str | None = None) -> None:
        if wire not in _TRANSLATORS:
            raise ValueError(f"no SDK adapter for wire {wire!r}")
        self.wire = wire
        self.translator = _TRANSLATORS[wire]()
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

    def end(self, error: BaseException | None = None) -> list[TurnEvent]:
        """The SDK's iteration is over: returned (`error` None) or raised `error`.

        A status error before any event is a failed request; one during the
        stream is an in-band error. An error the helper raises only while
        building its final object, after the stream's own terminal
        (Responses ``incomplete``, Chat ``length`` / ``content_filter``), is
        the helper's opinion of a proper stream, not the turn's error.
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
            changes.append(ch.InBandError(None, message or str(error), body, etype))
        elif error is not None:
            # The helper itself raised: on a cut stream (``sdk_broke``: it can fail an
            # assertion), or on a proper one it does not like (``sdk_raised``: length,
            # content filter, incomplete).
            # The stream is what it is; the raise is noted.
            code = "sdk_raised" if self.translator.terminal else "sdk_broke"
            changes.append(ch.DiagnosticNoted(None, Diagnostic(
                code, f"the SDK's helper raised {type(error).__name__}: {error}",
                severity="warning")))
        changes += self.translator.close_all()
        proper = self.translator.terminal and not any(
            isinstance(c, ch.InBandError) for c in changes)
        changes.append(ch.StreamEnded(None, proper, None if proper else "cut"))
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
                         model: str | None = None,
                         dialect: str | None = None) -> list[TurnEvent]:
    """One step's turn events from what an SDK's streaming helper yielded (and raised)."""
    adapter = SDKAdapter(wire, step, seq, model=model, dialect=dialect)
    out = adapter.begin()
    for event in events:
        out += adapter.feed(event)
    out += adapter.end(error)
    return out
