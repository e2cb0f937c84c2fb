"""A new wire is one registry call: a toy wire defined here runs every capability.

The toy wire is NDJSON, one JSON object a line, each naming its ``type``:
``start`` (the response's id and model), ``text`` (a fragment of the answer),
``call`` (a tool call begins: its id and name), ``args`` (a fragment of its
arguments), ``ping`` (a keep-alive), ``end`` (the stop reason and usage: the
terminal) and ``error`` (an in-band failure). Its framing, accumulator and
adapter are a few dozen lines each, below; `wires.register` adds it, and from
outside the package the matrix runs on it: a live weather turn over TCP
against `serve`, Stop, a dropped connection retried, a budget, the watchdog,
the server's 404 in the wire's own error shape, the cheat sheet, lesson 1's
event table, lesson 2's labels and fold, lesson 5's order faults and the
"continue" of a turn that failed after output. No file of `lesson_lib` names
it. Where the course's default fits (its slots' order, a swap it cannot show,
how a user's words are appended) its entry names nothing; what it cannot have
(no official SDK, so no SDK route, no `record`, no SDK helper to close) its
entry says with None, and the matrix skips that, saying why.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import httpx
import pytest

from lesson_lib import wires
from lesson_lib.accumulate import Accumulator, Slot, accumulator_for
from lesson_lib.accumulate import changes as ch
from lesson_lib.accumulate import labels as lesson2_labels
from lesson_lib.accumulate.fold import Fold
from lesson_lib.breaks import faults
from lesson_lib.breaks.recovery import CONTINUE_PROMPT, after_output_options
from lesson_lib.breaks.sdk_close import close_early
from lesson_lib.breaks.visibility import visibility
from lesson_lib.breaks.watchdog import kinds
from lesson_lib.capture.captures import from_bytes, load
from lesson_lib.cli import commands as cli
from lesson_lib.cli.serve.background import serving
from lesson_lib.course import cheat_sheet
from lesson_lib.diagnostics import Diagnostic
from lesson_lib.live import LiveTool, LiveTurn, RetryPolicy, weather_tool
from lesson_lib.sse.decoder import ServerSentEvent
from lesson_lib.turn.adapters.base import WireAdapter
from lesson_lib.turn.events import Finish
from lesson_lib.turn.order import check
from lesson_lib.turn.run import _aligned_times, turn_state
from lesson_lib.turn.weather import RESULTS, TOOL_NAME, result_text
from lesson_lib.wires.common import RetryRule, Sheet, WireError
from lesson_lib.wires.entry import Entry, SDKRoute, resolve
from lesson_lib.wires.event_rows import event_row
from lesson_lib.wires.row_text import preview_text
from lesson_lib.wires.wire_events import parse_all

TOY = "toy-ndjson"
PATH = "/toy/v1/stream"
FAST = RetryPolicy(attempts=2, initial_s=0.01, max_s=0.05)


# -- the framing: one JSON object a line ------------------------------------------------


class Lines:
    """NDJSON cut into events: each non-empty line is one event's data."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self._pending, self._offset = b"", 0

    def feed(self, chunk: bytes, t: float | None = None) -> list[ServerSentEvent]:
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        out = []
        for line in lines:
            end = self._offset + len(line) + 1
            if line.strip():
                out.append(ServerSentEvent(None, line.decode("utf-8", "replace"),
                                           start=self._offset, end=end, t=t))
            self._offset = end
        return out

    def finish(self) -> list[ServerSentEvent]:
        if self._pending.strip():
            self.diagnostics.append(Diagnostic(
                code="undispatched_bytes", severity="error", offset=self._offset,
                message=f"{len(self._pending)} bytes after the last line never ended a line"))
        self._pending = b""
        return []


# -- the accumulator: the answer's text and calls, as changes --------------------------


