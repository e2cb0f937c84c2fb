"""One row per wire event, the same fields on every wire: what lesson 1's event table shows.

`event_row(event, wire)` reads one parsed event in its wire's vocabulary and
returns a plain dict (no pandas, no capture): where the wires' concepts align
they share a field (``delta_type``, ``preview``, ``error``, ``output_tokens``);
where a wire has no such thing the field is ``None``. `lesson_lib.views.event_table`
lays the rows out as a pandas table.

=================  ==========================================================
column             meaning
=================  ==========================================================
seq                0-based row number (the event's position in the stream)
t_ms               arrival time in ms from the request (NaN when unknown)
start, end         the event's byte range in the body
sse_event          the SSE ``event:`` name, or None (Chat sends none)
type               the payload's type (Chat: chat.completion.chunk, [DONE], error)
index              Anthropic: the content block index (slot in ``content``); Gemini
                   Interactions: the step's index (slot in ``steps``)
sequence_number    Responses: the event's sequence number
output_index       Responses: the output item's position in ``output``
content_index      Responses: the part inside a message item
summary_index      Responses: the summary part inside a reasoning item
item_id            Responses: the output item's id
choice             Chat: ``choices[].index`` (the first, when a chunk has several)
choices            Chat: how many choices the chunk carries
tool_call          Chat: ``tool_calls[].index`` (the first, when several)
delta_type         what kind of fragment the event carries (see below)
preview            the fragment (or a summary), control characters made visible, <= 40 chars
output_tokens      output tokens reported so far, on events that carry usage
unknown            the type is not in this wire's vocabulary (passed through, not dropped)
error              an in-band failure: ``error`` event, Chat error payload, response.failed
parse_error        why the data is not JSON, or None
=================  ==========================================================

``delta_type`` is the delta's own ``type`` on Anthropic (``text_delta``,
``input_json_delta``...), the middle of the event name on Responses
(``response.output_text.delta`` -> ``output_text``), and on Chat the field the
chunk's delta fills: ``content``, ``tool_calls``, ``refusal``,
``reasoning_content``, ``role``, then ``finish`` (only a finish reason) or
``usage`` (the final usage chunk). A Chat tool-call fragment that names its
function is ``tool_call_name``: it is the call's start (Chat has no start
event), so `event_kind` calls it start/stop, not a tool-args delta.

``delta_type`` is the delta's own ``type`` on Anthropic (``text_delta``,
``input_json_delta``...), the middle of the event name on Responses
(``response.output_text.delta`` -> ``output_text``), and on Chat the field the
chunk's delta fills: ``content``, ``tool_calls``, ``refusal``,
``reasoning_content``, ``role``, then ``finish`` (only a finish reason) or
``usage`` (the final usage chunk). A Chat tool-call fragment that names its
function is ``tool_call_name``: it is the call's start (Chat has no start
event), so `row_kind` calls it start/stop, not a tool-args delta.

Nothing raises on odd input: an unknown type or a payload that is not JSON
is a row with a flag. The vocabularies live in `lesson_lib.wires`, one
module per wire (``EVENT_TYPES``, ``DELTA_TYPES``, ``FAILURES``). A wire
module's own ``read_row(payload, row)`` fills its rows' cells (Gemini
Interactions'); the first wires' readers are below.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from .. import wires
from .row_text import PREVIEW_CHARS as PREVIEW_CHARS
from .row_text import as_dict as _dict
from .row_text import as_int as _int
from .row_text import error_text
from .row_text import preview_text as preview_text
from .wire_events import DONE, WireEvent

# delta_type values, grouped by what the fragment is (same groups on every wire)
TEXT_DELTAS = frozenset({"text_delta", "output_text", "content", "text"})
TOOL_ARGUMENT_DELTAS = frozenset({
    "input_json_delta", "function_call_arguments", "tool_calls", "tool_call_name",
    "custom_tool_call_input", "mcp_call_arguments", "toolUse", "functionCall", "partialArgs",
    wires.gemini_interactions.ARGUMENTS_DELTA,
})
REASONING_DELTAS = frozenset({
    "thinking_delta", "signature_delta", "reasoning_summary_text", "reasoning_text",
    "reasoning_content", "reasoningContent", "thought",
    wires.gemini_interactions.THOUGHT_SIGNATURE_DELTA,
    wires.gemini_interactions.THOUGHT_SUMMARY_DELTA,
})
# Chat's delta_type values that carry no output of their own
BOOKKEEPING_DELTAS = frozenset({"role", "finish", "usage"})

COLUMNS = ("seq", "t_ms", "start", "end", "sse_event", "type", "index", "sequence_number",
           "output_index", "content_index", "summary_index", "item_id", "choice", "choices",
           "tool_call", "delta_type", "preview", "output_tokens", "unknown", "error",
           "parse_error")

# What a row is, in the words the timeline and the player use (`row_kind`).
KINDS = ("start/stop", "text delta", "tool-args delta", "reasoning delta", "ping", "error",
         "other")



def event_row(ev: WireEvent, wire: str | None) -> dict[str, Any]:
    """One event's fields (`COLUMNS`, those it has), read in `wire`'s vocabulary."""
    sse = ev.sse
    payload = ev.payload if isinstance(ev.payload, dict) else {}
    row: dict[str, Any] = {"seq": ev.index, "t_ms": sse.t, "start": sse.start, "end": sse.end,
                           "sse_event": sse.event, "type": ev.type,
                           "parse_error": ev.parse_error}
    vocab = wires.WIRES.get(wire or "")
    row["unknown"] = vocab is None or ev.type not in vocab.EVENT_TYPES
    row["error"] = bool(vocab and ev.type in vocab.FAILURES)
    if ev.parse_error is None:
        own = getattr(vocab, "read_row", None)
        if own is not None:
            own(payload, row)
        elif (reader := _READERS.get(wire or "")) is not None:
            reader(payload, row, vocab)
    if ev.parse_error is not None:
        row["preview"] = preview_text(sse.data)
    return row


def row_kind(kind: str | None, delta_type: str | None, error: bool) -> str:
    """What a row is (one of `KINDS`), from its ``type``, ``delta_type`` and ``error``:
    start/stop, text delta, tool-args delta, reasoning delta, ping, error, other."""
    kind = kind or ""
    if error:
        return "error"
    if kind == "ping":
        return "ping"
    if delta_type in TEXT_DELTAS:
        return "text delta"
    if delta_type == "tool_call_name":      # Chat's only sign that a call begins
        return "start/stop"
    if delta_type in TOOL_ARGUMENT_DELTAS:
        return "tool-args delta"
    if delta_type in REASONING_DELTAS:
        return "reasoning delta"
    if delta_type in ("role", "finish") or kind == DONE or _is_start_stop(kind):
        return "start/stop"
    return "other"


def _is_start_stop(kind: str) -> bool:
    if kind in ("message_start", "content_block_start", "content_block_stop", "message_delta",
                "message_stop"):
        return True
    gi = wires.gemini_interactions
    if kind in gi.EVENT_TYPES - gi.FAILURES - {gi.STEP_DELTA}:
        return True
    ends = (".added", ".done", ".created", ".in_progress", ".completed", ".incomplete",
            ".queued")
    return kind.startswith("response.") and kind.endswith(ends)


def _read_anthropic(p: dict, row: dict, vocab: ModuleType) -> None:
    kind = row["type"]
    row["index"] = _int(p.get("index"))
    if kind == "content_block_delta":
        delta = _dict(p.get("delta"))
        dtype = delta.get("type")
        row["delta_type"] = dtype if isinstance(dtype, str) else None
        if vocab.DELTA_TYPES is not None and row["delta_type"] not in vocab.DELTA_TYPES:
            row["unknown"] = True
        row["preview"] = preview_text(_anthropic_fragment(delta))
    elif kind == "content_block_start":
        block = _dict(p.get("content_block"))
        row["preview"] = preview_text(" ".join(
            str(x) for x in (block.get("type"), block.get("name")) if x))
    elif kind == "message_start":
        message = _dict(p.get("message"))
        row["output_tokens"] = _int(_dict(message.get("usage")).get("output_tokens"))
        row["preview"] = preview_text(str(message.get("model") or ""))
    elif kind == "message_delta":
        row["output_tokens"] = _int(_dict(p.get("usage")).get("output_tokens"))
        stop = _dict(p.get("delta")).get("stop_reason")
        row["preview"] = preview_text(f"stop_reason={stop}" if stop else "")
    elif kind == "error":
        row["preview"] = preview_text(_error_text(vocab, row["type"], p))


def _anthropic_fragment(delta: dict) -> str:
    for key in ("text", "partial_json", "thinking", "signature", "content"):
        value = delta.get(key)
        if isinstance(value, str):
            return value
    citation = _dict(delta.get("citation"))
    if citation:
        return str(citation.get("cited_text") or citation.get("type") or "")
    return ""


def _read_responses(p: dict, row: dict, vocab: ModuleType) -> None:
    kind = row["type"] or ""
    for name in ("sequence_number", "output_index", "content_index", "summary_index"):
        row[name] = _int(p.get(name))
    item_id = p.get("item_id")
    item = _dict(p.get("item"))
    if item_id is None and isinstance(item.get("id"), str):
        item_id = item["id"]
    row["item_id"] = item_id if isinstance(item_id, str) else None
    if kind.endswith(".delta"):
        row["delta_type"] = kind.removeprefix("response.").removesuffix(".delta")
        delta = p.get("delta")
        row["preview"] = preview_text(delta if isinstance(delta, str) else "")
    elif item:
        row["preview"] = preview_text(" ".join(
            str(x) for x in (item.get("type"), item.get("name")) if x))
    elif kind == "error" or kind == "response.failed":
        row["preview"] = preview_text(_error_text(vocab, row["type"], p))
    elif kind.startswith("response.") and kind.count(".") == 1:
        response = _dict(p.get("response"))
        row["output_tokens"] = _int(_dict(response.get("usage")).get("output_tokens"))
        status = response.get("status")
        row["preview"] = preview_text(f"status={status}" if status else "")
    else:
        for key in ("text", "arguments", "delta"):
            if isinstance(p.get(key), str):
                row["preview"] = preview_text(p[key])
                break


def _read_chat(p: dict, row: dict, vocab: ModuleType) -> None:
    if row["type"] == "error":
        row["preview"] = preview_text(_error_text(vocab, row["type"], p))
        return
    choices = p.get("choices")
    choices = choices if isinstance(choices, list) else []
    if row["type"] == "chat.completion.chunk":
        row["choices"] = len(choices)
    usage = _dict(p.get("usage"))
    row["output_tokens"] = _int(usage.get("completion_tokens"))
    first = _dict(choices[0]) if choices else {}
    row["choice"] = _int(first.get("index"))
    delta = _dict(first.get("delta"))
    calls = delta.get("tool_calls")
    call = _dict(calls[0]) if isinstance(calls, list) and calls else {}
    if call:
        row["tool_call"] = _int(call.get("index"))
    finish = first.get("finish_reason")
    dtype, text = _chat_delta(delta, call, finish, bool(choices), bool(usage))
    if dtype == "usage" and row["output_tokens"] is not None:
        text = f"completion_tokens={row['output_tokens']}"
    row["delta_type"] = dtype
    row["preview"] = preview_text(text) if dtype else None


def _chat_delta(delta: dict, call: dict, finish: Any, has_choices: bool,
                has_usage: bool) -> tuple[str | None, str]:
    if call:
        function = _dict(call.get("function"))
        name = function.get("name")
        args = function.get("arguments")
        args = args if isinstance(args, str) else ""
        dtype = "tool_call_name" if isinstance(name, str) and name else "tool_calls"
        return dtype, (f"{name} {args}" if name and args else name or args)
    for key in wires.chat.DELTA_FIELDS:
        value = delta.get(key)
        if isinstance(value, str) and value:
            return key, value
    if isinstance(delta.get("role"), str):
        return "role", delta["role"]
    if finish:
        return "finish", f"finish_reason={finish}"
    for key in wires.chat.DELTA_FIELDS:
        if isinstance(delta.get(key), str):
            return key, ""
    if not has_choices and has_usage:
        return "usage", "usage only"
    return None, ""


def _read_converse(p: dict, row: dict, vocab: ModuleType) -> None:
    """ConverseStream: the slot is ``contentBlockIndex``, a delta is named by its field."""
    kind = row["type"]
    row["index"] = _int(p.get("contentBlockIndex"))
    if kind == "contentBlockDelta":
        fields = [k for k in _dict(p.get("delta")) if k != "p"]
        row["delta_type"] = fields[0] if len(fields) == 1 else None
        if row["delta_type"] not in vocab.DELTA_TYPES:
            row["unknown"] = True
        value = _dict(p.get("delta")).get(row["delta_type"])
        if isinstance(value, dict):
            value = next((v for v in value.values() if isinstance(v, str)), "")
        row["preview"] = preview_text(value if isinstance(value, str) else "")
    elif kind == "contentBlockStart":
        start = _dict(p.get("start"))
        row["preview"] = preview_text(" ".join(
            f"{k} {_dict(v).get('name') or ''}".strip() for k, v in start.items()))
    elif kind == "messageStop":
        row["preview"] = preview_text(f"stopReason={p.get('stopReason')}")
    elif kind == "metadata":
        row["output_tokens"] = _int(_dict(p.get("usage")).get("outputTokens"))
    elif row["error"]:
        row["preview"] = preview_text(_error_text(vocab, kind, p))


def _read_gemini(p: dict, row: dict, vocab: ModuleType) -> None:
    if row["type"] == "error":
        row["preview"] = preview_text(_error_text(vocab, row["type"], p))
        return
    found = vocab.candidates(p)
    row["choices"] = len(found)
    row["output_tokens"] = _int(_dict(p.get("usageMetadata")).get("candidatesTokenCount"))
    first = found[0] if found else {}
    row["choice"] = vocab.candidate_index(first, 0) if found else None
    parts = _dict(first.get("content")).get("parts")
    part = _dict(parts[0]) if isinstance(parts, list) and parts else {}
    dtype, text = vocab.part_kind(part), ""
    if dtype in ("text", "thought"):
        text = part["text"]
    elif dtype == "functionCall":
        call = part["functionCall"]
        args = call.get("args")
        text = f"{call.get('name')} {json.dumps(args)}" if args is not None else call.get("name")
    elif dtype == "partialArgs":
        text = " ".join(f"{a.get('jsonPath')} {json.dumps(v)}" for a in
                        part["functionCall"].get("partialArgs") or [] if isinstance(a, dict)
                        for k, v in a.items() if k in vocab.ARGUMENT_VALUES)
    elif dtype == "executableCode":
        text = str(_dict(part[dtype]).get("code") or "")
    elif dtype == "codeExecutionResult":
        text = str(_dict(part[dtype]).get("output") or "")
    if not text and first.get("finishReason") and dtype in (None, "text"):
        dtype, text = "finish", f"finishReason={first['finishReason']}"
    elif dtype is None and not found and row["output_tokens"] is not None:
        dtype, text = "usage", f"candidatesTokenCount={row['output_tokens']}"
    row["delta_type"] = dtype
    row["preview"] = preview_text(text) if dtype else None


def _error_text(vocab: ModuleType, kind: str | None, p: dict) -> str:
    return error_text(vocab.read_error, kind, p)


_READERS = {"anthropic-messages": _read_anthropic, "openai-responses": _read_responses,
            "openai-chat": _read_chat, "google-gemini": _read_gemini,
            "aws-bedrock-converse": _read_converse, "aws-bedrock-invoke": _read_anthropic}
