"""The turn never says "completed" over a broken stream: the cases `final` rejects.

Bytes after the terminal, a protocol violation, a Responses ``*.done`` that
contradicts its deltas, a payload that is not a JSON object, and a tool call
the wire never closed before a stop that was not a length stop.
"""

from __future__ import annotations

import json

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.capture.captures import Capture, from_bytes, load
from lesson_lib.cli.commands import main
from lesson_lib.turn.run import turn_state
from lesson_lib.turn.summary import turn_text
from lesson_lib.wires.wire_events import parse_all


def run(capsys, tmp_path, cap: Capture, *argv: str) -> tuple[int, str, str]:
    path = tmp_path / "c.sse"
    path.write_bytes(cap.body)
    (tmp_path / "c.json").write_text(json.dumps({"wire": cap.wire}))
    code = main([argv[0], str(path), *argv[1:]])
    out, err = capsys.readouterr()
    return code, out, err


def anthropic(*payloads: dict) -> Capture:
    body = "".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n" for p in payloads)
    return from_bytes(body.encode(), sidecar={"wire": "anthropic-messages"})


START = {"type": "message_start", "message": {
    "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [],
    "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}}
STOP = {"type": "message_stop"}


def block(index: int, **content) -> dict:
    return {"type": "content_block_start", "index": index, "content_block": content}


def args(index: int, text: str) -> dict:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "input_json_delta", "partial_json": text}}


def text(index: int, fragment: str) -> dict:
    return {"type": "content_block_delta", "index": index,
            "delta": {"type": "text_delta", "text": fragment}}


def stop_block(index: int) -> dict:
    return {"type": "content_block_stop", "index": index}


def delta(reason: str) -> dict:
    return {"type": "message_delta", "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": 5}}


def failed_by(cap: Capture, scope: str) -> None:
    state = turn_state(cap)
    assert state.outcome == "failed", turn_text(state)
    assert state.errors and state.errors[0].scope == scope, state.errors


@pytest.mark.parametrize("name", ["anthropic-messages/hello", "openai-chat/text-usage",
                                  "openai-responses/text"])
def test_bytes_after_the_terminal_fail_the_turn_as_final_does(capsys, tmp_path, name):
    cap = load(name)
    broken = from_bytes(cap.body + b'data: {"x":1}', sidecar={"wire": cap.wire})
    failed_by(broken, "protocol")
    assert turn_state(broken).errors[0].phase == "after_output"
    assert run(capsys, tmp_path, broken, "final")[0] == 3
    code, out, err = run(capsys, tmp_path, broken, "turn")
    assert code == 3 and "completed" not in out.splitlines()[0]
    assert "error: protocol (after_output)" in err and "never followed by a blank line" in err


def test_a_block_opened_while_another_is_open_fails_the_turn(capsys, tmp_path):
    cap = anthropic(START, block(0, type="text", text=""), text(0, "Hi"),
                    block(1, type="text", text=""), text(1, "there"), stop_block(1),
                    stop_block(0), delta("end_turn"), STOP)
    assert "blocks_overlap" in [d.code for d in accumulate(cap).diagnostics]
    failed_by(cap, "protocol")
    assert run(capsys, tmp_path, cap, "final")[0] == 3
    assert run(capsys, tmp_path, cap, "turn")[0] == 3


def test_a_duplicated_argument_fragment_fails_the_turn(capsys, tmp_path):
    tool = block(0, type="tool_use", id="t1", name="get_weather", input={})
    cap = anthropic(START, tool, args(0, '{"city": '), args(0, '"Paris"'), args(0, '"Paris"'),
                    args(0, "}"), stop_block(0), delta("tool_use"), STOP)
    failed_by(cap, "protocol")
    assert run(capsys, tmp_path, cap, "final")[0] == 3
    code, out, _ = run(capsys, tmp_path, cap, "turn", "--json")
    assert code == 3 and json.loads(out)["outcome"] == "failed"


