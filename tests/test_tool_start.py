"""The two tool-start rules: the course's (arguments settled) and the anthropic SDK's
eager one (the model moved on), over the turn's events and over the corpus."""

from __future__ import annotations

import pytest
from examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from lesson_lib.capture.captures import load
from lesson_lib.turn import TurnStream
from lesson_lib.turn.events import (
    BlockEnded,
    BlockStarted,
    ErrorReported,
    Finish,
    StepFinished,
    StepStarted,
    ToolCallInvalid,
    ToolCallReady,
)
from lesson_lib.turn.run import turn_events
from lesson_lib.turn.tool_start import ToolStarter, arrivals, tool_starts
from lesson_lib.wires.anthropic import FALLBACK_BLOCK


def call(block: str, at: int) -> list:
    """A call's block, its end and its ready event, arriving at wire event `at`."""
    return [BlockStarted(0, block=block, step=1, block_kind="tool_call", name="f",
                         call_id=block, t=at * 10.0, at=at),
            BlockEnded(0, block=block, t=at * 10.0 + 1, at=at + 1),
            ToolCallReady(0, block=block, name="f", call_id=block, input={"a": 1},
                          t=at * 10.0 + 1, at=at + 1)]


def text(block: str, at: int) -> list:
    return [BlockStarted(0, block=block, step=1, block_kind="text", t=at * 10.0, at=at)]


def end(reason: str = "tool_calls", ended: str = "proper") -> list:
    # The end of the body makes the step's end: no time or wire event of its own.
    return [StepFinished(0, step=1, finish=Finish(reason), ended=ended)]


START = [StepStarted(0, step=1, wire="anthropic-messages", t=0.0, at=0)]


def starts(events, rule):
    return [(s.block, s.index, s.contradicted) for s in tool_starts(events, rule)]


def test_settled_starts_a_call_at_its_ready_event():
    events = START + call("b0", 1) + text("b1", 5) + end()
    assert starts(events, "settled") == [("b0", 3, None)]


def test_moved_on_starts_a_call_at_the_next_blocks_start():
    events = START + call("b0", 1) + text("b1", 5) + end()
    assert starts(events, "moved_on") == [("b0", 4, None)]
    (only,) = tool_starts(events, "moved_on")
    assert (only.t, only.at) == (50.0, 5)


def test_moved_on_starts_the_last_call_when_the_step_ends_asking_for_tools():
    events = START + call("b0", 1) + end()
    (only,) = tool_starts(events, "moved_on")
    assert (only.block, only.index, only.contradicted) == ("b0", 4, None)
    assert (only.t, only.at) == (11.0, 2)    # the end arrived with the last wire event


@pytest.mark.parametrize("reason, ended", [("length", "proper"), ("stop", "proper"),
                                           ("tool_calls", "cut"), ("tool_calls", "error")])
def test_moved_on_never_starts_a_call_the_step_did_not_end_asking_for(reason, ended):
    events = START + call("b0", 1) + end(reason, ended)
    assert starts(events, "moved_on") == []
    # The course's rule has started it already, and the end says so.
    assert starts(events, "settled")[0][2] is not None


def test_no_call_starts_after_a_fallback_block_and_the_one_before_it_waits():
    fallback = [BlockStarted(0, block="b1", step=1, block_kind="other",
                             wire_kind=FALLBACK_BLOCK, t=50.0, at=5)]
    events = START + call("b0", 1) + fallback + call("b2", 7) + text("b3", 11) + end()
    assert starts(events, "moved_on") == []
    settled = starts(events, "settled")
    assert [b for b, _, _ in settled] == ["b0", "b2"]
    assert settled[0][2] == "a fallback model took over after it started"
    assert settled[1][2] is None


def test_a_new_step_forgets_the_last_ones_fallback():
    fallback = [BlockStarted(0, block="b1", step=1, block_kind="other",
                             wire_kind=FALLBACK_BLOCK, t=50.0, at=5)]
    second = [StepStarted(0, step=2, wire="anthropic-messages", t=100.0, at=0)]
    events = START + fallback + end("stop") + second + call("s2.b0", 1) + end()
    assert [b for b, _, _ in starts(events, "moved_on")] == ["s2.b0"]


def test_an_error_after_a_start_contradicts_it():
    error = [ErrorReported(0, step=1, scope="provider", phase="after_output", message="x",
                           t=60.0, at=6)]
    events = START + call("b0", 1) + text("b1", 5) + error + end("error", "error")
    assert starts(events, "moved_on") == [("b0", 4, "an error came after it started "
                                                    "(provider)")]


def test_a_call_whose_input_never_parsed_starts_only_under_moved_on_and_says_so():
    invalid = [BlockStarted(0, block="b0", step=1, block_kind="tool_call", name="f",
                            call_id="c", t=10.0, at=1),
               BlockEnded(0, block="b0", t=20.0, at=2),
               ToolCallInvalid(0, block="b0", name="f", call_id="c", state="invalid",
                               raw='{"a": tru', partial={})]
    events = START + invalid + text("b1", 5) + end()
    assert starts(events, "settled") == []
    assert starts(events, "moved_on") == [("b0", 4, "its input never parsed")]


def test_provider_side_calls_are_not_the_applications_to_start():
    server = [ToolCallReady(0, block="b0", name="web_search", call_id="c", input={},
                            server_side=True, t=10.0, at=1)]
    events = START + server + text("b1", 5) + end()
    assert starts(events, "settled") == starts(events, "moved_on") == []


def test_an_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="settled, moved_on"):
        ToolStarter("eager")


