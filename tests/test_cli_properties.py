"""Whatever the bytes, nothing raises: the CLI, the table, the accumulators and the history.

Random byte strings and random mutations of every capture (cut, deleted,
duplicated or overwritten ranges, bytes flipped, a CR/NUL/BOM/invalid UTF-8
inserted) go through every CLI command and the library's entry points. What
must hold: no exception escapes, the exit code is 0, 2 or 3, and an exit 0
never comes with an ``error:`` diagnostic. `check` replays through the SDKs,
so it runs on a small share of the examples only.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
from examples import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pending import readable

from lesson_lib.accumulate import accumulate
from lesson_lib.accumulate.history import History
from lesson_lib.capture.captures import corpus, from_bytes, reference_corpus
from lesson_lib.cli.commands import main
from lesson_lib.views.event_table import event_table

CAPTURES = corpus() + readable(reference_corpus())   # tests/pending.py
SPECIAL = [b"\r", b"\n", b"\r\n", b"\x00", b"\xef\xbb\xbf", b"\xff", b"\xc3", b"\xed\xa0\xbd",
           b"data: ", b"event: ", b": ", b"[", b"]", b"{", b'"', b"NaN", b"1e999", b"\\ud83d"]
ERROR_LINE = re.compile(r": (?:byte \d+|end): error: (\w+):")


@st.composite
def mutated(draw) -> tuple[bytes, dict]:
    """A capture's body after one to three random edits, and its sidecar."""
    cap = draw(st.sampled_from(CAPTURES))
    body = bytearray(cap.body)
    for _ in range(draw(st.integers(1, 3))):
        n = len(body)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 400)))
        edit = draw(st.sampled_from(["cut", "delete", "duplicate", "overwrite", "insert", "flip"]))
        if edit == "cut":
            del body[i:]
        elif edit == "delete":
            del body[i:j]
        elif edit == "duplicate":
            body[i:i] = body[i:j]
        elif edit == "overwrite":
            body[i:j] = draw(st.binary(max_size=j - i))
        elif edit == "insert":
            body[i:i] = draw(st.sampled_from(SPECIAL))
        elif n:
            body[min(i, n - 1)] ^= 1 << draw(st.integers(0, 7))
    return bytes(body), cap.sidecar


def run_cli(*argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, err.getvalue()


def assert_outcome(code: int, err: str, what: str) -> None:
    assert code in (0, 2, 3), (what, code, err)
    if code == 0:
        assert not ERROR_LINE.findall(err), (what, err)


def exercise(tmp: Path, body: bytes, sidecar: dict, with_check: bool) -> None:
    path = tmp / "m.sse"
    path.write_bytes(body)
    side = tmp / "m.json"
    if sidecar:
        side.write_text(json.dumps(sidecar))
    elif side.exists():
        side.unlink()
    for argv in (["events", str(path)], ["events", str(path), "--json"],
                 ["events", str(path), "--chunk-size", "7"],
                 ["final", str(path)], ["final", str(path), "--json"]):
        assert_outcome(*run_cli(*argv), what=argv)
    if with_check:
        assert_outcome(*run_cli("check", str(path)), what="check")
    cap = from_bytes(body, sidecar=sidecar)
    event_table(cap)
    if cap.wire is None:  # no accumulator and no history without a wire (the CLI says so)
        return
    accumulate(cap)
    accumulate(cap, chunk_size=5)
    history = History(cap)
    if cap.events:
        history.at(len(cap.events) - 1)
        history.at(len(cap.events) // 2)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("mutations")


@settings(max_examples=examples(120), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(case=mutated(), check=st.integers(0, 24))
def test_no_mutation_of_a_capture_escapes_as_an_exception(tmp, case, check):
    body, sidecar = case
    exercise(tmp, body, sidecar, with_check=check == 0)


@settings(max_examples=examples(80), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(body=st.one_of(st.binary(max_size=300),
                      st.lists(st.sampled_from(SPECIAL), max_size=40).map(b"".join)),
       wire=st.sampled_from([None, "anthropic-messages", "openai-responses", "openai-chat"]))
def test_no_random_bytes_escape_as_an_exception(tmp, body, wire):
    exercise(tmp, body, {"wire": wire} if wire else {}, with_check=False)


def test_every_capture_is_a_source_of_mutations():
    assert {c.wire for c in CAPTURES} >= {"anthropic-messages", "openai-responses", "openai-chat"}


# -- any depth: every command and view, output linear in the input ---------------------------


def deep_tool_stream(levels: int) -> bytes:
    """An Anthropic turn whose tool input nests `levels` arrays deep, in 4,000-character
    fragments: the input is about 2 bytes a level."""
    start = {"type": "message_start", "message": {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
        "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}
    tool = {"type": "content_block_start", "index": 0,
            "content_block": {"type": "tool_use", "id": "t", "name": "f", "input": {}}}
    raw = '{"a": ' + "[" * levels + "]" * levels + "}"
    payloads = [start, tool] + [
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "input_json_delta", "partial_json": raw[i:i + 4000]}}
        for i in range(0, len(raw), 4000)]
    payloads += [{"type": "content_block_stop", "index": 0},
                 {"type": "message_delta", "delta": {"stop_reason": "tool_use",
                                                     "stop_sequence": None},
                  "usage": {"output_tokens": 2}},
                 {"type": "message_stop"}]
    return "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads).encode()


def run_out(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("levels", [1_000, 100_000])
def test_every_command_and_view_prints_a_deep_input_in_linear_space(tmp_path, levels):
    from lesson_lib.partial_json import PartialJSON
    from lesson_lib.views.slot_view import show_slots
    from lesson_lib.views.turn_view import show_turn

    body = deep_tool_stream(levels)
    path = tmp_path / "deep.sse"
    path.write_bytes(body)
    (tmp_path / "deep.json").write_text(json.dumps({"wire": "anthropic-messages"}))
    for argv in (["events", str(path)], ["events", str(path), "--json"],
                 ["final", str(path)], ["final", str(path), "--json"],
                 ["turn", str(path)], ["turn", str(path), "--json"]):
        code, out, err = run_out(*argv)
        assert code == 0 and "Traceback" not in err, (argv, err[-500:])
        assert len(out) < 3 * len(body), (argv, len(out), len(body))   # linear, not square
        if "--json" in argv:          # valid JSON, read without recursion
            parser = PartialJSON()
            parser.feed(out)
            parser.finish()
    cap = from_bytes(body, sidecar={"wire": "anthropic-messages"})
    for view in (show_slots(cap), show_turn(cap)):
        for text in (view._repr_html_(), repr(view)):
            assert len(text) < 3 * len(body)
    history = History(cap)
    assert history.at(len(cap.events) - 1) is not None
