"""``lesson-lib turn CAPTURE... [--json]`` as CONTRACTS.md states it: the captures as the
steps of one turn, an outcome that never says completed for a stream that died, the
text that arrived kept, errors with scope and phase, exit codes as every command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from lesson_lib.accumulate import accumulate
from lesson_lib.breaks import faults
from lesson_lib.capture.captures import Capture, load
from lesson_lib.cli.commands import main
from lesson_lib.turn.run import route_for
from lesson_lib.wires.stream_end import how_it_ended
from lesson_lib.wires.wire_events import parse_all

WIRES = ("anthropic-messages", "openai-responses", "openai-chat")


def no_constants(name: str):
    raise AssertionError(f"--json printed {name}, which is not JSON")


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["turn", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys, *argv: str) -> tuple[int, dict, str]:
    code, out, err = run(capsys, *argv, "--json")
    return code, json.loads(out, parse_constant=no_constants), err


def write(tmp_path: Path, cap: Capture, name: str) -> str:
    """A derived capture on disk, body and sidecar, as the CLI reads it."""
    path = tmp_path / f"{name}.sse"
    path.write_bytes(cap.body)
    sidecar = dict(cap.sidecar)
    sidecar.setdefault("wire", cap.wire)
    path.with_suffix(".json").write_text(json.dumps(sidecar))
    return str(path)


def arrived_text(final: dict, wire: str) -> str:
    """The text of the provider's final object, as our accumulator built it."""
    if wire == "anthropic-messages":
        return "".join(b.get("text", "") for b in final.get("content", [])
                       if b.get("type") == "text")
    if wire == "openai-responses":
        return "".join(p.get("text", "") for i in final.get("output", [])
                       if i.get("type") == "message" for p in i.get("content", [])
                       if p.get("type") == "output_text")
    return "".join(c["message"].get("content") or "" for c in final.get("choices", []))


# -- the weather turn ---------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
def test_the_weather_turns_two_steps_are_completed(capsys, wire):
    steps = [f"{wire}/weather-turn-step1", f"{wire}/weather-turn-step2"]
    code, data, err = run_json(capsys, *steps)
    assert code == 0 and ": error" not in err        # warnings may come, errors never
    assert data["outcome"] == "completed"
    assert [(s["step"], s["wire"], s["finish"]["reason"]) for s in data["steps"]] == \
        [(1, wire, "tool_calls"), (2, wire, "stop")]
    calls = [b for b in data["blocks"] if b["kind"] == "tool_call"]
    assert [c["input"]["location"] for c in calls] == ["Paris, France", "Tokyo, Japan"]
    assert all(b["step"] == 2 for b in data["blocks"] if b["kind"] == "text" and "°C" in b["text"])
    ids = [b["id"] for b in data["blocks"]]
    assert len(ids) == len(set(ids))
    assert data["usage"]["input_tokens"] == sum(s["usage"]["input_tokens"] for s in data["steps"])


def test_steps_may_be_on_different_wires(capsys):
    code, data, _ = run_json(capsys, "anthropic-messages/weather-turn-step1",
                             "openai-chat/weather-turn-step2")
    assert code == 0 and data["outcome"] == "completed"
    assert [s["wire"] for s in data["steps"]] == ["anthropic-messages", "openai-chat"]


def test_plain_text_names_steps_blocks_calls_and_the_outcome(capsys):
    code, out, _ = run(capsys, "anthropic-messages/weather-turn-step1",
                       "anthropic-messages/weather-turn-step2")
    assert code == 0
    assert out.splitlines()[0].startswith("turn · ✔ completed")
    for words in ("step 1 · anthropic-messages", "step 2 · anthropic-messages",
                  "tool call get_weather", "[s1.b0] text", "Paris, France", "usage (turn):"):
        assert words in out, words


# -- streams that died --------------------------------------------------------------------

CUT_SOURCES = ["anthropic-messages/weather-turn-step1", "openai-responses/weather-turn-step1",
               "openai-chat/weather-turn-step1", "anthropic-messages/thinking-signature",
               "openai-chat/text-usage"]
_FINISHED_CHOICE = re.compile(rb'"finish_reason"\s*:\s*"')


