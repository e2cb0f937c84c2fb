"""The naive unified handler: one flat event type for every wire, and a pending-tools loop.

Lesson 2 takes this handler apart. It is the design many first attempts
arrive at: turn each provider's events into one small, provider-agnostic
`StreamEvent` (``text``, ``tool_start``, ``tool_delta``, ``tool_done``,
``usage``, ``done``), then run tools as they complete with a dict of
pending calls. It reads well and it works on the first captures one tries.
Its flaws are **kept on purpose** and each one is pinned by a test:

1. **No address on a delta.** A ``tool_delta`` does not say which call it
   belongs to, so the loop appends every argument fragment to *every*
   pending call. Correct only while one call at a time is pending.
2. **No address on a stop.** ``tool_done`` pops *the first* pending call,
   whichever call actually ended.
3. **Every stop is a tool's stop.** The Anthropic normaliser turns every
   ``content_block_stop`` into ``tool_done``, a text block's stop included
   (harmless only while nothing is pending when a text block stops).
4. **Chat has no per-call stop.** The Chat normaliser can only end calls at
   the choice's ``finish_reason``, so the calls of a choice are all pending
   together while their arguments stream: flaw 1 then mixes their fragments
   even when the server sends one call after the other.
5. **Strict parse, nothing else.** Arguments are ``json.loads``-ed at the
   stop: the empty arguments of a tool with no parameters raise; JSON cut by
   ``max_tokens`` raises; a stream cut before the stop leaves the call
   pending for ever, never executed and never reported.
6. **Only text and tools exist.** Thinking, citations, refusals, server
   tools, in-band errors and ``response.incomplete`` / ``failed`` are
   dropped without a trace.

Each `StreamEvent` also carries `key`, the address the wire gave the event
(Anthropic: the block ``index``; Responses: the ``item_id``; Chat:
``(choice, tool_calls index)``) and `event`, the index of the wire event it
came from. The naive loop ignores both, as a flat event type forces it to;
exercise 2 of the lesson writes the loop that uses `key`.

On Anthropic and Responses streams one call's events end before the next
call's begin, so the naive loop gets parallel calls right *by luck of
ordering*; on Chat it does not (see `run_naive`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ..capture.captures import Capture, from_bytes
from ..wires import anthropic as A
from ..wires import chat as C
from ..wires import responses as R
from ..wires.wire_events import DONE, WireEvent, parse_all

EventType = Literal["text", "tool_start", "tool_delta", "tool_done", "usage", "done"]


@dataclass(frozen=True)
class StreamEvent:
    """One provider-agnostic event: the flat vocabulary of the naive handler.

    `key` and `event` are this course's additions (the wire's address of the
    event, and the index of the wire event it came from); the naive loop
    never reads them.
    """

    type: EventType
    text: str = ""
    tool_name: str = ""
    tool_id: str = ""
    tool_args: str = ""
    usage: dict = field(default_factory=dict)
    key: Any = None
    event: int | None = None


@dataclass(frozen=True)
class Executed:
    """One tool call as a loop handed it to the executor.

    `arguments` is the text the loop collected; `input` what ``json.loads``
    made of it (None when it raised); `error` the exception, as
    ``"TypeName: message"``; `at` the index of the wire event whose
    ``tool_done`` set it off.
    """

    name: str
    call_id: str
    arguments: str
    input: Any = None
    error: str | None = None
    at: int | None = None


# -- normalisers: wire events in, flat events out ---------------------------------------


def normalise_anthropic(events: Iterable[WireEvent]) -> Iterator[StreamEvent]:
    """Anthropic Messages events as flat events (flaws 3 and 6 live here)."""
    for ev in events:
        p = ev.payload
        if not isinstance(p, dict):
            continue
        kind = ev.type
        if kind == "content_block_delta":
            delta = p.get("delta") or {}
            if delta.get("type") == A.TEXT_DELTA:
                yield StreamEvent("text", text=delta.get("text", ""), key=p.get("index"),
                                  event=ev.index)
            elif delta.get("type") == A.ARGUMENTS_DELTA:
                yield StreamEvent("tool_delta", tool_args=delta.get("partial_json", ""),
                                  key=p.get("index"), event=ev.index)
        elif kind == "content_block_start":
            block = p.get("content_block") or {}
            if block.get("type") == A.TOOL_USE_BLOCK:
                yield StreamEvent("tool_start", tool_name=block.get("name", ""),
                                  tool_id=block.get("id", ""), key=p.get("index"),
                                  event=ev.index)
        elif kind == "content_block_stop":
            # Flaw 3: every block's stop, a text block's included, becomes tool_done.
            yield StreamEvent("tool_done", key=p.get("index"), event=ev.index)
        elif kind == "message_delta":
            delta = p.get("delta") or {}
            yield StreamEvent("usage", usage={"stop_reason": delta.get("stop_reason")},
                              event=ev.index)
        elif kind in A.TERMINALS:
            yield StreamEvent("done", event=ev.index)


def normalise_responses(events: Iterable[WireEvent]) -> Iterator[StreamEvent]:
    """OpenAI Responses events as flat events."""
    for ev in events:
        p = ev.payload
        if not isinstance(p, dict):
            continue
        kind = ev.type
        if kind == R.TEXT_DELTA:
            yield StreamEvent("text", text=p.get("delta", ""), key=p.get("item_id"),
                              event=ev.index)
        elif kind == R.ITEM_ADDED:
            item = p.get("item") or {}
            if item.get("type") == R.FUNCTION_CALL_ITEM:
                yield StreamEvent("tool_start", tool_name=item.get("name", ""),
                                  tool_id=item.get("call_id", ""), key=item.get("id"),
                                  event=ev.index)
        elif kind == R.ARGUMENTS_DELTA:
            yield StreamEvent("tool_delta", tool_args=p.get("delta", ""),
                              key=p.get("item_id"), event=ev.index)
        elif kind == R.ITEM_DONE:
            item = p.get("item") or {}
            if item.get("type") == R.FUNCTION_CALL_ITEM:
                # The server's whole arguments ride along; the loop never reads them.
                yield StreamEvent("tool_done", tool_args=item.get("arguments", ""),
                                  key=item.get("id"), event=ev.index)
        elif kind == R.COMPLETED:
            response = p.get("response") or {}
            yield StreamEvent("done", usage=dict(response.get("usage") or {}), event=ev.index)


def normalise_chat(events: Iterable[WireEvent]) -> Iterator[StreamEvent]:
    """OpenAI Chat Completions chunks as flat events.

    A call starts at its first fragment (the one with an ``id``); Chat never
    says that a call ended, so at a choice's ``finish_reason`` this emits one
    ``tool_done`` per call that choice started, in order (flaw 4).
    """
    started: dict[int, list[tuple[Any, str]]] = {}
    for ev in events:
        p = ev.payload
        if ev.type == DONE:
            yield StreamEvent("done", event=ev.index)
            continue
        if not isinstance(p, dict) or C.is_error_payload(p):
            continue   # flaw 6: an in-band error is dropped
        for choice in p.get("choices") or []:
            if not isinstance(choice, dict):
                continue
            c = choice.get("index", 0)
            delta = choice.get("delta") or {}
            if isinstance(delta.get("content"), str) and delta["content"]:
                yield StreamEvent("text", text=delta["content"], key=(c, "content"),
                                  event=ev.index)
            for call in delta.get("tool_calls") or []:
                key = (c, call.get("index"))
                function = call.get("function") or {}
                if call.get("id"):
                    started.setdefault(c, []).append((key, call["id"]))
                    yield StreamEvent("tool_start", tool_name=function.get("name") or "",
                                      tool_id=call["id"], key=key, event=ev.index)
                if isinstance(function.get("arguments"), str):
                    yield StreamEvent("tool_delta", tool_args=function["arguments"], key=key,
                                      event=ev.index)
            if choice.get("finish_reason") is not None:
                for key, call_id in started.pop(c, []):
                    yield StreamEvent("tool_done", tool_id=call_id, key=key, event=ev.index)
                yield StreamEvent("usage", usage={"stop_reason": choice["finish_reason"]},
                                  key=(c, "finish"), event=ev.index)
        if p.get("usage") and not p.get("choices"):
            yield StreamEvent("usage", usage=dict(p["usage"]), event=ev.index)


NORMALISERS: dict[str, Callable[[Iterable[WireEvent]], Iterator[StreamEvent]]] = {
    "anthropic-messages": normalise_anthropic,
    "openai-responses": normalise_responses,
    "openai-chat": normalise_chat,
}


def normalise(capture: Capture) -> list[StreamEvent]:
    """A capture's wire events as flat events, through its wire's normaliser."""
    try:
        normaliser = NORMALISERS[capture.wire or ""]
    except KeyError:
        raise ValueError(f"{capture.key}: no normaliser for wire {capture.wire!r}") from None
    return list(normaliser(parse_all(capture.events)))


# -- the pending-tools loop ---------------------------------------------------------------


def execute(name: str, call_id: str, arguments: str, at: int | None) -> Executed:
    """What a loop hands to the executor: ``json.loads`` of the collected text, or its error."""
    try:
        return Executed(name, call_id, arguments, json.loads(arguments), None, at)
    except ValueError as exc:
        return Executed(name, call_id, arguments, None, f"{type(exc).__name__}: {exc}", at)


def pending_tools_loop(events: Iterable[StreamEvent]
                       ) -> tuple[list[Executed], dict[str, dict[str, str]]]:
    """The naive loop, with what it leaves behind: ``(executed, still pending)``."""
    pending: dict[str, dict[str, str]] = {}
    executed: list[Executed] = []
    for event in events:
        if event.type == "tool_start":
            pending[event.tool_id] = {"name": event.tool_name, "args": ""}
        elif event.type == "tool_delta":
            for tool_id in pending:                  # flaw 1: every pending call
                pending[tool_id]["args"] += event.tool_args
        elif event.type == "tool_done":
            tool_id = next(iter(pending), None)      # flaw 2: the first pending call
            if tool_id is not None:
                info = pending.pop(tool_id)
                executed.append(execute(info["name"], tool_id, info["args"], event.event))
    return executed, pending


def naive_loop(events: Iterable[StreamEvent]) -> list[Executed]:
    """The naive pending-tools loop: the calls it executes, in order."""
    return pending_tools_loop(events)[0]


# -- running it on a capture ---------------------------------------------------------------


@dataclass(frozen=True)
class NaiveRun:
    """What the naive handler did with one capture."""

    capture: str
    events: list[StreamEvent]
    executed: list[Executed]
    never_executed: list[tuple[str, str, str]]   # (name, call id, arguments) left pending
    text: str                                    # what the ``text`` events printed

    def summary(self) -> str:
        """One line per executed call (and per call left pending), deterministic."""
        lines = [f"{self.capture}: {len(self.executed)} call(s) executed"]
        for i, call in enumerate(self.executed):
            outcome = (f"input {json.dumps(call.input, ensure_ascii=False)}"
                       if call.error is None else call.error)
            lines.append(f"  {i}. {call.name} ({call.call_id}) at event {call.at}: "
                         f"args {call.arguments!r} -> {outcome}")
        for name, call_id, args in self.never_executed:
            lines.append(f"  never executed, never reported: {name} ({call_id}) "
                         f"args {args!r}")
        return "\n".join(lines)


def run_naive(capture: Capture) -> NaiveRun:
    """Normalise `capture` and run the naive loop over it."""
    events = normalise(capture)
    executed, pending = pending_tools_loop(events)
    left = [(info["name"], tool_id, info["args"]) for tool_id, info in pending.items()]
    text = "".join(e.text for e in events if e.type == "text")
    return NaiveRun(capture.key, events, executed, left, text)


# -- the truth to compare with: the accumulator's tool slots -------------------------------

CLIENT_TOOL_KINDS = ("tool_use", "function_call", "function")


def slot_calls(capture: Capture) -> list[Executed]:
    """The client tool calls as the accumulator's slots have them, after the whole stream.

    `at` is None (slots are not executed); `error` says why the input is not
    final when the call never ended properly.
    """
    from . import accumulator_for, parse_tool_input

    acc = accumulator_for(capture.wire)
    for event in parse_all(capture.events):
        acc.feed(event)
    acc.finish(capture.sse_diagnostics)
    out = []
    for slot in acc.slots():
        if slot.kind not in CLIENT_TOOL_KINDS:
            continue
        raw = slot.raw_input if slot.raw_input is not None else slot.content
        value = slot.input
        if value is None and slot.state == "closed":   # a slot that carries only the text
            value = parse_tool_input(raw)[0]
        error = None if slot.state == "closed" else f"the call was {slot.state}"
        out.append(Executed(slot.name or "", slot.call_id or "", raw, value, error))
    return out


def compare_with_slots(capture: Capture) -> list[dict[str, Any]]:
    """Per tool call: what the naive loop executed next to what the slots hold.

    Rows are matched by call id; a call the naive loop never executed has
    empty naive columns.
    """
    run = run_naive(capture)
    naive = {c.call_id: c for c in run.executed}
    rows = []
    for truth in slot_calls(capture):
        got = naive.get(truth.call_id)
        rows.append({
            "call": f"{truth.name} {truth.call_id}",
            "slot arguments": truth.arguments,
            "naive arguments": got.arguments if got else None,
            "naive result": (None if got is None else
                             got.error if got.error else json.dumps(got.input,
                                                                    ensure_ascii=False)),
            "same": got is not None and got.error is None and got.input == truth.input
                    and got.arguments == truth.arguments,
        })
    return rows


# -- a hand-made stream: the same tool blocks, their deltas alternating ---------------------


def interleave_tool_blocks(capture: Capture) -> Capture:
    """A hand-made Anthropic stream: `capture`'s tool_use blocks with their deltas alternating.

    Every event keeps its exact bytes; only the order changes: the tool
    blocks' starts, then their deltas taken in turn, then their stops, all
    where the first tool block began. Anthropic's servers send one block at
    a time; the format does not depend on it (every delta names its
    ``index``), and this stream shows what a loop that does depend on it
    makes of the same calls.
    """
    if capture.wire != "anthropic-messages":
        raise ValueError(f"{capture.key}: an Anthropic Messages capture is needed")
    events = parse_all(capture.events)
    tools = [ev.payload["index"] for ev in events if ev.type == "content_block_start"
             and (ev.payload.get("content_block") or {}).get("type") == "tool_use"]
    if len(tools) < 2:
        raise ValueError(f"{capture.key}: needs at least two tool_use blocks")
    starts, stops = [], []
    deltas: dict[int, list[WireEvent]] = {i: [] for i in tools}
    before, after = [], []
    for ev in events:
        index = ev.payload.get("index") if isinstance(ev.payload, dict) else None
        if index in deltas and ev.type == "content_block_start":
            starts.append(ev)
        elif index in deltas and ev.type == "content_block_delta":
            deltas[index].append(ev)
        elif index in deltas and ev.type == "content_block_stop":
            stops.append(ev)
        elif starts:
            after.append(ev)
        else:
            before.append(ev)
    turns = []
    for row in range(max(len(d) for d in deltas.values())):
        turns += [deltas[i][row] for i in tools if row < len(deltas[i])]
    order = before + starts + turns + stops + after
    body = b"".join(capture.body[ev.sse.start:ev.sse.end] for ev in order)
    sidecar = {"wire": capture.wire,
               "demonstrates": f"hand-made from {capture.key}: the same tool blocks, their "
                               "deltas alternating (each delta still names its index)",
               "request": capture.request}
    return from_bytes(body, name=f"{capture.name}-interleaved-by-hand", sidecar=sidecar)
