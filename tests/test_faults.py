"""Faults: broken streams derived from good captures, and what every station makes of them.

Unit tests pin the body and sidecar each fault produces. Property tests
(hypothesis) draw captures from the corpus (and the reference corpus when it
is present) and check the "nothing silently lost" rule: whatever the fault,
`accumulate` never raises, says the stream is not complete, names the problem
in its diagnostics and keeps everything that arrived before the fault; the
event table and the history build; the CLI exits 3 (2 only when, by
contract, no event at all could be dispatched), never with a traceback.
"""

from __future__ import annotations

import contextlib
import io
import json
import tempfile
from pathlib import Path

import pytest
from botocore.eventstream import EventStreamBuffer
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pending import readable

from lesson_lib.accumulate import accumulate
from lesson_lib.accumulate.history import History
from lesson_lib.breaks import faults
from lesson_lib.capture.captures import Capture, corpus, from_bytes, load, reference_corpus
from lesson_lib.cli import commands as cli
from lesson_lib.turn.run import turn_state
from lesson_lib.views.event_table import event_table
from lesson_lib.wires import WIRES
from lesson_lib.wires.stream_end import how_it_ended
from lesson_lib.wires.wire_events import parse_all

TERMINALS = {name: wire.TERMINALS for name, wire in WIRES.items()}

# -- the captures the properties draw from -----------------------------------------

# A resumed stream (background-resumed) starts mid-response: it is a fault's input only
# once joined onto its first stream (lesson_lib.breaks.resume), so the pools leave it out.
STREAMS = [c for c in corpus() if c.status < 300 and "starting_after" not in c.request]
REFERENCE = [c for c in readable(reference_corpus()) if c.status < 300]   # tests/pending.py
BY_KEY = {f"{pool}:{c.key}": c for pool, caps in (("corpus", STREAMS), ("reference", REFERENCE))
          for c in caps}


def _key(cap: Capture) -> str:
    return next(k for k, c in BY_KEY.items() if c is cap)
NEEDS_REFERENCE = pytest.mark.skipif(not REFERENCE,
                                     reason="reference captures absent (REFERENCE_CAPTURES)")