def cut_offsets(cap: Capture) -> list[int]:
    """Every event boundary before the terminal, and offsets inside events."""
    ends = [e.sse.end for e in parse_all(cap.events)]
    inside = [(a + b) // 2 for a, b in zip([0, *ends], ends, strict=False)]
    return sorted(set(ends[:-1]) | set(inside[:-1]) | {len(cap.body) - 1})


def sdk_cannot_see(cut: Capture) -> bool:
    """On the SDK route a Chat stream whose choices all finished ends properly, [DONE]
    or not (the SDK never yields [DONE]): the wire route sees the cut."""
    return (route_for(cut.wire) == "sdk" and cut.wire == "openai-chat"
            and _FINISHED_CHOICE.search(cut.body) is not None)


@pytest.mark.parametrize("name", CUT_SOURCES)
def test_every_cut_before_the_terminal_is_truncated_and_keeps_the_text(capsys, tmp_path, name):
    cap = load(name)
    checked = 0
    for offset in cut_offsets(cap):
        cut = faults.cut_at(cap, offset)
        if how_it_ended(cut.wire, parse_all(cut.events), cut.sse_diagnostics).kind != "cut":
            continue
        if sdk_cannot_see(cut) or not cut.events:
            continue            # no event at all: the CLI cannot start (exit 2)
        code, data, _ = run_json(capsys, write(tmp_path, cut, f"cut-{offset}"))
        assert (code, data["outcome"]) == (3, "truncated"), offset
        texts = "".join(b["text"] for b in data["blocks"] if b["kind"] == "text")
        assert texts == arrived_text(accumulate(cut).final or {}, cap.wire), offset
        assert not any(b["complete"] for b in data["blocks"] if b["kind"] == "tool_call"
                       and b["state"] == "cut"), offset
        checked += 1
    assert checked >= 4


def test_a_cut_second_step_ends_the_turn_truncated(capsys, tmp_path):
    step2 = load("anthropic-messages/weather-turn-step2")
    cut = faults.drop_terminal(step2)
    code, data, _ = run_json(capsys, "anthropic-messages/weather-turn-step1",
                             write(tmp_path, cut, "step2-cut"))
    assert (code, data["outcome"]) == (3, "truncated")
    assert data["steps"][0]["finish"]["reason"] == "tool_calls"


@pytest.mark.parametrize("name, phase", [
    ("anthropic-messages/overloaded-after-text", "after_output"),
    ("openai-chat/error-mid-stream", "after_output"),
    ("openai-responses/error-then-failed", "after_output"),
    ("anthropic-messages/http-529-overloaded", "before_output"),
    ("openai-responses/http-429", "before_output"),
])
def test_an_in_band_error_is_failed_with_scope_and_phase(capsys, name, phase):
    code, data, err = run_json(capsys, name)
    assert (code, data["outcome"]) == (3, "failed")
    first = data["errors"][0]
    assert (first["scope"], first["phase"]) == ("provider", phase)
    assert "error: provider" in err and err.count("\n") >= 1


@pytest.mark.parametrize("wire", WIRES)
def test_an_injected_error_after_text_is_failed_and_keeps_what_came_first(capsys, tmp_path,
                                                                          wire):
    cap = load(f"{wire}/weather-turn-step1")
    broken = faults.inject_error(cap, 3)
    code, data, _ = run_json(capsys, write(tmp_path, broken, "injected"))
    assert (code, data["outcome"]) == (3, "failed")
    assert data["errors"][0]["scope"] == "provider"
    assert data["steps"][0]["finish"]["reason"] == "error"


# -- cannot start -------------------------------------------------------------------------


def test_a_missing_capture_cannot_start(capsys, tmp_path):
    code, out, err = run(capsys, "anthropic-messages/weather-turn-step1",
                         str(tmp_path / "nope.sse"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err


def test_a_stream_of_no_known_wire_cannot_be_a_step(capsys, tmp_path):
    path = tmp_path / "plain.sse"
    path.write_bytes(b"data: hello\n\n")
    code, out, err = run(capsys, str(path))
    assert code == 2 and "which wire" in err and out == ""


def test_no_capture_is_a_usage_error(capsys):
    assert main(["turn"]) == 2
    assert "usage" in capsys.readouterr().err


# -- why the turn ended (lesson 7) ----------------------------------------------------------


def test_turn_json_says_why_the_turn_ended(capsys):
    code, data, _ = run_json(capsys, "anthropic-messages/code-execution-pause")
    assert (code, data["outcome"], data["reason"], data["detail"]) == (
        0, "paused", "provider_pause", {"raw": "pause_turn"})
    code, data, _ = run_json(capsys, "anthropic-messages/hello")
    assert (code, data["outcome"], data["reason"]) == (0, "completed", "stop")


def test_a_stop_reason_the_reader_does_not_know_is_no_success(capsys, tmp_path):
    from lesson_lib.capture.captures import from_bytes
    hello = load("anthropic-messages/hello")
    assert hello.body.count(b'"end_turn"') == 1
    odd = from_bytes(hello.body.replace(b'"end_turn"', b'"brand_new_reason"'),
                     sidecar={"wire": "anthropic-messages"})
    code, data, _ = run_json(capsys, write(tmp_path, odd, "odd-stop"))
    # The stream ended properly (exit 0, as `final` says); the outcome says it is no success.
    assert (code, data["outcome"], data["reason"], data["detail"]) == (
        0, "unknown", "unrecognised", {"raw": "brand_new_reason"})
    code, out, _ = run(capsys, write(tmp_path, odd, "odd-stop"))
    assert "'brand_new_reason'" in out.splitlines()[0] and "completed" not in out.splitlines()[0]