class ToyAccumulator(Accumulator):
    """Slots in arrival order: a text slot, or one per call (its arguments as JSON text)."""

    wire = TOY

    def __init__(self) -> None:
        super().__init__()
        self.slots_: list[dict[str, Any]] = []
        self.response: dict[str, Any] = {}

    def _close(self, index: int | None, *, cut: bool = False) -> None:
        if self.slots_ and self.slots_[-1]["open"]:
            self.slots_[-1].update(open=False, state="never closed" if cut else "closed")
            self.changes.append(ch.SlotClosed(index, len(self.slots_) - 1,
                                              "end_of_stream" if cut else "stop", synthesised=cut))

    def _open(self, index: int, kind: str, **kw: Any) -> None:
        self._close(index)
        self.slots_.append({"kind": kind, "text": [], "open": True, **kw})
        self.changes.append(ch.SlotOpened(index, len(self.slots_) - 1, kind, kind,
                                          takes_input=kind == "call", **kw))

    def feed(self, event):
        self.changes = []
        p, i = event.payload if isinstance(event.payload, dict) else {}, event.index
        if event.parse_error is not None:
            self.note("unparseable_json", f"line skipped: {event.parse_error}", event=event,
                      raw=event.sse.data)
            return self.changes
        if event.type == "start":
            self.response.update(id=p.get("id"), model=p.get("model"))
            self.changes.append(ch.ResponseChanged(i, {"id": p.get("id"), "model": p.get("model")}))
        elif event.type == "text":
            if not (self.slots_ and self.slots_[-1]["open"] and self.slots_[-1]["kind"] == "text"):
                self._open(i, "text")
            self.slots_[-1]["text"].append(p.get("delta", ""))
            self.changes.append(ch.TextAppended(i, len(self.slots_) - 1, "text", p.get("delta", "")))
        elif event.type == "call":
            self._open(i, "call", name=p.get("name"), call_id=p.get("id"))
        elif event.type == "args" and self.slots_ and self.slots_[-1]["kind"] == "call":
            self.slots_[-1]["text"].append(p.get("delta", ""))
            self.changes.append(ch.ToolInputGrew(i, len(self.slots_) - 1, p.get("delta", "")))
        elif event.type == "end":
            self._close(i)
            self.response.update(stop=p.get("stop"), usage=p.get("usage"))
            self.changes.append(ch.ResponseChanged(i, {"stop": p.get("stop"),
                                                       "usage": p.get("usage")}))
            self.complete = True
            self.changes.append(ch.TerminalReached(i, "end"))
        elif event.type == "error":
            self.changes.append(ch.InBandError(i, str(p.get("message")), p, p.get("code")))
        elif event.type != "ping":
            self.changes.append(ch.UnknownEvent(i, event.type, p))
        return self.changes

    def finish(self, sse_diagnostics=()):
        if not self.begin_finish(sse_diagnostics):
            return []
        self._close(None, cut=True)
        return self.end_changes("cut")

    def final(self) -> dict:
        return {**self.response, "output": [
            {"kind": s["kind"], "text": "".join(s["text"])} for s in self.slots_]}

    def slots(self) -> list[Slot]:
        return [Slot(n, s["kind"], s["kind"], "".join(s["text"]), s.get("state", "open"))
                for n, s in enumerate(self.slots_)]


# -- the adapter and the rest of the wire module ---------------------------------------


class ToyAdapter(WireAdapter):
    """The base adapter does the work; the toy says its stop reason its own way."""

    wire = TOY

    def finish(self) -> Finish:
        raw = self.response.get("stop")
        return Finish(finish_reason(raw) or "other", raw)


def finish_reason(raw: Any):
    return {"done": "stop", "tools": "tool_calls", "long": "length"}.get(raw)


def next_request(out: dict, blocks: list, **_: Any) -> dict:
    calls = [b for b in blocks if b.kind == "tool_call"]
    text = "".join(b.text for b in blocks if b.kind == "text")
    out["messages"] = [*out.get("messages", []),
                       {"role": "assistant", "text": text,
                        "calls": [{"id": b.call_id, "name": b.name, "args": b.raw_input}
                                  for b in calls]},
                       *({"role": "tool", "id": b.call_id, "content": result_text(b.result)}
                         for b in calls)]
    return out


def error_body(status: int, message: str) -> dict:
    return {"toy_error": {"status": status, "message": message}}


def read_error(event_type, payload):
    if event_type != "error" or not isinstance(payload, dict):
        return None
    return WireError(payload.get("code"), payload.get("code"), payload.get("message"))


def label(ev, caused: list, kinds: dict) -> str:
    """Lesson 2's words for an event: ``slot [1] call get_weather · args``, the slot its
    changes addressed last (a call's line closes the text before it); a line that changed
    no slot, by its type."""
    for change in caused:
        if type(change) is ch.SlotOpened:
            kinds[change.address] = f"{change.slot_kind} {change.name or ''}".rstrip()
    where = next((c.address for c in reversed(caused)
                  if getattr(c, "address", None) is not None), None)
    return ev.type if where is None else f"slot [{where}] {kinds.get(where, '?')} · {ev.type}"


