"""Lesson 4's checkers: each passes the package solution, fails plausible wrong answers
with a first difference a learner can act on, and says "not attempted" for a starter."""

from __future__ import annotations

from checker_helpers import FRESH_PROGRESS, starter

from lesson_lib import exercises
from lesson_lib.exercises import lesson04 as checks
from lesson_lib.solutions import lesson04 as solutions

pytestmark = FRESH_PROGRESS


def test_the_solutions_pass():
    assert checks.check_responses_finish(solutions.responses_finish).passed
    assert checks.check_reduce_tool_block(solutions.reduce_tool_block).passed
    verdict = checks.check_outcome_of_end(solutions.outcome_of_end)
    assert verdict.passed, verdict
    assert verdict.cases_total >= 40


def test_starters_are_not_attempted():
    assert checks.check_responses_finish(starter).status == "not attempted"
    assert checks.check_reduce_tool_block(starter).status == "not attempted"
    assert checks.check_outcome_of_end(starter).status == "not attempted"
    assert "not attempted" in repr(exercises.progress("04"))


def test_finish_that_ignores_function_calls_is_caught():
    def always_stop(response):
        return {"completed": "stop", "failed": "error"}.get(response["status"], "length")
    verdict = checks.check_responses_finish(always_stop)
    assert verdict.status == "failed"
    assert "expected 'tool_calls', got 'stop'" in verdict.message
    assert "'function_call'" in verdict.message or "'custom_tool_call'" in verdict.message


def test_finish_that_reads_every_incomplete_as_length_is_caught():
    def length(response):
        if response["status"] == "incomplete":
            return "length"
        return solutions.responses_finish(response)
    verdict = checks.check_responses_finish(length)
    assert verdict.status == "failed"
    assert verdict.message.startswith("case 'hand-made: cut by the content filter'")


def test_a_card_ready_when_its_block_ends_is_caught():
    def ready_at_end(card, event):
        card = solutions.reduce_tool_block(card, event)
        return card | {"call_state": "complete"} if event.kind == "block_ended" else card
    verdict = checks.check_reduce_tool_block(ready_at_end)
    assert verdict.status == "failed"
    assert "after its event" in verdict.message and "(block_ended)" in verdict.message
    assert "expected 'forming', got 'complete'" in verdict.message


def test_a_card_that_mutates_and_forgets_executions_is_caught():
    def no_execution(card, event):
        if event.kind.startswith("tool_execution"):
            return card
        return solutions.reduce_tool_block(card, event)
    verdict = checks.check_reduce_tool_block(no_execution)
    assert verdict.status == "failed"
    assert "tool_execution_started" in verdict.message
    assert "expected 'running', got None" in verdict.message


def test_an_outcome_that_trusts_the_last_event_is_caught():
    def completed_unless_error(end):
        if end["finish"] == "pause":
            return "paused"
        return "failed" if end["status"] >= 300 or end["event_types"][-1:] == ["error"] \
            else "completed"
    verdict = checks.check_outcome_of_end(completed_unless_error)
    assert verdict.status == "failed"
    assert "expected 'truncated', got 'completed'" in verdict.message


def test_an_outcome_that_forgets_the_pause_is_caught():
    def no_pause(end):
        out = solutions.outcome_of_end(end)
        return "completed" if out == "paused" else out
    verdict = checks.check_outcome_of_end(no_pause)
    assert verdict.status == "failed"
    assert "expected 'paused', got 'completed'" in verdict.message
    assert "given end = {'wire': 'anthropic-messages', 'status': 200, 'event_types': " \
           "['message_start', " in verdict.message and "'finish': 'pause'}" in verdict.message
    assert "raw value" not in verdict.message


def test_an_outcome_that_looks_for_the_raw_pause_turn_is_told_the_unified_reason():
    def raw_pause(end):
        out = solutions.outcome_of_end(end)
        if out == "paused":
            out = "completed"
        return "paused" if end["finish"] == "pause_turn" else out
    verdict = checks.check_outcome_of_end(raw_pause)
    assert verdict.status == "failed"
    assert "'finish': 'pause'}" in verdict.message
    assert ("Your code looks for 'pause_turn': that is the provider's raw value (Anthropic's "
            "stop_reason); end['finish'] holds the unified reason, 'pause'") in verdict.message


def test_a_long_end_is_shown_shortened():
    end = checks.stream_end("anthropic-messages/write-file-tool")
    text = checks.shown(end)
    assert ("['message_start', ..., 'content_block_stop', 'message_delta', 'message_stop'] "
            f"({len(end['event_types'])} in all)") in text
    assert len(text) < 300


def test_a_card_changed_in_place_is_caught_even_when_what_it_returns_is_right():
    def in_place(card, event):
        new = solutions.reduce_tool_block(card, event)
        card.clear()
        card.update(new)
        return card
    verdict = checks.check_reduce_tool_block(in_place)
    assert verdict.status == "failed"
    assert "at its event 0 (block_started): your function changed the card it was given" \
        in verdict.message
    assert "return a new dict" in verdict.message


def test_a_failing_tool_is_a_case_and_a_card_that_calls_every_run_done_is_caught():
    assert any("tool failed" in case.label for case in checks.tool_block_cases())

    def always_done(card, event):
        if event.kind == "tool_execution_finished":
            return card | {"execution": "done"}
        return solutions.reduce_tool_block(card, event)
    verdict = checks.check_reduce_tool_block(always_done)
    assert verdict.status == "failed"
    assert "Tokyo's weather tool failed" in verdict.message
    assert "expected 'failed', got 'done'" in verdict.message