PROPERTY = settings(max_examples=examples(150), deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
CLI_PROPERTY = settings(PROPERTY, max_examples=examples(50))

# The codes that say "the stream was broken" (any one of them, per fault).
CUT_CODES = {"undispatched_bytes", "no_terminal", "cut_tool_input", "block_never_stopped"}
TEXT_KEYS = {"text", "thinking", "content", "refusal", "reasoning_content", "arguments"}


def _terminal_end(cap: Capture) -> int | None:
    """The byte offset just past the last terminal event, or None when there is none."""
    ends = [e.sse.end for e in parse_all(cap.events)
            if e.type in TERMINALS.get(cap.wire or "", ())]
    return max(ends) if ends else None


def _has_terminal(cap: Capture) -> bool:
    return _terminal_end(cap) is not None


def _json_events(cap: Capture) -> list[int]:
    return [e.index for e in parse_all(cap.events) if e.parse_error is None and
            isinstance(e.payload, dict)]


def _texts(value, path=()) -> dict[tuple, str]:
    """Every text-like string leaf of a final object, by its path."""
    found: dict[tuple, str] = {}
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, str) and key in TEXT_KEYS:
                found[path + (key,)] = item
            else:
                found.update(_texts(item, path + (key,)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.update(_texts(item, path + (i,)))
    return found


def _assert_kept(before: dict | None, broken: dict | None, original: dict | None,
                 *, prefix_of_original: bool = True) -> None:
    """Every text that had arrived before the fault is still there (the broken text starts
    with what had arrived) and, when the fault kept a prefix of the events, nothing is
    invented (the broken text is a prefix of the original's)."""
    arrived, got, full = _texts(before), _texts(broken), _texts(original)
    for path, text in arrived.items():
        if not text:        # nothing had arrived there (Mistral: "" before its typed parts)
            continue
        assert path in got, f"lost {path!r} ({text[:40]!r}) after the fault"
        assert got[path].startswith(text), f"{path!r}: {got[path][:60]!r} lost {text[:60]!r}"
    for path, text in got.items():
        if prefix_of_original and path in full and path[-1] != "arguments":
            assert full[path].startswith(text), f"{path!r}: {text[:60]!r} was invented"


def _check_views(cap: Capture) -> None:
    """The event table builds and the history answers a few indices, ended or not."""
    table = event_table(cap)
    assert len(table) == len(cap.events)
    history = History(cap)
    n = len(history)
    for k in sorted({0, n // 2, n}):
        snap = history.at(k)
        assert snap.index == k
    end = history.end()
    assert end.complete == accumulate(cap).complete


def _run_cli(cap: Capture, command: str) -> tuple[int, str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{cap.name}.sse"
        path.write_bytes(cap.body)
        path.with_suffix(".json").write_text(json.dumps(cap.sidecar), encoding="utf-8")
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main([command, str(path), "--json"])
    assert "Traceback" not in err.getvalue()
    return code, out.getvalue(), err.getvalue()


def _check_cli(cap: Capture) -> None:
    for command in ("final", "events"):
        code, out, err = _run_cli(cap, command)
        if cap.body and cap.events:
            ending = how_it_ended(cap.wire, parse_all(cap.events), cap.sse_diagnostics)
            if ending.proper:   # only Chat's [DONE] dropped after every finish: a warning
                assert (cap.wire, code) == ("openai-chat", cli.OK), (command, code, err)
                assert "no_done_marker" in err and ": error:" not in err
                continue
            assert code == cli.NOT_PROPER, (command, code, err)
            json.loads(out)
            assert "lesson-lib:" in err
        else:   # by contract: nothing could be dispatched, so it cannot start
            assert code == cli.CANNOT_START, (command, code, err)
            assert len(err.strip().splitlines()) == 1


def _codes(result) -> set[str]:
    return {d.code for d in result.diagnostics}


# -- unit tests: what each fault produces --------------------------------------------


@pytest.fixture(scope="module")
def hello() -> Capture:
    return load("anthropic-messages/hello")


def test_cut_at_trims_the_body_and_the_chunks(hello):
    broken = faults.cut_at(hello, 700)
    assert broken.body == hello.body[:700]
    assert broken.sidecar["chunks"]["ends"] == [490, 643, 700]
    # the trimmed chunk keeps the time of the chunk it was cut from
    assert broken.sidecar["chunks"]["t_ms"] == hello.sidecar["chunks"]["t_ms"][:3]
    assert broken.sidecar["fault"] == {"kind": "cut_at", "at": 700}
    assert "cut_at" in broken.demonstrates and "700" in broken.demonstrates
    assert broken.wire == hello.wire and broken.request == hello.request
    assert "sdk" not in broken.sidecar and "sdk" in hello.sidecar
    assert hello.body[-1:] and len(hello.body) == 1660   # the original is untouched


def test_cut_at_a_chunk_boundary_and_beyond_the_end(hello):
    at_boundary = faults.cut_at(hello, 643)
    assert at_boundary.sidecar["chunks"]["ends"] == [490, 643]
    assert at_boundary.sidecar["chunks"]["t_ms"] == hello.sidecar["chunks"]["t_ms"][:2]
    whole = faults.cut_at(hello, 10_000)
    assert whole.body == hello.body
    assert whole.sidecar["chunks"]["ends"] == hello.sidecar["chunks"]["ends"]
    assert faults.cut_at(hello, 0).body == b""
    with pytest.raises(faults.FaultError):
        faults.cut_at(hello, -1)


def test_inject_error_anthropic_shape_and_nothing_after(hello):
    broken = faults.inject_error(hello, 3)
    ev = hello.events[3]
    block = b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error",' \
            b'"message":"Overloaded"}}\n\n'
    assert broken.body == hello.body[:ev.end] + block
    assert broken.events[-1].event == "error"
    assert len(broken.events) == 5
    ends = broken.sidecar["chunks"]["ends"]
    assert ends[-1] == len(broken.body) and ends == sorted(set(ends))
    assert len(ends) == len(broken.sidecar["chunks"]["t_ms"])
    assert broken.sidecar["fault"] == {"kind": "inject_error", "at": 3}
    result = accumulate(broken)
    assert not result.complete and "in_band_error" in _codes(result)


def test_inject_error_responses_nested_shape_continues_the_sequence():
    cap = load("openai-responses/text")
    broken = faults.inject_error(cap, 4)
    last = parse_all(broken.events)[-1]
    assert last.sse.event == "error" and last.type == "error"
    assert last.payload["error"]["type"] == "server_error"
    assert last.payload["sequence_number"] == parse_all(cap.events)[4].payload[
        "sequence_number"] + 1
    result = accumulate(broken)
    assert "in_band_error" in _codes(result)
    assert "sequence_gap" not in _codes(result)


def test_inject_error_chat_shape_and_custom_payload():
    cap = load("openai-chat/text-usage")
    broken = faults.inject_error(cap, 2)
    last = parse_all(broken.events)[-1]
    assert last.sse.event is None and last.type == "error"
    assert set(last.payload) == {"error"}
    custom = faults.inject_error(cap, 2, payload={"error": {"message": "rate limited",
                                                            "type": "rate_limit_error"}})
    assert parse_all(custom.events)[-1].payload["error"]["message"] == "rate limited"
    with pytest.raises(faults.FaultError):
        faults.inject_error(cap, len(cap.events))


def test_drop_terminal_removes_exactly_the_terminal(hello):
    broken = faults.drop_terminal(hello)
    stop = parse_all(hello.events)[-1]
    assert stop.type == "message_stop"
    assert broken.body == hello.body[:stop.sse.start] + hello.body[stop.sse.end:]
    assert [e.data for e in broken.events] == [e.data for e in hello.events[:-1]]
    assert broken.sidecar["chunks"]["ends"][-1] == len(broken.body)
    assert broken.sidecar["fault"] == {"kind": "drop_terminal", "at": stop.index}
    for key in ("openai-chat/text-usage", "openai-responses/text",
                "openai-responses/incomplete"):
        cap = load(key)
        types = [e.type for e in parse_all(faults.drop_terminal(cap).events)]
        assert not set(types) & TERMINALS[cap.wire]
    with pytest.raises(faults.FaultError):
        faults.drop_terminal(load("anthropic-messages/cut-in-tool-json"))


def test_split_character_changes_only_the_chunking(hello):
    broken = faults.split_character(hello)
    assert broken.body == hello.body
    split = broken.sidecar["fault"]["at"]
    assert split in broken.sidecar["chunks"]["ends"]
    assert hello.body[split - 1] >= 0xC0 and 0x80 <= hello.body[split] < 0xC0
    assert len(broken.sidecar["chunks"]["ends"]) == len(hello.chunk_ends) + 1
    assert [e.data for e in broken.events] == [e.data for e in hello.events]
    assert broken.sidecar["sdk"] == hello.sidecar["sdk"]   # same bytes, same SDK verdict
    with pytest.raises(faults.FaultError):
        faults.split_character(from_bytes(b"data: {}\n\n", sidecar={"wire": "openai-chat"}))


def test_corrupt_json_damages_one_payload(hello):
    broken = faults.corrupt_json(hello, 2)
    assert len(broken.body) == len(hello.body) - 1
    parsed = parse_all(broken.events)
    assert parsed[2].parse_error is not None
    assert [e.parse_error for i, e in enumerate(parsed) if i != 2] == [None] * 10
    assert broken.sidecar["fault"] == {"kind": "corrupt_json", "at": 2}
    assert "unparseable_json" in _codes(accumulate(broken))
    with pytest.raises(faults.FaultError):
        faults.corrupt_json(load("openai-chat/text-usage"), len(load("openai-chat/text-usage")
                                                                 .events) - 1)   # [DONE]


BEDROCK = [c for c in STREAMS if c.framing == "eventstream"]


def _headers(ev) -> dict:
    return {h.name: h.value for h in ev.headers}


def _botocore_frames(body: bytes) -> list:
    buffer = EventStreamBuffer()
    buffer.add_data(body)
    return [(m.headers, m.payload) for m in buffer]


@pytest.mark.parametrize("cap", BEDROCK, ids=[c.key for c in BEDROCK])
def test_corrupt_json_on_bedrock_damages_the_payload_and_frames_it_again(cap):
    good = _botocore_frames(cap.body)
    for i, ev in enumerate(parse_all(cap.events)):
        broken = faults.corrupt_json(cap, i)
        frames = _botocore_frames(broken.body)    # botocore raises on a broken frame
        assert [h for h, _ in frames] == [h for h, _ in good]
        assert [p for k, (_, p) in enumerate(frames) if k != i] == [
            p for k, (_, p) in enumerate(good) if k != i]
        assert [d.code for d in broken.sse_diagnostics] == [d.code for d in cap.sse_diagnostics]
        assert [e.parse_error is not None for e in parse_all(broken.events)] == [
            k == i for k in range(len(cap.events))]
        assert "frame at byte" in broken.sidecar["demonstrates"]
        if _headers(cap.events[i]).get(":message-type") != "event":
            continue
        reported = [e.at for e in turn_state(broken, route="auto").events
                    if getattr(e, "code", None) == "unparseable_json"]
        assert reported == [i], (i, ev.type)
        assert any(d.code == "unparseable_json" and d.index == i
                   for d in accumulate(broken).diagnostics)


@pytest.mark.parametrize("cap", BEDROCK, ids=[c.key for c in BEDROCK])
def test_duplicate_on_bedrock_copies_one_whole_frame(cap):
    good = _botocore_frames(cap.body)
    n = len(good)
    for i in sorted({0, n // 2, n - 1}):
        for later in sorted({0, min(2, n - 1 - i)}):
            frames = _botocore_frames(faults.duplicate(cap, i, later=later).body)
            assert frames == good[:i + later + 1] + [good[i]] + good[i + later + 1:]


def test_faults_refuse_an_http_error():
    cap = load("anthropic-messages/http-529-overloaded")
    for fault in (lambda c: faults.inject_error(c, 0), faults.drop_terminal,
                  lambda c: faults.corrupt_json(c, 0)):
        with pytest.raises(faults.FaultError):
            fault(cap)


# -- properties ------------------------------------------------------------------------


def _cut_property(cap: Capture, offset: int) -> None:
    broken = faults.cut_at(cap, offset)
    result = accumulate(broken)
    original = accumulate(cap)
    terminal_end = _terminal_end(cap)
    if offset >= len(cap.body) or (terminal_end is not None and offset >= terminal_end):
        if cap.framing == "eventstream" and offset not in {e.end for e in cap.events}:
            # Bedrock: a frame cut short after messageStop (the metadata frame lost
            # part way) is a cut, as both turn routes say
            assert not result.complete and "truncated_frame" in _codes(result)
        else:
            assert result.complete == original.complete
    else:
        assert not result.complete
        assert _codes(result) & (CUT_CODES | {"in_band_error"}), _codes(result)
    arrived = sum(1 for e in cap.events if e.end <= offset)
    assert len(broken.events) == arrived
    before = History(cap).at(arrived).final
    _assert_kept(before, result.final, original.final)


def _inject_property(cap: Capture, k: int) -> None:
    broken = faults.inject_error(cap, k)
    result = accumulate(broken)
    assert not result.complete
    assert "in_band_error" in _codes(result)
    _assert_kept(History(cap).at(k + 1).final, result.final, accumulate(cap).final)
    assert event_table(broken)["error"].iloc[-1]


def _drop_property(cap: Capture) -> None:
    broken = faults.drop_terminal(cap)
    result = accumulate(broken)
    ending = how_it_ended(broken.wire, parse_all(broken.events), broken.sse_diagnostics)
    if cap.wire == "openai-chat" and ending.proper:
        # Chat's rule for a body without [DONE]: every choice finished, the owed usage
        # came, the body whole: ended, with a warning (the SDK reads it so too).
        assert result.complete and "no_done_marker" in _codes(result)
        assert accumulate(cap).complete
        return
    assert not result.complete
    assert _codes(result) & {"no_terminal", "in_band_error"}
    k = min(e.index for e in parse_all(cap.events) if e.type in TERMINALS[cap.wire])
    _assert_kept(History(cap).at(k).final, result.final, accumulate(cap).final)


def _corrupt_property(cap: Capture, i: int) -> None:
    broken = faults.corrupt_json(cap, i)
    result = accumulate(broken)
    original = accumulate(cap)
    if cap.framing == "eventstream":
        # The frame is written again around its damaged payload: every frame still decodes,
        # and only frame i changed.
        assert [d.code for d in broken.sse_diagnostics] == [d.code for d in cap.sse_diagnostics]
        # (a damaged Invoke chunk cannot be named by its inner type: it stays a chunk)
        assert [e.start for e in broken.events][:i + 1] == [e.start for e in cap.events][:i + 1]
        assert [e.event for k, e in enumerate(broken.events) if k != i] == [
            e.event for k, e in enumerate(cap.events) if k != i]
        assert len(broken.events) == len(cap.events)
        if _headers(broken.events[i]).get(":message-type") == "exception":
            # An exception is named by its headers: it is still reported, whatever its JSON
            assert "in_band_error" in _codes(result) and not result.complete
            return
    assert "unparseable_json" in _codes(result)
    damaged = parse_all(cap.events)[i].type
    if damaged in TERMINALS[cap.wire]:
        assert not result.complete
    elif damaged not in WIRES[cap.wire].FAILURES:
        # `complete` is about the terminal only; it never improves (unless the damaged
        # payload was the in-band error itself: then what is left ends with [DONE])
        assert result.complete <= original.complete
    table = event_table(broken)
    assert table["parse_error"].iloc[i] is not None
    # A damaged start event leaves its block out, so later blocks move up a place:
    # only what arrived before the damage is compared by path.
    _assert_kept(History(cap).at(i).final, result.final, original.final,
                 prefix_of_original=False)


def _split_property(cap: Capture) -> None:
    broken = faults.split_character(cap)
    assert broken.body == cap.body
    assert [(e.event, e.data, e.start, e.end) for e in broken.events] == [
        (e.event, e.data, e.start, e.end) for e in cap.events]
    a, b = accumulate(cap), accumulate(broken)
    assert a.final == b.final and a.complete == b.complete
    assert [(d.code, d.offset) for d in a.diagnostics] == [(d.code, d.offset)
                                                          for d in b.diagnostics]


def _with_multibyte(caps: list[Capture]) -> list[Capture]:
    return [c for c in caps if any(byte >= 0xC0 for byte in c.body)]


def _with_terminal(caps: list[Capture]) -> list[Capture]:
    return [c for c in caps if _has_terminal(c)]


def captures(caps: list[Capture]) -> st.SearchStrategy[Capture]:
    """One of `caps`, drawn by key (so a failing example prints as one short line)."""
    return st.sampled_from([_key(c) for c in caps]).map(BY_KEY.__getitem__)


@st.composite
def cuts(draw, caps):
    key = draw(st.sampled_from([_key(c) for c in caps]))
    return BY_KEY[key], draw(st.integers(0, len(BY_KEY[key].body)))


@st.composite
def event_indices(draw, caps, pick=lambda cap: list(range(len(cap.events)))):
    key = draw(st.sampled_from([_key(c) for c in caps]))
    return BY_KEY[key], draw(st.sampled_from(pick(BY_KEY[key])))


def _properties(caps: list[Capture], tag: str):
    """The property tests over one pool of captures, named with `tag` (a reference capture
    pending for one of them by name is left out of its pool: tests/pending.py)."""
    every = caps
    @PROPERTY
    @given(cuts(readable(caps, f"test_cut_anywhere_{tag}")))
    def cut(case):
        _cut_property(*case)

    @PROPERTY
    @given(event_indices(readable(caps, f"test_inject_error_after_any_event_{tag}")))
    def inject(case):
        _inject_property(*case)

    @PROPERTY
    @given(captures(_with_terminal(caps)))
    def drop(cap):
        _drop_property(cap)

    @PROPERTY
    @given(event_indices(caps, _json_events))
    def corrupt(case):
        _corrupt_property(*case)

    @PROPERTY
    @given(captures(_with_multibyte(caps)))
    def split(cap):
        _split_property(cap)

    @CLI_PROPERTY
    @given(st.sampled_from(["cut", "inject", "drop", "corrupt"]), st.data())
    def views_and_cli(kind, data):
        caps = readable(every, f"test_views_and_cli_on_every_fault_{tag}")
        if kind == "cut":
            cap, offset = data.draw(cuts(caps))
            broken = faults.cut_at(cap, offset)
            if offset >= (_terminal_end(cap) or len(cap.body) + 1):
                return
        elif kind == "inject":
            broken = faults.inject_error(*data.draw(event_indices(caps)))
        elif kind == "drop":
            broken = faults.drop_terminal(data.draw(captures(_with_terminal(caps))))
        else:
            broken = faults.corrupt_json(*data.draw(event_indices(caps, _json_events)))
        _check_views(broken)
        _check_cli(broken)

    return {f"test_{name}_{tag}": fn for name, fn in
            [("cut_anywhere", cut), ("inject_error_after_any_event", inject),
             ("drop_terminal", drop), ("corrupt_any_payload", corrupt),
             ("split_character_changes_nothing", split),
             ("views_and_cli_on_every_fault", views_and_cli)]}


globals().update(_properties(STREAMS, "corpus"))
globals().update({name: NEEDS_REFERENCE(fn) for name, fn in
                  _properties(REFERENCE or STREAMS, "reference").items()})


def test_property_pools_are_not_empty():
    assert STREAMS and _with_terminal(STREAMS) and _with_multibyte(STREAMS)