def shows_duplicate(ev, wire: str):
    """A line that opens or ends something, twice; a repeated fragment leaves no trace."""
    return f"{ev.type} twice" if ev.type in ("start", "call", "end") else None


def write_error(payload: dict, module, newline: bytes) -> bytes:
    """An in-band error as the framing writes it: one more line."""
    return json.dumps(payload).encode() + b"\n"


def damage_json(raw: bytes) -> bytes | None:
    """One line's JSON with its last ``}`` gone: the line is its own payload."""
    close = raw.rfind(b"}")
    return None if close < 0 else raw[:close] + raw[close + 1:]


def read_row(payload: dict, row: dict) -> None:
    """Lesson 1's table: a fragment's or a call's words."""
    row["preview"] = preview_text(str(payload.get("delta") or payload.get("name") or ""))


ENTRY = Entry(wire=TOY, title="A toy NDJSON wire", framing="ndjson",
              content_type="application/x-ndjson", suffix=".ndjson", route=PATH, path=PATH,
              conversation=("messages",), error_body=error_body, streams_by_path=True,
              decoder=Lines, accumulator=ToyAccumulator, adapter=ToyAdapter,
              next_request=next_request, labels=label, shows_duplicate=shows_duplicate,
              write_error=write_error, damage_json=damage_json)
RETRY = RetryRule(frozenset({"busy"}), frozenset({"bad"}), "code")
MODULE = SimpleNamespace(
    WIRE=TOY, ENTRY=ENTRY, EVENT_TYPES=frozenset({"start", "text", "call", "args", "ping",
                                                  "end", "error"}),
    TERMINALS=frozenset({"end"}), FAILURES=frozenset({"error"}), KEEPALIVES=frozenset({"ping"}),
    read_error=read_error, finish_reason=finish_reason, RETRY=RETRY, read_row=read_row,
    ERROR_EXAMPLE={"type": "error", "code": "busy", "message": "overloaded"},
    retryable_error=RETRY.error,
    usage_counts=lambda usage: {"input": usage.get("in", 0), "output": usage.get("out", 0),
                                "cache_read": 0, "cache_write": 0, "reasoning": 0},
    SHEET=Sheet(wire=TOY, events=(("start", "id and model"), ("text", "a fragment"),
                                  ("call", "a call begins"), ("args", "its arguments"),
                                  ("end", "stop reason and usage")),
                addressing=(("(order)", "slots in arrival order"),),
                tool_arguments="`args` lines after their `call`", terminal="`end`",
                in_band_error="`error` line", finish="done → stop; tools → tool_calls",
                error_body='{"toy_error": {"status", "message"}}'))


# -- the weather turn, written as captures ---------------------------------------------

QUESTION = [{"role": "user", "content": "What's the weather like in Paris and Tokyo right now?"}]
CALLS = [("call_paris", RESULTS[0]), ("call_tokyo", RESULTS[1])]


def _lines(*objects: dict) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objects)


def step1_body() -> bytes:
    lines = [{"type": "start", "id": "r1", "model": "toy-1"},
             {"type": "text", "delta": "Let me check both cities."}]
    for call_id, result in CALLS:
        args = json.dumps({"location": result["location"], "unit": "celsius"})
        lines += [{"type": "call", "id": call_id, "name": TOOL_NAME},
                  {"type": "args", "delta": args[:10]}, {"type": "ping"},
                  {"type": "args", "delta": args[10:]}]
    return _lines(*lines, {"type": "end", "stop": "tools", "usage": {"in": 40, "out": 30}})


def step2_body() -> bytes:
    return _lines({"type": "start", "id": "r2", "model": "toy-1"},
                  {"type": "text", "delta": "Paris: 18°C and light rain. "},
                  {"type": "text", "delta": "Tokyo: 24°C and clear."},
                  {"type": "end", "stop": "done", "usage": {"in": 90, "out": 12}})


def step2_request() -> dict:
    calls = [{"id": call_id, "name": TOOL_NAME,
              "args": json.dumps({"location": r["location"], "unit": "celsius"})}
             for call_id, r in CALLS]
    return {"model": "toy-1", "messages": [
        *QUESTION, {"role": "assistant", "text": "Let me check both cities.", "calls": calls},
        *({"role": "tool", "id": call_id, "content": result_text(r)} for call_id, r in CALLS)]}


