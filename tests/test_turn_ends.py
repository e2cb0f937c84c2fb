"""Turns say why they ended (lesson 7): the vocabulary, the mapping from a step's end, the
drivers' cancels and budgets, and every reader of the end (summary, banner, validator,
``turn --json``, the cheat sheet)."""

from __future__ import annotations

import asyncio
import json
import typing

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lesson_lib import wires
from lesson_lib.capture.captures import load
from lesson_lib.course import cheat_sheet
from lesson_lib.draw import Drawer
from lesson_lib.turn import ends
from lesson_lib.turn import events as ev
from lesson_lib.turn.ends import TurnEnd
from lesson_lib.turn.events import (
    BlockDelta,
    BlockStarted,
    Finish,
    StepFinished,
    StepStarted,
    TurnFinished,
    TurnStarted,
)
from lesson_lib.turn.fake_tools import weather_tool
from lesson_lib.turn.loop import run_turn
from lesson_lib.turn.order import check
from lesson_lib.turn.outcome import end_of_step, end_of_turn, outcome_of_step
from lesson_lib.turn.reduce import reduce_all
from lesson_lib.turn.run import turn_state
from lesson_lib.turn.summary import outcome_line, turn_text
from lesson_lib.wires.wire_events import parse_all

STEP1 = "anthropic-messages/weather-turn-step1"
STOP = Finish("stop")


def proper(reason: str, raw=None) -> StepFinished:
    return StepFinished(0, step=1, ended="proper", finish=Finish(reason, raw))


def one_step(end: TurnFinished, *, finish: Finish = STOP, ended: str = "proper",
             text: str = "Hi") -> list:
    """A one-step turn with a text block, ended by `end` (renumbered)."""
    events = [TurnStarted(0, turn="t"), StepStarted(0, step=1, wire="w"),
              BlockStarted(0, block="s1.b0", step=1, block_kind="text"),
              BlockDelta(0, block="s1.b0", fragment=text),
              ev.BlockEnded(0, block="s1.b0"),
              StepFinished(0, step=1, ended=ended, finish=finish), end]
    return ev.renumber(events)


# -- the vocabulary ---------------------------------------------------------------------------


def test_the_vocabulary_is_closed_and_said_in_one_place():
    assert ends.OUTCOMES == ev.OUTCOMES
    assert set(typing.get_args(ev.Outcome)) == set(ends.OUTCOMES)
    every_reason = [r for reasons in ends.REASONS.values() for r in reasons]
    assert len(every_reason) == len(set(every_reason)), "a reason belongs to one outcome"
    assert set(every_reason) == set(ends.REASON_SAYS)
    assert set(ends.WHERE) == set(ends.WHERE_SAYS)
    # The reasons a `completed` turn can have are the finishes that are an answer.
    assert set(ends.REASONS["completed"]) < set(wires.FINISHES)
    assert "requires_action" in ends.REASONS["paused"]
    assert ends.never_success("unknown") and ends.never_success("budget_reached")


# -- from a step's end to the turn's ----------------------------------------------------------


def test_a_step_end_maps_to_an_outcome_and_a_reason():
    assert end_of_turn(proper("stop", "end_turn"), "anthropic-messages") == TurnEnd(
        "completed", "stop", {"raw": "end_turn"})
    assert end_of_turn(proper("pause", "pause_turn"), "anthropic-messages") == TurnEnd(
        "paused", "provider_pause", {"raw": "pause_turn"})
    assert end_of_turn(proper("length", "max_tokens"), "anthropic-messages").reason == "length"
    assert end_of_turn(proper("other", "a_new_reason"), "anthropic-messages") == TurnEnd(
        "unknown", "unrecognised", {"raw": "a_new_reason"})
    assert end_of_turn(proper("error", "MALFORMED_FUNCTION_CALL"), "google-gemini").outcome \
        == "failed"
    cut = StepFinished(0, step=1, ended="cut")
    assert end_of_turn(cut).outcome == "truncated" and end_of_turn(None).outcome == "truncated"
    # A step that asks for tools lets the turn go on; a turn that stops there is completed.
    assert end_of_step(proper("tool_calls", "tool_use")) is None
    assert end_of_turn(proper("tool_calls", "tool_use")).outcome == "completed"
    assert outcome_of_step("proper", "other") == "unknown"
    assert outcome_of_step("proper", "error") == "failed"


def test_a_vendors_own_ends_are_read_from_its_wire_module():
    raw = {"status": "cancelled", "incomplete_details": None}
    assert end_of_turn(proper("other", raw), "openai-responses") == TurnEnd(
        "cancelled", "vendor", {"raw": raw})


