"""The CLI as CONTRACTS.md states it: commands, output shapes, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lesson_lib.capture import captures
from lesson_lib.cli.commands import main

REF = captures.reference_dir()
needs_ref = pytest.mark.skipif(not REF.exists(), reason=f"reference captures absent at {REF}")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write_capture(tmp_path: Path, name: str, body: bytes, sidecar: dict | None = None) -> Path:
    path = tmp_path / f"{name}.sse"
    path.write_bytes(body)
    if sidecar is not None:
        (tmp_path / f"{name}.json").write_text(json.dumps(sidecar))
    return path


GOOD = (b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","type":"message",'
        b'"role":"assistant","model":"x","content":[],"stop_reason":null,"usage":'
        b'{"input_tokens":1,"output_tokens":1}}}\n\n'
        b'event: message_stop\ndata: {"type":"message_stop"}\n\n')


# -- cannot start: one line on stderr, exit 2 ---------------------------------


@pytest.mark.parametrize("command", ["events", "final", "check"])
def test_missing_file_is_one_line_and_exit_2(capsys, tmp_path, command):
    code, out, err = run(capsys, command, str(tmp_path / "nope.sse"))
    assert code == 2 and err.count("\n") == 1 and "no such file" in err and "Traceback" not in err


@pytest.mark.parametrize("body, words", [
    (b"", "empty file"),
    (bytes(range(256)) * 8, "not text"),
    (b'{"just": "json"}\n', "not an event stream"),
    (b"hello world\nno events here\n", "not an event stream"),
])
@pytest.mark.parametrize("command", ["events", "final"])
def test_bad_input_is_one_clear_line_and_exit_2(capsys, tmp_path, body, words, command):
    code, out, err = run(capsys, command, str(write_capture(tmp_path, "bad", body)))
    assert code == 2 and words in err and err.count("\n") == 1 and out == ""


def test_a_directory_is_refused(capsys, tmp_path):
    code, _, err = run(capsys, "events", str(tmp_path))
    assert code == 2 and "directory" in err


def test_usage_errors_exit_2(capsys):
    assert run(capsys)[0] == 2
    assert run(capsys, "events")[0] == 2
    assert run(capsys, "events", "x", "--chunk-size", "0")[0] == 2
    assert run(capsys, "frobnicate")[0] == 2


def test_ambiguous_corpus_name_asks_for_wire_slash_name(capsys):
    names = [c.name for c in captures.corpus()]
    shared = sorted({n for n in names if names.count(n) > 1})
    if not shared:
        pytest.skip("no corpus name is shared by two wires yet")
    code, _, err = run(capsys, "events", shared[0])
    assert code == 2 and "ambiguous" in err


# -- events ---------------------------------------------------------------------


def test_events_json_has_the_contract_fields_and_exit_0(capsys, tmp_path):
    code, out, err = run(capsys, "events", str(write_capture(tmp_path, "ok", GOOD)), "--json")
    events = json.loads(out)
    assert code == 0 and err == ""
    assert [set(e) for e in events] == [{"event", "data", "id", "retry", "start", "end", "t"}] * 2
    assert events[0]["start"] == 0 and events[1]["end"] == len(GOOD)
    assert events[0]["t"] is None  # a bare file has no timing


def test_events_take_times_from_the_sidecar_chunks(capsys, tmp_path):
    split = GOOD.index(b"event: message_stop")
    side = {"wire": "anthropic-messages", "chunks": {"ends": [split, len(GOOD)],
                                                    "t_ms": [412.0, 530.5]}}
    code, out, _ = run(capsys, "events", str(write_capture(tmp_path, "t", GOOD, side)), "--json")
    assert [e["t"] for e in json.loads(out)] == [412.0, 530.5]


def test_events_from_stdin(monkeypatch, capsys):
    import io

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(GOOD)))
    code, out, _ = run(capsys, "events", "-", "--json")
    assert code == 0 and len(json.loads(out)) == 2


def test_a_cut_stream_prints_what_arrived_and_exits_3(capsys, tmp_path):
    body = GOOD[: GOOD.index(b"event: message_stop")] + b"event: content_block_delta\ndata: {\"ty"
    code, out, err = run(capsys, "events", str(write_capture(tmp_path, "cut", body)), "--json")
    assert code == 3 and len(json.loads(out)) == 1
    assert "undispatched_bytes" in err and "no_terminal" in err and "byte " in err


def test_an_unparseable_payload_exits_3_and_names_the_offset(capsys, tmp_path):
    body = GOOD.replace(b'{"type":"message_stop"}', b'{"type":"message_st')
    code, _, err = run(capsys, "events", str(write_capture(tmp_path, "bad-json", body)))
    assert code == 3 and "unparseable_json" in err and f"byte {GOOD.index(b'event: message_stop')}" in err


@pytest.mark.parametrize("size", [1, 7, 64])
def test_chunk_size_does_not_change_the_events(capsys, size):
    for cap in (captures.corpus() + captures.reference_corpus())[:40]:
        path = str(cap.path)
        whole = run(capsys, "events", path, "--json")
        chunked = run(capsys, "events", path, "--json", "--chunk-size", str(size))
        # --chunk-size replays without the recorded timing; everything else is equal.
        assert [dict(e, t=None) for e in json.loads(whole[1])] == json.loads(chunked[1])
        assert whole[0] == chunked[0]


def test_http_error_capture_reports_before_output_and_exits_3(capsys, tmp_path):
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    side = {"wire": "anthropic-messages", "response": {"status": 529, "headers": {}}}
    path = str(write_capture(tmp_path, "http", body, side))
    code, out, err = run(capsys, "events", path)
    assert code == 3 and "HTTP 529" in out and "before_output" in err


@needs_ref
def test_every_reference_capture_decodes_with_a_sensible_exit_code(capsys):
    for path in sorted(REF.glob("*/*.sse")):
        code, _, _ = run(capsys, "events", str(path))
        assert code in (0, 3), path


# -- list and check ---------------------------------------------------------------


def test_list_names_every_corpus_capture_with_its_wire(capsys):
    code, out, _ = run(capsys, "list")
    corpus = captures.corpus()
    assert code == 0 and len(out.splitlines()) == len(corpus)
    for cap, line in zip(corpus, out.splitlines(), strict=True):
        assert line.startswith(cap.key) and cap.wire in line


def test_check_passes_every_corpus_and_reference_capture(capsys):
    paths = [str(c.path) for c in captures.corpus() + captures.reference_corpus()]
    if not paths:
        pytest.skip("no captures")
    code, out, err = run(capsys, "check", *paths)
    assert code == 0, err
    assert out.count("\nok   ") + out.startswith("ok   ") == len(paths)


def test_check_fails_a_capture_whose_sidecar_contradicts_its_body(capsys, tmp_path):
    side = {"wire": "anthropic-messages", "demonstrates": "x", "request": {}, "provenance": {},
            "response": {"status": 200, "headers": {}},
            "chunks": {"ends": [10, 5], "t_ms": [0.0]}}
    code, out, err = run(capsys, "check", str(write_capture(tmp_path, "liar", GOOD, side)))
    assert code == 2 and "FAIL" in out and "strictly increasing" in err


def test_check_fails_when_the_sdk_does_not_do_what_the_sidecar_claims(capsys, tmp_path):
    side = {"wire": "anthropic-messages", "sdk": {"raises": "APIStatusError"}}
    code, _, err = run(capsys, "check", str(write_capture(tmp_path, "claim", GOOD, side)))
    assert code == 2 and "APIStatusError" in err


def test_module_and_console_script_both_run():
    for argv in ([sys.executable, "-m", "lesson_lib", "list"],
                 [str(Path(sys.executable).with_name("lesson-lib")), "list"]):
        if not Path(argv[0]).exists():
            continue
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr


# -- final ------------------------------------------------------------------------


def test_final_builds_the_message_and_exits_0(capsys):
    code, out, err = run(capsys, "final", "anthropic-messages/parallel-tools", "--json")
    message = json.loads(out)
    assert code == 0 and err == ""
    assert message["type"] == "message" and message["stop_reason"] == "tool_use"
    tools = [b for b in message["content"] if b["type"] == "tool_use"]
    assert len(tools) == 2 and all(isinstance(t["input"], dict) and t["input"] for t in tools)


def test_final_on_a_cut_tool_call_keeps_the_partial_input_and_the_raw_text(capsys):
    code, out, err = run(capsys, "final", "anthropic-messages/cut-in-tool-json", "--json")
    message = json.loads(out)
    assert code == 3 and message["stop_reason"] is None
    assert "cut_tool_input" in err and "no_terminal" in err
    tool = next(b for b in message["content"] if b["type"] == "tool_use")
    assert tool["input"], "the partial value that arrived, not {}"


@pytest.mark.parametrize("name", ["openai-chat/parallel-tools-interleaved",
                                  "openai-responses/parallel-function-calls",
                                  "anthropic-messages/web-search"])
def test_final_does_not_depend_on_the_chunking(capsys, name):
    whole = run(capsys, "final", name, "--json")
    for size in ("1", "13"):
        assert run(capsys, "final", name, "--json", "--chunk-size", size)[:2] == whole[:2]


def test_final_on_an_http_error_reports_it_and_exits_3(capsys):
    code, out, err = run(capsys, "final", "anthropic-messages/http-529-overloaded", "--json")
    assert code == 3 and json.loads(out) is None and "529" in err


def test_final_on_an_in_band_error_exits_3_and_prints_what_arrived(capsys):
    code, out, err = run(capsys, "final", "openai-chat/error-mid-stream", "--json")
    completion = json.loads(out)
    assert code == 3 and completion["object"] == "chat.completion"
    assert completion["choices"][0]["message"]["content"] and "in_band_error" in err


def test_a_claimed_field_the_sdk_does_not_have_is_a_problem_not_a_null():
    from lesson_lib.capture import replay
    from lesson_lib.cli.validate import sdk_claim_problems

    cap = captures.load("anthropic-messages/hello")
    outcome = replay.run_sdk(cap)
    assert sdk_claim_problems({"raises": None, "final": {"no_such_field": None}}, outcome)
    assert sdk_claim_problems({"raises": None, "final": {"stop_reason": "end_turn"}},
                              outcome) == []


def test_an_unknown_capture_name_suggests_the_nearest_ones():
    from lesson_lib.capture.captures import CaptureError, load
    with pytest.raises(CaptureError, match=r"helo: no such file or corpus capture; did you "
                                           r"mean hello\?"):
        load("helo", search_reference=False)
    with pytest.raises(CaptureError, match=r"did you mean .*anthropic-messages/text-then-tool"):
        load("anthropic-messages/text-then-tol", search_reference=False)
    with pytest.raises(CaptureError, match=r"capture$"):
        load("zzzzzzzz", search_reference=False)


def test_check_of_a_folder_reads_every_capture_whatever_its_framing(capsys):
    folder = captures.CAPTURES_DIR / "aws-bedrock-invoke"
    expected = sorted(p.stem for p in folder.glob("*.eventstream"))
    assert expected, "the corpus has Invoke captures"
    code, out, err = run(capsys, "check", str(folder))
    assert code == 0, err
    checked = [line.split()[1].rstrip(":") for line in out.splitlines()
               if line.startswith(("ok   ", "FAIL "))]
    assert sorted(Path(name).stem for name in checked) == expected


def test_check_without_a_capture_reads_the_whole_corpus(capsys, tmp_path, monkeypatch):
    import shutil
    for key in ("anthropic-messages/hello", "aws-bedrock-converse/converse-hello"):
        cap = captures.load(key)
        (tmp_path / cap.wire).mkdir()
        shutil.copy(cap.path, tmp_path / cap.wire / cap.path.name)
        shutil.copy(cap.path.with_suffix(".json"), tmp_path / cap.wire)
    monkeypatch.setattr(captures, "CAPTURES_DIR", tmp_path)
    code, out, err = run(capsys, "check")
    assert code == 0, err
    assert out.count("ok   ") == 2 and "converse-hello" in out and "hello" in out