def test_a_tool_call_never_closed_before_a_tool_use_stop_is_an_error(capsys, tmp_path):
    tool = block(0, type="tool_use", id="t1", name="get_weather", input={})
    cap = anthropic(START, tool, args(0, '{"city": "Par'), delta("tool_use"), STOP)
    code, _, err = run(capsys, tmp_path, cap, "final")
    assert code == 3 and "error: block_never_stopped" in err
    assert turn_state(cap).outcome in ("failed", "truncated")
    assert run(capsys, tmp_path, cap, "turn")[0] == 3


def test_a_tool_call_cut_by_a_length_stop_stays_a_warning_and_completes():
    cap = anthropic(START, block(0, type="tool_use", id="t1", name="f", input={}),
                    args(0, '{"city": "Par'), delta("max_tokens"), STOP)
    result = accumulate(cap)
    assert {d.code: d.severity for d in result.diagnostics} == {
        "block_never_stopped": "warning", "cut_tool_input": "warning"}
    assert turn_state(cap).outcome == "completed"
    assert turn_state(load("anthropic-messages/max-tokens-in-tool-json")).outcome == "completed"


def test_a_responses_function_call_never_done_before_completed_is_an_error():
    cap = load("openai-responses/function-call")
    events = parse_all(cap.events)
    cut = [e for e in events if e.type in ("response.function_call_arguments.done",
                                           "response.output_item.done")
           and (e.payload.get("item") or {"type": "function_call"}).get("type")
           == "function_call"]
    body = cap.body
    for e in reversed(cut):
        body = body[:e.sse.start] + body[e.sse.end:]
    broken = from_bytes(body, sidecar={"wire": cap.wire})
    codes = {d.code: d.severity for d in accumulate(broken).diagnostics}
    assert codes.get("cut_tool_input") == "error", codes
    assert turn_state(broken).outcome != "completed"


def responses_without_a_middle_delta() -> tuple[Capture, str]:
    cap = load("openai-responses/text")
    events = parse_all(cap.events)
    deltas = [e for e in events if e.type == "response.output_text.delta"]
    assert len(deltas) > 3
    gone = deltas[len(deltas) // 2]
    body = cap.body[:gone.sse.start] + cap.body[gone.sse.end:]
    done = next(e for e in events if e.type == "response.output_text.done")
    return from_bytes(body, sidecar={"wire": cap.wire}), done.payload["text"]


def test_a_lost_responses_delta_keeps_the_servers_text_and_fails_the_turn(capsys, tmp_path):
    broken, server_text = responses_without_a_middle_delta()
    state = turn_state(broken)
    (block,) = [b for b in state.blocks if b.kind == "text"]
    assert block.text == server_text and block.restated
    # The lost delta is also a gap in the sequence numbers, which the bytes prove.
    codes = [e.code for e in state.errors]
    assert state.outcome == "failed" and "server_object_differs" in codes
    assert "sequence_gap" in codes
    assert "restated" in turn_text(state)
    assert json.loads(run(capsys, tmp_path, broken, "turn", "--json")[1])["blocks"][0][
        "restated"] is True
    code, _, err = run(capsys, tmp_path, broken, "final")
    assert code == 3 and "error: server_object_differs" in err


@pytest.mark.parametrize("name", ["anthropic-messages/hello", "openai-chat/text-usage",
                                  "openai-responses/text"])
@pytest.mark.parametrize("data", [b"[1]", b'"text"', b"5", b"null", b"true"])
def test_a_payload_that_is_not_an_object_does_not_parse_on_any_wire(name, data):
    cap = load(name)
    events = parse_all(cap.events)
    target = events[len(events) // 2]
    raw = cap.body[target.sse.start:target.sse.end]
    line = raw.index(b"data:")
    new = raw[:line] + b"data: " + data + raw[raw.index(b"\n", line):]
    broken = from_bytes(cap.body[:target.sse.start] + new + cap.body[target.sse.end:],
                        sidecar={"wire": cap.wire})
    parsed = parse_all(broken.events)[target.index]
    assert parsed.payload is None and "not a JSON object" in parsed.parse_error
    assert "unparseable_json" in [d.code for d in accumulate(broken).diagnostics]
    failed_by(broken, "parse")