def test_an_interactions_requires_action_asks_for_tools_as_every_wire_and_its_budget_is_a_budget():
    from lesson_lib.wires import gemini_interactions as gi
    wire = gi.WIRE
    asks = proper(gi.finish_reason(gi.REQUIRES_ACTION), gi.REQUIRES_ACTION)
    assert end_of_step(asks, wire) is None               # the loop answers the call ...
    # ... and a turn that stops there ends as a tool_use stop does on Anthropic's wire
    assert end_of_turn(asks, wire) == TurnEnd("completed", "tool_calls",
                                              {"raw": gi.REQUIRES_ACTION})
    assert end_of_turn(proper("tool_calls", "tool_use"), "anthropic-messages") == TurnEnd(
        "completed", "tool_calls", {"raw": "tool_use"})
    spent = proper(gi.finish_reason("budget_exceeded"), "budget_exceeded")
    assert end_of_step(spent, wire) == TurnEnd("budget_reached", "vendor_budget",
                                               {"raw": "budget_exceeded"})


@pytest.mark.parametrize("wire", sorted(wires.WIRES))
@given(raw=st.text(min_size=1, max_size=30))
def test_a_stop_reason_the_wire_does_not_know_is_never_success(wire, raw):
    module = wires.for_wire(wire)
    known = set(getattr(module, "FINISH_REASONS", {})) | set(getattr(module, "TURN_ENDS", {}))
    if raw in known or raw in ("completed", "incomplete", "failed", "queued", "in_progress"):
        return
    finish = module.finish_reason({"status": raw} if wire == "openai-responses" else raw)
    if finish is None:
        return
    end = end_of_turn(proper(finish, raw), wire)
    assert end.outcome == "unknown" and end.detail == {"raw": raw}
    state = reduce_all(one_step(TurnFinished(0, outcome=end.outcome, reason=end.reason,
                                             detail=end.detail), finish=Finish(finish, raw)))
    assert check(state.events) == []
    line = outcome_line(state)
    assert repr(raw) in line and "completed" not in line.replace(repr(raw), "")


def test_a_capture_that_pauses_says_its_reason_in_turn_json():
    state = turn_state(load("anthropic-messages/code-execution-pause"))
    data = json.loads(json.dumps(state.as_dict()))
    assert (data["outcome"], data["reason"], data["detail"]) == (
        "paused", "provider_pause", {"raw": "pause_turn"})
    done = turn_state(load("anthropic-messages/hello")).as_dict()
    assert (done["outcome"], done["reason"]) == ("completed", "stop")


def test_a_finish_without_a_reason_reads_as_its_outcomes_first():
    state = reduce_all(one_step(TurnFinished(0, outcome="completed"),
                                finish=Finish("length", "max_tokens")))
    assert state.end == TurnEnd("completed", "length", None)
    state = reduce_all(one_step(TurnFinished(0, outcome="cancelled"), ended="cancelled"))
    assert state.end.reason == "user"


# -- the simulated loop: who cancelled, and where ---------------------------------------------


def cancelled_at(ms: float, **kwargs):
    return asyncio.run(run_turn([load(STEP1)], [weather_tool()], cancel_at=ms, **kwargs))


def test_a_cancel_says_where_it_found_the_turn():
    step1 = load(STEP1)
    times = [e.t for e in step1.events]
    first = cancelled_at(0.0).state.end
    assert (first.outcome, first.reason, first.detail["where"]) == (
        "cancelled", "application", "before_first_byte")
    text = cancelled_at((times[3] + times[4]) / 2).state.end
    assert text.detail["where"] == "text" and text.detail["tools"] == []
    late = cancelled_at(3688.8)
    end = late.state.end
    assert end.detail["where"] == "tool_arguments" and end.detail["tools"] == ["get_weather"]
    assert end.detail["at_ms"] == 3688.8
    assert check(late.events) == []
    words = outcome_line(late.state)
    assert "the application cancelled the turn (at 3688.8 ms)" in words
    assert "a tool's arguments were arriving, interrupting get_weather as it ran" in words
    # The tools ran past the stream's end: only tools were running.
    after = cancelled_at(times[-1] + 1).state.end
    assert after.detail["where"] == "tools" and after.detail["tools"]


def test_a_budget_crossing_ends_the_turn_as_a_budget_never_completed():
    from lesson_lib.breaks import budget
    step1 = load(STEP1)
    run = budget.deltas(parse_all(step1.events), step1.wire)
    hit = budget.first_crossing(run, budget.Budget(output_tokens=5))
    spent = TurnEnd("budget_reached", "application_budget", {"limit": "output_tokens"})
    result = cancelled_at(run[hit.delta].t, cancel_end=spent)
    end = result.state.end
    assert (end.outcome, end.reason, end.detail["limit"]) == (
        "budget_reached", "application_budget", "output_tokens")
    assert end.detail["where"] == "text"
    assert check(result.events) == []
    assert outcome_line(result.state).startswith("⛁ budget reached: the application's budget")


# -- the readers: summary, banner, validator, cheat sheet ------------------------------------