def test_arrivals_carry_the_last_wire_event_and_reset_at_a_new_step():
    events = START + call("b0", 1) + end() + [StepStarted(0, step=2, wire="w")] + end()
    when = arrivals(events)
    assert when[4] == (11.0, 2)
    assert when[-1] == (None, None)


# -- the corpus ------------------------------------------------------------------------

CALLS = ["anthropic-messages/weather-turn-step1", "openai-responses/parallel-function-calls",
         "openai-chat/parallel-tools-sequential", "google-gemini/parallel-calls",
         "aws-bedrock-converse/weather-turn-step1", "aws-bedrock-invoke/weather-turn-step1"]


@pytest.mark.parametrize("name", CALLS)
def test_on_every_wire_moved_on_starts_the_same_calls_never_earlier(name):
    events = turn_events(load(name))
    settled = {s.block: s for s in tool_starts(events, "settled")}
    moved_on = {s.block: s for s in tool_starts(events, "moved_on")}
    assert len(settled) >= 2 and set(moved_on) == set(settled)
    for block, start in moved_on.items():
        assert start.index > settled[block].index
        assert start.t >= settled[block].t and start.contradicted is None


def test_a_whole_call_before_a_fallback_runs_only_under_the_settled_rule_and_is_flagged():
    events = turn_events(load("anthropic-messages/fallback-after-tool-call"))
    settled = tool_starts(events, "settled")
    assert [(s.name, s.contradicted) for s in settled] == [
        ("scan_ports", "a fallback model took over after it started"),
        ("list_audit_scope", None)]
    # The eager rule starts nothing across the seam: both calls wait for the reply's end.
    assert tool_starts(events, "moved_on") == []


def test_a_call_cut_off_by_a_length_stop_is_started_by_neither():
    events = turn_events(load("anthropic-messages/max-tokens-in-tool-json"))
    assert tool_starts(events, "settled") == tool_starts(events, "moved_on") == []


@settings(max_examples=examples(25), deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=10_000), max_size=12))
def test_where_the_chunks_are_cut_does_not_move_a_start(cuts):
    capture = load("anthropic-messages/weather-turn-step1")
    body = capture.body
    edges = sorted({c % len(body) for c in cuts} | {0, len(body)})
    stream = TurnStream(capture.wire)
    events = [e for a, b in zip(edges, edges[1:], strict=False)
              for e in stream.feed(body[a:b])]
    events += stream.finish()
    whole = TurnStream(capture.wire)
    reference = whole.feed(body) + whole.finish()
    for rule in ("settled", "moved_on"):
        assert [(s.block, s.at) for s in tool_starts(events, rule)] == \
            [(s.block, s.at) for s in tool_starts(reference, rule)]


def test_the_table_measures_both_rules_and_the_time_each_wins():
    from lesson_lib.turn.tool_start_table import measure, render

    assert measure(load("anthropic-messages/hello")) is None     # no call to start
    rows, turn = measure(load("anthropic-messages/weather-turn-step1"))
    assert [r.block for r in rows] == ["s1.b1", "s1.b2"] and turn.calls == 2
    last = rows[-1]
    # The last call settles before the step ends; the model moves on from it at the end.
    assert turn.lead["settled"] == last.end_t - last.starts["settled"].t > 0
    assert turn.lead["moved_on"] == 0
    table = render(rows, [turn])
    assert table.count("| anthropic-messages/weather-turn-step1 |") == 3
    assert f"@e{last.starts['moved_on'].at}" in table


def test_in_a_cut_step_every_start_is_contradicted_and_the_rest_never_runs():
    from lesson_lib.breaks.faults import cut_at
    from lesson_lib.turn.tool_start_table import measure, render

    whole = load("anthropic-messages/weather-turn-step1")
    cut = cut_at(whole, whole.body.index(b"event: message_delta"))   # both calls settled
    rows, turn = measure(cut)
    first, second = rows
    assert not first.runs_at_end and not second.runs_at_end
    assert first.starts["settled"].contradicted == first.starts["moved_on"].contradicted \
        == "the step ended cut after it started"
    assert second.starts["moved_on"] is None
    assert turn.lead == {"settled": None, "moved_on": None}
    assert turn.contradicted == {"settled": 2, "moved_on": 1}
    assert "| never |" in render(rows, [turn])


def test_a_call_whose_result_the_session_streams_back_is_not_contradicted():
    # A session streams the loop the vendor runs: the custom tool's call, the result the
    # application posted, the agent's answer, then the step ends `stop`. The result says the
    # call was meant to run; a stop after it takes nothing back.
    from lesson_lib.turn.tool_start_table import measure

    rows, turn = measure(load("anthropic-managed-agents/session-custom-tool"))
    (only,) = rows
    assert only.starts["settled"] is not None and only.starts["moved_on"] is not None
    assert only.starts["settled"].contradicted is None
    assert only.starts["moved_on"].contradicted is None
    assert turn.contradicted == {"settled": 0, "moved_on": 0}


def test_the_script_prints_the_tables_the_library_measures(monkeypatch, capsys, tmp_path):
    import tool_start_table as script
    from lesson_lib.capture.captures import corpus
    from lesson_lib.turn import tool_start_table

    assert script.measure is tool_start_table.measure      # one home: the script only prints
    monkeypatch.setenv("REFERENCE_CAPTURES", str(tmp_path / "none"))
    assert script.main([]) == 0
    out = capsys.readouterr().out
    calls, turns, _ = tool_start_table.table(corpus())
    assert out.rstrip("\n") == tool_start_table.render(calls, turns)
