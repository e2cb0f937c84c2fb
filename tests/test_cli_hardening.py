"""The CLI on hostile input and hostile output: one line, a documented exit code, no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import chat_order
import pytest

from lesson_lib.cli.commands import main

MS = ('{"type":"message_start","message":{"id":"m","type":"message","role":"assistant",'
      '"model":"x","content":[],"stop_reason":null,"usage":{"input_tokens":1,"output_tokens":1}}}')
CBS = '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}'
END = ['{"type":"content_block_stop","index":0}',
       '{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},'
       '"usage":{"output_tokens":2}}',
       '{"type":"message_stop"}']


def d(literal: str) -> str:
    return ('{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":'
            + literal + "}}")


def stream(*payloads: str) -> bytes:
    return "".join(f"event: {json.loads(p)['type'] if len(p) < 5000 else 'x'}\ndata: {p}\n\n"
                   for p in payloads).encode()


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path: Path, body: bytes, sidecar: dict | None = None, name: str = "c") -> str:
    (tmp_path / f"{name}.sse").write_bytes(body)
    if sidecar is not None:
        (tmp_path / f"{name}.json").write_text(json.dumps(sidecar))
    return str(tmp_path / f"{name}.sse")


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# -- item 2: deep tool arguments; item 3: surrogates --------------------------------------


TOOL_START = ('{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",'
              '"id":"t","name":"f","input":{}}}')


def args_delta(fragment: str) -> str:
    return ('{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta",'
            '"partial_json":' + json.dumps(fragment) + "}}")


@pytest.mark.parametrize("as_json", [False, True])
def test_final_writes_deep_tool_arguments(tmp_path, capsys, as_json):
    body = stream(MS, TOOL_START, args_delta("[" * 1000), args_delta("]" * 1000), *END)
    code, out, err = run(capsys, "final", write(tmp_path, body), *(["--json"] if as_json else []))
    assert code == 0, err
    assert "".join(out.split()).count("[" * 1000 + "]" * 1000) == 1


def test_a_surrogate_pair_split_across_two_deltas_prints_as_its_character(tmp_path, capsys):
    body = stream(MS, CBS, d('"\\ud83d"'), d('"\\ude00"'), *END)
    for extra in ([], ["--json"]):
        code, out, _ = run(capsys, "final", write(tmp_path, body), *extra)
        assert code == 0 and "😀" in out


def test_a_lone_surrogate_prints_escaped(tmp_path, capsys):
    body = stream(MS, CBS, d('"a\\ud83d"'), *END)
    code, out, _ = run(capsys, "final", write(tmp_path, body), "--json")
    assert code == 0 and "a\\ud83d" in out
    out.encode("utf-8")
    json.loads(out)


# -- item 8: strict payloads, valid --json output -----------------------------------------


@pytest.mark.parametrize("payload", [
    d('"x"').replace('"text":"x"', '"text":"x","n":NaN'),
    d('"x"').replace('"text":"x"', '"text":"x","n":Infinity'),
    d('"x"').replace('"text":"x"', '"text":"x","text":"y"'),
])
def test_a_payload_that_is_not_strict_json_exits_3(tmp_path, capsys, payload):
    body = stream(MS, CBS, payload, *END)
    code, out, err = run(capsys, "final", write(tmp_path, body), "--json")
    assert code == 3 and "unparseable_json" in err
    json.loads(out)


def test_tool_arguments_with_a_number_too_large_still_give_json(tmp_path, capsys):
    body = stream(MS, TOOL_START, args_delta('{"a": 1e999}'), *END)
    _, out, _ = run(capsys, "final", write(tmp_path, body), "--json")
    json.loads(out)  # no Infinity in the text
    assert "Infinity" not in out and "NaN" not in out


# -- item 4: malformed sidecars --------------------------------------------------------


GOOD = stream(MS, CBS, d('"hi"'), *END)


@pytest.mark.parametrize(("sidecar", "field", "command"), [
    ({"response": None}, "response", "final"),
    ({"response": {"status": "abc"}}, "response.status", "final"),
    ({"chunks": {"ends": "abc"}}, "chunks.ends", "events"),
    ({"wire": ["x"]}, "wire", "final"),
    ({"wire": "bogus"}, "wire", "final"),
    ({"request": [1]}, "request", "check"),
    ([1], "sidecar", "events"),
])
def test_a_malformed_sidecar_is_one_line_naming_its_field(tmp_path, capsys, sidecar, field,
                                                          command):
    code, _, err = run(capsys, command, write(tmp_path, GOOD, sidecar))
    assert code == 2
    assert f"'{field}'" in one_line(err) or field == "sidecar"


def test_chunk_ends_that_go_backwards_do_not_crash(tmp_path, capsys):
    side = {"wire": "anthropic-messages", "chunks": {"ends": [50, 10, 10**9], "t_ms": [1, 2, 3, 4]}}
    code, _, err = run(capsys, "final", write(tmp_path, GOOD, side))
    assert code == 0, err


# -- item 5: closed and full output, closed stdin --------------------------------------


def cli(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lesson_lib", *argv], capture_output=True,
                          timeout=60, **kwargs)


def test_stdin_closed_is_one_line_exit_2():
    proc = subprocess.run(f"{sys.executable} -m lesson_lib events - <&-", shell=True,
                          capture_output=True, timeout=60)
    assert proc.returncode == 2 and b"stdin is closed" in proc.stderr
    assert proc.stderr.count(b"\n") == 1


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
def test_a_full_stdout_is_one_line_exit_2():
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "lesson_lib", "events", "hello"],
                              stdout=full, stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 2 and b"cannot write the output" in proc.stderr
    assert proc.stderr.count(b"\n") == 1, proc.stderr


def test_a_reader_that_closes_the_pipe_early_ends_the_command_quietly(tmp_path):
    path = write(tmp_path, stream(MS, CBS, *[d('"x"')] * 20000, *END))
    proc = subprocess.run(f"{sys.executable} -m lesson_lib events {path} | head -n 1",
                          shell=True, capture_output=True, timeout=60)
    assert proc.stdout.count(b"\n") == 1 and proc.stderr == b"", proc.stderr


# -- item 10: NUL is legal; item 12: not UTF-8, unknown wire, symlink loops --------------


def test_a_nul_byte_in_a_comment_or_data_is_not_binary(tmp_path, capsys):
    body = b": \x00\n\n" + GOOD.replace(b'"hi"', b'"h\\u0000i"')
    code, _, err = run(capsys, "events", write(tmp_path, body, {"wire": "anthropic-messages"}))
    assert code == 0, err
    code, _, err = run(capsys, "events", write(tmp_path, b"data: \x00\n\n", name="nul"))
    assert code == 3 and "binary" not in err  # an event whose data is NUL: not JSON, not binary


def test_what_cannot_be_an_event_stream_is_still_refused(tmp_path, capsys):
    code, _, err = run(capsys, "events", write(tmp_path, bytes(range(256)) * 40))
    assert code == 2 and "binary" in one_line(err)


def test_invalid_utf8_is_a_not_text_warning_with_its_offset(tmp_path, capsys):
    body = GOOD.replace(b'"hi"', b'"h\xffi"')
    code, _, err = run(capsys, "events", write(tmp_path, body, {"wire": "anthropic-messages"}))
    assert code == 0
    offset = body.index(b"\xff")
    assert f"byte {offset}: warning: not_text" in one_line(err)


def test_a_stream_whose_wire_cannot_be_told_says_why(tmp_path, capsys):
    code, _, err = run(capsys, "events", write(tmp_path, b'data: {"x": 1}\n\n'))
    assert code == 3 and "wire_unknown" in one_line(err)


def test_a_symlink_loop_is_not_reported_as_missing(tmp_path, capsys):
    loop = tmp_path / "loop.sse"
    loop.symlink_to(loop)
    code, _, err = run(capsys, "events", str(loop))
    assert code == 2 and "no such file" not in one_line(err) and "cannot read" in err


# -- item 11: the wire from the events' structure ---------------------------------------


CHAT = [json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                    "choices": [{"index": 0, "delta": {"role": "assistant", "content": text},
                                 "finish_reason": None}]})
        for text in ("event: response.completed\n", "event: message_start")]


def test_text_that_names_another_wire_does_not_decide_the_wire(tmp_path, capsys):
    done = json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                       "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    body = "".join(f"data: {c}\n\n" for c in [*CHAT, done]).encode() + b"data: [DONE]\n\n"
    code, out, err = run(capsys, "final", write(tmp_path, body), "--json")
    assert code == 0, err
    assert json.loads(out)["object"] == "chat.completion"


def test_a_stream_behind_a_long_comment_is_still_recognised(tmp_path, capsys):
    body = b": " + b"x" * 100_000 + b"\n\n" + GOOD
    code, _, err = run(capsys, "final", write(tmp_path, body))
    assert code == 0, err


# -- item 17: only regular files, and a size limit ----------------------------------------


def test_a_fifo_is_refused_without_blocking(tmp_path):
    fifo = tmp_path / "f.sse"
    os.mkfifo(fifo)
    proc = cli("events", str(fifo))
    assert proc.returncode == 2 and b"not a regular file" in proc.stderr


def test_a_device_is_refused(capsys):
    code, _, err = run(capsys, "events", "/dev/zero")
    assert code == 2 and "not a regular file" in one_line(err)


def test_a_body_past_max_bytes_is_refused(tmp_path, capsys):
    path = write(tmp_path, GOOD)
    code, _, err = run(capsys, "events", path, "--max-bytes", str(len(GOOD) - 1))
    assert code == 2 and "--max-bytes" in one_line(err)
    assert run(capsys, "events", path, "--max-bytes", str(len(GOOD)))[0] == 0


def test_stdin_past_max_bytes_is_refused():
    proc = cli("events", "-", "--max-bytes", "100", input=GOOD)
    assert proc.returncode == 2 and b"--max-bytes" in proc.stderr


# -- item 7: protocol violations exit 3, their text survives; item 9: visible swaps ------


ERROR_LINE = ": error: "
DELTA_STOP = '{"type":"content_block_stop","index":0}'


@pytest.mark.parametrize("payloads, code", [
    ([MS, d('"Hello "'), CBS, d('"world"'), *END], "unknown_slot"),          # before its start
    ([MS, CBS, d('"Hello "'), DELTA_STOP, d('"world"'), *END[1:]], "delta_after_stop"),
    ([MS, DELTA_STOP, CBS, d('"x"'), *END], "unknown_slot"),                  # stop, no start
    ([MS, CBS, CBS, d('"x"'), *END], "duplicate_start"),                      # a second start
    ([MS, CBS, d('"x"'), END[1], END[0], END[2]], "block_after_message_delta"),  # swap
    ([MS, CBS, d('"x"'), DELTA_STOP.replace("stop", "start", 1).replace(
        '"index":0}', '"index":1,"content_block":{"type":"text","text":""}}'),
      *END], "blocks_overlap"),                                                # start, no stop
])
def test_a_protocol_violation_exits_3_naming_it(tmp_path, capsys, payloads, code):
    path = write(tmp_path, stream(*payloads), {"wire": "anthropic-messages"})
    status, _, err = run(capsys, "final", path)
    assert status == 3, err
    assert f"error: {code}:" in err


def test_the_text_of_a_delta_before_its_start_is_kept_in_its_diagnostic(tmp_path, capsys):
    path = write(tmp_path, stream(MS, d('"Hello "'), CBS, d('"world"'), *END),
                 {"wire": "anthropic-messages"})
    status, out, _ = run(capsys, "final", path, "--json")
    assert status == 3 and json.loads(out)["content"] == [{"type": "text", "text": "world"}]
    from lesson_lib.accumulate import accumulate
    from lesson_lib.capture.captures import from_bytes
    result = accumulate(from_bytes(stream(MS, d('"Hello "'), CBS, d('"world"'), *END),
                                   sidecar={"wire": "anthropic-messages"}))
    (orphan,) = [x for x in result.diagnostics if x.code == "unknown_slot"]
    assert orphan.extra["orphan_text"] == "Hello " and "Hello " in orphan.raw


def test_a_tool_call_cut_by_a_length_stop_in_a_proper_stream_is_a_warning(capsys):
    status, _, err = run(capsys, "final", "anthropic-messages/max-tokens-in-tool-json")
    assert status == 0, err
    assert "warning: cut_tool_input:" in err and ERROR_LINE not in err


def test_final_never_exits_0_with_an_error_line_over_the_corpus(capsys):
    from pending import readable

    from lesson_lib.capture.captures import corpus, reference_corpus
    for cap in corpus() + readable(reference_corpus()):
        status, _, err = run(capsys, "final", str(cap.path))
        assert status == 3 or ERROR_LINE not in err, (cap.key, err)


def test_a_chat_delta_after_its_finish_exits_3(tmp_path, capsys):
    def chunk(delta, finish=None):
        return json.dumps({"id": "c", "object": "chat.completion.chunk", "created": 1,
                           "model": "m", "choices": [{"index": 0, "delta": delta,
                                                      "finish_reason": finish}]})
    body = "".join(f"data: {p}\n\n" for p in (
        chunk({"content": "a"}, "stop"), chunk({"content": "late"}), "[DONE]")).encode()
    status, _, err = run(capsys, "final", write(tmp_path, body, {"wire": "openai-chat"}))
    assert status == 3 and "error: delta_after_finish:" in err


@pytest.mark.parametrize("code", list(chat_order.BROKEN))
def test_a_broken_chat_order_exits_3_naming_it(tmp_path, capsys, code):
    cap = chat_order.BROKEN[code]()
    status, out, err = run(capsys, "final", write(tmp_path, cap.body, cap.sidecar), "--json")
    assert status == 3 and f"error: {code}:" in err
    assert json.loads(out)["choices"][0]["finish_reason"] == "tool_calls"


def test_every_visible_swap_on_anthropic_and_chat_exits_3_and_keeps_the_text(capsys):
    from pending import readable

    from lesson_lib.accumulate import accumulate
    from lesson_lib.breaks import faults
    from lesson_lib.breaks.visibility import visibility
    from lesson_lib.capture.captures import corpus, reference_corpus
    from lesson_lib.wires.wire_events import parse_all

    tried = 0
    for cap in corpus() + readable(reference_corpus()):
        if cap.status >= 300 or cap.wire not in ("anthropic-messages", "openai-chat"):
            continue
        events = parse_all(cap.events)
        texts = [ev.payload["delta"].get("text") for ev in events
                 if ev.type == "content_block_delta" and isinstance(ev.payload.get("delta"), dict)]
        texts += [c.get("delta", {}).get("content") for ev in events
                  if isinstance(ev.payload, dict) and isinstance(ev.payload.get("choices"), list)
                  for c in ev.payload["choices"] if isinstance(c, dict)]
        texts = [t for t in texts if isinstance(t, str)]   # (typed parts: not plain text)
        for i in range(len(events) - 1):
            if visibility(cap, "swap", i, events) is None:
                continue
            tried += 1
            result = accumulate(faults.swap(cap, i))
            assert any(d.severity == "error" for d in result.diagnostics), (cap.key, i)
            seen = json.dumps(result.final) + "".join(
                d.extra.get("orphan_text") or "" for d in result.diagnostics)
            assert all(t in seen or json.dumps(t)[1:-1] in seen for t in texts if t), (cap.key, i)
    assert tried > 20


@pytest.mark.parametrize("argv", [
    ["events", "/no/such/file", "--json"], ["final", "/no/such/file", "--json"],
    ["turn", "/no/such/file", "--json"], ["final", "--chunk-size", "0", "x", "--json"],
    ["check", "/no/such/file", "--json"], ["list", "--json"], ["serve", "--json"],
    ["record", "--json"], ["--json"]])
def test_exit_2_with_json_prints_a_json_error_object(capsys, argv):
    status, out, err = run(capsys, *argv)
    assert status == 2 and err.startswith("lesson-lib: ")
    error = json.loads(out)["error"]
    assert error["exit"] == 2 and error["message"] in err


AZURE_FIRST = ('{"choices":[],"created":0,"id":"","model":"","object":"",'
               '"prompt_filter_results":[{"prompt_index":0,"content_filter_results":'
               '{"hate":{"filtered":false,"severity":"safe"}}}]}')


def test_an_azure_first_chunk_alone_is_a_cut_chat_stream(tmp_path, capsys):
    from lesson_lib.capture.captures import detect_wire
    body = f"data: {AZURE_FIRST}\n\n".encode()
    assert detect_wire(body) == "openai-chat"
    path = write(tmp_path, body)
    for command in ("events", "final", "turn"):
        status, _, err = run(capsys, command, path)
        assert status == 3 and "no_terminal" in err, (command, err)


@pytest.mark.parametrize("command", ["events", "final", "turn"])
@pytest.mark.parametrize("as_json", [True, False])
def test_a_closed_stdout_is_one_line_exit_2(command, as_json):
    argv = [sys.executable, "-m", "lesson_lib", command, "captures/anthropic-messages/hello.sse"]
    proc = subprocess.run([*argv, *(["--json"] if as_json else [])], stdin=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, timeout=60, cwd=Path(__file__).parents[1],
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count(b"\n") == 1 and b"stdout is closed" in proc.stderr, proc.stderr


@pytest.mark.parametrize("argv", [["list"], ["check", "hello"], ["events", "hello", "--json"]])
def test_a_closed_stdout_stops_every_printing_command(argv, monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdout", None)
    assert main(argv) == 2
    assert capsys.readouterr().err.count("\n") == 1