def write(folder, name: str, body: bytes, request: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.ndjson").write_bytes(body)
    lines = body.count(b"\n")
    ends = [i + 1 for i, byte in enumerate(body) if byte == ord("\n")]
    (folder / f"{name}.json").write_text(json.dumps({
        "wire": TOY, "demonstrates": f"the toy wire's weather turn, {name}",
        "request": request, "response": {"status": 200, "headers": {}},
        "provenance": {"kind": "constructed", "based_on": "the weather turn",
                       "timing": "synthetic"},
        "chunks": {"ends": ends, "t_ms": [float(n) for n in range(lines)]}}))


@pytest.fixture(scope="module")
def registered():
    wires.register(MODULE)
    try:
        yield ENTRY
    finally:
        wires.unregister(TOY)


@pytest.fixture(scope="module")
def corpus_dir(registered, tmp_path_factory):
    root = tmp_path_factory.mktemp("toy-corpus")
    write(root / TOY, "weather-turn-step1", step1_body(),
          {"model": "toy-1", "messages": QUESTION})
    write(root / TOY, "weather-turn-step2", step2_body(), step2_request())
    return root


@pytest.fixture(scope="module")
def url(corpus_dir):
    with serving(speed="instant", root=corpus_dir) as base:
        yield base


def request1() -> dict:
    return {"model": "toy-1", "messages": QUESTION}


def run(turn: LiveTurn):
    return asyncio.run(asyncio.wait_for(turn.run(), 60))


# -- the matrix -------------------------------------------------------------------------


def test_the_weather_turn_completes_live_over_tcp_against_serve(url):
    result = run(LiveTurn(url, TOY, request1(), [weather_tool(0.01)]))
    assert result.outcome == "completed"
    assert check(result.events) == []
    assert [s.finish.reason for s in result.state.steps] == ["tool_calls", "stop"]
    assert [b.execution_status for b in result.state.calls] == ["ok", "ok"]
    assert [b.input["location"] for b in result.state.calls] == ["Paris, France", "Tokyo, Japan"]
    answer = "".join(b.text for b in result.state.blocks if b.step == 2 and b.kind == "text")
    assert answer == "Paris: 18°C and light rain. Tokyo: 24°C and clear."
    assert [s.usage.output for s in result.state.steps] == [30, 12]


def test_stop_cancels_the_live_turn_and_its_running_tool(url):
    seen = []

    async def slow(arguments):
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            seen.append(arguments)
            raise

    async def go():
        turn = LiveTurn(url, TOY, request1(), [LiveTool(TOOL_NAME, slow)])

        async def stop_when_a_tool_runs():
            while not any(b.execution == "running" for b in turn.state.calls):
                await asyncio.sleep(0.005)
            turn.cancel()

        stopper = asyncio.ensure_future(stop_when_a_tool_runs())
        result = await asyncio.wait_for(turn.run(), 30)
        stopper.cancel()
        return result

    result = asyncio.run(go())
    assert result.outcome == "cancelled"
    assert seen
    assert "interrupted" in {b.execution_status for b in result.state.calls}
    assert check(result.events) == []


def test_a_dropped_connection_is_retried(url):
    drop = len(step1_body()) // 2
    result = run(LiveTurn(url, TOY, request1(), [weather_tool(0.01)],
                          params={"fault": f"drop:{drop}"}, retry=FAST))
    assert result.outcome == "failed"
    assert [(a.step, a.number) for a in result.attempts] == [(1, 1), (1, 2)]
    assert all(a.errors and a.errors[0].code == "transport" for a in result.attempts)
    assert check(result.events) == []


def test_a_budget_of_three_tokens_ends_it_as_a_budget_end(url):
    result = run(LiveTurn(url, TOY, request1(), [weather_tool(0.01)], budget_tokens=3))
    assert result.outcome == "budget_reached"
    assert result.events[-1].reason == "application_budget"
    assert [e.ended for e in result.events if e.kind == "step_finished"] == ["cancelled"]
    assert check(result.events) == []


def test_the_watchdog_tells_deltas_from_keepalives(registered):
    events = parse_all(from_bytes(step1_body(), sidecar={"wire": TOY}).events)
    found = dict(zip((e.type for e in events), kinds(events, TOY), strict=False))
    assert kinds(events, TOY)[:2] == ["start", "text"]
    assert found["ping"] == "ping"
    assert found["args"] == "tool_arguments"
    assert found["end"] == "end"


def test_an_unknown_capture_gets_a_404_in_the_wires_own_shape(url):
    response = httpx.post(f"{url}{PATH}?capture={TOY}/no-such-capture", json=request1())
    assert response.status_code == 404
    assert set(response.json()) == {"toy_error"}
    assert response.json()["toy_error"]["status"] == 404
    assert "no-such-capture" in response.json()["toy_error"]["message"]


def test_serve_lists_and_loads_the_toy_captures(url, corpus_dir):
    listing = httpx.get(f"{url}/captures").json()
    assert {c["name"] for c in listing if c["wire"] == TOY} == {
        f"{TOY}/weather-turn-step1", f"{TOY}/weather-turn-step2"}
    cap = load(corpus_dir / TOY / "weather-turn-step1.ndjson")
    assert cap.wire == TOY and cap.framing == "ndjson"
    assert cap.sse_diagnostics == [] and len(cap.events) == step1_body().count(b"\n")


def test_check_reads_the_toy_captures_by_their_suffix_and_says_there_is_no_sdk(
        corpus_dir, capsys):
    assert cli.main(["check", str(corpus_dir)]) == 0
    out = capsys.readouterr().out
    assert out.count(f"{TOY}/weather-turn-step") == 2 and "SDK: none on this wire" in out


def test_the_cheat_sheet_has_its_facts(registered):
    page = cheat_sheet.markdown()
    assert f"**{TOY}**" in page
    row = next(line for line in page.splitlines() if line.startswith("| **Ends properly with**"))
    assert "`end`" in row
    assert any(TOY in names for names in cheat_sheet.pages())


def test_the_accumulator_and_the_adapter_come_from_the_registry(registered):
    assert type(accumulator_for(TOY, request1())) is ToyAccumulator
    assert wires.ENTRIES[TOY] is ENTRY and wires.for_wire(TOY) is MODULE


@pytest.mark.parametrize("capability", ["sdk", "record"])
def test_what_the_toy_wire_cannot_have_the_registry_says_none(registered, capability):
    if getattr(wires.entry_for(TOY), capability) is None:
        pytest.skip(f"the toy wire has no official SDK: no {capability} route (its entry says None)")
    raise AssertionError(f"the toy wire's entry names a {capability} route it cannot have")


def capture_of(body: bytes):
    return from_bytes(body, sidecar={"wire": TOY, "request": request1()})


@contextmanager
def registered_as(**parts):
    """The toy wire registered for a while with some of its entry's parts replaced."""
    wires.register(SimpleNamespace(**{**vars(MODULE), "ENTRY": replace(ENTRY, **parts)}))
    try:
        yield
    finally:
        wires.register(MODULE)


def test_lesson_1s_table_reads_its_rows_with_the_wires_own_reader(registered):
    events = parse_all(capture_of(step1_body()).events)
    rows = [event_row(ev, TOY) for ev in events]
    assert [r["preview"] for r in rows[1:3]] == ["Let me check both cities.", TOOL_NAME]
    assert not any(r["unknown"] for r in rows)


def test_lesson_2s_labels_come_from_the_entry(registered):
    words = lesson2_labels.labels_for(capture_of(step1_body()))
    assert words[:3] == ["start", "slot [0] text · text", f"slot [1] call {TOOL_NAME} · call"]
    assert words[3:6] == [f"slot [1] call {TOOL_NAME} · args", "ping",
                          f"slot [1] call {TOOL_NAME} · args"]
    assert TOY in lesson2_labels.WIRES


def _fields(slot):
    return (slot.address, slot.kind, slot.content, slot.state)


def test_the_fold_gives_the_accumulators_slots_in_the_default_order(registered):
    acc, fold = accumulator_for(TOY), Fold(TOY)
    for event in parse_all(capture_of(step1_body()[:-40]).events):
        fold.add(acc.feed(event))
        assert list(map(_fields, fold.slots())) == list(map(_fields, acc.slots()))
    fold.add(acc.finish())
    assert list(map(_fields, fold.slots())) == list(map(_fields, acc.slots()))
    assert [s.state for s in fold.slots()] == ["closed", "closed", "never closed"]


def test_the_fold_orders_the_slots_as_the_entry_says(registered):
    with registered_as(slot_order=lambda opened, arrival: -arrival):
        fold, acc = Fold(TOY), accumulator_for(TOY)
        for event in parse_all(capture_of(step1_body()).events):
            fold.add(acc.feed(event))
    assert [s.address for s in fold.slots()] == [2, 1, 0]


def test_order_faults_are_read_from_the_entry_and_a_swap_is_unseen_by_default(registered):
    capture = capture_of(step1_body())
    last = len(capture.events) - 1
    assert visibility(capture, "duplicate", last) == "end twice"
    assert visibility(capture, "duplicate", 1) is None        # a repeated fragment
    assert visibility(capture, "swap", 0) is None             # the entry names no reader


def test_an_injected_error_is_written_as_the_framing_writes_it(registered):
    capture = capture_of(step1_body())
    broken = faults.inject_error(capture, 2)
    lines = broken.body.splitlines()
    assert lines[:3] == step1_body().splitlines()[:3]
    assert json.loads(lines[3]) == MODULE.ERROR_EXAMPLE and len(lines) == 4
    assert broken.sse_diagnostics == []
    state = turn_state(broken)
    assert state.outcome == "failed"
    assert [(e.code, e.message) for e in state.errors] == [("busy", "overloaded")]
    assert accumulator_for(TOY).feed(parse_all(broken.events)[-1])[0].message == "overloaded"


def test_without_a_writer_an_injected_error_is_refused_naming_the_wire(registered):
    with registered_as(write_error=None), pytest.raises(faults.FaultError, match=TOY):
        faults.inject_error(capture_of(step1_body()), 2)


def test_a_duplicated_line_arrives_twice_and_shows_where_the_entry_says(registered):
    capture = capture_of(step1_body())
    events = parse_all(capture.events)
    last = len(events) - 1
    again = faults.duplicate(capture, last)
    assert [e.type for e in parse_all(again.events)] == [e.type for e in events] + ["end"]
    assert again.body == step1_body() + step1_body().splitlines(keepends=True)[-1]
    later = faults.duplicate(capture, 1, later=2)
    assert [e.type for e in parse_all(later.events)][:6] == [
        "start", "text", "call", "args", "text", "ping"]
    assert visibility(again, "duplicate", last) == "end twice"


class BareLines(Lines):
    """The same lines, each event's range its line's own bytes (its LF left after it)."""

    def feed(self, chunk: bytes, t: float | None = None) -> list[ServerSentEvent]:
        return [ev._replace(end=ev.end - 1) for ev in super().feed(chunk, t)]


def line_end(body: bytes, end: int) -> int:
    """Where a `BareLines` event really ends: past the LF its range leaves out."""
    return end + 1 if body[end:end + 1] == b"\n" else end


def test_a_duplicate_ends_where_the_framing_says_an_event_ends(registered):
    body = step1_body()
    lines = body.splitlines(keepends=True)
    with registered_as(decoder=BareLines, event_end=line_end):
        capture = capture_of(body)
        assert capture.events[1].end == len(lines[0]) + len(lines[1]) - 1
        again = faults.duplicate(capture, 1)
        later = faults.duplicate(capture, 1, later=2)
    assert again.body == b"".join(lines[:2] + lines[1:])
    assert later.body == b"".join(lines[:4] + [lines[1]] + lines[4:])


def test_a_damaged_line_is_written_by_the_entrys_writer_and_read_as_bad_json(registered):
    capture = capture_of(step1_body())
    broken = faults.corrupt_json(capture, 1)
    lines = step1_body().splitlines(keepends=True)
    assert broken.body.splitlines(keepends=True) == (
        lines[:1] + [lines[1].replace(b"}\n", b"\n")] + lines[2:])
    assert [i for i, e in enumerate(parse_all(broken.events)) if e.parse_error] == [1]
    errors = [e for e in turn_state(broken).events if getattr(e, "code", None)
              == "unparseable_json"]
    assert [e.at for e in errors] == [1]


def test_without_a_json_damager_a_corrupted_payload_is_refused_naming_the_wire(registered):
    with registered_as(damage_json=None), pytest.raises(faults.FaultError, match=TOY):
        faults.corrupt_json(capture_of(step1_body()), 1)


def test_a_cut_line_is_undispatched_and_the_turn_is_cut(registered):
    body = step1_body()
    cut = faults.cut_at(capture_of(body), body.index(b'"delta"', 100))
    assert cut.body == body[:len(cut.body)] and not cut.body.endswith(b"\n")
    assert [d.code for d in cut.sse_diagnostics] == ["undispatched_bytes"]
    assert turn_state(cut).outcome != "completed"
    assert turn_state(capture_of(body)).outcome == "completed"


def _failed_after_output():
    body = _lines({"type": "start", "id": "r1", "model": "toy-1"},
                  {"type": "text", "delta": "Paris is"},
                  {"type": "error", "code": "busy", "message": "overloaded"})
    return turn_state(capture_of(body))


def test_continue_appends_the_users_words_the_default_way(registered):
    options = after_output_options(_failed_after_output(), request1())
    assert options.step == 1 and options.partial_text == "Paris is"
    go_on = options.option("continue").request
    assert go_on["messages"][-1] == {"role": "user", "content": CONTINUE_PROMPT}


def test_continue_appends_the_users_words_as_the_entry_says(registered):
    def user_message(request, text):
        request["messages"].append({"role": "human", "text": text})

    with registered_as(user_message=user_message):
        options = after_output_options(_failed_after_output(), request1())
    asked = options.option("continue").request["messages"][-1]
    assert asked == {"role": "human", "text": CONTINUE_PROMPT}


def test_the_sdk_routes_events_are_timed_as_its_entry_says(registered):
    capture = capture_of(step1_body())
    times = [e.t for e in parse_all(capture.events)]
    sdk_events = [SimpleNamespace(type=t) for t in ("chunk", "text", "chunk", "chunk")]
    one_for_one = SDKRoute("toy-sdk", "toy:Translator", raw_types=frozenset({"chunk"}),
                           by_type=False)
    with registered_as(sdk=one_for_one):
        assert _aligned_times(capture, sdk_events) == [times[0], times[0], times[1], times[2]]
    by_type = SDKRoute("toy-sdk", "toy:Translator", raw_types=frozenset({"call", "end"}))
    sdk_events = [SimpleNamespace(type=t) for t in ("call", "args", "call", "end")]
    with registered_as(sdk=by_type):
        assert _aligned_times(capture, sdk_events) == [times[2], times[2], times[6], times[-1]]


def test_closing_an_sdk_helper_is_refused_where_the_wire_has_no_sdk(registered):
    with pytest.raises(ValueError, match="no SDK streaming helper"):
        close_early(capture_of(step1_body()), 2)


PARTS = ("labels", "slot_order", "shows_duplicate", "shows_swap", "user_message",
         "error_after", "write_error")


@pytest.mark.parametrize("wire", sorted(wires.ENTRIES))
def test_every_part_a_course_wire_names_resolves(wire):
    entry = wires.ENTRIES[wire]
    named = {name: entry.part(name) for name in PARTS if getattr(entry, name) is not None}
    if entry.sdk is not None and entry.sdk.close is not None:
        named["sdk.close"] = resolve(entry.sdk.close)
    assert all(part is not None for part in named.values())
    assert all(callable(part) for name, part in named.items() if name != "sdk.close")
    assert callable(entry.error_writer())      # its own, or its framing's


# -- registering -------------------------------------------------------------------------


@pytest.mark.parametrize("part", ["accumulator", "adapter", "next_request"])
def test_registering_a_wire_without_a_part_names_what_is_missing(part):
    lacking = SimpleNamespace(**{**vars(MODULE), "ENTRY": replace(ENTRY, **{part: None})})
    with pytest.raises(ValueError, match=rf"lacks ENTRY\.{part}$"):
        wires.register(lacking)
    assert TOY not in wires.WIRES or wires.WIRES[TOY] is MODULE


def test_registering_a_new_framing_without_its_decoder_names_it():
    lacking = SimpleNamespace(**{**vars(MODULE), "ENTRY": replace(ENTRY, decoder=None)})
    with pytest.raises(ValueError, match=r"ENTRY\.decoder"):
        wires.register(lacking)


def test_registering_a_module_without_its_vocabulary_names_each_missing_name():
    lacking = SimpleNamespace(**{k: v for k, v in vars(MODULE).items()
                                 if k not in ("KEEPALIVES", "SHEET")})
    with pytest.raises(ValueError, match="lacks KEEPALIVES, SHEET$"):
        wires.register(lacking)