def test_the_summary_says_who_cancelled_and_what_it_interrupted_without_a_detail():
    # An end that names no detail (a learner's loop): the events say what was open.
    events = one_step(TurnFinished(0, outcome="cancelled", reason="user"), ended="cancelled")
    events[4] = ev.BlockEnded(4, block="s1.b0", complete=False, synthesised=True,
                              reason="cancelled")
    text = turn_text(reduce_all(events))
    assert "the user pressed Stop, while text was arriving; what arrived is kept" in text
    assert "open blocks were closed" not in text         # the old, general sentence


@pytest.mark.parametrize("end, says", [
    (TurnEnd("paused", "requires_action", {"raw": "requires_action"}),
     "the vendor stopped to ask the application"),
    (TurnEnd("paused", "approval"), "held for the application's approval"),
    (TurnEnd("unknown", "unrecognised", {"raw": "NEW_REASON"}), "(raw: 'NEW_REASON')"),
    (TurnEnd("budget_reached", "vendor_budget", {"raw": "budget_exceeded"}),
     "the vendor stopped the turn at its budget"),
    (TurnEnd("max_steps", "step_limit"), "step limit"),
])
def test_the_summary_and_the_banner_say_the_reason(end, says):
    finish = Finish("other", "NEW_REASON") if end.outcome == "unknown" else Finish("stop")
    events = one_step(TurnFinished(0, outcome=end.outcome, reason=end.reason,
                                   detail=end.detail), finish=finish)
    state = reduce_all(events)
    assert check(events) == []
    assert says in outcome_line(state)
    banner = Drawer().draw(state).part("turn/banner")
    assert banner.settled and says in banner.text and "completed" not in banner.text


def test_the_banner_says_who_stopped_the_turn():
    events = one_step(TurnFinished(0, outcome="budget_reached", reason="application_budget",
                                   detail={"by": "the budget of 8 output tokens was reached"}),
                      ended="cancelled")
    events[4] = ev.BlockEnded(4, block="s1.b0", complete=False, synthesised=True,
                              reason="cancelled")
    banner = Drawer().draw(reduce_all(events)).part("turn/banner").text
    assert banner.startswith("⛁ budget reached: the application's budget was reached "
                             "(the budget of 8 output tokens was reached), interrupting "
                             "the text arriving")


@pytest.mark.parametrize("end, finish, ended, code", [
    (TurnFinished(0, outcome="done"), Finish("stop"), "proper", "unknown_outcome"),
    (TurnFinished(0, outcome="paused", reason="user"), Finish("pause"), "proper",
     "unknown_reason"),
    (TurnFinished(0, outcome="completed"), Finish("stop"), "error", "completed_over_bad_end"),
    (TurnFinished(0, outcome="completed"), Finish("stop"), "cut", "completed_over_bad_end"),
    (TurnFinished(0, outcome="completed"), Finish("other", "NEW"), "proper",
     "completed_over_unknown_end"),
    (TurnFinished(0, outcome="completed"), Finish("pause"), "proper",
     "completed_over_unknown_end"),
])
def test_the_validator_refuses_an_end_outside_the_vocabulary_or_a_false_success(
        end, finish, ended, code):
    assert [d.code for d in check(one_step(end, finish=finish, ended=ended))] == [code]


def test_the_validator_takes_every_outcome_with_each_of_its_reasons():
    for outcome, reasons in ends.REASONS.items():
        for reason in reasons:
            finish = Finish(reason) if outcome == "completed" else Finish("stop")
            events = one_step(TurnFinished(0, outcome=outcome, reason=reason), finish=finish)
            assert check(events) == [], (outcome, reason)


def test_the_cheat_sheet_says_how_each_wire_ends_a_turn():
    assert "`pause_turn`, `compaction` → paused · provider_pause" in cheat_sheet.turn_ends(
        "anthropic-messages")
    assert "`cancelled` → cancelled · vendor" in cheat_sheet.turn_ends("openai-responses")
    assert "`OTHER`" in cheat_sheet.turn_ends("google-gemini")
    text = cheat_sheet.markdown()
    for wire in wires.WIRES:
        assert cheat_sheet.turn_ends(wire).replace("|", "\\|") in text
        assert "unknown · unrecognised" in cheat_sheet.turn_ends(wire)


def test_lesson_fives_budget_end_names_its_limit():
    from lesson_lib.breaks import budget
    step1 = load(STEP1)
    run = budget.deltas(parse_all(step1.events), step1.wire)
    limits = budget.Budget(tool_calls=2)
    hit = budget.first_crossing(run, limits)
    result = cancelled_at(run[hit.delta].t, cancel_end=budget.budget_end(hit, limits))
    end = result.state.end
    assert (end.outcome, end.reason, end.detail["limit"], end.detail["budget"]) == (
        "budget_reached", "application_budget", "tool_calls", 2)
    assert "the tool_calls budget of 2 was reached (2)" in outcome_line(result.state)


def test_a_step_whose_retries_ran_out_says_so():
    events = one_step(TurnFinished(0, outcome="failed", reason="gave_up"), ended="error",
                      finish=Finish("error"))
    assert "its retries ran out" in outcome_line(reduce_all(events))
